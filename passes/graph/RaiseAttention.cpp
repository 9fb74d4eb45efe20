//===- RaiseAttention.cpp - exported attention -> kiln.attention ----------===//
//
// Recognizes scaled dot-product attention as exporters spell it and replaces
// it by one kiln.attention:
//
//   s = MatMul(Q', K^T')            Q' = Q [* c | / c],  K^T' = K^T [* c | / c]
//   s = s [* c | / c]               scale on the scores (before the mask)
//   s = s + mask | Where(bool, s, fill) | Where(bool, fill, s)
//   p = Softmax(s, axis = -1)
//   p = Where(IsNaN(p), 0, p)       (torch's exporter; optional)
//   o = MatMul(p, V)
//   o = Transpose(o, [0, 2, 1, 3])  (optional; absorbed as bshd_output)
//
// K^T is recognized as a transpose of K in the spellings of the torch
// exporters (Transpose(K, [0, 1, 3, 2]), Transpose(Kbshd, [0, 2, 3, 1]),
// Reshape(Transpose(Reshape(K), [0, 2, 1]))) and otherwise taken as an explicit
// transpose that codegen reads as a strided view. GQA head repetition
// (Reshape(Expand(Reshape(Kkv [B, Hkv, S, D] -> [B, Hkv, 1, S, D]))) -> [B, Hq, S, D],
// HF's repeat_kv) is removed: the kernel maps query heads to KV heads itself.
// A constant mask that is exactly causal (0 on and below the bottom-right
// aligned diagonal, <= -1e30 or -inf above it) becomes `causal = true`; so does
// one too large to fold that is computed from constants by elementwise ops
// (checked row by row without materializing it).
//
// A chain that looks like attention (softmax between two batched matmuls)
// but does not match exactly is left as it is, and the softmax gets a
// `kiln.unfused` attribute with the reason, which --emit=kernels shows.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "kiln-raise-attention"

namespace kiln {
#define GEN_PASS_DEF_RAISEATTENTION
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

RankedTensorType rtt(Value v) { return cast<RankedTensorType>(v.getType()); }

/// If `v` is `x * c` or `x / c` with a scalar constant c (either operand order
/// for the product), returns x and multiplies `scale` by c (1/c).
Value peelScale(Value v, double &scale) {
  Operation *def = v.getDefiningOp();
  if (auto mul = dyn_cast_or_null<MulOp>(def)) {
    auto type = rtt(v);
    for (int side = 0; side < 2; ++side) {
      Value c = mul->getOperand(side), x = mul->getOperand(1 - side);
      if (auto s = getScalarFloatConstant(c); s && rtt(x) == type) {
        scale *= *s;
        return x;
      }
    }
  }
  if (auto div = dyn_cast_or_null<DivOp>(def)) {
    if (auto s = getScalarFloatConstant(div.getRhs()); s && *s != 0.0 && rtt(div.getLhs()) == rtt(v)) {
      scale /= *s;
      return div.getLhs();
    }
  }
  return nullptr;
}

/// Strips every scalar scaling from `v`.
Value peelScales(Value v, double &scale) {
  while (Value x = peelScale(v, scale))
    v = x;
  return v;
}

bool isPerm(Value v, ArrayRef<int64_t> perm, Value &input) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || t.getPerm() != perm)
    return false;
  input = t.getInput();
  return true;
}

/// K [B, H, Sk, D] given K^T [B, H, D, Sk], looking through the exporters'
/// spellings; creates a transpose (a view for codegen) when none matches.
Value keyFromTransposed(OpBuilder &b, Value kt) {
  auto type = rtt(kt);
  if (auto t = kt.getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> perm(t.getPerm());
    std::swap(perm[2], perm[3]);
    if (perm == ArrayRef<int64_t>{0, 1, 2, 3})
      return t.getInput();
    auto inType = rtt(t.getInput());
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(inType.getDimSize(p));
    return TransposeOp::create(b, kt.getLoc(), inType.clone(shape), t.getInput(),
                               b.getDenseI64ArrayAttr(perm));
  }
  // Reshape(Transpose(Reshape(K, [B*H, Sk, D]), [0, 2, 1]), [B, H, D, Sk]).
  if (auto r = kt.getDefiningOp<ReshapeOp>()) {
    Value inner;
    if (isPerm(r.getInput(), {0, 2, 1}, inner))
      if (auto r2 = inner.getDefiningOp<ReshapeOp>()) {
        auto k = rtt(r2.getInput()), merged = rtt(r2.getResult());
        if (k.getRank() == 4 && merged.getRank() == 3 &&
            merged.getShape() == ArrayRef<int64_t>{type.getDimSize(0) * type.getDimSize(1),
                                                   type.getDimSize(3), type.getDimSize(2)} && k.getDimSize(0) == type.getDimSize(0) &&
            k.getDimSize(1) == type.getDimSize(1) && k.getDimSize(2) == type.getDimSize(3) &&
            k.getDimSize(3) == type.getDimSize(2))
          return r2.getInput();
      }
  }
  SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(1), type.getDimSize(3),
                                type.getDimSize(2)};
  return TransposeOp::create(b, kt.getLoc(), type.clone(shape), kt,
                             b.getDenseI64ArrayAttr({0, 1, 3, 2}));
}

/// Kkv [B, Hkv, S, D] when `v` [B, Hq, S, D] repeats its heads
/// (Reshape(Expand(Reshape(Kkv -> [B, Hkv, 1, S, D]) -> [B, Hkv, rep, S, D])));
/// else `v`.
Value peelHeadRepeat(Value v) {
  auto type = rtt(v);
  auto r = v.getDefiningOp<ReshapeOp>();
  if (!r)
    return v;
  auto e = r.getInput().getDefiningOp<ExpandOp>();
  if (!e)
    return v;
  auto r5 = e.getInput().getDefiningOp<ReshapeOp>();
  if (!r5)
    return v;
  auto et = rtt(e.getResult()), it = rtt(r5.getResult()), kv = rtt(r5.getInput());
  if (et.getRank() != 5 || it.getRank() != 5 || kv.getRank() != 4)
    return v;
  int64_t B = type.getDimSize(0), S = type.getDimSize(2), D = type.getDimSize(3);
  int64_t Hkv = kv.getDimSize(1), rep = et.getDimSize(2);
  if (kv.getShape() != ArrayRef<int64_t>{B, Hkv, S, D} ||
      it.getShape() != ArrayRef<int64_t>{B, Hkv, 1, S, D} ||
      et.getShape() != ArrayRef<int64_t>{B, Hkv, rep, S, D} || Hkv * rep != type.getDimSize(1))
    return v;
  return r5.getInput();
}

/// The largest value a causal mask of element type `et` may hold at a masked entry: -1e30 in
/// fp32 (the f32 minimum, -inf); 16-bit exports write the type's lowest finite value (-65504 for
/// f16), which underflows every masked probability to 0 as long as the row has an unmasked key,
/// and every causal row has one (Sq <= Sk).
double causalMaskedBelow(Type et) { return et.isF16() ? -65504.0 : et.isBF16() ? -3.3e38 : -1e30; }

/// Whether `v`, the mask value at query i and key j of an [Sq, Sk] slice, is what a causal mask
/// holds there: 0 where j <= i + Sk - Sq (bottom-right aligned), <= `maskedBelow` elsewhere.
bool isCausalEntry(double v, int64_t i, int64_t j, int64_t Sq, int64_t Sk, double maskedBelow) {
  return j <= i + Sk - Sq ? v == 0.0 : v <= maskedBelow;
}

/// True when `mask` (constant) is exactly a causal mask for [Sq, Sk]: 0 where
/// j <= i + Sk - Sq, and <= -1e30 (or -inf) elsewhere, in every [Sq, Sk]
/// slice (exporters expand it over the batch: [B, 1, Sq, Sk]).
bool isCausalConstant(Value mask, int64_t Sq, int64_t Sk) {
  DenseElementsAttr dense;
  if (!matchPattern(mask, m_Constant(&dense)) || Sq > Sk)
    return false;
  auto type = rtt(mask);
  if (type.getRank() < 2 || type.getDimSize(type.getRank() - 1) != Sk ||
      type.getDimSize(type.getRank() - 2) != Sq)
    return false;
  if (dense.isSplat())
    return false;
  const double maskedBelow = causalMaskedBelow(type.getElementType());
  int64_t idx = 0;
  for (APFloat x : dense.getValues<APFloat>()) {
    int64_t i = (idx / Sk) % Sq, j = idx % Sk;
    ++idx;
    if (!isCausalEntry(x.convertToDouble(), i, j, Sq, Sk, maskedBelow))
      return false;
  }
  return true;
}

/// Evaluates a mask too large to fold (over kMaxFoldElements: Llama's dynamo export computes a
/// [1, 1, S, S] causal mask from position vectors, 16M elements at S = 4096) one row of the last
/// dim at a time, without materializing it: an expression of elementwise ops (comparisons,
/// logic, Where, Cast, add/sub/mul/neg, min/max; Expand and Reshapes that only add or drop
/// leading 1s, which broadcast) whose leaves are constants of at most
/// kMaxFoldElements elements, broadcast right-aligned as the ops do. Values are computed in
/// double and rounded to each op's element type (i1, integers, f32, f16, bf16) as the folders
/// would.
class MaskRows {
public:
  /// Builds the evaluator for `root`; false when it is not such an expression.
  bool build(Value root) {
    rootType = rtt(root);
    return rootType.getRank() >= 2 && add(root, 0) >= 0;
  }

  /// Elementwise nodes and leaves of the expression (the cost of one row is nodes() x Sk).
  int64_t nodes() const { return int64_t(all.size()); }

  /// Row `outer` (coordinates of every dim of the root but the last): the last dim's values,
  /// valid until the next call.
  const std::vector<double> &eval(ArrayRef<int64_t> outer) {
    for (Node &n : all)
      n.done = false;
    return evalNode(0, outer);
  }

private:
  enum class Kind { Leaf, Cast, Where, And, Or, Not, Add, Sub, Mul, Neg, Max, Min, Eq, Lt, Le,
                    Gt, Ge };
  struct Node {
    Kind kind;
    RankedTensorType type;
    SmallVector<int, 3> operands;
    std::vector<double> data; // leaves: every element
    std::vector<double> row;  // the current row (1 element when the last dim is 1)
    bool done = false;
  };
  RankedTensorType rootType;
  std::vector<Node> all;
  llvm::DenseMap<Value, int> nodeOf;

  int add(Value v, int depth) {
    if (depth > 32)
      return -1;
    if (auto it = nodeOf.find(v); it != nodeOf.end()) // a value the expression uses twice
      return it->second;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() > rootType.getRank())
      return -1;
    Node n;
    n.type = type;
    Operation *def = v.getDefiningOp();
    DenseElementsAttr dense;
    if (matchPattern(v, m_Constant(&dense))) {
      if (dense.getNumElements() > kMaxFoldElements)
        return -1;
      n.kind = Kind::Leaf;
      if (isa<FloatType>(dense.getElementType())) {
        for (APFloat x : dense.getValues<APFloat>()) {
          bool loses;
          x.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &loses);
          n.data.push_back(x.convertToDouble());
        }
      } else if (auto it = dyn_cast<IntegerType>(dense.getElementType())) {
        for (APInt x : dense.getValues<APInt>())
          n.data.push_back(it.getWidth() == 1 ? double(x.getBoolValue())
                           : it.isUnsigned()  ? double(x.getZExtValue())
                                              : double(x.getSExtValue()));
      } else {
        return -1;
      }
    } else if (!def) {
      return -1;
    } else if (isa<CastOp, ExpandOp>(def)) {
      n.kind = Kind::Cast; // Expand: the operand broadcast right-aligned, as any operand is
    } else if (isa<ReshapeOp>(def) && sameAfterLeadingOnes(rtt(def->getOperand(0)), type)) {
      n.kind = Kind::Cast; // a reshape that only adds or drops leading 1s (unsqueeze)
    } else if (isa<WhereOp>(def)) {
      n.kind = Kind::Where;
    } else if (isa<AndOp>(def)) {
      n.kind = Kind::And;
    } else if (isa<OrOp>(def)) {
      n.kind = Kind::Or;
    } else if (isa<NotOp>(def)) {
      n.kind = Kind::Not;
    } else if (isa<AddOp>(def)) {
      n.kind = Kind::Add;
    } else if (isa<SubOp>(def)) {
      n.kind = Kind::Sub;
    } else if (isa<MulOp>(def)) {
      n.kind = Kind::Mul;
    } else if (isa<NegOp>(def)) {
      n.kind = Kind::Neg;
    } else if (isa<MaxOp>(def)) {
      n.kind = Kind::Max;
    } else if (isa<MinOp>(def)) {
      n.kind = Kind::Min;
    } else if (isa<EqualOp>(def)) {
      n.kind = Kind::Eq;
    } else if (isa<LessOp>(def)) {
      n.kind = Kind::Lt;
    } else if (isa<LessEqualOp>(def)) {
      n.kind = Kind::Le;
    } else if (isa<GreaterOp>(def)) {
      n.kind = Kind::Gt;
    } else if (isa<GreaterEqualOp>(def)) {
      n.kind = Kind::Ge;
    } else {
      return -1;
    }
    int index = int(all.size());
    all.push_back(std::move(n));
    nodeOf[v] = index;
    if (def && all[index].kind != Kind::Leaf)
      for (Value operand : def->getOperands()) {
        int o = add(operand, depth + 1);
        if (o < 0)
          return -1;
        all[index].operands.push_back(o);
      }
    return index;
  }

  /// True when `a` and `b` are the same shape but for leading 1s.
  static bool sameAfterLeadingOnes(RankedTensorType a, RankedTensorType b) {
    auto trim = [](ArrayRef<int64_t> s) {
      while (!s.empty() && s.front() == 1)
        s = s.drop_front();
      return s;
    };
    return trim(a.getShape()) == trim(b.getShape());
  }

  /// `v` rounded to an element of `t`, as the folders and the GPU store it.
  static double round(double v, Type t) {
    if (t.isInteger(1))
      return v != 0.0 ? 1.0 : 0.0;
    if (isa<IntegerType>(t))
      return std::isnan(v) ? 0.0 : std::trunc(v);
    if (t.isF32())
      return double(float(v));
    if (t.isF16() || t.isBF16()) {
      APFloat x(v);
      bool loses;
      x.convert(t.isF16() ? APFloat::IEEEhalf() : APFloat::BFloat(),
                APFloat::rmNearestTiesToEven, &loses);
      x.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &loses);
      return x.convertToDouble();
    }
    return v;
  }

  const std::vector<double> &evalNode(int index, ArrayRef<int64_t> outer) {
    Node &n = all[size_t(index)];
    if (n.done)
      return n.row;
    n.done = true;
    const int64_t rank = n.type.getRank(), width = rank ? n.type.getShape().back() : 1;
    if (n.kind == Kind::Leaf) {
      // Leading coordinates right-aligned against the root's, 0 along broadcast dims.
      const int64_t offset = int64_t(outer.size()) - (rank - 1);
      int64_t base = 0;
      for (int64_t d = 0; d + 1 < rank; ++d) { // (a scalar has no leading dims)
        const int64_t size = n.type.getDimSize(d);
        base = base * size + (size == 1 ? 0 : outer[size_t(offset + d)]);
      }
      base *= width;
      n.row.assign(n.data.begin() + base, n.data.begin() + base + width);
      return n.row;
    }
    SmallVector<const std::vector<double> *, 3> in;
    for (int o : n.operands)
      in.push_back(&evalNode(o, outer));
    n.row.resize(size_t(width));
    // One loop per kind (the kind is fixed for the row); operands of width 1 broadcast.
    auto apply = [&](auto fn) {
      const size_t k = in.size();
      for (int64_t j = 0; j < width; ++j) {
        auto at = [&](size_t o) { return (*in[o])[in[o]->size() == 1 ? 0 : size_t(j)]; };
        n.row[size_t(j)] = fn(at(0), k > 1 ? at(1) : 0.0, k > 2 ? at(2) : 0.0);
      }
    };
    auto nanMax = [](double x, double y) {
      return std::isnan(x) || std::isnan(y) ? double(NAN) : std::max(x, y);
    };
    auto nanMin = [](double x, double y) {
      return std::isnan(x) || std::isnan(y) ? double(NAN) : std::min(x, y);
    };
    switch (n.kind) {
    case Kind::Leaf: break;
    case Kind::Cast: apply([](double x, double, double) { return x; }); break;
    case Kind::Where: apply([](double c, double x, double y) { return c != 0.0 ? x : y; }); break;
    case Kind::And: apply([](double x, double y, double) { return double(x != 0.0 && y != 0.0); }); break;
    case Kind::Or: apply([](double x, double y, double) { return double(x != 0.0 || y != 0.0); }); break;
    case Kind::Not: apply([](double x, double, double) { return double(x == 0.0); }); break;
    case Kind::Add: apply([](double x, double y, double) { return x + y; }); break;
    case Kind::Sub: apply([](double x, double y, double) { return x - y; }); break;
    case Kind::Mul: apply([](double x, double y, double) { return x * y; }); break;
    case Kind::Neg: apply([](double x, double, double) { return -x; }); break;
    case Kind::Max: apply([&](double x, double y, double) { return nanMax(x, y); }); break;
    case Kind::Min: apply([&](double x, double y, double) { return nanMin(x, y); }); break;
    case Kind::Eq: apply([](double x, double y, double) { return double(x == y); }); break;
    case Kind::Lt: apply([](double x, double y, double) { return double(x < y); }); break;
    case Kind::Le: apply([](double x, double y, double) { return double(x <= y); }); break;
    case Kind::Gt: apply([](double x, double y, double) { return double(x > y); }); break;
    case Kind::Ge: apply([](double x, double y, double) { return double(x >= y); }); break;
    }
    // Rounded to the element type; a mask's rows are runs of a few values, so the last
    // conversion is reused.
    Type elem = n.type.getElementType();
    double lastIn = 0.0, lastOut = round(0.0, elem);
    for (double &v : n.row) {
      if (v != lastIn) {
        lastIn = v;
        lastOut = round(v, elem);
      }
      v = lastOut;
    }
    return n.row;
  }
};

/// The most element evaluations (rows x row length x expression nodes) isCausalExpression
/// spends on one mask: a 16384 x 16384 causal mask of 8 ops.
constexpr int64_t kMaxMaskEvaluations = int64_t(1) << 31;

/// isCausalConstant for a mask too large to fold that is computed from constants
/// (MaskRows), e.g. the dynamo Llama export's at 4096 tokens.
bool isCausalExpression(Value mask, int64_t Sq, int64_t Sk) {
  auto type = rtt(mask);
  if (Sq > Sk || type.getRank() < 2 || type.getDimSize(type.getRank() - 1) != Sk ||
      type.getDimSize(type.getRank() - 2) != Sq || !type.hasStaticShape() ||
      type.getNumElements() <= kMaxFoldElements)
    return false;
  MaskRows rows;
  if (!rows.build(mask))
    return false;
  const int64_t nRows = type.getNumElements() / Sk;
  if (nRows > kMaxMaskEvaluations / Sk / rows.nodes())
    return false;
  const double maskedBelow = causalMaskedBelow(type.getElementType());
  SmallVector<int64_t> outer(type.getRank() - 1, 0);
  for (int64_t r = 0; r < nRows; ++r) {
    for (int64_t d = type.getRank() - 2, k = r; d >= 0; --d) {
      outer[size_t(d)] = k % type.getDimSize(d);
      k /= type.getDimSize(d);
    }
    const std::vector<double> &row = rows.eval(outer);
    const int64_t i = outer.back();
    for (int64_t j = 0; j < Sk; ++j)
      if (!isCausalEntry(row[size_t(j)], i, j, Sq, Sk, maskedBelow))
        return false;
  }
  return true;
}

/// True when the float constant `v` is all zeros.
bool isZeroConstant(Value v) {
  DenseElementsAttr dense;
  if (!matchPattern(v, m_Constant(&dense)) || !isa<FloatType>(dense.getElementType()))
    return false;
  return llvm::all_of(dense.getValues<APFloat>(), [](APFloat x) { return x.isZero(); });
}

/// True when `s` is a unit-step slice of `x` along its last dim starting at
/// `start`, `len` long, full along every other dim.
bool isHalfSlice(Value s, Value &x, int64_t start, int64_t len) {
  auto slice = s.getDefiningOp<SliceOp>();
  if (!slice || !slice->hasOneUse())
    return false;
  auto in = rtt(slice.getInput()), out = rtt(slice.getResult());
  int64_t rank = in.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    bool lastDim = d == rank - 1;
    if (slice.getSteps()[d] != 1 || slice.getStarts()[d] != (lastDim ? start : 0) ||
        out.getDimSize(d) != (lastDim ? len : in.getDimSize(d)))
      return false;
  }
  if (x && x != slice.getInput())
    return false;
  x = slice.getInput();
  return true;
}

/// Raises `x * cos + concat(-x[..., D/2:], x[..., :D/2]) * sin` (either
/// operand order of the add and the muls) to kiln.rotary; returns success
/// when it did.
LogicalResult raiseRotary(RewriterBase &rewriter, AddOp add) {
  auto type = rtt(add.getResult());
  if (!type.hasStaticShape() || type.getRank() < 1 || type.getShape().back() % 2)
    return failure();
  int64_t half = type.getShape().back() / 2;
  for (int side = 0; side < 2; ++side) {
    auto direct = add->getOperand(side).getDefiningOp<MulOp>();
    auto rotated = add->getOperand(1 - side).getDefiningOp<MulOp>();
    if (!direct || !rotated || !direct->hasOneUse() || !rotated->hasOneUse())
      continue;
    for (int r = 0; r < 2; ++r) {
      auto concat = rotated->getOperand(r).getDefiningOp<ConcatOp>();
      Value sin = rotated->getOperand(1 - r);
      if (!concat || !concat->hasOneUse() || concat.getInputs().size() != 2 ||
          int64_t(concat.getAxis()) != type.getRank() - 1)
        continue;
      auto neg = concat.getInputs()[0].getDefiningOp<NegOp>();
      Value x;
      if (!neg || !neg->hasOneUse() || !isHalfSlice(neg.getInput(), x, half, half) ||
          !isHalfSlice(concat.getInputs()[1], x, 0, half) || rtt(x) != type)
        continue;
      Value cos;
      if (direct.getLhs() == x)
        cos = direct.getRhs();
      else if (direct.getRhs() == x)
        cos = direct.getLhs();
      else
        continue;
      auto broadcasts = [&](Value t) {
        auto tt = rtt(t);
        if (tt.getElementType() != type.getElementType() || tt.getRank() > type.getRank())
          return false;
        for (int64_t d = 0; d < tt.getRank(); ++d) {
          int64_t dim = tt.getDimSize(tt.getRank() - 1 - d);
          if (dim != 1 && dim != type.getDimSize(type.getRank() - 1 - d))
            return false;
        }
        return true;
      };
      if (!broadcasts(cos) || !broadcasts(sin))
        continue;
      Operation *sliceHi = neg.getInput().getDefiningOp(),
                *sliceLo = concat.getInputs()[1].getDefiningOp();
      rewriter.setInsertionPoint(add);
      auto rotary = RotaryOp::create(rewriter, add.getLoc(), type, x, cos, sin);
      rewriter.replaceAllUsesWith(add.getResult(), rotary.getResult());
      rewriter.eraseOp(add);
      for (Operation *op : {(Operation *)rotated, (Operation *)direct, (Operation *)concat,
                            (Operation *)neg, sliceHi, sliceLo})
        if (op->use_empty())
          rewriter.eraseOp(op);
      return success();
    }
  }
  return failure();
}

/// One matched attention, before rewriting.
struct Match {
  Value q, kt, v, mask, maskCond, maskFill; // maskCond/Fill: a Where(bool, s, fill) mask
  bool fillOnTrue = false;                  // Where(bool, fill, s)
  double scale = 1.0;
  bool zeroMaskedRows = false;
  Operation *last = nullptr; // the op whose result kiln.attention replaces
  bool bshd = false;
  /// Locations of the matched ops: the softmax first (diagnostics about the attention name its
  /// node, as before), then in program order the Q·Kᵀ matmul, scale and mask ops, the P·V matmul
  /// and the output transpose. kiln.attention carries all of them (a FusedLoc), so its kernel
  /// lists every ONNX node it replaces.
  SmallVector<Location> locs;
};

/// Matches the attention around `sm`; on a near miss returns the reason.
FailureOr<Match> matchAttention(SoftmaxOp sm, std::string &reason) {
  Match m;
  auto st = rtt(sm.getResult());
  if (st.getRank() != 4 || sm.getAxis() != 3) {
    reason = "softmax is not over the last axis of a rank-4 score tensor";
    return failure();
  }
  if (!st.hasStaticShape()) {
    reason = "dynamic shapes (kiln compiles static --shape values)";
    return failure();
  }
  // Walk from the softmax up to the scores matmul.
  Value cur = sm.getInput();
  bool sawMask = false, scaledAfterMask = false;
  MatMulOp scores;
  SmallVector<Location> chainLocs; // softmax back to the scores matmul
  while (true) {
    Operation *def = cur.getDefiningOp();
    if (!def) {
      reason = "the scores are not computed by a matmul";
      return failure();
    }
    chainLocs.push_back(def->getLoc());
    if (!cur.hasOneUse()) {
      reason = "an intermediate score tensor has other users";
      return failure();
    }
    if ((scores = dyn_cast<MatMulOp>(def)))
      break;
    if (Value x = peelScale(cur, m.scale)) {
      // Walking up: a scale seen before the mask is applied after it in
      // program order (softmax((s + mask) * c) scales the mask too).
      scaledAfterMask |= !sawMask;
      cur = x;
      continue;
    }
    if (auto add = dyn_cast<AddOp>(def)) {
      if (scaledAfterMask) {
        reason = "the scores are scaled after the mask is applied";
        return failure();
      }
      if (sawMask) {
        reason = "more than one mask is added to the scores";
        return failure();
      }
      // The side that leads to the matmul is the score path: try lhs first.
      Value a = add.getLhs(), b = add.getRhs();
      auto onPath = [&](Value x) {
        for (int depth = 0; depth < 4 && x; ++depth) {
          Operation *d = x.getDefiningOp();
          if (!d)
            return false;
          if (isa<MatMulOp>(d))
            return true;
          double ignored = 1.0;
          x = peelScale(x, ignored);
        }
        return false;
      };
      if (onPath(a) && rtt(a) == st) {
        m.mask = b;
        cur = a;
      } else if (onPath(b) && rtt(b) == st) {
        m.mask = a;
        cur = b;
      } else {
        reason = "an add on the scores whose operands are not scores + mask";
        return failure();
      }
      sawMask = true;
      continue;
    }
    if (auto w = dyn_cast<WhereOp>(def)) {
      if (scaledAfterMask) {
        reason = "the scores are scaled after the mask is applied";
        return failure();
      }
      if (sawMask) {
        reason = "more than one mask is applied to the scores";
        return failure();
      }
      Value t = w.getTrueValue(), f = w.getFalseValue();
      std::optional<double> fill;
      if (rtt(t) == st && (fill = getScalarFloatConstant(f))) {
        cur = t;
      } else if (rtt(f) == st && (fill = getScalarFloatConstant(t))) {
        cur = f;
        m.fillOnTrue = true;
      } else {
        reason = "a where on the scores that does not select between scores and a constant";
        return failure();
      }
      if (rtt(m.fillOnTrue ? t : f).getRank() > 4) {
        reason = "a where on the scores with a fill of rank above 4";
        return failure();
      }
      if (!(*fill <= -1e30)) {
        // A finite fill replaces the score: Where(c, s, -1e4) differs from s - 1e4.
        reason = "a where on the scores with a fill above -1e30";
        return failure();
      }
      m.maskCond = w.getCondition();
      m.maskFill = m.fillOnTrue ? t : f;
      sawMask = true;
      continue;
    }
    reason = ("an unsupported op (" + def->getName().getStringRef() + ") between the scores " +
              "matmul and the softmax")
                 .str();
    return failure();
  }
  auto qt = rtt(scores.getLhs()), ktt = rtt(scores.getRhs());
  if (qt.getRank() != 4 || ktt.getRank() != 4 || qt.getShape().take_front(2) != st.getShape().take_front(2) ||
      ktt.getShape().take_front(2) != st.getShape().take_front(2)) {
    reason = "the scores matmul is not [B, H, Sq, D] x [B, H, D, Sk] without broadcasting";
    return failure();
  }
  m.q = peelScales(scores.getLhs(), m.scale);
  m.kt = peelScales(scores.getRhs(), m.scale);
  if (!std::isfinite(m.scale) || m.scale == 0.0) {
    reason = "the score scale is zero or not finite";
    return failure();
  }

  // After the softmax: optional Where(IsNaN(p), 0, p), then MatMul(p, V).
  Value p = sm.getResult();
  Operation *pUser = nullptr;
  for (Operation *u : p.getUsers()) {
    if (auto isNan = dyn_cast<IsNaNOp>(u)) {
      if (!isNan->hasOneUse()) {
        reason = "IsNaN of the probabilities has several users";
        return failure();
      }
      auto w = dyn_cast<WhereOp>(*isNan->getUsers().begin());
      std::optional<double> zero;
      if (!w || w.getCondition() != isNan.getResult() || w.getFalseValue() != p ||
          !(zero = getScalarFloatConstant(w.getTrueValue())) || *zero != 0.0 ||
          rtt(w.getResult()) != st) {
        reason = "IsNaN of the probabilities is not Where(IsNaN(p), 0, p)";
        return failure();
      }
      m.zeroMaskedRows = true;
    }
  }
  if (m.zeroMaskedRows) {
    // p is read by IsNaN and its Where only; continue from that Where.
    Value guarded;
    for (Operation *u : p.getUsers())
      if (auto isNan = dyn_cast<IsNaNOp>(u))
        guarded = (*isNan->getUsers().begin())->getResult(0);
    for (Operation *u : p.getUsers())
      if (!isa<IsNaNOp>(u) && u != guarded.getDefiningOp()) {
        reason = "the probabilities have other users";
        return failure();
      }
    p = guarded;
  }
  if (!p.hasOneUse()) {
    reason = "the probabilities have other users than one matmul";
    return failure();
  }
  pUser = *p.getUsers().begin();
  auto pv = dyn_cast<MatMulOp>(pUser);
  if (!pv || pv.getLhs() != p) {
    reason = "the probabilities are not multiplied by V";
    return failure();
  }
  auto vt = rtt(pv.getRhs());
  if (vt.getRank() != 4 || vt.getShape().take_front(3) !=
                               ArrayRef<int64_t>{st.getDimSize(0), st.getDimSize(1), st.getDimSize(3)}) {
    reason = "V is not [B, H, Sk, Dv]";
    return failure();
  }
  // Head dims the attention kernels take (cuda/attention.cuh).
  if (rtt(scores.getLhs()).getDimSize(3) > kMaxAttentionHeadDim ||
      vt.getDimSize(3) > kMaxAttentionHeadDim) {
    reason = "head dim above " + std::to_string(kMaxAttentionHeadDim) +
             " (the attention kernels' limit)";
    return failure();
  }
  if (!rtt(scores.getLhs()).hasStaticShape() || !rtt(scores.getRhs()).hasStaticShape() ||
      !vt.hasStaticShape()) {
    reason = "dynamic shapes (kiln compiles static --shape values)";
    return failure();
  }
  m.v = pv.getRhs();
  m.last = pv;
  if (pv->hasOneUse())
    if (auto t = dyn_cast<TransposeOp>(*pv->getUsers().begin()))
      if (t.getPerm() == ArrayRef<int64_t>{0, 2, 1, 3}) {
        m.last = t;
        m.bshd = true;
      }
  m.locs.push_back(sm.getLoc());
  m.locs.append(chainLocs.rbegin(), chainLocs.rend());
  m.locs.push_back(pv.getLoc());
  if (m.last != pv)
    m.locs.push_back(m.last->getLoc());
  Type et = st.getElementType();
  if (rtt(m.q).getElementType() != et || rtt(m.v).getElementType() != et ||
      (m.mask && rtt(m.mask).getElementType() != et)) {
    reason = "mixed element types";
    return failure();
  }
  // The mask must broadcast to [B, H, Sq, Sk].
  Value maskShapeOf = m.mask ? m.mask : m.maskCond;
  if (maskShapeOf) {
    auto mt = rtt(maskShapeOf);
    if (mt.getRank() > 4) {
      reason = "the mask has rank above 4";
      return failure();
    }
    for (int64_t d = 0; d < mt.getRank(); ++d) {
      int64_t dim = mt.getDimSize(mt.getRank() - 1 - d), want = st.getDimSize(3 - d);
      if (dim != 1 && dim != want) {
        reason = "the mask does not broadcast to the scores";
        return failure();
      }
    }
  }
  return m;
}

/// Erases `roots` and, transitively, producers left without users.
void eraseDead(RewriterBase &rewriter, ArrayRef<Operation *> roots) {
  SmallVector<Operation *> worklist(roots.begin(), roots.end());
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !op->use_empty() || !isPure(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    rewriter.eraseOp(op);
  }
}

/// Where rewrite() keeps whether a large mask is causal (see there).
constexpr llvm::StringLiteral kCausalCheckAttr = "kiln.causal_check";

/// True when the additive `mask` of an attention with scores [.., Sq, Sk] is exactly the causal
/// mask aligned bottom-right (isCausalConstant, or isCausalExpression for a mask too large to
/// fold). The layers of a model share one mask: a large mask's answer is kept on its defining op
/// (kCausalCheckAttr: {Sq, Sk, causal}; removed at the end of the pass), which an erased op
/// takes with it.
bool isCausalMask(OpBuilder &b, Value mask, int64_t Sq, int64_t Sk) {
  if (isCausalConstant(mask, Sq, Sk))
    return true;
  Operation *def = mask.getDefiningOp();
  if (!def || isa<ConstantOp>(def))
    return false;
  if (auto known = def->getAttrOfType<DenseI64ArrayAttr>(kCausalCheckAttr);
      known && known.size() == 3 && known[0] == Sq && known[1] == Sk)
    return known[2] != 0;
  bool result = isCausalExpression(mask, Sq, Sk);
  def->setAttr(kCausalCheckAttr, b.getDenseI64ArrayAttr({Sq, Sk, int64_t(result)}));
  return result;
}

/// Replaces the matched chain by one kiln.attention.
void rewrite(RewriterBase &rewriter, SoftmaxOp sm, Match &m) {
  rewriter.setInsertionPoint(m.last);
  Location loc = FusedLoc::get(sm.getContext(), m.locs);
  auto st = rtt(sm.getResult());
  int64_t Sq = st.getDimSize(2), Sk = st.getDimSize(3);
  Value kFull = keyFromTransposed(rewriter, m.kt);
  Value k = peelHeadRepeat(kFull), v = peelHeadRepeat(m.v), q = m.q;
  if (rtt(k).getDimSize(1) != rtt(v).getDimSize(1)) { // only one of them repeats heads
    k = kFull;
    v = m.v;
  }
  Value mask = m.mask;
  if (m.maskCond) {
    // Where(c, s, fill) == s + Where(c, 0, fill) for fill <= -1e30 (both give
    // probability 0 unless a row is fully masked, where both are uniform or NaN).
    // The mask has the broadcast shape of the condition and the (one-element) fill.
    auto condType = rtt(m.maskCond);
    SmallVector<int64_t> shape(std::max<int64_t>(0, rtt(m.maskFill).getRank() - condType.getRank()),
                               1);
    shape.append(condType.getShape().begin(), condType.getShape().end());
    auto maskType = RankedTensorType::get(shape, st.getElementType());
    Value zero = ConstantOp::create(
        rewriter, loc, RankedTensorType::get({}, st.getElementType()),
        DenseElementsAttr::get(RankedTensorType::get({}, st.getElementType()),
                               rewriter.getFloatAttr(st.getElementType(), 0.0).getValue()));
    mask = m.fillOnTrue ? WhereOp::create(rewriter, loc, maskType, m.maskCond, m.maskFill, zero)
                        : WhereOp::create(rewriter, loc, maskType, m.maskCond, zero, m.maskFill);
  }
  bool causal = false;
  if (mask && isCausalMask(rewriter, mask, Sq, Sk)) {
    causal = true;
    mask = nullptr;
  } else if (mask && isZeroConstant(mask)) {
    mask = nullptr;
  }
  auto resultType = rtt(m.last->getResult(0));
  auto attention = AttentionOp::create(
      rewriter, loc, resultType, q, k, v, mask, rewriter.getF64FloatAttr(m.scale),
      rewriter.getBoolAttr(causal), rewriter.getBoolAttr(m.zeroMaskedRows),
      rewriter.getBoolAttr(m.bshd));
  Operation *last = m.last;
  rewriter.replaceAllUsesWith(last->getResult(0), attention.getResult());
  eraseDead(rewriter, {last});
}

//===----------------------------------------------------------------------===//
// Narrowing the mask
//===----------------------------------------------------------------------===//

/// True for the elementwise ops a mask is computed with (operands broadcast to the result).
bool isElementwiseMaskOp(Operation *op) {
  return isa<CastOp, WhereOp, AndOp, OrOp, NotOp, AddOp, SubOp, MulOp, DivOp, NegOp, EqualOp,
             LessOp, LessEqualOp, GreaterOp, GreaterEqualOp, MaxOp, MinOp>(op);
}

/// True when `v` is a splat constant.
bool isSplatConstant(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
  return dense && dense.isSplat();
}

/// Marks in `varies` (the mask's rank, right-aligned) the dims along which `v` can take
/// different values: none for a splat constant; for an elementwise op, those of its operands;
/// for anything else, every dim where `v` is longer than 1.
void markVarying(Value v, SmallVectorImpl<bool> &varies, int depth = 0) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t offset = int64_t(varies.size()) - type.getRank();
  if (isSplatConstant(v))
    return;
  Operation *def = v.getDefiningOp();
  if (def && depth < 16 && isElementwiseMaskOp(def)) {
    for (Value operand : def->getOperands())
      markVarying(operand, varies, depth + 1);
    return;
  }
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) != 1)
      varies[offset + d] = true;
}

/// `v` recomputed with the dims in `narrow` (the mask's rank, right-aligned) of size 1: splat
/// constants become all-ones-shaped splats, elementwise ops are created again on narrowed
/// operands, other values are used as they are (markVarying ensures they are 1 there).
Value rebuildNarrow(OpBuilder &b, Value v, ArrayRef<bool> narrow) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t offset = int64_t(narrow.size()) - type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  bool changed = false;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (narrow[offset + d] && shape[d] != 1) {
      shape[d] = 1;
      changed = true;
    }
  if (!changed)
    return v;
  auto newType = RankedTensorType::get(shape, type.getElementType());
  if (isSplatConstant(v)) {
    auto dense = cast<DenseElementsAttr>(v.getDefiningOp<ConstantOp>().getValue());
    return ConstantOp::create(b, v.getLoc(), newType, dense.resizeSplat(newType));
  }
  Operation *def = v.getDefiningOp();
  SmallVector<Value> operands;
  for (Value operand : def->getOperands())
    operands.push_back(rebuildNarrow(b, operand, narrow));
  // And with a splat true (the [1, 1, S, 1] of the dynamo mask, now [1, 1, 1, 1]) is the other
  // operand when that already has the narrowed shape.
  if (isa<AndOp>(def))
    for (int i = 0; i < 2; ++i)
      if (isSplatConstant(operands[i]) && operands[1 - i].getType() == newType &&
          cast<DenseElementsAttr>(operands[i].getDefiningOp<ConstantOp>().getValue())
              .getSplatValue<bool>())
        return operands[1 - i];
  OperationState state(def->getLoc(), def->getName(), operands, TypeRange{newType},
                       def->getAttrs());
  return b.create(state)->getResult(0);
}

/// An attention mask that is the same along some of its dims of size > 1 (BERT's padding mask
/// from dynamo: Where(And(true [1, 1, S, 1], keep [B, 1, 1, S]), 0, min), [B, 1, S, S], the same
/// for every query) is recomputed without them ([B, 1, 1, S]); kiln.attention broadcasts it.
/// The [B, 1, S, S] mask was stored by a kernel of its own and read per score; at BERT-base
/// 8x512 that made attention 64 us per layer against 35 us without a mask (H200).
void narrowMask(AttentionOp attention) {
  Value mask = attention.getMask();
  if (!mask)
    return;
  auto type = cast<RankedTensorType>(mask.getType());
  SmallVector<bool> varies(type.getRank(), false);
  markVarying(mask, varies);
  SmallVector<bool> narrow(type.getRank(), false);
  bool any = false;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) != 1 && !varies[d])
      narrow[d] = any = true;
  if (!any)
    return;
  OpBuilder b(attention);
  Value narrowed = rebuildNarrow(b, mask, narrow);
  attention.getMaskMutable().assign(narrowed);
  // The full-size chain, now unused, goes: left in place it would give its producers (the
  // gather of the padding mask) a second reader, and fusion a kernel more.
  if (Operation *def = mask.getDefiningOp(); def && mask.use_empty()) {
    IRRewriter rewriter(attention->getContext());
    eraseDead(rewriter, {def});
  }
  LLVM_DEBUG(llvm::dbgs() << "narrowed the mask of " << attention << "\n");
}

/// An attention made before this pass (an ONNX Attention, onnxruntime's GroupQueryAttention)
/// whose mask is the bottom-right causal mask or all zeros, as a generation step's
/// attention_mask of ones makes it: the mask goes, the causal one becoming `causal` (a causal
/// mask on a causal attention changes nothing: both hide the same keys).
void foldMaskIntoCausal(IRRewriter &rewriter, AttentionOp attention) {
  Value mask = attention.getMask();
  if (!mask)
    return;
  auto st = rtt(attention.getQuery());
  int64_t Sq = st.getDimSize(2), Sk = rtt(attention.getKey()).getDimSize(2);
  bool causal = isCausalMask(rewriter, mask, Sq, Sk);
  if (!causal && !isZeroConstant(mask))
    return;
  rewriter.modifyOpInPlace(attention, [&] {
    attention.getMaskMutable().clear();
    if (causal)
      attention.setCausal(true);
  });
  if (Operation *def = mask.getDefiningOp(); def && def->use_empty())
    eraseDead(rewriter, {def});
}

/// An attention made before this pass whose only reader is the head transpose [0, 2, 1, 3]
/// (ONNX Attention's [B, H, S, D] output turned back into [B, S, H, D]) writes that layout
/// itself (`bshd_output`), as a raised attention does: one kernel less per layer. Returns the
/// attention that remains.
AttentionOp absorbHeadTranspose(IRRewriter &rewriter, AttentionOp attention) {
  if (attention.getBshdOutput() || !attention->hasOneUse())
    return attention;
  auto t = dyn_cast<TransposeOp>(*attention->getUsers().begin());
  if (!t || t.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
    return attention;
  rewriter.setInsertionPoint(t);
  auto merged = AttentionOp::create(
      rewriter, FusedLoc::get(t.getContext(), {attention.getLoc(), t.getLoc()}),
      t.getResult().getType(), attention.getQuery(), attention.getKey(), attention.getValue(),
      attention.getMask(), attention.getScaleAttr(), attention.getCausalAttr(),
      attention.getZeroMaskedRowsAttr(), rewriter.getBoolAttr(true));
  rewriter.replaceOp(t, merged.getResult());
  rewriter.eraseOp(attention);
  return merged;
}

struct RaiseAttentionPass : public kiln::impl::RaiseAttentionBase<RaiseAttentionPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Rotary embeddings first: attention then finds them on Q and K.
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds)
      (void)raiseRotary(rewriter, add);
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp sm) { softmaxes.push_back(sm); });
    for (SoftmaxOp sm : softmaxes) {
      std::string reason;
      FailureOr<Match> m = matchAttention(sm, reason);
      if (failed(m)) {
        // Report near misses only: a softmax fed by a matmul or read by one.
        bool looksLikeAttention =
            llvm::any_of(sm->getUsers(), [](Operation *u) { return isa<MatMulOp, IsNaNOp>(u); });
        if (looksLikeAttention)
          sm->setAttr("kiln.unfused", rewriter.getStringAttr("attention: " + reason));
        continue;
      }
      rewrite(rewriter, sm, *m);
    }
    SmallVector<AttentionOp> attentions;
    getOperation().walk([&](AttentionOp a) { attentions.push_back(a); });
    for (AttentionOp a : attentions) {
      foldMaskIntoCausal(rewriter, a);
      a = absorbHeadTranspose(rewriter, a);
      narrowMask(a);
    }
    getOperation().walk([](Operation *op) { op->removeAttr(kCausalCheckAttr); });
  }
};
} // namespace
