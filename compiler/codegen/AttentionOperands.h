//===- AttentionOperands.h - operands of the attention kernels ------------===//
//
// What the attention emitters (AttentionEmitter.cpp for kiln.attention,
// DecodeAttentionEmitter.cpp for kiln.paged_attention) share: per-element
// loader lambdas, the TMA maps of the Hopper kernel's operands, the rotary
// prologue on Q, and the Hopper kernel's signature.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/KernelEmitter.h"

#include <optional>
#include <string>

namespace kiln::codegen {

/// A loader lambda `[&](long long b, long long h, long long i, long long j) -> float` evaluating
/// `operand` (rank <= 4, broadcast into the 4 coordinates) through its fused producers.
/// Failure with a diagnostic where codegen cannot evaluate a producer.
mlir::FailureOr<std::string> attnLoader4(ExprEmitter &expr, mlir::Value operand);

/// The rank-4 tensor map {D, S, H, B} (box {64, boxRows, 1, 1}, swizzle 128B) through which
/// kiln::attentionSm90 reads `operand`, a [B, H, S, D] value of `kernel`'s body of element type
/// `et` (f16 / bf16), or std::nullopt when TMA cannot read it: not a strided view of a passed
/// kernel parameter of type `et`, D not of unit stride, offset or strides not multiples of 16
/// bytes. Multiplies `scale` by the view's scalar factor.
std::optional<GeneratedKernel::TensorMapArg> attnTensorMap(KernelOp kernel, mlir::Value operand,
                                                           llvm::ArrayRef<unsigned> passed,
                                                           mlir::Type et, int64_t boxRows,
                                                           double &scale);

/// A kiln.rotary producing `operand` (fused as a prologue) as `kiln::makeRope(cos, sin)` over
/// loader lambdas, with `source` set to the rotary's input; `kiln::NoRope{}` and `source` =
/// `operand` without one. Failure with a diagnostic where cos or sin cannot be evaluated.
mlir::FailureOr<std::string> attnRope(ExprEmitter &expr, mlir::Value operand, mlir::Value &source);

/// `signature` (buildSignature's, `threads` per block) as the Hopper attention kernel's:
/// __launch_bounds__(threads, 1) (setmaxnreg needs the register cap of one block per SM) and
/// the three tensor maps `tmap0..2` (Q, K, V) as `__grid_constant__` parameters after the
/// others.
std::string sm90AttentionSignature(std::string signature, unsigned threads);

/// The launch of a Hopper attention kernel with `tile` over `queries` query rows of `heads`
/// heads and `batch` sequences, head dim `headDim`, into `out`: tile.getThreads() threads,
/// grid (query tiles, heads, batch), or with a persistent tile at most one block per SM of
/// `kernel`'s target walking every query tile; smem_bytes::attentionSm90 of shared memory.
void setSm90AttentionLaunch(GeneratedKernel &out, KernelOp kernel, Sm90AttentionTileAttr tile,
                            int64_t batch, int64_t heads, int64_t queries, int64_t headDim);

} // namespace kiln::codegen
