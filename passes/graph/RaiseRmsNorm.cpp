//===- RaiseRmsNorm.cpp - decomposed RMS norm -> kiln.rms_norm ------------===//
//
// Recognizes the Pow/ReduceMean/Add/Sqrt/Reciprocal/Mul chain that exporters
// emit for RMS normalization (LlamaRMSNorm, T5LayerNorm, ...) and replaces it
// by one kiln.rms_norm, so that codegen makes one pass per row in one kernel
// instead of a reduction kernel and a normalization kernel.
//
// The match starts at the mean of squares and walks forward:
//   1. m = ReduceMean(Pow(x, 2) | Mul(x, x)) over trailing axes, keepdims;
//   2. a = Add(m, eps) (either order), s = Sqrt(a);
//   3. n = Mul(x, Reciprocal(s)) | Mul(x, Div(1, s)) (either order) | Div(x, s);
//   4. optionally c = Cast(n) to another float type;
//   5. optionally Mul(c or n, weight) (either order), weight of the
//      normalized shape and the same type.
// When x is itself Cast(x0) from a 16-bit float to f32, read only by the
// chain, and the cast back returns to x0's type, both casts disappear: kiln.rms_norm
// computes its statistics in fp32 whatever the storage type. In every other
// cast arrangement the casts stay where they are, outside the raised op.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-raise-rms-norm"

namespace kiln {
#define GEN_PASS_DEF_RAISERMSNORM
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A matched decomposed RMS norm. `chain` holds every op to erase, in
/// program order (producers first); `last` is the op whose result the
/// kiln.rms_norm replaces; `scale` is null when no weight was absorbed.
struct RmsNormMatch {
  Value input, scale;
  int64_t axis = 0;
  float epsilon = 0;
  SmallVector<Operation *> chain;
  Operation *last = nullptr;
};

/// For `bin` = lhs op rhs reading `value`, the other operand (null when
/// `value` is neither operand).
Value otherOperand(Operation *bin, Value value) {
  if (bin->getOperand(0) == value)
    return bin->getOperand(1);
  if (bin->getOperand(1) == value)
    return bin->getOperand(0);
  return Value();
}

/// The single user of `v` if it is an OpT, else null.
template <typename OpT> OpT singleUser(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  return dyn_cast<OpT>(*v.getUsers().begin());
}

/// True for a float-to-float kiln.cast.
bool isFloatCast(CastOp cast) {
  return cast && isa<FloatType>(getElementTypeOrSelf(cast.getInput().getType())) &&
         isa<FloatType>(getElementTypeOrSelf(cast.getType()));
}

/// Matches the chain whose mean of squares is `mean`; the failure reason
/// goes to the debug log.
FailureOr<RmsNormMatch> matchRmsNorm(ReduceOp mean) {
  auto fail = [&](const char *why) {
    LLVM_DEBUG(llvm::dbgs() << "no rms norm at " << mean.getLoc() << ": " << why << "\n");
    return failure();
  };
  if (mean.getKind() != ReduceKind::Mean || !mean.getKeepDims() || !mean->hasOneUse())
    return fail("not a single-use keep-dims mean");

  // Step 1: the square of x, read only by the mean.
  Value square = mean.getInput();
  Operation *squareOp = square.getDefiningOp();
  if (!squareOp || !square.hasOneUse())
    return fail("the square is not read only by the mean");
  Value x;
  if (auto pow = dyn_cast<PowOp>(squareOp)) {
    std::optional<double> exponent = getScalarFloatConstant(pow.getRhs());
    if (!exponent || *exponent != 2.0)
      return fail("exponent is not the constant 2");
    x = pow.getLhs();
  } else if (auto mul = dyn_cast<MulOp>(squareOp)) {
    if (mul.getLhs() != mul.getRhs())
      return fail("mul is not x * x");
    x = mul.getLhs();
  } else {
    return fail("the mean does not read a square");
  }
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || !type.hasStaticShape() || !isa<FloatType>(type.getElementType()) ||
      square.getType() != type)
    return fail("x is not a static float tensor squared elementwise");
  ArrayRef<int64_t> axes = mean.getAxes();
  if (axes.empty() || axes.back() != type.getRank() - 1)
    return fail("the mean is not over the trailing axes");
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return fail("the mean's axes are not contiguous");

  RmsNormMatch match;
  match.axis = axes.front();

  // Step 2: + eps, sqrt.
  auto add = singleUser<AddOp>(mean.getResult());
  if (!add || !add->hasOneUse())
    return fail("the mean is not followed by a single-use add");
  std::optional<double> eps = getScalarFloatConstant(otherOperand(add, mean.getResult()));
  if (!eps || *eps < 0 || add.getType() != mean.getType())
    return fail("epsilon is not a non-negative scalar constant");
  auto sqrt = singleUser<SqrtOp>(add.getResult());
  if (!sqrt || !sqrt->hasOneUse())
    return fail("the variance is not followed by a single-use sqrt");
  match.epsilon = static_cast<float>(*eps);
  match.chain = {squareOp, mean, add, sqrt};

  // Step 3: x * 1/sqrt, or x / sqrt.
  Operation *sqrtUser = *sqrt->getUsers().begin();
  Operation *normalized = nullptr;
  if (auto div = dyn_cast<DivOp>(sqrtUser);
      div && div.getRhs() == sqrt.getResult() && div.getLhs() == x) {
    normalized = div;
  } else {
    Operation *reciprocal = nullptr;
    if (auto recip = dyn_cast<ReciprocalOp>(sqrtUser)) {
      reciprocal = recip;
    } else if (auto div = dyn_cast<DivOp>(sqrtUser); div && div.getRhs() == sqrt.getResult()) {
      std::optional<double> one = getScalarFloatConstant(div.getLhs());
      if (!one || *one != 1.0 || div.getType() != sqrt.getType())
        return fail("division of something other than 1 or x by the sqrt");
      reciprocal = div;
    } else {
      return fail("the sqrt is not inverted");
    }
    auto mul = singleUser<MulOp>(reciprocal->getResult(0));
    if (!mul || otherOperand(mul, reciprocal->getResult(0)) != x)
      return fail("the inverse sqrt does not scale x");
    match.chain.push_back(reciprocal);
    normalized = mul;
  }
  if (normalized->getResult(0).getType() != type)
    return fail("the normalized value broadcasts x");
  match.chain.push_back(normalized);
  match.last = normalized;
  match.input = x;

  // A cast widening a 16-bit x0 to the f32 x, read only by the square and
  // the normalization, may join the chain (a narrowing cast rounds x0, which
  // the op would not do).
  auto castIn = x.getDefiningOp<CastOp>();
  bool castInOnlyHere =
      isFloatCast(castIn) && type.getElementType().isF32() &&
      getElementTypeOrSelf(castIn.getInput().getType()).getIntOrFloatBitWidth() == 16 &&
      llvm::all_of(x.getUsers(), [&](Operation *u) { return u == squareOp || u == normalized; });

  // Step 4: an optional cast back. Both casts are absorbed when they undo
  // each other; otherwise the chain ends before the cast back.
  Value result = normalized->getResult(0);
  if (auto castBack = singleUser<CastOp>(result); isFloatCast(castBack)) {
    if (!castInOnlyHere || castBack.getType() != castIn.getInput().getType())
      return match;
    match.chain.insert(match.chain.begin(), castIn);
    match.chain.push_back(castBack);
    match.last = castBack;
    match.input = castIn.getInput();
    result = castBack.getResult();
  }

  // Step 5: the weight, of the normalized shape and the result's type.
  auto resultType = cast<RankedTensorType>(result.getType());
  ArrayRef<int64_t> normShape = resultType.getShape().drop_front(match.axis);
  if (auto mul = singleUser<MulOp>(result); mul && mul.getType() == resultType) {
    Value weight = otherOperand(mul, result);
    auto weightType = dyn_cast<RankedTensorType>(weight.getType());
    if (weight != result && weightType && weightType.getShape() == normShape &&
        weightType.getElementType() == resultType.getElementType()) {
      match.scale = weight;
      match.chain.push_back(mul);
      match.last = mul;
    }
  }
  return match;
}

/// Replaces a matched chain by kiln.rms_norm (scale = ones without weight)
/// and erases the chain and the constants only it read.
RmsNormOp raise(RewriterBase &rewriter, RmsNormMatch &match) {
  auto type = cast<RankedTensorType>(match.input.getType());
  rewriter.setInsertionPoint(match.last);
  Location loc = rewriter.getFusedLoc({match.chain.front()->getLoc(), match.last->getLoc()});
  if (!match.scale) {
    auto scaleType =
        RankedTensorType::get(type.getShape().drop_front(match.axis), type.getElementType());
    match.scale = ConstantOp::create(
        rewriter, loc, scaleType,
        DenseElementsAttr::get(scaleType, rewriter.getFloatAttr(type.getElementType(), 1.0)));
  }
  auto norm = RmsNormOp::create(rewriter, loc, type, match.input, match.scale,
                                rewriter.getI64IntegerAttr(match.axis),
                                rewriter.getF32FloatAttr(match.epsilon));
  rewriter.replaceAllUsesWith(match.last->getResult(0), norm.getResult());
  // Constants read only by the chain (epsilon, the exponent, the 1 of 1/s)
  // die with it.
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
  return norm;
}

} // namespace

FailureOr<RmsNormOp> kiln::raiseRmsNorm(RewriterBase &rewriter, ReduceOp mean) {
  FailureOr<RmsNormMatch> match = matchRmsNorm(mean);
  if (failed(match))
    return failure();
  return raise(rewriter, *match);
}

namespace {
struct RaiseRmsNormPass : public kiln::impl::RaiseRmsNormBase<RaiseRmsNormPass> {
  void runOnOperation() override {
    SmallVector<ReduceOp> means;
    getOperation().walk([&](ReduceOp reduce) { means.push_back(reduce); });
    IRRewriter rewriter(&getContext());
    for (ReduceOp mean : means)
      (void)raiseRmsNorm(rewriter, mean);
  }
};
} // namespace
