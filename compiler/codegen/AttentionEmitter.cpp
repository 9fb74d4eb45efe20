//===- AttentionEmitter.cpp - kiln.attention kernels ----------------------===//
//
// `kiln.attention` -> one launch of a fused attention kernel (cuda/attention.cuh):
//  - kiln::attentionTC (mma.sync tensor cores, FlashAttention-2 online softmax) when the storage
//    type is f16/bf16, D == Dv is a multiple of 16 up to 256, and Q, K and V are strided views
//    of kernel parameters with unit stride along D and 16-byte aligned rows (the usual case:
//    slices, reshapes and head transposes of a QKV projection);
//  - kiln::attentionSimt otherwise (fp32, odd head dims, operands behind other fused producers),
//    reading operands through per-element loader lambdas.
//  - kiln::attentionSm90 (cuda/attention_sm90.cuh: TMA, warp-specialized wgmma) instead of
//    attentionTC when kiln-select-tiles also set a `#kiln.sm90_attention_tile` (sm_90 targets,
//    `--hopper-attention`) and Q, K and V are TMA-readable: views of kernel parameters of the
//    storage type with unit stride along D, 16-byte aligned offset and strides, no stride-0
//    broadcast along a dim of size > 1; a rotary on Q is applied to the tile in shared memory,
//    one on K (--attention-key-rotary=fused) keeps attentionTC.
// The additive mask is read through a loader lambda in all (fused producers allowed). The
// result is written [B, Hq, Sq, Dv] or [B, Sq, Hq, Dv] (`bshd_output`). The tensor-core tiles
// are kiln-select-tiles' `#kiln.attention_tile` / `#kiln.sm90_attention_tile`; shared-memory
// sizes come from cuda/smem_sizes.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/AttentionOperands.h"
#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/KernelEmitter.h"
#include "compiler/codegen/StridedView.h"
#include "compiler/codegen/cuda/smem_sizes.h"
#include "dialects/kiln/KernelPlan.h"
#include "dialects/kiln/KilnTarget.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

FailureOr<std::string> kiln::codegen::attnLoader4(ExprEmitter &expr, Value operand) {
  expr.beginBody("    ");
  ExprEmitter::Coords coords = {"b", "h", "i", "j"};
  auto type = cast<RankedTensorType>(operand.getType());
  auto v = expr.emitValue(operand, broadcastCoords(coords, type.getShape()));
  if (failed(v))
    return failure();
  return llvm::formatv("[&](long long b, long long h, long long i, long long j) -> float {{\n{0}"
                       "    return {1};\n  }",
                       expr.getBody(), *v)
      .str();
}

std::optional<GeneratedKernel::TensorMapArg>
kiln::codegen::attnTensorMap(KernelOp kernel, Value operand, ArrayRef<unsigned> passed, Type et,
                             int64_t boxRows, double &scale) {
  FailureOr<StridedView> view = analyzeStridedView(kernel, operand);
  if (failed(view) || view->shape.size() != 4)
    return std::nullopt;
  if (cast<RankedTensorType>(view->param.getType()).getElementType() != et)
    return std::nullopt;
  auto it = llvm::find(passed, view->param.getArgNumber());
  if (it == passed.end()) // inlined as a literal: nothing to map
    return std::nullopt;
  constexpr int64_t kElem = 2; // f16 / bf16
  if (view->strides[3] != 1 || (view->offset * kElem) % 16)
    return std::nullopt;
  GeneratedKernel::TensorMapArg map;
  map.arg = unsigned(it - passed.begin());
  map.offsetBytes = uint64_t(view->offset * kElem);
  map.elementType = et;
  // {D, S, H, B}: view dims 3, 2, 1, 0. A size-1 dim has stride 0 in the view; the map needs a
  // positive 16-byte multiple, never stepped over.
  for (int d : {3, 2, 1, 0})
    map.dims.push_back(uint64_t(view->shape[d]));
  for (int d : {2, 1, 0}) {
    int64_t stride = view->strides[d];
    if (view->shape[d] == 1 && stride == 0)
      stride = 8;
    if (stride <= 0 || (stride * kElem) % 16)
      return std::nullopt;
    map.strides.push_back(uint64_t(stride * kElem));
  }
  map.box = {64u, uint32_t(boxRows), 1u, 1u};
  map.swizzle = GeneratedKernel::TensorMapArg::Swizzle::B128;
  scale *= view->scale;
  return map;
}

FailureOr<std::string> kiln::codegen::attnRope(ExprEmitter &expr, Value operand, Value &source) {
  source = operand;
  auto rotary = operand.getDefiningOp<RotaryOp>();
  if (!rotary)
    return std::string("kiln::NoRope{}");
  source = rotary.getInput();
  auto c = attnLoader4(expr, rotary.getCos());
  auto s = attnLoader4(expr, rotary.getSin());
  if (failed(c) || failed(s))
    return failure();
  return "kiln::makeRope(" + *c + ", " + *s + ")";
}

std::string kiln::codegen::sm90AttentionSignature(std::string signature, unsigned threads) {
  setMinBlocksPerSm(signature, threads, 1);
  assert(!signature.empty() && signature.back() == ')');
  signature.pop_back();
  return signature + ", const __grid_constant__ kiln::TensorMap tmap0, const __grid_constant__ "
                     "kiln::TensorMap tmap1, const __grid_constant__ kiln::TensorMap tmap2)";
}

void kiln::codegen::setSm90AttentionLaunch(GeneratedKernel &out, KernelOp kernel,
                                           Sm90AttentionTileAttr tile, int64_t batch,
                                           int64_t heads, int64_t queries, int64_t headDim) {
  const int64_t bm = tile.getQueryTile(), mBlocks = (queries + bm - 1) / bm;
  out.block = {unsigned(tile.getThreads()), 1, 1};
  if (tile.getPersistent())
    out.grid = {unsigned(std::min(mBlocks * heads * batch,
                                  getTargetOrDefault(kernel).getSmCount())),
                1, 1};
  else
    out.grid = {unsigned(mBlocks), unsigned(heads), unsigned(batch)};
  out.sharedMemBytes = unsigned(
      smem_bytes::attentionSm90(headDim, bm, tile.getKeyTile(), tile.getStages()));
}

namespace {

FailureOr<GeneratedKernel> emitAttention(KernelOp kernel, Operation *anchor) {
  auto op = cast<AttentionOp>(anchor);
  if (kernel.getYield().getNumOperands() != 1 ||
      kernel.getYield().getValues()[0] != op.getResult())
    return kernel.emitError() << "unsupported: attention kernel @" << kernel.getSymName()
                              << " with fused consumers (an epilogue)";
  auto qt = cast<RankedTensorType>(op.getQuery().getType());
  auto kt = cast<RankedTensorType>(op.getKey().getType());
  auto vt = cast<RankedTensorType>(op.getValue().getType());
  const int64_t B = qt.getDimSize(0), Hq = qt.getDimSize(1), Sq = qt.getDimSize(2),
                D = qt.getDimSize(3), Hkv = kt.getDimSize(1), Sk = kt.getDimSize(2),
                Dv = vt.getDimSize(3);
  Type et = qt.getElementType();
  auto storage = cudaStorageType(et);
  if (failed(storage) || !isa<FloatType>(et))
    return kernel.emitError() << "unsupported: attention on " << et << " in kernel @"
                              << kernel.getSymName();
  if (D > kMaxAttentionHeadDim || Dv > kMaxAttentionHeadDim)
    return kernel.emitError() << "unsupported: attention head dims D=" << D << ", Dv=" << Dv
                              << " in kernel @" << kernel.getSymName()
                              << " (kiln's attention kernels take at most 256)";
  if (B > 65535 || Hq > 65535 || Sq > INT32_MAX / 2 || Sk > INT32_MAX / 2)
    return kernel.emitError() << "unsupported: attention of batch " << B << ", " << Hq
                              << " heads, Sq=" << Sq << ", Sk=" << Sk << " in kernel @"
                              << kernel.getSymName() << " exceeds the CUDA grid limits";

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([](unsigned) { return true; });

  // Output strides (elements) of the result tensor out0.
  int64_t osb = Hq * Sq * Dv, osh, oss;
  if (op.getBshdOutput())
    osh = Dv, oss = Hq * Dv;
  else
    osh = Sq * Dv, oss = Dv;

  double scale = op.getScale().convertToDouble();
  std::string mask = "kiln::NoMask{}";
  if (op.getMask()) {
    auto m = attnLoader4(expr, op.getMask());
    if (failed(m))
      return failure();
    mask = *m;
    // A mask of size 1 along the query dim (BERT's [B, 1, 1, S] padding mask) is the same for
    // every query row: attentionTC then reads it once per key column of a fragment.
    auto mt = cast<RankedTensorType>(op.getMask().getType());
    if (mt.getRank() < 2 || mt.getDimSize(mt.getRank() - 2) == 1)
      mask = "kiln::makeRowInvariantMask(" + mask + ")";
  }
  const char *causal = op.getCausal() ? "true" : "false";
  auto shapeInit = [&](double s) {
    return llvm::formatv("  const kiln::AttnShape shape{{{0}, {1}, {2}, {3}, {4}, {5}};\n", Hq,
                         Hkv, Sq, Sk, cudaLiteral(Float32Type::get(kernel.getContext()), s, 0),
                         op.getZeroMaskedRows() ? "true" : "false")
        .str();
  };

  // Tensor cores: 16-bit storage, D == Dv multiple of 16 (kiln-select-tiles then chose a
  // tile), aligned unit-stride views.
  auto tile = kernel->getAttrOfType<AttentionTileAttr>(kAttentionTileAttrName);
  if (isNarrowFloat(et) && D == Dv && D % 16 == 0 && !tile)
    return kernel.emitError() << "attention kernel @" << kernel.getSymName() << " has no '"
                              << kAttentionTileAttrName << "' (run kiln-select-tiles)";
  if (tile && isNarrowFloat(et) && D == Dv && D % 16 == 0) {
    double tcScale = scale, vScale = 1.0;
    // A kiln.rotary on Q or K (fused prologue) is applied to the tiles in shared memory: the
    // tile is read from the rotary's input, and cos/sin through loader lambdas.
    Value qSource, kSource;
    auto ropeQ = attnRope(expr, op.getQuery(), qSource);
    auto ropeK = attnRope(expr, op.getKey(), kSource);
    if (failed(ropeQ) || failed(ropeK))
      return failure();
    // The Hopper kernel: TMA reads Q (or the input of its rotary, applied to the tile in shared
    // memory), K and V straight from the parameters; a rotary on K is not fused there.
    auto sm90Tile = kernel->getAttrOfType<Sm90AttentionTileAttr>(kSm90AttentionTileAttrName);
    if (sm90Tile && kSource == op.getKey()) {
      double hScale = scale, hvScale = 1.0;
      const int64_t bm = sm90Tile.getQueryTile(), bn = sm90Tile.getKeyTile();
      auto mq = attnTensorMap(kernel, qSource, passed, et, bm, hScale);
      auto mk = attnTensorMap(kernel, op.getKey(), passed, et, bn, hScale);
      auto mv = attnTensorMap(kernel, op.getValue(), passed, et, bn, hvScale);
      if (mq && mk && mv && hvScale == 1.0) {
        const unsigned threads = unsigned(sm90Tile.getThreads());
        auto sig = buildSignature(kernel, passed, out.args, threads);
        if (failed(sig))
          return failure();
        std::string signature = sm90AttentionSignature(*sig, threads);
        out.tensorMaps = {*mq, *mk, *mv};
        out.source =
            llvm::formatv("// attention [{0}x{1}x{2}x{3}] keys {4} (kv heads {5}), {6}{7}, "
                          "Hopper TMA + wgmma (attention_sm90.cuh), {8} keys x {9} queries per "
                          "tile\n",
                          B, Hq, Sq, D, Sk, Hkv, op.getCausal() ? "causal" : "not causal",
                          op.getMask() ? ", additive mask" : "", bn, bm)
                .str() +
            signature + " {\n  extern __shared__ __align__(128) char kiln_smem[];\n" +
            shapeInit(hScale) +
            llvm::formatv("  const kiln::AttnOut<{0}> o{{out0, {1}LL, {2}LL, {3}LL};\n", *storage,
                          osb, osh, oss)
                .str() +
            "  auto mask = " + mask + ";\n  const auto ropeQ = " + *ropeQ + ";\n" +
            llvm::formatv("  kiln::attentionSm90<{0}, {1}, {2}, {3}, {4}, {5}, {6}>(&tmap0, "
                          "&tmap1, &tmap2, mask, o, shape, kiln_smem, ropeQ{7});\n}\n",
                          *storage, D, bm, bn, sm90Tile.getStages(), causal,
                          sm90Tile.getPingpong() ? "true" : "false",
                          sm90Tile.getPersistent() ? ", " + std::to_string(B) : std::string())
                .str();
        setSm90AttentionLaunch(out, kernel, sm90Tile, B, Hq, Sq, D);
        return out;
      }
    }
    auto q = attnTensorView(kernel, qSource, passed, *storage, tcScale);
    auto k = attnTensorView(kernel, kSource, passed, *storage, tcScale);
    auto v = attnTensorView(kernel, op.getValue(), passed, *storage, vScale);
    if (succeeded(q) && succeeded(k) && succeeded(v) && vScale == 1.0) {
      const int64_t warps = tile.getWarps(), mf = tile.getRowFragments(), bn = tile.getKeyTile(),
                    bm = tile.getQueryTile();
      auto sig = buildSignature(kernel, passed, out.args, 32 * warps);
      if (failed(sig))
        return failure();
      out.source =
          llvm::formatv("// attention [{0}x{1}x{2}x{3}] keys {4} (kv heads {5}), {6}{7}, tensor "
                        "cores (mma.sync), {8} keys x {9} queries per tile\n",
                        B, Hq, Sq, D, Sk, Hkv, op.getCausal() ? "causal" : "not causal",
                        op.getMask() ? ", additive mask" : "", bn, bm)
              .str() +
          *sig + " {\n  extern __shared__ __align__(128) char kiln_smem[];\n" +
          shapeInit(tcScale) + "  const auto q = " + *q + ";\n  const auto k = " + *k +
          ";\n  const auto v = " + *v + ";\n" +
          llvm::formatv("  const kiln::AttnOut<{0}> o{{out0, {1}LL, {2}LL, {3}LL};\n", *storage,
                        osb, osh, oss)
              .str() +
          "  auto mask = " + mask + ";\n  const auto ropeQ = " + *ropeQ +
          ";\n  const auto ropeK = " + *ropeK + ";\n" +
          llvm::formatv("  kiln::attentionTC<{0}, {1}, {2}, {3}, {4}, {5}>(q, k, v, mask, o, "
                        "shape, kiln_smem, ropeQ, ropeK);\n}\n",
                        *storage, D, bn, warps, mf, causal)
              .str();
      out.block = {unsigned(32 * warps), 1, 1};
      out.grid = {unsigned((Sq + bm - 1) / bm), unsigned(Hq), unsigned(B)};
      out.sharedMemBytes = unsigned(smem_bytes::attentionTc(D, bm, bn));
      return out;
    }
  }

  // CUDA cores, any operand through loader lambdas.
  const int warps = 8;
  auto sig = buildSignature(kernel, passed, out.args, 32 * warps);
  if (failed(sig))
    return failure();
  auto q = attnLoader4(expr, op.getQuery());
  auto k = attnLoader4(expr, op.getKey());
  auto v = attnLoader4(expr, op.getValue());
  if (failed(q) || failed(k) || failed(v))
    return failure();
  std::string store =
      llvm::formatv("[&](long long b, long long h, long long i, long long d, float x) {{\n"
                    "    out0[b * {0}LL + h * {1}LL + i * {2}LL + d] = {3};\n  }",
                    osb, osh, oss, storeValue(et, "x"))
          .str();
  out.source =
      llvm::formatv("// attention [{0}x{1}x{2}x{3}] keys {4} (kv heads {5}), {6}{7}, CUDA "
                    "cores\n",
                    B, Hq, Sq, D, Sk, Hkv, op.getCausal() ? "causal" : "not causal",
                    op.getMask() ? ", additive mask" : "")
          .str() +
      *sig + " {\n  extern __shared__ __align__(128) char kiln_smem[];\n" + shapeInit(scale) +
      "  auto qf = " + *q + ";\n  auto kf = " + *k + ";\n  auto vf = " + *v +
      ";\n  auto mask = " + mask + ";\n  auto store = " + store + ";\n" +
      llvm::formatv("  kiln::attentionSimt<{0}, {1}, {2}, {3}>(qf, kf, vf, mask, store, shape, "
                    "kiln_smem);\n}\n",
                    D, Dv, warps, causal)
          .str();
  out.block = {unsigned(32 * warps), 1, 1};
  out.grid = {unsigned((Sq + warps - 1) / warps), unsigned(Hq), unsigned(B)};
  out.sharedMemBytes = unsigned(smem_bytes::attentionSimt(D, Dv, warps));
  return out;
}

} // namespace

void kiln::codegen::populateAttentionEmitters(EmitterRegistry &registry) {
  registry.addAnchor<AttentionOp>(emitAttention, /*acceptsFusedOps=*/true);
}
