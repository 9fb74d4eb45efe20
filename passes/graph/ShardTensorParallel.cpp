//===- ShardTensorParallel.cpp - Megatron-style tensor-parallel sharding --===//
//
// Rewrites a transformer graph into the graph one rank of a tensor-parallel
// group runs (Megatron-LM column/row parallelism). The GEMMs that produce an
// attention's query, key and value and an MLP's up/gate activations become
// column-parallel (the weight keeps the columns of this rank's heads or of
// this rank's block of the MLP width); the GEMMs that consume them (attention
// output and MLP down projections) become row-parallel and are followed by a
// `kiln.all_reduce`. Which columns survive is found by tracing back from the
// consumer: every value between a column-parallel GEMM and its consumer gets
// the dimension it is split along and a bit set of the indices this rank
// keeps, so a fused QKV weight is cut per head and an interleaved gate/up
// weight keeps its column pairs without naming those spellings.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

#define DEBUG_TYPE "kiln-shard-tensor-parallel"

namespace kiln {
#define GEN_PASS_DEF_SHARDTENSORPARALLEL
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The part of a value one rank keeps: the indices set in `keep` along `dim`.
struct Keep {
  int64_t dim;
  llvm::BitVector keep;
};

/// What a backward trace from a column-parallel consumer collected: every
/// value whose type shrinks, every constant operand to slice and the GEMMs
/// whose weight columns are cut. Insertion-ordered, so rewrites are
/// deterministic.
struct ColumnPlan {
  llvm::MapVector<Value, Keep> values;
  llvm::MapVector<OpOperand *, Keep> constants;
  llvm::SetVector<Operation *> gemms;
  std::string failure; ///< why the trace failed (the first reason)
};

/// The dense elements of `v` when it is a `kiln.constant`.
DenseElementsAttr getDense(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  return c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
}

/// The shape of the ranked tensor `v`.
ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

/// Product of `dims`.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// `type` with dimension `dim` resized to `size`.
RankedTensorType resized(Type type, int64_t dim, int64_t size) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = size;
  return t.clone(shape);
}

/// Keeps the indices set in `keep` along `dim` of `attr` (float elements).
DenseElementsAttr gather(DenseElementsAttr attr, int64_t dim, const llvm::BitVector &keep) {
  auto type = cast<RankedTensorType>(attr.getType());
  RankedTensorType newType = resized(type, dim, keep.count());
  if (attr.isSplat())
    return DenseElementsAttr::get(newType, attr.getSplatValue<Attribute>());
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  assert(bits % 8 == 0 && "sharded constants are float tensors");
  size_t bytes = bits / 8;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t outer = product(shape.take_front(dim)), n = shape[dim];
  size_t inner = size_t(product(shape.drop_front(dim + 1))) * bytes;
  ArrayRef<char> raw = attr.getRawData();
  std::vector<char> out;
  out.reserve(size_t(newType.getNumElements()) * bytes);
  for (int64_t o = 0; o < outer; ++o)
    for (unsigned i : keep.set_bits()) {
      const char *src = raw.data() + size_t(o * n + i) * inner;
      out.insert(out.end(), src, src + inner);
    }
  return DenseElementsAttr::getFromRawBuffer(newType, out);
}

/// Replaces the constant read by `operand` with its `keep` indices along `dim`
/// (a new `kiln.constant`, so other readers of the old one are unaffected).
void sliceConstantOperand(RewriterBase &rewriter, OpOperand &operand, int64_t dim,
                          const llvm::BitVector &keep) {
  auto old = operand.get().getDefiningOp<ConstantOp>();
  DenseElementsAttr value = gather(cast<DenseElementsAttr>(old.getValue()), dim, keep);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(old);
  auto c = ConstantOp::create(rewriter, old.getLoc(), value.getType(), value);
  Operation *owner = operand.getOwner();
  rewriter.modifyOpInPlace(owner, [&] { operand.set(c.getResult()); });
  if (old->use_empty())
    rewriter.eraseOp(old);
}

/// Traces `v` back to column-parallel GEMMs: this rank keeps the indices
/// `keep` along `dim` of `v`. Follows transposes, reshapes that split the
/// dim, slices, rotary embeddings, unary ops and broadcasting binary ops
/// (constant operands that vary along the dim are sliced); stops at a
/// `kiln.matmul` with a constant rank-2 weight split along its columns.
LogicalResult traceColumns(ColumnPlan &plan, Value v, int64_t dim, const llvm::BitVector &keep) {
  auto fail = [&](const Twine &why) {
    if (plan.failure.empty())
      plan.failure = why.str();
    return failure();
  };
  auto [it, inserted] = plan.values.insert({v, Keep{dim, keep}});
  if (!inserted) {
    if (it->second.dim != dim)
      return fail("a value is split along two different dimensions");
    it->second.keep |= keep;
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return fail("a block argument is reached instead of a projection");
  int64_t rank = int64_t(shapeOf(v).size());

  if (auto mm = dyn_cast<MatMulOp>(op)) {
    if (dim != rank - 1 || shapeOf(mm.getRhs()).size() != 2 || !getDense(mm.getRhs()))
      return fail("'kiln.matmul' without a constant rank-2 weight split along its columns");
    plan.gemms.insert(op);
    return success();
  }
  if (auto t = dyn_cast<TransposeOp>(op))
    return traceColumns(plan, t.getInput(), t.getPerm()[dim], keep);
  if (auto s = dyn_cast<SliceOp>(op)) {
    int64_t start = s.getStarts()[dim], step = s.getSteps()[dim];
    if (step <= 0)
      return fail("'kiln.slice' with a negative step along the split dimension");
    llvm::BitVector in(shapeOf(s.getInput())[dim]);
    for (unsigned i : keep.set_bits())
      in.set(start + step * int64_t(i));
    return traceColumns(plan, s.getInput(), dim, in);
  }
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    // The split dim `dim` (with dims dim+1..dim+m) must be one input dim `e`.
    ArrayRef<int64_t> in = shapeOf(r.getInput()), out = shapeOf(v);
    int64_t before = product(out.take_front(dim));
    for (int64_t e = 0; e < int64_t(in.size()); ++e) {
      if (product(in.take_front(e)) != before)
        continue;
      int64_t acc = 1;
      for (int64_t m = dim; m < rank && acc < in[e]; ++m) {
        acc *= out[m];
        if (acc != in[e])
          continue;
        int64_t stride = acc / out[dim];
        llvm::BitVector inKeep(in[e]);
        for (unsigned i : keep.set_bits())
          inKeep.set(i * stride, (i + 1) * stride);
        return traceColumns(plan, r.getInput(), e, inKeep);
      }
    }
    return fail("'kiln.reshape' that does not split one input dimension");
  }
  if (auto rot = dyn_cast<RotaryOp>(op)) {
    if (dim == rank - 1)
      return fail("'kiln.rotary' split along its rotated dimension");
    for (Value table : {rot.getCos(), rot.getSin()}) {
      ArrayRef<int64_t> t = shapeOf(table);
      int64_t td = dim - (rank - int64_t(t.size()));
      if (td >= 0 && t[td] != 1)
        return fail("'kiln.rotary' tables that vary along the split dimension");
    }
    return traceColumns(plan, rot.getInput(), dim, keep);
  }
  if (isa<NegOp, ExpOp, LogOp, SqrtOp, ReciprocalOp, TanhOp, ErfOp, SigmoidOp, ReluOp, CosOp, SinOp,
          CastOp>(op))
    return traceColumns(plan, op->getOperand(0), dim, keep);
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp>(op)) {
    for (OpOperand &operand : op->getOpOperands()) {
      ArrayRef<int64_t> t = shapeOf(operand.get());
      int64_t od = dim - (rank - int64_t(t.size()));
      if (od < 0 || t[od] == 1)
        continue; // broadcast along the split dim: every rank reads all of it
      if (getDense(operand.get())) {
        auto [cit, cnew] = plan.constants.insert({&operand, Keep{od, keep}});
        if (!cnew)
          cit->second.keep |= keep;
        continue;
      }
      if (failed(traceColumns(plan, operand.get(), od, keep)))
        return failure();
    }
    return success();
  }
  return fail("'" + op->getName().getStringRef() + "' is reached");
}

/// Fails when a value of `plan` is read by an op outside the plan other than
/// `consumers`: that reader would see a shard where it expects the whole. A
/// column-parallel GEMM of the plan reading a value of the plan fails too (its
/// input must be whole: e.g. y = x + W2·x with x = tanh(W1·h) traced from y
/// would cut W1's and W2's columns and feed W2 a shard).
LogicalResult checkExclusive(ColumnPlan &plan, ArrayRef<Operation *> consumers) {
  llvm::DenseSet<Operation *> allowed(consumers.begin(), consumers.end());
  for (auto &entry : plan.values)
    if (!plan.gemms.contains(entry.first.getDefiningOp()))
      allowed.insert(entry.first.getDefiningOp());
  for (auto &entry : plan.values)
    for (Operation *user : entry.first.getUsers())
      if (!allowed.contains(user)) {
        if (plan.failure.empty())
          plan.failure =
              ("a projection result is also read by '" + user->getName().getStringRef() + "'")
                  .str();
        return failure();
      }
  return success();
}

/// Rewrites everything `plan` collected: GEMM weight columns, sliced
/// constants, slice starts/steps over the compacted input, result types.
LogicalResult applyColumnPlan(RewriterBase &rewriter, ColumnPlan &plan) {
  // 1. Slices: the kept output elements must be an arithmetic progression of
  //    the compacted input (they are for whole heads and GLU pairs).
  SmallVector<std::tuple<SliceOp, int64_t, int64_t>> sliceUpdates;
  for (auto &[v, k] : plan.values) {
    auto s = v.getDefiningOp<SliceOp>();
    if (!s)
      continue;
    const Keep &in = plan.values.find(s.getInput())->second;
    int64_t start = s.getStarts()[k.dim], step = s.getSteps()[k.dim];
    SmallVector<int64_t> positions;
    for (unsigned i : k.keep.set_bits()) {
      int64_t p = start + step * int64_t(i), compacted = 0;
      for (unsigned j : in.keep.set_bits()) {
        if (int64_t(j) >= p)
          break;
        ++compacted;
      }
      positions.push_back(compacted);
    }
    int64_t newStep = positions.size() > 1 ? positions[1] - positions[0] : step;
    for (size_t i = 0; i < positions.size(); ++i)
      if (newStep <= 0 || positions[i] != positions[0] + newStep * int64_t(i))
        return s.emitError("unsupported: the shard of this slice is not strided in its input");
    sliceUpdates.push_back({s, positions[0], newStep});
  }
  for (auto [s, start, step] : sliceUpdates) {
    int64_t dim = plan.values.find(s.getResult())->second.dim;
    SmallVector<int64_t> starts(s.getStarts()), steps(s.getSteps());
    starts[dim] = start;
    steps[dim] = step;
    rewriter.modifyOpInPlace(s, [&] {
      s.setStarts(starts);
      s.setSteps(steps);
    });
  }
  // 2. Column-parallel GEMM weights and constants broadcast into the path.
  for (Operation *op : plan.gemms)
    sliceConstantOperand(rewriter, op->getOpOperand(1), 1,
                         plan.values.find(op->getResult(0))->second.keep);
  for (auto &[operand, k] : plan.constants)
    sliceConstantOperand(rewriter, *operand, k.dim, k.keep);
  // 3. Result types.
  for (auto &[v, k] : plan.values) {
    Value value = v;
    rewriter.modifyOpInPlace(value.getDefiningOp(), [&] {
      value.setType(resized(value.getType(), k.dim, k.keep.count()));
    });
  }
  return success();
}

/// The path from a sharded value to the row-parallel GEMM reading it.
struct RowPlan {
  SmallVector<std::pair<Value, int64_t>> retype; ///< value and its new size along...
  SmallVector<int64_t> dims;                     ///< ...this dim

  MatMulOp gemm;
  llvm::BitVector rows;
};

/// Follows `v` (this rank keeps `keep` along `dim`) forward through single-use
/// transposes and reshapes that flatten `dim` with its minor dims, to a
/// `kiln.matmul` reading it as lhs with a constant rank-2 weight.
FailureOr<RowPlan> traceRows(Value v, int64_t dim, llvm::BitVector keep, std::string &why) {
  RowPlan plan;
  while (true) {
    if (!v.hasOneUse()) {
      why = "the attention result does not have exactly one reader";
      return failure();
    }
    Operation *user = *v.getUsers().begin();
    if (auto t = dyn_cast<TransposeOp>(user)) {
      dim = llvm::find(t.getPerm(), dim) - t.getPerm().begin();
      v = t.getResult();
      plan.retype.push_back({v, int64_t(keep.count())});
      plan.dims.push_back(dim);
      continue;
    }
    if (auto r = dyn_cast<ReshapeOp>(user)) {
      ArrayRef<int64_t> in = shapeOf(v), out = shapeOf(r.getResult());
      int64_t before = product(in.take_front(dim)), inner = 0, f = 0;
      for (; f < int64_t(out.size()); ++f) {
        if (product(out.take_front(f)) != before)
          continue;
        // The flattened dim must include `dim` itself: starting from 1 would
        // match a leading size-1 output dim (seq 1) and give inner = 0.
        int64_t acc = in[dim];
        for (int64_t m = dim + 1; m < int64_t(in.size()) && acc < out[f]; ++m)
          acc *= in[m];
        if (acc == out[f]) {
          inner = out[f] / in[dim];
          break;
        }
      }
      if (!inner) {
        why = "a reshape of the attention result does not flatten the heads";
        return failure();
      }
      llvm::BitVector flat(out[f]);
      for (unsigned i : keep.set_bits())
        flat.set(i * inner, (i + 1) * inner);
      keep = flat;
      dim = f;
      v = r.getResult();
      plan.retype.push_back({v, int64_t(keep.count())});
      plan.dims.push_back(dim);
      continue;
    }
    auto mm = dyn_cast<MatMulOp>(user);
    if (mm && mm.getLhs() == v && dim == int64_t(shapeOf(v).size()) - 1 &&
        shapeOf(mm.getRhs()).size() == 2 && getDense(mm.getRhs())) {
      plan.gemm = mm;
      plan.rows = keep;
      return plan;
    }
    why = ("the attention result reaches '" + user->getName().getStringRef() +
           "' instead of an output projection with a constant weight")
              .str();
    return failure();
  }
}

/// Makes `plan.gemm` row-parallel: types along the path shrink, the weight
/// keeps this rank's rows and the product is summed over the ranks by a
/// `kiln.all_reduce` placed before every reader (bias and residual adds;
/// absorbAddsIntoAllReduces may move those in front of it afterwards).
void applyRowPlan(RewriterBase &rewriter, RowPlan &plan) {
  for (auto [entry, dim] : llvm::zip(plan.retype, plan.dims)) {
    Value v = entry.first;
    int64_t size = entry.second;
    rewriter.modifyOpInPlace(v.getDefiningOp(),
                             [&] { v.setType(resized(v.getType(), dim, size)); });
  }
  sliceConstantOperand(rewriter, plan.gemm->getOpOperand(1), 0, plan.rows);
  rewriter.setInsertionPointAfter(plan.gemm);
  auto sum =
      AllReduceOp::create(rewriter, plan.gemm.getLoc(), plan.gemm.getType(), plan.gemm.getResult());
  rewriter.replaceAllUsesExcept(plan.gemm.getResult(), sum.getResult(), sum);
}

/// Moves the bias and residual adds that read an all-reduce's result into the
/// sum, once: rank 0 adds them before its all-reduce, the other ranks drop
/// them (sum_r p_r + b + x = (p_0 + b + x) + sum_{r>0} p_r), so rank 0's GEMM
/// takes them into its epilogue and no add kernel follows the all-reduce.
/// From each all-reduce the chain follows single readers: `kiln.reshape`s,
/// and `kiln.add`s of the chain value and an operand every rank holds the same
/// (not computed from a sharded GEMM without an all-reduce in between: a bias,
/// the residual stream) with the chain value's type. The chain stops before
/// the next all-reduce, so every rank keeps the same order of collectives.
static void absorbAddsIntoAllReduces(RewriterBase &rewriter, func::FuncOp func, int64_t rank,
                                     const llvm::DenseSet<Operation *> &sharded) {
  Block &body = func.getBody().front();
  // Values that differ between ranks: computed from a sharded GEMM, not
  // through an all-reduce. And each op's position, to stop at the next
  // all-reduce.
  llvm::DenseSet<Value> rankLocal;
  llvm::DenseMap<Operation *, unsigned> position;
  SmallVector<AllReduceOp> reduces;
  for (Operation &op : body) {
    position[&op] = position.size();
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      reduces.push_back(reduce);
      continue;
    }
    if (sharded.contains(&op) ||
        llvm::any_of(op.getOperands(), [&](Value v) { return rankLocal.contains(v); }))
      rankLocal.insert(op.getResults().begin(), op.getResults().end());
  }
  for (auto [k, reduce] : llvm::enumerate(reduces)) {
    unsigned stop = k + 1 < reduces.size() ? position[reduces[k + 1]] : ~0u;
    SmallVector<std::pair<AddOp, bool>> adds; // the add, whether the chain is its lhs
    Value v = reduce.getResult(), last;
    while (v.hasOneUse()) {
      Operation *user = *v.getUsers().begin();
      if (position[user] >= stop)
        break;
      if (auto view = dyn_cast<ReshapeOp>(user)) {
        v = view.getResult();
        continue;
      }
      auto add = dyn_cast<AddOp>(user);
      if (!add || add.getType() != v.getType() || add.getLhs() == add.getRhs())
        break;
      bool isLhs = add.getLhs() == v;
      if (rankLocal.contains(isLhs ? add.getRhs() : add.getLhs()))
        break;
      adds.push_back({add, isLhs});
      v = last = add.getResult();
    }
    if (adds.empty())
      continue;
    // The all-reduce moves to where the last add was, on every rank, so its
    // shape is the same everywhere (reshapes may sit in the chain); the
    // other ranks drop the adds.
    Value end = last;
    if (rank != 0) {
      for (auto [add, isLhs] : adds) {
        Value through = isLhs ? add.getLhs() : add.getRhs();
        if (add.getResult() == last)
          end = through;
        rewriter.replaceAllUsesWith(add.getResult(), through);
        rewriter.eraseOp(add);
      }
      if (end == reduce.getResult())
        continue; // no reshape in the chain: the all-reduce stays where it is
    }
    Value partial = reduce.getInput();
    Location loc = reduce.getLoc();
    rewriter.replaceAllUsesWith(reduce.getResult(), partial);
    rewriter.eraseOp(reduce);
    rewriter.setInsertionPointAfterValue(end);
    auto sum = AllReduceOp::create(rewriter, loc, end.getType(), end);
    rewriter.replaceAllUsesExcept(end, sum.getResult(), sum);
  }
}

/// Indices [r*size/n, (r+1)*size/n) of `size`.
llvm::BitVector rankBlock(int64_t size, int64_t n, int64_t r) {
  llvm::BitVector bits(size);
  bits.set(r * size / n, (r + 1) * size / n);
  return bits;
}

} // namespace

/// Shards one attention (see ShardTensorParallel in Passes.td); `handled`
/// receives the GEMMs made column- or row-parallel.
static LogicalResult shardAttention(RewriterBase &rewriter, AttentionOp att, int64_t n, int64_t r,
                                    llvm::DenseSet<Operation *> &handled) {
  int64_t hq = shapeOf(att.getQuery())[1], hkv = shapeOf(att.getKey())[1];
  if (hq % n != 0)
    return att.emitError() << "unsupported: tensor-parallel sharding over tp-size " << n << ": "
                           << hq << " query heads are not divisible by " << n;
  // Fewer KV heads than ranks: each KV head is replicated on the n / hkv
  // ranks whose query heads read it (each rank's query heads then lie in one
  // GQA group, since n divides hq and hkv divides n).
  bool replicateKv = hkv < n;
  if (replicateKv && n % hkv != 0)
    return att.emitError() << "unsupported: tensor-parallel sharding over tp-size " << n << ": "
                           << hkv << " KV heads are fewer than " << n
                           << " ranks and do not divide " << n
                           << " (a replicated KV head must serve whole ranks)";
  if (!replicateKv && hkv % n != 0)
    return att.emitError() << "unsupported: tensor-parallel sharding over tp-size " << n << ": "
                           << hkv << " KV heads are not divisible by " << n;
  if (Value mask = att.getMask()) {
    ArrayRef<int64_t> m = shapeOf(mask);
    if (m.size() >= 3 && m[m.size() - 3] != 1)
      return att.emitError("unsupported: tensor-parallel sharding of an attention mask with a "
                           "per-head dimension");
  }
  ColumnPlan columns;
  llvm::BitVector q = rankBlock(hq, n, r), kv(hkv);
  if (replicateKv)
    kv.set(r * hkv / n);
  else
    kv = rankBlock(hkv, n, r);
  bool ok = succeeded(traceColumns(columns, att.getQuery(), 1, q)) &&
            succeeded(traceColumns(columns, att.getKey(), 1, kv)) &&
            succeeded(traceColumns(columns, att.getValue(), 1, kv)) &&
            succeeded(checkExclusive(columns, {att.getOperation()}));
  if (!ok)
    return att.emitError() << "unsupported: tensor-parallel sharding: query/key/value do not come "
                              "from constant-weight projections: "
                           << columns.failure;
  int64_t headDim = att.getBshdOutput() ? 2 : 1;
  std::string why;
  FailureOr<RowPlan> rows = traceRows(att.getResult(), headDim, q, why);
  if (failed(rows))
    return att.emitError() << "unsupported: tensor-parallel sharding: " << why;
  if (failed(applyColumnPlan(rewriter, columns)))
    return failure();
  rewriter.modifyOpInPlace(
      att, [&] { att.getResult().setType(resized(att.getType(), headDim, q.count())); });
  handled.insert(columns.gemms.begin(), columns.gemms.end());
  handled.insert(rows->gemm);
  applyRowPlan(rewriter, *rows);
  return success();
}

/// Shards `down` as an MLP down projection when its lhs comes from
/// constant-weight GEMMs through elementwise ops and slices only; returns
/// false (nothing changed) when it does not.
static FailureOr<bool> shardMlp(RewriterBase &rewriter, MatMulOp down, int64_t n, int64_t r,
                                llvm::DenseSet<Operation *> &handled) {
  ArrayRef<int64_t> w = shapeOf(down.getRhs());
  if (w.size() != 2 || !getDense(down.getRhs()))
    return false;
  int64_t width = w[0], lastDim = int64_t(shapeOf(down.getLhs()).size()) - 1;
  ColumnPlan probe;
  llvm::BitVector all(width, true);
  if (failed(traceColumns(probe, down.getLhs(), lastDim, all)) || probe.gemms.empty() ||
      failed(checkExclusive(probe, {down.getOperation()})) ||
      llvm::any_of(probe.gemms, [&](Operation *g) { return handled.contains(g); }))
    return false;
  if (width % n != 0)
    return down.emitError() << "unsupported: tensor-parallel sharding over tp-size " << n
                            << ": MLP width " << width << " is not divisible by " << n;
  ColumnPlan columns;
  llvm::BitVector keep = rankBlock(width, n, r);
  if (failed(traceColumns(columns, down.getLhs(), lastDim, keep)) ||
      failed(applyColumnPlan(rewriter, columns)))
    return failure();
  handled.insert(columns.gemms.begin(), columns.gemms.end());
  handled.insert(down);
  RowPlan rows;
  rows.gemm = down;
  rows.rows = keep;
  applyRowPlan(rewriter, rows);
  return true;
}

LogicalResult kiln::shardTensorParallel(RewriterBase &rewriter, func::FuncOp func, int64_t tpSize,
                                        int64_t rank) {
  assert(tpSize >= 1 && rank >= 0 && rank < tpSize && "rank outside [0, tp-size)");
  if (tpSize == 1)
    return success();
  // 1. Attention: column-parallel Q/K/V projections, row-parallel output.
  llvm::DenseSet<Operation *> handled;
  SmallVector<AttentionOp> attentions;
  func.walk([&](AttentionOp att) { attentions.push_back(att); });
  for (AttentionOp att : attentions)
    if (failed(shardAttention(rewriter, att, tpSize, rank, handled)))
      return failure();
  // 2. MLPs, in program order.
  SmallVector<MatMulOp> gemms;
  func.walk([&](MatMulOp mm) { gemms.push_back(mm); });
  for (MatMulOp mm : gemms)
    if (!handled.contains(mm) && failed(shardMlp(rewriter, mm, tpSize, rank, handled)))
      return failure();
  // 3. Bias and residual adds into the sums (rank 0 only).
  absorbAddsIntoAllReduces(rewriter, func, rank, handled);
  return success();
}

LogicalResult kiln::buildTensorParallelLoopback(RewriterBase &rewriter, func::FuncOp func,
                                                int64_t tpSize) {
  assert(tpSize >= 1 && "tp-size must be positive");
  if (tpSize == 1)
    return success();
  // 1. One sharded copy of the function per rank (detached clones).
  SmallVector<func::FuncOp> ranks;
  llvm::scope_exit eraseRanks([&] {
    for (func::FuncOp f : ranks)
      f->erase();
  });
  for (int64_t r = 0; r < tpSize; ++r) {
    ranks.push_back(cast<func::FuncOp>(func->clone()));
    if (failed(shardTensorParallel(rewriter, ranks.back(), tpSize, r)))
      return failure();
  }
  // 2. Each rank's body split at its all-reduces; the ranks agree on their count.
  SmallVector<SmallVector<AllReduceOp>> reduces;
  for (func::FuncOp f : ranks) {
    reduces.emplace_back();
    f.walk([&](AllReduceOp op) { reduces.back().push_back(op); });
  }
  for (int64_t r = 1; r < tpSize; ++r)
    if (reduces[r].size() != reduces[0].size())
      return func.emitError() << "internal: tensor-parallel ranks 0 and " << r << " have "
                              << reduces[0].size() << " and " << reduces[r].size()
                              << " all-reduces";
  // 3. Rebuild the body: the ranks' ops in lockstep up to each all-reduce,
  // whose result becomes the sum of the ranks' inputs, then rank 0's return.
  Block &body = func.getBody().front();
  SmallVector<IRMapping> maps(tpSize);
  for (int64_t r = 0; r < tpSize; ++r)
    for (auto [from, to] : llvm::zip(ranks[r].getArguments(), body.getArguments()))
      maps[r].map(from, to);
  rewriter.setInsertionPointToEnd(&body);
  Operation *oldTerminator = body.getTerminator();
  SmallVector<Block::iterator> cursor;
  for (func::FuncOp f : ranks)
    cursor.push_back(f.getBody().front().begin());
  size_t steps = reduces[0].size();
  for (size_t k = 0; k <= steps; ++k) {
    for (int64_t r = 0; r < tpSize; ++r) {
      Operation *stop = k < steps ? reduces[r][k].getOperation()
                                  : ranks[r].getBody().front().getTerminator();
      for (; &*cursor[r] != stop; ++cursor[r])
        rewriter.clone(*cursor[r], maps[r]);
      if (k < steps)
        ++cursor[r];
    }
    if (k == steps)
      break;
    Value sum = maps[0].lookup(reduces[0][k].getInput());
    for (int64_t r = 1; r < tpSize; ++r)
      sum = AddOp::create(rewriter, reduces[r][k].getLoc(), sum.getType(), sum,
                          maps[r].lookup(reduces[r][k].getInput()));
    for (int64_t r = 0; r < tpSize; ++r)
      maps[r].map(reduces[r][k].getResult(), sum);
  }
  rewriter.clone(*ranks[0].getBody().front().getTerminator(), maps[0]);
  // 4. Drop the original ops (everything before the new ones), last first.
  SmallVector<Operation *> old;
  for (Operation &op : body) {
    old.push_back(&op);
    if (&op == oldTerminator)
      break;
  }
  for (Operation *op : llvm::reverse(old)) {
    op->dropAllUses();
    rewriter.eraseOp(op);
  }
  return success();
}

namespace {
/// Thin shell over kiln::shardTensorParallel.
struct ShardTensorParallelPass
    : public kiln::impl::ShardTensorParallelBase<ShardTensorParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    int64_t n = tpSize, r = rank;
    if (n < 1) {
      func.emitError() << "kiln-shard-tensor-parallel: tp-size must be at least 1, got " << n;
      return signalPassFailure();
    }
    if (r < 0 || r >= n) {
      func.emitError() << "kiln-shard-tensor-parallel: rank " << r << " is not in [0, tp-size " << n
                       << ")";
      return signalPassFailure();
    }
    if (n == 1)
      return markAllAnalysesPreserved();
    IRRewriter rewriter(&getContext());
    if (loopback ? failed(buildTensorParallelLoopback(rewriter, func, n))
                 : failed(shardTensorParallel(rewriter, func, n, r)))
      signalPassFailure();
  }
};
} // namespace
