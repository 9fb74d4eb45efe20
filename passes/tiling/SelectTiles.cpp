//===- SelectTiles.cpp - GEMM tile selection ------------------------------===//
//
// Chooses the tile of every GEMM kernel from a per-target table with an
// occupancy-first cost model, and records it on the kernel for codegen.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kiln-select-tiles"

namespace kiln {
#define GEN_PASS_DEF_SELECTTILES
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

/// sm_90 tiles, largest first; each has 256 threads and BK = 32 (17 KB of
/// shared memory for the largest). The smallest splits each K slice over 4
/// thread groups, so a block's K loop is 4x shorter: the GEMMs of batch-1
/// inference have too few output tiles to fill the GPU otherwise.
static constexpr GemmTile kSm90Tiles[] = {
    {64, 64, 32, 4, 4, 1}, {32, 64, 32, 2, 4, 1}, {32, 32, 32, 2, 2, 1},
    {16, 32, 32, 1, 2, 1}, {16, 16, 32, 2, 2, 4},
};

GemmTile kiln::selectGemmTile(int64_t m, int64_t n, int64_t batch, int64_t numSMs) {
  auto blocks = [&](const GemmTile &t) {
    return ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn) * batch;
  };
  // Largest tile that still gives every SM a block; else the most blocks.
  for (const GemmTile &t : kSm90Tiles)
    if (blocks(t) >= numSMs)
      return t;
  return kSm90Tiles[std::size(kSm90Tiles) - 1];
}

namespace {
struct SelectTilesPass : public kiln::impl::SelectTilesBase<SelectTilesPass> {
  using SelectTilesBase::SelectTilesBase;
  void runOnOperation() override {
    if (numSMs <= 0) {
      // An option error: report it at the function without dumping its IR.
      mlir::emitError(getOperation().getLoc())
          << "num-sms must be positive, got " << static_cast<int64_t>(numSMs);
      return signalPassFailure();
    }
    Builder builder(&getContext());
    getOperation().walk([&](KernelOp kernel) {
      MatMulOp matmul;
      for (Operation &op : kernel.getBodyBlock())
        if (auto mm = dyn_cast<MatMulOp>(op))
          matmul = mm;
      if (!matmul)
        return;
      ArrayRef<int64_t> shape = matmul.getType().getShape();
      int64_t batch = 1;
      for (int64_t d : shape.drop_back(2))
        batch *= d;
      GemmTile t = selectGemmTile(shape[shape.size() - 2], shape.back(), batch, numSMs);
      LLVM_DEBUG(llvm::dbgs() << kernel.getSymName() << ": tile " << t.bm << "x" << t.bn << "\n");
      kernel->setAttr(kGemmTileAttrName,
                      builder.getDenseI64ArrayAttr({t.bm, t.bn, t.bk, t.tm, t.tn, t.ks}));
    });
  }
};
} // namespace
