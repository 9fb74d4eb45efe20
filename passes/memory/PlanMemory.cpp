//===- PlanMemory.cpp - liveness-based activation arena planning ----------===//
//
// Places every kernel result in one activation arena.
//
//   1. Walk the function body in order; kernel k gets schedule index k.
//      Each kernel result is a buffer of numElements * elementBytes bytes,
//      rounded up to the alignment. A `kiln.reshape` of a buffer is a view:
//      it maps to the same buffer, and so does a `kiln.all_reduce`, which
//      the runtime runs in place between kernels.
//   2. Liveness: a buffer lives from its defining kernel to the last kernel
//      that reads it or any view of it; buffers reaching the return live to
//      the end.
//   3. In definition order, release buffers whose last use is before the
//      current kernel, then place the new buffer in the smallest free gap
//      between live buffers that fits (best fit), else at the top.
//
// A buffer is never reused by the kernel that last reads it, so a kernel's
// inputs and outputs never overlap. Steps 1-2 are analyzeBufferLiveness(),
// which the compile report (kiln-compile --report) reads as well.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/kiln/KernelPlan.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "kiln-plan-memory"

namespace kiln {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// Largest arena alignment accepted (bytes): a page; CUDA needs at most 256.
static constexpr int64_t kMaxArenaAlignment = 1 << 16;

FailureOr<SmallVector<BufferLiveness>> kiln::analyzeBufferLiveness(func::FuncOp func,
                                                                     int64_t alignment) {
  if (alignment <= 0 || !llvm::isPowerOf2_64(alignment))
    return mlir::emitError(func.getLoc()) << "arena alignment " << alignment
                                         << " is not a power of two";
  if (alignment > kMaxArenaAlignment)
    return mlir::emitError(func.getLoc()) << "arena alignment " << alignment << " is larger than "
                                         << kMaxArenaAlignment << " bytes";
  // Step 1: buffers and views.
  llvm::MapVector<Value, unsigned> bufferOf; // value (result or view) -> buffer
  SmallVector<BufferLiveness> buffers;
  int64_t index = 0;
  for (Operation &op : func.getBody().front()) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      for (auto [i, r] : llvm::enumerate(kernel.getResults())) {
        if (std::optional<unsigned> input = getInPlaceInput(kernel, i)) {
          // Written in place into a runtime-owned graph input (a KV cache).
          Value in = kernel.getInputs()[*input];
          if (!isa<BlockArgument>(in))
            return kernel.emitError() << "unsupported: a KV cache append must write into a "
                                         "graph input (the runtime's cache), got a kernel result";
          continue;
        }
        auto type = cast<RankedTensorType>(r.getType());
        if (!type.hasStaticShape())
          return kernel.emitError() << "unsupported: memory planning needs static shapes, got "
                                    << type << " (shapes are specialized at import)";
        int64_t bytes = type.getNumElements() * getElementByteSize(type.getElementType());
        bufferOf[r] = buffers.size();
        buffers.push_back({kernel, unsigned(i), bytes,
                           int64_t(llvm::alignTo(std::max<int64_t>(bytes, 1), alignment)), index,
                           index});
      }
      // Step 2 (uses): extend the liveness of every buffer this kernel reads.
      for (Value in : kernel.getInputs())
        if (auto it = bufferOf.find(in); it != bufferOf.end())
          buffers[it->second].lastUse = std::max(buffers[it->second].lastUse, index);
      ++index;
      continue;
    }
    if (auto view = dyn_cast<ReshapeOp>(op)) {
      if (auto it = bufferOf.find(view.getInput()); it != bufferOf.end())
        bufferOf[view.getResult()] = it->second;
      continue;
    }
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      // In place: the runtime's all-reduce writes the sum over its input, so
      // the result is the input's buffer. Only sound when nothing else reads
      // the input (it would see the sum).
      auto it = bufferOf.find(reduce.getInput());
      if (it == bufferOf.end() || !reduce.getInput().hasOneUse())
        return reduce.emitError()
               << "unsupported: kiln.all_reduce runs in place, so its operand must be a kernel "
                  "result (or a view of one) that nothing else reads";
      bufferOf[reduce.getResult()] = it->second;
      continue;
    }
    if (isa<ConstantOp>(op))
      continue;
    if (isa<func::ReturnOp>(op)) {
      for (Value v : op.getOperands())
        if (auto it = bufferOf.find(v); it != bufferOf.end())
          buffers[it->second].lastUse = kLiveToEnd;
      continue;
    }
    return op.emitError() << "unsupported: memory planning expects only kernels, constants, "
                             "reshape views, all-reduces and the return; run "
                             "kiln-outline-kernels first";
  }

  return buffers;
}

FailureOr<MemoryPlan> kiln::planMemory(func::FuncOp func, int64_t alignment) {
  FailureOr<SmallVector<BufferLiveness>> analyzed = analyzeBufferLiveness(func, alignment);
  if (failed(analyzed))
    return failure();
  SmallVector<BufferLiveness> &buffers = *analyzed;

  // Step 3: best-fit placement in definition order.
  MemoryPlan plan;
  SmallVector<unsigned> live;
  for (unsigned b = 0; b < buffers.size(); ++b) {
    BufferLiveness &buf = buffers[b];
    llvm::erase_if(live, [&](unsigned o) { return buffers[o].lastUse < buf.firstUse; });
    llvm::sort(live, [&](unsigned x, unsigned y) { return buffers[x].offset < buffers[y].offset; });
    int64_t bestOffset = -1, bestGap = std::numeric_limits<int64_t>::max(), cursor = 0;
    for (unsigned o : live) {
      int64_t gap = buffers[o].offset - cursor;
      if (gap >= buf.arenaBytes && gap < bestGap) {
        bestGap = gap;
        bestOffset = cursor;
      }
      cursor = std::max(cursor, buffers[o].offset + buffers[o].arenaBytes);
    }
    buf.offset = bestOffset >= 0 ? bestOffset : cursor;
    plan.arenaBytes = std::max(plan.arenaBytes, buf.offset + buf.arenaBytes);
    plan.intermediateBytes += buf.arenaBytes;
    live.push_back(b);
  }

  // Annotate kernels.
  Builder builder(func.getContext());
  llvm::MapVector<Operation *, SmallVector<int64_t>> offsets;
  for (BufferLiveness &buf : buffers) {
    auto &v = offsets[buf.kernel];
    v.resize(buf.kernel.getNumResults(), -1);
    v[buf.resultIndex] = buf.offset;
  }
  for (auto &[op, v] : offsets)
    cast<KernelOp>(op).setArenaOffsets(v);
  func->setAttr("kiln.arena_alignment", builder.getI64IntegerAttr(alignment));
  func->setAttr("kiln.arena_bytes", builder.getI64IntegerAttr(plan.arenaBytes));
  func->setAttr("kiln.intermediate_bytes", builder.getI64IntegerAttr(plan.intermediateBytes));
  LLVM_DEBUG(llvm::dbgs() << "arena " << plan.arenaBytes << " bytes for "
                          << plan.intermediateBytes << " bytes of intermediates\n");
  return plan;
}

namespace {
struct PlanMemoryPass : public kiln::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;
  void runOnOperation() override {
    if (failed(planMemory(getOperation(), alignment)))
      signalPassFailure();
  }
};
} // namespace
