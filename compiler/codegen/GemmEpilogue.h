//===- GemmEpilogue.h - the fused epilogue of GEMM kernels --------*- C++ -*-===//
//
// The statements that compute a GEMM kernel's yielded value from one
// accumulator (or a gated-unit pair of them), shared by every GEMM path: the
// FFMA and mma.sync kernels store the value themselves, the Hopper GEMM
// (GemmSm90Emitter) returns it to kiln::gemmSm90, which stores it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_GEMMEPILOGUE_H
#define KILN_COMPILER_CODEGEN_GEMMEPILOGUE_H

#include "compiler/codegen/ExprEmitter.h"
#include "dialects/kiln/KernelPlan.h"

#include <string>

namespace kiln::codegen {

/// How an epilogue body ends: `out0[e] = <value>;` or `return <value>;`.
enum class GemmEpilogueEnd { Store, Return };

/// Appends to the body the caller began (ExprEmitter::beginBody) the epilogue
/// of `mm`: the kernel's yielded value `root` at the accumulator's linear
/// index `e = bz * M * N + m * N + n` (fusion guarantees the path from the
/// matmul never broadcasts it), with the matmul result replaced by `acc`, then
/// stored to out0 or returned. The body expects `m`, `n`, `bz` and `acc` in
/// scope. Returns the whole body; failure (with a diagnostic) when an op of
/// the fused group cannot be emitted.
mlir::FailureOr<std::string> epilogueBody(ExprEmitter &expr, MatMulOp mm, mlir::Value root,
                                          const std::string &acc, int64_t M, int64_t N,
                                          GemmEpilogueEnd end);

/// The pair epilogue (kiln::PairEpilogue) appended like epilogueBody: Y at
/// (m, n) from `acc0` and at (m, n + 1) from `acc1` (each times `scale`, a
/// CUDA literal, when not empty) are the two halves of one gated unit; the
/// kernel's root at e = bz * M * N/2 + m * N/2 + n/2 is computed from them
/// and stored or returned. `batchCoords` are the batch coordinates of `bz`.
/// Expects `m`, `n`, `bz`, `acc0`, `acc1` in scope.
mlir::FailureOr<std::string> pairEpilogueBody(ExprEmitter &expr, MatMulOp mm, const GluHalves &pair,
                                              mlir::Value root,
                                              llvm::ArrayRef<std::string> batchCoords,
                                              const std::string &scale, int64_t M, int64_t N,
                                              GemmEpilogueEnd end);

/// The epilogue of a kernel that delinearizes the batch from `bz` inside its body (the Hopper
/// and few-row GEMMs): pairEpilogueBody for a gated-unit pair, else epilogueBody, with the
/// accumulator(s) times `scale` (a scalar factor taken off an operand view; 1: none). Appended
/// like those; expects `m`, `n`, `bz` and `acc` (pair: `acc0`, `acc1`) in scope.
mlir::FailureOr<std::string> batchedEpilogueBody(ExprEmitter &expr, MatMulOp mm,
                                                 const std::optional<GluHalves> &pair,
                                                 mlir::Value root, llvm::ArrayRef<int64_t> batch,
                                                 double scale, int64_t M, int64_t N,
                                                 GemmEpilogueEnd end);

} // namespace kiln::codegen

#endif // KILN_COMPILER_CODEGEN_GEMMEPILOGUE_H
