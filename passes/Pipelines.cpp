//===- Pipelines.cpp - the kiln pass pipeline -----------------------------===//
//
// Orders the kiln passes into the compilation pipeline.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::buildKilnPipeline(OpPassManager &pm, const KilnPipelineOptions &options) {
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  if (options.kvCache)
    fpm.addPass(createBindGenerationInputs());
  fpm.addPass(createEliminateEmptyTensors());
  fpm.addPass(createFoldShapeSubgraphs());
  fpm.addPass(createCSEPass());
  fpm.addPass(createRaiseLayerNorm());
  fpm.addPass(createRaiseRmsNorm());
  // Sharding finds attention through kiln.attention, so it is raised even without fusion; the
  // KV cache replaces kiln.attention.
  if (options.fuse || options.kvCache || options.tpSize > 1)
    fpm.addPass(createRaiseAttention());
  AssignPrecisionOptions precisionOptions;
  precisionOptions.precision = options.precision;
  fpm.addPass(createAssignPrecision(precisionOptions));
  // The casts AssignPrecision puts around a zero-size tensor (an empty output at fp16/bf16) are
  // empty too: they become empty constants like every other empty result.
  fpm.addPass(createEliminateEmptyTensors());
  // The weight transforms (concatenation, interleave, shards) run after the weights are narrowed,
  // so that they copy 16-bit weights, not f32 ones: every constant stays in the context, and the
  // f32 copies were 3.4 GB of the 0.8B Llama's 10.4 GB peak (docs/kiln-compile.md, "Peak
  // memory"). Narrowing is elementwise and the transforms move whole elements, so the weights
  // are the same bytes in either order.
  if (options.fuse) {
    fpm.addPass(createFuseSiblingGemms());
    fpm.addPass(createInterleaveGlu());
    fpm.addPass(createCSEPass());
  }
  if (options.tpSize > 1) {
    ShardTensorParallelOptions shardOptions;
    shardOptions.tpSize = options.tpSize;
    shardOptions.rank = options.tpRank;
    shardOptions.loopback = options.tpLoopback;
    fpm.addPass(createShardTensorParallel(shardOptions));
    fpm.addPass(createCSEPass()); // loopback: one copy of each replicated weight
  }
  if (options.kvCache) {
    PagedKvCacheOptions cacheOptions;
    cacheOptions.maxSeqLen = options.maxSeqLen;
    cacheOptions.blockSize = options.kvBlockSize;
    cacheOptions.numBlocks = options.kvBlocks;
    cacheOptions.lastTokenLogits = options.lastTokenLogits;
    cacheOptions.deviceSampling = options.deviceSampling;
    fpm.addPass(createPagedKvCache(cacheOptions));
  }
  // Bounded kernel parameters and code per concat, fused or not.
  fpm.addPass(createSplitWideConcats());
  if (options.fuse) {
    FusePointwiseOptions fuseOptions;
    fuseOptions.fuseKeyRotary = options.fuseKeyRotary;
    fuseOptions.recomputeRotaryTables = options.recomputeRotaryTables;
    fpm.addPass(createFusePointwise(fuseOptions));
  }
  fpm.addPass(createOutlineKernels());
  if (options.fuse && options.kvCache && options.fuseKvAppend)
    fpm.addPass(createFuseKvAppend());
  // Only the Hopper TMA GEMM and the few-row GEMM compute the row statistics a folded norm
  // needs.
  if (options.fuse && options.sm90Gemm && !options.wgmma && options.mmaTile.empty() &&
      (options.fuseNormIntoGemm || (options.normIntoFewRowGemm && options.skinnyGemm))) {
    FuseNormIntoGemmOptions normOptions;
    normOptions.hopper = options.fuseNormIntoGemm;
    normOptions.fewRow = options.normIntoFewRowGemm && options.skinnyGemm;
    fpm.addPass(createFuseNormIntoGemm(normOptions));
  }
  SelectTilesOptions tileOptions;
  tileOptions.mmaTile = options.mmaTile;
  tileOptions.wgmma = options.wgmma;
  tileOptions.wgmmaMmaFallback = options.wgmmaMmaFallback;
  tileOptions.sm90Gemm = options.sm90Gemm;
  tileOptions.skinnyGemm = options.skinnyGemm;
  tileOptions.sm90Attention = options.sm90Attention;
  tileOptions.sm90AttentionPersistent = options.sm90AttentionPersistent;
  tileOptions.sm90PrefillAttention = options.sm90PrefillAttention;
  tileOptions.skinnyTensorCores = options.skinnyTensorCores;
  tileOptions.skinnyWeightPreload = options.skinnyWeightPreload;
  tileOptions.skinnyL2Prefetch = options.skinnyL2Prefetch;
  tileOptions.skinnyTcOccupancy = options.skinnyTcOccupancy;
  tileOptions.skinnyPreloadRows = options.skinnyPreloadRows;
  tileOptions.splitKv = options.splitKv;
  tileOptions.decodeAttentionPreload = options.decodeAttentionPreload;
  fpm.addPass(createSelectTiles(tileOptions));
  if (options.skinnyWeightPreload && options.weightPrefetch)
    fpm.addPass(createPlanWeightPrefetch());
  PlanMemoryOptions memOptions;
  memOptions.alignment = options.arenaAlignment;
  fpm.addPass(createPlanMemory(memOptions));
}

void kiln::registerKilnPipelines() {
  PassPipelineRegistration<KilnPipelineOptions>(
      "kiln-pipeline", "The kiln graph-to-kernel pipeline (fold, raise layer norm / RMS norm / attention and rotary, fuse sibling GEMMs, interleave GLUs, shard for tensor parallelism, assign precision, fuse, outline, merge decode steps' KV cache appends into their attention, fold norms into Hopper and few-row GEMMs, select tiles, plan memory)",
      buildKilnPipeline);
}
