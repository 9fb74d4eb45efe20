//===- TestArtifact.h - Building .kiln files in unit tests ------*- C++ -*-===//
//
// A tiny artifact writer used only by the runtime tests: fill a kiln::artifact::ModelT (the
// FlatBuffers object API), attach payload bytes to its Blob fields, and build() lays the file out
// as docs/artifact.md allows (header with a CRC-32, index at offset 64, 256-byte aligned blobs;
// kiln-compile puts the index last instead). Also: resealing the checksum of an edited file,
// running kiln-run, the reference "add" model the tests and GPU checks share, a two-launch
// tensor-parallel rank model with one all-reduce, and temp-file helpers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_TESTARTIFACT_H
#define KILN_TEST_UNIT_TESTARTIFACT_H

#include "ArtifactHeader.h"
#include "kiln_artifact_generated.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln {
namespace test {

/// Builds artifact files from an index plus blob payloads.
class ArtifactBuilder {
public:
  /// The index. format_version defaults to 1 (kOldestFormatVersion, what kiln-compile writes for
  /// single-GPU models); buildAllReduceModel sets 2.
  kiln::artifact::ModelT model;

  /// format_version written into the header; 0 (the default) applies kiln-compile's rule
  /// (kiln::artifact::formatVersionFor): kFormatVersionTensorMaps when a launch has tensor maps,
  /// else kFormatVersionCollectives when the model has a tensor_parallel table or collectives,
  /// else kOldestFormatVersion. Tests of the header/index mismatch set it explicitly. The index's
  /// own format_version (model.format_version) is the caller's to set.
  uint32_t headerFormatVersion = 0;

  ArtifactBuilder() { model.format_version = kiln::artifact::kOldestFormatVersion; }
  ArtifactBuilder(const ArtifactBuilder &) = delete;
  ArtifactBuilder &operator=(const ArtifactBuilder &) = delete;

  /// Makes `field` point at `bytes` in the blob region when build() lays out the file. `field`
  /// must stay alive (it is owned by `model`) until build().
  void setBlob(std::unique_ptr<kiln::artifact::Blob> &field, std::vector<uint8_t> bytes);

  /// Returns the complete file: 64-byte header (checksum kind CRC-32 with the CRC of the rest),
  /// index at offset 64, then every payload at the next 256-byte aligned offset, in setBlob
  /// order.
  std::vector<uint8_t> build();

  /// Offset and size of the index in the last build().
  uint64_t indexOffset() const { return lastIndexOffset; }
  uint64_t indexSize() const { return lastIndexSize; }

private:
  std::vector<std::pair<std::unique_ptr<kiln::artifact::Blob> *, std::vector<uint8_t>>> payloads;
  uint64_t lastIndexOffset = 0;
  uint64_t lastIndexSize = 0;
};

/// Returns the CRC-32 (zlib's crc32) of `bytes` from offset 64 to the end: the value a header of
/// checksum kind kChecksumCrc32 records. `bytes` must hold at least the 64-byte header.
uint32_t artifactCrc32(const std::vector<uint8_t> &bytes);

/// Sets the header's checksum fields (bytes [40, 48)) of `bytes` to `kind` and, for
/// kChecksumCrc32, the CRC-32 of the current contents (0 otherwise). Tests that edit a file on
/// purpose reseal it so the edit reaches the structural check it targets instead of failing the
/// checksum; kChecksumNone makes a file like those written before the checksum existed.
void resealChecksum(std::vector<uint8_t> &bytes, uint32_t kind = kiln::artifact::kChecksumCrc32);

/// PTX (ISA 7.0, sm_75) of `kiln_add(const float *x, const float *w, float *y)`:
/// y[i] = x[i] + w[i] with i = blockIdx.x * blockDim.x + threadIdx.x.
extern const char *const kAddKernelPtx;

/// Number of f32 elements of the add model's tensors.
constexpr int64_t kAddElements = 4;

/// Weights of the add model: f32 {10, 20, 30, 40}.
std::vector<uint8_t> addModelWeights();

/// Fills `builder` with the reference model: input "x" f32[4]; weights f32[4]; output "y"
/// f32[4] at arena offset 0 (arena 1024 bytes); one module "add" (PTX above, plus `cubins` as
/// (arch, image) pairs) and one launch kiln_add(x, weights, arena+0) with grid (1,1,1) and block
/// (4,1,1).
void buildAddModel(ArtifactBuilder &builder,
                   std::vector<std::pair<uint32_t, std::vector<uint8_t>>> cubins = {});

/// Weights of rank r of the all-reduce model: f32 {1, 2, 3, 4} * (r + 1), then the bias
/// f32 {100, 200, 300, 400} shared by every rank.
std::vector<uint8_t> allReduceModelWeights(uint32_t rank);

/// Fills `builder` with rank `rank` of a `worldSize`-rank tensor-parallel model (format version
/// 2, tensor_parallel {worldSize, rank, groupHash}): input "x" f32[4]; launch 0
/// kiln_add(x, w_rank, arena+0) writes t = x + w_rank; collective 0 all_reduce_sum f32 x 4 in
/// place on arena+0 before launch 1 (s = sum over ranks of t); launch 1 kiln_add(arena+0, bias,
/// arena+256) writes output "y" = s + bias. So every rank's y is
/// y[i] = worldSize * x[i] + (i + 1) * worldSize * (worldSize + 1) / 2 + 100 * (i + 1), exact in
/// f32 for small values.
void buildAllReduceModel(ArtifactBuilder &builder, uint32_t rank, uint32_t worldSize,
                         uint64_t groupHash = 0x6b696c6e2d747031ull);

/// Expected output of the all-reduce model for input `x` (kAddElements values).
std::vector<float> allReduceModelExpected(const std::vector<float> &x, uint32_t worldSize);

/// Rows and columns of the TMA copy model's f16 matrices, and the side of one square tile.
constexpr uint64_t kTmaRows = 128;
constexpr uint64_t kTmaCols = 64;
constexpr uint64_t kTmaTile = 64;

/// Returns a tensor map over a row-major f16 matrix of `rows` x `cols` elements (dims {cols,
/// rows}, innermost first; stride cols * 2 bytes), box kTmaTile x kTmaTile, swizzle 128B, on
/// argument `arg` at byte `offset` of its buffer.
std::unique_ptr<kiln::artifact::TensorMapT>
makeTileMap(uint32_t arg, uint64_t rows = kTmaRows, uint64_t cols = kTmaCols, uint64_t offset = 0);

/// Fills `builder` with the TMA copy model (format version 3): input "x" f16[128x64]; output "y"
/// f16[128x64] at arena offset 0 (arena 16384 bytes); module "tma" whose PTX is `ptx`; one launch
/// kiln_tma_copy(x, arena+0) with grid (2,1,1), block (128,1,1) and two tensor maps after the
/// pointers, makeTileMap(0) over x and makeTileMap(1) over y. Block b copies rows [64b, 64b + 64)
/// of x into y through the maps (test/unit/tma_copy_kernel.cu).
void buildTmaCopyModel(ArtifactBuilder &builder, const std::string &ptx);

/// Returns a BufferRefT with the given fields.
std::unique_ptr<kiln::artifact::BufferRefT>
makeRef(kiln::artifact::Segment segment, uint64_t offset, uint64_t size, uint32_t index = 0);

/// Writes `bytes` to a fresh file named `name` under the test temp directory; returns its path.
std::string writeTempFile(const std::string &name, const std::vector<uint8_t> &bytes);

/// Exit code and combined stdout/stderr of a command.
struct CommandResult {
  int exitCode = -1;
  std::string output;
};

/// Runs `command` with /bin/sh (popen) and captures its exit code and combined output (the
/// command must redirect stderr itself, e.g. end in "2>&1").
CommandResult runShell(const std::string &command);

/// The shell prefix runKilnRun puts before kiln-run: `env` with the tensor-parallel variables
/// removed (see runKilnRun), then `environment`, then the quoted kiln-run path.
std::string kilnRunCommand(const std::string &environment = "");

/// Path of the kiln-run binary: $KILN_RUN if set, else the one built next to the tests.
std::string kilnRunPath();

/// Runs kiln-run with `arguments` (already shell-quoted) and captures its result. The
/// tensor-parallel environment variables kiln-run reads (KILN_TP_RANK, KILN_TP_WORLD_SIZE,
/// KILN_TP_ID, KILN_TP_ID_FILE, RANK, WORLD_SIZE, LOCAL_RANK) are removed first, then
/// `environment` ("NAME=value ..." assignments, already shell-quoted) is added.
CommandResult runKilnRun(const std::string &arguments, const std::string &environment = "");

} // namespace test
} // namespace kiln

#endif // KILN_TEST_UNIT_TESTARTIFACT_H
