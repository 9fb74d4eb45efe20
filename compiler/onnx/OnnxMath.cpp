//===- OnnxMath.cpp - GEMM, normalization, softmax and reductions ---------===//
//
// MatMul (numpy semantics; 1-D operands are reshaped to 2-D and back), Gemm
// (transposes, alpha and beta*C as separate kiln ops that fold on constant
// weights), Softmax-13, LayerNormalization-17 (Y fused; Mean and InvStdDev when used),
// RMSNormalization-23 (the norm builders are shared with OnnxContrib.cpp) and
// ReduceMean/ReduceSum/ReduceMax (axes as an attribute or, in opset 18, as
// an operand; keepdims; noop_with_empty_axes) -> kiln.reduce.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

//===----------------------------------------------------------------------===//
// Normalization builders (shared with OnnxContrib.cpp)
//===----------------------------------------------------------------------===//

FailureOr<NormAttributes> onnx_import::getNormAttributes(NodeImporter &n, int64_t rank) {
  FailureOr<int64_t> axisAttr = n.getIntAttr("axis", -1);
  FailureOr<float> epsilon = n.getFloatAttr("epsilon", 1e-5f);
  FailureOr<int64_t> stashType = n.getIntAttr("stash_type", 1);
  if (failed(axisAttr) || failed(epsilon) || failed(stashType))
    return failure();
  if (*stashType != onnx::TensorProto::FLOAT)
    return n.emitUnsupported("stash_type " + Twine(*stashType) +
                             " (kiln computes statistics in FLOAT)");
  FailureOr<int64_t> axis = n.normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  return NormAttributes{*axis, *epsilon};
}

FailureOr<Value> onnx_import::getNormParameter(NodeImporter &n, Value param, StringRef what,
                                               RankedTensorType xType, int64_t axis) {
  auto t = cast<RankedTensorType>(param.getType());
  if (t.getElementType() != xType.getElementType())
    return n.emitError() << what << " " << t << " must have the element type of the input "
                         << xType;
  ArrayRef<int64_t> normShape = xType.getShape().drop_front(axis);
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(t.getShape(), normShape);
  if (failed(shape) || ArrayRef<int64_t>(*shape) != normShape)
    return n.emitError() << what << " " << t << " does not broadcast to the normalized shape "
                         << formatShape(normShape);
  if (t.getShape() == normShape)
    return param;
  return n.create<ExpandOp>(t.clone(normShape), param);
}

/// Helpers of buildLayerNorm/buildRmsNorm: `x` in float32 and a keep-dims
/// mean over dims [axis, rank) giving [d0, ..., d(axis-1), 1, ..., 1] f32.
namespace {
struct NormStatistics {
  NodeImporter &n;
  Value x;
  RankedTensorType f32Type, statType;
  SmallVector<int64_t> axes;

  NormStatistics(NodeImporter &n, Value input, int64_t axis) : n(n) {
    auto type = cast<RankedTensorType>(input.getType());
    Type f32 = n.getBuilder().getF32Type();
    f32Type = type.clone(f32);
    x = type.getElementType().isF32() ? input : n.create<CastOp>(f32Type, input);
    SmallVector<int64_t> statShape(type.getShape());
    for (int64_t d = axis; d < type.getRank(); ++d) {
      axes.push_back(d);
      statShape[d] = 1;
    }
    statType = RankedTensorType::get(statShape, f32);
  }
  Value mean(Value v) {
    Builder &b = n.getBuilder();
    return n.create<ReduceOp>(statType, ReduceKindAttr::get(n.getContext(), ReduceKind::Mean), v,
                              b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  }
  /// 1 / sqrt(meanSquare + epsilon).
  Value invSqrt(Value meanSquare, float epsilon) {
    Value e = n.createScalar(statType.getElementType(), epsilon);
    return n.create<ReciprocalOp>(
        statType, n.create<SqrtOp>(statType, n.create<AddOp>(statType, meanSquare, e)));
  }
};
} // namespace

NormResults onnx_import::buildLayerNorm(NodeImporter &n, Value x, Value scale, Value bias,
                                        int64_t axis, float epsilon, bool withMean,
                                        bool withInvStdDev) {
  NormResults r;
  // The statistics are computed from their definition with reductions when
  // something reads them; the fused Y path does not change.
  if (withMean || withInvStdDev) {
    NormStatistics s(n, x, axis);
    Value mu = s.mean(s.x);
    if (withMean)
      r.mean = mu;
    if (withInvStdDev) {
      Value d = n.create<SubOp>(s.f32Type, s.x, mu);
      r.invStdDev = s.invSqrt(s.mean(n.create<MulOp>(s.f32Type, d, d)), epsilon);
    }
  }
  Builder &b = n.getBuilder();
  r.y = n.create<LayerNormOp>(x.getType(), x, scale, bias, b.getI64IntegerAttr(axis),
                              b.getF32FloatAttr(epsilon));
  return r;
}

NormResults onnx_import::buildRmsNorm(NodeImporter &n, Value x, Value scale, int64_t axis,
                                      float epsilon, bool withInvStdDev) {
  NormResults r;
  if (withInvStdDev) {
    NormStatistics s(n, x, axis);
    r.invStdDev = s.invSqrt(s.mean(n.create<MulOp>(s.f32Type, s.x, s.x)), epsilon);
  }
  Builder &b = n.getBuilder();
  r.y = n.create<RmsNormOp>(x.getType(), x, scale, b.getI64IntegerAttr(axis),
                            b.getF32FloatAttr(epsilon));
  return r;
}

namespace {

/// `lhs @ rhs` for operands of rank >= 2 with broadcast batch dims.
FailureOr<Value> buildMatMul(NodeImporter &n, Value lhs, Value rhs) {
  auto a = cast<RankedTensorType>(lhs.getType()), b = cast<RankedTensorType>(rhs.getType());
  if (a.getElementType() != b.getElementType())
    return n.emitError() << "operand element types differ: " << a.getElementType() << " and "
                         << b.getElementType() << "; ONNX requires equal types";
  int64_t m = a.getDimSize(a.getRank() - 2), k = a.getShape().back();
  int64_t k2 = b.getDimSize(b.getRank() - 2), nDim = b.getShape().back();
  if (k != k2)
    return n.emitError() << "contraction dims differ: " << a << " and " << b;
  FailureOr<SmallVector<int64_t>> batch =
      n.broadcast(a.getShape().drop_back(2), b.getShape().drop_back(2));
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shape(*batch);
  shape.append({m, nDim});
  return n.create<MatMulOp>(a.clone(shape), lhs, rhs);
}

LogicalResult importMatMul(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)) || failed(n.checkFloat(0, "lhs")) ||
      failed(n.checkFloat(1, "rhs")))
    return failure();
  auto a = n.getInputType(0), b = n.getInputType(1);
  if (a.getRank() == 0 || b.getRank() == 0)
    return n.emitError() << "operands must have rank >= 1, got " << a << " and " << b;
  // numpy: a 1-D lhs [K] is [1, K], a 1-D rhs [K] is [K, 1]; the added dim
  // is dropped from the result.
  Value lhs = n.getInput(0), rhs = n.getInput(1);
  if (a.getRank() == 1)
    lhs = n.createReshape(lhs, {1, a.getDimSize(0)});
  if (b.getRank() == 1)
    rhs = n.createReshape(rhs, {b.getDimSize(0), 1});
  FailureOr<Value> product = buildMatMul(n, lhs, rhs);
  if (failed(product))
    return failure();
  Value result = *product;
  if (a.getRank() == 1 || b.getRank() == 1) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> shape(type.getShape().drop_back(2));
    if (a.getRank() != 1)
      shape.push_back(type.getDimSize(type.getRank() - 2));
    if (b.getRank() != 1)
      shape.push_back(type.getShape().back());
    result = n.createReshape(result, shape);
  }
  n.setResult(0, result);
  return success();
}

/// Gemm: alpha * op(A) @ op(B) + beta * C, with op = optional transpose.
LogicalResult importGemm(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 3)) || failed(n.checkFloat(0, "A")) ||
      failed(n.checkFloat(1, "B")))
    return failure();
  FailureOr<float> alpha = n.getFloatAttr("alpha", 1.0f), beta = n.getFloatAttr("beta", 1.0f);
  FailureOr<int64_t> transA = n.getIntAttr("transA", 0), transB = n.getIntAttr("transB", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  auto transpose = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return n.create<TransposeOp>(t.clone({t.getDimSize(1), t.getDimSize(0)}), v,
                                 n.getBuilder().getDenseI64ArrayAttr({1, 0}));
  };
  Value a = n.getInput(0), b = n.getInput(1);
  if (n.getInputType(0).getRank() != 2 || n.getInputType(1).getRank() != 2)
    return n.emitError() << "A and B must be 2-D, got " << n.getInputType(0) << " and "
                         << n.getInputType(1);
  if (*transA)
    a = transpose(a);
  if (*transB)
    b = transpose(b);
  FailureOr<Value> product = buildMatMul(n, a, b);
  if (failed(product))
    return failure();
  Value result = *product;
  auto type = cast<RankedTensorType>(result.getType());
  Type elem = type.getElementType();
  if (*alpha != 1.0f)
    result = n.create<MulOp>(type, result, n.createScalar(elem, *alpha));
  if (n.hasInput(2) && *beta != 0.0f) {
    Value c = n.getInput(2);
    auto ct = n.getInputType(2);
    if (ct.getElementType() != elem)
      return n.emitError() << "C element type " << ct.getElementType() << " differs from "
                           << elem << "; ONNX requires equal types";
    FailureOr<SmallVector<int64_t>> shape = n.broadcast(type.getShape(), ct.getShape());
    if (failed(shape))
      return failure();
    if (ArrayRef<int64_t>(*shape) != type.getShape())
      return n.emitError() << "C " << ct << " does not broadcast to the product " << type;
    if (*beta != 1.0f)
      c = n.create<MulOp>(ct, c, n.createScalar(elem, *beta));
    result = n.create<AddOp>(type, result, c);
  }
  n.setResult(0, result);
  return success();
}

/// What Softmax and LogSoftmax normalize: from opset 13 the input along
/// `axis` (default -1); before (versions 1 and 11) the input coerced to 2-D at
/// `axis` (default 1), [prod(d < axis), prod(d >= axis)], along dim 1. The
/// caller reshapes its result back to the input's shape (a no-op from 13).
struct SoftmaxOperand {
  Value x;
  RankedTensorType type;
  int64_t axis;
};

FailureOr<SoftmaxOperand> getSoftmaxOperand(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)) || failed(n.checkFloat(0)))
    return failure();
  auto type = n.getInputType(0);
  bool coerce = n.getOpset() < 13;
  FailureOr<int64_t> axis = n.getAxisAttr("axis", coerce ? 1 : -1, type.getRank());
  if (failed(axis))
    return failure();
  if (!coerce)
    return SoftmaxOperand{n.getInput(0), type, *axis};
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    (d < *axis ? rows : cols) *= type.getDimSize(d);
  auto flat = type.clone({rows, cols});
  return SoftmaxOperand{n.createReshape(n.getInput(0), flat.getShape()), flat, 1};
}

/// Softmax (1, 11, 13): one kiln.softmax over getSoftmaxOperand.
LogicalResult importSoftmax(NodeImporter &n) {
  FailureOr<SoftmaxOperand> in = getSoftmaxOperand(n);
  if (failed(in))
    return failure();
  Value y = n.create<SoftmaxOp>(in->type, in->x, n.getBuilder().getI64IntegerAttr(in->axis));
  n.setResult(0, n.createReshape(y, n.getInputType(0).getShape()));
  return success();
}

/// LayerNormalization-17: Y as one kiln.layer_norm (buildLayerNorm); the
/// optional Mean and InvStdDev outputs (float32) from reductions when used;
/// scale/bias broadcast to the normalized shape.
LogicalResult importLayerNorm(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 3)) || failed(n.checkFloat(0)))
    return failure();
  auto type = n.getInputType(0);
  FailureOr<NormAttributes> attrs = getNormAttributes(n, type.getRank());
  if (failed(attrs))
    return failure();
  FailureOr<Value> scale = getNormParameter(n, n.getInput(1), "scale", type, attrs->axis);
  if (failed(scale))
    return failure();
  Value bias;
  if (n.hasInput(2)) {
    FailureOr<Value> b = getNormParameter(n, n.getInput(2), "bias", type, attrs->axis);
    if (failed(b))
      return failure();
    bias = *b;
  }
  NormResults r = buildLayerNorm(n, n.getInput(0), *scale, bias, attrs->axis, attrs->epsilon,
                                 n.isOutputUsed(1), n.isOutputUsed(2));
  n.setResult(0, r.y);
  n.setResult(1, r.mean);
  n.setResult(2, r.invStdDev);
  return success();
}

/// RMSNormalization-23 (opset 23+): one kiln.rms_norm (buildRmsNorm);
/// `scale` broadcast to the normalized shape [d(axis), ..., d(rank-1)];
/// statistics in float (stash_type 1 only).
LogicalResult importRmsNorm(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)) || failed(n.checkFloat(0)))
    return failure();
  auto type = n.getInputType(0);
  FailureOr<NormAttributes> attrs = getNormAttributes(n, type.getRank());
  if (failed(attrs))
    return failure();
  FailureOr<Value> scale = getNormParameter(n, n.getInput(1), "scale", type, attrs->axis);
  if (failed(scale))
    return failure();
  n.setResult(0, buildRmsNorm(n, n.getInput(0), *scale, attrs->axis, attrs->epsilon,
                              /*withInvStdDev=*/false)
                     .y);
  return success();
}

} // namespace

/// Rotary embedding of x [B, H, S, D] on its first R = 2 * cos.dim(2) columns with cos/sin
/// [N, S, R/2] (N = B, or 1 shared by the batch): the pairs (x[2i], x[2i+1]) rotate by angle i
/// as elementwise ops when `interleaved`; otherwise kiln.rotary (rotate-half) with cos/sin =
/// concat(c, c) broadcast over the heads. The other D - R columns pass through.
Value onnx_import::buildRotary(NodeImporter &n, Value x, Value cosHalf, Value sinHalf,
                               bool interleaved) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto ct = cast<RankedTensorType>(cosHalf.getType());
  Type et = xt.getElementType();
  int64_t B = xt.getDimSize(0), H = xt.getDimSize(1), S = xt.getDimSize(2), D = xt.getDimSize(3);
  int64_t N = ct.getDimSize(0), R = 2 * ct.getDimSize(2);
  assert(ct.getRank() == 3 && (N == B || N == 1) && ct.getDimSize(1) == S && R <= D &&
         "rotary caches must be [B or 1, S, R/2] with R <= D");
  Builder &b = n.getBuilder();
  // Interleaved: [N, 1, S, R/2]. Rotate-half: concat(c, c) along the last dim, [N, 1, S, R];
  // either broadcasts over the heads.
  auto cache = [&](Value c) -> Value {
    if (interleaved)
      return n.createReshape(c, {N, 1, S, R / 2});
    Value full = n.create<ConcatOp>(RankedTensorType::get({N, S, R}, et), ValueRange{c, c},
                                    b.getI64IntegerAttr(2));
    return n.createReshape(full, {N, 1, S, R});
  };
  Value cos = cache(cosHalf), sin = cache(sinHalf);
  auto bhsr = RankedTensorType::get({B, H, S, R}, et);
  Value rot = x;
  Value rest;
  if (R < D) {
    rot = n.create<SliceOp>(bhsr, x, b.getDenseI64ArrayAttr({0, 0, 0, 0}),
                            b.getDenseI64ArrayAttr({1, 1, 1, 1}));
    rest = n.create<SliceOp>(RankedTensorType::get({B, H, S, D - R}, et), x,
                             b.getDenseI64ArrayAttr({0, 0, 0, R}),
                             b.getDenseI64ArrayAttr({1, 1, 1, 1}));
  }
  Value y;
  if (interleaved) {
    // Pairs (x[2i], x[2i+1]) rotate by angle i: [B, H, S, R/2, 2] split into even and odd.
    auto half = RankedTensorType::get({B, H, S, R / 2}, et);
    auto pairs = RankedTensorType::get({B, H, S, R / 2, 1}, et);
    Value x5 = n.createReshape(rot, {B, H, S, R / 2, 2});
    auto lane = [&](int64_t k) {
      Value l = n.create<SliceOp>(pairs, x5, b.getDenseI64ArrayAttr({0, 0, 0, 0, k}),
                                  b.getDenseI64ArrayAttr({1, 1, 1, 1, 1}));
      return n.createReshape(l, half.getShape());
    };
    Value even = lane(0), odd = lane(1);
    auto mul = [&](Value a, Value c) { return n.create<MulOp>(half, a, c); };
    Value e2 = n.create<SubOp>(half, mul(even, cos), mul(odd, sin));
    Value o2 = n.create<AddOp>(half, mul(even, sin), mul(odd, cos));
    Value cat = n.create<ConcatOp>(RankedTensorType::get({B, H, S, R / 2, 2}, et),
                                   ValueRange{n.createReshape(e2, pairs.getShape()),
                                              n.createReshape(o2, pairs.getShape())},
                                   b.getI64IntegerAttr(4));
    y = n.createReshape(cat, bhsr.getShape());
  } else {
    y = n.create<RotaryOp>(bhsr, rot, cos, sin);
  }
  if (rest)
    y = n.create<ConcatOp>(xt, ValueRange{y, rest}, b.getI64IntegerAttr(3));
  return y;
}

namespace {

/// RotaryEmbedding-23 (opset 23+); interleaved = 1 rotates the pairs (x[2i], x[2i+1]) by the
/// angle of i as elementwise ops; the rotate-half form (interleaved = 0):
/// X [B, H, S, D] or [B, S, H*D] (num_heads), cos/sin caches [P, R/2]
/// gathered by position_ids [B, S] (or given as [B, S, R/2] without them),
/// R = rotary_embedding_dim (0: D). Becomes kiln.rotary on the first R
/// columns with cos/sin = concat(cache, cache) broadcast over the heads; the
/// other D - R columns pass through (buildRotary).
LogicalResult importRotaryEmbedding(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 4)) || failed(n.checkFloat(0)))
    return failure();
  FailureOr<int64_t> interleaved = n.getIntAttr("interleaved", 0),
                     rotaryDim = n.getIntAttr("rotary_embedding_dim", 0),
                     numHeads = n.getIntAttr("num_heads", 0);
  if (failed(interleaved) || failed(rotaryDim) || failed(numHeads))
    return failure();
  auto type = n.getInputType(0);
  Type et = type.getElementType();
  Value x = n.getInput(0);
  if (type.getRank() != 3 && type.getRank() != 4)
    return n.emitError() << "input " << type << " must be 3-D [B, S, H*D] or 4-D [B, H, S, D]";
  if (n.hasInput(3) && !n.getInputType(3).getElementType().isInteger(64) &&
      !n.getInputType(3).getElementType().isInteger(32))
    return n.emitError() << "position_ids " << n.getInputType(3) << " must be an integer tensor";
  int64_t B = type.getDimSize(0);
  if (type.getRank() == 3) {
    if (*numHeads <= 0 || type.getDimSize(2) % *numHeads != 0)
      return n.emitError() << "a 3-D input " << type << " needs num_heads dividing its last dim, got "
                           << *numHeads;
    int64_t S = type.getDimSize(1), H = *numHeads, D = type.getDimSize(2) / H;
    // [B, S, H*D] -> [B, S, H, D] -> [B, H, S, D]
    Value v = n.createReshape(x, {B, S, H, D});
    x = n.create<TransposeOp>(RankedTensorType::get({B, H, S, D}, et), v,
                              n.getBuilder().getDenseI64ArrayAttr({0, 2, 1, 3}));
  }
  auto bhsd = cast<RankedTensorType>(x.getType());
  int64_t H = bhsd.getDimSize(1), S = bhsd.getDimSize(2), D = bhsd.getDimSize(3);
  int64_t R = *rotaryDim ? *rotaryDim : D;
  if (R <= 0 || R > D || R % 2 != 0)
    return n.emitError() << "rotary_embedding_dim " << R << " must be even and at most the head size "
                         << D;
  // cos/sin [B, S, R/2] (gathered by position ids when given).
  auto cache = [&](unsigned i) -> FailureOr<Value> {
    auto t = n.getInputType(i);
    if (t.getElementType() != et)
      return n.emitError() << (i == 1 ? "cos_cache " : "sin_cache ") << t
                           << " must have the element type of the input " << type;
    Value c = n.getInput(i);
    if (n.hasInput(3)) {
      auto ids = n.getInputType(3);
      if (t.getRank() != 2 || t.getDimSize(1) != R / 2 || ids.getRank() != 2 ||
          ids.getDimSize(0) != B || ids.getDimSize(1) != S)
        return n.emitError() << "with position_ids " << ids << " the caches must be [P, " << R / 2
                             << "], got " << t;
      return n.create<GatherOp>(RankedTensorType::get({B, S, R / 2}, et), c, n.getInput(3),
                                n.getBuilder().getI64IntegerAttr(0));
    }
    if (t.getShape() != ArrayRef<int64_t>{B, S, R / 2})
      return n.emitError() << "without position_ids the caches must be [" << B << ", " << S << ", "
                           << R / 2 << "], got " << t;
    return c;
  };
  FailureOr<Value> cos = cache(1);
  if (failed(cos))
    return failure();
  FailureOr<Value> sin = cache(2);
  if (failed(sin))
    return failure();
  Value y = buildRotary(n, x, *cos, *sin, *interleaved != 0);
  if (type.getRank() == 3) {
    Value t = n.create<TransposeOp>(RankedTensorType::get({B, S, H, D}, et), y,
                                    n.getBuilder().getDenseI64ArrayAttr({0, 2, 1, 3}));
    y = n.createReshape(t, type.getShape());
  }
  n.setResult(0, y);
  return success();
}
} // namespace

Value onnx_import::broadcastWhere(NodeImporter &n, Value cond, Value x, Value y) {
  auto shape = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
  SmallVector<int64_t> s = *broadcastShapes(shape(cond), shape(x));
  s = *broadcastShapes(s, shape(y));
  return n.create<WhereOp>(getTensorType(s, cast<RankedTensorType>(x.getType()).getElementType()),
                           cond, x, y);
}

/// ONNX Attention (opset 23-25) as ops, following the ONNX reference implementation
/// (onnx/reference/ops/op_attention.py): KV heads repeated for GQA (h0, h0, h1, h1, ...);
/// scores = (Q sqrt(scale)) (K sqrt(scale))^T; softcap * tanh(scores / softcap); plus the bias:
/// attn_mask, the causal frontier (key j visible to query i iff j <= i + offset), the sliding
/// window (i + offset - left <= j <= i + offset + right) and the nonpad_kv_seqlen padding; softmax
/// in softmax_precision; rows whose bias is all -inf are 0; times V. Returns Y [B, Hq, Sq, Dv]
/// and qk_matmul_output [B, Hq, Sq, Sk] as the spec's function body defines it (mode 0: the
/// scaled Q K^T before softcap, 1: after softcap, 2: softcapped plus the bias, 3: the
/// probabilities). Used where kiln.attention does not apply (softcap, windows,
/// qk_matmul_output, nonpad_kv_seqlen, a causal mask that is not bottom-right aligned);
/// kiln-raise-attention may still fuse the plain parts.
FailureOr<std::pair<Value, Value>>
onnx_import::buildCompositeAttention(NodeImporter &n, const AttentionParts &p) {
  Builder &b = n.getBuilder();
  auto qt = cast<RankedTensorType>(p.q.getType()), kt = cast<RankedTensorType>(p.k.getType()),
       vt = cast<RankedTensorType>(p.v.getType());
  Type et = qt.getElementType();
  int64_t B = qt.getDimSize(0), Hq = qt.getDimSize(1), Sq = qt.getDimSize(2), D = qt.getDimSize(3);
  int64_t Hkv = kt.getDimSize(1), Sk = kt.getDimSize(2), Dv = vt.getDimSize(3);
  double inf = std::numeric_limits<double>::infinity();
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  auto repeatHeads = [&](Value x, int64_t d) -> Value {
    if (Hkv == Hq)
      return x;
    Value r = n.createReshape(x, {B, Hkv, 1, Sk, d});
    Value e = n.create<ExpandOp>(RankedTensorType::get({B, Hkv, Hq / Hkv, Sk, d}, et), r);
    return n.createReshape(e, {B, Hq, Sk, d});
  };
  Value k = repeatHeads(p.k, D), v = repeatHeads(p.v, Dv);
  Value rootScale = n.createScalar(et, std::sqrt(p.scale));
  Value qs = broadcastBinary<MulOp>(n, p.q, rootScale);
  Value ks = broadcastBinary<MulOp>(n, k, rootScale);
  Value kT = n.create<TransposeOp>(RankedTensorType::get({B, Hq, D, Sk}, et), ks,
                                   b.getDenseI64ArrayAttr({0, 1, 3, 2}));
  auto scoreType = RankedTensorType::get({B, Hq, Sq, Sk}, et);
  Value scores = n.create<MatMulOp>(scoreType, qs, kT);
  // Mode 0 is the scaled Q K^T itself, before softcap: the spec's function body returns
  // QKAttnWeight there (the reference evaluator, onnx/reference/ops/op_attention.py, returns the
  // softcapped scores instead; onnxruntime follows the function body).
  Value qkOut = scores;
  if (p.softcap > 0.0f) {
    Value t = n.create<TanhOp>(scoreType, broadcastBinary<MulOp>(
                                              n, scores, n.createScalar(et, 1.0 / p.softcap)));
    scores = broadcastBinary<MulOp>(n, t, n.createScalar(et, p.softcap));
  }
  if (p.qkMode == 1)
    qkOut = scores;

  // The additive bias.
  Value bias = p.mask;
  auto addBias = [&](Value extra) { bias = bias ? broadcastBinary<AddOp>(n, bias, extra) : extra; };
  bool window = p.leftWindow >= 0 || p.rightWindow >= 0;
  // Per (i, j): a value c[i][j] compared with the offset decides one condition.
  auto table = [&](auto fn) {
    SmallVector<int64_t> values;
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < Sk; ++j)
        values.push_back(fn(i, j));
    return n.createConstant(
        DenseElementsAttr::get(RankedTensorType::get({Sq, Sk}, i64), ArrayRef<int64_t>(values)));
  };
  if (p.causal || window) {
    Value allowed;
    if (!p.nonpad) {
      SmallVector<bool> ok;
      for (int64_t i = 0; i < Sq; ++i)
        for (int64_t j = 0; j < Sk; ++j) {
          int64_t pos = i + p.offset;
          ok.push_back((!p.causal || j <= pos) && (p.leftWindow < 0 || pos - j <= p.leftWindow) &&
                       (p.rightWindow < 0 || j - pos <= p.rightWindow));
        }
      allowed = n.createConstant(
          DenseElementsAttr::get(RankedTensorType::get({Sq, Sk}, i1), ArrayRef<bool>(ok)));
    } else {
      // offset[b] = nonpad[b] - Sq, as [B, 1, 1] against [Sq, Sk] tables.
      Value off = broadcastBinary<SubOp>(n, n.createReshape(p.nonpad, {B, 1, 1}),
                                         n.createScalar(i64, double(Sq)));
      auto require = [&](Value c) {
        allowed = allowed ? broadcastBinary<AndOp>(n, allowed, c) : c;
      };
      if (p.causal) // j <= i + off  <=>  off >= j - i
        require(broadcastBinary<GreaterEqualOp>(n, off, table([](int64_t i, int64_t j) {
                                                    return j - i;
                                                  }), i1));
      if (p.leftWindow >= 0) // i + off - j <= left  <=>  off <= left - i + j
        require(broadcastBinary<LessEqualOp>(n, off, table([&](int64_t i, int64_t j) {
                                                 return p.leftWindow - i + j;
                                               }), i1));
      if (p.rightWindow >= 0) // j - (i + off) <= right  <=>  off >= j - i - right
        require(broadcastBinary<GreaterEqualOp>(n, off, table([&](int64_t i, int64_t j) {
                                                    return j - i - p.rightWindow;
                                                  }), i1));
      allowed = n.createReshape(allowed, {B, 1, Sq, Sk});
    }
    addBias(broadcastWhere(n, allowed, n.createScalar(et, 0.0), n.createScalar(et, -inf)));
  }
  if (p.nonpad) { // key j exists in batch b iff j < nonpad[b]
    SmallVector<int64_t> iota;
    for (int64_t j = 0; j < Sk; ++j)
      iota.push_back(j);
    Value keys = n.createConstant(
        DenseElementsAttr::get(RankedTensorType::get({1, Sk}, i64), ArrayRef<int64_t>(iota)));
    Value valid = broadcastBinary<LessOp>(n, keys, n.createReshape(p.nonpad, {B, 1}), i1);
    addBias(n.createReshape(
        broadcastWhere(n, valid, n.createScalar(et, 0.0), n.createScalar(et, -inf)),
        {B, 1, 1, Sk}));
  }
  Value withBias = bias ? broadcastBinary<AddOp>(n, scores, bias) : scores;
  if (p.qkMode == 2)
    qkOut = withBias;

  Type smType = et;
  if (p.softmaxPrecision) {
    smType = getElementType(n.getContext(), int32_t(p.softmaxPrecision));
    if (!smType || !isa<FloatType>(smType))
      return n.emitUnsupported("softmax_precision " +
                               getDataTypeName(int32_t(p.softmaxPrecision)) +
                               " (kiln computes softmax in FLOAT, FLOAT16 or BFLOAT16)");
  }
  Value x = smType == et ? withBias : n.create<CastOp>(scoreType.clone(smType), withBias);
  Value probs = n.create<SoftmaxOp>(scoreType.clone(smType), x, b.getI64IntegerAttr(3));
  // Rows whose bias is all -inf are 0, not Softmax's NaN. A constant bias is checked here.
  bool guard = bool(bias);
  DenseElementsAttr constBias;
  if (bias && matchPattern(bias, m_Constant(&constBias))) {
    int64_t row = cast<RankedTensorType>(bias.getType()).getShape().back(), k = 0;
    bool anyMasked = false, rowMasked = true;
    for (APFloat value : constBias.getValues<APFloat>()) {
      rowMasked &= value.isInfinity() && value.isNegative();
      if (++k % row == 0) {
        anyMasked |= rowMasked;
        rowMasked = true;
      }
    }
    guard = anyMasked;
  }
  if (guard) {
    auto bt = cast<RankedTensorType>(bias.getType());
    SmallVector<int64_t> rowShape(bt.getShape());
    rowShape.back() = 1;
    Value rowMax = n.create<ReduceOp>(RankedTensorType::get(rowShape, et),
                                      ReduceKindAttr::get(n.getContext(), ReduceKind::Max), bias,
                                      b.getDenseI64ArrayAttr({bt.getRank() - 1}),
                                      b.getBoolAttr(true));
    Value masked = broadcastBinary<EqualOp>(n, rowMax, n.createScalar(et, -inf), i1);
    probs = broadcastWhere(n, masked, n.createScalar(smType, 0.0), probs);
  }
  if (smType != et)
    probs = n.create<CastOp>(scoreType, probs);
  if (p.qkMode == 3)
    qkOut = probs;
  Value y = n.create<MatMulOp>(RankedTensorType::get({B, Hq, Sq, Dv}, et), probs, v);
  return std::make_pair(y, qkOut);
}

namespace {

/// Attention-23/24/25 (opset 23+). Q [B, Hq, Sq, D] and K/V [B, Hkv, Sk, D/Dv], or 3-D
/// [B, S, H*D] with q_num_heads / kv_num_heads; past_key/past_value are concatenated in front of
/// K/V along the sequence (their concatenations are present_key/present_value); attn_mask is
/// additive (float) or boolean (true = attend), broadcast to [B, Hq, Sq, Sk], its key dim padded
/// with -inf up to Sk; scale defaults to 1/sqrt(D); a fully masked row gives 0, as in the ONNX
/// reference. One kiln.attention (fused kernel) when the node is plain attention (is_causal
/// bottom-right aligned: Sq == Sk or a KV cache); otherwise buildCompositeAttention (softcap,
/// qk_matmul_output, sliding windows, nonpad_kv_seqlen, top-left causal with Sq != Sk).
LogicalResult importAttention(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 7)) || failed(n.checkFloat(0)))
    return failure();
  FailureOr<int64_t> causal = n.getIntAttr("is_causal", 0), qHeads = n.getIntAttr("q_num_heads", 0),
                     kvHeads = n.getIntAttr("kv_num_heads", 0),
                     qkMode = n.getIntAttr("qk_matmul_output_mode", 0);
  FailureOr<float> softcap = n.getFloatAttr("softcap", 0.0f);
  if (failed(causal) || failed(qHeads) || failed(kvHeads) || failed(qkMode) || failed(softcap))
    return failure();
  // Attention-25's sliding window; -1 (the default) leaves a side unbounded.
  FailureOr<int64_t> leftWindow = n.getIntAttr("left_window_size", -1),
                     rightWindow = n.getIntAttr("right_window_size", -1),
                     softmaxPrecision = n.getIntAttr("softmax_precision", 0);
  if (failed(leftWindow) || failed(rightWindow) || failed(softmaxPrecision))
    return failure();
  if (*leftWindow < -1 || *rightWindow < -1)
    return n.emitError() << "left_window_size and right_window_size must be -1 or >= 0, got "
                         << *leftWindow << " and " << *rightWindow;
  if (*softcap < 0.0f)
    return n.emitError() << "softcap must be >= 0, got " << *softcap;
  if (*qkMode < 0 || *qkMode > 3)
    return n.emitError() << "qk_matmul_output_mode must be 0 to 3, got " << *qkMode;
  if (n.hasInput(4) != n.hasInput(5))
    return n.emitError() << "past_key and past_value must be given together";
  if (n.hasInput(6) && n.hasInput(4))
    return n.emitError() << "nonpad_kv_seqlen cannot be combined with past_key/past_value";
  auto qt = n.getInputType(0);
  Type et = qt.getElementType();
  for (unsigned i : {1u, 2u, 4u, 5u})
    if (n.hasInput(i) && n.getInputType(i).getElementType() != et)
      return n.emitError() << "operand " << i << " " << n.getInputType(i)
                           << " must have the element type of Q " << qt;
  Builder &b = n.getBuilder();
  // [B, S, H*D] -> [B, H, S, D].
  auto toHeads = [&](Value v, int64_t heads, StringRef what) -> FailureOr<Value> {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() == 4)
      return v;
    if (t.getRank() != 3 || heads <= 0 || t.getDimSize(2) % heads != 0)
      return n.emitError() << what << " " << t << " must be 4-D, or 3-D with " << what
                           << " heads (q_num_heads / kv_num_heads) dividing its last dim";
    int64_t B = t.getDimSize(0), S = t.getDimSize(1), D = t.getDimSize(2) / heads;
    Value r = n.createReshape(v, {B, S, heads, D});
    return n.create<TransposeOp>(RankedTensorType::get({B, heads, S, D}, et), r,
                                 b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  };
  bool threeD = qt.getRank() == 3;
  FailureOr<Value> q = toHeads(n.getInput(0), *qHeads, "Q"),
                   k = toHeads(n.getInput(1), *kvHeads, "K"),
                   v = toHeads(n.getInput(2), *kvHeads, "V");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  if (n.hasInput(4)) {
    auto cat = [&](Value past, Value cur) -> FailureOr<Value> {
      auto pt = cast<RankedTensorType>(past.getType()), ct = cast<RankedTensorType>(cur.getType());
      if (pt.getRank() != 4 || pt.getDimSize(0) != ct.getDimSize(0) ||
          pt.getDimSize(1) != ct.getDimSize(1) || pt.getDimSize(3) != ct.getDimSize(3))
        return n.emitError() << "past " << pt << " does not match " << ct
                             << " outside the sequence dim";
      SmallVector<int64_t> shape(ct.getShape());
      shape[2] += pt.getDimSize(2);
      return n.create<ConcatOp>(RankedTensorType::get(shape, et), ValueRange{past, cur},
                                b.getI64IntegerAttr(2));
    };
    FailureOr<Value> kc = cat(n.getInput(4), *k), vc = cat(n.getInput(5), *v);
    if (failed(kc) || failed(vc))
      return failure();
    k = kc;
    v = vc;
  }
  n.setResult(1, *k);
  n.setResult(2, *v);
  auto q4 = cast<RankedTensorType>((*q).getType()), k4 = cast<RankedTensorType>((*k).getType()),
       v4 = cast<RankedTensorType>((*v).getType());
  int64_t B = q4.getDimSize(0), Hq = q4.getDimSize(1), Sq = q4.getDimSize(2), D = q4.getDimSize(3);
  int64_t Hkv = k4.getDimSize(1), Sk = k4.getDimSize(2), Dv = v4.getDimSize(3);
  if (k4.getDimSize(0) != B || k4.getDimSize(3) != D || v4.getDimSize(0) != B ||
      v4.getDimSize(1) != Hkv || v4.getDimSize(2) != Sk || Hkv <= 0 || Hq % Hkv != 0)
    return n.emitError() << "Q " << q4 << ", K " << k4 << " and V " << v4
                         << " do not form an attention (batch, head dims, KV heads dividing query "
                            "heads)";
  FailureOr<float> scaleAttr = n.getFloatAttr("scale", 0.0f);
  if (failed(scaleAttr))
    return failure();
  double scale = *scaleAttr != 0.0f ? double(*scaleAttr) : 1.0 / std::sqrt(double(D));
  double inf = std::numeric_limits<double>::infinity();
  // attn_mask as an additive bias of Q's type, its key dim padded with -inf
  // up to Sk (a mask for the new keys only, as with a KV cache).
  Value mask;
  if (n.hasInput(3)) {
    auto mt = n.getInputType(3);
    mask = n.getInput(3);
    if (mt.getRank() < 1)
      return n.emitError() << "attn_mask " << mt << " must have at least one dim (the keys), "
                              "broadcast to the scores [" << B << ", " << Hq << ", " << Sq << ", "
                           << Sk << "]";
    if (mt.getDimSize(mt.getRank() - 1) > Sk)
      return n.emitError() << "attn_mask " << mt << " has more keys than K (" << Sk << ")";
    if (mt.getElementType().isInteger(1)) {
      mask = n.create<WhereOp>(mt.clone(et), mask, n.createScalar(et, 0.0),
                               n.createScalar(et, -inf));
    } else if (mt.getElementType() != et) {
      return n.emitError() << "attn_mask " << mt << " must be bool or of Q's element type";
    }
    if (int64_t missing = Sk - mt.getDimSize(mt.getRank() - 1)) {
      SmallVector<int64_t> padShape(mt.getShape());
      padShape.back() = missing;
      SmallVector<int64_t> catShape(mt.getShape());
      catShape.back() = Sk;
      Value pad = n.create<ExpandOp>(RankedTensorType::get(padShape, et), n.createScalar(et, -inf));
      mask = n.create<ConcatOp>(RankedTensorType::get(catShape, et), ValueRange{mask, pad},
                                b.getI64IntegerAttr(mt.getRank() - 1));
    }
    SmallVector<int64_t> scoreShape{B, Hq, Sq, Sk}, padded(mt.getShape());
    padded.back() = Sk;
    FailureOr<SmallVector<int64_t>> joint = broadcastShapes(padded, scoreShape);
    if (mt.getRank() > 4 || failed(joint) || *joint != scoreShape)
      return n.emitError() << "attn_mask " << mt << " does not broadcast to the scores [" << B
                           << ", " << Hq << ", " << Sq << ", " << Sk
                           << "] (batch, query heads, queries, keys)";
  }
  if (n.hasInput(6)) {
    auto lt = n.getInputType(6);
    if (!lt.getElementType().isInteger(64) || lt.getShape() != ArrayRef<int64_t>{B})
      return n.emitError() << "nonpad_kv_seqlen " << lt << " must be int64 [" << B
                           << "] (one key count per batch row)";
  }
  // The causal frontier (ONNX reference): query i sees key j iff j <= i + offset, with offset the
  // past length (bottom-right with a KV cache, top-left without one), or nonpad_kv_seqlen[b] - Sq
  // with an external cache. kiln.attention's causal mask is bottom-right.
  int64_t offset = n.hasInput(4) ? n.getInputType(4).getDimSize(2) : 0;
  bool window = *leftWindow >= 0 || *rightWindow >= 0;
  bool fused = *softcap == 0.0f && !n.isOutputUsed(3) && !window && !n.hasInput(6) &&
               (!*causal || offset == Sk - Sq);
  Value y;
  auto outType = RankedTensorType::get({B, Hq, Sq, Dv}, et);
  if (fused) {
    // A fully masked row gives 0 (the ONNX reference zeroes it), unlike
    // Softmax + MatMul, which give NaN.
    y = n.create<AttentionOp>(outType, *q, *k, *v, mask, b.getF64FloatAttr(scale),
                              b.getBoolAttr(*causal != 0), /*zero_masked_rows=*/b.getBoolAttr(true),
                              b.getBoolAttr(false));
  } else {
    AttentionParts parts{*q, *k, *v, mask, scale, *causal != 0, offset, *leftWindow, *rightWindow,
                         n.hasInput(6) ? n.getInput(6) : Value(), *softcap, *qkMode,
                         *softmaxPrecision};
    FailureOr<std::pair<Value, Value>> r = buildCompositeAttention(n, parts);
    if (failed(r))
      return failure();
    y = r->first;
    if (n.isOutputUsed(3))
      n.setResult(3, r->second);
  }
  if (threeD) {
    Value t = n.create<TransposeOp>(RankedTensorType::get({B, Sq, Hq, Dv}, et), y,
                                    b.getDenseI64ArrayAttr({0, 2, 1, 3}));
    y = n.createReshape(t, {B, Sq, Hq * Dv});
  }
  n.setResult(0, y);
  return success();
}

/// ReduceMean/Sum/Max: axes from operand 1 (ReduceSum-13, all reductions in
/// opset 18) or from the `axes` attribute (ReduceMean/Max before 18).
/// The reduction of `input` (shaped like operand 0) per the node's axes
/// (operand 1 or the `axes` attribute), keepdims and noop_with_empty_axes.
FailureOr<Value> buildReduce(NodeImporter &n, ReduceKind kind, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  FailureOr<int64_t> keepDims = n.getIntAttr("keepdims", 1),
                     noop = n.getIntAttr("noop_with_empty_axes", 0);
  FailureOr<std::optional<SmallVector<int64_t>>> axesAttr = n.getIntsAttr("axes");
  if (failed(keepDims) || failed(noop) || failed(axesAttr))
    return failure();
  SmallVector<int64_t> given;
  if (n.hasInput(1)) {
    if (*axesAttr)
      return n.emitError() << "axes are given both as an attribute and an operand";
    FailureOr<SmallVector<int64_t>> v = n.getConstantInts(1, "axes");
    if (failed(v))
      return failure();
    given = *v;
  } else if (*axesAttr) {
    given = **axesAttr;
  }
  if (given.empty()) {
    if (*noop)
      return input;
    given = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  }
  SmallVector<int64_t> axes;
  for (int64_t a : given) {
    FailureOr<int64_t> axis = n.normalizeAxis(a, type.getRank());
    if (failed(axis))
      return failure();
    axes.push_back(*axis);
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(type.getDimSize(d));
    else if (*keepDims)
      shape.push_back(1);
  }
  Builder &b = n.getBuilder();
  return n.create<ReduceOp>(type.clone(shape), ReduceKindAttr::get(n.getContext(), kind), input,
                            b.getDenseI64ArrayAttr(axes), b.getBoolAttr(*keepDims != 0));
}

template <ReduceKind Kind>
LogicalResult importReduce(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  auto type = n.getInputType(0);
  if (type.getElementType().isInteger(1))
    return n.emitUnsupported("bool reduction");
  if (Kind == ReduceKind::Mean && failed(n.checkFloat(0)))
    return failure();
  FailureOr<Value> r = buildReduce(n, Kind, n.getInput(0));
  if (failed(r))
    return failure();
  n.setResult(0, *r);
  return success();
}

/// The reductions ONNX defines through sum and max (ReduceMin, ReduceSumSquare,
/// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp): rewritten on
/// kiln.reduce with elementwise ops before and after (ReduceMin is kiln.reduce
/// <min>); LogSumExp subtracts the (kept) maximum first, so large inputs do not
/// overflow.
enum class DerivedReduce { Min, SumSquare, L1, L2, LogSum, LogSumExp };

template <DerivedReduce Kind>
LogicalResult importDerivedReduce(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  auto type = n.getInputType(0);
  Type et = type.getElementType();
  if (et.isInteger(1))
    return n.emitUnsupported("bool reduction");
  bool needsFloat = Kind == DerivedReduce::L2 || Kind == DerivedReduce::LogSum ||
                    Kind == DerivedReduce::LogSumExp;
  if (needsFloat && failed(n.checkFloat(0)))
    return failure();
  Value x = n.getInput(0);
  auto unary = [&](auto tag, Value v) {
    using OpT = decltype(tag);
    return n.create<OpT>(cast<RankedTensorType>(v.getType()), v);
  };
  FailureOr<Value> r;
  switch (Kind) {
  case DerivedReduce::Min:
    r = buildReduce(n, ReduceKind::Min, x);
    break;
  case DerivedReduce::SumSquare:
  case DerivedReduce::L2:
    r = buildReduce(n, ReduceKind::Sum, n.create<MulOp>(type, x, x));
    if (succeeded(r) && Kind == DerivedReduce::L2)
      r = unary(SqrtOp(), *r);
    break;
  case DerivedReduce::L1:
    r = buildReduce(n, ReduceKind::Sum,
                    n.create<MaxOp>(type, x, n.create<NegOp>(type, x))); // |x|
    break;
  case DerivedReduce::LogSum:
    r = buildReduce(n, ReduceKind::Sum, x);
    if (succeeded(r))
      r = unary(LogOp(), *r);
    break;
  case DerivedReduce::LogSumExp: {
    // log(sum(exp(x - m))) + m with m the maximum over the same axes, kept
    // as size-1 dims for the broadcast, then shaped like the result.
    FailureOr<int64_t> keepDims = n.getIntAttr("keepdims", 1);
    if (failed(keepDims))
      return failure();
    FailureOr<Value> m = buildReduce(n, ReduceKind::Max, x);
    r = buildReduce(n, ReduceKind::Sum, x);
    if (failed(m) || failed(r))
      return failure();
    if (*m == x) { // noop_with_empty_axes without axes: log(exp(x)) = x
      n.setResult(0, x);
      return success();
    }
    // The max with kept dims (for broadcasting against x).
    auto rType = cast<RankedTensorType>((*r).getType());
    SmallVector<int64_t> keptShape(type.getShape());
    auto reduceOp = (*m).getDefiningOp<ReduceOp>();
    for (int64_t a : reduceOp.getAxes())
      keptShape[a] = 1;
    Value mKept = n.createReshape(*m, keptShape);
    // An infinite maximum shifts by 0 instead (a row of -inf gives -inf, one
    // holding +inf gives +inf, as log(sum(exp(x))) does; x - m would be NaN).
    auto keptType = RankedTensorType::get(keptShape, et);
    Value absM = n.create<MaxOp>(keptType, mKept, n.create<NegOp>(keptType, mKept));
    Value isInf = n.create<EqualOp>(keptType.clone(n.getBuilder().getI1Type()), absM,
                                    n.createScalar(et, std::numeric_limits<double>::infinity()));
    mKept = n.create<WhereOp>(keptType, isInf, n.createScalar(et, 0.0), mKept);
    Value shifted = n.create<SubOp>(type, x, mKept);
    Value sum = n.create<ReduceOp>(RankedTensorType::get(keptShape, et),
                                   ReduceKindAttr::get(n.getContext(), ReduceKind::Sum),
                                   unary(ExpOp(), shifted), reduceOp.getAxesAttr(),
                                   n.getBuilder().getBoolAttr(true));
    Value lse = n.create<AddOp>(cast<RankedTensorType>(sum.getType()), unary(LogOp(), sum), mKept);
    r = n.createReshape(lse, rType.getShape());
    break;
  }
  }
  if (failed(r))
    return failure();
  n.setResult(0, *r);
  return success();
}

/// ArgMax/ArgMin (axis default 0, keepdims default 1, select_last_index):
/// kiln.arg_reduce, an i64 index.
template <ReduceKind Kind>
LogicalResult importArgReduce(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto type = n.getInputType(0);
  Type et = type.getElementType();
  if (!isa<FloatType>(et) && (!isa<IntegerType>(et) || et.isInteger(1)))
    return n.emitUnsupported(Twine(Kind == ReduceKind::Max ? "ArgMax" : "ArgMin") +
                             " on bool (kiln takes floats and integers)");
  FailureOr<int64_t> axis = n.getAxisAttr("axis", 0, type.getRank());
  FailureOr<int64_t> keepDims = n.getIntAttr("keepdims", 1),
                     last = n.getIntAttr("select_last_index", 0);
  if (failed(axis) || failed(keepDims) || failed(last))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != *axis)
      shape.push_back(type.getDimSize(d));
    else if (*keepDims)
      shape.push_back(1);
  Builder &b = n.getBuilder();
  n.setResult(0, n.create<ArgReduceOp>(RankedTensorType::get(shape, b.getI64Type()),
                                       ReduceKindAttr::get(n.getContext(), Kind), n.getInput(0),
                                       b.getI64IntegerAttr(*axis), b.getBoolAttr(*keepDims != 0),
                                       b.getBoolAttr(*last != 0)));
  return success();
}

/// LogSoftmax (1, 11, 13): x - m - log(sum(exp(x - m))) with m the maximum
/// along the axis (numerically safe), over getSoftmaxOperand.
LogicalResult importLogSoftmax(NodeImporter &n) {
  FailureOr<SoftmaxOperand> in = getSoftmaxOperand(n);
  if (failed(in))
    return failure();
  auto type = n.getInputType(0);
  Value x = in->x;
  RankedTensorType work = in->type;
  int64_t axis = in->axis;
  SmallVector<int64_t> keptShape(work.getShape());
  keptShape[axis] = 1;
  auto kept = work.clone(keptShape);
  Builder &b = n.getBuilder();
  auto reduce = [&](ReduceKind kind, Value v) {
    return n.create<ReduceOp>(kept, ReduceKindAttr::get(n.getContext(), kind), v,
                              b.getDenseI64ArrayAttr({axis}), b.getBoolAttr(true));
  };
  Value m = reduce(ReduceKind::Max, x);
  Value shifted = n.create<SubOp>(work, x, m);
  Value logSum = n.create<LogOp>(kept, reduce(ReduceKind::Sum, n.create<ExpOp>(work, shifted)));
  Value y = n.create<SubOp>(work, shifted, logSum);
  n.setResult(0, n.createReshape(y, type.getShape()));
  return success();
}

} // namespace

void onnx_import::registerMathOps(OpRegistry &r) {
  r.add("MatMul", importMatMul);
  r.add("Gemm", importGemm, {"alpha", "beta", "transA", "transB"});
  r.add("Softmax", importSoftmax, {"axis"});
  r.add("LayerNormalization", importLayerNorm, {"axis", "epsilon", "stash_type"});
  r.add("RMSNormalization", importRmsNorm, {"axis", "epsilon", "stash_type"});
  r.add("RotaryEmbedding", importRotaryEmbedding,
        {"interleaved", "rotary_embedding_dim", "num_heads"});
  r.add("ReduceMean", importReduce<ReduceKind::Mean>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("ReduceSum", importReduce<ReduceKind::Sum>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("ReduceMax", importReduce<ReduceKind::Max>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("ReduceMin", importDerivedReduce<DerivedReduce::Min>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("ReduceSumSquare", importDerivedReduce<DerivedReduce::SumSquare>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("ReduceL1", importDerivedReduce<DerivedReduce::L1>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("ReduceL2", importDerivedReduce<DerivedReduce::L2>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("ReduceLogSum", importDerivedReduce<DerivedReduce::LogSum>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("ReduceLogSumExp", importDerivedReduce<DerivedReduce::LogSumExp>, {"axes", "keepdims", "noop_with_empty_axes"});
  r.add("LogSoftmax", importLogSoftmax, {"axis"});
  r.add("Attention", importAttention,
        {"is_causal", "q_num_heads", "kv_num_heads", "scale", "softcap", "softmax_precision",
         "qk_matmul_output_mode", "left_window_size", "right_window_size"});
  r.add("ArgMax", importArgReduce<ReduceKind::Max>, {"axis", "keepdims", "select_last_index"});
  r.add("ArgMin", importArgReduce<ReduceKind::Min>, {"axis", "keepdims", "select_last_index"});
}
