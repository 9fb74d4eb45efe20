//===- FoldShapeSubgraphs.cpp - fold shape and mask subgraphs -------------===//
//
// Folds every kiln op whose operands are constants (the folders live in
// dialects/kiln/KilnFolders.cpp) and removes dead ops, so ONNX shape and mask
// subgraphs on static shapes become constants.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-fold-shape-subgraphs"

namespace kiln {
#define GEN_PASS_DEF_FOLDSHAPESUBGRAPHS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

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
  }
};
} // namespace
