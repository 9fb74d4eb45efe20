//===- Artifact.h - Verified in-memory form of a .kiln artifact -*- C++ -*-===//
//
// The object behind kiln_artifact_t. kiln_artifact_open maps the file, verifies the header, the
// FlatBuffers index and every reference in it, and copies the index into the plain structs below.
// After a successful open, every offset/size here is known to lie inside the file or its segment,
// so the session uses them without further checks.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_ARTIFACT_H
#define KILN_RUNTIME_SRC_ARTIFACT_H

#include "kiln/runtime.h"
#include "ArtifactHeader.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {

/// One device copy of an artifact's weight segment (defined in Session.cpp).
struct DeviceWeights;

/// Device memory segment a BufferRef points into; values equal kiln.artifact.Segment.
enum class Segment : uint8_t { Arena = 0, Weights = 1, Input = 2 };

/// A verified byte range of the file.
struct BlobRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// A verified reference to `size` bytes at `offset` of a segment (`index` = input number for
/// Segment::Input).
struct BufferRefDesc {
  Segment segment = Segment::Arena;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// A graph input or output; `location` is meaningful for outputs only. `hasValueRange`: the
/// artifact records the inclusive range [valueMin, valueMax] of an integer input's values.
struct TensorDesc {
  std::string name;
  kiln_dtype_t dtype = KILN_DTYPE_F32;
  std::vector<int64_t> shape;
  uint64_t byteSize = 0;
  BufferRefDesc location;
  bool hasValueRange = false;
  int64_t valueMin = 0;
  int64_t valueMax = 0;
  /// Inputs only: what a generation runtime puts there (KILN_INPUT_ROLE_DATA: the application).
  kiln_input_role_t role = KILN_INPUT_ROLE_DATA;
};

/// SASS for one target; `arch` = major * 10 + minor.
struct CubinDesc {
  uint32_t arch = 0;
  BlobRange image;
};

/// One CUDA module: PTX text (possibly empty) and cubins.
struct ModuleDesc {
  std::string name;
  BlobRange ptx;
  std::vector<CubinDesc> cubins;
};

/// Shared-memory swizzle of a tensor map; values equal kiln.artifact.TensorMapSwizzle and
/// kiln_tensor_map_swizzle_t (and CUtensorMapSwizzle's first four).
enum class TensorMapSwizzle : uint8_t { None = 0, B32 = 1, B64 = 2, B128 = 3 };

/// Returns "none", "32B", "64B" or "128B".
const char *tensorMapSwizzleName(TensorMapSwizzle swizzle);

/// Returns the swizzle span in bytes (32, 64, 128), or 0 for None.
uint32_t tensorMapSwizzleBytes(TensorMapSwizzle swizzle);

/// One verified tensor map of a launch (docs/artifact.md, "Tensor maps"): the runtime encodes it
/// with cuTensorMapEncodeTiled for the device address of the launch's argument `arg` plus
/// `offset`. Verified: rank = dims.size() in [1, 5], strides.size() = rank - 1, box.size() = rank,
/// every byte it can address inside args[arg], and the driver's rules on dims, strides, box and
/// alignment (so encoding fails only for reasons outside the file).
struct TensorMapDesc {
  uint32_t arg = 0;
  uint64_t offset = 0;
  kiln_dtype_t dtype = KILN_DTYPE_F16;
  std::vector<uint64_t> dims;
  std::vector<uint64_t> strides;
  std::vector<uint32_t> box;
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;
};

/// One kernel launch of the schedule.
struct LaunchDesc {
  uint32_t module = 0;
  std::string function;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedMemBytes = 0;
  std::vector<BufferRefDesc> args;
  /// What the launch computes (optional Launch fields; empty / 0 in files without them).
  std::string name;
  std::string layer;
  std::vector<std::string> ops;
  std::vector<std::string> nodes;
  uint32_t nodeCount = 0;
  uint64_t flops = 0;
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
  /// Kernel parameters after the pointer arguments (format version 3; empty before).
  std::vector<TensorMapDesc> tensorMaps;
  /// The kernel starts with griddepcontrol.wait, so it may be launched with programmatic stream
  /// serialization (Launch.programmatic_launch; false in files without it).
  bool programmaticLaunch = false;
};

/// Operation of a collective; values equal kiln.artifact.CollectiveKind.
enum class CollectiveKind : uint8_t { AllReduceSum = 0 };

/// Returns the static name of `kind` ("all_reduce_sum"), as kiln_collective_info_t::kind and
/// kiln-run print it.
const char *collectiveKindName(CollectiveKind kind);

/// One verified collective of a tensor-parallel rank's schedule: `count` elements of `dtype` (a
/// float type) at arena range `input`, summed over all ranks into arena range `output` (equal to
/// `input` for an in-place all-reduce, otherwise disjoint; both count * sizeof(dtype) bytes). It
/// runs after launches [0, beforeLaunch) and before launch beforeLaunch.
struct CollectiveDesc {
  CollectiveKind kind = CollectiveKind::AllReduceSum;
  kiln_dtype_t dtype = KILN_DTYPE_F32;
  uint64_t count = 0;
  BufferRefDesc input;
  BufferRefDesc output;
  uint32_t beforeLaunch = 0;
};

/// Upper bound on kernel arguments, shared with the compiler (ArtifactHeader.h).
constexpr size_t kMaxLaunchArgs = artifact::kMaxLaunchArgs;

} // namespace kiln

/// A mapped, verified artifact. Created only by kiln_artifact_open; reference counted.
struct kiln_artifact {
  std::atomic<int> refCount{1};
  std::string path;
  /// The mapped file (read-only) and its size in bytes.
  const uint8_t *data = nullptr;
  uint64_t size = 0;

  uint32_t formatVersion = 0;
  std::string producer;
  uint64_t arenaBytes = 0;
  kiln::BlobRange weights;
  std::vector<kiln::TensorDesc> inputs;
  std::vector<kiln::TensorDesc> outputs;
  std::vector<kiln::ModuleDesc> modules;
  std::vector<kiln::LaunchDesc> launches;
  /// Tensor parallelism (kiln.artifact.TensorParallel): world size 1, rank 0 and hash 0 for a
  /// single-GPU artifact; otherwise world size >= 2 and rank < world size.
  uint32_t tpWorldSize = 1;
  uint32_t tpRank = 0;
  uint64_t tpGroupHash = 0;
  /// Collectives in schedule order (non-decreasing beforeLaunch); empty for single-GPU artifacts.
  std::vector<kiln::CollectiveDesc> collectives;

  /// Programs (kiln.artifact.Program): this object is program 0, named `programName` ("" in an
  /// artifact of one program); `programs` holds programs 1..n-1 (only in the artifact
  /// kiln_artifact_open returned). A program object shares the mapping, modules and weights of
  /// that artifact, its `owner`: its reference count is the owner's (kiln_artifact_retain and
  /// _release on a program act on the owner) and sessions of every program share the owner's
  /// weight uploads. `owner` is null in the owner itself.
  std::string programName;
  /// Program.estimated_us (Model.estimated_us for program 0): the compiler's estimate of the
  /// program's time, 0 when absent or not a positive finite number.
  double estimatedUs = 0;
  std::vector<std::unique_ptr<kiln_artifact>> programs;
  kiln_artifact *owner = nullptr;

  /// The device copies of the weight segment, one per device (key: the CUdevice, i.e. the device
  /// ordinal), shared by every session of this artifact on that device (Session.cpp). Weak: the
  /// sessions own them, and the last session on a device frees its copy; the entry then expires
  /// and the next session on that device uploads again. Guarded by weightUploadsMutex.
  std::map<int, std::weak_ptr<kiln::DeviceWeights>> weightUploads;
  std::mutex weightUploadsMutex;

  ~kiln_artifact();
};

namespace kiln {

/// Verifies an artifact already in memory (`data`, `size` bytes, 8-byte aligned) and fills
/// `artifact` (which must not own a mapping yet; its `path` is used in messages). Exposed for
/// tests and for kiln_artifact_open; does not take ownership of `data`. With `fileMapping`
/// (`data` is the start of a read-only mmap of the file) the pages the checksum has read are
/// released as it goes (madvise MADV_DONTNEED; a later read faults them in again from the page
/// cache), so that verifying a multi-GB artifact does not leave all of it resident.
kiln_status_t verifyArtifact(const uint8_t *data, uint64_t size, kiln_artifact &artifact,
                             bool fileMapping = false);

} // namespace kiln

#endif // KILN_RUNTIME_SRC_ARTIFACT_H
