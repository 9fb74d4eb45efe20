//===- OnnxContrib.cpp - onnxruntime contrib ops (com.microsoft) ----------===//
//
// The com.microsoft ops that onnxruntime's transformer optimizer
// (onnxruntime.transformers.optimizer) writes into models it fuses:
// SkipLayerNormalization, SkipSimplifiedLayerNormalization, FastGelu and
// BiasGelu, plus SimplifiedLayerNormalization, which onnxruntime defines in
// the default domain (and which kiln also accepts under com.microsoft).
// Semantics follow onnxruntime's docs/ContribOperators.md and its CPU
// kernels (checked against onnxruntime 1.30 on CPU).
//
// Each op lowers to the builders of the standard ops (OnnxMath.cpp,
// OnnxElementwise.cpp), so the result is the IR a LayerNormalization,
// RMSNormalization or Gelu export gives: one kiln.layer_norm / kiln.rms_norm
// per norm (a fused norm kernel), and the GELU as pointwise ops that fuse
// with their neighbours. The residual sum input + skip (+ bias) is a
// kiln.add before the norm, as in the unfused graph.
//
// MatMulNBits (the block-quantized weight-only GEMM) and GroupQueryAttention
// have their own files, OnnxMatMulNBits.cpp and OnnxGroupQueryAttention.cpp.
// Any other com.microsoft op is an "unsupported operator" error naming the
// node (OnnxImporter.cpp); the other fused attention ops get a hint to export
// the standard ONNX form instead.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Default epsilon of SkipLayerNormalization and
/// SkipSimplifiedLayerNormalization (kDefaultSkipLayerNormEpsilon in
/// onnxruntime's contrib_defs.cc); SimplifiedLayerNormalization defaults to
/// 1e-5 like LayerNormalization.
constexpr float kSkipNormDefaultEpsilon = 1e-12f;

/// `x + operand` with the result of `x`'s type: `operand` (called `what` in
/// errors) must have x's element type and broadcast to x's shape, else
/// "<what> <type> must have the element type of the input <type>" or
/// "<what> <type> does not broadcast to the input <type>".
FailureOr<Value> addToInput(NodeImporter &n, Value x, Value operand, StringRef what) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto t = cast<RankedTensorType>(operand.getType());
  if (t.getElementType() != xType.getElementType())
    return n.emitError() << what << " " << t << " must have the element type of the input "
                         << xType;
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(xType.getShape(), t.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != xType.getShape())
    return n.emitError() << what << " " << t << " does not broadcast to the input " << xType;
  return n.create<AddOp>(xType, x, operand);
}

/// The residual sum of the Skip*Normalization ops: (input + skip) + bias, in
/// that order (onnxruntime's kernel), with `bias` the optional operand
/// `biasIndex`. input: float [..., H] (rank >= 1; the spec's [B, S, H] or
/// [T, H]); skip broadcasts to input ([B, S, H], [1, S, H] or [S, H]); bias
/// broadcasts to [H]. All have input's element type.
FailureOr<Value> buildSkipSum(NodeImporter &n, unsigned biasIndex) {
  FailureOr<Value> sum = addToInput(n, n.getInput(0), n.getInput(1), "skip");
  if (failed(sum) || !n.hasInput(biasIndex))
    return sum;
  auto type = n.getInputType(0);
  FailureOr<Value> bias =
      getNormParameter(n, n.getInput(biasIndex), "bias", type, type.getRank() - 1);
  if (failed(bias))
    return failure();
  return n.create<AddOp>(type, *sum, *bias);
}

/// The epsilon attribute of the Skip*Normalization ops (default 1e-12).
FailureOr<float> getSkipEpsilon(NodeImporter &n) {
  return n.getFloatAttr("epsilon", kSkipNormDefaultEpsilon);
}

/// com.microsoft SkipLayerNormalization (version 1).
///   inputs:  input [..., H], skip (broadcasts to input), gamma [H],
///            beta [H] (optional), bias [H] (optional); float, one type.
///   outputs: output = LayerNorm(input + skip + bias) * gamma + beta over the
///            last axis (one kiln.layer_norm); mean and inv_std_var
///            (optional, float32 [..., 1], computed with reductions when
///            used); input_skip_bias_sum (optional, input's type).
///   attribute: epsilon (default 1e-12).
/// Errors: operand count, non-float input, mismatched element types, shapes
/// that do not broadcast (messages name the operand and both types).
LogicalResult importSkipLayerNorm(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 5)) || failed(n.checkFloat(0)))
    return failure();
  FailureOr<float> epsilon = getSkipEpsilon(n);
  if (failed(epsilon))
    return failure();
  auto type = n.getInputType(0);
  int64_t axis = type.getRank() - 1;
  FailureOr<Value> gamma = getNormParameter(n, n.getInput(2), "gamma", type, axis);
  if (failed(gamma))
    return failure();
  Value beta;
  if (n.hasInput(3)) {
    FailureOr<Value> b = getNormParameter(n, n.getInput(3), "beta", type, axis);
    if (failed(b))
      return failure();
    beta = *b;
  }
  FailureOr<Value> sum = buildSkipSum(n, /*biasIndex=*/4);
  if (failed(sum))
    return failure();
  NormResults r =
      buildLayerNorm(n, *sum, *gamma, beta, axis, *epsilon, n.isOutputUsed(1), n.isOutputUsed(2));
  n.setResult(0, r.y);
  n.setResult(1, r.mean);
  n.setResult(2, r.invStdDev);
  n.setResult(3, *sum);
  return success();
}

/// com.microsoft SkipSimplifiedLayerNormalization (version 1), the RMS form.
///   inputs:  input [..., H], skip (broadcasts to input), gamma [H],
///            bias [H] (optional); float, one type.
///   outputs: output = (input + skip + bias) / sqrt(mean(sum^2) + epsilon)
///            * gamma over the last axis (one kiln.rms_norm); mean (optional:
///            an error when used, the RMS form has none and onnxruntime
///            writes zeros); inv_std_var (optional, float32 [..., 1], with
///            reductions when used); input_skip_bias_sum (optional).
///   attribute: epsilon (default 1e-12).
/// Errors: as SkipLayerNormalization, and "unsupported: output 1 (mean) is
/// used".
LogicalResult importSkipSimplifiedLayerNorm(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 4)) || failed(n.checkFloat(0)))
    return failure();
  if (n.isOutputUsed(1))
    return n.emitUnsupported("output 1 (mean) is used; the RMS form computes no mean "
                             "(onnxruntime writes zeros there)");
  FailureOr<float> epsilon = getSkipEpsilon(n);
  if (failed(epsilon))
    return failure();
  auto type = n.getInputType(0);
  int64_t axis = type.getRank() - 1;
  FailureOr<Value> gamma = getNormParameter(n, n.getInput(2), "gamma", type, axis);
  if (failed(gamma))
    return failure();
  FailureOr<Value> sum = buildSkipSum(n, /*biasIndex=*/3);
  if (failed(sum))
    return failure();
  NormResults r = buildRmsNorm(n, *sum, *gamma, axis, *epsilon, n.isOutputUsed(2));
  n.setResult(0, r.y);
  n.setResult(2, r.invStdDev);
  n.setResult(3, *sum);
  return success();
}

/// SimplifiedLayerNormalization (onnxruntime's RMS norm, version 1; defined
/// in the default domain, also accepted under com.microsoft).
///   inputs:  X (float), scale (X's element type, broadcasts to the
///            normalized shape X[axis:]).
///   outputs: Y = X / sqrt(mean(X^2 over dims [axis, rank)) + epsilon) * scale
///            (one kiln.rms_norm); inv_std_var (optional, float32
///            [d0, ..., d(axis-1), 1, ..., 1], with reductions when used).
///   attributes: axis (default -1), epsilon (default 1e-5), stash_type
///            (must be 1).
/// Errors: as RMSNormalization-23 (stash_type, axis range, scale type and
/// shape).
LogicalResult importSimplifiedLayerNorm(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)) || failed(n.checkFloat(0)))
    return failure();
  auto type = n.getInputType(0);
  FailureOr<NormAttributes> attrs = getNormAttributes(n, type.getRank());
  if (failed(attrs))
    return failure();
  FailureOr<Value> scale = getNormParameter(n, n.getInput(1), "scale", type, attrs->axis);
  if (failed(scale))
    return failure();
  NormResults r =
      buildRmsNorm(n, n.getInput(0), *scale, attrs->axis, attrs->epsilon, n.isOutputUsed(1));
  n.setResult(0, r.y);
  n.setResult(1, r.invStdDev);
  return success();
}

/// The GELU ops with a bias: GELU(X + bias), bias operand 1 (optional when
/// `biasOptional`; it broadcasts to X, the spec's 1-D [D]).
template <bool tanhApproximation, bool biasOptional>
LogicalResult importBiasGelu(NodeImporter &n) {
  if (failed(n.checkNumInputs(biasOptional ? 1 : 2, 2)) || failed(n.checkFloat(0)))
    return failure();
  Value x = n.getInput(0);
  if (n.hasInput(1)) {
    FailureOr<Value> sum = addToInput(n, x, n.getInput(1), "bias");
    if (failed(sum))
      return failure();
    x = *sum;
  }
  n.setResult(0, buildGelu(n, x, tanhApproximation));
  return success();
}

} // namespace

/// Registers:
///   com.microsoft FastGelu: X, bias (optional) -> tanh-approximate GELU of
///     X + bias, 0.5 y (1 + tanh(sqrt(2/pi) (y + 0.044715 y^3))); float.
///   com.microsoft BiasGelu: A, B -> exact GELU of A + B,
///     0.5 y (1 + erf(y / sqrt 2)); float.
///   com.microsoft SkipLayerNormalization, SkipSimplifiedLayerNormalization,
///     SimplifiedLayerNormalization; SimplifiedLayerNormalization in the
///     default domain.
void onnx_import::registerContribOps(OpRegistry &defaultDomain, OpRegistry &microsoftDomain) {
  defaultDomain.add("SimplifiedLayerNormalization", importSimplifiedLayerNorm,
                    {"axis", "epsilon", "stash_type"});
  microsoftDomain.add("SimplifiedLayerNormalization", importSimplifiedLayerNorm,
                      {"axis", "epsilon", "stash_type"});
  microsoftDomain.add("SkipLayerNormalization", importSkipLayerNorm, {"epsilon"});
  microsoftDomain.add("SkipSimplifiedLayerNormalization", importSkipSimplifiedLayerNorm,
                      {"epsilon"});
  microsoftDomain.add("FastGelu", importBiasGelu</*tanh=*/true, /*biasOptional=*/true>);
  microsoftDomain.add("BiasGelu", importBiasGelu</*tanh=*/false, /*biasOptional=*/false>);
}
