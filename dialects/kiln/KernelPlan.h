//===- KernelPlan.h - the kernel plan passes write and codegen reads -*- C++ -*-===//
//
// The names of the discardable attributes that carry the kernel plan from
// passes/ to codegen (their kinds are the typed attributes of KilnAttrs.td,
// checked by KilnDialect::verifyOperationAttribute), typed getters for them,
// and the IR queries both sides share. Codegen depends on this header and
// KilnTarget.h, never on passes/.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_KERNELPLAN_H
#define KILN_DIALECTS_KILN_KERNELPLAN_H

#include "dialects/kiln/KilnOps.h"

#include <optional>

namespace kiln {

/// `#kiln.target` on the module (set by kiln-compile from the first --target).
inline constexpr llvm::StringLiteral kTargetAttrName = "kiln.target";
/// `#kiln.precision` on the function (set by kiln-assign-precision).
inline constexpr llvm::StringLiteral kPrecisionAttrName = "kiln.precision";
/// `#kiln.input_role` on a function argument the generation runtime fills (kiln-paged-kv-cache).
inline constexpr llvm::StringLiteral kRoleAttrName = "kiln.role";
/// A unit attribute on the function: kiln-compile --kv-cache imported the model at two tokens
/// and found every attention causal, so kiln-paged-kv-cache may take the unmasked attention of a
/// one-token step (which looks the same causal or not) as causal.
inline constexpr llvm::StringLiteral kCausalCheckedAttrName = "kiln.causal_checked";
/// `#kiln.gemm_tile` on a kernel anchored on an fp32 `kiln.matmul` (CUDA cores).
inline constexpr llvm::StringLiteral kGemmTileAttrName = "kiln.gemm_tile";
/// `#kiln.mma_tile` on a kernel whose `kiln.matmul` runs on mma.sync.
inline constexpr llvm::StringLiteral kMmaTileAttrName = "kiln.mma_tile";
/// `#kiln.wgmma_tile` on a kernel whose 16-bit `kiln.matmul` runs on wgmma (sm_90a).
inline constexpr llvm::StringLiteral kWgmmaTileAttrName = "kiln.wgmma_tile";
/// `#kiln.sm90_gemm_tile` on a kernel whose 16-bit `kiln.matmul` runs on the Hopper TMA GEMM
/// (cuda/gemm_sm90.cuh) when its operands are TMA-readable; the kernel then also carries the
/// `#kiln.mma_tile` codegen uses otherwise.
inline constexpr llvm::StringLiteral kSm90GemmTileAttrName = "kiln.sm90_gemm_tile";
/// `#kiln.skinny_gemm_tile` on a kernel whose 16-bit `kiln.matmul` has at most 16 rows in all
/// (a decode step): kiln::gemmSkinny (cuda/gemm_skinny.cuh) when the weight is a row-major
/// parameter shared by the batch; the kernel also carries its Hopper and mma.sync tiles.
inline constexpr llvm::StringLiteral kSkinnyGemmTileAttrName = "kiln.skinny_gemm_tile";
/// `#kiln.l2_prefetch` on a few-row GEMM kernel of a decode step (kiln-plan-weight-prefetch):
/// before its grid-dependency wait it warms L2 with the next such GEMM's weight, its input
/// `operand`.
inline constexpr llvm::StringLiteral kL2PrefetchAttrName = "kiln.l2_prefetch";
/// `#kiln.attention_tile` on a kernel anchored on `kiln.attention` (tensor cores), or on a
/// prefill chunk's `kiln.paged_attention` (kPrefillAttentionMinQueries).
inline constexpr llvm::StringLiteral kAttentionTileAttrName = "kiln.attention_tile";
/// `#kiln.sm90_attention_tile` on a kernel anchored on `kiln.attention` whose Hopper kernel
/// (cuda/attention_sm90.cuh) kiln-select-tiles chose (`sm90-attention`); the kernel then also
/// carries the `#kiln.attention_tile` codegen uses when TMA cannot read Q, K or V.
inline constexpr llvm::StringLiteral kSm90AttentionTileAttrName = "kiln.sm90_attention_tile";
/// `#kiln.split_kv` on a decode step's paged attention kernel: its keys split over the blocks
/// of a cluster (kiln::decodeAttentionPartial with CLUSTER slots).
inline constexpr llvm::StringLiteral kSplitKvAttrName = "kiln.split_kv";
/// A string on a kernel saying why kiln-select-tiles chose its tile (prose for people).
inline constexpr llvm::StringLiteral kTileReasonAttrName = "kiln.tile_reason";

/// Largest head dim (D and Dv) the attention kernels of cuda/attention.cuh
/// take; kiln-raise-attention leaves larger ones unfused.
inline constexpr int64_t kMaxAttentionHeadDim = 256;
/// The fewest new tokens per sequence for which a paged attention (a prefill chunk) takes the
/// tensor-core attention kernel (kiln-select-tiles sets kAttentionTileAttrName on it); decode
/// steps and shorter chunks keep the decode kernel.
inline constexpr int64_t kPrefillAttentionMinQueries = 32;

/// The precision recorded on `op`'s function (or `op` itself, when it is the
/// function); fp32 when there is none (before kiln-assign-precision).
Precision getPrecision(mlir::Operation *op);

/// A GEMM whose result Y (after same-shape elementwise ops `chain`, e.g. a
/// bias add) is read only by the step-2 last-dim slices Y[..., 0::2] (`even`)
/// and Y[..., 1::2] (`odd`): a gated unit laid out by kiln-interleave-glu.
struct GluHalves {
  mlir::Value y, even, odd;
  llvm::SmallVector<mlir::Operation *> chain;
};

/// The gated-unit halves of `gemm`'s result, if it has that shape; shared by
/// kiln-fuse-pointwise (pair-epilogue groups) and the GEMM code generator.
std::optional<GluHalves> getGluHalves(mlir::Operation *gemm);

/// The `kiln.row_stats` in `kernel`'s body (a norm folded into its GEMM by
/// kiln-fuse-norm-into-gemm), or null; shared by kiln-select-tiles (no split-K)
/// and the GEMM code generator (only the Hopper GEMM computes it).
RowStatsOp getRowStats(KernelOp kernel);

/// The rows a few-row GEMM (kiln::gemmSkinny) would compute for `matmul`: batch x M when the
/// rhs is shared by the batch (the batch folds into the rows), M when there is one batch, 0
/// otherwise.
int64_t fewRowGemmRows(MatMulOp matmul);

/// Whether kiln-select-tiles (with skinny-gemm on, on the Hopper GEMM's path) gives `matmul` a
/// `#kiln.skinny_gemm_tile`: 1..16 rows (fewRowGemmRows), N % 4 == 0 and K >= 64. Shared with
/// kiln-fuse-norm-into-gemm, which folds an RMS norm into such GEMMs' A loader.
bool isFewRowGemm(MatMulOp matmul);

/// The kernel input that result `resultIndex` of `kernel` is written into in
/// place, or none: a result yielded by `kiln.kv_cache_append` is the cache
/// operand's buffer (a runtime-owned graph input), not a new arena buffer.
/// kiln-plan-memory and the artifact writer both follow it.
std::optional<unsigned> getInPlaceInput(KernelOp kernel, unsigned resultIndex);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_KERNELPLAN_H
