//===- Artifact.cpp - Opening and verifying .kiln artifacts ---------------===//
//
// Implements kiln_artifact_open and the artifact queries of the C API. Opening maps the file
// read-only and verifies, in order:
//   1. the 64-byte header: size, magic, format version, header size, recorded file size, index
//      range (aligned, after the header, inside the file), checksum kind;
//   2. the checksum (CRC-32 of everything after the header, when the header carries one; the
//      pages it has read are released as it goes), then
//      the FlatBuffers index itself (file identifier + flatbuffers::Verifier);
//   3. every blob (weights, PTX, cubins): inside the file, 256-byte aligned, not overlapping the
//      header or the index, with overflow-checked arithmetic;
//   4. inputs and outputs: names, dtypes, shapes, byte sizes (overflow checked), output locations,
//      value ranges (integer inputs only, min <= max);
//   5. every launch: module index, function name, grid/block dimensions within CUDA limits, every
//      argument's BufferRef inside its segment; the optional description (name, layer, ops, ONNX
//      nodes with node_count >= their number, cost) is copied; every tensor map (format version
//      3): argument index, dtype, rank, dims, strides, box, swizzle and alignment as
//      cuTensorMapEncodeTiled requires them, and every byte the map can address inside its
//      argument's buffer (overflow checked), the kernel parameters within 4 KiB;
//   6. tensor parallelism (format version 2): the TensorParallel table (world size >= 2, rank in
//      range) and every collective (known kind, float dtype, count > 0, input and output arena
//      ranges of exactly count elements, equal or disjoint, before_launch in range and sorted);
//      collectives need a TensorParallel table, and a version-1 file may carry neither.
// Only then is the index copied into the plain structs of Artifact.h. Every failure is a status
// naming the file and the defect.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "InputValues.h"

#include "ArtifactHeader.h"
#include "DType.h"
#include "Status.h"
#include "kiln_artifact_generated.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <new>
#include <set>

namespace fb = kiln::artifact;

static_assert(static_cast<int>(fb::DType::MAX) + 1 == KILN_DTYPE_COUNT,
              "kiln_dtype_t must cover kiln.artifact.DType");
static_assert(static_cast<int>(fb::DType::F32) == KILN_DTYPE_F32 &&
                  static_cast<int>(fb::DType::F16) == KILN_DTYPE_F16 &&
                  static_cast<int>(fb::DType::BF16) == KILN_DTYPE_BF16 &&
                  static_cast<int>(fb::DType::I64) == KILN_DTYPE_I64 &&
                  static_cast<int>(fb::DType::I32) == KILN_DTYPE_I32 &&
                  static_cast<int>(fb::DType::I8) == KILN_DTYPE_I8 &&
                  static_cast<int>(fb::DType::U8) == KILN_DTYPE_U8 &&
                  static_cast<int>(fb::DType::Bool) == KILN_DTYPE_BOOL &&
                  static_cast<int>(fb::DType::I16) == KILN_DTYPE_I16 &&
                  static_cast<int>(fb::DType::U16) == KILN_DTYPE_U16 &&
                  static_cast<int>(fb::DType::U32) == KILN_DTYPE_U32 &&
                  static_cast<int>(fb::DType::U64) == KILN_DTYPE_U64,
              "kiln_dtype_t values must equal kiln.artifact.DType values");
static_assert(static_cast<int>(fb::Segment::Arena) == static_cast<int>(kiln::Segment::Arena) &&
                  static_cast<int>(fb::Segment::Weights) ==
                      static_cast<int>(kiln::Segment::Weights) &&
                  static_cast<int>(fb::Segment::Input) == static_cast<int>(kiln::Segment::Input),
              "kiln::Segment must equal kiln.artifact.Segment");
static_assert(static_cast<int>(fb::CollectiveKind::MAX) == 0 &&
                  static_cast<int>(fb::CollectiveKind::AllReduceSum) ==
                      static_cast<int>(kiln::CollectiveKind::AllReduceSum),
              "kiln::CollectiveKind must cover kiln.artifact.CollectiveKind");
static_assert(static_cast<int>(fb::TensorMapSwizzle::MAX) == 3 &&
                  static_cast<int>(fb::TensorMapSwizzle::None) ==
                      static_cast<int>(kiln::TensorMapSwizzle::None) &&
                  static_cast<int>(fb::TensorMapSwizzle::B32) ==
                      static_cast<int>(kiln::TensorMapSwizzle::B32) &&
                  static_cast<int>(fb::TensorMapSwizzle::B64) ==
                      static_cast<int>(kiln::TensorMapSwizzle::B64) &&
                  static_cast<int>(fb::TensorMapSwizzle::B128) ==
                      static_cast<int>(kiln::TensorMapSwizzle::B128) &&
                  KILN_TENSOR_MAP_SWIZZLE_NONE == 0 && KILN_TENSOR_MAP_SWIZZLE_32B == 1 &&
                  KILN_TENSOR_MAP_SWIZZLE_64B == 2 && KILN_TENSOR_MAP_SWIZZLE_128B == 3,
              "kiln::TensorMapSwizzle must equal kiln.artifact.TensorMapSwizzle");

kiln_artifact::~kiln_artifact() {
  if (data && !owner)
    munmap(const_cast<uint8_t *>(data), static_cast<size_t>(size));
}

namespace kiln {
namespace {

/// CUDA launch limits common to every supported device (compute capability >= 7.5).
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint32_t kMaxBlockDim[3] = {1024, 1024, 64};
constexpr uint32_t kMaxGridDim[3] = {0x7fffffffu, 65535, 65535};

/// Returns true and sets `sum` if a + b does not overflow uint64.
bool addOverflowFree(uint64_t a, uint64_t b, uint64_t &sum) {
  return !__builtin_add_overflow(a, b, &sum);
}

/// cuTensorMapEncodeTiled's limits (cuda.h): rank, dims, strides, box and the 16-byte alignment
/// of the global address, the strides and the innermost box row.
constexpr size_t kMaxTensorMapRank = 5;
constexpr uint64_t kMaxTensorMapDim = uint64_t(1) << 32;
constexpr uint64_t kTensorMapStrideLimit = uint64_t(1) << 40;
constexpr uint32_t kMaxTensorMapBox = 256;
constexpr uint64_t kTensorMapAlignment = 16;

/// Element `i` of a vector of 8-byte scalars. The FlatBuffers verifier aligns a vector's length
/// prefix (4 bytes), not its 8-byte elements: an edited index may place them at any 4-byte
/// boundary, so each one is copied out, never dereferenced.
template <typename T> T loadScalar(const flatbuffers::Vector<T> *vector, flatbuffers::uoffset_t i) {
  T value;
  std::memcpy(&value, vector->Data() + size_t(i) * sizeof(T), sizeof(value));
  return flatbuffers::EndianScalar(value);
}

/// "64x128": the entries of `values` joined with 'x', for messages.
template <typename T> std::string joinDims(const std::vector<T> &values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "x" : "") + std::to_string(values[i]);
  return text;
}

/// Verifies the index of one artifact and collects it; `fail` formats errors with the file path.
class Verifier {
public:
  Verifier(const uint8_t *data, uint64_t size, kiln_artifact &artifact, bool fileMapping)
      : data(data), size(size), artifact(artifact), fileMapping(fileMapping) {}

  /// Runs all checks; returns NULL on success.
  kiln_status_t run();

private:
  /// Creates an INVALID_ARTIFACT status "<path>: invalid artifact: <message>".
  kiln_status_t fail(const std::string &message) {
    return makeStatus(KILN_INVALID_ARTIFACT,
                      "'" + artifact.path + "': invalid artifact: " + message);
  }

  /// Step 1: header fields, the index range and the checksum kind.
  kiln_status_t checkHeader();
  /// Step 2: the CRC-32 of bytes [64, size) equals the header's, when the header records one.
  kiln_status_t checkChecksum();
  /// Step 3: one blob lies inside the file, aligned, clear of header and index.
  kiln_status_t checkBlob(const fb::Blob *blob, const std::string &what, BlobRange &out);
  /// Step 4: name, dtype, shape and byte size of an input/output (and an output's location).
  kiln_status_t checkTensor(const fb::TensorDesc *tensor, const std::string &what, bool isOutput,
                            TensorDesc &out);
  /// A BufferRef lies inside its segment (arena, weights or an existing input).
  kiln_status_t checkBufferRef(const fb::BufferRef *ref, const std::string &what,
                               BufferRefDesc &out);
  /// `dims` has 3 entries within [1, CUDA limit] for `kind` ("grid" or "block").
  kiln_status_t checkDims(const flatbuffers::Vector<uint32_t> *dims, const char *kind,
                          const std::string &what, uint32_t out[3]);
  /// Step 5: module index, function name, dimensions and arguments of one launch.
  kiln_status_t checkLaunch(const fb::Launch *launch, size_t number, LaunchDesc &out);
  /// Step 5: one tensor map of launch `launch` (whose arguments are verified); `what` names it.
  kiln_status_t checkTensorMap(const fb::TensorMap *map, const LaunchDesc &launch,
                               const std::string &what, TensorMapDesc &out);
  /// Step 6: the TensorParallel table and the collectives (after the launches, whose count
  /// bounds before_launch).
  kiln_status_t checkTensorParallel(const fb::Model *model);
  /// Steps 4-5 for one program: its inputs, outputs and launches, filled into `artifact`.
  kiln_status_t checkProgramTables(
      const flatbuffers::Vector<flatbuffers::Offset<fb::TensorDesc>> *inputs,
      const flatbuffers::Vector<flatbuffers::Offset<fb::TensorDesc>> *outputs,
      const flatbuffers::Vector<flatbuffers::Offset<fb::Launch>> *launches);
  /// Step 7: Model.programs (programs 1..n-1), each into its own kiln_artifact (Artifact.h).
  kiln_status_t checkPrograms(const fb::Model *model);
  /// Step 6: one collective; `previous` is collective number - 1 (null for the first).
  kiln_status_t checkCollective(const fb::Collective *collective, size_t number,
                                const CollectiveDesc *previous, CollectiveDesc &out);
  /// One arena reference of a collective: present, in the arena, `bytes` long.
  kiln_status_t checkCollectiveRef(const fb::BufferRef *ref, const std::string &what,
                                   uint64_t bytes, const std::string &expected, BufferRefDesc &out);

  const uint8_t *data;
  uint64_t size;
  kiln_artifact &artifact;
  /// `data` is a read-only file mapping whose pages the checksum may release (verifyArtifact).
  bool fileMapping;
  uint64_t indexBegin = 0;
  uint64_t indexEnd = 0;
  uint32_t checksumKind = kiln::artifact::kChecksumNone;
  uint32_t checksum = 0;
  uint32_t formatVersion = 0;
};

kiln_status_t Verifier::checkHeader() {
  using namespace kiln::artifact;
  if (size < kHeaderSize)
    return fail(formatString("file is %llu byte%s, smaller than the %u-byte header (truncated?)",
                             static_cast<unsigned long long>(size), size == 1 ? "" : "s",
                             kHeaderSize));
  ArtifactHeader header = decodeHeader(data);
  if (std::memcmp(header.magic, kMagic, sizeof(kMagic)) != 0)
    return fail("bad magic: the file does not start with \"KILNART\\0\" (not a .kiln artifact)");
  if (header.formatVersion < kOldestFormatVersion || header.formatVersion > kFormatVersion)
    return makeStatusF(KILN_UNSUPPORTED_VERSION,
                       "'%s': unsupported artifact format version %u: this runtime reads "
                       "versions %u to %u; recompile the model with a matching kiln-compile",
                       artifact.path.c_str(), header.formatVersion, kOldestFormatVersion,
                       kFormatVersion);
  if (header.headerSize != kHeaderSize)
    return fail(formatString("header_size is %u, expected %u", header.headerSize, kHeaderSize));
  if (header.fileSize != size)
    return fail(formatString("header records a file size of %llu bytes but the file is %llu "
                             "bytes (truncated or modified)",
                             static_cast<unsigned long long>(header.fileSize),
                             static_cast<unsigned long long>(size)));
  uint64_t end = 0;
  if (!addOverflowFree(header.indexOffset, header.indexSize, end) || end > size)
    return fail(formatString("index [offset %llu, size %llu] extends past the end of the file "
                             "(%llu bytes)",
                             static_cast<unsigned long long>(header.indexOffset),
                             static_cast<unsigned long long>(header.indexSize),
                             static_cast<unsigned long long>(size)));
  if (header.indexOffset < kHeaderSize)
    return fail(formatString("index offset %llu overlaps the %u-byte header",
                             static_cast<unsigned long long>(header.indexOffset), kHeaderSize));
  if (header.indexOffset % kIndexAlignment != 0)
    return fail(formatString("index offset %llu is not a multiple of %llu",
                             static_cast<unsigned long long>(header.indexOffset),
                             static_cast<unsigned long long>(kIndexAlignment)));
  if (header.indexSize < 8)
    return fail(formatString("index size %llu is too small for a FlatBuffers table",
                             static_cast<unsigned long long>(header.indexSize)));
  if (header.indexSize >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return fail(formatString("index size %llu exceeds the FlatBuffers limit of 2 GiB",
                             static_cast<unsigned long long>(header.indexSize)));
  if (header.checksumKind != kChecksumNone && header.checksumKind != kChecksumCrc32)
    return fail(formatString("unknown checksum kind 0x%08x (this runtime knows 0x%08x = none and "
                             "0x%08x = CRC-32): the header is corrupted or the file needs a newer "
                             "runtime",
                             header.checksumKind, kChecksumNone, kChecksumCrc32));
  formatVersion = header.formatVersion;
  indexBegin = header.indexOffset;
  indexEnd = end;
  checksumKind = header.checksumKind;
  checksum = header.checksum;
  return nullptr;
}

kiln_status_t Verifier::checkChecksum() {
  using namespace kiln::artifact;
  if (checksumKind == kChecksumNone)
    return nullptr; // Written before the checksum existed: structural checks only.
  // In chunks, so that a file mapping's pages can be released behind the checksum: it reads
  // every byte once, and the weights are read again only when a session uploads them.
  constexpr uint64_t kChunk = uint64_t(64) << 20;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uLong crc = crc32_z(0L, Z_NULL, 0);
  uint64_t released = 0; // [0, released) is released, a multiple of the page size
  for (uint64_t at = kHeaderSize; at < size; at += kChunk) {
    uint64_t n = std::min(kChunk, size - at);
    crc = crc32_z(crc, data + at, static_cast<size_t>(n));
    // The whole pages read so far (the header and the index are read again after this; their
    // pages simply fault in again).
    uint64_t end = (at + n) / page * page;
    if (fileMapping && end > released) {
      ::madvise(const_cast<uint8_t *>(data) + released, static_cast<size_t>(end - released),
                MADV_DONTNEED);
      released = end;
    }
  }
  uint32_t actual = static_cast<uint32_t>(crc);
  if (actual != checksum)
    return fail(formatString("checksum mismatch: file is corrupted (expected 0x%08x, got 0x%08x)",
                             checksum, actual));
  return nullptr;
}

kiln_status_t Verifier::checkBlob(const fb::Blob *blob, const std::string &what, BlobRange &out) {
  out = BlobRange();
  if (!blob || blob->size() == 0)
    return nullptr; // An absent or empty blob carries no bytes; its offset is ignored.
  uint64_t offset = blob->offset(), length = blob->size(), end = 0;
  if (!addOverflowFree(offset, length, end) || end > size)
    return fail(formatString("%s [offset %llu, size %llu] extends past the end of the file "
                             "(%llu bytes)",
                             what.c_str(), static_cast<unsigned long long>(offset),
                             static_cast<unsigned long long>(length),
                             static_cast<unsigned long long>(size)));
  if (offset % kiln::artifact::kBlobAlignment != 0)
    return fail(formatString("%s offset %llu is not %llu-byte aligned", what.c_str(),
                             static_cast<unsigned long long>(offset),
                             static_cast<unsigned long long>(kiln::artifact::kBlobAlignment)));
  if (offset < kiln::artifact::kHeaderSize || (offset < indexEnd && end > indexBegin))
    return fail(formatString("%s [offset %llu, size %llu] overlaps the %s", what.c_str(),
                             static_cast<unsigned long long>(offset),
                             static_cast<unsigned long long>(length),
                             offset < kiln::artifact::kHeaderSize ? "header" : "index"));
  out.offset = offset;
  out.size = length;
  return nullptr;
}

kiln_status_t Verifier::checkTensor(const fb::TensorDesc *tensor, const std::string &what,
                                    bool isOutput, TensorDesc &out) {
  // The verifier guarantees `name` (required) exists.
  out.name = tensor->name()->str();
  std::string label = what + " '" + out.name + "'";
  if (out.name.empty())
    return fail(what + " has an empty name");
  unsigned dtype = static_cast<unsigned>(tensor->dtype());
  if (!isValidDType(dtype))
    return fail(formatString("%s has unknown dtype %u", label.c_str(), dtype));
  out.dtype = static_cast<kiln_dtype_t>(dtype);
  uint64_t bytes = lookupDType(out.dtype)->byteSize;
  if (const flatbuffers::Vector<int64_t> *shape = tensor->shape()) {
    for (flatbuffers::uoffset_t i = 0; i < shape->size(); ++i) {
      // The FlatBuffers verifier aligns a vector's length prefix (4 bytes),
      // not its 8-byte elements: an edited index may place them at any
      // 4-byte boundary, so each one is copied out, never dereferenced.
      int64_t dim = 0;
      std::memcpy(&dim, shape->Data() + size_t(i) * sizeof(int64_t), sizeof(dim));
      dim = flatbuffers::EndianScalar(dim);
      if (dim < 0)
        return fail(formatString("%s has negative dimension %lld at position %u", label.c_str(),
                                 static_cast<long long>(dim), i));
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes))
        return fail(label + " byte size overflows 64 bits");
      out.shape.push_back(dim);
    }
  }
  out.byteSize = bytes;
  if (const fb::ValueRange *range = tensor->value_range()) {
    if (isOutput || lookupDType(out.dtype)->isFloat || out.dtype == KILN_DTYPE_BOOL)
      return fail(formatString("%s has a value_range, which only integer inputs may have (it "
                               "is %s %s)",
                               label.c_str(), kiln_dtype_name(out.dtype),
                               isOutput ? "output" : "input"));
    if (range->min() > range->max())
      return fail(formatString("%s value_range [%lld, %lld] is empty (min > max)", label.c_str(),
                               static_cast<long long>(range->min()),
                               static_cast<long long>(range->max())));
    out.hasValueRange = true;
    out.valueMin = range->min();
    out.valueMax = range->max();
  }
  if (!isOutput) {
    // Roles a reader does not know (appended later) read as Data.
    auto role = static_cast<unsigned>(tensor->role());
    out.role = role <= KILN_INPUT_ROLE_SAMPLE_OFFSET ? static_cast<kiln_input_role_t>(role)
                                                    : KILN_INPUT_ROLE_DATA;
  }
  if (!isOutput)
    return nullptr;
  if (!tensor->location())
    return fail(label + " has no location");
  KILN_RETURN_IF_ERROR(checkBufferRef(tensor->location(), label + " location", out.location));
  if (out.location.size != out.byteSize)
    return fail(formatString("%s location covers %llu bytes but the tensor is %llu bytes",
                             label.c_str(), static_cast<unsigned long long>(out.location.size),
                             static_cast<unsigned long long>(out.byteSize)));
  return nullptr;
}

kiln_status_t Verifier::checkBufferRef(const fb::BufferRef *ref, const std::string &what,
                                       BufferRefDesc &out) {
  out = BufferRefDesc();
  out.offset = ref->offset();
  out.size = ref->size();
  out.index = ref->index();
  uint64_t limit = 0;
  std::string segmentName;
  switch (ref->segment()) {
  case fb::Segment::Arena:
    out.segment = Segment::Arena;
    limit = artifact.arenaBytes;
    segmentName = "arena";
    break;
  case fb::Segment::Weights:
    out.segment = Segment::Weights;
    limit = artifact.weights.size;
    segmentName = "weights";
    break;
  case fb::Segment::Input:
    out.segment = Segment::Input;
    if (out.index >= artifact.inputs.size())
      return fail(formatString("%s refers to input %u but the model has %zu inputs", what.c_str(),
                               out.index, artifact.inputs.size()));
    limit = artifact.inputs[out.index].byteSize;
    segmentName = "input '" + artifact.inputs[out.index].name + "'";
    break;
  default:
    return fail(formatString("%s has unknown segment %u", what.c_str(),
                             static_cast<unsigned>(ref->segment())));
  }
  uint64_t end = 0;
  if (!addOverflowFree(out.offset, out.size, end) || end > limit)
    return fail(formatString("%s [offset %llu, size %llu] is outside the %s (%llu bytes)",
                             what.c_str(), static_cast<unsigned long long>(out.offset),
                             static_cast<unsigned long long>(out.size), segmentName.c_str(),
                             static_cast<unsigned long long>(limit)));
  return nullptr;
}

kiln_status_t Verifier::checkDims(const flatbuffers::Vector<uint32_t> *dims, const char *kind,
                                  const std::string &what, uint32_t out[3]) {
  if (!dims || dims->size() != 3)
    return fail(formatString("%s: %s has %u entries, expected 3", what.c_str(), kind,
                             dims ? dims->size() : 0u));
  const uint32_t *limits = std::strcmp(kind, "grid") == 0 ? kMaxGridDim : kMaxBlockDim;
  for (unsigned i = 0; i < 3; ++i) {
    out[i] = dims->Get(i);
    if (out[i] == 0 || out[i] > limits[i])
      return fail(formatString("%s: %s[%u] = %u is outside [1, %u]", what.c_str(), kind, i, out[i],
                               limits[i]));
  }
  return nullptr;
}

kiln_status_t Verifier::checkLaunch(const fb::Launch *launch, size_t number, LaunchDesc &out) {
  out.function = launch->function()->str();
  std::string what = formatString("launch %zu ('%s')", number, out.function.c_str());
  if (out.function.empty())
    return fail(formatString("launch %zu has an empty function name", number));
  out.module = launch->module_();
  if (out.module >= artifact.modules.size())
    return fail(formatString("%s: module index %u is out of range (%zu modules)", what.c_str(),
                             out.module, artifact.modules.size()));
  KILN_RETURN_IF_ERROR(checkDims(launch->grid(), "grid", what, out.grid));
  KILN_RETURN_IF_ERROR(checkDims(launch->block(), "block", what, out.block));
  uint64_t threads = uint64_t(out.block[0]) * out.block[1] * out.block[2];
  if (threads > kMaxThreadsPerBlock)
    return fail(formatString("%s: block %ux%ux%u has %llu threads, more than %u", what.c_str(),
                             out.block[0], out.block[1], out.block[2],
                             static_cast<unsigned long long>(threads), kMaxThreadsPerBlock));
  out.sharedMemBytes = launch->shared_mem_bytes();
  if (const auto *args = launch->args()) {
    if (args->size() > kMaxLaunchArgs)
      return fail(formatString("%s has %u arguments, more than %zu", what.c_str(), args->size(),
                               kMaxLaunchArgs));
    out.args.resize(args->size());
    for (flatbuffers::uoffset_t i = 0; i < args->size(); ++i)
      KILN_RETURN_IF_ERROR(checkBufferRef(
          args->Get(i), formatString("%s argument %u", what.c_str(), i), out.args[i]));
  }
  if (const auto *maps = launch->tensor_maps(); maps && maps->size() > 0) {
    if (formatVersion < kiln::artifact::kFormatVersionTensorMaps)
      return fail(formatString("format version %u has tensor maps in %s, which need format "
                               "version %u (a writer that emits tensor maps must mark the file "
                               "version %u, or an older runtime would launch the kernel without "
                               "them)",
                               formatVersion, what.c_str(),
                               kiln::artifact::kFormatVersionTensorMaps,
                               kiln::artifact::kFormatVersionTensorMaps));
    uint64_t paramBytes = kiln::artifact::kernelParamBytes(out.args.size(), maps->size());
    if (paramBytes > kiln::artifact::kMaxKernelParamBytes)
      return fail(formatString(
          "%s passes %llu bytes of kernel parameters (%zu pointers, then %u "
          "tensor maps of %llu bytes at 64-byte alignment), more than %llu",
          what.c_str(), static_cast<unsigned long long>(paramBytes), out.args.size(), maps->size(),
          static_cast<unsigned long long>(kiln::artifact::kTensorMapBytes),
          static_cast<unsigned long long>(kiln::artifact::kMaxKernelParamBytes)));
    out.tensorMaps.resize(maps->size());
    for (flatbuffers::uoffset_t m = 0; m < maps->size(); ++m)
      KILN_RETURN_IF_ERROR(checkTensorMap(
          maps->Get(m), out, formatString("%s tensor map %u", what.c_str(), m), out.tensorMaps[m]));
  }
  // The optional description (the FlatBuffers verifier has checked the strings).
  if (launch->name())
    out.name = launch->name()->str();
  if (launch->layer())
    out.layer = launch->layer()->str();
  if (const auto *ops = launch->ops())
    for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i)
      out.ops.push_back(ops->Get(i)->str());
  if (const auto *nodes = launch->nodes())
    for (flatbuffers::uoffset_t i = 0; i < nodes->size(); ++i)
      out.nodes.push_back(nodes->Get(i)->str());
  out.nodeCount = launch->node_count();
  if (out.nodeCount < out.nodes.size())
    return fail(formatString("%s: node_count %u is smaller than its %zu node names", what.c_str(),
                             out.nodeCount, out.nodes.size()));
  out.flops = launch->flops();
  out.bytesRead = launch->bytes_read();
  out.bytesWritten = launch->bytes_written();
  out.programmaticLaunch = launch->programmatic_launch();
  return nullptr;
}

kiln_status_t Verifier::checkTensorMap(const fb::TensorMap *map, const LaunchDesc &launch,
                                       const std::string &what, TensorMapDesc &out) {
  // 1. The buffer, the element type and the rank.
  out.arg = map->arg();
  if (out.arg >= launch.args.size())
    return fail(formatString("%s: arg %u is out of range (the launch has %zu arguments)",
                             what.c_str(), out.arg, launch.args.size()));
  unsigned dtype = static_cast<unsigned>(map->dtype());
  if (!isValidDType(dtype))
    return fail(formatString("%s has unknown dtype %u", what.c_str(), dtype));
  out.dtype = static_cast<kiln_dtype_t>(dtype);
  const DTypeInfo *info = lookupDType(out.dtype);
  const uint64_t elementBytes = info->byteSize;
  size_t rank = map->dims() ? map->dims()->size() : 0;
  if (rank < 1 || rank > kMaxTensorMapRank)
    return fail(formatString("%s has %zu dims; tensor maps have rank 1 to %zu", what.c_str(), rank,
                             kMaxTensorMapRank));
  size_t strideCount = map->strides() ? map->strides()->size() : 0;
  if (strideCount != rank - 1)
    return fail(formatString("%s has %zu strides for rank %zu; expected %zu (the byte strides of "
                             "dims 1 to rank - 1)",
                             what.c_str(), strideCount, rank, rank - 1));
  size_t boxCount = map->box() ? map->box()->size() : 0;
  if (boxCount != rank)
    return fail(formatString("%s has %zu box entries for rank %zu; expected %zu", what.c_str(),
                             boxCount, rank, rank));
  // 2. Dims, strides (bytes of dims 1..rank-1; dim 0's is the element size) and box.
  for (flatbuffers::uoffset_t i = 0; i < rank; ++i) {
    uint64_t dim = loadScalar(map->dims(), i);
    if (dim == 0 || dim > kMaxTensorMapDim)
      return fail(formatString("%s: dims[%u] = %llu is outside [1, 2^32]", what.c_str(), i,
                               static_cast<unsigned long long>(dim)));
    out.dims.push_back(dim);
  }
  for (flatbuffers::uoffset_t i = 0; i + 1 < rank; ++i) {
    uint64_t stride = loadScalar(map->strides(), i);
    if (stride % kTensorMapAlignment != 0)
      return fail(formatString("%s: strides[%u] = %llu bytes is not a multiple of 16", what.c_str(),
                               i, static_cast<unsigned long long>(stride)));
    if (stride >= kTensorMapStrideLimit)
      return fail(formatString("%s: strides[%u] = %llu bytes is not below 2^40", what.c_str(), i,
                               static_cast<unsigned long long>(stride)));
    out.strides.push_back(stride);
  }
  for (flatbuffers::uoffset_t i = 0; i < rank; ++i) {
    uint32_t box = map->box()->Get(i);
    if (box == 0 || box > kMaxTensorMapBox)
      return fail(formatString("%s: box[%u] = %u is outside [1, %u]", what.c_str(), i, box,
                               kMaxTensorMapBox));
    // A box may be larger than its dim (a 128-row tile of a 1-row matrix): the TMA unit reads
    // only inside dims and fills the rest of the box with zeros (checked on an H200).
    out.box.push_back(box);
  }
  uint64_t rowBytes = out.box[0] * elementBytes;
  if (rowBytes % kTensorMapAlignment != 0)
    return fail(formatString("%s: box[0] = %u %s elements is %llu bytes, not a multiple of 16 "
                             "(TMA copies the innermost box dimension in 16-byte units)",
                             what.c_str(), out.box[0], info->name,
                             static_cast<unsigned long long>(rowBytes)));
  // 3. Swizzle.
  unsigned swizzle = static_cast<unsigned>(map->swizzle());
  if (swizzle > static_cast<unsigned>(fb::TensorMapSwizzle::MAX))
    return fail(formatString("%s has unknown swizzle %u (this runtime knows 0 = none, 1 = 32B, "
                             "2 = 64B, 3 = 128B)",
                             what.c_str(), swizzle));
  out.swizzle = static_cast<TensorMapSwizzle>(swizzle);
  uint32_t span = tensorMapSwizzleBytes(out.swizzle);
  if (span != 0 && rowBytes > span)
    return fail(formatString("%s: box[0] = %u %s elements is %llu bytes, more than the %u-byte "
                             "span of swizzle %s",
                             what.c_str(), out.box[0], info->name,
                             static_cast<unsigned long long>(rowBytes), span,
                             tensorMapSwizzleName(out.swizzle)));
  // 4. The global address: 16-byte aligned (segment bases are 256-byte aligned).
  out.offset = map->offset();
  if (out.offset % kTensorMapAlignment != 0)
    return fail(formatString("%s: offset %llu is not a multiple of 16 (TMA needs a 16-byte "
                             "aligned global address)",
                             what.c_str(), static_cast<unsigned long long>(out.offset)));
  const BufferRefDesc &buffer = launch.args[out.arg];
  if (buffer.offset % kTensorMapAlignment != 0)
    return fail(formatString("%s: argument %u starts at byte %llu of its segment, not a multiple "
                             "of 16 (TMA needs a 16-byte aligned global address)",
                             what.c_str(), out.arg,
                             static_cast<unsigned long long>(buffer.offset)));
  // 5. Every addressable byte inside the argument's buffer: the map reaches
  //    offset + dims[0] * elementBytes + sum over i >= 1 of (dims[i] - 1) * strides[i - 1].
  uint64_t end = 0;
  bool overflow = __builtin_mul_overflow(out.dims[0], elementBytes, &end) ||
                  !addOverflowFree(end, out.offset, end);
  for (size_t i = 1; i < rank && !overflow; ++i) {
    uint64_t extent = 0;
    overflow = __builtin_mul_overflow(out.dims[i] - 1, out.strides[i - 1], &extent) ||
               !addOverflowFree(end, extent, end);
  }
  if (overflow)
    return fail(formatString("%s: the bytes it addresses (offset %llu, dims %s of %s, strides %s) "
                             "overflow 64 bits",
                             what.c_str(), static_cast<unsigned long long>(out.offset),
                             joinDims(out.dims).c_str(), info->name,
                             joinDims(out.strides).c_str()));
  if (end > buffer.size)
    return fail(formatString(
        "%s addresses bytes [%llu, %llu) of argument %u, which is %llu "
        "bytes (offset %llu, dims %s of %s, strides %s)",
        what.c_str(), static_cast<unsigned long long>(out.offset),
        static_cast<unsigned long long>(end), out.arg, static_cast<unsigned long long>(buffer.size),
        static_cast<unsigned long long>(out.offset), joinDims(out.dims).c_str(), info->name,
        out.strides.empty() ? "none" : joinDims(out.strides).c_str()));
  return nullptr;
}

kiln_status_t Verifier::run() {
  // 1-2. Header, checksum and index.
  KILN_RETURN_IF_ERROR(checkHeader());
  KILN_RETURN_IF_ERROR(checkChecksum());
  const uint8_t *index = data + indexBegin;
  size_t indexSize = static_cast<size_t>(indexEnd - indexBegin);
  if (!flatbuffers::BufferHasIdentifier(index, fb::ModelIdentifier()))
    return fail("index does not carry the FlatBuffers file identifier \"KILN\" (corrupt index)");
  flatbuffers::Verifier fbVerifier(index, indexSize);
  if (!fb::VerifyModelBuffer(fbVerifier))
    return fail("the index failed FlatBuffers verification (corrupt index)");
  const fb::Model *model = fb::GetModel(index);
  if (model->format_version() != formatVersion)
    return fail(formatString("index format_version %u does not match the header's %u",
                             model->format_version(), formatVersion));
  artifact.formatVersion = model->format_version();
  if (model->producer())
    artifact.producer = model->producer()->str();
  artifact.arenaBytes = model->arena_bytes();
  artifact.estimatedUs = std::isfinite(model->estimated_us()) && model->estimated_us() > 0
                             ? model->estimated_us()
                             : 0;

  // 3. Weights and module blobs.
  KILN_RETURN_IF_ERROR(checkBlob(model->weights(), "weights blob", artifact.weights));
  if (const auto *modules = model->modules()) {
    artifact.modules.resize(modules->size());
    for (flatbuffers::uoffset_t i = 0; i < modules->size(); ++i) {
      const fb::Module *module = modules->Get(i);
      ModuleDesc &desc = artifact.modules[i];
      desc.name = module->name()->str();
      std::string what = formatString("module %u ('%s')", i, desc.name.c_str());
      KILN_RETURN_IF_ERROR(checkBlob(module->ptx(), what + " PTX", desc.ptx));
      if (const auto *cubins = module->cubins()) {
        desc.cubins.resize(cubins->size());
        for (flatbuffers::uoffset_t j = 0; j < cubins->size(); ++j) {
          const fb::Cubin *cubin = cubins->Get(j);
          desc.cubins[j].arch = cubin->arch();
          std::string cubinWhat = formatString("%s cubin for sm_%u", what.c_str(), cubin->arch());
          KILN_RETURN_IF_ERROR(checkBlob(cubin->image(), cubinWhat, desc.cubins[j].image));
          if (desc.cubins[j].image.size == 0)
            return fail(cubinWhat + " is empty");
        }
      }
      if (desc.ptx.size == 0 && desc.cubins.empty())
        return fail(what + " has neither PTX nor a cubin");
    }
  }

  // 4-5. Inputs, outputs and launches.
  KILN_RETURN_IF_ERROR(checkProgramTables(model->inputs(), model->outputs(), model->launches()));

  // 6. Tensor parallelism.
  KILN_RETURN_IF_ERROR(checkTensorParallel(model));

  // 7. Programs 1..n-1: each verified as the Model's own tables are, against its own inputs and
  // arena and the shared modules and weights.
  return checkPrograms(model);
}

kiln_status_t Verifier::checkProgramTables(
    const flatbuffers::Vector<flatbuffers::Offset<fb::TensorDesc>> *inputs,
    const flatbuffers::Vector<flatbuffers::Offset<fb::TensorDesc>> *outputs,
    const flatbuffers::Vector<flatbuffers::Offset<fb::Launch>> *launches) {
  // 4. Inputs, then outputs (their locations may refer to inputs).
  std::set<std::string> names;
  if (inputs) {
    artifact.inputs.resize(inputs->size());
    for (flatbuffers::uoffset_t i = 0; i < inputs->size(); ++i) {
      KILN_RETURN_IF_ERROR(checkTensor(inputs->Get(i), formatString("input %u", i),
                                       /*isOutput=*/false, artifact.inputs[i]));
      if (!names.insert(artifact.inputs[i].name).second)
        return fail("duplicate input name '" + artifact.inputs[i].name + "'");
    }
  }
  names.clear();
  if (outputs) {
    artifact.outputs.resize(outputs->size());
    for (flatbuffers::uoffset_t i = 0; i < outputs->size(); ++i) {
      KILN_RETURN_IF_ERROR(checkTensor(outputs->Get(i), formatString("output %u", i),
                                       /*isOutput=*/true, artifact.outputs[i]));
      if (!names.insert(artifact.outputs[i].name).second)
        return fail("duplicate output name '" + artifact.outputs[i].name + "'");
    }
  }

  // 5. Launches.
  if (launches) {
    artifact.launches.resize(launches->size());
    for (flatbuffers::uoffset_t i = 0; i < launches->size(); ++i)
      KILN_RETURN_IF_ERROR(checkLaunch(launches->Get(i), i, artifact.launches[i]));
  }
  return nullptr;
}

kiln_status_t Verifier::checkPrograms(const fb::Model *model) {
  const auto *programs = model->programs();
  if (!programs || programs->size() == 0) {
    if (model->program_name())
      return fail("program_name is set but the artifact has no further programs");
    return nullptr;
  }
  if (artifact.tpWorldSize > 1 || !artifact.collectives.empty())
    return fail("a tensor-parallel artifact has programs; it may have one program only");
  if (!model->program_name() || model->program_name()->size() == 0)
    return fail("the artifact has programs but program 0 has no program_name");
  artifact.programName = model->program_name()->str();
  std::set<std::string> programNames = {artifact.programName};
  artifact.programs.resize(programs->size());
  for (flatbuffers::uoffset_t p = 0; p < programs->size(); ++p) {
    const fb::Program *program = programs->Get(p);
    auto view = std::make_unique<kiln_artifact>();
    view->owner = &artifact;
    view->path = artifact.path;
    view->data = artifact.data ? artifact.data : data;
    view->size = artifact.data ? artifact.size : size;
    view->formatVersion = artifact.formatVersion;
    view->producer = artifact.producer;
    view->weights = artifact.weights;
    view->modules = artifact.modules;
    view->programName = program->name()->str();
    view->arenaBytes = program->arena_bytes();
    view->estimatedUs = std::isfinite(program->estimated_us()) && program->estimated_us() > 0
                            ? program->estimated_us()
                            : 0;
    if (view->programName.empty())
      return fail(formatString("program %u has an empty name", p + 1));
    if (!programNames.insert(view->programName).second)
      return fail(formatString("program %u repeats the name '%s'", p + 1,
                               view->programName.c_str()));
    // The checks below read and fill the program's own tables.
    Verifier inner(data, size, *view, /*fileMapping=*/false);
    inner.formatVersion = formatVersion;
    inner.indexBegin = indexBegin;
    inner.indexEnd = indexEnd;
    kiln_status_t status = inner.checkProgramTables(program->inputs(), program->outputs(),
                                                    program->launches());
    if (status) {
      std::string message = kiln_status_message(status);
      kiln_status_free(status);
      // "'<path>': invalid artifact: <what>" -> name the program in <what>.
      const std::string marker = "invalid artifact: ";
      size_t at = message.find(marker);
      std::string what = at == std::string::npos ? message : message.substr(at + marker.size());
      return fail(formatString("program %u ('%s'): %s", p + 1, view->programName.c_str(),
                               what.c_str()));
    }
    artifact.programs[p] = std::move(view);
  }
  return nullptr;
}

kiln_status_t Verifier::checkTensorParallel(const fb::Model *model) {
  const fb::TensorParallel *tp = model->tensor_parallel();
  const auto *collectives = model->collectives();
  size_t collectiveCount = collectives ? collectives->size() : 0;
  if (formatVersion < kiln::artifact::kFormatVersionCollectives && (tp || collectiveCount > 0))
    return fail(formatString(
        "format version %u has %s, which need format version %u (a writer that emits "
        "collectives must mark the file version %u, or an older runtime would run the rank "
        "without its all-reduces)",
        formatVersion,
        tp && collectiveCount ? "a tensor_parallel table and collectives"
        : tp                  ? "a tensor_parallel table"
                              : "collectives",
        kiln::artifact::kFormatVersionCollectives, kiln::artifact::kFormatVersionCollectives));
  if (tp) {
    if (tp->world_size() < 2)
      return fail(formatString("tensor_parallel.world_size is %u; a tensor-parallel rank file "
                               "needs at least 2 (single-GPU artifacts carry no tensor_parallel "
                               "table)",
                               tp->world_size()));
    if (tp->world_size() > static_cast<uint32_t>(INT32_MAX))
      return fail(formatString("tensor_parallel.world_size %u exceeds %d, NCCL's rank count "
                               "limit",
                               tp->world_size(), INT32_MAX));
    if (tp->rank() >= tp->world_size())
      return fail(formatString("tensor_parallel.rank %u is out of range for world size %u",
                               tp->rank(), tp->world_size()));
    artifact.tpWorldSize = tp->world_size();
    artifact.tpRank = tp->rank();
    artifact.tpGroupHash = tp->group_hash();
  }
  if (collectiveCount == 0)
    return nullptr;
  if (!tp)
    return fail(formatString("has %zu collective%s but no tensor_parallel table (world size and "
                             "rank unknown)",
                             collectiveCount, collectiveCount == 1 ? "" : "s"));
  artifact.collectives.resize(collectiveCount);
  for (size_t i = 0; i < collectiveCount; ++i)
    KILN_RETURN_IF_ERROR(checkCollective(collectives->Get(static_cast<flatbuffers::uoffset_t>(i)),
                                         i, i ? &artifact.collectives[i - 1] : nullptr,
                                         artifact.collectives[i]));
  return nullptr;
}

kiln_status_t Verifier::checkCollectiveRef(const fb::BufferRef *ref, const std::string &what,
                                           uint64_t bytes, const std::string &expected,
                                           BufferRefDesc &out) {
  if (!ref)
    return fail(what + " is missing");
  if (ref->segment() != fb::Segment::Arena)
    return fail(formatString("%s is in segment %s; collectives read and write the arena only",
                             what.c_str(),
                             ref->segment() == fb::Segment::Weights ? "Weights"
                             : ref->segment() == fb::Segment::Input ? "Input"
                                                                    : "(unknown)"));
  if (ref->size() != bytes)
    return fail(formatString("%s covers %llu bytes but %s is %llu bytes", what.c_str(),
                             static_cast<unsigned long long>(ref->size()), expected.c_str(),
                             static_cast<unsigned long long>(bytes)));
  return checkBufferRef(ref, what, out);
}

kiln_status_t Verifier::checkCollective(const fb::Collective *collective, size_t number,
                                        const CollectiveDesc *previous, CollectiveDesc &out) {
  std::string what = formatString("collective %zu", number);
  unsigned kind = static_cast<unsigned>(collective->kind());
  if (kind > static_cast<unsigned>(fb::CollectiveKind::MAX))
    return fail(formatString("%s has unknown kind %u (this runtime knows 0 = all_reduce_sum)",
                             what.c_str(), kind));
  out.kind = static_cast<CollectiveKind>(kind);
  what += formatString(" (%s)", collectiveKindName(out.kind));
  unsigned dtype = static_cast<unsigned>(collective->dtype());
  if (!isValidDType(dtype))
    return fail(formatString("%s has unknown dtype %u", what.c_str(), dtype));
  out.dtype = static_cast<kiln_dtype_t>(dtype);
  const DTypeInfo *info = lookupDType(out.dtype);
  if (!info->isFloat)
    return fail(formatString("%s has dtype %s; collectives carry f32, f16 or bf16 only",
                             what.c_str(), info->name));
  out.count = collective->count();
  if (out.count == 0)
    return fail(what + " has count 0");
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(out.count, static_cast<uint64_t>(info->byteSize), &bytes))
    return fail(formatString("%s: count %llu x %s overflows 64 bits", what.c_str(),
                             static_cast<unsigned long long>(out.count), info->name));
  std::string expected =
      formatString("count %llu x %s", static_cast<unsigned long long>(out.count), info->name);
  KILN_RETURN_IF_ERROR(
      checkCollectiveRef(collective->input(), what + " input", bytes, expected, out.input));
  KILN_RETURN_IF_ERROR(
      checkCollectiveRef(collective->output(), what + " output", bytes, expected, out.output));
  // checkBufferRef guarantees offset + size does not overflow.
  bool same = out.input.offset == out.output.offset;
  bool disjoint = out.input.offset + bytes <= out.output.offset ||
                  out.output.offset + bytes <= out.input.offset;
  if (!same && !disjoint)
    return fail(formatString("%s: input [offset %llu, size %llu] and output [offset %llu, size "
                             "%llu] overlap without being equal (an all-reduce is either in place "
                             "or between disjoint ranges)",
                             what.c_str(), static_cast<unsigned long long>(out.input.offset),
                             static_cast<unsigned long long>(bytes),
                             static_cast<unsigned long long>(out.output.offset),
                             static_cast<unsigned long long>(bytes)));
  out.beforeLaunch = collective->before_launch();
  if (out.beforeLaunch > artifact.launches.size())
    return fail(formatString("%s: before_launch %u is past the end of the schedule (%zu "
                             "launches; %zu means after the last launch)",
                             what.c_str(), out.beforeLaunch, artifact.launches.size(),
                             artifact.launches.size()));
  if (previous && out.beforeLaunch < previous->beforeLaunch)
    return fail(formatString("%s: before_launch %u is smaller than collective %zu's %u "
                             "(collectives must be sorted by before_launch)",
                             what.c_str(), out.beforeLaunch, number - 1, previous->beforeLaunch));
  return nullptr;
}

/// Fills the C info struct for a tensor.
void fillTensorInfo(const TensorDesc &tensor, kiln_tensor_info_t *info) {
  info->name = tensor.name.c_str();
  info->dtype = tensor.dtype;
  info->rank = tensor.shape.size();
  info->shape = tensor.shape.empty() ? nullptr : tensor.shape.data();
  info->byte_size = tensor.byteSize;
}

/// Shared implementation of kiln_artifact_find_input/output.
kiln_status_t findTensor(const std::vector<TensorDesc> &tensors, const char *kind,
                         const kiln_artifact_t *artifact, const char *name, size_t *out_index) {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) {
      *out_index = i;
      return nullptr;
    }
  std::string known;
  for (const TensorDesc &tensor : tensors)
    known += (known.empty() ? "'" : ", '") + tensor.name + "'";
  return makeStatusF(KILN_NOT_FOUND, "'%s' has no %s named '%s' (%ss: %s)", artifact->path.c_str(),
                     kind, name, kind, known.empty() ? "none" : known.c_str());
}

} // namespace

const char *tensorMapSwizzleName(TensorMapSwizzle swizzle) {
  switch (swizzle) {
  case TensorMapSwizzle::None:
    return "none";
  case TensorMapSwizzle::B32:
    return "32B";
  case TensorMapSwizzle::B64:
    return "64B";
  case TensorMapSwizzle::B128:
    return "128B";
  }
  return "unknown";
}

uint32_t tensorMapSwizzleBytes(TensorMapSwizzle swizzle) {
  switch (swizzle) {
  case TensorMapSwizzle::None:
    return 0;
  case TensorMapSwizzle::B32:
    return 32;
  case TensorMapSwizzle::B64:
    return 64;
  case TensorMapSwizzle::B128:
    return 128;
  }
  return 0;
}

const char *collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduceSum:
    return "all_reduce_sum";
  }
  return "unknown";
}

kiln_status_t verifyArtifact(const uint8_t *data, uint64_t size, kiln_artifact &artifact,
                             bool fileMapping) {
  return Verifier(data, size, artifact, fileMapping).run();
}

} // namespace kiln

namespace kiln {
namespace {
/// The launch `index` of `artifact`, or nullptr when either is out of range.
const LaunchDesc *findLaunch(const kiln_artifact_t *artifact, size_t index) {
  if (!artifact || index >= artifact->launches.size())
    return nullptr;
  return &artifact->launches[index];
}
} // namespace
} // namespace kiln

extern "C" {

kiln_status_t kiln_artifact_open(const char *path, kiln_artifact_t **out_artifact) {
  if (out_artifact)
    *out_artifact = nullptr;
  if (!path || !out_artifact)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_open: path and out_artifact must be non-NULL");
  kiln_artifact *artifact = new (std::nothrow) kiln_artifact();
  if (!artifact)
    return kiln::makeStatus(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  artifact->path = path;

  // O_NONBLOCK: opening a FIFO (or a device that waits) for reading would
  // block until a writer appears; it has no effect on a regular file's reads
  // or on mmap, and anything else is rejected by the S_ISREG check below.
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int error = errno;
    delete artifact;
    return kiln::makeStatusF(KILN_IO_ERROR, "cannot open artifact '%s': %s", path,
                             std::strerror(error));
  }
  struct stat info;
  bool statOk = ::fstat(fd, &info) == 0;
  if (!statOk || !S_ISREG(info.st_mode)) {
    int error = errno;
    ::close(fd);
    delete artifact;
    return kiln::makeStatusF(KILN_IO_ERROR, "cannot open artifact '%s': %s", path,
                             statOk ? "not a regular file" : std::strerror(error));
  }
  uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size > 0) {
    void *mapping = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      delete artifact;
      return kiln::makeStatusF(KILN_IO_ERROR, "cannot map artifact '%s': %s", path,
                               std::strerror(error));
    }
    artifact->data = static_cast<const uint8_t *>(mapping);
    artifact->size = size;
  }
  ::close(fd);

  static const uint8_t kEmpty[8] = {};
  kiln_status_t status =
      artifact->data ? kiln::verifyArtifact(artifact->data, size, *artifact, /*fileMapping=*/true)
                     : kiln::verifyArtifact(kEmpty, size, *artifact);
  if (status) {
    delete artifact;
    return status;
  }
  *out_artifact = artifact;
  return nullptr;
}

void kiln_artifact_retain(kiln_artifact_t *artifact) {
  if (artifact && artifact->owner)
    artifact = artifact->owner;
  if (artifact)
    artifact->refCount.fetch_add(1, std::memory_order_relaxed);
}

void kiln_artifact_release(kiln_artifact_t *artifact) {
  if (artifact && artifact->owner)
    artifact = artifact->owner;
  if (artifact && artifact->refCount.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete artifact;
}

size_t kiln_artifact_program_count(const kiln_artifact_t *artifact) {
  if (!artifact)
    return 0;
  const kiln_artifact_t *owner = artifact->owner ? artifact->owner : artifact;
  return 1 + owner->programs.size();
}

const char *kiln_artifact_program_name(const kiln_artifact_t *artifact) {
  return artifact ? artifact->programName.c_str() : "";
}

double kiln_artifact_program_estimated_us(const kiln_artifact_t *artifact) {
  return artifact ? artifact->estimatedUs : 0;
}

kiln_status_t kiln_artifact_program(kiln_artifact_t *artifact, size_t index,
                                    kiln_artifact_t **out_program) {
  if (out_program)
    *out_program = nullptr;
  if (!artifact || !out_program)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_program: artifact and out_program must be non-NULL");
  kiln_artifact_t *owner = artifact->owner ? artifact->owner : artifact;
  if (index > owner->programs.size())
    return kiln::makeStatusF(KILN_NOT_FOUND,
                             "'%s': program index %zu is out of range (%zu program%s)",
                             owner->path.c_str(), index, owner->programs.size() + 1,
                             owner->programs.empty() ? "" : "s");
  kiln_artifact_t *program = index == 0 ? owner : owner->programs[index - 1].get();
  kiln_artifact_retain(program);
  *out_program = program;
  return nullptr;
}

kiln_status_t kiln_artifact_find_program(kiln_artifact_t *artifact, const char *name,
                                         kiln_artifact_t **out_program) {
  if (out_program)
    *out_program = nullptr;
  if (!artifact || !name || !out_program)
    return kiln::makeStatus(
        KILN_INVALID_ARGUMENT,
        "kiln_artifact_find_program: artifact, name and out_program must be non-NULL");
  kiln_artifact_t *owner = artifact->owner ? artifact->owner : artifact;
  std::string names;
  for (size_t i = 0; i <= owner->programs.size(); ++i) {
    kiln_artifact_t *program = i == 0 ? owner : owner->programs[i - 1].get();
    if (program->programName == name) {
      kiln_artifact_retain(program);
      *out_program = program;
      return nullptr;
    }
    names += (i ? ", '" : "'") + program->programName + "'";
  }
  if (owner->programs.empty())
    return kiln::makeStatusF(KILN_NOT_FOUND,
                             "'%s' has one unnamed program (compiled for one shape); there is "
                             "no program '%s'",
                             owner->path.c_str(), name);
  return kiln::makeStatusF(KILN_NOT_FOUND, "'%s' has no program '%s'; its programs: %s",
                           owner->path.c_str(), name, names.c_str());
}

const char *kiln_artifact_path(const kiln_artifact_t *artifact) {
  return artifact ? artifact->path.c_str() : "";
}

const char *kiln_artifact_producer(const kiln_artifact_t *artifact) {
  return artifact ? artifact->producer.c_str() : "";
}

size_t kiln_artifact_input_count(const kiln_artifact_t *artifact) {
  return artifact ? artifact->inputs.size() : 0;
}

size_t kiln_artifact_output_count(const kiln_artifact_t *artifact) {
  return artifact ? artifact->outputs.size() : 0;
}

kiln_status_t kiln_artifact_input_info(const kiln_artifact_t *artifact, size_t index,
                                       kiln_tensor_info_t *out_info) {
  if (out_info)
    *out_info = kiln_tensor_info_t();
  if (!artifact || !out_info)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_input_info: artifact and out_info must be non-NULL");
  if (index >= artifact->inputs.size())
    return kiln::makeStatusF(KILN_NOT_FOUND, "input index %zu is out of range (%zu inputs)", index,
                             artifact->inputs.size());
  kiln::fillTensorInfo(artifact->inputs[index], out_info);
  return nullptr;
}

kiln_status_t kiln_artifact_output_info(const kiln_artifact_t *artifact, size_t index,
                                        kiln_tensor_info_t *out_info) {
  if (out_info)
    *out_info = kiln_tensor_info_t();
  if (!artifact || !out_info)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_output_info: artifact and out_info must be non-NULL");
  if (index >= artifact->outputs.size())
    return kiln::makeStatusF(KILN_NOT_FOUND, "output index %zu is out of range (%zu outputs)",
                             index, artifact->outputs.size());
  kiln::fillTensorInfo(artifact->outputs[index], out_info);
  return nullptr;
}

kiln_status_t kiln_artifact_find_input(const kiln_artifact_t *artifact, const char *name,
                                       size_t *out_index) {
  if (out_index)
    *out_index = 0;
  if (!artifact || !name || !out_index)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_find_input: arguments must be non-NULL");
  return kiln::findTensor(artifact->inputs, "input", artifact, name, out_index);
}

kiln_status_t kiln_artifact_find_output(const kiln_artifact_t *artifact, const char *name,
                                        size_t *out_index) {
  if (out_index)
    *out_index = 0;
  if (!artifact || !name || !out_index)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_find_output: arguments must be non-NULL");
  return kiln::findTensor(artifact->outputs, "output", artifact, name, out_index);
}

uint64_t kiln_artifact_arena_bytes(const kiln_artifact_t *artifact) {
  return artifact ? artifact->arenaBytes : 0;
}

uint64_t kiln_artifact_weights_bytes(const kiln_artifact_t *artifact) {
  return artifact ? artifact->weights.size : 0;
}

size_t kiln_artifact_module_count(const kiln_artifact_t *artifact) {
  return artifact ? artifact->modules.size() : 0;
}

kiln_status_t kiln_artifact_module_info(const kiln_artifact_t *artifact, size_t index,
                                        kiln_module_info_t *out_info) {
  if (out_info)
    *out_info = kiln_module_info_t();
  if (!artifact || !out_info)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_module_info: artifact and out_info must be non-NULL");
  if (index >= artifact->modules.size())
    return kiln::makeStatusF(KILN_NOT_FOUND, "module index %zu is out of range (%zu modules)",
                             index, artifact->modules.size());
  const kiln::ModuleDesc &module = artifact->modules[index];
  out_info->name = module.name.c_str();
  out_info->ptx_bytes = module.ptx.size;
  out_info->cubin_count = module.cubins.size();
  return nullptr;
}

kiln_status_t kiln_artifact_module_cubin(const kiln_artifact_t *artifact, size_t module_index,
                                         size_t cubin_index, uint32_t *out_arch,
                                         uint64_t *out_bytes) {
  if (out_arch)
    *out_arch = 0;
  if (out_bytes)
    *out_bytes = 0;
  if (!artifact || !out_arch || !out_bytes)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_artifact_module_cubin: artifact, "
                                                   "out_arch and out_bytes must be non-NULL");
  if (module_index >= artifact->modules.size())
    return kiln::makeStatusF(KILN_NOT_FOUND, "module index %zu is out of range (%zu modules)",
                             module_index, artifact->modules.size());
  const kiln::ModuleDesc &module = artifact->modules[module_index];
  if (cubin_index >= module.cubins.size())
    return kiln::makeStatusF(KILN_NOT_FOUND,
                             "cubin index %zu is out of range (module '%s' has %zu)", cubin_index,
                             module.name.c_str(), module.cubins.size());
  *out_arch = module.cubins[cubin_index].arch;
  *out_bytes = module.cubins[cubin_index].image.size;
  return nullptr;
}

uint32_t kiln_artifact_tp_world_size(const kiln_artifact_t *artifact) {
  return artifact ? artifact->tpWorldSize : 1;
}

uint32_t kiln_artifact_tp_rank(const kiln_artifact_t *artifact) {
  return artifact ? artifact->tpRank : 0;
}

uint64_t kiln_artifact_tp_group_hash(const kiln_artifact_t *artifact) {
  return artifact ? artifact->tpGroupHash : 0;
}

size_t kiln_artifact_collective_count(const kiln_artifact_t *artifact) {
  return artifact ? artifact->collectives.size() : 0;
}

kiln_status_t kiln_artifact_collective_info(const kiln_artifact_t *artifact, size_t index,
                                            kiln_collective_info_t *out_info) {
  if (out_info)
    *out_info = kiln_collective_info_t();
  if (!artifact || !out_info)
    return kiln::makeStatus(
        KILN_INVALID_ARGUMENT,
        "kiln_artifact_collective_info: artifact and out_info must be non-NULL");
  if (index >= artifact->collectives.size())
    return kiln::makeStatusF(KILN_NOT_FOUND,
                             "collective index %zu is out of range (%zu collectives)", index,
                             artifact->collectives.size());
  const kiln::CollectiveDesc &collective = artifact->collectives[index];
  out_info->kind = kiln::collectiveKindName(collective.kind);
  out_info->dtype = collective.dtype;
  out_info->count = collective.count;
  out_info->before_launch = collective.beforeLaunch;
  return nullptr;
}

size_t kiln_artifact_launch_count(const kiln_artifact_t *artifact) {
  return artifact ? artifact->launches.size() : 0;
}

kiln_status_t kiln_artifact_launch_info(const kiln_artifact_t *artifact, size_t index,
                                        kiln_launch_info_t *out_info) {
  if (out_info)
    *out_info = kiln_launch_info_t();
  if (!artifact || !out_info)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_launch_info: artifact and out_info must be non-NULL");
  if (index >= artifact->launches.size())
    return kiln::makeStatusF(KILN_NOT_FOUND, "launch index %zu is out of range (%zu launches)",
                             index, artifact->launches.size());
  const kiln::LaunchDesc &launch = artifact->launches[index];
  out_info->module_name = artifact->modules[launch.module].name.c_str();
  out_info->function_name = launch.function.c_str();
  for (int i = 0; i < 3; ++i) {
    out_info->grid[i] = launch.grid[i];
    out_info->block[i] = launch.block[i];
  }
  out_info->shared_mem_bytes = launch.sharedMemBytes;
  out_info->arg_count = launch.args.size();
  return nullptr;
}

const char *kiln_artifact_launch_name(const kiln_artifact_t *artifact, size_t index) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch ? launch->name.c_str() : nullptr;
}

const char *kiln_artifact_launch_layer(const kiln_artifact_t *artifact, size_t index) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch ? launch->layer.c_str() : nullptr;
}

size_t kiln_artifact_launch_op_count(const kiln_artifact_t *artifact, size_t index) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch ? launch->ops.size() : 0;
}

const char *kiln_artifact_launch_op(const kiln_artifact_t *artifact, size_t index, size_t op) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch && op < launch->ops.size() ? launch->ops[op].c_str() : nullptr;
}

size_t kiln_artifact_launch_node_count(const kiln_artifact_t *artifact, size_t index) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch ? launch->nodes.size() : 0;
}

size_t kiln_artifact_launch_node_total(const kiln_artifact_t *artifact, size_t index) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch ? launch->nodeCount : 0;
}

const char *kiln_artifact_launch_node(const kiln_artifact_t *artifact, size_t index, size_t node) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch && node < launch->nodes.size() ? launch->nodes[node].c_str() : nullptr;
}

kiln_status_t kiln_artifact_launch_cost(const kiln_artifact_t *artifact, size_t index,
                                        kiln_launch_cost_t *out_cost) {
  if (out_cost)
    *out_cost = kiln_launch_cost_t();
  if (!artifact || !out_cost)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_launch_cost: artifact and out_cost must be non-NULL");
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  if (!launch)
    return kiln::makeStatusF(KILN_NOT_FOUND, "launch index %zu is out of range (%zu launches)",
                             index, artifact->launches.size());
  out_cost->flops = launch->flops;
  out_cost->bytes_read = launch->bytesRead;
  out_cost->bytes_written = launch->bytesWritten;
  return nullptr;
}

size_t kiln_artifact_launch_tensor_map_count(const kiln_artifact_t *artifact, size_t index) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch ? launch->tensorMaps.size() : 0;
}

int kiln_artifact_launch_programmatic(const kiln_artifact_t *artifact, size_t index) {
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  return launch && launch->programmaticLaunch ? 1 : 0;
}

kiln_status_t kiln_artifact_launch_tensor_map_info(const kiln_artifact_t *artifact, size_t index,
                                                   size_t map, kiln_tensor_map_info_t *out_info) {
  if (out_info)
    *out_info = kiln_tensor_map_info_t();
  if (!artifact || !out_info)
    return kiln::makeStatus(
        KILN_INVALID_ARGUMENT,
        "kiln_artifact_launch_tensor_map_info: artifact and out_info must be non-NULL");
  const kiln::LaunchDesc *launch = kiln::findLaunch(artifact, index);
  if (!launch)
    return kiln::makeStatusF(KILN_NOT_FOUND, "launch index %zu is out of range (%zu launches)",
                             index, artifact->launches.size());
  if (map >= launch->tensorMaps.size())
    return kiln::makeStatusF(KILN_NOT_FOUND,
                             "tensor map index %zu is out of range (launch %zu has %zu)", map,
                             index, launch->tensorMaps.size());
  const kiln::TensorMapDesc &desc = launch->tensorMaps[map];
  out_info->arg = desc.arg;
  out_info->offset_bytes = desc.offset;
  out_info->dtype = desc.dtype;
  out_info->rank = desc.dims.size();
  out_info->dims = desc.dims.data();
  out_info->strides = desc.strides.empty() ? nullptr : desc.strides.data();
  out_info->box = desc.box.data();
  out_info->swizzle = static_cast<kiln_tensor_map_swizzle_t>(desc.swizzle);
  return nullptr;
}

kiln_status_t kiln_artifact_check_input_values(const kiln_artifact_t *artifact, size_t index,
                                               const void *data, size_t byte_size) {
  if (!artifact || (!data && byte_size > 0))
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_artifact_check_input_values: artifact "
                                                   "and data (unless byte_size is 0) must be "
                                                   "non-NULL");
  if (index >= artifact->inputs.size())
    return kiln::makeStatusF(KILN_NOT_FOUND, "input index %zu is out of range (%zu inputs)", index,
                             artifact->inputs.size());
  const kiln::TensorDesc &input = artifact->inputs[index];
  if (byte_size != input.byteSize)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "kiln_artifact_check_input_values: input '%s' has %llu bytes, not %zu",
                             input.name.c_str(), static_cast<unsigned long long>(input.byteSize),
                             byte_size);
  kiln::InputValueRange range;
  range.known = input.hasValueRange;
  range.min = input.valueMin;
  range.max = input.valueMax;
  range.fromEnd = input.role == KILN_INPUT_ROLE_DATA;
  std::string error;
  if (kiln::checkInputValues(input.name, input.dtype, input.shape,
                             static_cast<const uint8_t *>(data), byte_size, range, error))
    return nullptr;
  return kiln::makeStatus(KILN_INVALID_ARGUMENT, error);
}

kiln_status_t kiln_artifact_input_value_range(const kiln_artifact_t *artifact, size_t index,
                                              int *out_has_range, int64_t *out_min,
                                              int64_t *out_max) {
  if (out_has_range)
    *out_has_range = 0;
  if (out_min)
    *out_min = 0;
  if (out_max)
    *out_max = 0;
  if (!artifact || !out_has_range || !out_min || !out_max)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_input_value_range: arguments must be non-NULL");
  if (index >= artifact->inputs.size())
    return kiln::makeStatusF(KILN_NOT_FOUND, "input index %zu is out of range (%zu inputs)", index,
                             artifact->inputs.size());
  const kiln::TensorDesc &input = artifact->inputs[index];
  if (input.hasValueRange) {
    *out_has_range = 1;
    *out_min = input.valueMin;
    *out_max = input.valueMax;
  }
  return nullptr;
}

const char *kiln_input_role_name(kiln_input_role_t role) {
  switch (role) {
  case KILN_INPUT_ROLE_DATA:
    return "data";
  case KILN_INPUT_ROLE_KEY_CACHE:
    return "key_cache";
  case KILN_INPUT_ROLE_VALUE_CACHE:
    return "value_cache";
  case KILN_INPUT_ROLE_BLOCK_TABLE:
    return "block_table";
  case KILN_INPUT_ROLE_SEQ_LENS:
    return "seq_lens";
  case KILN_INPUT_ROLE_POSITION_IDS:
    return "position_ids";
  case KILN_INPUT_ROLE_TEMPERATURE:
    return "temperature";
  case KILN_INPUT_ROLE_TOP_K:
    return "top_k";
  case KILN_INPUT_ROLE_TOP_P:
    return "top_p";
  case KILN_INPUT_ROLE_SEED:
    return "seed";
  case KILN_INPUT_ROLE_SAMPLE_OFFSET:
    return "sample_offset";
  }
  return nullptr;
}

kiln_status_t kiln_artifact_input_role(const kiln_artifact_t *artifact, size_t index,
                                      kiln_input_role_t *out_role) {
  if (out_role)
    *out_role = KILN_INPUT_ROLE_DATA;
  if (!artifact || !out_role)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_artifact_input_role: arguments must be non-NULL");
  if (index >= artifact->inputs.size())
    return kiln::makeStatusF(KILN_NOT_FOUND, "input index %zu is out of range (%zu inputs)", index,
                             artifact->inputs.size());
  *out_role = artifact->inputs[index].role;
  return nullptr;
}

} // extern "C"
