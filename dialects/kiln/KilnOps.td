//===- KilnOps.td - kiln dialect ops -----------------------*- tablegen -*-===//
//
// Graph ops (pointwise, data movement, GEMM, normalization, reductions), the
// shape-subgraph ops that fold away, and the `kiln.kernel` region op.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "KilnBase.td"
include "KilnAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Kiln_Tensor : RankedTensorOf<[F32, F16, BF16, I64, I32, I16, I8, UI64, UI32, UI16, UI8, I1]>;
def Kiln_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Kiln_IndexTensor : RankedTensorOf<[I64, I32]>;
def Kiln_BoolTensor : RankedTensorOf<[I1]>;

/// Marker trait for ops computed one output element at a time from operand
/// elements at computable coordinates: codegen can inline them into a fused
/// pointwise kernel.
def Kiln_Fusible : NativeOpTrait<"KilnFusible"> {
  let cppNamespace = "::kiln";
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant", [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A tensor constant (weights, folded shapes and masks).";
  let description = [{
    Holds an `ElementsAttr` whose type is the result type. Weights imported
    from ONNX initializers and the results of folded shape subgraphs are
    `kiln.constant`s. Codegen places them in the artifact's weight segment.

    ```mlir
    %0 = kiln.constant dense<[2, 16]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Kiln_ShapeOp : Kiln_Op<"shape", [Pure]> {
  let summary = "The shape of a tensor as a 1-D i64 tensor (ONNX Shape).";
  let description = [{
    Returns dims `[start, end)` of the operand's static shape. Always folds,
    since kiln specializes shapes before import.

    ```mlir
    %s = kiln.shape %x {start = 0 : i64, end = 2 : i64} : tensor<2x16x128xf32> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Kiln_RangeOp : Kiln_Op<"range", [Pure]> {
  let summary = "A 1-D arithmetic sequence (ONNX Range).";
  let description = [{
    `start`, `limit` and `delta` are 0-d tensors; the static result length is
    `max(ceil((limit - start) / delta), 0)`, so the operands must fold to
    constants for the result type to be known at import.

    ```mlir
    %r = kiln.range %start, %limit, %delta : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<16xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$start, Kiln_Tensor:$limit, Kiln_Tensor:$delta);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` type($start) `,` type($limit) `,` type($delta) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pointwise ops
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType, Kiln_Fusible], traits)> {
  let summary = "Elementwise " # what # ".";
  let description = [{
    Applies the function to every element; operand and result types match.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x : tensor<2x16xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Kiln_NegOp : Kiln_UnaryOp<"neg", "negation">;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", "natural exponential">;
def Kiln_LogOp : Kiln_UnaryOp<"log", "natural logarithm">;
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", "square root">;
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", "reciprocal (1/x)">;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", "hyperbolic tangent">;
def Kiln_ErfOp : Kiln_UnaryOp<"erf", "Gauss error function">;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", "logistic sigmoid 1/(1+exp(-x))">;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", "max(x, 0)">;
def Kiln_CosOp : Kiln_UnaryOp<"cos", "cosine">;
def Kiln_SinOp : Kiln_UnaryOp<"sin", "sine">;
def Kiln_NotOp : Kiln_UnaryOp<"not", "logical negation of i1">;

def Kiln_IsNaNOp : Kiln_Op<"is_nan", [Pure, SameOperandsAndResultShape, Kiln_Fusible]> {
  let summary = "Elementwise NaN test; the result is i1.";
  let description = [{
    ```mlir
    %m = kiln.is_nan %x : tensor<1x1x16x16xf32> -> tensor<1x1x16x16xi1>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure, SameOperandsAndResultShape, Kiln_Fusible]> {
  let summary = "Elementwise element-type conversion (ONNX Cast).";
  let description = [{
    Converts each element to the result element type: float to integer
    truncates toward zero, anything to i1 is `x != 0`, i1 to numbers is 0/1.
    A conversion to a narrower float (f32 to f16 or bf16, f16 to bf16, ...)
    rounds to nearest even as IEEE 754 does: a finite value half an ulp or
    more past the largest finite value becomes an infinity (f32 65520.0 is
    f16 inf, 65519.99 is 65504), infinities and NaN stay. A cast is an
    identity only between equal types: two casts that narrow and widen again
    round the value and are never folded away.

    With `saturate_finite` (set by the compiler's own precision conversions,
    never by the ONNX importer) a finite value that would overflow becomes the
    largest finite value of its sign instead, the rule 16-bit results are
    stored by: an additive mask of -1e9 stays a large finite negative number
    in f16. Only a floating-point result may carry it.

    ```mlir
    %f = kiln.cast %m : tensor<2x16xi64> -> tensor<2x16xf32>
    %h = kiln.cast %x {saturate_finite} : tensor<2x16xf32> -> tensor<2x16xf16>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, UnitAttr:$saturate_finite);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

class Kiln_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat([Pure, Kiln_Fusible], traits)> {
  let summary = "Elementwise " # what # " with numpy broadcasting.";
  let description = [{
    Operands broadcast per ONNX multidirectional broadcasting; the verifier
    checks that the result shape is the broadcast shape and the element types.

    ```mlir
    %z = kiln.}] # mnemonic # [{ %x, %y : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// Result element type class this op requires: 0 = same as operands,
    /// 1 = i1 from any operands (comparisons), 2 = i1 from i1 (logic).
    static int getResultKind();
  }];
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "addition">;
def Kiln_SubOp : Kiln_BinaryOp<"sub", "subtraction">;
def Kiln_MulOp : Kiln_BinaryOp<"mul", "multiplication">;
def Kiln_DivOp : Kiln_BinaryOp<"div", "division (integers truncate)">;
def Kiln_PowOp : Kiln_BinaryOp<"pow", "power">;
def Kiln_MaxOp : Kiln_BinaryOp<"max", "maximum">;
def Kiln_MinOp : Kiln_BinaryOp<"min", "minimum">;
def Kiln_ModOp : Kiln_BinaryOp<"mod", "integer remainder with the sign of the divisor (ONNX Mod, fmod = 0; Python %; a zero divisor gives 0)">;
def Kiln_FModOp : Kiln_BinaryOp<"fmod", "remainder with the sign of the dividend (ONNX Mod, fmod = 1; C fmod; a zero integer divisor gives 0)">;
def Kiln_EqualOp : Kiln_BinaryOp<"equal", "equality comparison to i1">;
def Kiln_LessOp : Kiln_BinaryOp<"less", "less-than comparison to i1">;
def Kiln_LessEqualOp : Kiln_BinaryOp<"less_equal", "less-or-equal comparison to i1">;
def Kiln_GreaterOp : Kiln_BinaryOp<"greater", "greater-than comparison to i1">;
def Kiln_GreaterEqualOp : Kiln_BinaryOp<"greater_equal", "greater-or-equal comparison to i1">;
def Kiln_AndOp : Kiln_BinaryOp<"and", "logical and of i1">;
def Kiln_OrOp : Kiln_BinaryOp<"or", "logical or of i1">;

def Kiln_WhereOp : Kiln_Op<"where", [Pure, Kiln_Fusible]> {
  let summary = "Elementwise select with numpy broadcasting (ONNX Where).";
  let description = [{
    ```mlir
    %r = kiln.where %c, %x, %y : tensor<1x1x16x16xi1>, tensor<f32>, tensor<2x4x16x16xf32> -> tensor<2x4x16x16xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$true_value, Kiln_Tensor:$false_value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$condition `,` $true_value `,` $false_value attr-dict `:` type($condition) `,` type($true_value) `,` type($false_value) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure, Kiln_Fusible]> {
  let summary = "Reinterprets a tensor with a new static shape of equal size.";
  let description = [{
    ONNX Reshape, Squeeze, Unsqueeze and Flatten import as `kiln.reshape`.
    Row-major element order is unchanged, so memory planning can alias it.

    ```mlir
    %y = kiln.reshape %x : tensor<2x16x128xf32> -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_Op<"transpose", [Pure, Kiln_Fusible]> {
  let summary = "Permutes dimensions: result dim i is operand dim perm[i].";
  let description = [{
    ```mlir
    %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x32xf32> -> tensor<2x4x16x32xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [Pure, Kiln_Fusible]> {
  let summary = "Strided static slice: result[i] = input[starts + i * steps] per dim.";
  let description = [{
    ONNX Slice (with constant starts/ends/axes/steps, normalized at import)
    and Split import as `kiln.slice`. `starts` and `steps` have one entry per
    dimension; steps may be negative.

    ```mlir
    %y = kiln.slice %x {starts = array<i64: 0, 128>, steps = array<i64: 1, 1>} : tensor<32x384xf32> -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$steps);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat", [Pure, Kiln_Fusible]> {
  let summary = "Concatenates tensors along `axis` (non-negative).";
  let description = [{
    ```mlir
    %y = kiln.concat %a, %b {axis = 0 : i64} : tensor<1xi64>, tensor<2xi64> -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ExpandOp : Kiln_Op<"expand", [Pure, Kiln_Fusible]> {
  let summary = "Broadcasts a tensor to the static result shape (ONNX Expand).";
  let description = [{
    ```mlir
    %y = kiln.expand %x : tensor<1x1x16xf32> -> tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_GatherOp : Kiln_Op<"gather", [Pure, Kiln_Fusible]> {
  let summary = "Gathers slices along `axis` by indices (ONNX Gather).";
  let description = [{
    Result shape is `data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end; out-of-range indices are clamped by
    the generated kernel (ONNX leaves them undefined).

    ```mlir
    %e = kiln.gather %table, %ids {axis = 0 : i64} : tensor<1000x128xf32>, tensor<2x16xi64> -> tensor<2x16x128xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_GatherElementsOp : Kiln_Op<"gather_elements", [Pure, Kiln_Fusible]> {
  let summary = "Elementwise gather along `axis` (ONNX GatherElements).";
  let description = [{
    `result[i...] = data[i_0, ..., indices[i...], ..., i_n]`, indices replacing
    the `axis` coordinate; the result has the shape of `indices`.

    ```mlir
    %y = kiln.gather_elements %d, %i {axis = 1 : i64} : tensor<1x512xi64>, tensor<1x16xi64> -> tensor<1x16xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_GatherNDOp : Kiln_Op<"gather_nd", [Pure, Kiln_Fusible]> {
  let summary = "Gathers slices by index tuples (ONNX GatherND).";
  let description = [{
    With `batch_dims = b` and `q = rank(indices)`, the last index dimension
    `k` selects `data[..., idx_0, ..., idx_{k-1}, ...]`; the result shape is
    `indices.shape[:-1] + data.shape[b+k:]`.

    ```mlir
    %y = kiln.gather_nd %d, %i {batch_dims = 0 : i64} : tensor<16x16xi1>, tensor<16x1xi64> -> tensor<16x16xi1>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices, I64Attr:$batch_dims);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_CumSumOp : Kiln_Op<"cumsum", [Pure, SameOperandsAndResultType]> {
  let summary = "Cumulative sum along `axis` (ONNX CumSum).";
  let description = [{
    ```mlir
    %y = kiln.cumsum %x {axis = 1 : i64, exclusive = false, reverse = false} : tensor<2x16xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis, BoolAttr:$exclusive, BoolAttr:$reverse);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Compute ops: GEMM, normalization, reductions
//===----------------------------------------------------------------------===//

def Kiln_MatMulOp : Kiln_Op<"matmul", [Pure]> {
  let summary = "Batched matrix product with broadcast batch dims (ONNX MatMul).";
  let description = [{
    `lhs: [..., M, K]`, `rhs: [..., K, N]` (rank >= 2 each; ONNX 1-D operands
    are reshaped at import), batch dims broadcast, result `[..., M, N]`.
    Floating point only; accumulation is fp32.

    ```mlir
    %y = kiln.matmul %a, %b : tensor<2x16x128xf32>, tensor<128x384xf32> -> tensor<2x16x384xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
  // Constant operands (e.g. Llama's rotary inv_freq x positions) fold on the
  // host, up to 2^26 multiply-adds.
  let hasFolder = 1;
}

def Kiln_SoftmaxOp : Kiln_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Softmax along one axis (ONNX Softmax-13).";
  let description = [{
    Numerically safe: subtracts the row maximum before exponentiation. A row of
    all `-inf` yields zeros rather than NaN.

    ```mlir
    %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x4x16x16xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kiln_LayerNormOp : Kiln_Op<"layer_norm", [Pure]> {
  let summary = "Layer normalization over the dims from `axis` on (ONNX LayerNormalization-17).";
  let description = [{
    `y = (x - mean) / sqrt(var + epsilon) * scale + bias`, statistics in fp32
    over dims `[axis, rank)`. `scale` and optional `bias` have the normalized
    shape.

    ```mlir
    %y = kiln.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<2x16x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Optional<Kiln_FloatTensor>:$bias, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` type($input) `,` type($scale) (`,` type($bias)^)? `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_RotaryOp : Kiln_Op<"rotary", [Pure, Kiln_Fusible]> {
  let summary = "Rotary position embedding, rotate-half form (RoPE; Su et al. 2021, arXiv:2104.09864).";
  let description = [{
    `y = x * cos + rotate_half(x) * sin` with
    `rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2])` along the last dim
    (Hugging Face's apply_rotary_pos_emb). `cos` and `sin` broadcast to x's
    shape (numpy rules); D is even. Computed in fp32 per element, rounded once
    when stored. `kiln-raise-attention` produces it from the exporters'
    Slice / Neg / Concat / Mul / Add spelling; inside an attention kernel the
    rotation is applied to the Q and K tiles as they are loaded.

    ```mlir
    %y = kiln.rotary %x, %cos, %sin : tensor<1x4x16x32xf32>, tensor<1x1x16x32xf32>, tensor<1x1x16x32xf32> -> tensor<1x4x16x32xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$cos, Kiln_FloatTensor:$sin);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos) `,` type($sin) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_RmsNormOp : Kiln_Op<"rms_norm", [Pure]> {
  let summary = "RMS normalization over the dims from `axis` on (ONNX RMSNormalization-23).";
  let description = [{
    `y = x / sqrt(mean(x^2) + epsilon) * scale`, the mean of squares in fp32
    over dims `[axis, rank)` (Zhang & Sennrich 2019, "Root Mean Square Layer
    Normalization"; Llama's LlamaRMSNorm). `scale` has the normalized shape.
    `kiln-raise-rms-norm` produces it from exporters' decompositions.

    ```mlir
    %y = kiln.rms_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-06 : f32} : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` type($input) `,` type($scale) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_RowStatsOp : Kiln_Op<"row_stats", [Pure]> {
  let summary = "Per-row statistics of a layer or RMS norm, folded into the GEMM that reads the row (kiln-fuse-norm-into-gemm).";
  let description = [{
    For every row of `input` (its last dim, K values) the mean and
    `rstd = 1 / sqrt(var + epsilon)` (population variance), or with `rms`
    mean 0 and `rstd = 1 / sqrt(mean(x^2) + epsilon)`; fp32 statistics, two f32
    results `[..., 1]`. Created only by `kiln-fuse-norm-into-gemm`
    inside a GEMM kernel whose matmul reads `input` as its lhs: the Hopper
    GEMM computes the statistics from the A tiles it multiplies, and the
    epilogue reads them at the row it is writing. No other kernel computes it.

    ```mlir
    %mean, %rstd = kiln.row_stats %x {epsilon = 1.0e-05 : f32, rms = false} : tensor<256x768xf16> -> tensor<256x1xf32>, tensor<256x1xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$epsilon, BoolAttr:$rms);
  let results = (outs Kiln_FloatTensor:$mean, Kiln_FloatTensor:$rstd);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($mean) `,` type($rstd)";
  let hasVerifier = 1;
}

def Kiln_AttentionOp : Kiln_Op<"attention", [Pure]> {
  let summary = "Scaled dot-product attention softmax(scale * Q K^T + mask) V, fused (FlashAttention-2).";
  let description = [{
    `query: [B, Hq, Sq, D]`, `key: [B, Hkv, Sk, D]`, `value: [B, Hkv, Sk, Dv]`
    with `Hq` a multiple of `Hkv` (grouped-query attention: query head `h`
    reads key/value head `h / (Hq / Hkv)`; `Hkv = 1` is multi-query). The
    optional additive `mask` (same element type) broadcasts to
    `[B, Hq, Sq, Sk]` (numpy rules, rank <= 4). With `causal`, key `j` is
    visible to query `i` only when `j <= i + (Sk - Sq)` (the bottom-right
    aligned causal mask; Sq == Sk gives the usual lower triangle).

    Scores are `scale * dot(q_i, k_j) + mask[i, j]` in fp32; the softmax over
    `j` and the weighted sum over values are fp32 too (online softmax,
    FlashAttention-2: Dao 2023, arXiv:2307.08691), so no `[Sq, Sk]` tensor is
    ever stored. A row whose scores are all `-inf` gives NaN, as
    Softmax + MatMul give in ONNX, or zeros with `zero_masked_rows` (the
    `Where(IsNaN(softmax), 0, softmax)` that torch's exporter emits).

    The result is `[B, Hq, Sq, Dv]`, or `[B, Sq, Hq, Dv]` with `bshd_output`
    (the transpose that precedes the output projection, absorbed).
    `kiln-raise-attention` produces this op from exporters' MatMul / Softmax
    chains.

    ```mlir
    %o = kiln.attention %q, %k, %v {scale = 0.125 : f64, causal = true, zero_masked_rows = false, bshd_output = false} : tensor<1x4x16x64xf16>, tensor<1x4x16x64xf16>, tensor<1x4x16x64xf16> -> tensor<1x4x16x64xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key, Kiln_FloatTensor:$value,
                       Optional<Kiln_FloatTensor>:$mask, F64Attr:$scale, BoolAttr:$causal,
                       BoolAttr:$zero_masked_rows, BoolAttr:$bshd_output);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$query `,` $key `,` $value (`,` $mask^)? attr-dict `:` type($query) `,` type($key) `,` type($value) (`,` type($mask)^)? `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// KV cache (text generation)
//===----------------------------------------------------------------------===//

def Kiln_I32Tensor : RankedTensorOf<[I32]>;

def Kiln_KvCacheAppendOp : Kiln_Op<"kv_cache_append", [Pure]> {
  let summary = "Write a generation step's keys and values into a layer's paged KV cache.";
  let description = [{
    `keys: [B, Hkv, S, D]` and `values: [B, Hkv, S, Dv]` hold this step's
    keys and values of `B` sequences, `S` tokens each; `key_cache:
    [NB, Hkv, BS, D]` and `value_cache: [NB, Hkv, BS, Dv]` are one layer's
    pools of `NB` blocks of `BS` tokens (vLLM's PagedAttention layout: Kwon
    et al. 2023, arXiv:2309.06180); `block_table: [B, MB]` (i32) maps a
    sequence's logical block `t / BS` to a pool block; `seq_lens: [B]` (i32)
    counts the tokens each sequence already holds before this step. Token
    `i` of sequence `b` goes to position `p = seq_lens[b] + i`: block
    `block_table[b, p / BS]`, row `p % BS`. The results are the pools after
    the write; they live in the same buffers as the cache operands (the
    runtime owns the pools: graph inputs whose role says so), so the op
    costs `B*Hkv*S*(D+Dv)` element writes, not a copy of the pools.
    Positions `p >= MB * BS` are not written (the runtime refuses such a
    step before it runs).

    ```mlir
    %kc1, %vc1 = kiln.kv_cache_append %k, %v, %kc, %vc, %table, %lens : tensor<2x2x1x32xf16>, tensor<2x2x1x32xf16>, tensor<16x2x16x32xf16>, tensor<16x2x16x32xf16>, tensor<2x8xi32>, tensor<2xi32> -> tensor<16x2x16x32xf16>, tensor<16x2x16x32xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$keys, Kiln_FloatTensor:$values,
                       Kiln_FloatTensor:$key_cache, Kiln_FloatTensor:$value_cache,
                       Kiln_I32Tensor:$block_table, Kiln_I32Tensor:$seq_lens);
  let results = (outs Kiln_FloatTensor:$key_result, Kiln_FloatTensor:$value_result);
  let assemblyFormat = "$keys `,` $values `,` $key_cache `,` $value_cache `,` $block_table `,` $seq_lens attr-dict `:` type($keys) `,` type($values) `,` type($key_cache) `,` type($value_cache) `,` type($block_table) `,` type($seq_lens) `->` type($key_result) `,` type($value_result)";
  let hasVerifier = 1;
}

def Kiln_PagedAttentionOp : Kiln_Op<"paged_attention", [Pure]> {
  let summary = "Causal attention of a generation step's queries over a paged KV cache.";
  let description = [{
    `query: [B, Hq, S, D]`, `key_cache: [NB, Hkv, BS, D]`,
    `value_cache: [NB, Hkv, BS, Dv]`, `block_table: [B, MB]` (i32),
    `seq_lens: [B]` (i32), as in `kiln.kv_cache_append`, whose results the
    caches are: this step's keys and values are already in them. Query `i`
    of sequence `b` sits at position `seq_lens[b] + i` and attends the cache
    tokens `j <= seq_lens[b] + i` (causal), query head `h` reading key/value
    head `h / (Hq / Hkv)`:
    `out[b, h, i] = sum_j softmax_j(scale * q . k_j) v_j`, fp32 scores and
    statistics. The time follows the valid length, not the cache capacity
    (split-KV, FlashDecoding: Dao et al. 2023). The result is
    `[B, Hq, S, Dv]`, or `[B, S, Hq, Dv]` with `bshd_output`.
    `kiln-paged-kv-cache` makes this op from a causal `kiln.attention`.

    ```mlir
    %o = kiln.paged_attention %q, %kc1, %vc1, %table, %lens {scale = 0.125 : f64, bshd_output = true} : tensor<2x4x1x32xf16>, tensor<16x2x16x32xf16>, tensor<16x2x16x32xf16>, tensor<2x8xi32>, tensor<2xi32> -> tensor<2x1x4x32xf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key_cache,
                       Kiln_FloatTensor:$value_cache, Kiln_I32Tensor:$block_table,
                       Kiln_I32Tensor:$seq_lens, F64Attr:$scale, BoolAttr:$bshd_output);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$query `,` $key_cache `,` $value_cache `,` $block_table `,` $seq_lens attr-dict `:` type($query) `,` type($key_cache) `,` type($value_cache) `,` type($block_table) `,` type($seq_lens) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Not Pure: a collective synchronizes with the other ranks, so it must not
/// be erased, hoisted, merged by CSE or reordered against other collectives.
def Kiln_AllReduceOp : Kiln_Op<"all_reduce"> {
  let summary = "Sum of a tensor over the tensor-parallel ranks.";
  let description = [{
    Every rank contributes its `input` and receives the elementwise sum over
    all ranks of the tensor-parallel group; result and input types are equal.
    `kiln-shard-tensor-parallel` inserts it after each row-parallel GEMM
    (attention output and MLP down projections), before any bias or residual
    add. In the runtime it maps to NCCL all-reduce (`ncclAllReduce` with
    `ncclSum`) on the rank's stream. The op has side effects (no `Pure`):
    every rank must execute the same collectives in the same order.

    ```mlir
    %y = kiln.all_reduce %x : tensor<1x16x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ReduceOp : Kiln_Op<"reduce", [Pure]> {
  let summary = "Sum, mean, max or min over a set of axes (ONNX ReduceSum/Mean/Max/Min).";
  let description = [{
    `axes` are sorted non-negative dims; with `keep_dims` they stay as 1s.

    ```mlir
    %m = kiln.reduce <mean> %x {axes = array<i64: 2>, keep_dims = true} : tensor<2x16x128xf32> -> tensor<2x16x1xf32>
    ```
  }];
  let arguments = (ins Kiln_ReduceKindAttr:$kind, Kiln_Tensor:$input, DenseI64ArrayAttr:$axes, BoolAttr:$keep_dims);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ArgReduceOp : Kiln_Op<"arg_reduce", [Pure]> {
  let summary = "Index of the maximum or minimum along one axis (ONNX ArgMax/ArgMin).";
  let description = [{
    `kind` is `max` or `min`; the result is i64 with dim `axis` reduced (kept
    as 1 with `keep_dims`). Ties give the first index, or the last with
    `select_last_index`. NaN counts as larger than every number for `max` and
    smaller for `min`, so the first NaN wins (numpy's argmax/argmin).

    ```mlir
    %i = kiln.arg_reduce <max> %x {axis = 1 : i64, keep_dims = false, select_last_index = false} : tensor<2x16xf32> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_ReduceKindAttr:$kind, Kiln_Tensor:$input, I64Attr:$axis,
                       BoolAttr:$keep_dims, BoolAttr:$select_last_index);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_SampleOp : Kiln_Op<"sample", [Pure]> {
  let summary = "The next token of each row: greedy, or temperature / top-k / top-p sampling.";
  let description = [{
    Picks one token per row of `logits` (`[B, V]`, or `[B, 1, V]`: a decode
    step's last token) with per-row parameters that are run-time inputs of
    the step (`[B]` each): `temperature` (f32), `top_k` (i32), `top_p` (f32)
    and the row's random stream, `seed` and `offset` (i64; the offset counts
    the sequence's draws). The result is i64 `[B, 1]`.

    A row with `temperature <= 0` (or NaN) is greedy: the first maximum, a NaN
    never picked (all NaN: token 0). Otherwise the token is drawn from
    softmax(logits / temperature) restricted to the `top_k` largest logits
    (`top_k <= 0` or `>= V`: all; ties by lower id) and then to the smallest
    set of the most likely tokens whose probability reaches `top_p` (`top_p >=
    1` or NaN: all; `top_p <= 0`: the most likely token), renormalized: the
    rule of `kiln_sampling_params_t` (runtime.h). The uniform draw is
    Philox4x32-10 at key `seed`, counter `offset`, so a row's token depends on
    its logits and parameters only, not on the batch row or the launch
    configuration; that makes the op `Pure`.

    ```mlir
    %t = kiln.sample %logits, %temperature, %top_k, %top_p, %seed, %offset : (tensor<2x1x32000xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xi64>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$logits, RankedTensorOf<[F32]>:$temperature,
                       Kiln_I32Tensor:$top_k, RankedTensorOf<[F32]>:$top_p,
                       RankedTensorOf<[I64]>:$seed, RankedTensorOf<[I64]>:$offset);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$logits `,` $temperature `,` $top_k `,` $top_p `,` $seed `,` $offset attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def Kiln_KernelOp : Kiln_Op<"kernel", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A fused group of graph ops that codegen turns into one GPU kernel.";
  let description = [{
    The body takes one block argument per operand and yields the kernel's
    results. Fusion creates kernels; memory planning sets `arena_offsets`
    (one byte offset per result in the activation arena); codegen emits one
    CUDA `__global__` function named `sym_name` per kernel.

    ```mlir
    %r = kiln.kernel @fused_add_tanh(%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>):
      %s = kiln.add %x, %y : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
      %t = kiln.tanh %s : tensor<8xf32>
      kiln.yield %t : tensor<8xf32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Variadic<Kiln_Tensor>:$inputs,
                       OptionalAttr<DenseI64ArrayAttr>:$arena_offsets);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body";
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::TypeRange":$resultTypes,
                   "::mlir::ValueRange":$inputs)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    YieldOp getYield();
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, Terminator, ReturnLike, HasParent<"KernelOp">]> {
  let summary = "Returns the results of a `kiln.kernel` body.";
  let description = [{
    ```mlir
    kiln.yield %t : tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* empty */ }]>];
}

#endif // KILN_OPS_TD
