//===- ExprEmitter.h - per-element expressions of fused kernels ---*- C++ -*-===//
//
// ExprEmitter turns a value computed by `KilnFusible` ops inside a
// `kiln.kernel` body into CUDA C++ statements that compute one element of it
// at given coordinates: producers are walked backwards and coordinates mapped
// through each op (broadcast, reshape, transpose, slice, concat, gather).
// Leaves are loads from kernel parameters, literals for splat constants, or
// an override expression (a GEMM epilogue substitutes the accumulator).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_EXPREMITTER_H
#define KILN_COMPILER_CODEGEN_EXPREMITTER_H

#include "dialects/kiln/KilnOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <string>

namespace kiln::codegen {

/// Builds per-element CUDA expressions for values of one kernel body.
class ExprEmitter {
public:
  using Coords = llvm::SmallVector<std::string>;

  /// Largest statement list one kernel body may reach; emitValue fails with
  /// an `unsupported:` diagnostic beyond it (NVRTC's time and memory grow
  /// faster than linearly with the source).
  static constexpr size_t kMaxKernelBodyBytes = size_t(4) << 20;

  explicit ExprEmitter(KernelOp kernel) : kernel(kernel) {}

  /// Decides how each kernel operand is read: splat constants whose block
  /// argument `mayInline` accepts become exact literals, all others become
  /// pointer parameters `in<i>`. Returns the indices of the parameters.
  llvm::SmallVector<unsigned> bindOperands(llvm::function_ref<bool(unsigned)> mayInline);

  /// Makes `v` evaluate to `expr` wherever it is read. Only valid when every
  /// read of `v` is at the coordinates the caller's loop iterates (checked by
  /// fusion for GEMM epilogues).
  void overrideValue(mlir::Value v, std::string expr) { overrides[v] = std::move(expr); }

  /// Starts a new statement list at the given indentation; clears the memo.
  void beginBody(std::string indentation);
  /// Returns the statements emitted since beginBody().
  const std::string &getBody() const { return body; }
  /// Appends one statement line.
  void line(const std::string &s) { body += indent + s + "\n"; }

  /// Emits statements computing `v` at `coords` (one C expression per dim)
  /// and returns the name of the local (or literal) holding it. Fails with
  /// an `unsupported:` diagnostic for ops or types codegen does not handle.
  mlir::FailureOr<std::string> emitValue(mlir::Value v, llvm::ArrayRef<std::string> coords);

  /// Emits `c<d> = ...` statements delinearizing `linear` over `shape` and
  /// returns the coordinate names.
  Coords delinearize(const std::string &linear, llvm::ArrayRef<int64_t> shape,
                     const std::string &prefix = "c");

private:
  std::string fresh() { return "t" + std::to_string(counter++); }
  static std::string linearize(llvm::ArrayRef<std::string> coords, llvm::ArrayRef<int64_t> shape);
  mlir::FailureOr<std::string> bind(mlir::Value v, const std::string &expr);
  mlir::FailureOr<std::string> emitUncached(mlir::Value v, llvm::ArrayRef<std::string> coords);
  template <typename OpT>
  mlir::FailureOr<std::string> emitUnary(OpT op, llvm::ArrayRef<std::string> coords);
  template <typename OpT>
  mlir::FailureOr<std::string> emitBinary(OpT op, llvm::ArrayRef<std::string> coords);
  mlir::FailureOr<std::string> emitConcat(ConcatOp c, llvm::ArrayRef<std::string> coords);
  mlir::FailureOr<std::string> clampIndex(mlir::Operation *gather, const std::string &idx,
                                          int64_t dim);

  KernelOp kernel;
  llvm::DenseMap<mlir::Value, std::string> literal, param, overrides;
  /// The value of each float entry of `literal` (a splat constant operand), for rewrites that
  /// need the number (a division by a constant becomes a multiplication by its reciprocal).
  llvm::DenseMap<mlir::Value, double> floatLiteral;
  std::map<std::pair<void *, std::string>, std::string> memo;
  std::string body, indent;
  unsigned counter = 0;
};

/// Numpy right-aligned broadcast: coordinates of an operand of `shape` read
/// at result coordinates `coords` (size-1 dims read index 0).
ExprEmitter::Coords broadcastCoords(llvm::ArrayRef<std::string> coords,
                                    llvm::ArrayRef<int64_t> shape);

} // namespace kiln::codegen

#endif // KILN_COMPILER_CODEGEN_EXPREMITTER_H
