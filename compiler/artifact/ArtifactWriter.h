//===- ArtifactWriter.h - write a .kiln artifact ------------------*- C++ -*-===//
//
// Serializes a planned, code-generated function into one .kiln file: the
// 64-byte header (with a CRC-32 of the rest), 256-byte aligned blobs (PTX,
// cubins, weights) and the FlatBuffers index (runtime/schema/kiln_artifact.fbs)
// at the end. Format and compatibility rule: docs/artifact.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H
#define KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H

#include "compiler/artifact/LaunchMetadata.h"
#include "compiler/codegen/KernelEmitter.h"
#include "compiler/codegen/Nvrtc.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>
#include <functional>
#include <string>

namespace kiln {

/// One CUDA module of the artifact.
struct ArtifactModule {
  std::string name;
  codegen::CompiledModule code;
};

/// One launch of the schedule; `args` are function-level values (kernel
/// operands and results), resolved to buffer references by the writer.
/// `tensorMaps` (GeneratedKernel::tensorMaps) are the kernel's parameters
/// after the pointers; each addresses the buffer of one of `args`.
struct ArtifactLaunch {
  unsigned module = 0;
  std::string function;
  std::array<unsigned, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  unsigned sharedMemBytes = 0;
  llvm::SmallVector<mlir::Value> args;
  llvm::SmallVector<codegen::GeneratedKernel::TensorMapArg> tensorMaps;
  /// The kernel may be launched with programmatic stream serialization (GeneratedKernel).
  bool programmaticLaunch = false;
  /// Name, layer, fused ops, ONNX nodes and cost estimate (LaunchNamer::describe).
  LaunchMetadata metadata;
};

/// One collective of the schedule: the result of a `kiln.all_reduce` (run in
/// place on its operand's buffer), after launches [0, beforeLaunch).
struct ArtifactCollective {
  mlir::Value value;
  unsigned beforeLaunch = 0;
};

/// Which rank of a tensor-parallel group the artifact is (worldSize 1: a
/// single-GPU artifact, no TensorParallel table is written).
struct ArtifactTensorParallel {
  unsigned worldSize = 1;
  unsigned rank = 0;
  uint64_t groupHash = 0; ///< equal in every rank file of one compile
};

/// One program of an artifact: a planned, code-generated function and its launches. An artifact
/// with several programs (kiln-compile --kv-cache with a --shape range: one per step shape) shares
/// modules and the weight segment among them; `name` names the program ("decode_b4") and must be
/// unique, and is unused (may be empty) when the artifact has one program.
struct ArtifactProgram {
  std::string name;
  mlir::func::FuncOp func;
  llvm::ArrayRef<ArtifactLaunch> launches;
};

/// The program's time in microseconds as its target's rates estimate it (getTargetRates of the
/// target `program.func` is compiled for, estimateLaunchSeconds summed over its launches'
/// FLOPs and bytes, LaunchMetadata): what a runtime compares programs by (the prefill plan of
/// kiln_generate), not a prediction of any one GPU's time. 0 when the target has no rates.
double estimateProgramMicroseconds(const ArtifactProgram &program);

/// Sizes of what was written, for the compiler's summary.
struct ArtifactStats {
  uint64_t fileBytes = 0;
  uint64_t weightBytes = 0;
};

/// Observes writeArtifact's steps, for kiln-compile's phase times and progress
/// display; each member may be empty. Called on the writing thread.
struct ArtifactWriteObserver {
  /// A step starts: "pack weights" (copying constants into the weight
  /// segment), "checksum" (CRC-32 of the file), "write file", in this order.
  std::function<void(llvm::StringRef step)> onStep;
  /// Progress of the current step in bytes: `done` of `total` ("pack
  /// weights": of the function's constants; "write file": of the file).
  std::function<void(uint64_t done, uint64_t total)> onProgress;
};

/// Writes `func` (after kiln-plan-memory; arguments and results carry
/// `kiln.name`) with `modules` and `launches` to `path`, with a CRC-32 of the
/// file in the header. `path` is "-" or names stdout (isStandardOutput): the
/// artifact goes to stdout. An existing non-regular file (/dev/null): written
/// in place. Otherwise the bytes go to a temporary file in the same directory
/// that replaces `path` only once complete, so a failed write (disk full)
/// leaves a previous file at `path` untouched and no temporary file behind.
/// Errors: unsupported element types, values that are neither inputs,
/// constants nor planned kernel results, and I/O failures (naming `path`).
/// With tensor maps in any launch the file has format_version 3; else, with
/// collectives (a tensor-parallel rank), format_version 2 and the
/// TensorParallel table; else format_version 1 (artifact::formatVersionFor,
/// docs/artifact.md).
/// Each launch's metadata is written into its optional Launch fields, and
/// integer inputs that index an embedding table get a value_range
/// (indexInputRange).
llvm::Expected<ArtifactStats> writeArtifact(mlir::func::FuncOp func,
                                            llvm::ArrayRef<ArtifactModule> modules,
                                            llvm::ArrayRef<ArtifactLaunch> launches,
                                            llvm::StringRef path,
                                            llvm::ArrayRef<ArtifactCollective> collectives = {},
                                            const ArtifactTensorParallel &tp = {},
                                            const ArtifactWriteObserver *observer = nullptr);

/// Writes an artifact of one or more programs (ArtifactProgram) to `path` as the overload above
/// does. Program 0 fills the Model's own tables; programs 1..n-1 go to Model.programs
/// (docs/artifact.md, "Programs"). The weight segment holds every program's constants, a
/// constant of a later program whose bytes equal one already packed stored once. `collectives`
/// and `tp` belong to program 0; a tensor-parallel artifact must have one program (an internal
/// error otherwise, as are empty or repeated names with several programs).
llvm::Expected<ArtifactStats> writeArtifact(llvm::ArrayRef<ArtifactProgram> programs,
                                            llvm::ArrayRef<ArtifactModule> modules,
                                            llvm::StringRef path,
                                            llvm::ArrayRef<ArtifactCollective> collectives = {},
                                            const ArtifactTensorParallel &tp = {},
                                            const ArtifactWriteObserver *observer = nullptr);

/// Returns true if `path` is "-" or names the same file (device and inode) as
/// this process's standard output, e.g. /dev/stdout or the file stdout is
/// redirected to. False when either cannot be stat'ed.
bool isStandardOutput(llvm::StringRef path);

/// The value whose buffer `v` shares: `v` with its chain of views (kiln.reshape)
/// and in-place all-reduces walked back to where the bytes are produced.
mlir::Value viewSource(mlir::Value v);

/// The file a write to `path` lands in: `path`, or the file a symbolic link
/// `path` points to (resolved fully; `path` itself when that fails).
llvm::SmallString<256> outputDestination(llvm::StringRef path);

/// Writes the bytes that `write` produces to `path` the way writeArtifact
/// does: stdout for "-" (or a path naming it), in place for an existing
/// non-regular file, else through a temporary file renamed over `path` only
/// when complete. Errors name `path`.
llvm::Error writeOutputFile(llvm::StringRef path,
                            llvm::function_ref<void(llvm::raw_ostream &)> write);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H
