//===- GemmSm90Emitter.h - Hopper TMA GEMM kernels ----------------*- C++ -*-===//
//
// The code generator of kiln::gemmSm90 (cuda/gemm_sm90.cuh), called by the
// GEMM emitter for kernels that kiln-select-tiles gave a
// `#kiln.sm90_gemm_tile`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_GEMMSM90EMITTER_H
#define KILN_COMPILER_CODEGEN_GEMMSM90EMITTER_H

#include "compiler/codegen/KernelEmitter.h"

#include <optional>

namespace kiln::codegen {

/// Emits `kernel` (anchored on the 16-bit `mm`) as one launch of
/// kiln::gemmSm90 with `tile`: two tensor-map parameters after the pointer
/// parameters (A, then B), 128 x (consumers + 1) threads, a persistent grid
/// of min(tiles, SM count of the target) blocks, or tiles x split-K blocks in
/// clusters of split-K. Returns std::nullopt, without a diagnostic, when TMA
/// cannot read an operand (not a 16-byte aligned strided view of a
/// parameter, or batch dims that are neither all broadcast nor one uniform
/// stride), K is 0, or the root is not a float tensor: the caller then uses
/// the kernel's mma.sync tile. Failure (with a diagnostic) for errors.
/// A `kiln.row_stats` of the lhs in the body (a folded norm) becomes the
/// template's ROWSTATS: the epilogue lambda takes the row's mean and rstd.
mlir::FailureOr<std::optional<GeneratedKernel>> emitMatMulSm90(KernelOp kernel, MatMulOp mm,
                                                               Sm90GemmTileAttr tile);

} // namespace kiln::codegen

#endif // KILN_COMPILER_CODEGEN_GEMMSM90EMITTER_H
