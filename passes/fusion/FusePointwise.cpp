//===- FusePointwise.cpp - fuse chains of fusible ops into kernels --------===//
//
// Groups `KilnFusible` ops (pointwise math, selects, casts, broadcasts,
// reshapes, transposes, slices, concats, gathers) into `kiln.kernel` regions.
//
// Algorithm (one reverse walk, linear in the number of ops):
//   1. Visit ops bottom-up. A fusible op whose single result is read only by
//      fusible ops of one group joins that group when the control function
//      agrees, the group is below the size limit and would not read more
//      than `maxInputsPerKernel` values (each is a kernel parameter).
//   2. Any other fusible op starts a new group (it will be materialized).
//   3. A GEMM, softmax or layer norm whose result is read by one group,
//      elementwise and never broadcast up to the group's root, becomes that
//      group's anchor (epilogue fusion); at most one anchor per group.
//   4. A reduction starts a group that its fusible producers join
//      (prologue fusion: they are evaluated per input element). A GEMM
//      (with or without an epilogue) does the same for producers that are
//      cheap to recompute: its operand loaders evaluate them per element.
//   5. Groups are outlined in program order; groups made only of reshapes
//      are left alone, since a reshape of a materialized buffer is a view.
//
// Before step 1, a matmul with K = 1 (an outer product, e.g. a decode step's
// rotary angles inv_freq x positions) becomes a broadcast kiln.mul: the same
// single product per element, rounded once, and a pointwise op that fuses.
// (After kiln-raise-attention: at one key, the attention's P x V is such a
// matmul too, and the raise patterns expect a matmul.)
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kiln-fuse-pointwise"

namespace kiln {
#define GEN_PASS_DEF_FUSEPOINTWISE
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// Short op name for kernel names: `kiln.layer_norm` -> `layer_norm`.
static StringRef shortName(Operation *op) {
  return op->getName().stripDialect();
}

FailureOr<KernelOp> kiln::outlineIntoKernel(RewriterBase &rewriter,
                                            ArrayRef<Operation *> ops, StringRef name) {
  assert(!ops.empty() && "outlining an empty group");
  llvm::SmallPtrSet<Operation *, 16> inGroup(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (!inGroup.contains(v.getDefiningOp()))
        inputs.insert(v);
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !inGroup.contains(u); }))
        outputs.push_back(r);
  }
  if (outputs.empty())
    return failure();

  Operation *last = ops.back();
  rewriter.setInsertionPointAfter(last);
  auto kernel = KernelOp::create(rewriter, last->getLoc(), name,
                                 ValueRange(outputs).getTypes(), inputs.getArrayRef());
  IRMapping mapping;
  for (auto [in, arg] : llvm::zip(inputs, kernel.getBodyBlock().getArguments()))
    mapping.map(in, arg);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&kernel.getBodyBlock());
  for (Operation *op : ops)
    rewriter.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  YieldOp::create(rewriter, last->getLoc(), yielded);

  for (auto [out, res] : llvm::zip(outputs, kernel.getResults()))
    rewriter.replaceUsesWithIf(out, res, [&](OpOperand &use) {
      return !inGroup.contains(use.getOwner()) && use.getOwner() != kernel;
    });
  for (Operation *op : llvm::reverse(ops))
    rewriter.eraseOp(op);
  return kernel;
}

/// Ops a GEMM prologue may recompute for every tile that reads an operand
/// element: index remapping, and cheap arithmetic with scalar constants (the
/// attention score scaling). Ops that read further tensors are excluded:
/// every tile would re-read those too, and a pointwise kernel that writes
/// the operand once is cheaper.
static bool isCheapToRecompute(Operation *op) {
  if (isa<ReshapeOp, TransposeOp, SliceOp, ExpandOp, CastOp, NegOp>(op))
    return true;
  // Rotary embeddings of Q and K: the attention kernel rotates each tile in
  // shared memory as it arrives (cos/sin rows are small and cached).
  if (isa<RotaryOp>(op))
    return true;
  if (!isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp>(op))
    return false;
  // Exactly one non-scalar operand: the value on the path to the GEMM.
  unsigned tensors = 0;
  for (Value v : op->getOperands())
    if (cast<RankedTensorType>(v.getType()).getNumElements() != 1 || !v.getDefiningOp<ConstantOp>())
      ++tensors;
  return tensors == 1;
}

/// The op that reads `v`, if all its uses are by one op.
static Operation *singleUser(Value v) {
  if (v.use_empty())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  if (llvm::any_of(v.getUsers(), [&](Operation *u) { return u != user; }))
    return nullptr;
  return user;
}

/// True when every use of the `starts` values, followed transitively through
/// the group, is a reshape or an elementwise op that reads the value
/// unbroadcast, all inside the group (`inGroup`), and no start value is read
/// outside it: then the group's root at each linear index depends on the
/// start values at that same linear index only, and a kernel holding them can
/// compute the root element by element (epilogue).
static bool reachesRootElementwise(ArrayRef<Value> starts,
                                   llvm::function_ref<bool(Operation *)> inGroup) {
  SmallVector<Value> worklist(starts.begin(), starts.end());
  llvm::SmallPtrSet<Operation *, 16> visited;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (!inGroup(user)) {
        if (llvm::is_contained(starts, v))
          return false; // a start value read outside: it would have to be stored
        continue;       // the group's root, read outside: the kernel's result
      }
      if (user->getNumResults() != 1)
        return false;
      auto resultShape = cast<RankedTensorType>(user->getResult(0).getType()).getShape();
      if (!isa<ReshapeOp>(user) &&
          (!isElementwise(user) || cast<RankedTensorType>(v.getType()).getShape() != resultShape))
        return false;
      if (visited.insert(user).second)
        worklist.push_back(user->getResult(0));
    }
  }
  return true;
}

/// Membership test of `group` for reachesRootElementwise.
static auto memberOf(const llvm::DenseMap<Operation *, unsigned> &groupOf, unsigned group) {
  return [&groupOf, group](Operation *op) {
    auto it = groupOf.find(op);
    return it != groupOf.end() && it->second == group;
  };
}

/// True when the anchor's result reaches `group`'s root elementwise
/// (reachesRootElementwise): the anchor's kernel applies the group as its
/// epilogue.
static bool isEpilogueGroup(Operation *anchor, const llvm::DenseMap<Operation *, unsigned> &groupOf,
                            unsigned group) {
  return reachesRootElementwise({anchor->getResult(0)}, memberOf(groupOf, group));
}

/// True when `anchor` (a GEMM on the tensor cores: 16-bit, or f32 under
/// --precision tf32) reaches `group` as a gated unit after
/// kiln-interleave-glu (getGluHalves, every op on the way in the group) whose
/// halves reach the group's root elementwise. The GEMM's pair epilogue
/// (kiln::PairEpilogue) then computes each root element from the two
/// adjacent accumulators that hold it.
static bool isPairEpilogueGroup(Operation *anchor,
                                const llvm::DenseMap<Operation *, unsigned> &groupOf,
                                unsigned group) {
  Type et = cast<RankedTensorType>(anchor->getResult(0).getType()).getElementType();
  bool tensorCores =
      et.isF16() || et.isBF16() || (et.isF32() && getPrecision(anchor) == Precision::TF32);
  std::optional<GluHalves> halves = tensorCores ? getGluHalves(anchor) : std::nullopt;
  auto inGroup = memberOf(groupOf, group);
  if (!halves || !llvm::all_of(halves->chain, inGroup) ||
      !inGroup(halves->even.getDefiningOp()) || !inGroup(halves->odd.getDefiningOp()))
    return false;
  return reachesRootElementwise({halves->even, halves->odd}, inGroup);
}

/// Replaces every matmul(lhs [..., M, 1], rhs [..., 1, N]) by lhs * rhs under numpy
/// broadcasting: the batch dims broadcast alike and the result type is the same.
static void outerProductsToMul(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<MatMulOp> outer;
  func.walk([&](MatMulOp mm) {
    if (cast<RankedTensorType>(mm.getLhs().getType()).getShape().back() == 1)
      outer.push_back(mm);
  });
  for (MatMulOp mm : outer) {
    rewriter.setInsertionPoint(mm);
    rewriter.replaceOpWithNewOp<MulOp>(mm, mm.getType(), mm.getLhs(), mm.getRhs());
  }
}

/// Ops a multi-output kernel may evaluate once per consumer element (mergeIntoConsumers): index
/// remapping and the cheap arithmetic, on any operands.
static bool isCheapPointwise(Operation *op) {
  return isa<ReshapeOp, TransposeOp, SliceOp, ExpandOp, ConcatOp, CastOp, NegOp, AddOp, SubOp,
             MulOp, MaxOp, MinOp>(op);
}

/// Input elements below which mergeIntoConsumers ignores the extra reads (a launch costs more).
constexpr int64_t kMergeAlwaysElements = 1 << 16;

/// Step 2b: a group without an anchor, of cheap ops only (isCheapPointwise), whose results are
/// read only by two or more other groups without an anchor (a generation step's rotary angles,
/// read by the cos and the sin tables) joins them: one kernel with a result per consumer, each
/// evaluating the shared ops per element, instead of one launch that stores the shared value and
/// one per consumer. Only when that does not read more memory than it saves (or the inputs are
/// small), where the merged kernel can stand after its last op (every reader of
/// its results comes later: no path through an outside op leads back into it) and within the
/// op and input limits. Groups hold their ops in reverse program order; merged groups are left
/// empty.
static void mergeIntoConsumers(SmallVector<SmallVector<Operation *>> &groups,
                               llvm::DenseMap<Operation *, unsigned> &groupOf,
                               ArrayRef<bool> hasAnchor, const FusionOptions &options) {
  for (unsigned p = 0; p < groups.size(); ++p) {
    if (hasAnchor[p] || groups[p].empty() || !llvm::all_of(groups[p], isCheapPointwise) ||
        llvm::all_of(groups[p], [](Operation *op) { return isa<ReshapeOp>(op); }))
      continue; // (reshapes alone are views: nothing to save)
    llvm::SetVector<unsigned> consumers;
    bool mergeable = true;
    for (Operation *op : groups[p])
      for (Operation *user : op->getUsers()) {
        auto it = groupOf.find(user);
        if (it == groupOf.end() || hasAnchor[it->second] || groups[it->second].empty() ||
            !user->hasTrait<KilnFusible>()) {
          mergeable = false;
          break;
        }
        if (it->second != p)
          consumers.insert(it->second);
      }
    // A reader that is only reshapes is a view of the stored value: it stays stored, and a
    // merged kernel would write it once per view.
    auto onlyViews = [&](unsigned c) {
      return llvm::all_of(groups[c], [](Operation *op) { return isa<ReshapeOp>(op); });
    };
    if (!mergeable || consumers.size() < 2 || llvm::any_of(consumers, onlyViews))
      continue;
    // Memory: every consumer now reads the shared group's inputs (c x in) where the group read
    // them once and its results were stored and read back (in + (c + 1) x out). Small tensors
    // merge regardless (a launch costs more than their bytes).
    int64_t inElems = 0, outElems = 0;
    llvm::SmallPtrSet<Operation *, 16> inP(groups[p].begin(), groups[p].end());
    llvm::SmallPtrSet<Value, 8> counted;
    for (Operation *op : groups[p]) {
      for (Value v : op->getOperands())
        if (!inP.contains(v.getDefiningOp()) && counted.insert(v).second)
          inElems += cast<RankedTensorType>(v.getType()).getNumElements();
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !inP.contains(u); }))
          outElems += cast<RankedTensorType>(r.getType()).getNumElements();
    }
    const int64_t c = int64_t(consumers.size());
    if (inElems > kMergeAlwaysElements && c * inElems > inElems + (c + 1) * outElems)
      continue;
    SmallVector<Operation *> merged(groups[p]);
    for (unsigned c : consumers)
      merged.append(groups[c].begin(), groups[c].end());
    if (merged.size() > options.maxOpsPerKernel)
      continue;
    llvm::SmallPtrSet<Operation *, 16> inMerged(merged.begin(), merged.end());
    llvm::SetVector<Value> inputs;
    Operation *last = merged.front();
    for (Operation *op : merged) {
      if (last->isBeforeInBlock(op))
        last = op;
      for (Value v : op->getOperands())
        if (!inMerged.contains(v.getDefiningOp()))
          inputs.insert(v);
    }
    if (inputs.size() > options.maxInputsPerKernel)
      continue;
    bool readersAfter = llvm::all_of(merged, [&](Operation *op) {
      return llvm::all_of(op->getUsers(), [&](Operation *user) {
        return inMerged.contains(user) ||
               (user->getBlock() == last->getBlock() && last->isBeforeInBlock(user));
      });
    });
    if (!readersAfter)
      continue;
    llvm::sort(merged, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
    for (unsigned c : consumers)
      groups[c].clear();
    for (Operation *op : merged)
      groupOf[op] = p;
    groups[p] = std::move(merged);
    LLVM_DEBUG(llvm::dbgs() << "merged a group into " << consumers.size() << " consumers\n");
  }
}

/// Largest rotary table (elements of its cos or sin operand) that a KV cache append or paged
/// attention recomputes per element instead of reading: a decode step's [B, 1, 1, D] up to
/// B x D = 2048 (and a prefill chunk that short). A longer chunk's table ([1, 1, S, D]) keeps its
/// kernel: every head would evaluate S x D sines and cosines again.
constexpr int64_t kMaxRecomputedRotaryElements = 2048;
/// Prologue ops (views, the rotary) a group needs beside the recomputed tables: the copies are
/// made only when both tables' chains and this many more fit max-ops-per-kernel, so that they
/// never crowd the views out of the prologue.
constexpr unsigned kPrologueRoom = 16;
/// Most ops of one table's chain (the rotary angles and their cos or sin: about 8).
constexpr unsigned kMaxRotaryChainOps = 16;

/// The fusible ops `v` is computed from (isCheapPointwise ops, cos, sin), back to the
/// kernel inputs it reads (arguments, constants, results of other ops), in program order; empty
/// when another kind of op is on the way or there are more than kMaxRotaryChainOps.
static SmallVector<Operation *> rotaryTableChain(Value v) {
  llvm::SetVector<Operation *> chain;
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || isa<ConstantOp>(def) || chain.contains(def))
      continue;
    if (!(isCheapPointwise(def) || isa<CosOp, SinOp>(def)) || chain.size() == kMaxRotaryChainOps)
      return {};
    chain.insert(def);
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  SmallVector<Operation *> ordered(chain.begin(), chain.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Gives each kiln.rotary that a KV cache append (its keys) or a paged attention (its query)
/// reads its own copy of its cos and sin tables' chains (rotaryTableChain), when the tables are
/// small (kMaxRecomputedRotaryElements): the prologue then computes cos and sin of the position
/// per element, and the table kernel (a launch between a decode step's first QKV GEMM and its
/// attention) goes. The copies are returned: they may join the prologue although they are not
/// isCheapToRecompute (the append evaluates each new key once; the split-KV attention's blocks
/// each load the query once: a few sines per element, not one per tile).
static llvm::SmallPtrSet<Operation *, 32>
recomputeRotaryTables(RewriterBase &rewriter, func::FuncOp func, unsigned maxOpsPerKernel) {
  llvm::SmallPtrSet<Operation *, 32> copies;
  SmallVector<RotaryOp> rotaries;
  func.walk([&](RotaryOp r) {
    Value result = r.getResult();
    if (!result.hasOneUse())
      return;
    Operation *user = *result.getUsers().begin();
    bool prologue = (isa<KvCacheAppendOp>(user) &&
                     cast<KvCacheAppendOp>(user).getKeys() == result) ||
                    (isa<PagedAttentionOp>(user) && cast<PagedAttentionOp>(user).getQuery() == result);
    if (prologue && r.getCos().getType().getNumElements() <= kMaxRecomputedRotaryElements &&
        r.getSin().getType().getNumElements() <= kMaxRecomputedRotaryElements)
      rotaries.push_back(r);
  });
  SmallVector<Operation *> originals;
  for (RotaryOp r : rotaries) {
    SmallVector<Operation *> cosChain = rotaryTableChain(r.getCos()),
                             sinChain = rotaryTableChain(r.getSin());
    if (cosChain.size() + sinChain.size() + kPrologueRoom > maxOpsPerKernel)
      continue;
    for (auto [table, chain] : {std::make_pair(&r.getCosMutable(), &cosChain),
                                std::make_pair(&r.getSinMutable(), &sinChain)}) {
      if (chain->empty())
        continue;
      IRMapping mapping;
      rewriter.setInsertionPoint(r);
      for (Operation *op : *chain)
        copies.insert(rewriter.clone(*op, mapping));
      rewriter.modifyOpInPlace(r, [&] { table->set(mapping.lookup(table->get())); });
      originals.append(chain->begin(), chain->end());
    }
  }
  // The original tables, now read by nobody (unless something else reads them).
  llvm::sort(originals, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  originals.erase(std::unique(originals.begin(), originals.end()), originals.end());
  for (Operation *op : originals)
    if (op->use_empty())
      rewriter.eraseOp(op);
  return copies;
}

int64_t kiln::fusePointwiseChains(RewriterBase &rewriter, func::FuncOp func,
                                  const FusionOptions &options,
                                  const FusionControlFn &control) {
  outerProductsToMul(rewriter, func);
  llvm::SmallPtrSet<Operation *, 32> recomputedTables;
  if (options.fuseGemmPrologues && options.recomputeRotaryTables)
    recomputedTables = recomputeRotaryTables(rewriter, func, options.maxOpsPerKernel);
  unsigned maxOpsPerKernel = options.maxOpsPerKernel;
  // Step 1-2: assign groups bottom-up.
  llvm::DenseMap<Operation *, unsigned> groupOf;
  SmallVector<SmallVector<Operation *>> groups;
  // Values each group reads from outside itself (its kernel's operands, as
  // far as the group has grown), to bound the launch's argument count.
  SmallVector<llvm::SetVector<Value>> groupInputs;
  SmallVector<bool> hasAnchor;
  // True when `op` joining `group` keeps its reads within the limit.
  auto inputsFit = [&](unsigned group, Operation *op) {
    const llvm::SetVector<Value> &in = groupInputs[group];
    size_t count = in.size();
    for (Value r : op->getResults())
      count -= in.contains(r);
    llvm::SmallPtrSet<Value, 8> added;
    for (Value v : op->getOperands())
      if (!in.contains(v) && added.insert(v).second)
        ++count;
    return count <= options.maxInputsPerKernel;
  };
  auto join = [&](unsigned group, Operation *op) {
    groupOf[op] = group;
    groups[group].push_back(op);
    for (Value r : op->getResults())
      groupInputs[group].remove(r);
    groupInputs[group].insert(op->operand_begin(), op->operand_end());
  };
  auto startGroup = [&](Operation *op, bool anchored) {
    groupOf[op] = groups.size();
    groups.push_back({op});
    groupInputs.emplace_back(op->operand_begin(), op->operand_end());
    hasAnchor.push_back(anchored);
  };
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    ops.push_back(&op);
  llvm::SmallPtrSet<Operation *, 16> gemmPrologue;
  for (Operation *op : llvm::reverse(ops)) {
    if (isa<MatMulOp, SoftmaxOp, LayerNormOp, RmsNormOp>(op) && options.fuseEpilogues &&
        !op->getResult(0).use_empty()) {
      Operation *user = *op->getResult(0).getUsers().begin();
      auto it = groupOf.find(user);
      if (it != groupOf.end() && !hasAnchor[it->second] &&
          groups[it->second].size() < maxOpsPerKernel && inputsFit(it->second, op) &&
          control(op, user) &&
          (isEpilogueGroup(op, groupOf, it->second) ||
           (isa<MatMulOp>(op) && isPairEpilogueGroup(op, groupOf, it->second)))) {
        unsigned group = it->second;
        join(group, op);
        hasAnchor[group] = true;
        continue;
      }
    }
    if (isa<MatMulOp, AttentionOp, KvCacheAppendOp, PagedAttentionOp>(op) &&
        options.fuseGemmPrologues && !groupOf.count(op)) {
      // A GEMM without an epilogue still anchors a group for its prologue;
      // attention anchors one for the views of Q, K and V; a decode step's
      // cache append and paged attention for the views and rotary of the new
      // keys / values and of the query (each element is computed once there).
      startGroup(op, /*anchored=*/true);
      continue;
    }
    if (isa<ReduceOp>(op) && options.fuseReductionPrologues) {
      // A reduction anchors a group that its fusible producers join
      // (prologue): they are computed per input element in its kernel.
      startGroup(op, /*anchored=*/true);
      continue;
    }
    if (!op->hasTrait<KilnFusible>())
      continue;
    // The single result must be read by exactly one op (possibly through
    // several operands, e.g. `mul %x, %x`): codegen then evaluates it once
    // per element of that consumer.
    // An anchor (GEMM) reads its operands from memory: its producers never
    // join its group.
    Operation *user = op->getNumResults() == 1 ? singleUser(op->getResult(0)) : nullptr;
    // A value read by several ops of one fusible group joins it too (GELU
    // reads x three times): the kernel evaluates it once per element.
    if (!user && op->getNumResults() == 1 && !op->getResult(0).use_empty()) {
      Operation *first = *op->getResult(0).getUsers().begin();
      auto it = groupOf.find(first);
      if (it != groupOf.end() &&
          llvm::all_of(op->getResult(0).getUsers(), [&](Operation *u) {
            auto g = groupOf.find(u);
            return u->hasTrait<KilnFusible>() && g != groupOf.end() && g->second == it->second;
          }))
        user = first;
    }
    // GEMM operands are re-read by every column (row) tile: only ops that
    // are cheap to recompute join as a GEMM prologue.
    bool prologue = user && (isa<MatMulOp, AttentionOp, KvCacheAppendOp, PagedAttentionOp>(user) ||
                             gemmPrologue.contains(user));
    if (user && !user->hasTrait<KilnFusible>() &&
        !isa<ReduceOp, MatMulOp, AttentionOp, KvCacheAppendOp, PagedAttentionOp>(user))
      user = nullptr;
    // A reshape read directly by the GEMM stays a view: it moves no data,
    // so fusing it would only add index arithmetic to the operand loads.
    if (prologue &&
        (!options.fuseGemmPrologues ||
         !(isCheapToRecompute(op) || recomputedTables.contains(op)) ||
         (isa<ReshapeOp>(op) &&
          isa<MatMulOp, AttentionOp, KvCacheAppendOp, PagedAttentionOp>(user))))
      user = nullptr;
    // Only the new keys / values of a cache append and the query of a paged attention take
    // fused producers: the pools, block table and lengths are read in place.
    if (prologue && user)
      if ((isa<KvCacheAppendOp>(user) &&
           !llvm::is_contained({cast<KvCacheAppendOp>(user).getKeys(),
                                cast<KvCacheAppendOp>(user).getValues()},
                               op->getResult(0))) ||
          (isa<PagedAttentionOp>(user) &&
           cast<PagedAttentionOp>(user).getQuery() != op->getResult(0)))
        user = nullptr;
    // Attention's key rotary as its own kernel on request: fused, every query block (and
    // every query head of a GQA group) rotates each K tile it reads again.
    if (!options.fuseKeyRotary && isa<RotaryOp>(op))
      if (auto attention = dyn_cast_or_null<AttentionOp>(user);
          attention && attention.getKey() == op->getResult(0))
        user = nullptr;
    auto it = user ? groupOf.find(user) : groupOf.end();
    if (it != groupOf.end() && groups[it->second].size() < maxOpsPerKernel &&
        inputsFit(it->second, op) && control(op, user)) {
      unsigned group = it->second; // read before inserting: insertion may rehash
      join(group, op);
      if (prologue)
        gemmPrologue.insert(op);
      continue;
    }
    startGroup(op, /*anchored=*/false);
  }

  mergeIntoConsumers(groups, groupOf, hasAnchor, options);

  // Step 3: outline in program order (groups were built bottom-up).
  int64_t created = 0;
  for (auto &group : llvm::reverse(groups)) {
    std::reverse(group.begin(), group.end());
    if (llvm::all_of(group, [](Operation *op) { return isa<ReshapeOp>(op); }))
      continue;
    // An anchored group is outlined where its root is: the GEMM's operands
    // dominate it, and every epilogue operand was already visible there.
    // Named after what it computes: the anchor (GEMM, attention, norm...)
    // first, then the arithmetic in program order, then the index remapping
    // (slices, transposes, ...), each kind once, four names at most.
    std::string name = "fused";
    unsigned shown = 0;
    llvm::StringSet<> named;
    Operation *anchor = nullptr;
    for (Operation *op : group)
      if (!op->hasTrait<KilnFusible>() && !anchor)
        anchor = op;
    if (anchor) {
      name += "_" + shortName(anchor).str();
      ++shown;
    }
    for (bool views : {false, true})
      for (Operation *op : group) {
        bool isView = isa<TransposeOp, SliceOp, ExpandOp, ConcatOp>(op);
        // (A recomputed rotary table is part of the rotary: not named.)
        if (isa<ReshapeOp>(op) || shown == 4 || op == anchor || isView != views ||
            recomputedTables.contains(op) || !named.insert(shortName(op)).second)
          continue;
        name += "_" + shortName(op).str();
        ++shown;
      }
    if (succeeded(outlineIntoKernel(rewriter, group, name)))
      ++created;
  }
  LLVM_DEBUG(llvm::dbgs() << "created " << created << " fused kernels\n");
  return created;
}

namespace {
struct FusePointwisePass : public kiln::impl::FusePointwiseBase<FusePointwisePass> {
  using FusePointwiseBase::FusePointwiseBase;
  void runOnOperation() override {
    if (maxOpsPerKernel == 0) {
      getOperation()->emitError("kiln-fuse-pointwise: max-ops-per-kernel must be at least 1 "
                                "(1 puts every op in its own kernel)");
      return signalPassFailure();
    }
    if (maxInputsPerKernel == 0) {
      getOperation()->emitError("kiln-fuse-pointwise: max-inputs-per-kernel must be at least 1");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    FusionOptions options;
    options.maxOpsPerKernel = maxOpsPerKernel;
    options.maxInputsPerKernel = maxInputsPerKernel;
    options.fuseEpilogues = fuseEpilogues;
    options.fuseReductionPrologues = fuseReductionPrologues;
    options.fuseGemmPrologues = fuseGemmPrologues;
    options.fuseKeyRotary = fuseKeyRotary;
    options.recomputeRotaryTables = recomputeRotaryTables;
    fusePointwiseChains(rewriter, getOperation(), options,
                        [](Operation *, Operation *) { return true; });
  }
};
} // namespace
