//===- KernelEmitter.h - kiln.kernel -> CUDA C++ ------------------*- C++ -*-===//
//
// Turns each `kiln.kernel` into one CUDA C++ `extern "C" __global__`
// function, plus its launch shape, the values bound to its pointer
// parameters and the tensor maps (TMA descriptors) that follow them.
// Emitters are registered per anchor op type (GEMM, softmax, layer norm,
// reduce, ...) by one populate function per op family; kernels whose body is
// only `KilnFusible` ops go to the pointwise emitter.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_KERNELEMITTER_H
#define KILN_COMPILER_CODEGEN_KERNELEMITTER_H

#include "dialects/kiln/KilnOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>

namespace kiln::codegen {

/// Placeholder for the `__global__` function name in a generated kernel's
/// source; the driver replaces it with a name unique in the module
/// (identical kernels are emitted once and share the function).
inline constexpr const char *kKernelNamePlaceholder = "KILN_KERNEL_NAME";

/// Where a kernel that does work before its grid-dependency wait wants the wait: a comment the
/// driver replaces with kiln::gridDependencyWait() / gridDependencySync() (insertGridDependencySync)
/// and otherwise leaves as a comment. Only what may run while the previous kernel still writes
/// goes before it: L2 prefetches of weights (gemm_skinny.cuh), never a load or store.
inline constexpr const char *kGridDependencyPlaceholder = "/* kiln: grid dependency */";

/// One generated kernel: CUDA C++ source and how to launch it. Its parameters
/// are, in this order, one pointer per entry of `args`, then one
/// `const __grid_constant__ kiln::TensorMap` (cuda/common.cuh) per entry of
/// `tensorMaps`.
struct GeneratedKernel {
  std::string source; ///< the kernel function, named kKernelNamePlaceholder
  std::array<unsigned, 3> grid = {1, 1, 1};
  std::array<unsigned, 3> block = {1, 1, 1};
  unsigned sharedMemBytes = 0;           ///< dynamic shared memory, bytes
  /// Function-level values bound to the pointer parameters, in order:
  /// kernel operands (not inlined as literals) then kernel results.
  llvm::SmallVector<mlir::Value> args;

  /// A CUDA tensor map (TMA descriptor, CUtensorMap) that the kernel takes by value as a
  /// `const __grid_constant__ kiln::TensorMap` parameter after its pointer parameters. The
  /// runtime encodes it with cuTensorMapEncodeTiled from the device address of args[arg] plus
  /// offsetBytes (docs/artifact.md).
  struct TensorMapArg {
    unsigned arg = 0;                       ///< index into args: the buffer addressed
    uint64_t offsetBytes = 0;               ///< byte offset of element (0, ..., 0) in it
    mlir::Type elementType;                 ///< f16, bf16 or f32 (the format allows any dtype)
    llvm::SmallVector<uint64_t, 5> dims;    ///< globalDim, innermost first (rank 1..5)
    llvm::SmallVector<uint64_t, 4> strides; ///< globalStrides in bytes of dims 1..rank-1
    llvm::SmallVector<uint32_t, 5> box;     ///< boxDim, one per dim, each 1..256
    enum class Swizzle : uint8_t { None, B32, B64, B128 } swizzle = Swizzle::B128;
  };
  /// The tensor-map parameters, in parameter order (after every pointer).
  /// Element strides (1), interleave (none), L2 promotion (256 B) and the
  /// out-of-bounds fill (zeros) are fixed by the artifact format; the runtime
  /// rejects maps that address bytes outside args[arg]'s buffer.
  llvm::SmallVector<TensorMapArg> tensorMaps;
  /// The kernel starts with kiln::gridDependencySync() or kiln::gridDependencyWait()
  /// (cuda/common.cuh), so the runtime may launch it with programmatic stream serialization
  /// (PDL). insertGridDependencySync sets it.
  bool programmaticLaunch = false;
};

/// Emits the kernel for `kernel` whose body's compute op is `anchor`.
/// Failures carry a diagnostic on the kernel (`unsupported: ...`).
using EmitFn =
    std::function<mlir::FailureOr<GeneratedKernel>(KernelOp kernel, mlir::Operation *anchor)>;

/// Emitters by anchor op type, plus the pointwise emitter for fused bodies.
class EmitterRegistry {
public:
  /// Registers the emitter of kernels anchored on `OpT`. With
  /// `acceptsFusedOps`, the kernel body may also hold fusible ops that
  /// consume the anchor's result (epilogue) or produce its input (prologue).
  template <typename OpT> void addAnchor(EmitFn fn, bool acceptsFusedOps = false) {
    anchors[mlir::TypeID::get<OpT>()] = {std::move(fn), acceptsFusedOps};
  }
  void setPointwise(EmitFn fn) { pointwise = std::move(fn); }

  /// Chooses the emitter for `kernel`: the body's single non-fusible op, if
  /// any, selects an anchor emitter; a body of fusible ops goes to the
  /// pointwise emitter. Emits an `unsupported:` error for anything else.
  mlir::FailureOr<GeneratedKernel> emit(KernelOp kernel) const;

private:
  struct Anchor {
    EmitFn emit;
    bool acceptsFusedOps = false;
  };
  llvm::DenseMap<mlir::TypeID, Anchor> anchors;
  EmitFn pointwise;
};

/// For programmatic dependent launch (kiln-compile --programmatic-launch): makes
/// kiln::gridDependencyWait() (the next launch starts as this grid's blocks exit) or, with
/// `triggerEarly`, kiln::gridDependencySync() (it may start right after the wait) the first
/// statement of `kernel`'s body, after the opening brace that follows the kKernelNamePlaceholder
/// signature (signatures hold no braces), and sets `programmaticLaunch`; a kernel holding
/// kGridDependencyPlaceholder gets the call there instead. Returns false, changing nothing, when
/// the source has no such body.
bool insertGridDependencySync(GeneratedKernel &kernel, bool triggerEarly);

void populatePointwiseEmitter(EmitterRegistry &registry);
void populateGemmEmitters(EmitterRegistry &registry);
void populateNormEmitters(EmitterRegistry &registry);
void populateReduceEmitters(EmitterRegistry &registry);
void populateSampleEmitters(EmitterRegistry &registry);
void populateAttentionEmitters(EmitterRegistry &registry);
void populateDecodeAttentionEmitters(EmitterRegistry &registry);

/// Registry with every emitter kiln has.
EmitterRegistry makeDefaultEmitterRegistry();

//===----------------------------------------------------------------------===//
// Helpers shared by the emitters
//===----------------------------------------------------------------------===//

/// CUDA C++ type a kernel computes a kiln element type in (`float` for f32,
/// f16 and bf16; `long long`, `int`, `bool`); failure for other types.
mlir::FailureOr<std::string> cudaScalarType(mlir::Type elementType);

/// CUDA C++ type an element is stored as in device memory: `float`,
/// `kiln::f16`, `kiln::bf16` (cuda/common.cuh), or the integer types.
mlir::FailureOr<std::string> cudaStorageType(mlir::Type elementType);

/// True for 16-bit float element types (stored narrow, computed in fp32).
bool isNarrowFloat(mlir::Type elementType);

/// `value` (in the compute type) converted for a store of `elementType`:
/// `kiln::cvt<kiln::f16>(value)` (rounds, saturates finite values) for 16-bit
/// floats, `value` otherwise.
std::string storeValue(mlir::Type elementType, const std::string &value);

/// `load` (an element read from memory) widened to the compute type:
/// `kiln::ld(load)` for 16-bit floats, `load` otherwise.
std::string loadValue(mlir::Type elementType, const std::string &load);

/// Exact CUDA literal of `value` (float bit patterns through __int_as_float).
/// Inserts `__cluster_dims__(dims)` (e.g. "2, 1, 1") after the `__launch_bounds__(threads)` that
/// buildSignature wrote into `signature`: the kernel's blocks run as thread-block clusters.
void addClusterDims(std::string &signature, unsigned threads, const std::string &dims);

/// Rewrites the `__launch_bounds__(threads)` that buildSignature wrote into `signature` as
/// `__launch_bounds__(threads, minBlocks)`: ptxas then keeps the registers low enough for
/// `minBlocks` blocks per SM.
void setMinBlocksPerSm(std::string &signature, unsigned threads, unsigned minBlocks);

std::string cudaLiteral(mlir::Type elementType, double value, int64_t intValue);

/// Builds the `extern "C" __global__` signature for `kernel`: operands in
/// `operands` (by index into the kernel's inputs) and then all results, as
/// `const T* __restrict__ in<i>` / `T* __restrict__ out<j>`; appends the
/// matching function-level values to `args`.
mlir::FailureOr<std::string> buildSignature(KernelOp kernel, llvm::ArrayRef<unsigned> operands,
                                            llvm::SmallVectorImpl<mlir::Value> &args,
                                            unsigned launchBoundsThreads);

/// Module prologue: includes of the embedded device headers. A module is
/// the prologue followed by kernel functions.
std::string modulePrologue();

/// Grid size of `kernel` for `work` items at `perBlock` items per block,
/// capped for grid-stride loops at 32 blocks per SM of the kernel's
/// `#kiln.target`.
unsigned gridFor(KernelOp kernel, int64_t work, int64_t perBlock);

} // namespace kiln::codegen

#endif // KILN_COMPILER_CODEGEN_KERNELEMITTER_H
