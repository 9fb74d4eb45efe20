//===- RaiseLayerNorm.cpp - decomposed layer norm -> kiln.layer_norm ------===//
//
// Recognizes the ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div chain that
// exports before ONNX opset 17 use for layer normalization (and the optional
// Mul by gamma, Add of beta) and replaces it by one kiln.layer_norm.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "kiln-raise-layer-norm"

namespace kiln {
#define GEN_PASS_DEF_RAISELAYERNORM
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

std::optional<double> kiln::getScalarFloatConstant(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1 ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return (*attr.value_begin<APFloat>()).convertToDouble();
}

namespace {

/// A matched decomposed layer norm: y = (x - mean) / sqrt(var + eps), then
/// optionally * scale and + bias. `chain` holds every op to erase, in
/// program order (producers first); `last` is the op whose result the
/// layer norm replaces.
struct LayerNormMatch {
  Value input, scale, bias;
  int64_t axis = 0;
  float epsilon = 0;
  SmallVector<Operation *> chain;
  Operation *last = nullptr;
};

/// True if `op` is `kiln.reduce <mean>` over the trailing dims [axis, rank)
/// of its input with keep_dims, reading `input`; sets `axis`.
bool isTrailingMean(Operation *op, Value input, int64_t &axis) {
  auto reduce = dyn_cast_or_null<ReduceOp>(op);
  if (!reduce || reduce.getKind() != ReduceKind::Mean || !reduce.getKeepDims() ||
      reduce.getInput() != input)
    return false;
  ArrayRef<int64_t> axes = reduce.getAxes();
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  if (axes.empty() || axes.back() != rank - 1)
    return false;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return false;
  axis = axes.front();
  return true;
}

/// For `bin` = lhs op rhs reading `value`, the other operand.
Value otherOperand(Operation *bin, Value value) {
  if (bin->getOperand(0) == value)
    return bin->getOperand(1);
  if (bin->getOperand(1) == value)
    return bin->getOperand(0);
  return Value();
}

/// If `v`'s only use is an op of type OpT whose result has `v`'s type,
/// returns that op.
template <typename OpT> OpT singleUserOfSameType(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  auto user = dyn_cast<OpT>(*v.getUsers().begin());
  if (!user || user->getResult(0).getType() != v.getType())
    return nullptr;
  return user;
}

/// If the chain's result (`match.last`) is read only by an OpT (Mul for
/// gamma, Add for beta) whose other operand has the normalized shape,
/// appends that op to the chain and returns the operand; else null.
template <typename OpT>
Value absorbAffine(LayerNormMatch &match, ArrayRef<int64_t> normShape) {
  Value last = match.last->getResult(0);
  OpT op = singleUserOfSameType<OpT>(last);
  if (!op)
    return Value();
  Value param = otherOperand(op, last);
  auto type = param ? dyn_cast<RankedTensorType>(param.getType()) : nullptr;
  if (param == last || !type || type.getShape() != normShape ||
      type.getElementType() != getElementTypeOrSelf(last.getType()))
    return Value();
  match.chain.push_back(op);
  match.last = op;
  return param;
}

/// Matches the chain rooted at `div` = d / sqrt(var + eps).
std::optional<LayerNormMatch> matchLayerNorm(DivOp div) {
  auto sub = div.getLhs().getDefiningOp<SubOp>();
  auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
  if (!sub || !sqrt || !sqrt->hasOneUse())
    return std::nullopt;
  Value x = sub.getLhs(), d = sub.getResult();
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || !type.hasStaticShape() || !isa<FloatType>(type.getElementType()) ||
      d.getType() != type || div.getResult().getType() != type)
    return std::nullopt;

  LayerNormMatch match;
  Operation *mean = sub.getRhs().getDefiningOp();
  if (!isTrailingMean(mean, x, match.axis) || !mean->hasOneUse())
    return std::nullopt;

  // var = mean(d^2) + eps, with d^2 as Pow(d, 2) or Mul(d, d).
  auto add = sqrt.getInput().getDefiningOp<AddOp>();
  if (!add || !add->hasOneUse())
    return std::nullopt;
  Value varianceValue = add.getLhs();
  std::optional<double> eps = getScalarFloatConstant(add.getRhs());
  if (!eps) {
    varianceValue = add.getRhs();
    eps = getScalarFloatConstant(add.getLhs());
  }
  auto varianceReduce = varianceValue.getDefiningOp<ReduceOp>();
  if (!eps || *eps < 0 || !varianceReduce || !varianceReduce->hasOneUse())
    return std::nullopt;
  Operation *variance = varianceReduce;
  int64_t varianceAxis = -1;
  Value square = varianceReduce.getInput();
  if (!isTrailingMean(variance, square, varianceAxis) || varianceAxis != match.axis ||
      !square.hasOneUse())
    return std::nullopt;
  Operation *squareOp = square.getDefiningOp();
  if (auto pow = dyn_cast_or_null<PowOp>(squareOp)) {
    std::optional<double> exponent = getScalarFloatConstant(pow.getRhs());
    if (pow.getLhs() != d || !exponent || *exponent != 2.0)
      return std::nullopt;
  } else if (auto mul = dyn_cast_or_null<MulOp>(squareOp)) {
    if (mul.getLhs() != d || mul.getRhs() != d)
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (square.getType() != type)
    return std::nullopt;
  // d feeds exactly the square and the division.
  for (Operation *user : d.getUsers())
    if (user != squareOp && user != div.getOperation())
      return std::nullopt;

  match.input = x;
  match.epsilon = static_cast<float>(*eps);
  match.chain = {mean, sub, squareOp, variance, add, sqrt, div};
  match.last = div;

  // Optional affine part: * gamma, + beta, each of the normalized shape.
  ArrayRef<int64_t> normShape = type.getShape().drop_front(match.axis);
  match.scale = absorbAffine<MulOp>(match, normShape);
  if (match.scale)
    match.bias = absorbAffine<AddOp>(match, normShape);
  return match;
}

/// Replaces a matched chain by kiln.layer_norm (scale = ones without gamma).
void raise(IRRewriter &rewriter, LayerNormMatch &match) {
  auto type = cast<RankedTensorType>(match.input.getType());
  rewriter.setInsertionPoint(match.last);
  Location loc = rewriter.getFusedLoc({match.chain.front()->getLoc(), match.last->getLoc()});
  if (!match.scale) {
    auto paramType = RankedTensorType::get(type.getShape().drop_front(match.axis),
                                           type.getElementType());
    match.scale = ConstantOp::create(rewriter, loc, paramType,
                                     DenseElementsAttr::get(paramType, rewriter.getFloatAttr(
                                                                           type.getElementType(), 1.0)));
  }
  Value result = LayerNormOp::create(rewriter, loc, type, match.input, match.scale, match.bias,
                                     rewriter.getI64IntegerAttr(match.axis),
                                     rewriter.getF32FloatAttr(match.epsilon));
  rewriter.replaceAllUsesWith(match.last->getResult(0), result);
  // Constants read only by the chain (epsilon, the exponent) die with it.
  llvm::SetVector<Operation *> constants;
  for (Operation *op : match.chain)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && isa<ConstantOp>(def))
        constants.insert(def);
  for (Operation *op : llvm::reverse(match.chain))
    rewriter.eraseOp(op);
  for (Operation *op : constants)
    if (op->use_empty())
      rewriter.eraseOp(op);
}

struct RaiseLayerNormPass : public kiln::impl::RaiseLayerNormBase<RaiseLayerNormPass> {
  void runOnOperation() override {
    SmallVector<DivOp> roots;
    getOperation().walk([&](DivOp div) { roots.push_back(div); });
    IRRewriter rewriter(&getContext());
    for (DivOp div : roots)
      if (std::optional<LayerNormMatch> match = matchLayerNorm(div))
        raise(rewriter, *match);
  }
};
} // namespace
