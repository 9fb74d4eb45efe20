//===- KilnFolders.cpp - constant folding of kiln ops ---------------------===//
//
// `fold` hooks of the kiln ops. With static shapes, ONNX shape and mask
// subgraphs (Shape, Gather, Concat, Range, CumSum, GatherND, IsNaN, Where,
// Expand, comparisons ...) have only constant operands, so folding them turns
// each subgraph into one `kiln.constant`. Folding evaluates on the host in
// double / int64 and rounds to the element type; it is bounded by
// kMaxFoldElements so that folding never materializes huge tensors.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace kiln;

namespace {

/// True when a tensor of type `t` exceeds the folding limit (element count
/// computed with overflow checks: shapes may be huge before codegen rejects
/// them).
bool tooLarge(Type t) {
  int64_t n = 1;
  for (int64_t d : cast<RankedTensorType>(t).getShape())
    if (d < 0 || llvm::MulOverflow(n, d, n) || n > kMaxFoldElements)
      return true;
  return false;
}

/// double -> int64 without undefined behaviour: truncates toward zero,
/// saturates out-of-range values, NaN gives 0 (ONNX leaves these casts
/// undefined).
int64_t toInt64(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return int64_t(std::trunc(v));
}

/// Integer x^y with wrap-around; y < 0 truncates 1/x^|y| toward zero.
int64_t intPow(int64_t x, int64_t y) {
  if (y < 0)
    return x == 1 ? 1 : x == -1 ? ((-y) % 2 ? -1 : 1) : 0;
  uint64_t result = 1, base = uint64_t(x);
  for (uint64_t e = uint64_t(y); e; e >>= 1, base *= base)
    if (e & 1)
      result *= base;
  return int64_t(result);
}

/// A host copy of a constant tensor: floats as double, integers/bools as int64.
struct HostTensor {
  RankedTensorType type;
  std::vector<double> f;
  std::vector<int64_t> i;

  bool isFloat() const { return isa<FloatType>(type.getElementType()); }
  int64_t size() const { return type.getNumElements(); }
  double getF(int64_t k) const { return isFloat() ? f[k] : double(i[k]); }
  int64_t getI(int64_t k) const { return isFloat() ? toInt64(f[k]) : i[k]; }

  /// Reads `attr` if it is a dense constant of at most kMaxFoldElements.
  static std::optional<HostTensor> read(Attribute attr) {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
    if (!dense)
      return std::nullopt;
    HostTensor t;
    t.type = cast<RankedTensorType>(dense.getType());
    if (t.size() > kMaxFoldElements)
      return std::nullopt;
    Type elem = t.type.getElementType();
    if (auto ft = dyn_cast<FloatType>(elem)) {
      t.f.reserve(t.size());
      for (APFloat v : dense.getValues<APFloat>()) {
        bool loses;
        v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &loses);
        t.f.push_back(v.convertToDouble());
      }
    } else {
      t.i.reserve(t.size());
      // Unsigned elements zero-extend, so every value is its own number in
      // int64 and int64 arithmetic truncated to the element width (write)
      // wraps as the GPU's would. A ui64 value over INT64_MAX has no int64
      // form: such a constant is not folded at all.
      bool isBool = elem.isInteger(1), isUnsigned = elem.isUnsignedInteger();
      for (APInt v : dense.getValues<APInt>()) {
        if (isUnsigned && v.isNegative() && v.getBitWidth() == 64)
          return std::nullopt;
        t.i.push_back(isBool       ? int64_t(v.getBoolValue())
                      : isUnsigned ? int64_t(v.getZExtValue())
                                   : v.getSExtValue());
      }
    }
    return t;
  }

  /// Builds a result of `type` from per-element values (float or int, any
  /// source); element conversion follows ONNX Cast.
  static DenseElementsAttr write(RankedTensorType type,
                                 const std::function<double(int64_t)> &getF,
                                 const std::function<int64_t(int64_t)> &getI,
                                 bool srcIsFloat) {
    assert(!tooLarge(type) && "folder materializes a result over kMaxFoldElements");
    Type elem = type.getElementType();
    int64_t n = type.getNumElements();
    if (auto ft = dyn_cast<FloatType>(elem)) {
      // One rounding to nearest even, as the GPU's cvt.rn and ONNX Cast: a float source is
      // exact in double (f32, f16 and bf16 values all are), an integer source converts
      // directly (through double it would round twice beyond 2^53). Overflow gives inf.
      SmallVector<APFloat> vals;
      vals.reserve(n);
      for (int64_t k = 0; k < n; ++k) {
        APFloat v(ft.getFloatSemantics());
        if (srcIsFloat) {
          v = APFloat(getF(k));
          bool loses;
          v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &loses);
        } else {
          v.convertFromAPInt(APInt(64, uint64_t(getI(k)), /*isSigned=*/true), /*IsSigned=*/true,
                             APFloat::rmNearestTiesToEven);
        }
        vals.push_back(v);
      }
      return DenseElementsAttr::get(type, vals);
    }
    unsigned width = elem.getIntOrFloatBitWidth();
    SmallVector<APInt> vals;
    vals.reserve(n);
    for (int64_t k = 0; k < n; ++k) {
      int64_t v;
      if (width == 1)
        v = srcIsFloat ? getF(k) != 0.0 : getI(k) != 0;
      else
        v = srcIsFloat ? toInt64(getF(k)) : getI(k);
      vals.push_back(APInt(width, uint64_t(v), /*isSigned=*/width > 1, /*implicitTrunc=*/true));
    }
    return DenseElementsAttr::get(type, vals);
  }

  /// Copies elements of this tensor into `type` by a source-index map.
  DenseElementsAttr gather(RankedTensorType resType,
                           const std::function<int64_t(int64_t)> &srcIndex) const {
    return write(
        resType, [&](int64_t k) { return f[srcIndex(k)]; },
        [&](int64_t k) { return i[srcIndex(k)]; }, isFloat());
  }
};

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// Coordinates of linear index `k` in `shape`.
SmallVector<int64_t> delinearize(int64_t k, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> c(shape.size());
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    c[d] = shape[d] ? k % shape[d] : 0;
    k = shape[d] ? k / shape[d] : 0;
  }
  return c;
}

/// Linear index in `inShape` of the element that broadcasts to `outCoords`.
int64_t broadcastIndex(ArrayRef<int64_t> outCoords, ArrayRef<int64_t> inShape) {
  int64_t off = outCoords.size() - inShape.size(), idx = 0;
  for (size_t d = 0; d < inShape.size(); ++d)
    idx = idx * inShape[d] + (inShape[d] == 1 ? 0 : outCoords[d + off]);
  return idx;
}


/// True when every one of `operands` is a dense constant: folders check this before they read
/// any (a weight read through APFloat only to find the other operand computed at run time cost
/// most of the compile time of a decode program).
bool allDense(ArrayRef<Attribute> operands) {
  return llvm::all_of(operands, [](Attribute a) { return isa_and_nonnull<DenseElementsAttr>(a); });
}

/// Folds an elementwise op over broadcast operands. `fn` gets the operands
/// at one output element and returns {double, int64} of the result.
OpFoldResult foldElementwise(
    Operation *op, ArrayRef<Attribute> operands,
    const std::function<std::pair<double, int64_t>(ArrayRef<const HostTensor *>,
                                                   ArrayRef<int64_t>)> &fn,
    bool resultIsFloat) {
  auto resType = cast<RankedTensorType>(op->getResult(0).getType());
  if (tooLarge(resType) || !allDense(operands))
    return {};
  SmallVector<HostTensor> ins;
  for (Attribute a : operands) {
    auto t = HostTensor::read(a);
    if (!t)
      return {};
    ins.push_back(std::move(*t));
  }
  SmallVector<const HostTensor *> ptrs;
  for (auto &t : ins)
    ptrs.push_back(&t);
  int64_t n = resType.getNumElements();
  // Only the half of fn's {double, int64} pair that the result type reads is kept.
  std::vector<double> outF(resultIsFloat ? n : 0);
  std::vector<int64_t> outI(resultIsFloat ? 0 : n);
  SmallVector<int64_t> idx(ins.size());
  for (int64_t k = 0; k < n; ++k) {
    SmallVector<int64_t> c = delinearize(k, resType.getShape());
    for (size_t o = 0; o < ins.size(); ++o)
      idx[o] = broadcastIndex(c, ins[o].type.getShape());
    auto [fv, iv] = fn(ptrs, idx);
    if (resultIsFloat)
      outF[k] = fv;
    else
      outI[k] = iv;
  }
  return HostTensor::write(
      resType, [&](int64_t k) { return outF[k]; }, [&](int64_t k) { return outI[k]; },
      resultIsFloat);
}

/// Unary math on floats; integers go through double and back (exact up to
/// 2^53, saturating beyond int64).
OpFoldResult foldUnary(Operation *op, Attribute operand,
                       const std::function<double(double)> &fn) {
  auto resType = cast<RankedTensorType>(op->getResult(0).getType());
  bool isFloat = isa<FloatType>(resType.getElementType());
  return foldElementwise(
      op, {operand},
      [&](ArrayRef<const HostTensor *> t, ArrayRef<int64_t> idx) {
        double v = fn(t[0]->getF(idx[0]));
        return std::make_pair(v, toInt64(v));
      },
      isFloat);
}

/// Binary arithmetic: float operands use `ff`, integer operands `fi`.
OpFoldResult foldArith(Operation *op, ArrayRef<Attribute> operands,
                       const std::function<double(double, double)> &ff,
                       const std::function<int64_t(int64_t, int64_t)> &fi) {
  auto lhsType = cast<RankedTensorType>(op->getOperand(0).getType());
  bool isFloat = isa<FloatType>(lhsType.getElementType());
  return foldElementwise(
      op, operands,
      [&](ArrayRef<const HostTensor *> t, ArrayRef<int64_t> idx) {
        if (isFloat)
          return std::make_pair(ff(t[0]->f[idx[0]], t[1]->f[idx[1]]), int64_t(0));
        return std::make_pair(0.0, fi(t[0]->i[idx[0]], t[1]->i[idx[1]]));
      },
      isFloat);
}

/// Comparison/logic to i1.
OpFoldResult foldPredicate(Operation *op, ArrayRef<Attribute> operands,
                           const std::function<bool(double, double)> &ff,
                           const std::function<bool(int64_t, int64_t)> &fi) {
  auto lhsType = cast<RankedTensorType>(op->getOperand(0).getType());
  bool isFloat = isa<FloatType>(lhsType.getElementType());
  return foldElementwise(
      op, operands,
      [&](ArrayRef<const HostTensor *> t, ArrayRef<int64_t> idx) {
        bool v = isFloat ? ff(t[0]->f[idx[0]], t[1]->f[idx[1]])
                         : fi(t[0]->i[idx[0]], t[1]->i[idx[1]]);
        return std::make_pair(double(v), int64_t(v));
      },
      /*resultIsFloat=*/false);
}

/// Folds an op that moves elements: `srcIndex(outCoords)` gives the linear
/// index into `src` (or -1 when a per-element index is out of range).
OpFoldResult foldIndexMap(
    Operation *op, Attribute src,
    const std::function<int64_t(ArrayRef<int64_t>)> &srcIndex) {
  auto resType = cast<RankedTensorType>(op->getResult(0).getType());
  if (tooLarge(resType))
    return {};
  auto in = HostTensor::read(src);
  if (!in)
    return {};
  int64_t n = resType.getNumElements();
  std::vector<int64_t> map(n);
  for (int64_t k = 0; k < n; ++k) {
    map[k] = srcIndex(delinearize(k, resType.getShape()));
    if (map[k] < 0 || map[k] >= in->size())
      return {};
  }
  return in->gather(resType, [&](int64_t k) { return map[k]; });
}

/// Normalizes a possibly negative index against `dim`; -1 if out of range.
int64_t normIndex(int64_t v, int64_t dim) {
  if (v < 0)
    v += dim;
  return (v < 0 || v >= dim) ? -1 : v;
}

} // namespace

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto in = cast<RankedTensorType>(getInput().getType());
  SmallVector<int64_t> dims(in.getShape().slice(getStart(), getEnd() - getStart()));
  return DenseElementsAttr::get(getType(), ArrayRef<int64_t>(dims));
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  if (tooLarge(getType()))
    return {};
  auto s = HostTensor::read(adaptor.getStart());
  auto l = HostTensor::read(adaptor.getLimit());
  auto d = HostTensor::read(adaptor.getDelta());
  if (!s || !l || !d)
    return {};
  double start = s->getF(0), delta = d->getF(0);
  return HostTensor::write(
      getType(), [&](int64_t k) { return start + k * delta; },
      [&](int64_t k) { return int64_t(uint64_t(s->getI(0)) + uint64_t(k) * uint64_t(d->getI(0))); },
      s->isFloat());
}

//===----------------------------------------------------------------------===//
// Pointwise
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return -x; });
}
OpFoldResult ExpOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return std::exp(x); });
}
OpFoldResult LogOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return std::log(x); });
}
OpFoldResult SqrtOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return std::sqrt(x); });
}
OpFoldResult ReciprocalOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return 1.0 / x; });
}
OpFoldResult TanhOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return std::tanh(x); });
}
OpFoldResult ErfOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return std::erf(x); });
}
OpFoldResult SigmoidOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}
OpFoldResult ReluOp::fold(FoldAdaptor a) {
  // NaN stays NaN (ONNX/numpy max(x, 0)).
  return foldUnary(*this, a.getInput(), [](double x) { return x < 0 ? 0.0 : x; });
}
OpFoldResult CosOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return std::cos(x); });
}
OpFoldResult SinOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return std::sin(x); });
}
OpFoldResult NotOp::fold(FoldAdaptor a) {
  return foldUnary(*this, a.getInput(), [](double x) { return x == 0.0 ? 1.0 : 0.0; });
}

OpFoldResult IsNaNOp::fold(FoldAdaptor a) {
  return foldElementwise(
      *this, {a.getInput()},
      [](ArrayRef<const HostTensor *> t, ArrayRef<int64_t> idx) {
        bool v = std::isnan(t[0]->f[idx[0]]);
        return std::make_pair(double(v), int64_t(v));
      },
      false);
}

OpFoldResult CastOp::fold(FoldAdaptor a) {
  // Only a cast between equal types is an identity; casts that narrow and widen again round
  // (a pair of them is never folded away). Constants round to nearest even (HostTensor::write).
  if (getInput().getType() == getType())
    return getInput();
  bool srcFloat = isa<FloatType>(getInput().getType().getElementType());
  // saturate_finite: a finite value past the largest finite result becomes that value (then
  // rounding keeps it); f16's 65504 is the only limit an int64 can pass.
  double limit = std::numeric_limits<double>::infinity();
  if (auto ft = dyn_cast<FloatType>(getType().getElementType()); ft && getSaturateFinite())
    limit = APFloat::getLargest(ft.getFloatSemantics()).convertToDouble();
  return foldElementwise(
      *this, {a.getInput()},
      [&](ArrayRef<const HostTensor *> t, ArrayRef<int64_t> idx) {
        double f = t[0]->getF(idx[0]);
        int64_t i = t[0]->getI(idx[0]);
        if (std::isfinite(f) && std::fabs(f) > limit) {
          f = std::copysign(limit, f);
          i = toInt64(f);
        }
        return std::make_pair(f, i);
      },
      srcFloat);
}

// Integer + - * wrap around in two's complement (as the GPU computes them);
// signed overflow in C++ would be undefined behaviour.
static int64_t wrapAdd(int64_t x, int64_t y) { return int64_t(uint64_t(x) + uint64_t(y)); }
static int64_t wrapSub(int64_t x, int64_t y) { return int64_t(uint64_t(x) - uint64_t(y)); }
static int64_t wrapMul(int64_t x, int64_t y) { return int64_t(uint64_t(x) * uint64_t(y)); }

OpFoldResult AddOp::fold(FoldAdaptor a) {
  return foldArith(*this, a.getOperands(), std::plus<double>(), wrapAdd);
}
OpFoldResult SubOp::fold(FoldAdaptor a) {
  return foldArith(*this, a.getOperands(), std::minus<double>(), wrapSub);
}
OpFoldResult MulOp::fold(FoldAdaptor a) {
  return foldArith(*this, a.getOperands(), std::multiplies<double>(), wrapMul);
}
OpFoldResult DivOp::fold(FoldAdaptor a) {
  // Integer division by zero is undefined: never folded (kiln-fold-shape-
  // subgraphs reports a constant zero divisor as an error).
  if (auto rhs = dyn_cast_or_null<DenseIntElementsAttr>(a.getRhs());
      rhs && llvm::any_of(rhs.getValues<APInt>(), [](const APInt &v) { return v.isZero(); }))
    return {};
  // INT64_MIN / -1 overflows (a hardware trap on x86); it wraps to INT64_MIN.
  return foldArith(*this, a.getOperands(), std::divides<double>(), [](int64_t x, int64_t y) {
    return y == -1 ? wrapSub(0, x) : x / y;
  });
}
OpFoldResult PowOp::fold(FoldAdaptor a) {
  return foldArith(
      *this, a.getOperands(), [](double x, double y) { return std::pow(x, y); },
      intPow);
}
OpFoldResult ModOp::fold(FoldAdaptor a) {
  return foldArith(
      *this, a.getOperands(),
      [](double x, double y) {
        double r = std::fmod(x, y);
        return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
      },
      [](int64_t x, int64_t y) -> int64_t {
        if (y == 0 || y == -1)
          return 0; // no trap for INT64_MIN % -1 or a zero divisor
        int64_t r = x % y;
        return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
      });
}
OpFoldResult FModOp::fold(FoldAdaptor a) {
  return foldArith(
      *this, a.getOperands(), [](double x, double y) { return std::fmod(x, y); },
      [](int64_t x, int64_t y) -> int64_t { return y == 0 || y == -1 ? 0 : x % y; });
}
OpFoldResult MaxOp::fold(FoldAdaptor a) {
  return foldArith(
      *this, a.getOperands(),
      [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); },
      [](int64_t x, int64_t y) { return std::max(x, y); });
}
OpFoldResult MinOp::fold(FoldAdaptor a) {
  return foldArith(
      *this, a.getOperands(),
      [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y); },
      [](int64_t x, int64_t y) { return std::min(x, y); });
}
OpFoldResult EqualOp::fold(FoldAdaptor a) {
  return foldPredicate(*this, a.getOperands(), std::equal_to<double>(),
                       std::equal_to<int64_t>());
}
OpFoldResult LessOp::fold(FoldAdaptor a) {
  return foldPredicate(*this, a.getOperands(), std::less<double>(), std::less<int64_t>());
}
OpFoldResult LessEqualOp::fold(FoldAdaptor a) {
  return foldPredicate(*this, a.getOperands(), std::less_equal<double>(),
                       std::less_equal<int64_t>());
}
OpFoldResult GreaterOp::fold(FoldAdaptor a) {
  return foldPredicate(*this, a.getOperands(), std::greater<double>(),
                       std::greater<int64_t>());
}
OpFoldResult GreaterEqualOp::fold(FoldAdaptor a) {
  return foldPredicate(*this, a.getOperands(), std::greater_equal<double>(),
                       std::greater_equal<int64_t>());
}
OpFoldResult AndOp::fold(FoldAdaptor a) {
  return foldPredicate(
      *this, a.getOperands(), [](double x, double y) { return x != 0 && y != 0; },
      [](int64_t x, int64_t y) { return x != 0 && y != 0; });
}
OpFoldResult OrOp::fold(FoldAdaptor a) {
  return foldPredicate(
      *this, a.getOperands(), [](double x, double y) { return x != 0 || y != 0; },
      [](int64_t x, int64_t y) { return x != 0 || y != 0; });
}

OpFoldResult WhereOp::fold(FoldAdaptor a) {
  bool isFloat = isa<FloatType>(getType().getElementType());
  return foldElementwise(
      *this, a.getOperands(),
      [&](ArrayRef<const HostTensor *> t, ArrayRef<int64_t> idx) {
        const HostTensor *pick = t[0]->i[idx[0]] ? t[1] : t[2];
        int64_t k = t[0]->i[idx[0]] ? idx[1] : idx[2];
        return isFloat ? std::make_pair(pick->f[k], int64_t(0))
                       : std::make_pair(0.0, pick->i[k]);
      },
      isFloat);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(a.getInput()))
    return dense.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor a) {
  if (llvm::equal(getPerm(), llvm::seq<int64_t>(0, getPerm().size())))
    return getInput();
  auto inShape = cast<RankedTensorType>(getInput().getType()).getShape();
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  return foldIndexMap(*this, a.getInput(), [&](ArrayRef<int64_t> c) {
    int64_t idx = 0;
    for (size_t d = 0; d < c.size(); ++d)
      idx += c[d] * inStrides[getPerm()[d]];
    return idx;
  });
}

OpFoldResult SliceOp::fold(FoldAdaptor a) {
  auto inType = cast<RankedTensorType>(getInput().getType());
  if (inType == getType() && llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getInput();
  SmallVector<int64_t> inStrides = stridesOf(inType.getShape());
  return foldIndexMap(*this, a.getInput(), [&](ArrayRef<int64_t> c) {
    int64_t idx = 0;
    for (size_t d = 0; d < c.size(); ++d)
      idx += (getStarts()[d] + c[d] * getSteps()[d]) * inStrides[d];
    return idx;
  });
}

OpFoldResult ConcatOp::fold(FoldAdaptor a) {
  if (getInputs().size() == 1)
    return getInputs()[0];
  if (tooLarge(getType()) || !allDense(a.getInputs()))
    return {};
  SmallVector<HostTensor> ins;
  for (Attribute attr : a.getInputs()) {
    auto t = HostTensor::read(attr);
    if (!t)
      return {};
    ins.push_back(std::move(*t));
  }
  int64_t axis = getAxis(), n = getType().getNumElements();
  std::vector<std::pair<int, int64_t>> src(n);
  for (int64_t k = 0; k < n; ++k) {
    SmallVector<int64_t> c = delinearize(k, getType().getShape());
    int which = 0;
    while (c[axis] >= ins[which].type.getDimSize(axis)) {
      c[axis] -= ins[which].type.getDimSize(axis);
      ++which;
    }
    int64_t idx = 0;
    for (size_t d = 0; d < c.size(); ++d)
      idx = idx * ins[which].type.getDimSize(d) + c[d];
    src[k] = {which, idx};
  }
  return HostTensor::write(
      getType(), [&](int64_t k) { return ins[src[k].first].f[src[k].second]; },
      [&](int64_t k) { return ins[src[k].first].i[src[k].second]; }, ins[0].isFloat());
}

OpFoldResult ExpandOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(a.getInput()); dense && dense.isSplat())
    return DenseElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  auto inShape = cast<RankedTensorType>(getInput().getType()).getShape();
  return foldIndexMap(*this, a.getInput(),
                      [&](ArrayRef<int64_t> c) { return broadcastIndex(c, inShape); });
}

OpFoldResult GatherOp::fold(FoldAdaptor a) {
  auto indices = HostTensor::read(a.getIndices());
  if (!indices)
    return {};
  auto dataShape = cast<RankedTensorType>(getData().getType()).getShape();
  int64_t axis = getAxis(), q = indices->type.getRank();
  SmallVector<int64_t> idxStrides = stridesOf(indices->type.getShape());
  SmallVector<int64_t> dataStrides = stridesOf(dataShape);
  return foldIndexMap(*this, a.getData(), [&](ArrayRef<int64_t> c) -> int64_t {
    int64_t ik = 0;
    for (int64_t d = 0; d < q; ++d)
      ik += c[axis + d] * idxStrides[d];
    int64_t j = normIndex(indices->getI(ik), dataShape[axis]);
    if (j < 0)
      return -1;
    int64_t idx = j * dataStrides[axis];
    for (int64_t d = 0; d < axis; ++d)
      idx += c[d] * dataStrides[d];
    for (int64_t d = axis + 1; d < (int64_t)dataShape.size(); ++d)
      idx += c[d - 1 + q] * dataStrides[d];
    return idx;
  });
}

OpFoldResult GatherElementsOp::fold(FoldAdaptor a) {
  auto indices = HostTensor::read(a.getIndices());
  if (!indices)
    return {};
  auto dataShape = cast<RankedTensorType>(getData().getType()).getShape();
  SmallVector<int64_t> dataStrides = stridesOf(dataShape);
  SmallVector<int64_t> idxStrides = stridesOf(indices->type.getShape());
  int64_t axis = getAxis();
  return foldIndexMap(*this, a.getData(), [&](ArrayRef<int64_t> c) -> int64_t {
    int64_t ik = 0;
    for (size_t d = 0; d < c.size(); ++d)
      ik += c[d] * idxStrides[d];
    int64_t j = normIndex(indices->getI(ik), dataShape[axis]);
    if (j < 0)
      return -1;
    int64_t idx = 0;
    for (size_t d = 0; d < c.size(); ++d)
      idx += ((int64_t)d == axis ? j : c[d]) * dataStrides[d];
    return idx;
  });
}

OpFoldResult GatherNDOp::fold(FoldAdaptor a) {
  auto indices = HostTensor::read(a.getIndices());
  if (!indices)
    return {};
  auto dataShape = cast<RankedTensorType>(getData().getType()).getShape();
  SmallVector<int64_t> dataStrides = stridesOf(dataShape);
  ArrayRef<int64_t> idxShape = indices->type.getShape();
  int64_t b = getBatchDims(), q = idxShape.size(), k = idxShape.back();
  return foldIndexMap(*this, a.getData(), [&](ArrayRef<int64_t> c) -> int64_t {
    // c = indices.shape[:-1] coords, then trailing data coords.
    int64_t tuple = 0;
    for (int64_t d = 0; d < q - 1; ++d)
      tuple = tuple * idxShape[d] + c[d];
    int64_t idx = 0;
    for (int64_t d = 0; d < b; ++d)
      idx += c[d] * dataStrides[d];
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = normIndex(indices->getI(tuple * k + j), dataShape[b + j]);
      if (v < 0)
        return -1;
      idx += v * dataStrides[b + j];
    }
    for (int64_t d = b + k; d < (int64_t)dataShape.size(); ++d)
      idx += c[q - 1 + d - b - k] * dataStrides[d];
    return idx;
  });
}

/// Largest matmul folded on the host, in multiply-adds (~0.1 s).
constexpr int64_t kMaxFoldMacs = int64_t(1) << 26;

OpFoldResult MatMulOp::fold(FoldAdaptor a) {
  auto resType = getType();
  if (tooLarge(resType))
    return {};
  ArrayRef<int64_t> lhsShape = getLhs().getType().getShape();
  ArrayRef<int64_t> rhsShape = getRhs().getType().getShape();
  ArrayRef<int64_t> outShape = resType.getShape();
  int64_t rank = outShape.size(), n = outShape[rank - 1];
  int64_t k = lhsShape.back(), macs = 0;
  if (llvm::MulOverflow(resType.getNumElements(), k, macs) || macs > kMaxFoldMacs ||
      !allDense({a.getLhs(), a.getRhs()}))
    return {};
  auto lhs = HostTensor::read(a.getLhs());
  auto rhs = HostTensor::read(a.getRhs());
  if (!lhs || !rhs)
    return {};
  // Batch dims broadcast: index each operand's [.., M, K] / [.., K, N]
  // matrix by the output's batch coordinates.
  ArrayRef<int64_t> lhsBatch = lhsShape.drop_back(2), rhsBatch = rhsShape.drop_back(2);
  int64_t lhsMatrix = lhsShape[lhsShape.size() - 2] * k, rhsMatrix = k * n;
  std::vector<double> out(resType.getNumElements());
  for (int64_t e = 0; e < (int64_t)out.size(); ++e) {
    SmallVector<int64_t> c = delinearize(e, outShape);
    ArrayRef<int64_t> batch = ArrayRef<int64_t>(c).drop_back(2);
    int64_t lhsBase = broadcastIndex(batch, lhsBatch) * lhsMatrix + c[rank - 2] * k;
    int64_t rhsBase = broadcastIndex(batch, rhsBatch) * rhsMatrix + c[rank - 1];
    double acc = 0;
    for (int64_t p = 0; p < k; ++p)
      acc += lhs->f[lhsBase + p] * rhs->f[rhsBase + p * n];
    out[e] = acc;
  }
  return HostTensor::write(
      resType, [&](int64_t e) { return out[e]; }, [](int64_t) { return int64_t(0); }, true);
}

OpFoldResult CumSumOp::fold(FoldAdaptor a) {
  auto in = HostTensor::read(a.getInput());
  if (!in)
    return {};
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t axis = getAxis(), n = in->size(), len = shape[axis];
  int64_t stride = stridesOf(shape)[axis];
  std::vector<double> f(n, 0.0);
  std::vector<int64_t> iv(n, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t pos = (k / stride) % len;
    if (pos != 0)
      continue;
    double accF = 0;
    int64_t accI = 0;
    for (int64_t s = 0; s < len; ++s) {
      int64_t p = getReverse() ? len - 1 - s : s;
      int64_t e = k + p * stride;
      if (getExclusive()) {
        f[e] = accF;
        iv[e] = accI;
      }
      accF += in->getF(e);
      accI = int64_t(uint64_t(accI) + uint64_t(in->getI(e)));
      if (!getExclusive()) {
        f[e] = accF;
        iv[e] = accI;
      }
    }
  }
  return HostTensor::write(
      getType(), [&](int64_t k) { return f[k]; }, [&](int64_t k) { return iv[k]; },
      in->isFloat());
}
