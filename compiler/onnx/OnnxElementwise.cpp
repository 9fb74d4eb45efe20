//===- OnnxElementwise.cpp - pointwise ONNX ops ---------------------------===//
//
// Unary math, binary arithmetic/comparison/logic with numpy broadcasting,
// variadic Max/Min, Where, Cast, IsNaN, Clip, Gelu (decomposed into erf or
// tanh pointwise ops) and Identity. Result shapes are the broadcast of the
// operand shapes; ONNX requires equal operand element types (Pow excepted:
// its exponent is cast to the base type).
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Identity: forwards its operand.
LogicalResult importIdentity(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  n.setResult(0, n.getInput(0));
  return success();
}

/// A unary op whose result type equals its operand type.
template <typename OpTy>
LogicalResult importUnary(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  n.setResult(0, n.create<OpTy>(n.getInputType(0), n.getInput(0)));
  return success();
}

/// Unary float math (Exp, Log, Sqrt, Tanh, Erf, ...).
template <typename OpTy>
LogicalResult importFloatUnary(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)) || failed(n.checkFloat(0)))
    return failure();
  n.setResult(0, n.create<OpTy>(n.getInputType(0), n.getInput(0)));
  return success();
}

LogicalResult importNot(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  if (!n.getInputType(0).getElementType().isInteger(1))
    return n.emitError() << "operand must be a bool tensor, got " << n.getInputType(0);
  n.setResult(0, n.create<NotOp>(n.getInputType(0), n.getInput(0)));
  return success();
}

LogicalResult importIsNaN(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)) || failed(n.checkFloat(0)))
    return failure();
  auto type = n.getInputType(0);
  n.setResult(0, n.create<IsNaNOp>(type.clone(n.getBuilder().getI1Type()), n.getInput(0)));
  return success();
}

/// Builds `OpTy(lhs, rhs)` with the broadcast result shape; `resultElem` null
/// means the operand element type. Operand element types must match.
template <typename OpTy>
FailureOr<Value> buildBinary(NodeImporter &n, Value lhs, Value rhs, Type resultElem = {}) {
  auto lt = cast<RankedTensorType>(lhs.getType()), rt = cast<RankedTensorType>(rhs.getType());
  if (lt.getElementType() != rt.getElementType())
    return n.emitError() << "operand element types differ: " << lt.getElementType() << " and "
                         << rt.getElementType() << "; ONNX requires equal types";
  FailureOr<SmallVector<int64_t>> shape = n.broadcast(lt.getShape(), rt.getShape());
  if (failed(shape))
    return failure();
  Type elem = resultElem ? resultElem : lt.getElementType();
  return n.create<OpTy>(getTensorType(*shape, elem), lhs, rhs);
}

/// Arithmetic on numbers (result type = operand type).
template <typename OpTy>
LogicalResult importArith(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  if (n.getInputType(0).getElementType().isInteger(1))
    return n.emitUnsupported("bool operands");
  FailureOr<Value> v = buildBinary<OpTy>(n, n.getInput(0), n.getInput(1));
  if (failed(v))
    return failure();
  n.setResult(0, *v);
  return success();
}

/// Comparisons (result i1).
template <typename OpTy>
LogicalResult importCompare(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  FailureOr<Value> v =
      buildBinary<OpTy>(n, n.getInput(0), n.getInput(1), n.getBuilder().getI1Type());
  if (failed(v))
    return failure();
  n.setResult(0, *v);
  return success();
}

/// Checks that the node has two operands and both are bool tensors.
LogicalResult checkTwoBoolOperands(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  for (unsigned i = 0; i < 2; ++i)
    if (!n.getInputType(i).getElementType().isInteger(1))
      return n.emitError() << "operand " << i << " must be a bool tensor, got "
                           << n.getInputType(i);
  return success();
}

/// And/Or on bools.
template <typename OpTy>
LogicalResult importLogic(NodeImporter &n) {
  if (failed(checkTwoBoolOperands(n)))
    return failure();
  FailureOr<Value> v = buildBinary<OpTy>(n, n.getInput(0), n.getInput(1));
  if (failed(v))
    return failure();
  n.setResult(0, *v);
  return success();
}

/// Pow: ONNX allows a different exponent type; kiln casts it to the base type.
LogicalResult importPow(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  Value base = n.getInput(0), exponent = n.getInput(1);
  auto bt = n.getInputType(0), et = n.getInputType(1);
  if (bt.getElementType().isInteger(1) || et.getElementType().isInteger(1))
    return n.emitUnsupported("bool operands");
  if (et.getElementType() != bt.getElementType())
    exponent = n.create<CastOp>(et.clone(bt.getElementType()), exponent);
  FailureOr<Value> v = buildBinary<PowOp>(n, base, exponent);
  if (failed(v))
    return failure();
  n.setResult(0, *v);
  return success();
}

/// Variadic Max/Min: a left-to-right chain of binary ops.
template <typename OpTy>
LogicalResult importVariadic(NodeImporter &n) {
  if (n.getNumInputs() < 1)
    return n.emitError() << "expects at least 1 operand";
  Value acc = n.getInput(0);
  for (unsigned i = 0; i < n.getNumInputs(); ++i) {
    if (!n.hasInput(i))
      return n.emitError() << "operand " << i << " is empty";
    if (i == 0)
      continue;
    FailureOr<Value> v = buildBinary<OpTy>(n, acc, n.getInput(i));
    if (failed(v))
      return failure();
    acc = *v;
  }
  n.setResult(0, acc);
  return success();
}

LogicalResult importWhere(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 3)))
    return failure();
  auto c = n.getInputType(0), x = n.getInputType(1), y = n.getInputType(2);
  if (!c.getElementType().isInteger(1))
    return n.emitError() << "condition must be a bool tensor, got " << c;
  if (failed(n.checkSameElementType(1, 2)))
    return failure();
  FailureOr<SmallVector<int64_t>> s1 = n.broadcast(c.getShape(), x.getShape());
  if (failed(s1))
    return failure();
  FailureOr<SmallVector<int64_t>> s2 = n.broadcast(*s1, y.getShape());
  if (failed(s2))
    return failure();
  n.setResult(0, n.create<WhereOp>(getTensorType(*s2, x.getElementType()), n.getInput(0),
                                   n.getInput(1), n.getInput(2)));
  return success();
}

LogicalResult importCast(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  const onnx::AttributeProto *to = n.findAttr("to");
  if (!to)
    return n.emitError() << "missing attribute 'to'";
  FailureOr<int64_t> dtype = n.getIntAttr("to", 0);
  if (failed(dtype))
    return failure();
  Type elem = getElementType(n.getContext(), int32_t(*dtype));
  if (!elem)
    return n.emitError() << "'to': " << unsupportedDataTypeMessage(int32_t(*dtype));
  n.setResult(0, n.create<CastOp>(n.getInputType(0).clone(elem), n.getInput(0)));
  return success();
}

/// Clip(x, min?, max?) -> max(x, min) then min(., max).
LogicalResult importClip(NodeImporter &n) {
  // Clip-6 (before opset 11): one operand, min and max are float attributes.
  if (failed(n.checkNumInputs(1, n.getOpset() < 11 ? 1 : 3)))
    return failure();
  Value acc = n.getInput(0);
  if (n.findAttr("min") || n.findAttr("max")) {
    if (n.getOpset() >= 11)
      return n.emitUnsupported("attributes 'min'/'max' (operands since opset 11)");
    if (failed(n.checkFloat(0)))
      return failure();
    for (const char *name : {"min", "max"}) {
      if (!n.findAttr(name))
        continue;
      FailureOr<float> bound = n.getFloatAttr(name, 0.0f);
      if (failed(bound))
        return failure();
      Value c = n.createScalar(n.getInputType(0).getElementType(), *bound);
      FailureOr<Value> v = StringRef(name) == "min" ? buildBinary<MaxOp>(n, acc, c)
                                                   : buildBinary<MinOp>(n, acc, c);
      if (failed(v))
        return failure();
      acc = *v;
    }
  }
  for (unsigned i = 1; i < 3; ++i) {
    if (!n.hasInput(i))
      continue;
    if (n.getInputType(i).getRank() != 0)
      return n.emitError() << (i == 1 ? "min" : "max") << " must be a scalar, got "
                           << n.getInputType(i);
    FailureOr<Value> v = i == 1 ? buildBinary<MaxOp>(n, acc, n.getInput(i))
                                : buildBinary<MinOp>(n, acc, n.getInput(i));
    if (failed(v))
      return failure();
    acc = *v;
  }
  n.setResult(0, acc);
  return success();
}

/// CastLike-15: Cast to the element type of operand 1.
LogicalResult importCastLike(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  Type to = n.getInputType(1).getElementType();
  auto type = n.getInputType(0);
  Value x = n.getInput(0);
  n.setResult(0, type.getElementType() == to ? x : n.create<CastOp>(type.clone(to), x));
  return success();
}

/// Mod-13: fmod = 0 (integers; the divisor's sign) or 1 (C fmod; required
/// for floats by the spec), with broadcasting.
LogicalResult importMod(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  FailureOr<int64_t> fmod = n.getIntAttr("fmod", 0);
  if (failed(fmod))
    return failure();
  // Mod-28 defines fmod = 0 on floats as A - floor(A / B) * B (the divisor's
  // sign, kiln.mod); before 28 floats need fmod = 1.
  bool isFloat = isa<FloatType>(n.getInputType(0).getElementType());
  if (isFloat && *fmod == 0 && n.getOpset() < 28)
    return n.emitError() << "fmod must be 1 for floating-point inputs before opset 28 (ONNX Mod)";
  FailureOr<Value> r = *fmod ? buildBinary<FModOp>(n, n.getInput(0), n.getInput(1))
                             : buildBinary<ModOp>(n, n.getInput(0), n.getInput(1));
  if (failed(r))
    return failure();
  n.setResult(0, *r);
  return success();
}

/// Abs: max(x, -x) (NaN stays NaN; integers exact).
LogicalResult importAbs(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto type = n.getInputType(0);
  if (type.getElementType().isInteger(1))
    return n.emitError() << "input must be numeric, got " << type;
  Value x = n.getInput(0);
  n.setResult(0, n.create<MaxOp>(type, x, n.create<NegOp>(type, x)));
  return success();
}

/// Xor of booleans: (a or b) and not (a and b), with broadcasting.
LogicalResult importXor(NodeImporter &n) {
  if (failed(checkTwoBoolOperands(n)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      n.broadcast(n.getInputType(0).getShape(), n.getInputType(1).getShape());
  if (failed(shape))
    return failure();
  FailureOr<Value> either = buildBinary<OrOp>(n, n.getInput(0), n.getInput(1));
  FailureOr<Value> both = buildBinary<AndOp>(n, n.getInput(0), n.getInput(1));
  if (failed(either) || failed(both))
    return failure();
  Value notBoth = n.create<NotOp>(cast<RankedTensorType>((*both).getType()), *both);
  FailureOr<Value> r = buildBinary<AndOp>(n, *either, notBoth);
  if (failed(r))
    return failure();
  n.setResult(0, *r);
  return success();
}

/// Dropout in inference (training_mode absent or false): the identity; the
/// optional mask output is all true.
LogicalResult importDropout(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 3)))
    return failure();
  // training_mode (Dropout-12+) is a bool scalar.
  if (n.hasInput(2)) {
    FailureOr<DenseElementsAttr> training = n.getConstantInput(2, "training_mode");
    if (failed(training))
      return failure();
    if (!training->getElementType().isInteger(1) || training->getNumElements() != 1)
      return n.emitError() << "training_mode must be a bool scalar, got " << training->getType();
    if (*training->getValues<bool>().begin())
      return n.emitUnsupported("training_mode = true (kiln compiles inference)");
  }
  n.setResult(0, n.getInput(0));
  if (n.getNumOutputs() > 1 && n.isOutputUsed(1)) {
    // The mask is bool from Dropout-10 on; Dropout-7 gives it the input's type.
    auto type = n.getInputType(0);
    if (n.getOpset() < 10) {
      if (failed(n.checkFloat(0)))
        return failure();
      n.setResult(1, n.create<ExpandOp>(type, n.createScalar(type.getElementType(), 1.0)));
    } else {
      auto maskType = type.clone(n.getBuilder().getI1Type());
      n.setResult(1, n.createConstant(DenseElementsAttr::get(maskType, true)));
    }
  }
  return success();
}

/// The activation functions ONNX defines elementwise from simpler ones
/// (operator spec formulas), spelled with kiln ops; float inputs; x is
/// operand 0 and every result has its type. A NaN input gives NaN (the
/// selects test `x < 0`, which is false for NaN, and keep x).
enum class Activation {
  LeakyRelu, Elu, Selu, Celu, HardSigmoid, HardSwish, Softsign, Softplus, ThresholdedRelu,
  Mish, PRelu, Sign
};

template <Activation Kind>
LogicalResult importActivation(NodeImporter &n) {
  unsigned inputs = Kind == Activation::PRelu ? 2 : 1;
  if (failed(n.checkNumInputs(inputs, inputs)) || failed(n.checkFloat(0)))
    return failure();
  auto type = n.getInputType(0);
  Type elem = type.getElementType();
  Value x = n.getInput(0);
  auto c = [&](double v) { return n.createScalar(elem, v); };
  auto attr = [&](StringRef name, float dflt) { return n.getFloatAttr(name, dflt); };
  auto mul = [&](Value a, Value b) { return n.create<MulOp>(type, a, b); };
  auto add = [&](Value a, Value b) { return n.create<AddOp>(type, a, b); };
  auto boolType = type.clone(n.getBuilder().getI1Type());
  auto negative = [&]() { return n.create<LessOp>(boolType, x, c(0)); };
  auto select = [&](Value cond, Value t, Value f) { return n.create<WhereOp>(type, cond, t, f); };
  auto expm1 = [&]() { return n.create<SubOp>(type, n.create<ExpOp>(type, x), c(1)); };
  // log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)).
  auto softplus = [&]() {
    Value ax = n.create<MaxOp>(type, x, n.create<NegOp>(type, x));
    Value tail = n.create<LogOp>(type, add(c(1), n.create<ExpOp>(type, n.create<NegOp>(type, ax))));
    return add(n.create<MaxOp>(type, x, c(0)), tail);
  };
  FailureOr<float> a = success(0.0f), b = success(0.0f);
  Value y;
  switch (Kind) {
  case Activation::LeakyRelu:
    if (failed(a = attr("alpha", 0.01f)))
      return failure();
    y = select(negative(), mul(x, c(*a)), x);
    break;
  case Activation::Elu:
    if (failed(a = attr("alpha", 1.0f)))
      return failure();
    y = select(negative(), mul(expm1(), c(*a)), x);
    break;
  case Activation::Selu:
    if (failed(a = attr("alpha", 1.67326319217681884765625f)) ||
        failed(b = attr("gamma", 1.05070102214813232421875f)))
      return failure();
    y = mul(select(negative(), mul(expm1(), c(*a)), x), c(*b));
    break;
  case Activation::Celu: {
    if (failed(a = attr("alpha", 1.0f)))
      return failure();
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    Value e = n.create<SubOp>(type, n.create<ExpOp>(type, mul(x, c(1.0 / *a))), c(1));
    y = add(n.create<MaxOp>(type, x, c(0)), n.create<MinOp>(type, mul(e, c(*a)), c(0)));
    break;
  }
  case Activation::HardSigmoid:
  case Activation::HardSwish: {
    bool swish = Kind == Activation::HardSwish;
    if (!swish && (failed(a = attr("alpha", 0.2f)) || failed(b = attr("beta", 0.5f))))
      return failure();
    double alpha = swish ? 1.0 / 6 : *a, beta = swish ? 0.5 : *b;
    Value h = n.create<MinOp>(type, n.create<MaxOp>(type, add(mul(x, c(alpha)), c(beta)), c(0)),
                              c(1));
    y = swish ? mul(x, h) : h;
    break;
  }
  case Activation::Softsign: {
    Value ax = n.create<MaxOp>(type, x, n.create<NegOp>(type, x));
    y = n.create<DivOp>(type, x, add(c(1), ax));
    break;
  }
  case Activation::Softplus:
    y = softplus();
    break;
  case Activation::ThresholdedRelu:
    if (failed(a = attr("alpha", 1.0f)))
      return failure();
    y = select(n.create<LessEqualOp>(boolType, x, c(*a)), c(0), x);
    break;
  case Activation::Mish:
    y = mul(x, n.create<TanhOp>(type, softplus()));
    break;
  case Activation::PRelu: {
    FailureOr<Value> slopeMul = buildBinary<MulOp>(n, x, n.getInput(1));
    if (failed(slopeMul))
      return failure();
    if (cast<RankedTensorType>((*slopeMul).getType()).getShape() != type.getShape())
      return n.emitError() << "slope " << n.getInputType(1) << " must broadcast to the input "
                           << type;
    y = select(negative(), *slopeMul, x);
    break;
  }
  case Activation::Sign:
    y = select(n.create<GreaterOp>(boolType, x, c(0)), c(1),
               select(negative(), c(-1), mul(x, c(0)))); // 0 stays 0, NaN stays NaN
    break;
  }
  n.setResult(0, y);
  return success();
}

/// Gelu-20: approximate = "none" or "tanh" (buildGelu).
LogicalResult importGelu(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)) || failed(n.checkFloat(0)))
    return failure();
  FailureOr<std::string> approximate = n.getStringAttr("approximate", "none");
  if (failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return n.emitUnsupported("approximate = '" + *approximate + "'");
  n.setResult(0, buildGelu(n, n.getInput(0), *approximate == "tanh"));
  return success();
}

} // namespace

Value onnx_import::buildGelu(NodeImporter &n, Value x, bool tanhApproximation) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elem = type.getElementType();
  auto scalar = [&](double v) { return n.createScalar(elem, v); };
  auto mul = [&](Value a, Value b) { return n.create<MulOp>(type, a, b); };
  Value inner;
  if (!tanhApproximation) {
    inner = n.create<ErfOp>(type, mul(x, scalar(M_SQRT1_2)));
  } else {
    Value cube = mul(mul(x, x), x);
    Value poly = n.create<AddOp>(type, x, mul(cube, scalar(0.044715)));
    inner = n.create<TanhOp>(type, mul(poly, scalar(std::sqrt(2.0 / M_PI))));
  }
  Value onePlus = n.create<AddOp>(type, inner, scalar(1.0));
  return mul(mul(x, scalar(0.5)), onePlus);
}

void onnx_import::registerElementwiseOps(OpRegistry &r) {
  r.add("Identity", importIdentity);
  r.add("Neg", importUnary<NegOp>);
  r.add("Relu", importUnary<ReluOp>);
  r.add("Exp", importFloatUnary<ExpOp>);
  r.add("Log", importFloatUnary<LogOp>);
  r.add("Sqrt", importFloatUnary<SqrtOp>);
  r.add("Reciprocal", importFloatUnary<ReciprocalOp>);
  r.add("Tanh", importFloatUnary<TanhOp>);
  r.add("Erf", importFloatUnary<ErfOp>);
  r.add("Sigmoid", importFloatUnary<SigmoidOp>);
  r.add("Cos", importFloatUnary<CosOp>);
  r.add("Sin", importFloatUnary<SinOp>);
  r.add("Not", importNot);
  r.add("IsNaN", importIsNaN);
  r.add("Add", importArith<AddOp>);
  r.add("Sub", importArith<SubOp>);
  r.add("Mul", importArith<MulOp>);
  r.add("Div", importArith<DivOp>);
  r.add("Pow", importPow);
  r.add("Max", importVariadic<MaxOp>);
  r.add("Min", importVariadic<MinOp>);
  r.add("Equal", importCompare<EqualOp>);
  r.add("Less", importCompare<LessOp>);
  r.add("LessOrEqual", importCompare<LessEqualOp>);
  r.add("Greater", importCompare<GreaterOp>);
  r.add("GreaterOrEqual", importCompare<GreaterEqualOp>);
  r.add("And", importLogic<AndOp>);
  r.add("Or", importLogic<OrOp>);
  r.add("Where", importWhere);
  // Cast-19's `saturate` only concerns float8 targets, which kiln rejects.
  r.add("Cast", importCast, {"to", "saturate"});
  r.add("Clip", importClip, {"min", "max"});
  r.add("CastLike", importCastLike, {"saturate"});
  r.add("Abs", importAbs);
  r.add("Mod", importMod, {"fmod"});
  r.add("Xor", importXor);
  r.add("Dropout", importDropout, {"seed", "ratio"});
  r.add("LeakyRelu", importActivation<Activation::LeakyRelu>, {"alpha"});
  r.add("Elu", importActivation<Activation::Elu>, {"alpha"});
  r.add("Selu", importActivation<Activation::Selu>, {"alpha", "gamma"});
  r.add("Celu", importActivation<Activation::Celu>, {"alpha"});
  r.add("HardSigmoid", importActivation<Activation::HardSigmoid>, {"alpha", "beta"});
  r.add("HardSwish", importActivation<Activation::HardSwish>);
  r.add("Softsign", importActivation<Activation::Softsign>);
  r.add("Softplus", importActivation<Activation::Softplus>);
  r.add("ThresholdedRelu", importActivation<Activation::ThresholdedRelu>, {"alpha"});
  r.add("Mish", importActivation<Activation::Mish>);
  r.add("PRelu", importActivation<Activation::PRelu>);
  r.add("Sign", importActivation<Activation::Sign>);
  r.add("Gelu", importGelu, {"approximate"});
}
