//===- FuseKvAppend.cpp - the KV cache append into the decode attention ---===//
//
// A decode step runs, per layer, a kernel that writes the step's keys and
// values into the paged cache (kiln.kv_cache_append) and then the attention
// kernel that reads the cache (kiln.paged_attention). This pass merges the two
// into one kernel (see FuseKvAppend in Passes.td): the attention's blocks
// write the new rows of their own split chunk before they read it
// (kiln::decodeAttentionPartial's kNew / vNew), which saves one launch and its
// fixed cost per layer and step.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "kiln-fuse-kv-append"

namespace kiln {
#define GEN_PASS_DEF_FUSEKVAPPEND
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The one op of `kernel`'s body that is not fusible (its anchor), if it is an `Op`.
template <typename Op> Op anchorOf(KernelOp kernel) {
  Op found;
  for (Operation &op : kernel.getBodyBlock().without_terminator()) {
    if (op.hasTrait<KilnFusible>())
      continue;
    if (found || !isa<Op>(op))
      return Op();
    found = cast<Op>(op);
  }
  return found;
}

/// The kernel operand behind `v`, a value of `kernel`'s body, if it is a block argument.
Value operandOf(KernelOp kernel, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &kernel.getBodyBlock())
    return Value();
  return kernel.getInputs()[arg.getArgNumber()];
}

/// The append kernel whose two results are `attentionKernel`'s paged attention's pools, when
/// the pair can be merged (the conditions in Passes.td).
KernelOp mergeableAppend(KernelOp attentionKernel, PagedAttentionOp attention) {
  if (cast<RankedTensorType>(attention.getQuery().getType()).getDimSize(2) != 1)
    return KernelOp(); // a prefill chunk: the tensor-core kernels read the cache
  Value keyPool = operandOf(attentionKernel, attention.getKeyCache());
  Value valuePool = operandOf(attentionKernel, attention.getValueCache());
  if (!keyPool || !valuePool)
    return KernelOp();
  auto appendKernel = keyPool.getDefiningOp<KernelOp>();
  if (!appendKernel || valuePool.getDefiningOp<KernelOp>() != appendKernel ||
      appendKernel->getBlock() != attentionKernel->getBlock() ||
      appendKernel->getNumResults() != 2 || keyPool != appendKernel->getResult(0) ||
      valuePool != appendKernel->getResult(1))
    return KernelOp();
  auto append = anchorOf<KvCacheAppendOp>(appendKernel);
  auto yield = appendKernel.getYield().getValues();
  if (!append || yield[0] != append.getKeyResult() || yield[1] != append.getValueResult())
    return KernelOp();
  // The same block table and lengths, and the pools read by this attention alone.
  if (operandOf(appendKernel, append.getBlockTable()) !=
          operandOf(attentionKernel, attention.getBlockTable()) ||
      operandOf(appendKernel, append.getSeqLens()) !=
          operandOf(attentionKernel, attention.getSeqLens()) ||
      !operandOf(appendKernel, append.getBlockTable()) ||
      !operandOf(appendKernel, append.getSeqLens()))
    return KernelOp();
  for (Value pool : appendKernel->getResults())
    for (Operation *user : pool.getUsers())
      if (user != attentionKernel.getOperation())
        return KernelOp();
  // The pools before the append read by nothing else: the merged kernel writes them at the
  // attention kernel's place, later than the append kernel did.
  for (Value pool : {operandOf(appendKernel, append.getKeyCache()),
                     operandOf(appendKernel, append.getValueCache())})
    if (!pool || llvm::any_of(pool.getUsers(), [&](Operation *user) {
          return user != appendKernel.getOperation();
        }))
      return KernelOp();
  for (auto [i, input] : llvm::enumerate(attentionKernel.getInputs()))
    if (input.getDefiningOp() == appendKernel.getOperation())
      for (Operation *user : attentionKernel.getBodyBlock().getArgument(i).getUsers())
        if (user != attention.getOperation())
          return KernelOp(); // the pool read by another op of the kernel as well
  return appendKernel;
}

/// `attentionKernel` and `appendKernel` as one kernel at the attention kernel's place:
/// operands the append kernel's then the attention kernel's (the pools it read from the append
/// kernel dropped), results the attention kernel's then the two pools.
void merge(RewriterBase &rewriter, KernelOp appendKernel, KernelOp attentionKernel) {
  llvm::SetVector<Value> inputs;
  inputs.insert(appendKernel.getInputs().begin(), appendKernel.getInputs().end());
  for (Value v : attentionKernel.getInputs())
    if (v.getDefiningOp() != appendKernel.getOperation())
      inputs.insert(v);
  SmallVector<Type> resultTypes(attentionKernel->getResultTypes());
  llvm::append_range(resultTypes, appendKernel->getResultTypes());

  StringRef name = attentionKernel.getSymName();
  std::string merged = name.str();
  if (size_t underscore = name.find('_'); name.starts_with("k") && underscore != StringRef::npos)
    merged = (name.take_front(underscore + 1) + "kv_cache_append_" + name.drop_front(underscore + 1))
                 .str();
  rewriter.setInsertionPoint(attentionKernel);
  auto kernel = KernelOp::create(rewriter, attentionKernel.getLoc(), merged, resultTypes,
                                 inputs.getArrayRef());
  for (NamedAttribute attr : attentionKernel->getDiscardableAttrs())
    kernel->setAttr(attr.getName(), attr.getValue());
  Block &body = kernel.getBodyBlock();
  auto argOf = [&](Value input) {
    return body.getArgument(unsigned(llvm::find(inputs.getArrayRef(), input) - inputs.begin()));
  };
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&body);
  IRMapping mapping;
  for (auto [i, input] : llvm::enumerate(appendKernel.getInputs()))
    mapping.map(appendKernel.getBodyBlock().getArgument(i), argOf(input));
  for (Operation &op : appendKernel.getBodyBlock().without_terminator())
    rewriter.clone(op, mapping);
  SmallVector<Value> pools;
  for (Value v : appendKernel.getYield().getValues())
    pools.push_back(mapping.lookup(v));
  for (auto [i, input] : llvm::enumerate(attentionKernel.getInputs())) {
    Value arg = attentionKernel.getBodyBlock().getArgument(i);
    if (input.getDefiningOp() == appendKernel.getOperation())
      mapping.map(arg, pools[cast<OpResult>(input).getResultNumber()]);
    else
      mapping.map(arg, argOf(input));
  }
  for (Operation &op : attentionKernel.getBodyBlock().without_terminator())
    rewriter.clone(op, mapping);
  SmallVector<Value> yielded;
  for (Value v : attentionKernel.getYield().getValues())
    yielded.push_back(mapping.lookup(v));
  llvm::append_range(yielded, pools);
  YieldOp::create(rewriter, attentionKernel.getLoc(), yielded);

  rewriter.replaceAllUsesWith(attentionKernel->getResults(),
                              kernel->getResults().take_front(attentionKernel->getNumResults()));
  rewriter.eraseOp(attentionKernel);
  rewriter.eraseOp(appendKernel); // its results were read by the attention kernel alone
}

struct FuseKvAppendPass : public kiln::impl::FuseKvAppendBase<FuseKvAppendPass> {
  void runOnOperation() override {
    // A merged kernel has no arena offsets (kiln-plan-memory gives them), so a planned function
    // would lose its plan: this pass runs between outlining and planning.
    WalkResult planned = getOperation().walk([&](KernelOp kernel) {
      if (!kernel.getArenaOffsets())
        return WalkResult::advance();
      // On the function: the kernel's location is its first ONNX node, which did nothing wrong.
      getOperation().emitError() << "kernel @" << kernel.getSymName()
                                 << " already has arena_offsets: kiln-fuse-kv-append runs after "
                                    "kiln-outline-kernels and before kiln-plan-memory";
      return WalkResult::interrupt();
    });
    if (planned.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    SmallVector<std::pair<KernelOp, KernelOp>> pairs;
    getOperation().walk([&](KernelOp kernel) {
      if (auto attention = anchorOf<PagedAttentionOp>(kernel))
        if (KernelOp append = mergeableAppend(kernel, attention))
          pairs.push_back({append, kernel});
    });
    for (auto [append, attention] : pairs)
      merge(rewriter, append, attention);
  }
};

} // namespace
