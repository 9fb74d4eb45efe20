//===- InterleaveGlu.cpp - gated linear units as one GEMM epilogue --------===//
//
// After kiln-fuse-sibling-gemms, a gated MLP (SwiGLU: silu(x Wg) * (x Wu);
// GeGLU with gelu) is one GEMM Y = x [Wg | Wu] followed by the slices
// Y[..., :N] and Y[..., N:] and elementwise ops that combine them. This pass
// interleaves the weight columns ([Wg | Wu] -> columns g0 u0 g1 u1 ...; a
// concatenated bias likewise) and turns the slices into step-2 slices, so
// that the gate and up value of one output element are adjacent columns:
// the tensor-core GEMM then applies the whole unit in its epilogue on the
// column pairs each thread holds (kiln::PairEpilogue), and the [.., 2N]
// intermediate is never stored. Only exact matches are rewritten: a constant
// rank-2 weight, at most a constant bias add between GEMM and slices, and
// elementwise ops from the gate slice that end in one Mul with the up slice.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/kiln/ConstantCache.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_INTERLEAVEGLU
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

RankedTensorType rtt(Value v) { return cast<RankedTensorType>(v.getType()); }

/// The last-dim slice [start, start + len) of `v` with unit steps and full
/// other dims, or null.
SliceOp lastDimSlice(Operation *user, Value v, int64_t start, int64_t len) {
  auto s = dyn_cast<SliceOp>(user);
  if (!s || s.getInput() != v)
    return nullptr;
  auto in = rtt(v), out = rtt(s.getResult());
  int64_t rank = in.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    bool last = d == rank - 1;
    if (s.getSteps()[d] != 1 || s.getStarts()[d] != (last ? start : 0) ||
        out.getDimSize(d) != (last ? len : in.getDimSize(d)))
      return nullptr;
  }
  return s;
}

/// True when `gate` flows only through elementwise ops (other operands scalar
/// constants or values of the chain) into one Mul whose other operand is
/// `up`: out = Mul(f(gate), up).
bool isGatedUnit(Value gate, Value up) {
  if (!up.hasOneUse())
    return false;
  auto mul = dyn_cast<MulOp>(*up.getUsers().begin());
  if (!mul)
    return false;
  Value other = mul.getLhs() == up ? mul.getRhs() : mul.getLhs();
  if (rtt(other) != rtt(up) || rtt(gate) != rtt(up))
    return false;
  // 1. Every value computed from `gate` by same-shape elementwise ops, found
  //    in any use-list order (an op reading two chain values, like g * sigmoid(g),
  //    may be reached through either operand first).
  llvm::SetVector<Value> chain;
  chain.insert(gate);
  for (size_t i = 0; i < chain.size(); ++i)
    for (Operation *u : chain[i].getUsers()) {
      if (u == mul.getOperation())
        continue;
      if (!isElementwise(u) || u->getNumResults() != 1 || rtt(u->getResult(0)) != rtt(gate))
        return false;
      chain.insert(u->getResult(0));
    }
  // 2. Their other operands are scalar constants or values of the chain.
  for (Value v : chain.getArrayRef().drop_front())
    for (Value operand : v.getDefiningOp()->getOperands()) {
      DenseElementsAttr c;
      bool scalar = matchPattern(operand, m_Constant(&c)) && c.getNumElements() == 1;
      if (!scalar && !chain.contains(operand))
        return false;
    }
  return chain.contains(other);
}

/// Interleaves the last dim of `attr` ([..., 2N]): out[..., 2c] = in[..., first + c],
/// out[..., 2c + 1] = in[..., second + c].
DenseElementsAttr interleaveColumns(DenseElementsAttr attr, int64_t first, int64_t second) {
  auto type = cast<RankedTensorType>(attr.getType());
  int64_t cols = type.getShape().back(), n = cols / 2, rows = type.getNumElements() / cols;
  size_t bytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  ArrayRef<char> raw = attr.getRawData();
  // Built in this thread's scratch buffer (no zeroing, no fresh pages per weight).
  llvm::MutableArrayRef<char> out = kiln::scratchBytes(size_t(type.getNumElements()) * bytes);
  // Rows [r0, r1) with elements of type T (a splat reads element 0 everywhere).
  auto rowsOf = [&](auto zero, int64_t r0, int64_t r1) {
    using T = decltype(zero);
    const T *in = reinterpret_cast<const T *>(raw.data());
    T *o = reinterpret_cast<T *>(out.data());
    for (int64_t r = r0; r < r1; ++r) {
      const T *a = attr.isSplat() ? in : in + r * cols + first;
      const T *b = attr.isSplat() ? in : in + r * cols + second;
      T *row = o + r * cols;
      const int64_t step = attr.isSplat() ? 0 : 1;
      for (int64_t c = 0; c < n; ++c) {
        row[2 * c] = a[c * step];
        row[2 * c + 1] = b[c * step];
      }
    }
  };
  auto copyRows = [&](int64_t r0, int64_t r1) {
    switch (bytes) {
    case 1:
      return rowsOf(uint8_t(), r0, r1);
    case 2:
      return rowsOf(uint16_t(), r0, r1);
    case 4:
      return rowsOf(uint32_t(), r0, r1);
    default:
      return rowsOf(uint64_t(), r0, r1);
    }
  };
  // A large weight in blocks of rows on the context's threads (a decode model's gate/up
  // weights are tens of MB each).
  constexpr int64_t kRowsPerBlock = 64;
  int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  mlir::parallelFor(attr.getContext(), 0, blocks, [&](size_t i) {
    copyRows(int64_t(i) * kRowsPerBlock, std::min(rows, int64_t(i + 1) * kRowsPerBlock));
  });
  return DenseElementsAttr::getFromRawBuffer(type, out);
}

/// interleaveColumns, once per weight for all programs of a --shape range (ConstantCache).
DenseElementsAttr interleave(DenseElementsAttr attr, int64_t first, int64_t second) {
  Builder b(attr.getContext());
  return cast<DenseElementsAttr>(ConstantCache::get(attr.getContext())
                                     .getOrCompute("interleave-glu",
                                                   {attr, b.getI64IntegerAttr(first),
                                                    b.getI64IntegerAttr(second)},
                                                   [&]() -> Attribute {
                                                     return interleaveColumns(attr, first, second);
                                                   }));
}

/// Rewrites one GEMM feeding a gated unit; returns success when it did.
LogicalResult interleaveGlu(RewriterBase &rewriter, MatMulOp mm) {
  DenseElementsAttr weight;
  auto wType = rtt(mm.getRhs());
  if (wType.getRank() != 2 || !matchPattern(mm.getRhs(), m_Constant(&weight)) ||
      !mm.getRhs().hasOneUse() || wType.getDimSize(1) % 16)
    return failure();
  int64_t n = wType.getDimSize(1) / 2;
  // Optional bias add between the GEMM and the slices.
  Value y = mm.getResult();
  AddOp biasAdd;
  DenseElementsAttr bias;
  Value biasValue;
  if (auto add = y.hasOneUse() ? dyn_cast<AddOp>(*y.getUsers().begin()) : AddOp()) {
    biasValue = add.getLhs() == y ? add.getRhs() : add.getLhs();
    if (!matchPattern(biasValue, m_Constant(&bias)) || rtt(biasValue).getRank() != 1 ||
        rtt(add.getResult()) != rtt(y) || !biasValue.hasOneUse())
      return failure();
    biasAdd = add;
    y = add.getResult();
  }
  SmallVector<Operation *> users(y.getUsers().begin(), y.getUsers().end());
  if (users.size() != 2)
    return failure();
  for (int order = 0; order < 2; ++order) {
    SliceOp lo = lastDimSlice(users[order], y, 0, n), hi = lastDimSlice(users[1 - order], y, n, n);
    if (!lo || !hi)
      continue;
    SliceOp gate, up;
    if (isGatedUnit(lo.getResult(), hi.getResult()))
      gate = lo, up = hi;
    else if (isGatedUnit(hi.getResult(), lo.getResult()))
      gate = hi, up = lo;
    else
      return failure();
    int64_t gateStart = gate == lo ? 0 : n, upStart = gate == lo ? n : 0;
    rewriter.setInsertionPoint(mm);
    Value w = ConstantOp::create(rewriter, mm.getLoc(), wType,
                                 interleave(weight, gateStart, upStart));
    Operation *oldWeight = mm.getRhs().getDefiningOp();
    rewriter.modifyOpInPlace(mm, [&] { mm->setOperand(1, w); });
    if (oldWeight->use_empty())
      rewriter.eraseOp(oldWeight);
    if (biasAdd && rtt(biasValue).getDimSize(0) != 1) {
      // A one-element bias is the same for every column: nothing to reorder.
      Value b = ConstantOp::create(rewriter, biasAdd.getLoc(), rtt(biasValue),
                                   interleave(bias, gateStart, upStart));
      Operation *oldBias = biasValue.getDefiningOp();
      rewriter.modifyOpInPlace(biasAdd, [&] {
        biasAdd->setOperand(biasAdd.getLhs() == biasValue ? 0 : 1, b);
      });
      if (oldBias->use_empty())
        rewriter.eraseOp(oldBias);
    }
    int64_t rank = rtt(y).getRank();
    for (auto [slice, start] : {std::make_pair(gate, int64_t(0)), std::make_pair(up, int64_t(1))}) {
      SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
      starts.back() = start;
      steps.back() = 2;
      rewriter.setInsertionPoint(slice);
      auto s = SliceOp::create(rewriter, slice.getLoc(), slice.getType(), y,
                               rewriter.getDenseI64ArrayAttr(starts),
                               rewriter.getDenseI64ArrayAttr(steps));
      rewriter.replaceOp(slice, s.getResult());
    }
    return success();
  }
  return failure();
}

struct InterleaveGluPass : public kiln::impl::InterleaveGluBase<InterleaveGluPass> {
  void runOnOperation() override {
    SmallVector<MatMulOp> gemms;
    getOperation().walk([&](MatMulOp mm) { gemms.push_back(mm); });
    IRRewriter rewriter(&getContext());
    for (MatMulOp mm : gemms)
      (void)interleaveGlu(rewriter, mm);
  }
};
} // namespace
