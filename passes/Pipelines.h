//===- Pipelines.h - the kiln pass pipeline -----------------------*- C++ -*-===//
//
// buildKilnPipeline() is the one place that orders the kiln passes; the
// compiler driver and `kiln-opt --kiln-pipeline` both use it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PIPELINES_H
#define KILN_PASSES_PIPELINES_H

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

/// Options of the whole pipeline (also parsed from `--kiln-pipeline="..."`).
struct KilnPipelineOptions : public mlir::PassPipelineOptions<KilnPipelineOptions> {
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("Fuse pointwise chains"),
                    llvm::cl::init(true)};
  Option<Precision> precision{
      *this, "precision", llvm::cl::desc("Storage and GEMM precision"),
      llvm::cl::init(Precision::FP32),
      llvm::cl::values(clEnumValN(Precision::FP32, "fp32", "fp32 everywhere"),
                       clEnumValN(Precision::TF32, "tf32", "fp32 storage, TF32 GEMMs"),
                       clEnumValN(Precision::FP16, "fp16", "fp16 storage, fp32 accumulation"),
                       clEnumValN(Precision::BF16, "bf16", "bf16 storage, fp32 accumulation"))};
  Option<bool> wgmma{*this, "wgmma",
                     llvm::cl::desc("16-bit GEMMs use sm_90a wgmma tiles"), llvm::cl::init(false)};
  Option<bool> wgmmaMmaFallback{
      *this, "wgmma-mma-fallback",
      llvm::cl::desc("wgmma tiles also compile their mma.sync path (targets besides sm_90)"),
      llvm::cl::init(false)};
  Option<bool> sm90Gemm{*this, "sm90-gemm",
                        llvm::cl::desc("16-bit GEMMs use the Hopper TMA GEMM on sm_90 targets"),
                        llvm::cl::init(true)};
  Option<bool> sm90Attention{
      *this, "sm90-attention",
      llvm::cl::desc("Attention with 16-bit storage uses the Hopper TMA + wgmma attention kernel "
                     "on sm_90 targets where kiln-select-tiles finds it fits (kiln-select-tiles "
                     "sm90-attention)"),
      llvm::cl::init(true)};
  Option<Sm90AttentionLaunch> sm90AttentionPersistent{
      *this, "sm90-attention-persistent",
      llvm::cl::desc("With sm90-attention: persistent Hopper attention blocks (kiln-select-tiles "
                     "sm90-attention-persistent)"),
      llvm::cl::init(Sm90AttentionLaunch::Auto),
      llvm::cl::values(
          clEnumValN(Sm90AttentionLaunch::Grid, "off", "one block per query tile"),
          clEnumValN(Sm90AttentionLaunch::Auto, "auto",
                     "persistent up to kSm90AttentionPersistentWaves waves of query tiles"),
          clEnumValN(Sm90AttentionLaunch::Persistent, "on", "persistent blocks"))};
  Option<bool> sm90PrefillAttention{
      *this, "sm90-prefill-attention",
      llvm::cl::desc("With sm90-attention: prefill chunks over a KV cache use the Hopper "
                     "attention kernel too (kiln-select-tiles sm90-prefill-attention)"),
      llvm::cl::init(true)};
  Option<bool> skinnyGemm{
      *this, "skinny-gemm",
      llvm::cl::desc("With sm90-gemm: GEMMs of at most 16 rows (decode steps) read their weight "
                     "once with kiln::gemmSkinny"),
      llvm::cl::init(true)};
  Option<SkinnyTensorCores> skinnyTensorCores{
      *this, "skinny-tensor-cores",
      llvm::cl::desc("Where the few-row GEMM multiplies (kiln-select-tiles skinny-tensor-cores)"),
      llvm::cl::init(SkinnyTensorCores::Auto),
      llvm::cl::values(
          clEnumValN(SkinnyTensorCores::Off, "off", "the CUDA cores"),
          clEnumValN(SkinnyTensorCores::Auto, "auto",
                     "the tensor cores from kiln::kMinSkinnyTensorCoreRows rows on (default)"),
          clEnumValN(SkinnyTensorCores::On, "on", "the tensor cores for any rows"))};
  Option<bool> skinnyWeightPreload{
      *this, "skinny-weight-preload",
      llvm::cl::desc("Few-row GEMMs of 1-2 rows copy their weight's first ring stages to shared "
                     "memory before the grid-dependency wait, one block slot per SM left for the "
                     "next kernel (kiln-select-tiles skinny-weight-preload)"),
      llvm::cl::init(true)};
  Option<bool> weightPrefetch{
      *this, "weight-prefetch",
      llvm::cl::desc("Each decode GEMM with a preloaded weight warms L2 with the next one's weight "
                     "before its grid-dependency wait (kiln-plan-weight-prefetch; off by default: "
                     "slower on the H200)"),
      llvm::cl::init(false)};
  Option<int64_t> skinnyPreloadRows{
      *this, "skinny-preload-rows",
      llvm::cl::desc("With skinny-weight-preload: few-row GEMMs of up to this many rows (2..16) "
                     "preload their weight, A staged in chunks short enough that 3 blocks fit an "
                     "SM above 2 rows (kiln-select-tiles skinny-preload-rows; default 2)"),
      llvm::cl::init(2)};
  Option<int64_t> skinnyTcOccupancy{
      *this, "skinny-tc-occupancy",
      llvm::cl::desc("Few-row GEMMs on the tensor cores (not preloaded) planned for this many "
                     "blocks per SM, 2..4, A staged in shorter chunks (kiln-select-tiles "
                     "skinny-tc-occupancy; 0, the default: the default plan)"),
      llvm::cl::init(0)};
  Option<bool> skinnyL2Prefetch{
      *this, "skinny-l2-prefetch",
      llvm::cl::desc("Few-row GEMMs warm L2 with their own weight's next rows before the "
                     "grid-dependency wait (kiln-select-tiles skinny-l2-prefetch; off by default: "
                     "slower on the H200)"),
      llvm::cl::init(false)};
  Option<bool> fuseKeyRotary{
      *this, "fuse-key-rotary",
      llvm::cl::desc("Fuse attention's key rotary into the attention kernel (default false: its "
                     "own kernel, measured faster)"),
      llvm::cl::init(false)};
  Option<bool> recomputeRotaryTables{
      *this, "recompute-rotary-tables",
      llvm::cl::desc("A decode step's KV-cache append and paged attention compute cos and sin of "
                     "the position themselves (default false: a rotary table kernel, measured "
                     "faster)"),
      llvm::cl::init(false)};
  Option<bool> fuseNormIntoGemm{
      *this, "fuse-norm-into-gemm",
      llvm::cl::desc("Fold a layer / RMS norm kernel into the Hopper GEMMs that read it "
                     "(kiln-fuse-norm-into-gemm; with fuse and sm90-gemm, not with wgmma or "
                     "mma-tile). Default false: measured slower on the H200 (docs/results.md)"),
      llvm::cl::init(false)};
  Option<bool> splitKv{
      *this, "split-kv",
      llvm::cl::desc("With sm90-gemm: decode steps' paged attention splits the keys over a "
                     "cluster of blocks (kiln-select-tiles split-kv)"),
      llvm::cl::init(true)};
  Option<bool> decodeAttentionPreload{
      *this, "decode-attention-preload",
      llvm::cl::desc("Decode steps' split-KV attention reads the lengths, the block table and "
                     "its first tiles' cached keys and values before the grid-dependency wait "
                     "(kiln-select-tiles decode-attention-preload)"),
      llvm::cl::init(true)};
  Option<bool> fuseKvAppend{
      *this, "fuse-kv-append",
      llvm::cl::desc("With fuse and kv-cache: a decode step's KV cache append runs inside the "
                     "paged attention kernel that reads the cache (kiln-fuse-kv-append), one "
                     "launch per layer instead of two"),
      llvm::cl::init(true)};
  Option<bool> normIntoFewRowGemm{
      *this, "norm-into-few-row-gemm",
      llvm::cl::desc("Fold an RMS norm read only by few-row GEMMs (decode steps) into their A "
                     "loader (kiln-fuse-norm-into-gemm few-row; with fuse, sm90-gemm and "
                     "skinny-gemm, not with wgmma or mma-tile)"),
      llvm::cl::init(true)};
  Option<std::string> mmaTile{*this, "mma-tile",
                              llvm::cl::desc("MMA tile override BMxBNxBKxWMxWNxSTAGES"),
                              llvm::cl::init("")};
  Option<int64_t> tpSize{*this, "tp-size",
                         llvm::cl::desc("Tensor-parallel ranks N (1: no sharding)"),
                         llvm::cl::init(1)};
  Option<int64_t> tpRank{*this, "tp-rank", llvm::cl::desc("The rank this graph is for"),
                         llvm::cl::init(0)};
  Option<bool> tpLoopback{*this, "tp-loopback",
                          llvm::cl::desc("All N ranks in one graph, a sum for each all-reduce"),
                          llvm::cl::init(false)};
  Option<bool> kvCache{*this, "kv-cache",
                       llvm::cl::desc("Compile a generation step over a paged KV cache the "
                                      "runtime owns (kiln-bind-generation-inputs, "
                                      "kiln-paged-kv-cache; docs/generation.md)"),
                       llvm::cl::init(false)};
  Option<int64_t> maxSeqLen{*this, "max-seq-len",
                            llvm::cl::desc("kv-cache: most tokens per sequence"),
                            llvm::cl::init(0)};
  Option<int64_t> kvBlockSize{*this, "kv-block-size",
                              llvm::cl::desc("kv-cache: tokens per cache block"),
                              llvm::cl::init(16)};
  Option<int64_t> kvBlocks{*this, "kv-blocks",
                           llvm::cl::desc("kv-cache: blocks per layer pool (0: batch x "
                                          "ceil(max-seq-len / kv-block-size))"),
                           llvm::cl::init(0)};
  Option<bool> lastTokenLogits{
      *this, "last-token-logits",
      llvm::cl::desc("kv-cache: a step of several tokens returns the logits of its last real "
                     "token only (kiln-paged-kv-cache)"),
      llvm::cl::init(true)};
  Option<bool> deviceSampling{
      *this, "sampling",
      llvm::cl::desc("kv-cache: next_token is kiln.sample with per-row sampling inputs, so "
                     "sampling runs on the GPU (false: the greedy arg-max only)"),
      llvm::cl::init(true)};
  Option<int64_t> arenaAlignment{*this, "arena-alignment",
                                 llvm::cl::desc("Arena buffer alignment in bytes"),
                                 llvm::cl::init(256)};
};

/// Adds the graph → kernel pipeline to `pm` (a module-level manager):
/// fold shape subgraphs, CSE, raise layer norm and RMS norm; with `fuse`, raise
/// attention (and rotary embeddings), fuse sibling GEMMs, interleave gated
/// units, CSE; with tp-size > 1, shard for tensor parallelism (raise attention
/// runs then even without `fuse`) and CSE; assign precision; with `fuse`, fuse pointwise chains; outline,
/// select GEMM tiles, plan memory (docs/passes.md has the order and effects).
void buildKilnPipeline(mlir::OpPassManager &pm, const KilnPipelineOptions &options);

/// Registers `kiln-pipeline` for kiln-opt and lit tests.
void registerKilnPipelines();

} // namespace kiln

#endif // KILN_PASSES_PIPELINES_H
