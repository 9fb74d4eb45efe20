//===- FoldShapeSubgraphs.cpp - fold shape and mask subgraphs -------------===//
//
// Folds every kiln op whose operands are constants (the folders live in
// dialects/kiln/KilnFolders.cpp) and removes dead ops, so ONNX shape and mask
// subgraphs on static shapes become constants.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-fold-shape-subgraphs"

namespace kiln {
#define GEN_PASS_DEF_FOLDSHAPESUBGRAPHS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

/// Checks constant gather indices against the gathered dimension. ONNX
/// leaves out-of-range indices undefined (onnxruntime rejects them); with
/// static shapes they are a compile-time error, e.g. a GPT-2 position table
/// of 128 rows compiled for 200 tokens.
static LogicalResult verifyConstantIndices(Operation *op, Value indices, int64_t dim) {
  DenseElementsAttr attr;
  if (!matchPattern(indices, m_Constant(&attr)))
    return success();
  for (APInt v : attr.getValues<APInt>()) {
    int64_t i = v.getSExtValue();
    if (i < -dim || i >= dim)
      return op->emitError() << "index " << i << " is out of range for a dimension of size " << dim
                             << " (valid: [" << -dim << ", " << dim
                             << ")); the indices are constant at these input shapes, so an input "
                                "dimension may be too large for the model (e.g. a sequence longer "
                                "than a position table of "
                             << dim << " rows)";
  }
  return success();
}

/// GatherND: each index tuple's j-th entry addresses data dim batch_dims + j.
static LogicalResult verifyConstantTupleIndices(kiln::GatherNDOp op) {
  DenseElementsAttr attr;
  if (!matchPattern(op.getIndices(), m_Constant(&attr)))
    return success();
  ArrayRef<int64_t> dataShape = op.getData().getType().getShape();
  int64_t k = cast<RankedTensorType>(attr.getType()).getShape().back(), j = 0;
  int64_t b = op.getBatchDims();
  for (APInt v : attr.getValues<APInt>()) {
    int64_t i = v.getSExtValue(), dim = dataShape[b + j];
    if (i < -dim || i >= dim)
      return op->emitError() << "index " << i << " (entry " << j << " of an index tuple) is out of "
                             << "range for data dimension " << b + j << " of size " << dim
                             << " (valid: [" << -dim << ", " << dim << "))";
    j = (j + 1) % k;
  }
  return success();
}

/// Integer division by a constant zero is undefined in ONNX (and traps on
/// some hardware): an error at compile time.
static LogicalResult verifyIntegerDivisor(kiln::DivOp op) {
  DenseElementsAttr attr;
  if (isa<FloatType>(op.getRhs().getType().getElementType()) ||
      !matchPattern(op.getRhs(), m_Constant(&attr)))
    return success();
  for (APInt v : attr.getValues<APInt>())
    if (v.isZero())
      return op->emitError() << "integer division by zero (the divisor is a constant holding 0)";
  return success();
}

namespace {
struct FoldShapeSubgraphsPass
    : public kiln::impl::FoldShapeSubgraphsBase<FoldShapeSubgraphsPass> {
  void runOnOperation() override {
    // No patterns: the greedy driver folds ops through their `fold` hooks,
    // materializes constants (deduplicated) and erases trivially dead ops.
    RewritePatternSet patterns(&getContext());
    GreedyRewriteConfig config;
    config.setMaxIterations(GreedyRewriteConfig::kNoLimit);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    // Indices that are now constants must be in range.
    WalkResult result = getOperation().walk([&](Operation *op) -> WalkResult {
      auto dimOf = [](Value data, int64_t axis) {
        return cast<RankedTensorType>(data.getType()).getDimSize(axis);
      };
      LogicalResult ok = success();
      if (auto g = dyn_cast<kiln::GatherOp>(op))
        ok = verifyConstantIndices(op, g.getIndices(), dimOf(g.getData(), g.getAxis()));
      else if (auto g = dyn_cast<kiln::GatherElementsOp>(op))
        ok = verifyConstantIndices(op, g.getIndices(), dimOf(g.getData(), g.getAxis()));
      else if (auto g = dyn_cast<kiln::GatherNDOp>(op))
        ok = verifyConstantTupleIndices(g);
      else if (auto d = dyn_cast<kiln::DivOp>(op))
        ok = verifyIntegerDivisor(d);
      return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
