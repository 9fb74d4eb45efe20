//===- SplitWideConcats.cpp - bound the operand count of concats ----------===//
//
// Rewrites a `kiln.concat` of more than `max-inputs` operands into a balanced
// tree of concats with at most `max-inputs` operands each. ONNX puts no limit
// on a Concat's fan-in, but a kernel's parameters are limited (the runtime
// launches at most 512 arguments) and so is the code NVRTC compiles in
// reasonable time; after this pass each concat, and so each kernel that
// fusion builds around one, has a bounded number of operands.
//
// Algorithm, per wide concat:
//   1. cut the operand list into consecutive chunks of `max-inputs`;
//   2. replace each chunk of two or more operands by one concat of it;
//   3. repeat on the list of chunk results until it fits; the last concat
//      replaces the original.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kiln-split-wide-concats"

namespace kiln {
#define GEN_PASS_DEF_SPLITWIDECONCATS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

FailureOr<ConcatOp> kiln::splitWideConcat(RewriterBase &rewriter, ConcatOp concat,
                                          unsigned maxInputs) {
  assert(maxInputs >= 2 && "a concat needs room for two operands");
  if (concat.getInputs().size() <= maxInputs)
    return failure();
  int64_t axis = concat.getAxis();
  auto type = cast<RankedTensorType>(concat.getType());
  rewriter.setInsertionPoint(concat);
  SmallVector<Value> level(concat.getInputs().begin(), concat.getInputs().end());
  // Steps 1-3.
  while (level.size() > maxInputs) {
    SmallVector<Value> next;
    for (size_t begin = 0; begin < level.size(); begin += maxInputs) {
      ArrayRef<Value> chunk =
          ArrayRef<Value>(level).slice(begin, std::min<size_t>(maxInputs, level.size() - begin));
      if (chunk.size() == 1) {
        next.push_back(chunk.front());
        continue;
      }
      SmallVector<int64_t> shape(type.getShape());
      shape[axis] = 0;
      for (Value v : chunk)
        shape[axis] += cast<RankedTensorType>(v.getType()).getDimSize(axis);
      auto partType = RankedTensorType::get(shape, type.getElementType(), type.getEncoding());
      next.push_back(
          ConcatOp::create(rewriter, concat.getLoc(), partType, chunk, concat.getAxisAttr()));
    }
    level = std::move(next);
  }
  auto root = ConcatOp::create(rewriter, concat.getLoc(), type, level, concat.getAxisAttr());
  rewriter.replaceOp(concat, root.getResult());
  return root;
}

namespace {
struct SplitWideConcatsPass : public kiln::impl::SplitWideConcatsBase<SplitWideConcatsPass> {
  using SplitWideConcatsBase::SplitWideConcatsBase;
  void runOnOperation() override {
    if (maxInputs < 2) {
      getOperation()->emitError("kiln-split-wide-concats: max-inputs must be at least 2, got ")
          << static_cast<unsigned>(maxInputs);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    SmallVector<ConcatOp> wide;
    getOperation().walk([&](ConcatOp c) {
      if (c.getInputs().size() > maxInputs)
        wide.push_back(c);
    });
    for (ConcatOp c : wide)
      (void)splitWideConcat(rewriter, c, maxInputs);
    LLVM_DEBUG(llvm::dbgs() << "split " << wide.size() << " wide concats\n");
  }
};
} // namespace
