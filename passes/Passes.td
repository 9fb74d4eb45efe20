//===- Passes.td - kiln pass declarations ------------------*- tablegen -*-===//
//
// Every kiln pass, in pipeline order: graph cleanup, fusion, outlining,
// memory planning.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

def EliminateEmptyTensors : Pass<"kiln-eliminate-empty-tensors", "mlir::func::FuncOp"> {
  let summary = "Replace zero-element tensors by constants so no kernel sees one.";
  let description = [{
    ONNX allows dimensions of size 0: an empty past key/value cache at the
    first decode step, an empty Concat operand, a Slice whose range is empty,
    a reduction over an empty axis. Types are static after import, so each
    case is decided here, before folding:

    - an op whose results all have zero elements becomes empty constants;
    - a `kiln.concat` drops its zero-length operands (one left: the concat
      is that operand);
    - a `kiln.reduce` over an empty extent with a non-empty result is a
      constant: sum 0, mean NaN (0 for integers), max -inf (the smallest
      integer), min +inf (the largest integer), as the ONNX Reduce* specs
      (opset 18) define the empty reduction;
    - a `kiln.matmul` with K = 0 is a constant 0;
    - any other op with an empty operand and a non-empty result is an error
      naming the op, e.g. a Gather from a zero-length axis (nothing exists
      to read: onnxruntime fails at run time, kiln at compile time), an
      ArgMax over an empty axis or attention over zero keys.

    Before:
    ```mlir
    %k = kiln.concat %past, %new {axis = 2 : i64} : tensor<1x2x0x8xf32>, tensor<1x2x1x8xf32> -> tensor<1x2x1x8xf32>
    ```
    After: uses of `%k` use `%new`.
  }];
}

def FoldShapeSubgraphs : Pass<"kiln-fold-shape-subgraphs", "mlir::func::FuncOp"> {
  let summary = "Fold shape and mask subgraphs on static shapes into constants.";
  let description = [{
    Runs every kiln folder to a fixed point and erases dead ops. With static
    shapes, ONNX shape computations (`kiln.shape`, `kiln.gather`, `kiln.concat`,
    `kiln.range`, `kiln.cumsum`, `kiln.gather_nd`, `kiln.is_nan`, `kiln.where`,
    `kiln.expand`, comparisons ...) have only constant operands and become one
    `kiln.constant` each. Identity reshapes/transposes/slices disappear.

    Precondition: static shapes. Postcondition: no op whose operands are all
    constants remains (except results larger than the folding limit).
    Constant gather indices outside their dimension are an error (ONNX leaves
    them undefined), e.g. a position table of 128 rows used for 200 tokens.

    Before:
    ```mlir
    %s = kiln.shape %x {start = 0 : i64, end = 1 : i64} : tensor<2x16xf32> -> tensor<1xi64>
    ```
    After:
    ```mlir
    %s = kiln.constant dense<2> : tensor<1xi64>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def RaiseLayerNorm : Pass<"kiln-raise-layer-norm", "mlir::func::FuncOp"> {
  let summary = "Recognize decomposed layer normalization and raise it to `kiln.layer_norm`.";
  let description = [{
    Exports at opsets before 17 (which have no LayerNormalization op) spell
    layer norm out, as torch.nn.LayerNorm's ONNX symbolic does:

    ```
    m = ReduceMean(x, trailing axes, keepdims=1)    d = Sub(x, m)
    v = ReduceMean(Pow(d, 2) | Mul(d, d), same axes, keepdims=1)
    y = Div(d, Sqrt(Add(v, eps)))                   [Mul(y, gamma)] [Add(., beta)]
    ```

    This pass replaces such a chain by one `kiln.layer_norm` (axis = first
    reduced dim, epsilon = the constant; `gamma`/`beta` become scale/bias when
    their shape is the normalized shape, else scale is ones and the affine
    ops stay). One kernel then computes the statistics in a single pass over
    each row (with the mean refinement of codegen) instead of four kernels
    (mean, subtract, variance, normalize). Only exact matches are raised:
    float element type, static shape, constant scalar epsilon, exponent
    exactly 2, the reduced axes the trailing dims, and every intermediate
    used only inside the chain; anything else is left as it is.

    Before:
    ```mlir
    %m = kiln.reduce <mean> %x {axes = array<i64: 2>, keep_dims = true} : ...
    %d = kiln.sub %x, %m : ...
    ... kiln.pow, kiln.reduce <mean>, kiln.add eps, kiln.sqrt, kiln.div ...
    ```
    After:
    ```mlir
    %y = kiln.layer_norm %x, %gamma, %beta {axis = 2 : i64, epsilon = 1.0e-05 : f32} : ...
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def RaiseRmsNorm : Pass<"kiln-raise-rms-norm", "mlir::func::FuncOp"> {
  let summary = "Recognize decomposed RMS normalization and raise it to `kiln.rms_norm`.";
  let description = [{
    ONNX has no RMSNormalization op before opset 23, so exporters spell
    LlamaRMSNorm (and T5/Qwen2/Mistral's) as `x * rsqrt(mean(x^2) + eps) * weight`:

    ```
    s = Sqrt(Add(ReduceMean(Pow(x, 2) | Mul(x, x), trailing axes, keepdims=1), eps))
    n = Mul(x, Reciprocal(s)) | Mul(x, Div(1, s)) | Div(x, s)      (Mul either order)
    [Cast(n) to x's storage type]                                   [Mul(., weight)]
    ```

    This pass replaces such a chain by one `kiln.rms_norm` (axis = first
    reduced dim, epsilon = the constant; the weight becomes the scale when it
    has the normalized shape and the result's element type, otherwise the
    scale is ones and the Mul stays). Codegen then computes the mean of
    squares and the normalized row in one kernel instead of a reduction
    kernel plus a normalization kernel.

    Casts: when `x` is `Cast(x0)` from f16/bf16 to f32, read only by the chain, and
    the chain casts back to `x0`'s type, both casts go (`kiln.rms_norm` keeps
    fp32 statistics whatever the storage type, and rounds once instead of
    twice); in any other arrangement the casts stay outside the raised op.

    Only exact matches are raised: float element type, static shape, a
    constant scalar epsilon >= 0, exponent exactly 2, the reduced axes the
    trailing dims, and every intermediate used only inside the chain;
    anything else is left as it is. Runs before `kiln-assign-precision`.

    Before:
    ```mlir
    %p = kiln.pow %x, %two : tensor<1x16x128xf32>, tensor<f32> -> tensor<1x16x128xf32>
    %m = kiln.reduce <mean> %p {axes = array<i64: 2>, keep_dims = true} : ...
    ... kiln.add eps, kiln.sqrt, kiln.reciprocal, kiln.mul %x, kiln.mul %w ...
    ```
    After:
    ```mlir
    %y = kiln.rms_norm %x, %w {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<1x16x128xf32>, tensor<128xf32> -> tensor<1x16x128xf32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def RaiseAttention : Pass<"kiln-raise-attention", "mlir::func::FuncOp"> {
  let summary = "Recognize exported scaled dot-product attention and raise it to `kiln.attention`.";
  let description = [{
    Matches `MatMul(Q, K^T)`, a scalar scale (Mul or Div on Q, on K^T or on the
    scores), an optional additive mask (a constant causal mask becomes
    `causal = true`), `Softmax` on the last axis, optionally
    `Where(IsNaN(p), 0, p)`, and `MatMul(P, V)`, with the head transposes and
    GQA head repetition (Expand + Reshape of K and V) around them. Rotary
    embeddings in the rotate-half spelling (`x * cos + Concat(-x[D/2:],
    x[:D/2]) * sin`) become `kiln.rotary` first, which the attention kernel
    applies to its Q and K tiles. An exact match becomes one `kiln.attention`; the transpose to [B, S, H, D] that
    follows it is absorbed (`bshd_output`). Anything that only partly matches
    is left as it is.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FuseSiblingGemms : Pass<"kiln-fuse-sibling-gemms", "mlir::func::FuncOp"> {
  let summary = "Merge GEMMs that read the same input with constant weights into one GEMM.";
  let description = [{
    Q, K and V projections (and Llama's gate and up projections) read the
    same activation `x: [..., K]` with constant weights `[K, N_i]`: they
    become one `kiln.matmul` against the weights concatenated along N
    (`[K, sum N_i]`, built at compile time) followed by one `kiln.slice` per
    projection on the last dim. At batch 1 each projection is a small GEMM
    that fills few SMs; one GEMM launches once, reads `x` once and spreads
    over more blocks. The slices are data movement that fusion folds into
    their consumers (GEMM and attention operand views, pointwise kernels).

    Siblings: `kiln.matmul` ops in one block with the same lhs value, each
    rhs a rank-2 `kiln.constant` with N_i a multiple of 8 (so every slice
    starts on a 16-byte boundary for 16-bit types); other matmuls of that
    lhs are left out of the group. A group of two or more is fused unless
    the concatenated weight exceeds 2^28 bytes. When every sibling is read
    only by an add of a constant bias of shape `[N_i]` (BERT), the biases are
    concatenated too and added once before slicing, so the bias stays in the
    GEMM's epilogue; otherwise the adds stay, each on its slice.

    The new ops are created where the earliest sibling was: the lhs
    dominates every sibling, and every former user comes after its own
    sibling. Result types are unchanged. Runs after precision assignment (so
    the concatenated weight is built from the narrowed ones) and before
    fusion. A sibling whose result is returned, directly or through reshapes
    and casts, is left out: its slice would be a copy kernel.

    Before:
    ```mlir
    %q = kiln.matmul %x, %wq : tensor<1x16x128xf32>, tensor<128x128xf32> -> tensor<1x16x128xf32>
    %k = kiln.matmul %x, %wk : tensor<1x16x128xf32>, tensor<128x64xf32> -> tensor<1x16x64xf32>
    ```
    After:
    ```mlir
    %w = kiln.constant dense<...> : tensor<128x192xf32>
    %m = kiln.matmul %x, %w : tensor<1x16x128xf32>, tensor<128x192xf32> -> tensor<1x16x192xf32>
    %q = kiln.slice %m {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x16x192xf32> -> tensor<1x16x128xf32>
    %k = kiln.slice %m {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<1x16x192xf32> -> tensor<1x16x64xf32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def InterleaveGlu : Pass<"kiln-interleave-glu", "mlir::func::FuncOp"> {
  let summary = "Interleave gate/up weight columns so a gated MLP unit is one GEMM epilogue.";
  let description = [{
    After `kiln-fuse-sibling-gemms`, SwiGLU / GeGLU is `Y = x [Wg | Wu]`,
    `Mul(f(Y[..., :N]), Y[..., N:])` with `f` elementwise. The weight (and a
    constant bias added to Y) is reordered to columns `g0 u0 g1 u1 ...` and the
    slices become step-2 slices; with 16-bit or TF32 GEMMs, kiln-fuse-pointwise
    then makes the unit the GEMM's pair epilogue (one kernel, no [.., 2N]
    intermediate). Anything else is left as it is.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def ShardTensorParallel : Pass<"kiln-shard-tensor-parallel", "mlir::func::FuncOp"> {
  let summary = "Megatron-style tensor-parallel sharding of attention and MLP GEMMs for one rank.";
  let description = [{
    Rewrites the graph of one transformer model into the graph of rank `rank`
    of `tp-size` ranks (Shoeybi et al. 2019, "Megatron-LM"):

    - For each `kiln.attention`, the projections feeding query, key and value
      (a `kiln.matmul` with a constant rank-2 weight, then constant bias adds,
      slices of a fused QKV result, reshapes to heads, transposes,
      `kiln.rotary`) become column-parallel: the weight and bias keep only
      the columns of this rank's heads, `[r*Hq/N, (r+1)*Hq/N)` and likewise
      for the KV heads, picked per head (a fused QKV weight is not cut in
      column blocks). The types of everything between the GEMM and the
      attention shrink to the local head counts.
    - The attention output projection (the GEMM reading the attention result
      after transposes/reshapes that flatten the heads) becomes row-parallel:
      its weight keeps the rows of this rank's heads and its result goes
      through `kiln.all_reduce`. The bias and residual adds that follow go
      into the sum once: rank 0 adds them before its all-reduce (they fuse
      into its GEMM epilogue), the other ranks drop them.
    - An MLP is a GEMM with a constant weight `[F, C]` whose lhs comes, through
      elementwise ops and last-dim slices only, from GEMMs with constant
      weights (up, gate; a fused or `kiln-interleave-glu`-interleaved gate/up
      weight keeps its pairs). The up/gate GEMMs become column-parallel over
      `[r*F/N, (r+1)*F/N)`, the down GEMM row-parallel plus `kiln.all_reduce`.
    - Norms, embeddings, position tables and everything else stay replicated.

    Preconditions: static shapes, after `kiln-raise-attention` (and
    optionally `kiln-fuse-sibling-gemms` / `kiln-interleave-glu`).
    KV heads fewer than `tp-size` are replicated: rank r keeps KV head
    `r*Hkv/N`, the one its query heads read (needs Hkv to divide N).
    Errors: query heads, KV heads (when at least N) or MLP width not divisible
    by `tp-size`, fewer KV heads than ranks that do not divide N, or an attention whose
    operands do not come from constant-weight projections. `tp-size=1`
    changes nothing. In `kiln-pipeline` (and `kiln-compile --tensor-parallel
    N`) it runs after the raise, precision assignment and sibling-fusion
    passes.

    With `loopback=true` the function becomes every rank's graph side by
    side, each group of all-reduces replaced by a `kiln.add` chain of the N
    ranks' inputs (`kiln-compile --tensor-parallel N --tp-loopback`): one GPU
    runs all shards, which checks the sharding against the unsharded model.

    Before (GPT-2, fused QKV `[8, 24]`, 2 heads), after at tp-size=2 rank=0:
    ```mlir
    %qkv = kiln.matmul %h, %w : tensor<1x4x8xf32>, tensor<8x24xf32> -> tensor<1x4x24xf32>
    // becomes, with %w0 = columns 0-3, 8-11, 16-19 of %w:
    %qkv = kiln.matmul %h, %w0 : tensor<1x4x8xf32>, tensor<8x12xf32> -> tensor<1x4x12xf32>
    %o = kiln.matmul %a, %wo0 : tensor<1x4x4xf32>, tensor<4x8xf32> -> tensor<1x4x8xf32>
    %s = kiln.all_reduce %o : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
    ```
  }];
  let options = [
    Option<"tpSize", "tp-size", "int64_t", /*default=*/"1",
           "Number of tensor-parallel ranks N">,
    Option<"rank", "rank", "int64_t", /*default=*/"0",
           "This rank r, 0 <= r < N">,
    Option<"loopback", "loopback", "bool", /*default=*/"false",
           "Build all N ranks' graphs into one function with a sum in place of "
           "each all-reduce (runs every shard on one GPU; rank is ignored)">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def AssignPrecision : Pass<"kiln-assign-precision", "mlir::func::FuncOp"> {
  let summary = "Store activations and weights in the chosen precision (fp16, bf16).";
  let description = [{
    With `precision=fp16` or `bf16`, every f32 tensor inside the function
    becomes that type: constants (weights) are converted, rounding to nearest
    even and saturating (a finite value never becomes inf, so an additive mask
    of -1e12 or the f32 minimum stays the most negative finite value); every
    other op's f32 result changes type in place; casts to f32 become casts to
    the new type, saturating like every 16-bit store (`saturate_finite`: the
    model asked for f32, so ONNX Cast's overflow to inf does not apply). The
    function's own inputs and outputs keep the model's types: f32 arguments
    are cast on entry (saturating), results cast back before the return; a
    model's own cast of an f32 argument keeps reading the argument, so it
    rounds the exact value once. Kernels compute in fp32 registers whatever
    the storage type (GEMMs accumulate in fp32; norm, softmax and reduction
    statistics are fp32), so this pass only changes what is stored.

    `fp32` (default) changes nothing. `tf32` keeps f32 storage and records
    `kiln.precision = #kiln.precision<tf32>` on the function: GEMMs then run
    on the tensor cores with TF32 operands. The chosen precision is recorded
    as `kiln.precision = #kiln.precision<...>` on the function in every case.

    Precondition: runs before fusion (no `kiln.kernel` yet).

    Before (`precision=fp16`):
    ```mlir
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %c = kiln.constant dense<-1.0e12> : tensor<4xf32>
      %y = kiln.add %x, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      return %y : tensor<4xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = kiln.cast %x {saturate_finite} : tensor<4xf32> -> tensor<4xf16>
      %c = kiln.constant dense<-6.550400e+04> : tensor<4xf16>
      %y = kiln.add %0, %c : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
      %1 = kiln.cast %y : tensor<4xf16> -> tensor<4xf32>
      return %1 : tensor<4xf32>
    }
    ```
  }];
  let options = [
    Option<"precision", "precision", "kiln::Precision", /*default=*/"kiln::Precision::FP32",
           "Storage and GEMM precision", [{::llvm::cl::values(
             clEnumValN(kiln::Precision::FP32, "fp32", "fp32 everywhere (IEEE per op)"),
             clEnumValN(kiln::Precision::TF32, "tf32", "fp32 storage, TF32 tensor-core GEMMs"),
             clEnumValN(kiln::Precision::FP16, "fp16", "fp16 storage, fp32 accumulation"),
             clEnumValN(kiln::Precision::BF16, "bf16", "bf16 storage, fp32 accumulation"))}]>,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def BindGenerationInputs : Pass<"kiln-bind-generation-inputs", "mlir::func::FuncOp"> {
  let summary = "Bind the inputs and outputs a KV-cache runtime owns, before folding.";
  let description = [{
    First half of compiling a generation step (`kiln-compile --kv-cache`;
    docs/generation.md); `kiln-paged-kv-cache` is the second. The runtime
    keeps every sequence's keys and values itself, so a Hugging Face export
    with cache inputs and outputs is compiled with an empty past (the driver
    gives `past_key_values.*` a past length of 0) and this pass:

    - replaces an integer or bool `attention_mask` argument `[B, S]` by a
      constant of ones (the runtime batches sequences of different lengths
      through their lengths, not padding), so the causal mask folds;
    - drops the `present.*` results (the cache the runtime owns replaces
      them);
    - erases arguments with zero elements (the empty past), once nothing
      reads them.

    An `attention_mask` of another shape (e.g. `[B, past + S]` with a
    non-zero past) is an error naming it.

    Before:
    ```mlir
    func.func @main(%ids: tensor<1x4xi64> {kiln.name = "input_ids"}, %m: tensor<1x4xi64> {kiln.name = "attention_mask"}) -> ...
    ```
    After: `%m` is gone; its uses read `kiln.constant dense<1> : tensor<1x4xi64>`.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PagedKvCache : Pass<"kiln-paged-kv-cache", "mlir::func::FuncOp"> {
  let summary = "Make causal attention append to and read from a paged KV cache (a generation step).";
  let description = [{
    Turns the graph of a decoder's forward pass over `S` new tokens into one
    step of text generation with a KV cache the runtime owns (vLLM's
    PagedAttention layout, Kwon et al. 2023). Every `kiln.attention` must be
    causal self-attention over this step's tokens (`causal`, no mask,
    `Sq == Sk`; at `S = 1` every unmasked attention qualifies, since one
    token sees only itself: kiln-compile first checks the model at two
    tokens); each becomes

    ```mlir
    %kc1, %vc1 = kiln.kv_cache_append %k, %v, %kc, %vc, %table, %lens : ...
    %o = kiln.paged_attention %q, %kc1, %vc1, %table, %lens {scale = ..., bshd_output = ...} : ...
    ```

    The function gains the arguments the runtime fills, each with a
    `kiln.role`: `kv_cache.block_table` (`[B, MB]` i32, `MB` =
    ceil(max-seq-len / block-size)), `kv_cache.seq_lens` (`[B]` i32) and,
    per attention in program order, `kv_cache.<l>.key` / `.value`
    (`[num-blocks, Hkv, block-size, D]` in the attention's element type;
    num-blocks 0 means `B * MB`, room for every row at max-seq-len). The
    model's `position_ids` argument gets the `position_ids` role (kiln-compile
    --kv-cache gives a plain causal-LM export one at import, made from its
    positions Range: docs/generation.md, form b). A model still without a
    `position_ids` input computes token positions from constants inside the
    graph; it is refused with an error that says how to export it, as is a
    non-causal or masked attention (an encoder).

    A step of more than one token (a prefill chunk of batch 1) returns only
    the logits of its last real token, `[1, 1, V]` (with `last-token-logits`,
    the default): the lm_head GEMM reads that one row of the final hidden
    states, gathered at position_ids[S - 1] - position_ids[0] (the runtime
    repeats the last real token's position in the padding after it). The
    lm_head over 2048 rows was 0.43 ms of a 9 ms first token. A step of one
    token per row (decode) also returns `next_token` (`[B, 1]` i64), and so
    does such a prefill chunk: with `sampling` (the default) a `kiln.sample`
    of the logits with five more arguments, each `[B]` with its `kiln.role`
    (`sampling.temperature` f32, `sampling.top_k` i32, `sampling.top_p` f32,
    `sampling.seed` i64, `sampling.offset` i64), so greedy and sampled rows
    both get their token on the GPU; without, the greedy token alone
    (`kiln.arg_reduce <max>`), and a runtime samples on the host.

    Runs after kiln-assign-precision (the caches take the storage type) and
    before fusion.
  }];
  let options = [
    Option<"lastTokenLogits", "last-token-logits", "bool", /*default=*/"true",
           "A step of several tokens returns the logits of its last real token only">,
    Option<"deviceSampling", "sampling", "bool", /*default=*/"true",
           "next_token is kiln.sample with per-row sampling inputs (false: the greedy arg-max)">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"16",
           "Tokens per KV-cache block (a contiguous cache is one block of max-seq-len)">,
    Option<"maxSeqLen", "max-seq-len", "int64_t", /*default=*/"0",
           "Most tokens one sequence may hold (prompt and generated); required">,
    Option<"numBlocks", "num-blocks", "int64_t", /*default=*/"0",
           "Blocks in each layer's pool (0: batch * ceil(max-seq-len / block-size))">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SplitWideConcats : Pass<"kiln-split-wide-concats", "mlir::func::FuncOp"> {
  let summary = "Split a `kiln.concat` of many operands into a tree of small ones.";
  let description = [{
    A `kiln.concat` with more than `max-inputs` operands becomes a balanced
    tree of concats along the same axis, each with at most `max-inputs`
    operands. Every kernel built from one then has a bounded number of
    parameters (the runtime launches at most 512) and a bounded amount of
    generated code per concat, whatever the model's fan-in (an ONNX Concat of
    10,000 inputs is legal).

    Precondition: none (runs on graph-level IR, before fusion).
    Postcondition: no `kiln.concat` has more than `max-inputs` operands.

    Before (`max-inputs=2`):
    ```mlir
    %y = kiln.concat %a, %b, %c {axis = 0 : i64} : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32> -> tensor<3x4xf32>
    ```
    After:
    ```mlir
    %0 = kiln.concat %a, %b {axis = 0 : i64} : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
    %y = kiln.concat %0, %c {axis = 0 : i64} : tensor<2x4xf32>, tensor<1x4xf32> -> tensor<3x4xf32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"maxInputs", "max-inputs", "unsigned", /*default=*/"32",
           "Largest number of operands one kiln.concat keeps (at least 2)">,
  ];
}

def FusePointwise : Pass<"kiln-fuse-pointwise", "mlir::func::FuncOp"> {
  let summary = "Group chains of fusible ops into `kiln.kernel` regions.";
  let description = [{
    Fusible ops (`KilnFusible`: pointwise math, casts, selects, broadcasts,
    reshapes, transposes, slices, concats, gathers) join the group of their
    consumers when all of them are fusible ops of one group (a value read
    several times inside a group is evaluated once per element); each group
    becomes one `kiln.kernel` whose body computes every result element
    independently. A value read by two groups, or by a non-fusible op that
    does not take it as a prologue, ends its group and is materialized.
    Groups made only of reshapes stay outside kernels (they are views,
    aliased by memory planning).

    With `fuse-epilogues`, a `kiln.matmul`, `kiln.softmax` or
    `kiln.layer_norm` whose result is read only inside one group, by
    elementwise ops that never broadcast it (reshapes allowed: bias add,
    activation, residual add, NaN guard), joins that group as its anchor: the
    kernel computes the anchor and applies the pointwise ops to each result
    element before storing.

    With `fuse-reduction-prologues`, a `kiln.reduce` anchors a group that its
    single-use fusible producers join: the kernel computes each input element
    on the fly (RMSNorm's `x * x` never reaches memory). With
    `fuse-gemm-prologues`, a `kiln.matmul` does the same for producers of its
    operands that are cheap to recompute (transpose, slice, expand, cast,
    and + - * / max min with a scalar constant): the attention head split and
    the score scaling are read through the GEMM's operand loaders. A reshape
    read directly by the GEMM stays a view.

    Before:
    ```mlir
    %0 = kiln.add %a, %b : ...
    %1 = kiln.tanh %0 : ...
    ```
    After:
    ```mlir
    %1 = kiln.kernel @fused_0_add_tanh(%a, %b) : (...) -> ... { ... }
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"maxOpsPerKernel", "max-ops-per-kernel", "unsigned", /*default=*/"64",
           "Largest number of ops fused into one kernel">,
    Option<"maxInputsPerKernel", "max-inputs-per-kernel", "unsigned", /*default=*/"128",
           "Largest number of operands (tensors read from memory) of one fused kernel">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Fuse a GEMM, softmax or layer norm into its elementwise consumer group">,
    Option<"fuseReductionPrologues", "fuse-reduction-prologues", "bool", /*default=*/"true",
           "Fuse the fusible producers of a reduction's input into its kernel">,
    Option<"fuseGemmPrologues", "fuse-gemm-prologues", "bool", /*default=*/"true",
           "Fuse cheap producers (transposes, slices, scaling) of GEMM operands into the GEMM">,
    Option<"fuseKeyRotary", "fuse-key-rotary", "bool", /*default=*/"false",
           "Fuse a kiln.rotary on attention's key into the attention kernel (default false: "
           "its own kernel; fused, every query block rotates each K tile it reads)">,
    Option<"recomputeRotaryTables", "recompute-rotary-tables", "bool", /*default=*/"false",
           "A KV-cache append or paged attention computes the cos and sin of its decode-sized "
           "rotary tables itself (default false: the tables are a kernel of their own, measured "
           "faster)">,
  ];
}

def OutlineKernels : Pass<"kiln-outline-kernels", "mlir::func::FuncOp"> {
  let summary = "Wrap every remaining compute op into its own `kiln.kernel`.";
  let description = [{
    After fusion, GEMMs, softmaxes, normalizations, reductions and cumulative
    sums that are not yet inside a kernel each become a single-op
    `kiln.kernel`. Postcondition: the function body holds only
    `kiln.constant`, `kiln.reshape` (views), `kiln.kernel` and the return.
    Kernel names are `<index>_<op>` in program order, so output is deterministic.
    A kernel with a zero-element result is an error (no empty launches).
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FuseKvAppend : Pass<"kiln-fuse-kv-append", "mlir::func::FuncOp"> {
  let summary = "Merge a decode step's KV cache append kernel into the paged attention kernel that reads the appended cache.";
  let description = [{
    Runs on kernels (after `kiln-outline-kernels`, before `kiln-plan-memory`:
    a function whose kernels already have `arena_offsets` is an error). A
    kernel that is only a `kiln.kv_cache_append` (with its fused producers: the key's rotary, the
    slices of the QKV GEMM's output) whose two results are read by one
    kernel alone, a `kiln.paged_attention` over exactly those pools with the
    same block table and lengths, at one new token per sequence (a decode
    step, where codegen always takes the decode kernel), is merged into that
    kernel: one launch instead of two per layer. The merged kernel yields the
    attention's output, then the two pools (in place, as the append kernel
    did); its name is the attention kernel's with `kv_cache_append_` after the
    index. Codegen (compiler/codegen/DecodeAttentionEmitter.cpp) passes the new
    keys and values to `kiln::decodeAttentionPartial`, whose blocks write the
    rows of their own split chunk before reading it.
    Everything else is left alone: prefill chunks (their attention kernels
    read the cache through TMA or the tensor-core prefill kernel), appends
    read by more than one kernel, pools shared between layers.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FuseNormIntoGemm : Pass<"kiln-fuse-norm-into-gemm", "mlir::func::FuncOp"> {
  let summary = "Fold a layer norm or RMS norm kernel into the Hopper GEMM kernels that read it, or an RMS norm into few-row GEMMs' A loader.";
  let description = [{
    Runs on kernels (after `kiln-outline-kernels`). A kernel that is only a
    `kiln.layer_norm` or `kiln.rms_norm` over the last dim (constant scale and
    bias; reshapes after it allowed), whose every reader is a GEMM kernel that
    uses it only as its matmul's lhs with a constant rank-2 weight W [K, N], is
    removed: each GEMM reads the norm's input x instead, and

      LN(x) W + ... = rstd (x W' - mean c) + b' + ...,
      W' = diag(scale) W,  c = column sums of W',  b' = bias W,
      RMS(x) W = rstd (x W'),

    with W' (rounded to W's type), c and b' (fp32) folded at compile time
    and `kiln.row_stats` giving each row's mean and rstd (Chan's pairwise
    update, fp32). The Hopper GEMM (`kiln::gemmSm90`, ROWSTATS) computes the
    statistics from the A tiles its consumers multiply, so x is read once and
    the normalized tensor never reaches memory: one kernel and one
    M x K write and read less per norm. Layer norm's `x W' - mean c` cancels
    when |mean| is large against the row's spread; it is evaluated in fp32
    from the fp32 accumulator.

    Applies when the target has wgmma (sm_90), operands are f16 or bf16, K
    and N are multiples of 8 (TMA's 16-byte strides), W is a dense constant
    and W' stays finite; with `kiln-select-tiles`' sm90-gemm off, or the
    experimental wgmma tile, it must not run (the pipeline leaves it out).
    kiln-select-tiles then picks a tile without split-K.

    With `few-row` (default on), an RMS norm whose readers are all few-row
    GEMMs (at most 16 rows in all: decode steps, `kiln::isFewRowGemm`) is
    folded into their A loader instead, with W unchanged:

      RMS(x) W = rstd ((x * scale) W),

    the GEMM's lhs becomes `kiln.mul x, scale` (evaluated as A is staged)
    and `kiln.row_stats x` (rms) gives the epilogue its rstd; the few-row GEMM
    (`kiln::gemmSkinnyRms`) sums x^2 as it stages A. Since W is not rescaled,
    the decode and prefill programs of one artifact still share every
    weight. Layer norms keep their kernel there. With `hopper` off the
    Hopper form above is not applied (kiln-compile's default).
  }];
  let options = [
    Option<"hopper", "hopper", "bool", /*default=*/"true",
           "Fold norms into Hopper GEMMs (W rescaled at compile time)">,
    Option<"fewRow", "few-row", "bool", /*default=*/"true",
           "Fold RMS norms into the A loader of few-row (decode) GEMMs">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SelectTiles : Pass<"kiln-select-tiles", "mlir::func::FuncOp"> {
  let summary = "Choose the tile shape and launch size of every GEMM and attention kernel.";
  let description = [{
    Plans each `kiln.kernel` anchored on `kiln.matmul` or `kiln.attention`
    for the module's `#kiln.target` (`kiln.target`, set by kiln-compile from
    the first `--target`; the `sm_90` entry of the target table when the
    module has none) and records the choice as a typed attribute that
    codegen reads:

    - fp32 GEMMs (CUDA cores): `kiln.gemm_tile = #kiln.gemm_tile<bm, bn, bk,
      tm, tn, ks>` from a table of block tiles (64x64 down to 16x16, BK 32,
      256 threads; ks thread groups split each K slice). Occupancy first:
      the largest tile that still gives every SM a block (`sm_count`), else
      the tile giving the most blocks, so the small GEMMs of batch-1
      inference spread over more SMs instead of running long K loops on a
      handful of them.
    - f16/bf16 GEMMs, and fp32 GEMMs under `#kiln.precision<tf32>`:
      `kiln.mma_tile = #kiln.mma_tile<bm, bn, bk, wm, wn, stages>` (mma.sync),
      chosen by estimating the busiest SM's time for each candidate tile:
      waves x co-resident blocks x tile area / the rate those blocks reach
      together (per-tile constants for one block alone and for a full SM).
      Tiles over the target's shared memory per block are skipped, and
      co-resident blocks are capped by its shared memory per SM (sizes from
      cuda/smem_sizes.h). `mma-tile` overrides the choice for 16-bit GEMMs.
      With `wgmma` (the target must have wgmma tensor cores), 16-bit GEMMs
      get `kiln.wgmma_tile = #kiln.wgmma_tile<bm, bn, bk, warpgroups,
      stages>` by the same model.
    - f16/bf16 GEMMs on a target with wgmma tensor cores (sm_90), with
      `sm90-gemm` (the default) and neither `wgmma` nor `mma-tile`:
      `kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm, bn, consumers, stages,
      split_k, pingpong>` for the TMA + warp-specialized wgmma GEMM
      (cuda/gemm_sm90.cuh), beside the mma.sync tile that codegen uses when
      TMA cannot read an operand. The candidate with the least estimated time
      wins: waves x (a per-MAC cost x the tile's MACs per block + a per-wave
      cost) + a fixed cost, waves = ceil(blocks / sm_count) (blocks = tiles x
      split_k), with per-candidate constants fit to the H200 benchmark of
      test/gpu/gemm_sm90_test.cu (docs/results.md). Split-K candidates
      (clusters of 2..8 blocks sharing a tile's K) serve GEMMs with few
      output tiles, such as batch-1 prefill (M = 128).
    - beside those, with `skinny-gemm` (the default), a GEMM of at most 16
      rows in all (M, times the batch when the weight is shared by the
      batch: a decode step), N a multiple of 4, K >= 64 and no folded norm:
      `kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows, split_k>` for
      kiln::gemmSkinny (cuda/gemm_skinny.cuh), which reads the weight once
      at memory bandwidth. split_k (blocks of one cluster sharing 64 columns)
      is the least that gives every SM two blocks, at most 8, with at least
      128 K rows per block, cut back while the blocks would need a second
      wave or the column tiles' clusters would not all be resident
      (kiln::residentClusters). Codegen uses it when the weight is a row-major,
      8-byte aligned parameter shared by every batch. With
      `skinny-tensor-cores` on (or auto, from kiln::kMinSkinnyTensorCoreRows
      rows on) the tile gets `tensor_cores = true`, the inner product on
      mma.sync, when its shared memory fits the target's block; codegen
      falls back to the CUDA cores when the weight's rows are not 16-byte
      aligned. The reason says which and why.
    - attention with 16-bit storage and D == Dv a multiple of 16:
      `kiln.attention_tile = #kiln.attention_tile<warps, row_fragments,
      key_tile>`, the largest query tile (16 x row_fragments x warps rows)
      that still gives every SM a block. With `sm90-attention` on a target
      with wgmma tensor cores, also `kiln.sm90_attention_tile =
      #kiln.sm90_attention_tile<query_tile, key_tile, stages, pingpong>` for
      the Hopper kernel (cuda/attention_sm90.cuh: 128 query rows, 128 keys
      per tile, or 64 when the accumulators and a per-score mask need the
      registers), unless its 128-row query tiles would leave SMs idle.

    Tensor-core choices also record why as `kiln.tile_reason` (blocks,
    waves, estimate), so `--emit=kernels` shows it.

    ```mlir
    %0 = kiln.kernel @k2_matmul(...) {kiln.gemm_tile = #kiln.gemm_tile<bm = 16, bn = 16, bk = 32,
           tm = 2, tn = 2, ks = 4>} ...
    %1 = kiln.kernel @k3_matmul(...) {kiln.mma_tile = #kiln.mma_tile<bm = 128, bn = 128, bk = 32,
           wm = 2, wn = 4, stages = 4>,
           kiln.tile_reason = "192 blocks on 132 SMs, 1 wave(s), est. ..."} ...
    ```
  }];
  let options = [
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "16-bit GEMMs use Hopper wgmma tiles (`kiln.wgmma_tile`; needs a target with wgmma, "
           "sm_90, compiled as sm_90a); an mma.sync path of the same block shape serves other "
           "targets of the artifact">,
    Option<"wgmmaMmaFallback", "wgmma-mma-fallback", "bool", /*default=*/"false",
           "With `wgmma`: the artifact also targets GPUs without wgmma, so each wgmma kernel's "
           "mma.sync path is compiled too; only tiles that path supports are chosen">,
    Option<"sm90Gemm", "sm90-gemm", "bool", /*default=*/"true",
           "16-bit GEMMs on a target with wgmma (sm_90) get a `kiln.sm90_gemm_tile` for the "
           "TMA + warp-specialized wgmma GEMM (the mma.sync tile stays beside it for operands "
           "TMA cannot read); ignored on other targets and with `wgmma` or `mma-tile`">,
    Option<"skinnyGemm", "skinny-gemm", "bool", /*default=*/"true",
           "With `sm90-gemm`: 16-bit GEMMs of at most 16 rows in all (decode steps) also get a "
           "`kiln.skinny_gemm_tile` (kiln::gemmSkinny, the weight read once)">,
    Option<"skinnyTensorCores", "skinny-tensor-cores", "kiln::SkinnyTensorCores",
           /*default=*/"kiln::SkinnyTensorCores::Auto",
           "Where `kiln.skinny_gemm_tile` GEMMs multiply: `tensor_cores = true` (mma.sync, A "
           "rounded to the weight's type) when on, or when auto from "
           "kiln::kMinSkinnyTensorCoreRows rows on, and the tensor-core path's shared memory "
           "fits the target's block", [{::llvm::cl::values(
             clEnumValN(kiln::SkinnyTensorCores::Off, "off", "the CUDA cores"),
             clEnumValN(kiln::SkinnyTensorCores::Auto, "auto",
                        "the tensor cores from kiln::kMinSkinnyTensorCoreRows rows on "
                        "(default)"),
             clEnumValN(kiln::SkinnyTensorCores::On, "on", "the tensor cores for any rows"))}]>,
    Option<"skinnyWeightPreload", "skinny-weight-preload", "bool", /*default=*/"true",
           "On targets with wgmma (sm_90), unless skinny-tensor-cores=off: a "
           "`kiln.skinny_gemm_tile` GEMM whose tensor-core path fits 3 blocks on an SM (1-2 "
           "rows) multiplies on the tensor cores, planned for 2 blocks per SM so the next "
           "kernel's block fits beside them (`preload = true`), and codegen copies a constant "
           "weight's first ring stages to shared memory before the grid-dependency wait">,
    Option<"skinnyPreloadRows", "skinny-preload-rows", "int64_t", /*default=*/"2",
           "With skinny-weight-preload: the most rows (2..16) whose `kiln.skinny_gemm_tile` "
           "GEMMs preload their weight. Above the rows whose default tensor-core plan leaves "
           "the SM's third block slot free (1-2 on sm_90), A is staged in the longest chunk "
           "(`a_chunk`) with which 3 blocks fit the SM by shared memory, so 2 run and the next "
           "kernel's block fits beside them; where no chunk of at least 128 K rows does, no "
           "preload. Default 2: today's plan">,
    Option<"skinnyTcOccupancy", "skinny-tc-occupancy", "int64_t", /*default=*/"0",
           "A `kiln.skinny_gemm_tile` GEMM on the tensor cores without the preload is planned "
           "for this many blocks per SM (2..4): the longest A chunk (`a_chunk`) with which that "
           "many blocks' shared memory fits the target's SM, registers capped by "
           "`min_blocks_per_sm`, the split-K counted with that many blocks; where none fits, or "
           "at 0 (default), the default plan">,
    Option<"skinnyL2Prefetch", "skinny-l2-prefetch", "bool", /*default=*/"false",
           "A `kiln.skinny_gemm_tile` gets `l2_prefetch = true`: before the grid-dependency "
           "wait each block issues prefetch.global.L2 for the next rows of its share of the "
           "weight (off by default since session 30: slower on the H200)">,
    Option<"splitKv", "split-kv", "bool", /*default=*/"true",
           "With `sm90-gemm`: a decode step's paged attention over a long cache gets a "
           "`kiln.split_kv` (its keys split over a cluster of blocks)">,
    Option<"decodeAttentionPreload", "decode-attention-preload", "bool", /*default=*/"true",
           "A `kiln.split_kv` gets `preload = true`: the decode attention reads the lengths, "
           "the block table and its first tiles' cached keys and values before the "
           "grid-dependency wait">,
    Option<"sm90Attention", "sm90-attention", "bool", /*default=*/"true",
           "Attention with 16-bit storage on a target with wgmma (sm_90) also gets a "
           "`kiln.sm90_attention_tile` for the Hopper TMA + wgmma attention kernel when it fits "
           "(the mma.sync `kiln.attention_tile` stays beside it for operands TMA cannot read)">,
    Option<"sm90AttentionPersistent", "sm90-attention-persistent", "kiln::Sm90AttentionLaunch",
           /*default=*/"kiln::Sm90AttentionLaunch::Auto",
           "With `sm90-attention`: how the Hopper attention kernel is launched: persistent (at "
           "most one block per SM walking the query tiles) or one block per query tile", [{::llvm::cl::values(
             clEnumValN(kiln::Sm90AttentionLaunch::Grid, "off", "one block per query tile"),
             clEnumValN(kiln::Sm90AttentionLaunch::Auto, "auto",
                        "persistent up to kiln::kSm90AttentionPersistentWaves waves of query "
                        "tiles (default)"),
             clEnumValN(kiln::Sm90AttentionLaunch::Persistent, "on", "persistent blocks"))}]>,
    Option<"sm90PrefillAttention", "sm90-prefill-attention", "bool", /*default=*/"true",
           "With `sm90-attention`: a prefill chunk's paged attention also gets a "
           "`kiln.sm90_attention_tile` (the Hopper kernel reading K and V from the cache pools "
           "by TMA through the block table) where the cache's block size suits its key tile">,
    Option<"mmaTile", "mma-tile", "std::string", /*default=*/"",
           "Use this MMA tile (BMxBNxBKxWMxWNxSTAGES) for every 16-bit GEMM instead of the "
           "cost model's choice (for experiments)">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PlanWeightPrefetch : Pass<"kiln-plan-weight-prefetch", "mlir::func::FuncOp"> {
  let summary = "Let each decode GEMM warm L2 with the next decode GEMM's weight.";
  let description = [{
    A decode step reads each layer's weights once, through a few-row GEMM
    kernel per weight (`#kiln.skinny_gemm_tile` with `preload = true`). A
    kernel keeps the device memory busy only while its blocks stream: its
    start (launch, the first loads' latency) and its end (the last blocks, the
    split-K reduction, the epilogue) leave it idle, a few microseconds per
    kernel. This pass gives every such kernel the constant weight of the next
    one in program order (another kernel may run between them, e.g. the
    attention): the weight becomes an input of the kernel when it is not one
    already, and `kiln.l2_prefetch = #kiln.l2_prefetch<operand, bytes>` says
    which input and how many of its first bytes (at most `max-bytes`; 0, the
    default, takes the target's `l2_bytes` / 2). Codegen then issues bulk L2
    prefetches of that range before the kernel's grid-dependency wait, spread
    over its blocks, so the memory streams the next weight while this one is
    multiplied and the next kernel reads from L2. The last such kernel of the
    program gets nothing.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"0",
           "The most bytes of the next weight one kernel prefetches (0: the target's l2_bytes / "
           "2; a target without l2_bytes prefetches nothing)">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PlanMemory : Pass<"kiln-plan-memory", "mlir::func::FuncOp"> {
  let summary = "Assign arena offsets to kernel results by liveness.";
  let description = [{
    Computes each kernel result's live interval over the kernel order (a
    reshape view extends the interval of the buffer it aliases; function
    results stay live to the end) and packs intervals into one activation
    arena with best-fit offset assignment, aligned to `alignment` bytes.
    Sets `arena_offsets` on every `kiln.kernel` and, on the function,
    `kiln.arena_alignment`, `kiln.arena_bytes` and `kiln.intermediate_bytes`
    (the sum of all kernel result sizes, i.e. the arena size without reuse).
    The liveness analysis alone is `analyzeBufferLiveness` (passes/Passes.h).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Byte alignment of every buffer in the arena">,
  ];
}

#endif // KILN_PASSES_TD
