//===- KilnAttrs.td - kiln dialect attributes --------------*- tablegen -*-===//
//
// Attributes of the kiln dialect: the reduce-kind enum of graph ops, and the
// kernel plan that kiln-select-tiles writes and codegen reads -- the target
// GPU (`#kiln.target`), the precision (`#kiln.precision`) and one typed tile
// per kernel family (`#kiln.gemm_tile`, `#kiln.mma_tile`, `#kiln.wgmma_tile`,
// `#kiln.attention_tile`). Each tile verifier holds the rules of its device
// template in compiler/codegen/cuda/, once; rules that depend on the target
// (shared memory per block) are checked where the target is known
// (passes/tiling/SelectTiles.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ATTRS_TD
#define KILN_ATTRS_TD

include "KilnBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Kiln_ReduceKind : I32EnumAttr<"ReduceKind", "reduction combiner", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Mean", 1, "mean">,
    I32EnumAttrCase<"Max", 2, "max">,
    I32EnumAttrCase<"Min", 3, "min">,
  ]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

def Kiln_ReduceKindAttr : EnumAttr<Kiln_Dialect, Kiln_ReduceKind, "reduce_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

def Kiln_InputRole : I32EnumAttr<"InputRole", "role of a graph input in a generation step", [
    I32EnumAttrCase<"KeyCache", 0, "key_cache">,
    I32EnumAttrCase<"ValueCache", 1, "value_cache">,
    I32EnumAttrCase<"BlockTable", 2, "block_table">,
    I32EnumAttrCase<"SeqLens", 3, "seq_lens">,
    I32EnumAttrCase<"PositionIds", 4, "position_ids">,
    I32EnumAttrCase<"Temperature", 5, "temperature">,
    I32EnumAttrCase<"TopK", 6, "top_k">,
    I32EnumAttrCase<"TopP", 7, "top_p">,
    I32EnumAttrCase<"Seed", 8, "seed">,
    I32EnumAttrCase<"SampleOffset", 9, "sample_offset">,
  ]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

def Kiln_InputRoleAttr : EnumAttr<Kiln_Dialect, Kiln_InputRole, "input_role"> {
  let summary = "What the runtime's generation loop puts in a graph input (`kiln.role`).";
  let description = [{
    Set by `kiln-paged-kv-cache` on the function arguments it adds (and on
    the model's `position_ids`): `key_cache` / `value_cache` (a pool of one
    layer, `[blocks, Hkv, block size, D]`, written in place by
    `kiln.kv_cache_append`), `block_table` (`[B, blocks per sequence]` i32),
    `seq_lens` (`[B]` i32, tokens held before the step) and `position_ids`
    (`[B, S]`, `seq_lens[b] + i`), and the per-row sampling parameters of
    `kiln.sample` (`[B]` each): `temperature` (f32), `top_k` (i32), `top_p`
    (f32), `seed` (i64) and `sample_offset` (i64, the draws the sequence made
    before). The artifact records it per input
    (docs/artifact.md), so a runtime knows which inputs it owns.

    ```mlir
    func.func @main(%kc: tensor<16x2x16x32xf16> {kiln.name = "kv_cache.0.key", kiln.role = #kiln.input_role<key_cache>}, ...)
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Kiln_Precision : I32EnumAttr<"Precision", "storage and GEMM precision", [
    I32EnumAttrCase<"FP32", 0, "fp32">,
    I32EnumAttrCase<"TF32", 1, "tf32">,
    I32EnumAttrCase<"FP16", 2, "fp16">,
    I32EnumAttrCase<"BF16", 3, "bf16">,
  ]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

def Kiln_PrecisionAttr : EnumAttr<Kiln_Dialect, Kiln_Precision, "precision"> {
  let summary = "Storage and GEMM precision of a function (`--precision`).";
  let description = [{
    Set on the function by `kiln-assign-precision`: `fp32` (IEEE fp32 per
    op), `tf32` (fp32 storage, GEMMs on TF32 tensor cores), `fp16` / `bf16`
    (16-bit storage, fp32 accumulation). kiln-select-tiles and
    kiln-fuse-pointwise read it.

    ```mlir
    func.func @f(...) attributes {kiln.precision = #kiln.precision<tf32>}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Kiln_TensorCores : I32EnumAttr<"TensorCores",
    "the tensor-core instructions kiln's GEMM templates use on a target", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"MmaSync", 1, "mma_sync">,
    I32EnumAttrCase<"Wgmma", 2, "wgmma">,
  ]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// The target
//===----------------------------------------------------------------------===//

class Kiln_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Kiln_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Kiln_TargetAttr : Kiln_Attr<"Target", "target"> {
  let summary = "The GPU the kernel plan is made for.";
  let description = [{
    The numbers of one GPU that tile selection and launch shapes depend on.
    `kiln-compile` sets it on the module from the first `--target`
    (`kiln.target`); the entries come from the one target table,
    `dialects/kiln/KilnTarget.cpp` (`kiln::getTarget`). Passes and codegen
    read it with `kiln::getTargetOrDefault`, which gives the `sm_90` entry to
    a module without one (lit tests).

    - `name`: the `--target` spelling, e.g. `"sm_90"`;
    - `arch`: the SM version, 90 for sm_90;
    - `sm_count`: streaming multiprocessors of the reference GPU of the arch;
    - `smem_per_block`: the most dynamic shared memory one block may opt in
      to, bytes;
    - `smem_per_sm`: shared memory of one SM, bytes (blocks per SM);
    - `regs_per_sm`: 32-bit registers of one SM;
    - `l2_bytes`: the L2 cache of the reference GPU, bytes (how much of the
      next weight a decode GEMM may prefetch; 0, the default when a
      hand-written target omits it, prefetches nothing);
    - `memory_bytes`: device memory of the largest GPU of the arch, bytes: a
      bound on what one artifact can ever allocate there (the KV-cache pools
      of a `--kv-cache` artifact are checked against it); 0, the default,
      checks nothing;
    - `tensor_cores`: the newest tensor-core instructions kiln's GEMM
      templates use there: `none` (before sm_80), `mma_sync` (sm_80+),
      `wgmma` (sm_90, built as sm_90a).

    ```mlir
    module attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132,
        smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536,
        l2_bytes = 52428800, memory_bytes = 150754820096, tensor_cores = wgmma>} {}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"target name">:$name,
    "int64_t":$arch,
    "int64_t":$sm_count,
    "int64_t":$smem_per_block,
    "int64_t":$smem_per_sm,
    "int64_t":$regs_per_sm,
    DefaultValuedParameter<"int64_t", "0">:$l2_bytes,
    DefaultValuedParameter<"int64_t", "0">:$memory_bytes,
    EnumParameter<Kiln_TensorCores>:$tensor_cores
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

def Kiln_GemmTileAttr : Kiln_Attr<"GemmTile", "gemm_tile"> {
  let summary = "Tile of an fp32 GEMM on CUDA cores (kiln::gemmTileF32, cuda/gemm.cuh).";
  let description = [{
    Block tile `bm` x `bn`, K slice `bk`, per-thread micro-tile `tm` x `tn`,
    and `ks` groups of threads splitting each K slice (intra-block split-K):
    (bm / tm) x (bn / tn) x ks threads per block, at most 1024.

    ```mlir
    kiln.kernel @k0_matmul(...) {kiln.gemm_tile = #kiln.gemm_tile<bm = 64, bn = 64, bk = 32,
        tm = 4, tn = 4, ks = 1>} ...
    ```
  }];
  let parameters = (ins "int64_t":$bm, "int64_t":$bn, "int64_t":$bk, "int64_t":$tm,
                        "int64_t":$tn, "int64_t":$ks);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block: (bm / tm) x (bn / tn) x ks.
    int64_t getThreads() const { return (getBm() / getTm()) * (getBn() / getTn()) * getKs(); }
  }];
}

def Kiln_MmaTileAttr : Kiln_Attr<"MmaTile", "mma_tile"> {
  let summary = "Tile of a tensor-core GEMM on mma.sync (kiln::gemmTileTC, cuda/gemm_tc.cuh).";
  let description = [{
    Block tile `bm` x `bn`, K slice `bk`, `wm` x `wn` warps (each owns a
    (bm / wm) x (bn / wn) sub-tile), and a `stages`-deep cp.async
    shared-memory pipeline: 32 x wm x wn threads per block and
    `kiln::gemmTcSmemBytes` (cuda/smem_sizes.h) of dynamic shared memory.

    The verifier holds gemm_tc.cuh's rules for every operand layout: bm a
    multiple of 16 x wm, bn of 8 x wn; bm, bn and bk each 16, 32 or a
    multiple of 64 (the swizzle's 16-byte chunks per tile line), at most
    1024; 32 x wm x wn threads a multiple of bm / 8, bn / 8 and bk / 8 (whole
    tile lines per copy step); 2 <= stages <= 64; wm x wn <= 32; at most 128
    fp32 accumulators per thread ((bm / wm) x (bn / wn) / 32). Whether the
    shared memory fits is the target's question (kiln-select-tiles).

    ```mlir
    kiln.kernel @k0_matmul(...) {kiln.mma_tile = #kiln.mma_tile<bm = 128, bn = 128, bk = 32,
        wm = 2, wn = 4, stages = 4>} ...
    ```
  }];
  let parameters = (ins "int64_t":$bm, "int64_t":$bn, "int64_t":$bk, "int64_t":$wm,
                        "int64_t":$wn, "int64_t":$stages);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block: 32 x wm x wn.
    int64_t getThreads() const { return 32 * getWm() * getWn(); }
  }];
}

def Kiln_WgmmaTileAttr : Kiln_Attr<"WgmmaTile", "wgmma_tile"> {
  let summary = "Tile of a Hopper wgmma GEMM (kiln::gemmTileWgmma, cuda/gemm_wgmma.cuh).";
  let description = [{
    Block tile `bm` x `bn`, K slice `bk` (64: one 128-byte swizzle line of
    16-bit elements), `warpgroups` warpgroups of 128 threads (each owns
    bm / warpgroups rows, a multiple of 64), and a `stages`-deep cp.async
    pipeline (at least 3). bn is 64, 128, 192 or 256 (one wgmma n); at most
    128 fp32 accumulators per thread. Shared memory: `kiln::gemmWgmmaSmemBytes`
    (cuda/smem_sizes.h).

    ```mlir
    kiln.kernel @k0_matmul(...) {kiln.wgmma_tile = #kiln.wgmma_tile<bm = 128, bn = 256,
        bk = 64, warpgroups = 2, stages = 4>} ...
    ```
  }];
  let parameters = (ins "int64_t":$bm, "int64_t":$bn, "int64_t":$bk, "int64_t":$warpgroups,
                        "int64_t":$stages);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block: 128 x warpgroups.
    int64_t getThreads() const { return 128 * getWarpgroups(); }
  }];
}

def Kiln_Sm90GemmTileAttr : Kiln_Attr<"Sm90GemmTile", "sm90_gemm_tile"> {
  let summary = "Tile of the Hopper TMA + warp-specialized wgmma GEMM (kiln::gemmSm90, "
                "cuda/gemm_sm90.cuh).";
  let description = [{
    Block tile `bm` x `bn` with K slices of 64, `consumers` wgmma warpgroups
    after one TMA producer warpgroup (128 x (consumers + 1) threads), a
    `stages`-deep TMA / mbarrier pipeline, `split_k` blocks of one cluster
    sharing each tile's K (reduced through distributed shared memory; 1: a
    persistent grid of at most one block per SM), and the consumer schedule:
    `pingpong` (each consumer owns alternate tiles, so one's epilogue overlaps
    the other's main loop) or cooperative (both share each tile). Shared
    memory: `kiln::smem_bytes::gemmSm90` (cuda/smem_sizes.h).

    The verifier holds gemm_sm90.cuh's rules: bn is 64, 128, 192 or 256 (one
    wgmma n); consumers is 1 or 2; bm is a multiple of 64 x consumers (64
    with pingpong), at most 256 (one TMA box); at most 128 fp32 accumulators
    per consumer thread; stages >= 2; split_k in 1..8 dividing bm / 8, and
    the split-K partial tile bm x (bn + 8) fp32 fits in the pipeline's
    shared memory; pingpong needs 2 consumers and split_k = 1. Whether the
    shared memory fits is the target's question (kiln-select-tiles).

    ```mlir
    kiln.kernel @k0_matmul(...) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 64, bn = 256,
        consumers = 2, stages = 5, split_k = 1, pingpong = true>} ...
    ```
  }];
  let parameters = (ins "int64_t":$bm, "int64_t":$bn, "int64_t":$consumers, "int64_t":$stages,
                        "int64_t":$split_k, "bool":$pingpong);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block: 128 x (consumers + 1).
    int64_t getThreads() const { return 128 * (getConsumers() + 1); }
  }];
}

def Kiln_SkinnyGemmTileAttr : Kiln_Attr<"SkinnyGemmTile", "skinny_gemm_tile"> {
  let summary = "Plan of the few-row GEMM that streams its weight once (kiln::gemmSkinny, "
                "cuda/gemm_skinny.cuh).";
  let description = [{
    A GEMM of `rows` rows in all (M times the batch, when the weight is
    shared by the batch: the tokens of a decode step) against a row-major
    16-bit weight: 256 threads per block own 64 columns, and the `split_k`
    blocks of one thread-block cluster share them and split K, reducing
    their partial sums over distributed shared memory. The inner product
    runs on the CUDA cores in fp32 or, with `tensor_cores = true`, on the
    tensor cores (mma.sync m16n8k16, fp32 accumulation, A rounded to the
    weight's type; the rows padded to 16). Shared memory:
    `kiln::smem_bytes::gemmSkinny(rows)`, with tensor cores
    `kiln::smem_bytes::gemmSkinnyTc(rows)` (cuda/smem_sizes.h).
    kiln-select-tiles sets it beside the `#kiln.sm90_gemm_tile` and
    `#kiln.mma_tile` of the same kernel; codegen uses it when the weight is
    a suitably aligned row-major parameter shared by every batch (8-byte
    aligned rows; 16-byte aligned for the tensor cores, else the CUDA
    cores). `tensor_cores` is omitted from the printed form when false.

    `preload = true` (tensor cores only): the kernel copies the first stages
    of its weight's cp.async rings to shared memory before its
    grid-dependency wait (kiln::gemmSkinnyTcPreloadB), when the weight is a
    constant; the grid was sized so that the blocks of two consecutive
    GEMMs fit on one SM, so with programmatic dependent launch the weight
    streams while the previous kernel runs. Omitted when false.

    `l2_prefetch = true`: before the wait, each block also issues
    `prefetch.global.L2` for the next rows of its own share of the weight
    (kiln::gemmSkinnyPrefetchB), the grid within half of the target's L2.
    Off by default since session 30 (kiln-select-tiles `skinny-l2-prefetch`):
    on the H200 the 0.8B Llama's 64 batch-1 decode GEMMs in one CUDA graph
    took 610 us with it and 558 us without. Omitted when false.

    `a_chunk = N` (tensor cores only; omitted when 0, the default plan of
    `kiln::smem_bytes::skinnyTcChunk(rows)` K rows): the tensor-core path
    stages A N K rows at a time, so its shared memory,
    `kiln::smem_bytes::gemmSkinnyTc(rows, row_stats, N)`, fits
    `min_blocks_per_sm` blocks on an SM (kiln-select-tiles
    `skinny-tc-occupancy`). `min_blocks_per_sm = M` (omitted when 0): codegen
    declares `__launch_bounds__(256, M)`, so that the registers do not take
    the blocks the plan counted on.

    The verifier holds gemm_skinny.cuh's rules: rows in 1..16, split_k in
    1..8 (a portable cluster), preload only with tensor_cores, a_chunk 0 or
    a multiple of 128 in 128..2048 and only with tensor_cores,
    min_blocks_per_sm in 0..8.

    ```mlir
    kiln.kernel @k4_matmul(...) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8,
        split_k = 4, tensor_cores = true>} ...
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$split_k,
                        DefaultValuedParameter<"bool", "false">:$tensor_cores,
                        DefaultValuedParameter<"bool", "false">:$preload,
                        DefaultValuedParameter<"bool", "false">:$l2_prefetch,
                        DefaultValuedParameter<"int64_t", "0">:$a_chunk,
                        DefaultValuedParameter<"int64_t", "0">:$min_blocks_per_sm);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kiln_L2PrefetchAttr : Kiln_Attr<"L2Prefetch", "l2_prefetch"> {
  let summary = "A later kernel's weight that a decode GEMM warms L2 with before its "
                "grid-dependency wait.";
  let description = [{
    Set by kiln-plan-weight-prefetch on a few-row GEMM kernel whose
    `#kiln.skinny_gemm_tile` has `preload = true` (a decode step): the
    kernel's input `operand` is the constant weight of the next such GEMM of
    the program (added to the kernel's inputs by the pass when it was not one
    of them), and before its grid-dependency wait every block issues its
    share of bulk L2 prefetches (`cp.async.bulk.prefetch.L2.global`, no data
    into the SM) of that weight's first `bytes` bytes
    (kiln::l2PrefetchShare, cuda/gemm_skinny.cuh). The next GEMM then reads
    its weight from L2 while the device memory streams the weight after it,
    so the memory stays busy through each kernel's start and drain. Weights
    never depend on the kernels before, so the early reads are safe.

    The verifier holds: `operand` >= 0, `bytes` > 0 and a multiple of 16
    (the bulk prefetch's granule).

    ```mlir
    kiln.kernel @k7_matmul(..., %w_next) {kiln.l2_prefetch = #kiln.l2_prefetch<operand = 4,
        bytes = 8388608>, kiln.skinny_gemm_tile = ...} ...
    ```
  }];
  let parameters = (ins "int64_t":$operand, "int64_t":$bytes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kiln_SplitKvAttr : Kiln_Attr<"SplitKv", "split_kv"> {
  let summary = "Split-KV plan of a decode step's paged attention (Flash-Decoding in one "
                "launch, kiln::decodeAttentionPartial with CLUSTER, cuda/decode_attention.cuh).";
  let description = [{
    The keys of each (sequence, KV group) are cut into up to `slots` chunks
    (decode::partition of the valid length, read at run time), one block of
    a thread-block cluster of `slots` blocks each; the blocks combine their
    online-softmax partials over distributed shared memory, so there is no
    workspace and no second launch. Set by kiln-select-tiles on decode
    paged attentions (no `#kiln.attention_tile`) when every target is sm_90
    (clusters); without it codegen launches one block per (sequence, KV
    group).

    `preload = true`: the blocks read what no kernel of the step writes --
    the sequence lengths, the block table and the cached rows (below the
    length) of their chunk's first pipeline tiles -- before the kernel's
    grid-dependency wait, so with programmatic dependent launch those loads
    overlap the previous kernel (the QKV GEMM); Q and the step's new rows
    are loaded after the wait (decodeAttentionPartial's `wait`). Omitted
    when false.

    The verifier holds the cluster's rule: slots in 2..8 (a portable
    cluster).

    ```mlir
    kiln.kernel @k9_paged_attention(...) {kiln.split_kv = #kiln.split_kv<slots = 8,
        preload = true>} ...
    ```
  }];
  let parameters = (ins "int64_t":$slots,
                        DefaultValuedParameter<"bool", "false">:$preload);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kiln_AttentionTileAttr : Kiln_Attr<"AttentionTile", "attention_tile"> {
  let summary = "Tile of the tensor-core attention kernel (kiln::attentionTC, cuda/attention.cuh).";
  let description = [{
    A block of `warps` warps owns 16 x `row_fragments` x `warps` query rows
    of one (batch, head), each warp 16 x row_fragments of them, and visits
    the keys in tiles of `key_tile` (a multiple of 16). 32 x warps threads,
    `kiln::attentionTcSmemBytes` (cuda/smem_sizes.h) of dynamic shared
    memory. Set by kiln-select-tiles on attention kernels whose types allow
    tensor cores (16-bit storage, D == Dv a multiple of 16); codegen uses it
    when Q, K and V are aligned strided views, and the CUDA-core kernel
    (kiln::attentionSimt, fixed shape) otherwise.

    ```mlir
    kiln.kernel @k3_attention(...) {kiln.attention_tile = #kiln.attention_tile<warps = 4,
        row_fragments = 2, key_tile = 32>} ...
    ```
  }];
  let parameters = (ins "int64_t":$warps, "int64_t":$row_fragments, "int64_t":$key_tile);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Query rows per block: 16 x row_fragments x warps.
    int64_t getQueryTile() const { return 16 * getRowFragments() * getWarps(); }
    /// Threads per block: 32 x warps.
    int64_t getThreads() const { return 32 * getWarps(); }
  }];
}

def Kiln_Sm90AttentionTileAttr : Kiln_Attr<"Sm90AttentionTile", "sm90_attention_tile"> {
  let summary = "Tile of the Hopper attention kernel (kiln::attentionSm90, "
                "cuda/attention_sm90.cuh).";
  let description = [{
    A block of one TMA producer warpgroup and `query_tile` / 64 wgmma
    consumer warpgroups owns `query_tile` query rows of one (batch, head)
    (64 per consumer) and visits the keys in tiles of `key_tile`, K and V
    streamed by TMA through a `stages`-deep mbarrier ring; with `pingpong`
    the two consumers take turns on the tensor cores (one's softmax overlaps
    the other's GEMMs); with `persistent` at most one block per SM (the
    target's SM count) walks the query tiles longest first instead of one
    block per query tile. 128 x (query_tile / 64 + 1) threads,
    `kiln::smem_bytes::attentionSm90` (cuda/smem_sizes.h) of dynamic shared
    memory. Set by kiln-select-tiles with `sm90-attention` on a target with
    wgmma tensor cores, beside the `#kiln.attention_tile` that codegen uses
    when TMA cannot read Q, K or V (a fused rotary, an unaligned view).

    The verifier holds attention_sm90.cuh's rules: query_tile 128 or 192,
    key_tile 64, 128 or 192, stages in 2..8, pingpong only with
    query_tile 128. Whether the registers and shared memory fit the head
    dim is kiln-select-tiles' question.

    ```mlir
    kiln.kernel @k3_attention(...) {kiln.sm90_attention_tile = #kiln.sm90_attention_tile<
        query_tile = 128, key_tile = 128, stages = 2, pingpong = true, persistent = false>} ...
    ```
  }];
  let parameters = (ins "int64_t":$query_tile, "int64_t":$key_tile, "int64_t":$stages,
                        "bool":$pingpong, "bool":$persistent);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Consumer warpgroups: query_tile / 64.
    int64_t getConsumers() const { return getQueryTile() / 64; }
    /// Threads per block: 128 x (consumers + 1).
    int64_t getThreads() const { return 128 * (getConsumers() + 1); }
  }];
}

#endif // KILN_ATTRS_TD
