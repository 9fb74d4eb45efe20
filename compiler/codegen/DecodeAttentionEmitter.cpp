//===- DecodeAttentionEmitter.cpp - KV-cache kernels of a generation step -===//
//
// The kernels of kiln-paged-kv-cache's ops, one launch each, from
// cuda/decode_attention.cuh:
//  - `kiln.kv_cache_append` -> kiln::kvCacheAppend: this step's keys and
//    values (strided views of kernel parameters, bshd or bhsd) into the
//    layer's pools, in place (the results are the cache inputs' buffers);
//  - `kiln.paged_attention` -> kiln::decodeAttentionPartial: with a
//    `#kiln.split_kv<slots = S>` (kiln-select-tiles, sm_90) the keys of each
//    (sequence, KV group) split over a cluster of S blocks that combine their
//    partials over distributed shared memory; otherwise one split slot per
//    (sequence, KV group), whose block writes the normalized rows itself.
//    Either way no workspace and no reduce launch are needed. A decode step
//    whose append kiln-fuse-kv-append merged into the kernel passes the new
//    keys and values along (kNew, vNew): the blocks write them to the pools,
//    which are then the kernel's results 1 and 2 (in place). A prefill
//    chunk with a `#kiln.attention_tile` (kiln-select-tiles) instead ->
//    kiln::prefillAttentionPaged, the tensor-core attention over the cache,
//    or, with a `#kiln.sm90_attention_tile` as well (kiln-select-tiles
//    sm90-prefill-attention) and a query TMA can read (a strided view of a
//    parameter, or the input of its rotary), kiln::prefillAttentionSm90Paged:
//    the Hopper kernel with K/V tiles read from the pools by TMA through the
//    block table.
// The cache layout is read from the types: pools [NB, Hkv, BS, D], block
// table [B, MB].
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/AttentionOperands.h"
#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/KernelEmitter.h"
#include "compiler/codegen/StridedView.h"
#include "compiler/codegen/cuda/decode_attention.cuh"
#include "compiler/codegen/cuda/smem_sizes.h"
#include "dialects/kiln/KernelPlan.h"
#include "dialects/kiln/KilnTarget.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

RankedTensorType rtt(Value v) { return cast<RankedTensorType>(v.getType()); }

/// The kernel-parameter number of a body value that is a kernel operand
/// itself (the cache pools, block table and lengths are never fused), or
/// failure with a diagnostic naming `what`.
FailureOr<unsigned> paramOf(KernelOp kernel, Value v, StringRef what) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &kernel.getBody().front())
    return kernel.emitError() << "unsupported: the " << what << " of kernel @"
                              << kernel.getSymName() << " is computed inside the kernel";
  return arg.getArgNumber();
}

/// Element type checks both ops share: f16, bf16 or f32 storage; D a multiple
/// of 16 up to 256 (cuda/decode_attention.cuh's Config).
LogicalResult checkHeadDim(KernelOp kernel, Type et, int64_t D, int64_t Dv) {
  if (!isa<FloatType>(et) || failed(cudaStorageType(et)))
    return kernel.emitError() << "unsupported: KV cache of " << et << " in kernel @"
                              << kernel.getSymName();
  if (D != Dv || D % 16 || D > 256)
    return kernel.emitError() << "unsupported: KV cache head dims D=" << D << ", Dv=" << Dv
                              << " in kernel @" << kernel.getSymName()
                              << " (the decode kernels take D == Dv, a multiple of 16 up to 256)";
  return success();
}

/// `kiln::PagedKvCache<T>{k, v, table, lens, blockSize, maxBlocksPerSeq}` over
/// the pools `k`/`v` (pointer expressions), the table and the lengths params.
std::string cacheInit(const std::string &type, const std::string &k, const std::string &v,
                      unsigned table, unsigned lens, RankedTensorType pool,
                      RankedTensorType tableType) {
  return llvm::formatv("  const kiln::PagedKvCache<{0}> cache{{{1}, {2}, in{3}, in{4}, {5}, {6}};\n",
                       type, k, v, table, lens, pool.getDimSize(2), tableType.getDimSize(1))
      .str();
}

/// `operand` ([B, H, S, D] in `kernel`'s body) as a source of the decode templates: the
/// `kiln::AttnTensor` view (16-byte copies; attnTensorView, its scalar factor multiplied into
/// `scale`) when `operand` is one and `scale` may change or the factor is 1, else a
/// `kiln::makeElemFn` lambda (b, h, i, d) -> float that evaluates the fused producers (a rotary
/// of a slice of the QKV GEMM's output) per element. Failure, with a diagnostic, for producers
/// codegen cannot evaluate.
FailureOr<std::string> decodeSource(KernelOp kernel, ExprEmitter &expr, Value operand,
                                    ArrayRef<unsigned> passed, const std::string &type,
                                    double &scale, bool scaleMayChange) {
  double viewScale = 1.0;
  FailureOr<std::string> view = attnTensorView(kernel, operand, passed, type, viewScale);
  if (succeeded(view) && (scaleMayChange || viewScale == 1.0)) {
    scale *= viewScale;
    return *view;
  }
  expr.beginBody("      ");
  FailureOr<std::string> value =
      expr.emitValue(operand, {"b", "h", "i", "d"});
  if (failed(value))
    return failure();
  return "kiln::makeElemFn([&](long long b, long long h, long long i, long long d) -> float {\n" +
         expr.getBody() + "      return " + *value + ";\n    })";
}

FailureOr<GeneratedKernel> emitKvCacheAppend(KernelOp kernel, Operation *anchor) {
  auto op = cast<KvCacheAppendOp>(anchor);
  auto kt = rtt(op.getKeys()), vt = rtt(op.getValues());
  auto pool = rtt(op.getKeyCache()), tableType = rtt(op.getBlockTable());
  Type et = kt.getElementType();
  const int64_t B = kt.getDimSize(0), Hkv = kt.getDimSize(1), S = kt.getDimSize(2),
                D = kt.getDimSize(3);
  if (failed(checkHeadDim(kernel, et, D, vt.getDimSize(3))))
    return failure();
  auto yield = kernel.getYield().getValues();
  if (yield.size() != 2 || yield[0] != op.getKeyResult() || yield[1] != op.getValueResult())
    return kernel.emitError() << "unsupported: KV cache append kernel @" << kernel.getSymName()
                              << " with other results";
  auto table = paramOf(kernel, op.getBlockTable(), "block table");
  auto lens = paramOf(kernel, op.getSeqLens(), "sequence lengths");
  auto kc = paramOf(kernel, op.getKeyCache(), "key cache");
  auto vc = paramOf(kernel, op.getValueCache(), "value cache");
  if (failed(table) || failed(lens) || failed(kc) || failed(vc))
    return failure();
  std::string type = *cudaStorageType(et);

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  // The pools are written through the results (the same buffers); the cache
  // operands are not passed.
  SmallVector<unsigned> passed =
      expr.bindOperands([&](unsigned i) { return i != *kc && i != *vc; });
  double kScale = 1.0, vScale = 1.0;
  auto k = decodeSource(kernel, expr, op.getKeys(), passed, type, kScale, false);
  if (failed(k))
    return failure();
  auto v = decodeSource(kernel, expr, op.getValues(), passed, type, vScale, false);
  if (failed(v))
    return failure();
  auto sig = buildSignature(kernel, passed, out.args, decode::kAppendThreads);
  if (failed(sig))
    return failure();
  out.source =
      llvm::formatv("// KV cache append [{0}x{1}x{2}x{3}], blocks of {4} tokens, {5} per "
                    "sequence\n",
                    B, Hkv, S, D, pool.getDimSize(2), tableType.getDimSize(1))
          .str() +
      *sig + " {\n  const auto k = " + *k + ";\n  const auto v = " + *v + ";\n" +
      cacheInit(type, "out0", "out1", *table, *lens, pool, tableType) +
      llvm::formatv("  const kiln::DecodeShape shape{{{0}, {1}, {1}, {2}, 1, 1.0f};\n", B, Hkv, S)
          .str() +
      llvm::formatv("  kiln::kvCacheAppend<{0}, {1}>(k, v, cache, shape);\n}\n", type, D).str();
  decode::Grid grid = decode::appendGrid(int(B), int(Hkv), int(S), int(D),
                                         int(getElementByteSize(et)));
  out.grid = {unsigned(grid.x), unsigned(grid.y), unsigned(grid.z)};
  out.block = {unsigned(decode::kAppendThreads), 1, 1};
  return out;
}

FailureOr<GeneratedKernel> emitPagedAttention(KernelOp kernel, Operation *anchor) {
  auto op = cast<PagedAttentionOp>(anchor);
  // kiln-fuse-kv-append: the pools are the results of an append in the same kernel, yielded
  // after the attention's output.
  auto append = op.getKeyCache().getDefiningOp<KvCacheAppendOp>();
  auto yielded = kernel.getYield().getValues();
  if (append) {
    if (op.getKeyCache() != append.getKeyResult() ||
        op.getValueCache() != append.getValueResult() ||
        op.getBlockTable() != append.getBlockTable() || op.getSeqLens() != append.getSeqLens() ||
        yielded.size() != 3 || yielded[1] != append.getKeyResult() ||
        yielded[2] != append.getValueResult())
      return kernel.emitError() << "unsupported: kernel @" << kernel.getSymName()
                                << " appends to a KV cache other than the one its paged "
                                   "attention reads, or yields other values";
  }
  if (yielded.size() != (append ? 3u : 1u) || yielded[0] != op.getResult())
    return kernel.emitError() << "unsupported: paged attention kernel @" << kernel.getSymName()
                              << " with fused consumers (an epilogue)";
  auto qt = rtt(op.getQuery()), pool = rtt(op.getKeyCache()),
       tableType = rtt(op.getBlockTable());
  Type et = qt.getElementType();
  const int64_t B = qt.getDimSize(0), Hq = qt.getDimSize(1), S = qt.getDimSize(2),
                D = qt.getDimSize(3), Hkv = pool.getDimSize(1),
                Dv = rtt(op.getValueCache()).getDimSize(3);
  if (failed(checkHeadDim(kernel, et, D, Dv)))
    return failure();
  if (B > 65535 || Hkv * S * Hq > INT32_MAX)
    return kernel.emitError() << "unsupported: paged attention of batch " << B << " in kernel @"
                              << kernel.getSymName() << " exceeds the CUDA grid limits";
  auto table = paramOf(kernel, op.getBlockTable(), "block table");
  auto lens = paramOf(kernel, op.getSeqLens(), "sequence lengths");
  auto kc = paramOf(kernel, append ? append.getKeyCache() : op.getKeyCache(), "key cache");
  auto vc = paramOf(kernel, append ? append.getValueCache() : op.getValueCache(), "value cache");
  if (failed(table) || failed(lens) || failed(kc) || failed(vc))
    return failure();
  std::string type = *cudaStorageType(et);

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  // With a fused append the pools are written through the results (the same buffers), as in
  // emitKvCacheAppend.
  SmallVector<unsigned> passed = expr.bindOperands(
      [&](unsigned i) { return !append || (i != *kc && i != *vc); });
  double scale = op.getScale().convertToDouble();
  auto q = decodeSource(kernel, expr, op.getQuery(), passed, type, scale, true);
  if (failed(q))
    return failure();
  std::string appendArgs, appendSources;
  if (append) {
    double kScale = 1.0, vScale = 1.0;
    auto kNew = decodeSource(kernel, expr, append.getKeys(), passed, type, kScale, false);
    if (failed(kNew))
      return failure();
    auto vNew = decodeSource(kernel, expr, append.getValues(), passed, type, vScale, false);
    if (failed(vNew))
      return failure();
    appendSources = "  const auto kNew = " + *kNew + ";\n  const auto vNew = " + *vNew + ";\n";
    appendArgs = ", kNew, vNew";
  }
  int64_t osb = Hq * S * Dv, osh, oss;
  if (op.getBshdOutput())
    osh = Dv, oss = Hq * Dv;
  else
    osh = S * Dv, oss = Dv;
  // A prefill chunk that kiln-select-tiles gave an attention tile takes the tensor-core kernel;
  // a decode step with a split-KV plan splits the keys over a cluster of blocks.
  auto tile = kernel->getAttrOfType<AttentionTileAttr>(kAttentionTileAttrName);
  auto splitKv = kernel->getAttrOfType<SplitKvAttr>(kSplitKvAttrName);
  auto sig = buildSignature(kernel, passed, out.args,
                            tile ? unsigned(32 * tile.getWarps()) : unsigned(decode::kThreads));
  if (failed(sig))
    return failure();
  if (append && tile)
    return kernel.emitError() << "unsupported: kernel @" << kernel.getSymName()
                              << " appends to the KV cache inside a prefill chunk's attention "
                                 "(kiln-fuse-kv-append merges decode steps only)";
  // The pools are read-only here unless the append is fused; PagedKvCache holds them as T * for
  // kvCacheAppend.
  std::string k = append ? std::string("out1")
                         : llvm::formatv("const_cast<{0} *>(in{1})", type, *kc).str();
  std::string v = append ? std::string("out2")
                         : llvm::formatv("const_cast<{0} *>(in{1})", type, *vc).str();
  const int elemBytes = int(getElementByteSize(et));
  const std::string common =
      " {\n  extern __shared__ __align__(128) char kiln_smem[];\n  const auto q = " + *q + ";\n" +
      appendSources + cacheInit(type, k, v, *table, *lens, pool, tableType) +
      llvm::formatv("  const kiln::AttnOut<{0}> o{{out0, {1}LL, {2}LL, {3}LL};\n", type, osb, osh,
                    oss)
          .str() +
      llvm::formatv("  const kiln::DecodeShape shape{{{0}, {1}, {2}, {3}, {4}, {5}};\n", B, Hq,
                    Hkv, S, splitKv && !tile ? splitKv.getSlots() : 1,
                    cudaLiteral(Float32Type::get(kernel.getContext()), scale, 0))
          .str();
  auto sm90Tile = kernel->getAttrOfType<Sm90AttentionTileAttr>(kSm90AttentionTileAttrName);
  if (tile && sm90Tile && elemBytes == 2) {
    // The Hopper kernel: the query (or its rotary's input) and both pools through tensor maps.
    const int64_t bm = sm90Tile.getQueryTile(), bn = sm90Tile.getKeyTile(),
                  bs = pool.getDimSize(2), nb = pool.getDimSize(0);
    const int64_t boxRows = std::min(bs, bn);
    Value qSource;
    auto ropeQ = attnRope(expr, op.getQuery(), qSource);
    if (failed(ropeQ))
      return failure();
    double hScale = op.getScale().convertToDouble();
    auto mq = attnTensorMap(kernel, qSource, passed, et, bm, hScale);
    const bool pages = bs % bn == 0 || (bn % bs == 0 && bs % 8 == 0);
    if (mq && pages) {
      GeneratedKernel::TensorMapArg poolMap;
      poolMap.elementType = et;
      poolMap.dims = {uint64_t(D), uint64_t(bs), uint64_t(Hkv), uint64_t(nb)};
      poolMap.strides = {uint64_t(D * elemBytes), uint64_t(bs * D * elemBytes),
                         uint64_t(Hkv * bs * D * elemBytes)};
      poolMap.box = {64u, uint32_t(boxRows), 1u, 1u};
      poolMap.swizzle = GeneratedKernel::TensorMapArg::Swizzle::B128;
      GeneratedKernel::TensorMapArg kMap = poolMap, vMap = poolMap;
      kMap.arg = unsigned(llvm::find(passed, *kc) - passed.begin());
      vMap.arg = unsigned(llvm::find(passed, *vc) - passed.begin());
      const unsigned threads = unsigned(sm90Tile.getThreads());
      out.args.clear(); // the signature above was the mma.sync kernel's (threads per block)
      auto sig90 = buildSignature(kernel, passed, out.args, threads);
      if (failed(sig90))
        return failure();
      out.tensorMaps = {*mq, kMap, vMap};
      out.source =
          llvm::formatv("// paged attention [{0}x{1}x{2}x{3}] (kv heads {4}), blocks of {5} "
                        "tokens, {6} per sequence: a prefill chunk, Hopper TMA + wgmma "
                        "(attention_sm90.cuh) through the block table, {7} keys x {8} queries "
                        "per tile\n",
                        B, Hq, S, D, Hkv, bs, tableType.getDimSize(1), bn, bm)
              .str() +
          sm90AttentionSignature(*sig90, threads) +
          " {\n  extern __shared__ __align__(128) char kiln_smem[];\n" +
          cacheInit(type, k, v, *table, *lens, pool, tableType) +
          llvm::formatv("  const kiln::AttnOut<{0}> o{{out0, {1}LL, {2}LL, {3}LL};\n", type, osb,
                        osh, oss)
              .str() +
          llvm::formatv("  const kiln::DecodeShape shape{{{0}, {1}, {2}, {3}, 1, {4}};\n", B, Hq,
                        Hkv, S, cudaLiteral(Float32Type::get(kernel.getContext()), hScale, 0))
              .str() +
          "  const auto ropeQ = " + *ropeQ + ";\n" +
          llvm::formatv("  kiln::prefillAttentionSm90Paged<{0}, {1}, {2}, {3}, {4}, {5}>(&tmap0, "
                        "&tmap1, &tmap2, cache, o, shape, kiln_smem, ropeQ, {6});\n}\n",
                        type, D, bm, bn, sm90Tile.getStages(),
                        sm90Tile.getPingpong() ? "true" : "false",
                        sm90Tile.getPersistent() ? "true" : "false")
              .str();
      setSm90AttentionLaunch(out, kernel, sm90Tile, B, Hq, S, D);
      return out;
    }
  }
  if (tile) {
    if (elemBytes != 2)
      return kernel.emitError() << "kernel @" << kernel.getSymName()
                                << ": an attention tile on a paged attention of " << et
                                << " (the tensor-core path takes f16 and bf16)";
    const int64_t warps = tile.getWarps(), mf = tile.getRowFragments(), bn = tile.getKeyTile(),
                  bm = tile.getQueryTile();
    out.source =
        llvm::formatv("// paged attention [{0}x{1}x{2}x{3}] (kv heads {4}), blocks of {5} tokens, "
                      "{6} per sequence: a prefill chunk, tensor cores (mma.sync), {7} keys x {8} "
                      "queries per tile\n",
                      B, Hq, S, D, Hkv, pool.getDimSize(2), tableType.getDimSize(1), bn, bm)
            .str() +
        *sig + common +
        llvm::formatv("  kiln::prefillAttentionPaged<{0}, {1}, {2}, {3}, {4}>(q, cache, o, shape, "
                      "kiln_smem);\n}\n",
                      type, D, bn, warps, mf)
            .str();
    out.grid = {unsigned((S + bm - 1) / bm), unsigned(Hq), unsigned(B)};
    out.block = {unsigned(32 * warps), 1, 1};
    out.sharedMemBytes = unsigned(smem_bytes::attentionTc(D, bm, bn));
    return out;
  }
  // Split-KV over a cluster (#kiln.split_kv): the slots of one KV group are the cluster's
  // blocks along z, which combine their partials in shared memory (no workspace, one launch).
  const int64_t slots = splitKv ? splitKv.getSlots() : 1;
  std::string signature = *sig;
  if (slots > 1)
    addClusterDims(signature, decode::kThreads, "1, 1, " + std::to_string(slots));
  // `preload`: the function takes the grid-dependency wait (the driver puts it in the lambda)
  // and reads the lengths, the block table and its first tiles' cached rows before calling it.
  const bool preload = splitKv && splitKv.getPreload();
  std::string waitDecl, waitArg;
  if (preload) {
    waitDecl = std::string("  const auto kiln_dependency_wait = [&]() { ") +
               kGridDependencyPlaceholder + " };\n";
    waitArg = (append ? "" : ", kiln::decode::NoAppend(), kiln::decode::NoAppend()") +
              std::string(", kiln_dependency_wait");
  }
  out.source =
      llvm::formatv("// paged attention [{0}x{1}x{2}x{3}] (kv heads {4}), blocks of {5} tokens, "
                    "{6} per sequence, {7}{8}{9}\n",
                    B, Hq, S, D, Hkv, pool.getDimSize(2), tableType.getDimSize(1),
                    slots > 1 ? "the keys split over a cluster of " + std::to_string(slots) +
                                    " blocks per KV group"
                              : std::string("one split per KV group"),
                    append ? ", the step's keys and values appended here" : "",
                    preload ? "; lengths, block table and cached rows of the first tiles read "
                              "before the grid-dependency wait"
                            : "")
          .str() +
      signature + common + waitDecl +
      llvm::formatv("  kiln::decodeAttentionPartial<{0}, {1}{2}>(q, cache, o, nullptr, shape, "
                    "kiln_smem{3}{4});\n}\n",
                    type, D, slots > 1 ? ", " + std::to_string(slots) : std::string(), appendArgs,
                    waitArg)
          .str();
  decode::Grid grid =
      decode::partialGrid(int(B), int(Hq), int(Hkv), int(S), int(slots), elemBytes);
  out.grid = {unsigned(grid.x), unsigned(grid.y), unsigned(grid.z)};
  out.block = {unsigned(decode::kThreads), 1, 1};
  out.sharedMemBytes =
      unsigned(decode::smemBytes(elemBytes, int(D), int(Hq / Hkv * S), slots > 1));
  return out;
}

} // namespace

void kiln::codegen::populateDecodeAttentionEmitters(EmitterRegistry &registry) {
  registry.addAnchor<KvCacheAppendOp>(emitKvCacheAppend, /*acceptsFusedOps=*/true);
  registry.addAnchor<PagedAttentionOp>(emitPagedAttention, /*acceptsFusedOps=*/true);
}
