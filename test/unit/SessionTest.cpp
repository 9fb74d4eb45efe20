//===- SessionTest.cpp - Session behaviour that needs no GPU --------------===//
//
// kiln_session_create and the CUDA symbol loader on machines without a driver: the result must be
// a clean status (never a crash), with the documented message. Also the argument checks that
// fail before any driver call, tensor-parallel ones included (a rank artifact without a group id,
// NCCL missing), the group id's text form and kiln_tp_id_create, and the poll Deadline. The
// argument checks of binding caller buffers (kiln::checkBinding) run here on real artifacts.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "kiln/runtime.h"

#include "CudaSymbols.h"
#if KILN_HAVE_NCCL
#include "NcclSymbols.h"
#endif
#include "TensorParallel.h"
#include "TestArtifact.h"
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

namespace {

TEST(CudaSymbols, MissingLibraryGivesUnavailable) {
  std::unique_ptr<kiln::CudaSymbols> symbols;
  kiln_status_t status = kiln::CudaSymbols::load("libkiln-no-such-driver.so.1", symbols);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("CUDA driver not found (libkiln-no-such-driver.so.1): "),
            std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(symbols, nullptr);
  kiln_status_free(status);
}

TEST(CudaSymbols, LibraryWithoutDriverSymbolsIsRejected) {
  // libdl/libc load fine but have no cuInit: must report the missing symbol.
  std::unique_ptr<kiln::CudaSymbols> symbols;
  kiln_status_t status = kiln::CudaSymbols::load("libc.so.6", symbols);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_NE(std::string(kiln_status_message(status)).find("lacks symbol"), std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
}

#if KILN_HAVE_NCCL
TEST(NcclSymbols, MissingLibraryGivesUnavailable) {
  std::unique_ptr<kiln::NcclSymbols> symbols;
  kiln_status_t status = kiln::NcclSymbols::load("libkiln-no-such-nccl.so.2", symbols);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_NE(
      std::string(kiln_status_message(status)).find("NCCL not found (libkiln-no-such-nccl.so.2): "),
      std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(symbols, nullptr);
  kiln_status_free(status);
}

TEST(NcclSymbols, LibraryWithoutNcclSymbolsIsRejected) {
  std::unique_ptr<kiln::NcclSymbols> symbols;
  kiln_status_t status = kiln::NcclSymbols::load("libc.so.6", symbols);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_NE(std::string(kiln_status_message(status)).find("lacks symbol ncclGetVersion"),
            std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(symbols, nullptr);
  kiln_status_free(status);
}

TEST(NcclSymbols, LoadsInstalledNcclAndFormatsErrors) {
  // NCCL needs no GPU to load, report its version or describe an error code.
  std::unique_ptr<kiln::NcclSymbols> symbols;
  kiln_status_t status = kiln::NcclSymbols::load(kiln::kNcclLibrary, symbols);
  if (status) {
    std::string message = kiln_status_message(status);
    kiln_status_free(status);
    GTEST_SKIP() << "no NCCL on the loader path: " << message;
  }
  ASSERT_NE(symbols, nullptr);
  EXPECT_GE(symbols->version(), 20000) << "NCCL 2.x encodes its version as 2xxyy";
  kiln_status_t error =
      symbols->makeError(ncclInvalidArgument, "ncclAllReduce(...)", __FILE__, 42, "rank 1 of 2");
  EXPECT_EQ(kiln_status_code(error), KILN_INVALID_ARGUMENT);
  std::string message = kiln_status_message(error);
  EXPECT_NE(message.find("ncclAllReduce(...) failed: "), std::string::npos) << message;
  EXPECT_NE(message.find("[ncclResult 4]"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1 of 2"), std::string::npos) << message;
  kiln_status_free(error);
  kiln_status_t remote = symbols->makeError(ncclRemoteError, "ncclGroupEnd()", __FILE__, 7);
  EXPECT_EQ(kiln_status_code(remote), KILN_UNAVAILABLE);
  kiln_status_free(remote);
}
#endif // KILN_HAVE_NCCL

TEST(Session, CreateGivesCleanStatusOrSession) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("add.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_session_t *session = reinterpret_cast<kiln_session_t *>(0x1);
  kiln_status_t status = kiln_session_create(artifact, nullptr, &session);
  if (status) {
    // No GPU here: the driver is missing (dlopen fails) or present without a device.
    EXPECT_EQ(session, nullptr);
    kiln_status_code_t code = kiln_status_code(status);
    EXPECT_TRUE(code == KILN_UNAVAILABLE || code == KILN_CUDA_ERROR) << kiln_status_message(status);
    EXPECT_STRNE(kiln_status_message(status), "");
    std::printf("session_create without a GPU: %s: %s\n", kiln_status_code_name(code),
                kiln_status_message(status));
    kiln_status_free(status);
  }
  kiln_session_release(session == reinterpret_cast<kiln_session_t *>(0x1) ? nullptr : session);
  kiln_artifact_release(artifact);
}

TEST(Session, CreateRejectsNullArguments) {
  kiln_session_t *session = reinterpret_cast<kiln_session_t *>(0x1);
  kiln_status_t status = kiln_session_create(nullptr, nullptr, &session);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  kiln_status_free(status);
}

TEST(Session, CallsRejectNullSession) {
  kiln_status_t status = kiln_session_run(nullptr, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  float value = 0;
  status = kiln_session_set_input(nullptr, "x", &value, 4);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_session_get_output(nullptr, "y", &value, 4);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_session_set_input_async(nullptr, "x", &value, 4, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "kiln_session_set_input_async: session must be non-NULL");
  kiln_status_free(status);
  status = kiln_session_get_output_async(nullptr, "y", &value, 4, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "kiln_session_get_output_async: session must be non-NULL");
  kiln_status_free(status);
  status = kiln_session_synchronize(nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  float times[2] = {1, 1};
  status = kiln_session_benchmark(nullptr, 0, 2, times);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(times[0], 0.0f) << "out array must be zeroed on entry";
  kiln_status_free(status);
  uint64_t pointer = 5;
  status = kiln_session_input_device_ptr(nullptr, "x", &pointer);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(pointer, 0u);
  kiln_status_free(status);
  status = kiln_session_bind_input(nullptr, "x", 0x1000, 16);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status), "kiln_session_bind_input: session must be non-NULL");
  kiln_status_free(status);
  status = kiln_session_bind_output(nullptr, "y", 0x1000, 16);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status), "kiln_session_bind_output: session must be non-NULL");
  kiln_status_free(status);
  status = kiln_session_unbind_input(nullptr, "x");
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status), "kiln_session_unbind_input: session must be non-NULL");
  kiln_status_free(status);
  status = kiln_session_unbind_output(nullptr, "y");
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status), "kiln_session_unbind_output: session must be non-NULL");
  kiln_status_free(status);
  pointer = 5;
  status = kiln_session_weights_device_ptr(nullptr, &pointer);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "kiln_session_weights_device_ptr: session and out_device_ptr must be non-NULL");
  EXPECT_EQ(pointer, 0u) << "out_device_ptr must be zeroed on entry";
  kiln_status_free(status);
  kiln_session_release(nullptr);
}

/// Opens the add model (input "x" f32[4], output "y" f32[4]) plus an empty input "none" f32[0];
/// the caller releases it.
kiln_artifact_t *openBindingArtifact() {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  auto none = std::make_unique<kiln::artifact::TensorDescT>();
  none->name = "none";
  none->dtype = kiln::artifact::DType::F32;
  none->shape = {0};
  builder.model.inputs.push_back(std::move(none));
  std::string path = kiln::test::writeTempFile("bind.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  return artifact;
}

/// Expects kiln::checkBinding to fail with `code` and exactly `message`.
void expectBindingError(const kiln_artifact_t *artifact, bool isInput, const char *name,
                        uint64_t pointer, size_t bytes, kiln_status_code_t code,
                        const std::string &message) {
  size_t index = 7;
  const char *function = isInput ? "kiln_session_bind_input" : "kiln_session_bind_output";
  kiln_status_t status =
      kiln::checkBinding(*artifact, isInput, name, pointer, bytes, function, index);
  EXPECT_EQ(kiln_status_code(status), code) << kiln_status_message(status);
  EXPECT_EQ(std::string(kiln_status_message(status)), message);
  kiln_status_free(status);
}

TEST(SessionBinding, AcceptsMatchingAlignedBuffers) {
  kiln_artifact_t *artifact = openBindingArtifact();
  ASSERT_NE(artifact, nullptr);
  size_t index = 7;
  kiln_status_t status = kiln::checkBinding(*artifact, true, "x", 0x7f0000000000ull, 16,
                                            "kiln_session_bind_input", index);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(index, 0u);
  status = kiln::checkBinding(*artifact, true, "none", 0x100, 0, "kiln_session_bind_input", index);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(index, 1u);
  status = kiln::checkBinding(*artifact, false, "y", kiln::kBindingAlignment * 3, 16,
                              "kiln_session_bind_output", index);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(index, 0u);
  kiln_artifact_release(artifact);
}

TEST(SessionBinding, SizeMismatchNamesTheTensor) {
  kiln_artifact_t *artifact = openBindingArtifact();
  ASSERT_NE(artifact, nullptr);
  expectBindingError(artifact, true, "x", 0x1000, 12, KILN_INVALID_ARGUMENT,
                     "kiln_session_bind_input: input 'x' is 16 bytes (f32, 4 elements) but 12 "
                     "bytes were given");
  expectBindingError(artifact, false, "y", 0x1000, 32, KILN_INVALID_ARGUMENT,
                     "kiln_session_bind_output: output 'y' is 16 bytes (f32, 4 elements) but 32 "
                     "bytes were given");
  expectBindingError(artifact, true, "none", 0x1000, 4, KILN_INVALID_ARGUMENT,
                     "kiln_session_bind_input: input 'none' is 0 bytes (f32, 0 elements) but 4 "
                     "bytes were given");
  kiln_artifact_release(artifact);
}

TEST(SessionBinding, NullAndMisalignedPointersAreRejected) {
  kiln_artifact_t *artifact = openBindingArtifact();
  ASSERT_NE(artifact, nullptr);
  expectBindingError(artifact, true, "x", 0, 16, KILN_INVALID_ARGUMENT,
                     "kiln_session_bind_input: input 'x': device_ptr is 0; to go back to the "
                     "session's own buffer, call kiln_session_unbind_input");
  expectBindingError(artifact, false, "y", 0, 16, KILN_INVALID_ARGUMENT,
                     "kiln_session_bind_output: output 'y': device_ptr is 0; to go back to the "
                     "session's own buffer, call kiln_session_unbind_output");
  expectBindingError(artifact, true, "x", 0x1010, 16, KILN_INVALID_ARGUMENT,
                     "kiln_session_bind_input: input 'x': device pointer 0x1010 is not a multiple "
                     "of 256 bytes; the kernels assume the alignment of the session's own buffers "
                     "(cuMemAlloc returns such addresses)");
  expectBindingError(artifact, false, "y", 0x1080, 16, KILN_INVALID_ARGUMENT,
                     "kiln_session_bind_output: output 'y': device pointer 0x1080 is not a "
                     "multiple of 256 bytes; the kernels assume the alignment of the session's "
                     "own buffers (cuMemAlloc returns such addresses)");
  kiln_artifact_release(artifact);
}

TEST(SessionBinding, UnknownAndNullNames) {
  kiln_artifact_t *artifact = openBindingArtifact();
  ASSERT_NE(artifact, nullptr);
  std::string path = kiln_artifact_path(artifact);
  expectBindingError(artifact, true, "y", 0x1000, 16, KILN_NOT_FOUND,
                     "kiln_session_bind_input: '" + path +
                         "' has no input named 'y' (inputs: 'x', 'none')");
  expectBindingError(artifact, false, "x", 0x1000, 16, KILN_NOT_FOUND,
                     "kiln_session_bind_output: '" + path +
                         "' has no output named 'x' (outputs: 'y')");
  expectBindingError(artifact, true, nullptr, 0x1000, 16, KILN_INVALID_ARGUMENT,
                     "kiln_session_bind_input: name must be non-NULL");
  kiln_artifact_release(artifact);
}

TEST(Session, ParamsDefaults) {
  kiln_session_params_t params;
  params.device_ordinal = 7;
  params.poison_arena = 7;
  params.use_cuda_graph = 7;
  kiln_tp_id_t id;
  params.tp_id = &id;
  params.tp_timeout_ms = 7;
  kiln_session_params_initialize(&params);
  EXPECT_EQ(params.device_ordinal, 0);
  EXPECT_EQ(params.poison_arena, 0);
  EXPECT_EQ(params.use_cuda_graph, 1) << "CUDA graphs are on by default";
  EXPECT_EQ(params.tp_id, nullptr);
  EXPECT_EQ(params.tp_timeout_ms, 300000u) << "5 minutes";
}

TEST(Session, ProfileCollectivesRejectsNullSession) {
  float launches[2] = {1, 1}, collectives[1] = {1};
  kiln_status_t status = kiln_session_profile_collectives(nullptr, 3, launches, collectives);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_session_profile(nullptr, 3, launches);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
}

/// Opens rank `rank` of the 2-rank all-reduce model; the caller releases it.
kiln_artifact_t *openRankArtifact(uint32_t rank) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAllReduceModel(builder, rank, 2);
  std::string path =
      kiln::test::writeTempFile("tp.rank" + std::to_string(rank) + ".kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  return artifact;
}

TEST(TensorParallelSession, CreateWithoutGroupIdIsInvalidArgument) {
  // Checked before the driver or NCCL is loaded: the same answer with or without a GPU.
  kiln_artifact_t *artifact = openRankArtifact(1);
  ASSERT_NE(artifact, nullptr);
  kiln_session_t *session = reinterpret_cast<kiln_session_t *>(0x1);
  kiln_status_t status = kiln_session_create(artifact, nullptr, &session);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  std::string message = kiln_status_message(status);
  EXPECT_NE(message.find(std::string("'") + kiln_artifact_path(artifact) +
                         "': rank 1 of 2 (device 0): kiln_session_create: a tensor-parallel rank "
                         "artifact needs kiln_session_params_t::tp_id"),
            std::string::npos)
      << message;
  kiln_status_free(status);
  kiln_artifact_release(artifact);
}

TEST(TensorParallelSession, CreateWithGroupIdButNoDeviceIsUnavailable) {
  // Device 9999 exists nowhere, so this never reaches the communicator, GPU or not: the status
  // comes from loading NCCL (missing, or a runtime built without nccl.h), loading the driver or
  // checking the ordinal.
  kiln_artifact_t *artifact = openRankArtifact(0);
  ASSERT_NE(artifact, nullptr);
  kiln_tp_id_t id;
  std::memset(id.bytes, 0x5a, sizeof(id.bytes));
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.tp_id = &id;
  params.device_ordinal = 9999;
  kiln_session_t *session = nullptr;
  kiln_status_t status = kiln_session_create(artifact, &params, &session);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE) << kiln_status_message(status);
  EXPECT_EQ(session, nullptr);
  std::string message = kiln_status_message(status);
#if KILN_HAVE_NCCL
  bool expected = message.find("CUDA driver not found") != std::string::npos ||
                  message.find("CUDA device 9999 does not exist") != std::string::npos ||
                  message.find("NCCL not found") != std::string::npos;
#else
  bool expected = message.find("rank 0 of 2 (device 9999): this kiln runtime was built without "
                               "NCCL") != std::string::npos;
#endif
  EXPECT_TRUE(expected) << message;
  std::printf("tensor-parallel session_create without a device: %s\n", message.c_str());
  kiln_status_free(status);
  kiln_artifact_release(artifact);
}

TEST(TensorParallelId, TextRoundTrip) {
  kiln_tp_id_t id;
  for (size_t i = 0; i < KILN_TP_ID_BYTES; ++i)
    id.bytes[i] = static_cast<unsigned char>(i * 37 + 11);
  char text[KILN_TP_ID_STRING_BYTES];
  std::memset(text, 'x', sizeof(text));
  kiln_tp_id_to_string(&id, text);
  ASSERT_EQ(std::strlen(text), 2u * KILN_TP_ID_BYTES);
  EXPECT_EQ(std::string(text, 4), "0b30") << "bytes 11 and 48, lowercase hex";
  for (const char *c = text; *c; ++c)
    EXPECT_TRUE((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')) << *c;
  kiln_tp_id_t parsed;
  kiln_status_t status = kiln_tp_id_from_string(text, &parsed);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(std::memcmp(id.bytes, parsed.bytes, KILN_TP_ID_BYTES), 0);
}

TEST(TensorParallelId, ParsesUppercaseAndSurroundingWhitespace) {
  std::string text(2 * KILN_TP_ID_BYTES, 'F');
  text[1] = 'e';
  kiln_tp_id_t parsed;
  kiln_status_t status = kiln_tp_id_from_string((" \t" + text + "\n").c_str(), &parsed);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(parsed.bytes[0], 0xfe);
  EXPECT_EQ(parsed.bytes[KILN_TP_ID_BYTES - 1], 0xff);
}

/// Expects kiln_tp_id_from_string(`text`) to fail with `fragment` and a zeroed id.
void expectBadId(const char *text, const std::string &fragment) {
  kiln_tp_id_t parsed;
  std::memset(parsed.bytes, 0x77, sizeof(parsed.bytes));
  kiln_status_t status = kiln_tp_id_from_string(text, &parsed);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status)).find(fragment), std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(parsed.bytes[0], 0) << "out_id must be zeroed on entry";
  kiln_status_free(status);
}

TEST(TensorParallelId, RejectsWrongLength) {
  expectBadId("abcd", "invalid tensor-parallel group id: 4 characters, expected 256 hex digits");
  expectBadId("", "0 characters, expected 256 hex digits");
  std::string tooLong(2 * KILN_TP_ID_BYTES + 2, '0');
  expectBadId(tooLong.c_str(), "258 characters, expected 256");
}

TEST(TensorParallelId, RejectsNonHexCharacter) {
  std::string text(2 * KILN_TP_ID_BYTES, '0');
  text[17] = 'g';
  expectBadId(text.c_str(), "character 'g' at position 17 is not a hex digit");
  text[17] = '\x01';
  expectBadId(text.c_str(), "byte 0x01 at position 17 is not a hex digit");
  text[17] = '0';
  text[100] = ' ';
  expectBadId(text.c_str(), "character ' ' at position 100 is not a hex digit");
}

TEST(TensorParallelId, RejectsNullArguments) {
  kiln_tp_id_t parsed;
  kiln_status_t status = kiln_tp_id_from_string(nullptr, &parsed);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_tp_id_from_string("00", nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_tp_id_create(nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
}

TEST(TensorParallelId, CreateGivesFreshIdsOrUnavailable) {
  // ncclGetUniqueId needs NCCL and a network interface, no GPU.
  kiln_tp_id_t a, b;
  kiln_status_t status = kiln_tp_id_create(&a);
  if (status) {
    EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE) << kiln_status_message(status);
    std::string message = kiln_status_message(status);
    kiln_status_free(status);
    GTEST_SKIP() << "no NCCL: " << message;
  }
  status = kiln_tp_id_create(&b);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_NE(std::memcmp(a.bytes, b.bytes, KILN_TP_ID_BYTES), 0) << "two groups, two ids";
  kiln_tp_id_t zero;
  std::memset(zero.bytes, 0, sizeof(zero.bytes));
  EXPECT_NE(std::memcmp(a.bytes, zero.bytes, KILN_TP_ID_BYTES), 0);
}

TEST(TensorParallelDeadline, ExpiresAfterItsTimeoutAndZeroNever) {
  kiln::Deadline never(0);
  kiln::Deadline soon(20);
  EXPECT_FALSE(soon.expired());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_TRUE(soon.expired());
  EXPECT_GE(soon.elapsedMs(), 20u);
  EXPECT_FALSE(never.expired());
  EXPECT_EQ(soon.timeoutMs(), 20u);
  // pause() sleeps 50-200 us: 10 pauses stay far below a millisecond each.
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i)
    never.pause();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
}

/// Opens the artifact `builder` describes; the caller releases it.
kiln_artifact_t *openBuilt(kiln::test::ArtifactBuilder &builder, const std::string &name) {
  std::string path = kiln::test::writeTempFile(name, builder.build());
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  return artifact;
}

/// Appends a kiln_add launch of `a` + `b` into `y` to the model of `builder`.
void addLaunch(kiln::test::ArtifactBuilder &builder, std::unique_ptr<kiln::artifact::BufferRefT> a,
               std::unique_ptr<kiln::artifact::BufferRefT> b,
               std::unique_ptr<kiln::artifact::BufferRefT> y) {
  auto launch = std::make_unique<kiln::artifact::LaunchT>();
  launch->module_ = 0;
  launch->function = "kiln_add";
  launch->grid = {1, 1, 1};
  launch->block = {4, 1, 1};
  launch->args.push_back(std::move(a));
  launch->args.push_back(std::move(b));
  launch->args.push_back(std::move(y));
  builder.model.launches.push_back(std::move(launch));
}

namespace fbs = kiln::artifact;
using kiln::test::makeRef;

TEST(OutputRedirect, AddModelOutputIsWrittenInPlace) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  kiln_artifact_t *artifact = openBuilt(builder, "redirect_add.kiln");
  ASSERT_NE(artifact, nullptr);
  std::vector<kiln::ArgRedirect> redirects;
  EXPECT_TRUE(kiln::planOutputRedirect(*artifact, 0, redirects));
  ASSERT_EQ(redirects.size(), 1u);
  EXPECT_EQ(redirects[0].launch, 0u);
  EXPECT_EQ(redirects[0].arg, 2u);
  EXPECT_EQ(redirects[0].offset, 0u);
  kiln_artifact_release(artifact);
}

TEST(OutputRedirect, TensorsInsideTheRangeMoveWithTheOutput) {
  // y lives at arena [512, 528). Launch 0 writes t = x + w at 512 (an earlier tensor of y's
  // range), launch 1 writes u = x + w at 528 (outside it), launch 2 writes y = t + w in place.
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  fbs::ModelT &model = builder.model;
  model.launches.clear();
  addLaunch(builder, makeRef(fbs::Segment::Input, 0, 16), makeRef(fbs::Segment::Weights, 0, 16),
            makeRef(fbs::Segment::Arena, 512, 16));
  addLaunch(builder, makeRef(fbs::Segment::Input, 0, 16), makeRef(fbs::Segment::Weights, 0, 16),
            makeRef(fbs::Segment::Arena, 528, 16));
  addLaunch(builder, makeRef(fbs::Segment::Arena, 512, 16), makeRef(fbs::Segment::Weights, 0, 16),
            makeRef(fbs::Segment::Arena, 512, 16));
  model.outputs[0]->location = makeRef(fbs::Segment::Arena, 512, 16);
  kiln_artifact_t *artifact = openBuilt(builder, "redirect_inside.kiln");
  ASSERT_NE(artifact, nullptr);
  std::vector<kiln::ArgRedirect> redirects;
  EXPECT_TRUE(kiln::planOutputRedirect(*artifact, 0, redirects));
  ASSERT_EQ(redirects.size(), 3u) << "launch 0's result, launch 2's operand and result";
  EXPECT_EQ(redirects[0].launch, 0u);
  EXPECT_EQ(redirects[0].arg, 2u);
  EXPECT_EQ(redirects[1].launch, 2u);
  EXPECT_EQ(redirects[1].arg, 0u);
  EXPECT_EQ(redirects[2].launch, 2u);
  EXPECT_EQ(redirects[2].arg, 2u);
  for (const kiln::ArgRedirect &r : redirects)
    EXPECT_EQ(r.offset, 0u);
  kiln_artifact_release(artifact);
}

TEST(OutputRedirect, PartlyCoveredSharedOrNonArenaOutputsAreCopied) {
  std::vector<kiln::ArgRedirect> redirects;
  {
    // An argument sticking out of the output's range (a 32-byte view over y and what follows).
    kiln::test::ArtifactBuilder builder;
    kiln::test::buildAddModel(builder);
    addLaunch(builder, makeRef(fbs::Segment::Arena, 0, 32), makeRef(fbs::Segment::Weights, 0, 16),
              makeRef(fbs::Segment::Arena, 256, 16));
    kiln_artifact_t *artifact = openBuilt(builder, "redirect_partial.kiln");
    ASSERT_NE(artifact, nullptr);
    redirects.push_back({9, 9, 9});
    EXPECT_FALSE(kiln::planOutputRedirect(*artifact, 0, redirects));
    EXPECT_TRUE(redirects.empty());
    kiln_artifact_release(artifact);
  }
  {
    // Two outputs at the same location: redirecting one would leave the other stale.
    kiln::test::ArtifactBuilder builder;
    kiln::test::buildAddModel(builder);
    auto again = std::make_unique<fbs::TensorDescT>();
    again->name = "y_again";
    again->dtype = fbs::DType::F32;
    again->shape = {kiln::test::kAddElements};
    again->location = makeRef(fbs::Segment::Arena, 0, 16);
    builder.model.outputs.push_back(std::move(again));
    kiln_artifact_t *artifact = openBuilt(builder, "redirect_twice.kiln");
    ASSERT_NE(artifact, nullptr);
    EXPECT_FALSE(kiln::planOutputRedirect(*artifact, 0, redirects));
    EXPECT_FALSE(kiln::planOutputRedirect(*artifact, 1, redirects));
    kiln_artifact_release(artifact);
  }
  {
    // Outputs in the weights or in an input have no arena range to move.
    kiln::test::ArtifactBuilder builder;
    kiln::test::buildAddModel(builder);
    builder.model.outputs[0]->location = makeRef(fbs::Segment::Weights, 0, 16);
    auto echo = std::make_unique<fbs::TensorDescT>();
    echo->name = "x_echo";
    echo->dtype = fbs::DType::F32;
    echo->shape = {kiln::test::kAddElements};
    echo->location = makeRef(fbs::Segment::Input, 0, 16, 0);
    builder.model.outputs.push_back(std::move(echo));
    kiln_artifact_t *artifact = openBuilt(builder, "redirect_segments.kiln");
    ASSERT_NE(artifact, nullptr);
    EXPECT_FALSE(kiln::planOutputRedirect(*artifact, 0, redirects));
    EXPECT_FALSE(kiln::planOutputRedirect(*artifact, 1, redirects));
    kiln_artifact_release(artifact);
  }
}

TEST(OutputRedirect, CollectivesOnTheOutputForceACopy) {
  // The all-reduce model: the collective works in place on arena+0, y lives at arena+256.
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAllReduceModel(builder, 0, 2);
  kiln_artifact_t *artifact = openBuilt(builder, "redirect_tp.rank0.kiln");
  ASSERT_NE(artifact, nullptr);
  std::vector<kiln::ArgRedirect> redirects;
  EXPECT_TRUE(kiln::planOutputRedirect(*artifact, 0, redirects))
      << "y does not meet the collective";
  kiln_artifact_release(artifact);
  // Moved onto the all-reduce's range, the output must be copied.
  kiln::test::ArtifactBuilder onCollective;
  kiln::test::buildAllReduceModel(onCollective, 0, 2);
  onCollective.model.outputs[0]->location = makeRef(fbs::Segment::Arena, 0, 16);
  artifact = openBuilt(onCollective, "redirect_tp_on.rank0.kiln");
  ASSERT_NE(artifact, nullptr);
  EXPECT_FALSE(kiln::planOutputRedirect(*artifact, 0, redirects));
  kiln_artifact_release(artifact);
}

TEST(Session, HasCudaGraphOfNullIsZero) { EXPECT_EQ(kiln_session_has_cuda_graph(nullptr), 0); }

} // namespace
