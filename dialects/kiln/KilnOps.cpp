//===- KilnOps.cpp - kiln op verifiers and builders -----------------------===//
//
// Verifiers for the kiln ops (shape rules of the corresponding ONNX operators
// after static shape specialization) and the `kiln.kernel` builder.
// Folders live in KilnFolders.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnOps.h"

#include <cmath>

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> kiln::broadcastShapes(ArrayRef<int64_t> a,
                                                      ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t kiln::getElementByteSize(Type type) {
  if (type.isInteger(1))
    return 1;
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

bool kiln::isElementwise(Operation *op) {
  return op->hasTrait<KilnFusible>() && !isa<ReshapeOp, TransposeOp, SliceOp, ConcatOp, ExpandOp,
                                             GatherOp, GatherElementsOp, GatherNDOp, RotaryOp>(op);
}

std::string kiln::formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::interleave(
      shape, [&](int64_t d) { s += std::to_string(d); }, [&] { s += ", "; });
  return s + "]";
}

static RankedTensorType rtt(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Normalizes `axis` into [0, rank) or returns failure.
static LogicalResult checkAxis(Operation *op, int64_t axis, int64_t rank,
                               StringRef what = "axis") {
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << what << " " << axis << " is out of range for rank "
                             << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError() << "value type " << getValue().getType()
                         << " does not match result type " << getType();
  return success();
}

LogicalResult ShapeOp::verify() {
  int64_t rank = rtt(getInput()).getRank();
  int64_t start = getStart(), end = getEnd();
  if (start < 0 || end > rank || start > end)
    return emitOpError() << "dims [" << start << ", " << end
                         << ") are not a range of the operand rank " << rank;
  if (getType().getRank() != 1 || getType().getDimSize(0) != end - start)
    return emitOpError() << "result must be tensor<" << (end - start) << "xi64>";
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()})
    if (rtt(v).getRank() != 0 || rtt(v).getElementType() != getType().getElementType())
      return emitOpError() << "operands must be 0-d tensors of the result element type";
  if (getType().getRank() != 1)
    return emitOpError() << "result must be 1-D";
  return success();
}

//===----------------------------------------------------------------------===//
// Pointwise
//===----------------------------------------------------------------------===//

int AddOp::getResultKind() { return 0; }
int SubOp::getResultKind() { return 0; }
int MulOp::getResultKind() { return 0; }
int DivOp::getResultKind() { return 0; }
int PowOp::getResultKind() { return 0; }
int MaxOp::getResultKind() { return 0; }
int MinOp::getResultKind() { return 0; }
int ModOp::getResultKind() { return 0; }
int FModOp::getResultKind() { return 0; }
int EqualOp::getResultKind() { return 1; }
int LessOp::getResultKind() { return 1; }
int LessEqualOp::getResultKind() { return 1; }
int GreaterOp::getResultKind() { return 1; }
int GreaterEqualOp::getResultKind() { return 1; }
int AndOp::getResultKind() { return 2; }
int OrOp::getResultKind() { return 2; }

/// Shared verifier of the binary pointwise ops.
static LogicalResult verifyBinary(Operation *op, int kind) {
  auto lhs = rtt(op->getOperand(0)), rhs = rtt(op->getOperand(1));
  auto res = cast<RankedTensorType>(op->getResult(0).getType());
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op->emitOpError() << "operand shapes " << formatShape(lhs.getShape())
                             << " and " << formatShape(rhs.getShape())
                             << " are not broadcast-compatible";
  if (ArrayRef<int64_t>(*shape) != res.getShape())
    return op->emitOpError() << "result shape " << formatShape(res.getShape())
                             << " is not the broadcast shape " << formatShape(*shape);
  if (lhs.getElementType() != rhs.getElementType())
    return op->emitOpError() << "operand element types " << lhs.getElementType()
                             << " and " << rhs.getElementType() << " differ";
  Type elem = lhs.getElementType();
  if (kind == 0 && res.getElementType() != elem)
    return op->emitOpError() << "result element type " << res.getElementType()
                             << " differs from operand element type " << elem;
  if (kind != 0 && !res.getElementType().isInteger(1))
    return op->emitOpError() << "result element type must be i1";
  if (kind == 2 && !elem.isInteger(1))
    return op->emitOpError() << "operands must be i1";
  return success();
}

#define KILN_BINARY_VERIFIER(Op)                                               \
  LogicalResult Op::verify() { return verifyBinary(*this, getResultKind()); }
KILN_BINARY_VERIFIER(AddOp)
KILN_BINARY_VERIFIER(SubOp)
KILN_BINARY_VERIFIER(MulOp)
KILN_BINARY_VERIFIER(DivOp)
KILN_BINARY_VERIFIER(PowOp)
KILN_BINARY_VERIFIER(MaxOp)
KILN_BINARY_VERIFIER(MinOp)
KILN_BINARY_VERIFIER(ModOp)
KILN_BINARY_VERIFIER(FModOp)
KILN_BINARY_VERIFIER(EqualOp)
KILN_BINARY_VERIFIER(LessOp)
KILN_BINARY_VERIFIER(LessEqualOp)
KILN_BINARY_VERIFIER(GreaterOp)
KILN_BINARY_VERIFIER(GreaterEqualOp)
KILN_BINARY_VERIFIER(AndOp)
KILN_BINARY_VERIFIER(OrOp)
#undef KILN_BINARY_VERIFIER

LogicalResult WhereOp::verify() {
  auto c = rtt(getCondition()), x = rtt(getTrueValue()), y = rtt(getFalseValue());
  auto s1 = broadcastShapes(c.getShape(), x.getShape());
  FailureOr<SmallVector<int64_t>> s2 = failure();
  if (succeeded(s1))
    s2 = broadcastShapes(*s1, y.getShape());
  if (failed(s2))
    return emitOpError() << "operand shapes " << formatShape(c.getShape()) << ", "
                         << formatShape(x.getShape()) << " and " << formatShape(y.getShape())
                         << " are not broadcast-compatible";
  if (ArrayRef<int64_t>(*s2) != getType().getShape())
    return emitOpError() << "result shape " << formatShape(getType().getShape())
                         << " is not the broadcast shape " << formatShape(*s2);
  if (x.getElementType() != y.getElementType() ||
      x.getElementType() != getType().getElementType())
    return emitOpError() << "value and result element types must match";
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = rtt(getInput());
  if (in.getNumElements() != getType().getNumElements())
    return emitOpError() << "cannot reshape " << formatShape(in.getShape()) << " ("
                         << in.getNumElements() << " elements) to "
                         << formatShape(getType().getShape()) << " ("
                         << getType().getNumElements() << " elements)";
  if (in.getElementType() != getType().getElementType())
    return emitOpError() << "element type must not change";
  return success();
}

LogicalResult TransposeOp::verify() {
  auto in = rtt(getInput());
  ArrayRef<int64_t> perm = getPerm();
  if ((int64_t)perm.size() != in.getRank())
    return emitOpError() << "perm has " << perm.size() << " entries for rank "
                         << in.getRank();
  SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= (int64_t)perm.size() || seen[p])
      return emitOpError() << "perm " << formatShape(perm) << " is not a permutation";
    seen[p] = true;
    if (getType().getDimSize(i) != in.getDimSize(p))
      return emitOpError() << "result dim " << i << " is " << getType().getDimSize(i)
                           << ", expected " << in.getDimSize(p);
  }
  return success();
}

LogicalResult SliceOp::verify() {
  auto in = rtt(getInput());
  int64_t rank = in.getRank();
  if ((int64_t)getStarts().size() != rank || (int64_t)getSteps().size() != rank)
    return emitOpError() << "starts and steps need " << rank << " entries";
  for (int64_t d = 0; d < rank; ++d) {
    int64_t start = getStarts()[d], step = getSteps()[d], n = getType().getDimSize(d);
    if (step == 0)
      return emitOpError() << "step of dim " << d << " is 0";
    if (n == 0)
      continue;
    int64_t last = start + (n - 1) * step;
    if (start < 0 || start >= in.getDimSize(d) || last < 0 || last >= in.getDimSize(d))
      return emitOpError() << "dim " << d << " reads [" << start << ", " << last
                           << "] outside [0, " << in.getDimSize(d) << ")";
  }
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one operand";
  int64_t rank = getType().getRank(), axis = getAxis();
  if (failed(checkAxis(*this, axis, rank)))
    return failure();
  int64_t total = 0;
  for (Value v : getInputs()) {
    auto t = rtt(v);
    if (t.getRank() != rank || t.getElementType() != getType().getElementType())
      return emitOpError() << "operand " << t << " does not match result " << getType();
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && t.getDimSize(d) != getType().getDimSize(d))
        return emitOpError() << "operand " << t << " differs from result in dim " << d;
    total += t.getDimSize(axis);
  }
  if (total != getType().getDimSize(axis))
    return emitOpError() << "operands sum to " << total << " along axis " << axis
                         << " but result has " << getType().getDimSize(axis);
  return success();
}

LogicalResult ExpandOp::verify() {
  auto in = rtt(getInput());
  auto shape = broadcastShapes(in.getShape(), getType().getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != getType().getShape())
    return emitOpError() << "cannot broadcast " << formatShape(in.getShape()) << " to "
                         << formatShape(getType().getShape());
  return success();
}

LogicalResult GatherOp::verify() {
  auto data = rtt(getData()), idx = rtt(getIndices());
  int64_t axis = getAxis();
  if (failed(checkAxis(*this, axis, data.getRank())))
    return failure();
  SmallVector<int64_t> expect(data.getShape().take_front(axis));
  llvm::append_range(expect, idx.getShape());
  llvm::append_range(expect, data.getShape().drop_front(axis + 1));
  if (ArrayRef<int64_t>(expect) != getType().getShape())
    return emitOpError() << "result shape " << formatShape(getType().getShape())
                         << " should be " << formatShape(expect);
  return success();
}

LogicalResult GatherElementsOp::verify() {
  auto data = rtt(getData()), idx = rtt(getIndices());
  if (failed(checkAxis(*this, getAxis(), data.getRank())))
    return failure();
  if (idx.getRank() != data.getRank() || idx.getShape() != getType().getShape())
    return emitOpError() << "indices and result must have the same shape and data's rank";
  return success();
}

LogicalResult GatherNDOp::verify() {
  auto data = rtt(getData()), idx = rtt(getIndices());
  int64_t b = getBatchDims(), q = idx.getRank(), r = data.getRank();
  if (q < 1 || b < 0 || b >= std::min(q, r))
    return emitOpError() << "batch_dims " << b << " invalid for ranks " << r << ", " << q;
  int64_t k = idx.getDimSize(q - 1);
  if (b + k > r)
    return emitOpError() << "index tuples of length " << k << " exceed data rank " << r;
  SmallVector<int64_t> expect(idx.getShape().drop_back());
  llvm::append_range(expect, data.getShape().drop_front(b + k));
  if (ArrayRef<int64_t>(expect) != getType().getShape())
    return emitOpError() << "result shape " << formatShape(getType().getShape())
                         << " should be " << formatShape(expect);
  return success();
}

LogicalResult CumSumOp::verify() {
  return checkAxis(*this, getAxis(), getType().getRank());
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  auto a = rtt(getLhs()), b = rtt(getRhs());
  if (a.getRank() < 2 || b.getRank() < 2)
    return emitOpError() << "operands must have rank >= 2";
  if (a.getElementType() != b.getElementType() ||
      a.getElementType() != getType().getElementType())
    return emitOpError() << "element types must match";
  int64_t m = a.getShape()[a.getRank() - 2], k = a.getShape().back();
  int64_t k2 = b.getShape()[b.getRank() - 2], n = b.getShape().back();
  if (k != k2)
    return emitOpError() << "contraction dims differ: lhs " << formatShape(a.getShape())
                         << ", rhs " << formatShape(b.getShape());
  auto batch = broadcastShapes(a.getShape().drop_back(2), b.getShape().drop_back(2));
  if (failed(batch))
    return emitOpError() << "batch dims are not broadcast-compatible";
  SmallVector<int64_t> expect(*batch);
  expect.push_back(m);
  expect.push_back(n);
  if (ArrayRef<int64_t>(expect) != getType().getShape())
    return emitOpError() << "result shape " << formatShape(getType().getShape())
                         << " should be " << formatShape(expect);
  return success();
}

LogicalResult CastOp::verify() {
  Type out = getType().getElementType();
  if (getSaturateFinite() && !isa<FloatType>(out))
    return emitOpError() << "'saturate_finite' needs a floating-point result, got " << out;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), getType().getRank());
}

LogicalResult LayerNormOp::verify() {
  auto in = rtt(getInput());
  if (failed(checkAxis(*this, getAxis(), in.getRank())))
    return failure();
  ArrayRef<int64_t> normShape = in.getShape().drop_front(getAxis());
  for (Value v : {getScale(), getBias()}) {
    if (!v)
      continue;
    if (rtt(v).getShape() != normShape)
      return emitOpError() << "scale/bias shape " << formatShape(rtt(v).getShape())
                           << " must be the normalized shape " << formatShape(normShape);
  }
  if (getType() != in)
    return emitOpError() << "result type must equal the input type";
  return success();
}

/// An all-reduce sums same-shaped tensors of every rank: the result type is
/// the input type.
LogicalResult AllReduceOp::verify() {
  if (getInput().getType() != getResult().getType())
    return emitOpError() << "result type " << getResult().getType()
                         << " differs from input type " << getInput().getType();
  return success();
}

LogicalResult RotaryOp::verify() {
  auto x = rtt(getInput());
  if (getType() != x)
    return emitOpError() << "result type must equal the input type";
  if (x.getRank() < 1 || x.getShape().back() % 2)
    return emitOpError() << "the last dim of the input " << formatShape(x.getShape())
                         << " must be even";
  for (Value t : {getCos(), getSin()}) {
    auto tt = rtt(t);
    if (tt.getElementType() != x.getElementType())
      return emitOpError() << "cos/sin element type must be the input's";
    if (tt.getRank() > x.getRank())
      return emitOpError() << "cos/sin rank exceeds the input's";
    for (int64_t d = 0; d < tt.getRank(); ++d) {
      int64_t dim = tt.getDimSize(tt.getRank() - 1 - d), want = x.getDimSize(x.getRank() - 1 - d);
      if (dim != 1 && dim != want)
        return emitOpError() << "cos/sin shape " << formatShape(tt.getShape())
                             << " does not broadcast to " << formatShape(x.getShape());
    }
  }
  return success();
}

LogicalResult RmsNormOp::verify() {
  auto in = rtt(getInput());
  if (failed(checkAxis(*this, getAxis(), in.getRank())))
    return failure();
  ArrayRef<int64_t> normShape = in.getShape().drop_front(getAxis());
  if (rtt(getScale()).getShape() != normShape)
    return emitOpError() << "scale shape " << formatShape(rtt(getScale()).getShape())
                         << " must be the normalized shape " << formatShape(normShape);
  if (getType() != in)
    return emitOpError() << "result type must equal the input type";
  return success();
}

/// Row statistics: [..., K] -> two [..., 1] f32 results.
LogicalResult RowStatsOp::verify() {
  auto in = rtt(getInput());
  if (in.getRank() < 1)
    return emitOpError() << "input must have rank >= 1";
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = 1;
  for (Value r : {getMean(), getRstd()})
    if (rtt(r).getShape() != ArrayRef<int64_t>(shape) || !rtt(r).getElementType().isF32())
      return emitOpError() << "results must be " << formatShape(shape) << " of f32, got "
                           << r.getType();
  if (!(getEpsilon().convertToFloat() >= 0.0f))
    return emitOpError() << "epsilon must be >= 0";
  return success();
}

/// The checks `kiln.attention` and `kiln.paged_attention` share: the result is
/// [B, Hq, S, Dv] ([B, S, Hq, Dv] with bshd_output) and the scale is finite and non-zero.
static LogicalResult verifyAttentionResult(Operation *op, RankedTensorType result, int64_t B,
                                           int64_t Hq, int64_t S, int64_t Dv, bool bshd,
                                           APFloat scale) {
  SmallVector<int64_t> expect =
      bshd ? SmallVector<int64_t>{B, S, Hq, Dv} : SmallVector<int64_t>{B, Hq, S, Dv};
  if (result.getShape() != ArrayRef<int64_t>(expect))
    return op->emitOpError() << "result shape " << formatShape(result.getShape())
                             << " must be " << formatShape(expect);
  if (!std::isfinite(scale.convertToDouble()) || scale.convertToDouble() == 0.0)
    return op->emitOpError() << "scale must be finite and non-zero";
  return success();
}

LogicalResult AttentionOp::verify() {
  auto q = rtt(getQuery()), k = rtt(getKey()), v = rtt(getValue());
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return emitOpError() << "query, key and value must be rank 4 ([B, H, S, D]), got ranks "
                         << q.getRank() << ", " << k.getRank() << ", " << v.getRank();
  Type et = q.getElementType();
  if (k.getElementType() != et || v.getElementType() != et || getType().getElementType() != et)
    return emitOpError() << "query, key, value and result must share one element type";
  int64_t B = q.getDimSize(0), Hq = q.getDimSize(1), Sq = q.getDimSize(2), D = q.getDimSize(3);
  int64_t Hkv = k.getDimSize(1), Sk = k.getDimSize(2), Dv = v.getDimSize(3);
  if (k.getDimSize(0) != B || v.getDimSize(0) != B || v.getDimSize(1) != Hkv ||
      v.getDimSize(2) != Sk || k.getDimSize(3) != D)
    return emitOpError() << "key " << formatShape(k.getShape()) << " and value "
                         << formatShape(v.getShape()) << " do not match query "
                         << formatShape(q.getShape())
                         << " (expected key [B, Hkv, Sk, D], value [B, Hkv, Sk, Dv])";
  if (Hkv <= 0 || Hq % Hkv)
    return emitOpError() << "query heads (" << Hq << ") must be a multiple of key/value heads ("
                         << Hkv << ")";
  if (Value mask = getMask()) {
    auto m = rtt(mask);
    if (m.getElementType() != et)
      return emitOpError() << "mask element type must be the query's";
    int64_t full[4] = {B, Hq, Sq, Sk};
    if (m.getRank() > 4)
      return emitOpError() << "mask rank " << m.getRank() << " exceeds 4";
    for (int64_t d = 0; d < m.getRank(); ++d) {
      int64_t dim = m.getDimSize(m.getRank() - 1 - d), want = full[3 - d];
      if (dim != 1 && dim != want)
        return emitOpError() << "mask " << formatShape(m.getShape())
                             << " does not broadcast to [B, Hq, Sq, Sk] = "
                             << formatShape(full);
    }
  }
  return verifyAttentionResult(*this, getType(), B, Hq, Sq, Dv, getBshdOutput(), getScale());
}

/// Checks a paged cache `[NB, Hkv, BS, D]`, its block table `[B, MB]` and
/// sequence lengths `[B]` against a step of `B` sequences with `Hkv` heads.
static LogicalResult verifyPagedCache(Operation *op, StringRef what, RankedTensorType cache,
                                      Value blockTable, Value seqLens, int64_t B, int64_t Hkv,
                                      int64_t D) {
  if (cache.getRank() != 4 || cache.getDimSize(1) != Hkv || cache.getDimSize(3) != D ||
      cache.getDimSize(0) < 1 || cache.getDimSize(2) < 1)
    return op->emitOpError() << what << " " << formatShape(cache.getShape())
                             << " must be [blocks, " << Hkv << ", block size, " << D << "]";
  auto table = rtt(blockTable), lens = rtt(seqLens);
  if (table.getRank() != 2 || table.getDimSize(0) != B || table.getDimSize(1) < 1)
    return op->emitOpError() << "block table " << formatShape(table.getShape())
                             << " must be [" << B << ", blocks per sequence]";
  if (lens.getRank() != 1 || lens.getDimSize(0) != B)
    return op->emitOpError() << "sequence lengths " << formatShape(lens.getShape())
                             << " must be [" << B << "]";
  return success();
}

LogicalResult KvCacheAppendOp::verify() {
  auto k = rtt(getKeys()), v = rtt(getValues());
  auto kc = rtt(getKeyCache()), vc = rtt(getValueCache());
  if (k.getRank() != 4 || v.getRank() != 4)
    return emitOpError() << "new keys " << formatShape(k.getShape()) << " and values "
                         << formatShape(v.getShape()) << " must be rank 4 ([B, Hkv, S, D])";
  if (v.getDimSize(0) != k.getDimSize(0) || v.getDimSize(1) != k.getDimSize(1) ||
      v.getDimSize(2) != k.getDimSize(2))
    return emitOpError() << "new values " << formatShape(v.getShape())
                         << " do not match new keys " << formatShape(k.getShape());
  Type et = k.getElementType();
  if (v.getElementType() != et || kc.getElementType() != et || vc.getElementType() != et)
    return emitOpError() << "caches and new keys/values must share one element type";
  int64_t B = k.getDimSize(0), Hkv = k.getDimSize(1);
  if (failed(verifyPagedCache(*this, "key cache", kc, getBlockTable(), getSeqLens(), B, Hkv,
                              k.getDimSize(3))) ||
      failed(verifyPagedCache(*this, "value cache", vc, getBlockTable(), getSeqLens(), B, Hkv,
                              v.getDimSize(3))))
    return failure();
  if (kc.getDimSize(0) != vc.getDimSize(0) || kc.getDimSize(2) != vc.getDimSize(2))
    return emitOpError() << "key cache " << formatShape(kc.getShape()) << " and value cache "
                         << formatShape(vc.getShape()) << " must have the same blocks";
  if (getKeyResult().getType() != kc || getValueResult().getType() != vc)
    return emitOpError() << "result types must be the caches'";
  return success();
}

LogicalResult PagedAttentionOp::verify() {
  auto q = rtt(getQuery()), k = rtt(getKeyCache()), v = rtt(getValueCache());
  if (q.getRank() != 4)
    return emitOpError() << "query " << formatShape(q.getShape()) << " must be rank 4 ([B, Hq, S, D])";
  Type et = q.getElementType();
  if (k.getElementType() != et || v.getElementType() != et || getType().getElementType() != et)
    return emitOpError() << "query, caches and result must share one element type";
  int64_t B = q.getDimSize(0), Hq = q.getDimSize(1), S = q.getDimSize(2), D = q.getDimSize(3);
  if (k.getRank() != 4 || v.getRank() != 4)
    return emitOpError() << "key and value caches must be rank 4 ([blocks, Hkv, block size, D])";
  int64_t Hkv = k.getDimSize(1), Dv = v.getDimSize(3);
  if (failed(verifyPagedCache(*this, "key cache", k, getBlockTable(), getSeqLens(), B, Hkv, D)) ||
      failed(verifyPagedCache(*this, "value cache", v, getBlockTable(), getSeqLens(), B, Hkv, Dv)))
    return failure();
  if (v.getDimSize(0) != k.getDimSize(0) || v.getDimSize(2) != k.getDimSize(2))
    return emitOpError() << "key cache " << formatShape(k.getShape()) << " and value cache "
                         << formatShape(v.getShape()) << " must have the same blocks";
  if (Hkv <= 0 || Hq % Hkv)
    return emitOpError() << "query heads (" << Hq << ") must be a multiple of key/value heads ("
                         << Hkv << ")";
  return verifyAttentionResult(*this, getType(), B, Hq, S, Dv, getBshdOutput(), getScale());
}

LogicalResult ArgReduceOp::verify() {
  auto in = rtt(getInput());
  auto out = rtt(getResult());
  if (getKind() != ReduceKind::Max && getKind() != ReduceKind::Min)
    return emitOpError() << "kind must be max or min";
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank " << in.getRank();
  if (!out.getElementType().isInteger(64))
    return emitOpError() << "result element type must be i64";
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != axis)
      shape.push_back(in.getDimSize(d));
    else if (getKeepDims())
      shape.push_back(1);
  if (out.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result shape " << formatShape(out.getShape()) << " should be "
                         << formatShape(shape);
  return success();
}

LogicalResult SampleOp::verify() {
  auto logits = rtt(getLogits());
  if (logits.getRank() != 2 && !(logits.getRank() == 3 && logits.getDimSize(1) == 1))
    return emitOpError() << "logits " << formatShape(logits.getShape())
                         << " must be [B, V] or [B, 1, V]";
  const int64_t B = logits.getDimSize(0), V = logits.getShape().back();
  if (V < 1)
    return emitOpError() << "logits " << formatShape(logits.getShape())
                         << " must have a vocabulary of at least 1";
  const std::pair<Value, StringRef> params[] = {{getTemperature(), "temperature"},
                                                {getTopK(), "top_k"},
                                                {getTopP(), "top_p"},
                                                {getSeed(), "seed"},
                                                {getOffset(), "offset"}};
  for (auto [value, name] : params) {
    auto t = rtt(value);
    if (t.getRank() != 1 || t.getDimSize(0) != B)
      return emitOpError() << name << " " << formatShape(t.getShape()) << " must be [" << B
                           << "], one value per row of the logits";
  }
  auto out = rtt(getResult());
  if (out.getShape() != ArrayRef<int64_t>{B, 1})
    return emitOpError() << "result shape " << formatShape(out.getShape()) << " should be ["
                         << B << ", 1]";
  return success();
}

LogicalResult ReduceOp::verify() {
  auto in = rtt(getInput());
  int64_t prev = -1;
  for (int64_t a : getAxes()) {
    if (a <= prev || a >= in.getRank())
      return emitOpError() << "axes " << formatShape(getAxes())
                           << " must be sorted, unique and < rank " << in.getRank();
    prev = a;
  }
  SmallVector<int64_t> expect;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (llvm::is_contained(getAxes(), d)) {
      if (getKeepDims())
        expect.push_back(1);
    } else {
      expect.push_back(in.getDimSize(d));
    }
  }
  if (ArrayRef<int64_t>(expect) != getType().getShape())
    return emitOpError() << "result shape " << formatShape(getType().getShape())
                         << " should be " << formatShape(expect);
  return success();
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     TypeRange resultTypes, ValueRange inputs) {
  state.addAttribute(getSymNameAttrName(state.name), builder.getStringAttr(name));
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value v : inputs)
    block->addArgument(v.getType(), state.location);
}

YieldOp KernelOp::getYield() { return cast<YieldOp>(getBodyBlock().getTerminator()); }

LogicalResult KernelOp::verify() {
  Block &block = getBodyBlock();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << block.getNumArguments()
                         << " arguments for " << getInputs().size() << " operands";
  for (auto [arg, in] : llvm::zip(block.getArguments(), getInputs()))
    if (arg.getType() != in.getType())
      return emitOpError() << "body argument type " << arg.getType()
                           << " differs from operand type " << in.getType();
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError() << "body must end in kiln.yield";
  if (TypeRange(yield.getValues().getTypes()) != getResultTypes())
    return emitOpError() << "yielded types do not match the result types";
  if (auto offsets = getArenaOffsets())
    if (offsets->size() != getNumResults())
      return emitOpError() << "arena_offsets has " << offsets->size()
                           << " entries for " << getNumResults() << " results";
  return success();
}

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.cpp.inc"
