//===- KilnAttrs.cpp - kiln attribute verifiers ---------------------------===//
//
// The verifiers of the kernel-plan attributes (KilnAttrs.td): each tile
// attribute checks the rules of its device template in
// compiler/codegen/cuda/ once, so a tile that verifies compiles. Also the
// dialect's check of the discardable `kiln.*` attributes of the plan: each
// has its attribute kind, and tiles sit on `kiln.kernel` ops.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KernelPlan.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace kiln;

namespace {
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// 16, 32 or a multiple of 64: a tile line of 2, 4 or a multiple of 8
/// 16-byte chunks of 16-bit elements (gemm_tc.cuh's swizzle).
bool isSwizzleLine(int64_t n) { return n == 16 || n == 32 || (n > 0 && n % 64 == 0); }
} // namespace

LogicalResult TargetAttr::verify(EmitErrorFn emitError, StringRef name, int64_t arch,
                                 int64_t smCount, int64_t smemPerBlock, int64_t smemPerSm,
                                 int64_t regsPerSm, int64_t l2Bytes, int64_t memoryBytes,
                                 TensorCores tensorCores) {
  if (name.empty())
    return emitError() << "target name must not be empty";
  if (arch < 10)
    return emitError() << "target arch must be an SM version such as 90, got " << arch;
  if (smCount <= 0)
    return emitError() << "target sm_count must be positive, got " << smCount;
  if (smemPerBlock <= 0 || smemPerBlock > smemPerSm)
    return emitError() << "target smem_per_block (" << smemPerBlock
                       << ") must be positive and at most smem_per_sm (" << smemPerSm << ")";
  if (regsPerSm <= 0)
    return emitError() << "target regs_per_sm must be positive, got " << regsPerSm;
  if (l2Bytes < 0)
    return emitError() << "target l2_bytes must not be negative, got " << l2Bytes;
  if (memoryBytes < 0)
    return emitError() << "target memory_bytes must not be negative, got " << memoryBytes;
  if (tensorCores == TensorCores::Wgmma && arch != 90)
    return emitError() << "target tensor_cores = wgmma needs arch 90 (wgmma is sm_90a only), got "
                       << arch;
  if (tensorCores == TensorCores::MmaSync && arch < 80)
    return emitError() << "target tensor_cores = mma_sync needs arch 80 or newer (cp.async, bf16 "
                          "mma), got "
                       << arch;
  return success();
}

LogicalResult GemmTileAttr::verify(EmitErrorFn emitError, int64_t bm, int64_t bn, int64_t bk,
                                   int64_t tm, int64_t tn, int64_t ks) {
  if (bm <= 0 || bn <= 0 || bk <= 0 || tm <= 0 || tn <= 0 || ks <= 0)
    return emitError() << "gemm_tile extents must be positive, got bm = " << bm << ", bn = " << bn
                       << ", bk = " << bk << ", tm = " << tm << ", tn = " << tn << ", ks = " << ks;
  if (bm % tm || bn % tn)
    return emitError() << "gemm_tile micro-tile " << tm << "x" << tn
                       << " must divide the block tile " << bm << "x" << bn;
  if (bk % ks)
    return emitError() << "gemm_tile bk (" << bk << ") must split evenly over ks (" << ks
                       << ") thread groups";
  if ((bm / tm) * (bn / tn) * ks > 1024)
    return emitError() << "gemm_tile needs " << (bm / tm) * (bn / tn) * ks
                       << " threads per block, more than CUDA's 1024";
  return success();
}

LogicalResult MmaTileAttr::verify(EmitErrorFn emitError, int64_t bm, int64_t bn, int64_t bk,
                                  int64_t wm, int64_t wn, int64_t stages) {
  // Bounds first, so the arithmetic below cannot overflow.
  if (bm <= 0 || bn <= 0 || bk <= 0 || bm > 1024 || bn > 1024 || bk > 1024)
    return emitError() << "mma_tile bm, bn and bk must be in 1..1024, got " << bm << ", " << bn
                       << ", " << bk;
  if (wm <= 0 || wn <= 0 || wm > 32 || wn > 32 || wm * wn > 32)
    return emitError() << "mma_tile needs 1 to 32 warps (wm x wn), got " << wm << " x " << wn;
  if (stages < 2 || stages > 64)
    return emitError() << "mma_tile stages must be in 2..64, got " << stages;
  if (bm % (16 * wm) || bn % (8 * wn))
    return emitError() << "mma_tile bm (" << bm << ") must be a multiple of 16 x wm (" << 16 * wm
                       << ") and bn (" << bn << ") of 8 x wn (" << 8 * wn << ")";
  if (!isSwizzleLine(bm) || !isSwizzleLine(bn) || !isSwizzleLine(bk))
    return emitError() << "mma_tile bm, bn and bk must each be 16, 32 or a multiple of 64, got "
                       << bm << ", " << bn << ", " << bk;
  int64_t threads = 32 * wm * wn;
  if (threads % (bm / 8) || threads % (bn / 8) || threads % (bk / 8))
    return emitError() << "mma_tile's " << threads << " threads must be a multiple of bm/8 ("
                       << bm / 8 << "), bn/8 (" << bn / 8 << ") and bk/8 (" << bk / 8 << ")";
  // Beyond 128 fp32 accumulators per thread they spill and NVRTC takes minutes.
  if ((bm / wm) * (bn / wn) / 32 > 128)
    return emitError() << "mma_tile needs " << (bm / wm) * (bn / wn) / 32
                       << " fp32 accumulators per thread, more than 128";
  return success();
}

LogicalResult WgmmaTileAttr::verify(EmitErrorFn emitError, int64_t bm, int64_t bn, int64_t bk,
                                    int64_t warpgroups, int64_t stages) {
  if (bk != 64)
    return emitError() << "wgmma_tile bk must be 64 (one 128-byte swizzle line), got " << bk;
  if (warpgroups < 1 || warpgroups > 8 || bm <= 0 || bm % (64 * warpgroups))
    return emitError() << "wgmma_tile bm (" << bm << ") must be a multiple of 64 x warpgroups ("
                       << warpgroups << ", 1..8)";
  if (bn <= 0 || bn % 64 || bn > 256)
    return emitError() << "wgmma_tile bn must be 64, 128, 192 or 256, got " << bn;
  if (bm / warpgroups / 64 * bn / 2 > 128)
    return emitError() << "wgmma_tile needs " << bm / warpgroups / 64 * bn / 2
                       << " fp32 accumulators per thread, more than 128";
  if (stages < 3 || stages > 64)
    return emitError() << "wgmma_tile stages must be in 3..64, got " << stages;
  return success();
}

LogicalResult Sm90GemmTileAttr::verify(EmitErrorFn emitError, int64_t bm, int64_t bn,
                                       int64_t consumers, int64_t stages, int64_t splitK,
                                       bool pingpong) {
  if (bn != 64 && bn != 128 && bn != 192 && bn != 256)
    return emitError() << "sm90_gemm_tile bn must be 64, 128, 192 or 256, got " << bn;
  if (consumers != 1 && consumers != 2)
    return emitError() << "sm90_gemm_tile consumers must be 1 or 2, got " << consumers;
  const int64_t rowsPerConsumer = pingpong ? bm : bm / consumers;
  if (bm <= 0 || bm > 256 || bm % (pingpong ? 64 : 64 * consumers))
    return emitError() << "sm90_gemm_tile bm (" << bm << ") must be a multiple of "
                       << (pingpong ? 64 : 64 * consumers) << " (64 x "
                       << (pingpong ? "1 with pingpong" : "consumers") << "), at most 256";
  if (rowsPerConsumer / 64 * bn / 2 > 128)
    return emitError() << "sm90_gemm_tile needs " << rowsPerConsumer / 64 * bn / 2
                       << " fp32 accumulators per consumer thread, more than 128";
  if (stages < 2 || stages > 32)
    return emitError() << "sm90_gemm_tile stages must be in 2..32, got " << stages;
  if (splitK < 1 || splitK > 8 || bm % (8 * splitK))
    return emitError() << "sm90_gemm_tile split_k (" << splitK
                       << ") must be in 1..8 (a portable cluster) and divide bm / 8 (" << bm / 8
                       << ")";
  if (splitK > 1 && bm * (bn + 8) * 4 > stages * (bm + bn) * 128)
    return emitError() << "sm90_gemm_tile split-K partial tile of " << bm * (bn + 8) * 4
                       << " bytes does not fit in the " << stages * (bm + bn) * 128
                       << "-byte pipeline";
  if (pingpong && (consumers != 2 || splitK != 1))
    return emitError() << "sm90_gemm_tile pingpong needs consumers = 2 and split_k = 1";
  return success();
}

LogicalResult SkinnyGemmTileAttr::verify(EmitErrorFn emitError, int64_t rows, int64_t splitK,
                                         bool tensorCores, bool preload, bool /*l2Prefetch*/,
                                         int64_t aChunk, int64_t minBlocksPerSm) {
  if (rows < 1 || rows > 16)
    return emitError() << "skinny_gemm_tile rows must be in 1..16, got " << rows;
  if (splitK < 1 || splitK > 8)
    return emitError() << "skinny_gemm_tile split_k must be in 1..8 (a portable cluster), got "
                       << splitK;
  if (preload && !tensorCores)
    return emitError() << "skinny_gemm_tile preload needs tensor_cores = true (the weight is "
                          "preloaded into the tensor-core path's rings)";
  if (aChunk != 0 && (aChunk < 128 || aChunk > 2048 || aChunk % 128 != 0))
    return emitError() << "skinny_gemm_tile a_chunk must be 0 (the default) or a multiple of 128 "
                          "in 128..2048 (whole rounds of the 8 warps' 16-row steps), got "
                       << aChunk;
  if (aChunk != 0 && !tensorCores)
    return emitError() << "skinny_gemm_tile a_chunk needs tensor_cores = true (it is the "
                          "tensor-core path's A chunk)";
  if (minBlocksPerSm < 0 || minBlocksPerSm > 8)
    return emitError() << "skinny_gemm_tile min_blocks_per_sm must be in 0..8, got "
                       << minBlocksPerSm;
  return success();
}

LogicalResult L2PrefetchAttr::verify(EmitErrorFn emitError, int64_t operand, int64_t bytes) {
  if (operand < 0)
    return emitError() << "l2_prefetch operand must be >= 0, got " << operand;
  if (bytes <= 0 || bytes % 16)
    return emitError() << "l2_prefetch bytes must be a positive multiple of 16, got " << bytes;
  return success();
}

LogicalResult SplitKvAttr::verify(EmitErrorFn emitError, int64_t slots, bool /*preload*/) {
  if (slots < 2 || slots > 8)
    return emitError() << "split_kv slots must be in 2..8 (a portable cluster), got " << slots;
  return success();
}

LogicalResult AttentionTileAttr::verify(EmitErrorFn emitError, int64_t warps, int64_t rowFragments,
                                        int64_t keyTile) {
  if (warps < 1 || warps > 32)
    return emitError() << "attention_tile warps must be in 1..32, got " << warps;
  if (rowFragments < 1 || rowFragments > 8)
    return emitError() << "attention_tile row_fragments must be in 1..8, got " << rowFragments;
  if (keyTile <= 0 || keyTile % 16 || keyTile > 256)
    return emitError() << "attention_tile key_tile must be a multiple of 16 up to 256, got "
                       << keyTile;
  return success();
}

LogicalResult Sm90AttentionTileAttr::verify(EmitErrorFn emitError, int64_t queryTile,
                                            int64_t keyTile, int64_t stages, bool pingpong,
                                            bool) {
  if (queryTile != 128 && queryTile != 192)
    return emitError() << "sm90_attention_tile query_tile must be 128 or 192 (64 rows per "
                          "consumer warpgroup), got "
                       << queryTile;
  if (keyTile != 64 && keyTile != 128 && keyTile != 192)
    return emitError() << "sm90_attention_tile key_tile must be 64, 128 or 192, got " << keyTile;
  if (stages < 2 || stages > 8)
    return emitError() << "sm90_attention_tile stages must be in 2..8, got " << stages;
  if (pingpong && queryTile != 128)
    return emitError() << "sm90_attention_tile pingpong needs query_tile = 128 (two consumers), "
                          "got "
                       << queryTile;
  return success();
}

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto expect = [&](bool ok, StringRef kind) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError() << "'" << name << "' must be " << kind << ", got " << attr.getValue();
  };
  if (name == kTargetAttrName)
    return expect(isa<TargetAttr>(attr.getValue()), "a #kiln.target");
  if (name == kPrecisionAttrName)
    return expect(isa<PrecisionAttr>(attr.getValue()), "a #kiln.precision");
  if (name == kTileReasonAttrName)
    return expect(isa<StringAttr>(attr.getValue()), "a string");
  bool tile = true;
  LogicalResult kind = success();
  if (name == kGemmTileAttrName)
    kind = expect(isa<GemmTileAttr>(attr.getValue()), "a #kiln.gemm_tile");
  else if (name == kMmaTileAttrName)
    kind = expect(isa<MmaTileAttr>(attr.getValue()), "a #kiln.mma_tile");
  else if (name == kWgmmaTileAttrName)
    kind = expect(isa<WgmmaTileAttr>(attr.getValue()), "a #kiln.wgmma_tile");
  else if (name == kSm90GemmTileAttrName)
    kind = expect(isa<Sm90GemmTileAttr>(attr.getValue()), "a #kiln.sm90_gemm_tile");
  else if (name == kSkinnyGemmTileAttrName)
    kind = expect(isa<SkinnyGemmTileAttr>(attr.getValue()), "a #kiln.skinny_gemm_tile");
  else if (name == kAttentionTileAttrName)
    kind = expect(isa<AttentionTileAttr>(attr.getValue()), "a #kiln.attention_tile");
  else if (name == kSm90AttentionTileAttrName)
    kind = expect(isa<Sm90AttentionTileAttr>(attr.getValue()), "a #kiln.sm90_attention_tile");
  else if (name == kSplitKvAttrName)
    kind = expect(isa<SplitKvAttr>(attr.getValue()), "a #kiln.split_kv");
  else
    tile = false;
  if (failed(kind))
    return failure();
  if (tile && !isa<KernelOp>(op))
    return op->emitError() << "'" << name << "' belongs on a kiln.kernel, not on " << op->getName();
  return success();
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned region, unsigned arg,
                                                    NamedAttribute attr) {
  if (attr.getName().getValue() == kRoleAttrName && !isa<InputRoleAttr>(attr.getValue()))
    return op->emitError() << "'" << kRoleAttrName << "' of argument " << arg
                           << " must be a #kiln.input_role, got " << attr.getValue();
  return success();
}
