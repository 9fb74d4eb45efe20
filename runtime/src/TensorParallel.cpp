//===- TensorParallel.cpp - NCCL communicators and tensor-parallel group ids -===//
//
// Implements the Communicator of TensorParallel.h on NCCL (non-blocking communicators, every
// NCCL call bounded by the session's timeout) and the group-id functions of the C API
// (kiln_tp_id_create, _to_string, _from_string). Without nccl.h at configure time
// (KILN_HAVE_NCCL=0) the NCCL parts are compiled out and createCommunicator / kiln_tp_id_create
// return KILN_UNAVAILABLE; the text form of ids works either way.
//
//===----------------------------------------------------------------------===//

#include "TensorParallel.h"

#include "CudaSymbols.h"
#include "DType.h"
#include "Status.h"

#if KILN_HAVE_NCCL
#include "NcclSymbols.h"
#endif

#include <cctype>
#include <cstring>
#include <new>
#include <thread>

namespace kiln {

Deadline::Deadline(uint32_t timeoutMs)
    : start(std::chrono::steady_clock::now()), limitMs(timeoutMs) {}

uint64_t Deadline::elapsedMs() const {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
}

bool Deadline::expired() const { return limitMs != 0 && elapsedMs() >= limitMs; }

void Deadline::pause() {
  // The first polls only yield: an all-reduce enqueued by NCCL's helper thread (non-blocking
  // communicators) is usually done within tens of microseconds, and a sleep would add at least
  // 50 us of host time per collective to plain (non-graph) runs. Then 100 polls of 50 us cover
  // the next ~5 ms, then 200 us each.
  if (polls < kSpinPolls)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(polls < kSpinPolls + 100 ? 50 : 200));
  ++polls;
}

std::string TpRankInfo::describe() const {
  return formatString("'%s': rank %u of %u (device %d)", path.c_str(), rank, worldSize, device);
}

#if KILN_HAVE_NCCL

static_assert(sizeof(ncclUniqueId) == KILN_TP_ID_BYTES,
              "kiln_tp_id_t must hold exactly one ncclUniqueId");
// The dtype table stores NCCL's values as plain ints (DType.cpp); check them against nccl.h.
static_assert(ncclFloat32 == 7 && ncclFloat16 == 6 && ncclBfloat16 == 9 && ncclInt64 == 4 &&
                  ncclInt32 == 2 && ncclInt8 == 0 && ncclUint8 == 1 && ncclUint32 == 3 &&
                  ncclUint64 == 5,
              "the ncclDataType_t values in DType.cpp's table differ from nccl.h");

namespace {

/// Communicator on NCCL; see TensorParallel.h.
class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(const TpRankInfo &info, std::unique_ptr<NcclSymbols> symbols)
      : rankInfo(info), nccl(std::move(symbols)) {}
  ~NcclCommunicator() override { abort(); }

  kiln_status_t connect(const kiln_tp_id_t &id) override;
  kiln_status_t allReduceSum(kiln_dtype_t dtype, uint64_t count, CUdeviceptr input,
                             CUdeviceptr output, CUstream stream, const std::string &what) override;
  kiln_status_t asyncError() override;
  void abort() override;
  bool aborted() const override { return wasAborted; }
  kiln_status_t destroy() override;
  const TpRankInfo &info() const override { return rankInfo; }

private:
  /// Polls ncclCommGetAsyncError until it leaves ncclInProgress. Returns NULL on ncclSuccess;
  /// on another result the NCCL error (naming `call`); past the deadline KILN_DEADLINE_EXCEEDED
  /// with `timeoutText` after the rank prefix. Never aborts: the caller decides (see abort()).
  kiln_status_t pollUntilDone(const char *call, const char *file, int line,
                              const std::string &timeoutText);
  /// A failed NCCL result as a status with the rank prefix.
  kiln_status_t ncclError(ncclResult_t result, const char *call, const char *file, int line,
                          const std::string &detail = std::string()) const {
    return annotateStatus(nccl->makeError(result, call, file, line, detail),
                          rankInfo.describe() + ": ");
  }

  TpRankInfo rankInfo;
  std::unique_ptr<NcclSymbols> nccl;
  ncclComm_t comm = nullptr;
  bool wasAborted = false;
};

kiln_status_t NcclCommunicator::pollUntilDone(const char *call, const char *file, int line,
                                              const std::string &timeoutText) {
  Deadline deadline(rankInfo.timeoutMs);
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t result = nccl->ncclCommGetAsyncError(comm, &state);
    if (result != ncclSuccess)
      return ncclError(result, "ncclCommGetAsyncError", __FILE__, __LINE__,
                       formatString("while waiting for %s", call));
    if (state == ncclSuccess)
      return nullptr;
    if (state != ncclInProgress)
      return ncclError(state, call, file, line);
    if (deadline.expired())
      return makeStatus(KILN_DEADLINE_EXCEEDED, rankInfo.describe() + ": " + timeoutText);
    deadline.pause();
  }
}

kiln_status_t NcclCommunicator::connect(const kiln_tp_id_t &id) {
  if (comm || wasAborted)
    return makeStatus(KILN_INTERNAL, rankInfo.describe() + ": communicator connected twice");
  ncclUniqueId uniqueId;
  std::memcpy(&uniqueId, id.bytes, sizeof(uniqueId));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t result =
      nccl->ncclCommInitRankConfig(&comm, static_cast<int>(rankInfo.worldSize), uniqueId,
                                   static_cast<int>(rankInfo.rank), &config);
  if (result != ncclSuccess && result != ncclInProgress) {
    kiln_status_t status =
        ncclError(result, "ncclCommInitRankConfig", __FILE__, __LINE__,
                  "while joining the tensor-parallel group (is tp_id the same on every rank?)");
    abort();
    return status;
  }
  if (!comm)
    return ncclError(ncclInternalError, "ncclCommInitRankConfig", __FILE__, __LINE__,
                     "NCCL returned no communicator");
  // No graph has captured this communicator yet, so aborting here cannot wait on one.
  kiln_status_t status = pollUntilDone(
      "ncclCommInitRankConfig", __FILE__, __LINE__,
      formatString("the NCCL communicator of the %u-rank group was not complete after %u ms "
                   "(tp_timeout_ms): a peer rank did not join. Every rank must create its session "
                   "with the same tp_id within the timeout; the communicator was aborted",
                   rankInfo.worldSize, rankInfo.timeoutMs));
  if (status)
    abort();
  return status;
}

kiln_status_t NcclCommunicator::allReduceSum(kiln_dtype_t dtype, uint64_t count, CUdeviceptr input,
                                             CUdeviceptr output, CUstream stream,
                                             const std::string &what) {
  if (!comm)
    return makeStatus(KILN_FAILED_PRECONDITION,
                      rankInfo.describe() + ": " + what +
                          ": the communicator is not connected or was aborted");
  const DTypeInfo *type = lookupDType(dtype);
  ncclResult_t result = nccl->ncclAllReduce(
      reinterpret_cast<const void *>(static_cast<uintptr_t>(input)),
      reinterpret_cast<void *>(static_cast<uintptr_t>(output)), static_cast<size_t>(count),
      static_cast<ncclDataType_t>(type->ncclDataType), ncclSum, comm,
      reinterpret_cast<cudaStream_t>(stream));
  std::string detail = formatString("%s: %llu x %s", what.c_str(),
                                    static_cast<unsigned long long>(count), type->name);
  if (result == ncclSuccess)
    return nullptr;
  // Failures are returned without aborting: the caller may be inside a stream capture, and
  // NCCL's abort waits for every graph holding its collectives, so the caller first ends the
  // capture and destroys its graphs, then aborts.
  if (result != ncclInProgress)
    return ncclError(result, "ncclAllReduce", __FILE__, __LINE__, detail);
  return pollUntilDone("ncclAllReduce", __FILE__, __LINE__,
                       formatString("enqueuing %s did not finish within %u ms (tp_timeout_ms): a "
                                    "peer rank did not reach it",
                                    detail.c_str(), rankInfo.timeoutMs));
}

kiln_status_t NcclCommunicator::asyncError() {
  if (!comm)
    return nullptr;
  ncclResult_t state = ncclSuccess;
  ncclResult_t result = nccl->ncclCommGetAsyncError(comm, &state);
  if (result != ncclSuccess)
    return ncclError(result, "ncclCommGetAsyncError", __FILE__, __LINE__);
  if (state == ncclSuccess || state == ncclInProgress)
    return nullptr;
  return ncclError(state, "NCCL communicator (asynchronous error)", __FILE__, __LINE__,
                   "a peer rank failed or a connection broke while collectives were running");
}

void NcclCommunicator::abort() {
  if (!comm)
    return;
  nccl->ncclCommAbort(comm);
  comm = nullptr;
  wasAborted = true;
}

kiln_status_t NcclCommunicator::destroy() {
  if (!comm)
    return nullptr;
  ncclResult_t result = nccl->ncclCommFinalize(comm);
  if (result != ncclSuccess && result != ncclInProgress) {
    kiln_status_t status = ncclError(result, "ncclCommFinalize", __FILE__, __LINE__);
    abort();
    return status;
  }
  if (kiln_status_t status = pollUntilDone(
          "ncclCommFinalize", __FILE__, __LINE__,
          formatString("ncclCommFinalize did not finish within %u ms (tp_timeout_ms); the "
                       "communicator was aborted instead",
                       rankInfo.timeoutMs))) {
    abort();
    return status;
  }
  result = nccl->ncclCommDestroy(comm);
  comm = nullptr;
  if (result != ncclSuccess)
    return ncclError(result, "ncclCommDestroy", __FILE__, __LINE__);
  return nullptr;
}

} // namespace

kiln_status_t createCommunicator(const TpRankInfo &info, std::unique_ptr<Communicator> &out) {
  out.reset();
  std::unique_ptr<NcclSymbols> symbols;
  KILN_RETURN_IF_ERROR(
      annotateStatus(NcclSymbols::load(kNcclLibrary, symbols), info.describe() + ": "));
  out.reset(new (std::nothrow) NcclCommunicator(info, std::move(symbols)));
  if (!out)
    return makeStatus(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  return nullptr;
}

#else // !KILN_HAVE_NCCL

kiln_status_t createCommunicator(const TpRankInfo &info, std::unique_ptr<Communicator> &out) {
  out.reset();
  return makeStatus(KILN_UNAVAILABLE,
                    info.describe() +
                        ": this kiln runtime was built without NCCL (nccl.h was not found when it "
                        "was configured), so it cannot run tensor-parallel artifacts; rebuild it "
                        "with nccl.h on the include path");
}

#endif // KILN_HAVE_NCCL

} // namespace kiln

extern "C" {

kiln_status_t kiln_tp_id_create(kiln_tp_id_t *out_id) {
  if (out_id)
    std::memset(out_id->bytes, 0, sizeof(out_id->bytes));
  if (!out_id)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_tp_id_create: out_id must be non-NULL");
#if KILN_HAVE_NCCL
  std::unique_ptr<kiln::NcclSymbols> nccl;
  KILN_RETURN_IF_ERROR(kiln::NcclSymbols::load(kiln::kNcclLibrary, nccl));
  ncclUniqueId id;
  KILN_NCCL_RETURN_IF_ERROR(*nccl, ncclGetUniqueId(&id));
  std::memcpy(out_id->bytes, &id, sizeof(id));
  return nullptr;
#else
  return kiln::makeStatus(KILN_UNAVAILABLE,
                          "kiln_tp_id_create: this kiln runtime was built without NCCL (nccl.h "
                          "was not found when it was configured)");
#endif
}

void kiln_tp_id_to_string(const kiln_tp_id_t *id, char *out_text) {
  if (!out_text)
    return;
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < KILN_TP_ID_BYTES; ++i) {
    unsigned byte = id ? id->bytes[i] : 0u;
    out_text[2 * i] = kHex[byte >> 4];
    out_text[2 * i + 1] = kHex[byte & 15];
  }
  out_text[2 * KILN_TP_ID_BYTES] = '\0';
}

kiln_status_t kiln_tp_id_from_string(const char *text, kiln_tp_id_t *out_id) {
  if (out_id)
    std::memset(out_id->bytes, 0, sizeof(out_id->bytes));
  if (!text || !out_id)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_id_from_string: text and out_id must be non-NULL");
  const char *begin = text;
  while (*begin && std::isspace(static_cast<unsigned char>(*begin)))
    ++begin;
  const char *end = begin + std::strlen(begin);
  while (end > begin && std::isspace(static_cast<unsigned char>(end[-1])))
    --end;
  size_t length = static_cast<size_t>(end - begin);
  for (size_t i = 0; i < length && i < 2 * KILN_TP_ID_BYTES; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(begin[i]))) {
      unsigned char c = static_cast<unsigned char>(begin[i]);
      return kiln::makeStatusF(
          KILN_INVALID_ARGUMENT,
          std::isprint(c) ? "invalid tensor-parallel group id: character '%c' at position %zu is "
                            "not a hex digit"
                          : "invalid tensor-parallel group id: byte 0x%02x at position %zu is "
                            "not a hex digit",
          static_cast<int>(c), i);
    }
  if (length != 2 * KILN_TP_ID_BYTES)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "invalid tensor-parallel group id: %zu characters, expected %d hex "
                             "digits (the text form of kiln_tp_id_to_string)",
                             length, 2 * KILN_TP_ID_BYTES);
  auto nibble = [](char c) -> unsigned {
    return c <= '9' ? static_cast<unsigned>(c - '0')
                    : static_cast<unsigned>(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
  };
  for (size_t i = 0; i < KILN_TP_ID_BYTES; ++i)
    out_id->bytes[i] =
        static_cast<unsigned char>((nibble(begin[2 * i]) << 4) | nibble(begin[2 * i + 1]));
  return nullptr;
}

} // extern "C"
