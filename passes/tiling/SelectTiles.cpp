//===- SelectTiles.cpp - GEMM tile selection ------------------------------===//
//
// Chooses the tile of every GEMM kernel from a per-target table with an
// occupancy-first cost model, and records it on the kernel for codegen.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

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
/// An sm_90 mma.sync tile and the two numbers of its cost model: `single`,
/// the fraction of an SM's tensor-core rate one block reaches alone (more
/// warps hide more latency), and `cap`, the fraction several co-resident
/// blocks reach (bigger tiles reuse each shared-memory byte more often).
/// `occupancy` is blocks per SM by shared memory and registers.
struct MmaCandidate {
  MmaTile tile;
  int64_t occupancy;
  double single, cap;
};
// Largest first: ties go to the larger tile (less re-read traffic).
constexpr MmaCandidate kSm90MmaTiles[] = {
    {{128, 128, 32, 2, 4, 4}, 2, 0.60, 1.00}, {{128, 64, 32, 2, 2, 4}, 3, 0.40, 0.85},
    {{64, 128, 32, 2, 2, 4}, 3, 0.40, 0.85},  {{64, 64, 32, 2, 2, 4}, 4, 0.30, 0.70},
    {{32, 64, 64, 1, 2, 4}, 4, 0.15, 0.50},   {{32, 32, 64, 1, 2, 3}, 8, 0.10, 0.35},
    {{16, 64, 64, 1, 2, 4}, 5, 0.10, 0.35},
};
/// TF32 tiles (fp32 operands, `--precision tf32`): 4-byte elements double
/// the shared memory of each stage, so the 128x128 tile keeps 3 stages.
constexpr MmaCandidate kSm90Tf32Tiles[] = {
    {{128, 128, 32, 2, 4, 3}, 2, 0.60, 1.00}, {{128, 64, 32, 2, 2, 4}, 2, 0.40, 0.85},
    {{64, 128, 32, 2, 2, 4}, 2, 0.40, 0.85},  {{64, 64, 32, 2, 2, 4}, 3, 0.30, 0.70},
    {{32, 64, 64, 1, 2, 4}, 2, 0.15, 0.50},   {{32, 32, 64, 1, 2, 3}, 4, 0.10, 0.35},
    {{16, 64, 64, 1, 2, 4}, 2, 0.10, 0.35},
};
} // namespace

namespace {
/// An sm_90a wgmma tile with the same cost-model numbers as MmaCandidate.
/// Only configurations that test/gpu/gemm_wgmma_test.cu covers are listed;
/// the numbers follow its H200 benchmark (docs/results.md): 64x64 is best
/// for the batch-1 GEMMs (M = 128), 128x192 / 128x256 for M in the thousands.
struct WgmmaCandidate {
  WgmmaTile tile;
  int64_t occupancy;
  double single, cap;
};
constexpr WgmmaCandidate kSm90WgmmaTiles[] = {
    {{128, 256, 64, 2, 4}, 1, 0.66, 0.66}, {{128, 192, 64, 2, 4}, 1, 0.62, 0.62},
    {{128, 128, 64, 2, 4}, 1, 0.55, 0.55}, {{128, 64, 64, 2, 4}, 2, 0.40, 0.55},
    {{64, 128, 64, 1, 4}, 2, 0.35, 0.55},  {{64, 64, 64, 1, 4}, 3, 0.25, 0.50},
};

/// Index of the candidate with the least estimated time for the busiest SM:
/// waves x co-resident blocks x tile area / the rate those blocks reach
/// together. K is the same for all tiles and drops out.
/// With K of at most two 64-wide slices (attention scores, K = head dim) the
/// pipeline has nothing to overlap and the fused epilogue dominates: only
/// tiles with two or more blocks per SM are considered, so epilogue memory
/// latency overlaps across blocks.
template <typename Candidate, size_t N>
size_t cheapestTile(const Candidate (&candidates)[N], int64_t m, int64_t n, int64_t k,
                    int64_t batch, int64_t numSMs, std::string &reason) {
  size_t best = N;
  double bestTime = 0;
  int64_t bestBlocks = 0, bestWaves = 0;
  for (size_t i = 0; i < N; ++i) {
    const Candidate &c = candidates[i];
    if (k <= 128 && c.occupancy < 2)
      continue;
    int64_t blocks = ((m + c.tile.bm - 1) / c.tile.bm) * ((n + c.tile.bn - 1) / c.tile.bn) * batch;
    int64_t slots = numSMs * c.occupancy;
    int64_t waves = (blocks + slots - 1) / slots;
    int64_t perSM = std::min(c.occupancy, (blocks + numSMs - 1) / numSMs);
    double rate = std::min(c.cap, double(perSM) * c.single);
    double time = double(waves) * double(perSM) * double(c.tile.bm * c.tile.bn) / rate;
    if (best == N || time < bestTime) {
      best = i;
      bestTime = time;
      bestBlocks = blocks;
      bestWaves = waves;
    }
  }
  assert(best < N && "no tile candidate with occupancy >= 2");
  reason = llvm::formatv("{0} blocks on {1} SMs, {2} wave(s), est. {3:F0} units (K={4}{5})",
                         bestBlocks, numSMs, bestWaves, bestTime, k,
                         k <= 128 ? ", short K: >= 2 blocks per SM" : "")
               .str();
  return best;
}
} // namespace

WgmmaTile kiln::selectWgmmaTile(int64_t m, int64_t n, int64_t k, int64_t batch, int64_t numSMs,
                                std::string &reason) {
  return kSm90WgmmaTiles[cheapestTile(kSm90WgmmaTiles, m, n, k, batch, numSMs, reason)].tile;
}

MmaTile kiln::selectMmaTile(int64_t m, int64_t n, int64_t k, int64_t batch, int64_t numSMs,
                            std::string &reason, bool tf32) {
  if (tf32)
    return kSm90Tf32Tiles[cheapestTile(kSm90Tf32Tiles, m, n, k, batch, numSMs, reason)].tile;
  return kSm90MmaTiles[cheapestTile(kSm90MmaTiles, m, n, k, batch, numSMs, reason)].tile;
}

FailureOr<MmaTile> kiln::parseMmaTile(StringRef spec) {
  SmallVector<StringRef> parts;
  spec.split(parts, 'x');
  if (parts.size() != 6)
    return failure();
  // Bounds first, so the arithmetic below cannot overflow: no valid tile has
  // an extent over 1024, more than 32 warps along a side, or 64 stages.
  constexpr int64_t kMax[6] = {1024, 1024, 1024, 32, 32, 64};
  int64_t v[6];
  for (auto [i, p] : llvm::enumerate(parts))
    if (p.getAsInteger(10, v[i]) || v[i] <= 0 || v[i] > kMax[i])
      return failure();
  MmaTile t{v[0], v[1], v[2], v[3], v[4], v[5]};
  // cuda/gemm_tc.cuh's rules: tile lines of 16, 32 or a multiple of 64
  // 16-bit elements (its swizzle), whole lines of 16-byte chunks per block.
  auto lineOk = [](int64_t n) { return n == 16 || n == 32 || n % 64 == 0; };
  int64_t threads = 32 * t.wm * t.wn;
  if (t.bm % (16 * t.wm) || t.bn % (8 * t.wn) || !lineOk(t.bk) || !lineOk(t.bm) ||
      !lineOk(t.bn) || t.stages < 2 || t.wm * t.wn > 32 ||
      threads % (t.bk / 8) || threads % (t.bm / 8) || threads % (t.bn / 8) ||
      t.stages * (t.bm + t.bn) * t.bk * 2 > 227 * 1024 ||
      // Each thread holds (BM/WM) x (BN/WN) / 32 fp32 accumulators; beyond
      // 128 they spill and NVRTC takes minutes.
      (t.bm / t.wm) * (t.bn / t.wn) / 32 > 128)
    return failure();
  return t;
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
    std::optional<MmaTile> override;
    if (!mmaTile.empty()) {
      FailureOr<MmaTile> t = parseMmaTile(mmaTile);
      if (failed(t)) {
        mlir::emitError(getOperation().getLoc())
            << "invalid mma-tile '" << mmaTile
            << "': expected BMxBNxBKxWMxWNxSTAGES with BM % (16*WM) == 0, BN % (8*WN) == 0, "
               "BM, BN and BK each 16, 32 or a multiple of 64 (at most 1024), 32*WM*WN threads a "
               "multiple of BM/8, BN/8 and BK/8, 2 <= STAGES <= 64, WM*WN <= 32, "
               "STAGES*(BM+BN)*BK*2 <= 227 KiB and at most 128 accumulators per thread "
               "((BM/WM)*(BN/WN)/32)";
        return signalPassFailure();
      }
      override = *t;
    }
    Builder builder(&getContext());
    auto precision = getOperation()->getAttrOfType<StringAttr>(kPrecisionAttrName);
    bool tf32 = precision && precision.getValue() == "tf32";
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
      int64_t m = shape[shape.size() - 2], n = shape.back();
      auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
      Type et = lhs.getElementType();
      bool sameType = cast<RankedTensorType>(matmul.getRhs().getType()).getElementType() == et;
      if (sameType && tf32 && et.isF32()) {
        std::string reason;
        MmaTile t = selectMmaTile(m, n, lhs.getShape().back(), batch, numSMs, reason, true);
        kernel->setAttr(kMmaTileAttrName, builder.getDenseI64ArrayAttr(
                                              {t.bm, t.bn, t.bk, t.wm, t.wn, t.stages}));
        kernel->setAttr(kTileReasonAttrName, builder.getStringAttr("tf32: " + reason));
        return;
      }
      if ((et.isF16() || et.isBF16()) && sameType) {
        std::string reason;
        if (wgmma && !override) {
          WgmmaTile w = selectWgmmaTile(m, n, lhs.getShape().back(), batch, numSMs, reason);
          kernel->setAttr(kWgmmaTileAttrName,
                          builder.getDenseI64ArrayAttr({w.bm, w.bn, w.bk, w.warpgroups, w.stages}));
          kernel->setAttr(kTileReasonAttrName, builder.getStringAttr(reason));
          return;
        }
        MmaTile t = selectMmaTile(m, n, lhs.getShape().back(), batch, numSMs, reason);
        if (override) {
          t = *override;
          reason = "set by mma-tile";
        }
        kernel->setAttr(kMmaTileAttrName, builder.getDenseI64ArrayAttr(
                                              {t.bm, t.bn, t.bk, t.wm, t.wn, t.stages}));
        kernel->setAttr(kTileReasonAttrName, builder.getStringAttr(reason));
        return;
      }
      GemmTile t = selectGemmTile(m, n, batch, numSMs);
      LLVM_DEBUG(llvm::dbgs() << kernel.getSymName() << ": tile " << t.bm << "x" << t.bn << "\n");
      kernel->setAttr(kGemmTileAttrName,
                      builder.getDenseI64ArrayAttr({t.bm, t.bn, t.bk, t.tm, t.tn, t.ks}));
    });
  }
};
} // namespace
