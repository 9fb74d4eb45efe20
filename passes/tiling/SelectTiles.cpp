//===- SelectTiles.cpp - GEMM and attention tile selection ----------------===//
//
// Chooses the tile of every GEMM and attention kernel for the module's
// `#kiln.target` (KilnTarget.cpp's table) with an occupancy-first cost
// model, and records it on the kernel as a typed attribute
// (`#kiln.gemm_tile`, `#kiln.mma_tile`, `#kiln.wgmma_tile`,
// `#kiln.attention_tile`) with the reason, for codegen.
//
// The candidate tables list the tiles the device templates are tested with;
// their cost-model constants were measured on an H200 (sm_90). The target
// enters through its SM count, its shared memory per block (tiles that do
// not fit are skipped) and per SM (co-resident blocks are capped by it);
// shared-memory sizes are the device templates' own (cuda/smem_sizes.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/decode_attention.cuh"
#include "compiler/codegen/cuda/smem_sizes.h"
#include "passes/Passes.h"

#include "llvm/Support/Debug.h"

#include <algorithm>
#include "llvm/Support/FormatVariadic.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "kiln-select-tiles"

namespace kiln {
#define GEN_PASS_DEF_SELECTTILES
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Blocks `target` can keep on one SM when each uses `smemBytes` of dynamic
/// shared memory, besides what the SM reserves per block (smem_per_sm less
/// smem_per_block: 1 KiB on sm_80 and newer).
int64_t blocksPerSmBySmem(TargetAttr target, int64_t smemBytes) {
  int64_t reserved = target.getSmemPerSm() - target.getSmemPerBlock();
  return target.getSmemPerSm() / (smemBytes + reserved);
}

/// CUDA-core GEMM tiles, largest first; each has 256 threads and BK = 32
/// (17 KB of static shared memory for the largest). The smallest splits each
/// K slice over 4 thread groups, so a block's K loop is 4x shorter: the
/// GEMMs of batch-1 inference have too few output tiles to fill the GPU
/// otherwise.
struct GemmTileRow {
  int64_t bm, bn, bk, tm, tn, ks;
};
constexpr GemmTileRow kGemmTiles[] = {
    {64, 64, 32, 4, 4, 1}, {32, 64, 32, 2, 4, 1}, {32, 32, 32, 2, 2, 1},
    {16, 32, 32, 1, 2, 1}, {16, 16, 32, 2, 2, 4},
};

/// A tensor-core tile candidate and the two numbers of its cost model:
/// `single`, the fraction of an SM's tensor-core rate one block reaches alone
/// (more warps hide more latency), and `cap`, the fraction several
/// co-resident blocks reach (bigger tiles reuse each shared-memory byte more
/// often). `occupancy` is blocks per SM by registers and shared memory on
/// sm_90; other targets cap it by their shared memory per SM.
struct MmaRow {
  int64_t bm, bn, bk, wm, wn, stages;
};
struct MmaCandidate {
  MmaRow tile;
  int64_t occupancy;
  double single, cap;
};
// Largest first: ties go to the larger tile (less re-read traffic).
constexpr MmaCandidate kMmaTiles[] = {
    {{128, 128, 32, 2, 4, 4}, 2, 0.60, 1.00}, {{128, 64, 32, 2, 2, 4}, 3, 0.40, 0.85},
    {{64, 128, 32, 2, 2, 4}, 3, 0.40, 0.85},  {{64, 64, 32, 2, 2, 4}, 4, 0.30, 0.70},
    {{32, 64, 64, 1, 2, 4}, 4, 0.15, 0.50},   {{32, 32, 64, 1, 2, 3}, 8, 0.10, 0.35},
    {{16, 64, 64, 1, 2, 4}, 5, 0.10, 0.35},
};
/// TF32 tiles (fp32 operands, `--precision tf32`): 4-byte elements double
/// the shared memory of each stage, so the 128x128 tile keeps 3 stages.
constexpr MmaCandidate kTf32Tiles[] = {
    {{128, 128, 32, 2, 4, 3}, 2, 0.60, 1.00}, {{128, 64, 32, 2, 2, 4}, 2, 0.40, 0.85},
    {{64, 128, 32, 2, 2, 4}, 2, 0.40, 0.85},  {{64, 64, 32, 2, 2, 4}, 3, 0.30, 0.70},
    {{32, 64, 64, 1, 2, 4}, 2, 0.15, 0.50},   {{32, 32, 64, 1, 2, 3}, 4, 0.10, 0.35},
    {{16, 64, 64, 1, 2, 4}, 2, 0.10, 0.35},
};

/// A wgmma tile with the same cost-model numbers as MmaCandidate. Only
/// configurations that test/gpu/gemm_wgmma_test.cu covers are listed; the
/// numbers follow its H200 benchmark (docs/results.md): 64x64 is best for the
/// batch-1 GEMMs (M = 128), 128x192 / 128x256 for M in the thousands.
struct WgmmaRow {
  int64_t bm, bn, bk, warpgroups, stages;
};
struct WgmmaCandidate {
  WgmmaRow tile;
  int64_t occupancy;
  double single, cap;
};
constexpr WgmmaCandidate kWgmmaTiles[] = {
    {{128, 256, 64, 2, 4}, 1, 0.66, 0.66}, {{128, 192, 64, 2, 4}, 1, 0.62, 0.62},
    {{128, 128, 64, 2, 4}, 1, 0.55, 0.55}, {{128, 64, 64, 2, 4}, 2, 0.40, 0.55},
    {{64, 128, 64, 1, 4}, 2, 0.35, 0.55},  {{64, 64, 64, 1, 4}, 3, 0.25, 0.50},
};

/// A candidate of the Hopper TMA GEMM (kiln::gemmSm90) and its cost model:
/// time = waves x (usPerMmac x the tile's multiply-adds per block / 1e6 +
/// usPerWave) + usFixed, waves = ceil(blocks / SMs), blocks = tiles x split_k
/// (a persistent block takes one tile per wave). The constants were fit by
/// least squares to test/gpu/gemm_sm90_test.cu --bench on an H200 (132 SMs,
/// 2026-12-01, docs/results.md): the 16 GEMM shapes of GPT-2, BERT and the
/// 0.8B Llama at batch 1 x 128 and 8 x 512 (Llama 4 x 512). Over them the
/// model's pick was within 2.2% of the fastest candidate (geometric mean)
/// and 18% at worst.
struct Sm90Candidate {
  int64_t bm, bn, consumers, stages, splitK;
  bool pingpong;
  double usPerMmac, usPerWave, usFixed;
};
constexpr Sm90Candidate kSm90Tiles[] = {
    {128, 256, 2, 4, 1, false, 0.3253, 8.83, -3.12},
    {256, 128, 2, 4, 1, false, 0.3237, 8.79, -3.62},
    {128, 192, 2, 5, 1, false, 0.3596, 5.73, -2.51},
    {128, 128, 2, 6, 1, false, 0.3566, 3.73, -1.10},
    {64, 256, 2, 5, 1, true, 0.3131, 2.43, 4.03},
    {128, 128, 2, 6, 1, true, 0.3400, 2.46, 2.63},
    {64, 192, 2, 6, 1, true, 0.4001, 1.46, 1.89},
    {64, 128, 2, 8, 1, true, 0.4585, 1.20, 1.01},
    {64, 128, 1, 6, 1, false, 0.4963, 2.45, -0.21},
    {128, 128, 2, 4, 2, false, 0.4291, 4.82, -1.71},
    {128, 128, 2, 4, 4, false, 0.4965, 4.59, -0.04},
    {64, 128, 1, 4, 2, false, 0.5659, 2.11, 0.71},
    {64, 128, 1, 4, 4, false, 0.6427, 2.02, 2.10},
    {64, 64, 1, 4, 4, false, 0.8579, 1.55, 1.82},
    {64, 64, 1, 4, 8, false, 1.0206, 1.66, 1.52},
};

int64_t smemBytes(const MmaRow &t, int64_t elemBytes) {
  return smem_bytes::gemmTc(elemBytes, t.bm, t.bn, t.bk, t.stages);
}
int64_t smemBytes(const WgmmaRow &t, int64_t elemBytes) {
  return smem_bytes::gemmWgmma(elemBytes, t.bm, t.bn, t.bk, t.stages);
}

/// Index of the candidate with the least estimated time for the busiest SM:
/// waves x co-resident blocks x tile area / the rate those blocks reach
/// together. K is the same for all tiles and drops out. Candidates whose
/// shared memory exceeds the target's per-block limit are skipped.
/// With K of at most two 64-wide slices (attention scores, K = head dim) the
/// pipeline has nothing to overlap and the fused epilogue dominates: only
/// tiles with two or more blocks per SM are considered (when any has), so
/// epilogue memory latency overlaps across blocks.
template <typename Candidate, size_t N>
size_t cheapestTile(const Candidate (&candidates)[N], int64_t elemBytes, int64_t m, int64_t n,
                    int64_t k, int64_t batch, TargetAttr target, std::string &reason,
                    llvm::function_ref<bool(const Candidate &)> allowed = nullptr) {
  const int64_t numSMs = target.getSmCount();
  int64_t occupancy[N];
  bool anyShared = false;
  for (size_t i = 0; i < N; ++i) {
    int64_t smem = smemBytes(candidates[i].tile, elemBytes);
    occupancy[i] = smem > target.getSmemPerBlock() || (allowed && !allowed(candidates[i]))
                       ? 0
                       : std::min(candidates[i].occupancy, blocksPerSmBySmem(target, smem));
    anyShared |= occupancy[i] >= 2;
  }
  const bool shortK = k <= 128 && anyShared;
  size_t best = N;
  double bestTime = 0;
  int64_t bestBlocks = 0, bestWaves = 0;
  for (size_t i = 0; i < N; ++i) {
    const Candidate &c = candidates[i];
    if (occupancy[i] < 1 || (shortK && occupancy[i] < 2))
      continue;
    int64_t blocks = ((m + c.tile.bm - 1) / c.tile.bm) * ((n + c.tile.bn - 1) / c.tile.bn) * batch;
    int64_t slots = numSMs * occupancy[i];
    int64_t waves = (blocks + slots - 1) / slots;
    int64_t perSM = std::min(occupancy[i], (blocks + numSMs - 1) / numSMs);
    double rate = std::min(c.cap, double(perSM) * c.single);
    double time = double(waves) * double(perSM) * double(c.tile.bm * c.tile.bn) / rate;
    if (best == N || time < bestTime) {
      best = i;
      bestTime = time;
      bestBlocks = blocks;
      bestWaves = waves;
    }
  }
  assert(best < N && "no tile candidate fits the target's shared memory");
  reason =
      llvm::formatv("{0} blocks on {1} SMs, {2} wave(s), est. {3:F0} units (K={4}{5})", bestBlocks,
                    numSMs, bestWaves, bestTime, k, shortK ? ", short K: >= 2 blocks per SM" : "")
          .str();
  return best;
}

} // namespace

GemmTileAttr kiln::selectGemmTile(int64_t m, int64_t n, int64_t batch, TargetAttr target) {
  auto blocks = [&](const GemmTileRow &t) {
    return ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn) * batch;
  };
  // Largest tile that still gives every SM a block; else the most blocks.
  const GemmTileRow *chosen = &kGemmTiles[std::size(kGemmTiles) - 1];
  for (const GemmTileRow &t : kGemmTiles)
    if (blocks(t) >= target.getSmCount()) {
      chosen = &t;
      break;
    }
  return GemmTileAttr::get(target.getContext(), chosen->bm, chosen->bn, chosen->bk, chosen->tm,
                           chosen->tn, chosen->ks);
}

WgmmaTileAttr kiln::selectWgmmaTile(int64_t m, int64_t n, int64_t k, int64_t batch,
                                    TargetAttr target, std::string &reason, bool mmaFallback) {
  assert(target.getTensorCores() == TensorCores::Wgmma && "the target has no wgmma");
  // The mma.sync path of a wgmma tile (compiled when the artifact also targets GPUs without
  // wgmma) keeps the block's 128 x warpgroups threads, and its cp.async loaders need the
  // threads to cover whole tile lines of an MN-major operand (BM / 8 or BN / 8 chunks):
  // 128 x 192 with 256 threads (24 chunks per line) does not compile there.
  auto fallbackCompiles = [&](const WgmmaCandidate &c) {
    int64_t threads = 128 * c.tile.warpgroups;
    return !mmaFallback || (threads % (c.tile.bn / 8) == 0 && threads % (c.tile.bm / 8) == 0);
  };
  const WgmmaRow &t =
      kWgmmaTiles[cheapestTile(kWgmmaTiles, 2, m, n, k, batch, target, reason,
                               llvm::function_ref<bool(const WgmmaCandidate &)>(fallbackCompiles))]
          .tile;
  return WgmmaTileAttr::get(target.getContext(), t.bm, t.bn, t.bk, t.warpgroups, t.stages);
}

/// Whether any tensor-core GEMM candidate of the table in use (TF32 with
/// `tf32`, wgmma with `wgmma`, else mma.sync) fits the target's shared memory
/// per block.
static bool anyTensorCoreTileFits(TargetAttr target, bool tf32, bool wgmma) {
  auto fits = [&](const auto &table, int64_t elemBytes) {
    return llvm::any_of(table, [&](const auto &c) {
      return smemBytes(c.tile, elemBytes) <= target.getSmemPerBlock();
    });
  };
  return tf32 ? fits(kTf32Tiles, 4) : wgmma ? fits(kWgmmaTiles, 2) : fits(kMmaTiles, 2);
}

Sm90GemmTileAttr kiln::selectSm90GemmTile(int64_t m, int64_t n, int64_t k, int64_t batch,
                                          TargetAttr target, std::string &reason, bool rowStats) {
  assert(target.getTensorCores() == TensorCores::Wgmma && "the target has no wgmma");
  const int64_t sms = target.getSmCount();
  const int64_t kSlices = (k + 63) / 64;
  const Sm90Candidate *best = nullptr;
  double bestTime = 0;
  int64_t bestBlocks = 0, bestWaves = 0;
  for (const Sm90Candidate &c : kSm90Tiles) {
    if (smem_bytes::gemmSm90(c.bm, c.bn, c.stages, c.consumers, rowStats) >
            target.getSmemPerBlock() ||
        (c.splitK > 1 && kSlices < 2 * c.splitK) || // at least 2 K slices per block of a cluster
        (rowStats && (c.splitK > 1 || c.bm > 128))) // row statistics: every K slice in one
                                                     // block, at most 2 rows per stats thread
      continue;
    const int64_t tiles = ((m + c.bm - 1) / c.bm) * ((n + c.bn - 1) / c.bn) * batch;
    const int64_t blocks = tiles * c.splitK;
    const int64_t waves = (blocks + sms - 1) / sms;
    const double mmac =
        double(c.bm * c.bn) * double((kSlices + c.splitK - 1) / c.splitK * 64) / 1e6;
    const double time = double(waves) * (c.usPerMmac * mmac + c.usPerWave) + c.usFixed;
    if (!best || time < bestTime) {
      best = &c;
      bestTime = time;
      bestBlocks = blocks;
      bestWaves = waves;
    }
  }
  if (!best) // no candidate fits the target's shared memory per block
    return {};
  reason =
      llvm::formatv("{0} blocks{1} on {2} SMs, {3} wave(s), est. {4:F1} us (K={5})", bestBlocks,
                    best->splitK > 1 ? " in clusters of " + std::to_string(best->splitK)
                                     : std::string(" (persistent)"),
                    sms, bestWaves, bestTime, k)
          .str();
  return Sm90GemmTileAttr::get(target.getContext(), best->bm, best->bn, best->consumers,
                               best->stages, best->splitK, best->pingpong);
}

SkinnyGemmTileAttr kiln::selectSkinnyGemmTile(int64_t rows, int64_t n, int64_t k, TargetAttr target,
                                              std::string &reason, SkinnyTensorCores tensorCores,
                                              bool rowStats, bool preload, int64_t occupancy,
                                              int64_t preloadRows) {
  const int64_t sms = target.getSmCount();
  const int64_t columnTiles = (n + 63) / 64;
  // The inner product: the tensor cores when asked for (auto: from kMinSkinnyTensorCoreRows
  // rows on) and their shared memory (the weight's cp.async rings and A as 16-bit values)
  // fits a block of the target.
  const int64_t tcSmem = smem_bytes::gemmSkinnyTc(rows, rowStats);
  const bool tcFits = target.getTensorCores() != TensorCores::None &&
                      tcSmem <= target.getSmemPerBlock();
  // The weight preloaded before the grid-dependency wait: the tensor cores (their rings are the
  // shared memory the weight lands in), with one block slot of each SM (by shared memory and by
  // registers, 80 per thread) left free, so the next GEMM's blocks fit beside this one's and
  // stream their weight while it runs. Only where an SM holds at least 3 blocks (1-2 rows): one
  // block per SM made the GEMMs alone too slow for the overlap to pay (H200, session 26 run 2:
  // the 0.8B Llama's decode_b1 graph 0.859 against 0.830 ms, its batch-8 step 1.394 against
  // 1.246 ms). Codegen preloads only a constant weight with 16-byte aligned rows; the reason
  // says so, since this pass does not trace the weight.
  // Above the rows whose default A chunk leaves that slot (1-2 on sm_90), up to `preloadRows`
  // (skinny-preload-rows): the longest shorter chunk with which it is left, A staged in several
  // passes while the weight's rings stay in flight (a batch-8 step's GEMMs: 512 K rows, 3 x
  // 74 KiB per SM).
  auto preloadSlots = [&](int64_t chunk) {
    return std::min(blocksPerSmBySmem(target, smem_bytes::gemmSkinnyTc(rows, rowStats, chunk)),
                    target.getRegsPerSm() / (256 * 80)) -
           1;
  };
  int64_t preloadPerSm = preloadSlots(0), preloadChunk = 0;
  if (preload && preloadPerSm < 2 && rows <= preloadRows)
    for (int64_t chunk = smem_bytes::skinnyTcChunk(rows) / 2; chunk >= 128; chunk /= 2)
      if (preloadSlots(chunk) >= 2) {
        preloadChunk = chunk;
        preloadPerSm = preloadSlots(chunk);
        break;
      }
  const bool preloaded = preload && tensorCores != SkinnyTensorCores::Off &&
                         target.getTensorCores() == TensorCores::Wgmma && tcFits &&
                         preloadPerSm >= 2;
  const bool tc = preloaded || (tcFits && (tensorCores == SkinnyTensorCores::On ||
                                           (tensorCores == SkinnyTensorCores::Auto &&
                                            rows >= kMinSkinnyTensorCoreRows)));
  std::string why;
  if (preloaded)
    why = "tensor cores, a constant weight's first stages preloaded before the grid-dependency "
          "wait (skinny-weight-preload" +
          (preloadChunk ? llvm::formatv("; A in chunks of {0} K rows so that 3 blocks fit an SM, "
                                        "skinny-preload-rows={1}",
                                        preloadChunk, preloadRows)
                              .str()
                        : std::string()) +
          ")";
  else if (tc)
    why = tensorCores == SkinnyTensorCores::On
              ? "tensor cores (skinny-tensor-cores=on)"
              : llvm::formatv("tensor cores ({0} rows >= {1}: the CUDA cores' FMAs would bound "
                              "it)",
                              rows, kMinSkinnyTensorCoreRows)
                    .str();
  else if (tensorCores == SkinnyTensorCores::Off)
    why = "CUDA cores (skinny-tensor-cores=off)";
  else if (!tcFits)
    why = llvm::formatv("CUDA cores (the tensor-core path's {0} bytes of shared memory do not "
                        "fit the target's block)",
                        tcSmem)
              .str();
  else
    why = llvm::formatv("CUDA cores ({0} rows < {1}: bound by the weight's bandwidth)", rows,
                        kMinSkinnyTensorCoreRows)
              .str();
  int64_t splitK = std::clamp<int64_t>((2 * sms + columnTiles - 1) / columnTiles, 1, 8);
  while (splitK > 1 && k / splitK < 128)
    --splitK;
  // Blocks of 256 threads one SM holds, by registers: ptxas gives gemmSkinny 48-80 registers
  // per thread up to 4 rows and 80-127 above (sm_90); the tensor-core path 64-80, and its
  // shared memory (about 97 KiB) allows 2. A split that makes a second wave of blocks is cut
  // back while the columns alone fit in one: at 8 rows the 0.8B Llama's QKV (48 column tiles
  // x 6 = 288 blocks) and gate/up (176 x 2) GEMMs ran in two waves of 264.
  const int64_t regsPerThread = tc ? 96 : rows <= 4 ? 80 : 128;
  int64_t perSm = target.getRegsPerSm() / (256 * regsPerThread);
  if (tc)
    perSm = std::min(perSm, blocksPerSmBySmem(target, tcSmem));
  if (preloaded)
    perSm = preloadPerSm; // one slot left for the next kernel's block
  // skinny-tc-occupancy: `occupancy` blocks per SM on the tensor cores, A staged in chunks short
  // enough for their shared memory (each chunk costs a block barrier and a round trip for A,
  // while the weight's ring stays in flight), the registers capped at the SM's share (at least
  // 64 per thread; ptxas gives the tensor-core path 64-80).
  int64_t aChunk = preloaded ? preloadChunk : 0, minBlocks = 0;
  std::string occupancyNote;
  if (occupancy > 0 && tc && !preloaded && occupancy > perSm) {
    if (target.getRegsPerSm() / (256 * occupancy) < 64) {
      occupancyNote = llvm::formatv("; not {0} blocks per SM: under 64 registers per thread",
                                    occupancy)
                          .str();
    } else {
      for (int64_t chunk = smem_bytes::skinnyTcChunk(rows); chunk >= 128 && !aChunk; chunk /= 2)
        if (blocksPerSmBySmem(target, smem_bytes::gemmSkinnyTc(rows, rowStats, chunk)) >=
            occupancy)
          aChunk = chunk;
      if (aChunk) {
        minBlocks = perSm = occupancy;
        occupancyNote = llvm::formatv("; A in chunks of at most {0} K rows for {1} blocks per "
                                      "SM (skinny-tc-occupancy)",
                                      aChunk, occupancy)
                            .str();
        if (aChunk == smem_bytes::skinnyTcChunk(rows))
          aChunk = 0; // the default chunk already fits
      } else {
        occupancyNote = llvm::formatv("; not {0} blocks per SM: no A chunk of at least 128 K "
                                      "rows fits their shared memory",
                                      occupancy)
                            .str();
      }
    }
  }
  perSm = std::max<int64_t>(1, perSm);
  const int64_t wave = perSm * sms;
  // Each column tile is one cluster of splitK blocks, and clusters are placed within a GPC, so
  // fewer fit at once than the slots suggest (residentClusters): at 8 rows on the tensor cores
  // (2 blocks per SM) the 0.8B Llama's QKV GEMM as 48 clusters of 5 took 13.0 us against 9.0
  // as 48 of 4, and o-proj / down as 32 clusters of 8 (30 resident) 10.2 / 17.3 us against
  // 7.9 / 12.7 at 6 / 7 (H200, gemm_skinny_test --bench, session 19; ncu, session 23).
  while (splitK > 1 && (columnTiles * splitK > wave ||
                        columnTiles > residentClusters(target, splitK, perSm)))
    --splitK;
  reason = llvm::formatv("skinny: {0} rows, {1} column tiles x split-K {2} = {3} blocks on {4} "
                         "SMs ({5} per SM{6}), the weight read once (K={7}); {8}{9}",
                         rows, columnTiles, splitK, columnTiles * splitK, sms, perSm,
                         preloaded ? ", one slot left for the next kernel" : "", k, why,
                         occupancyNote)
               .str();
  return SkinnyGemmTileAttr::get(target.getContext(), rows, splitK, tc, preloaded, false, aChunk,
                                 minBlocks);
}

MmaTileAttr kiln::selectMmaTile(int64_t m, int64_t n, int64_t k, int64_t batch, TargetAttr target,
                                std::string &reason, bool tf32) {
  const MmaRow &t =
      tf32 ? kTf32Tiles[cheapestTile(kTf32Tiles, 4, m, n, k, batch, target, reason)].tile
           : kMmaTiles[cheapestTile(kMmaTiles, 2, m, n, k, batch, target, reason)].tile;
  return MmaTileAttr::get(target.getContext(), t.bm, t.bn, t.bk, t.wm, t.wn, t.stages);
}

AttentionTileAttr kiln::selectAttentionTile(int64_t batch, int64_t heads, int64_t queries,
                                            int64_t headDim, TargetAttr target,
                                            std::string &reason) {
  // Candidates, largest query tile first. Head dims 65..128: 128 rows (4
  // warps x 2 row fragments, 32 keys: K/V shared-memory reads amortized over
  // 32 rows per warp), else 64, else 32 rows. Up to 64: 64 rows, else 32 (2
  // row fragments measured slower there, test/bench/bench_attention.py).
  // Above 128: one row fragment, 32 keys (registers).
  struct Cfg {
    int64_t warps, rowFragments, keyTile;
  };
  SmallVector<Cfg> cfgs;
  if (headDim > 128)
    cfgs = {{4, 1, 32}, {2, 1, 32}};
  else if (headDim > 64)
    cfgs = {{4, 2, 32}, {4, 1, 64}, {2, 1, 64}};
  else
    cfgs = {{4, 1, 64}, {2, 1, 64}};
  llvm::erase_if(cfgs, [&](const Cfg &c) {
    int64_t bm = 16 * c.rowFragments * c.warps;
    return smem_bytes::attentionTc(headDim, bm, c.keyTile) > target.getSmemPerBlock();
  });
  assert(!cfgs.empty() && "no attention tile fits the target's shared memory");
  // The largest query tile that still gives every SM a block, else the smallest.
  auto blocks = [&](const Cfg &c) {
    int64_t bm = 16 * c.rowFragments * c.warps;
    return (queries + bm - 1) / bm * heads * batch;
  };
  const Cfg *chosen = &cfgs.back();
  for (const Cfg &c : cfgs)
    if (blocks(c) >= target.getSmCount()) {
      chosen = &c;
      break;
    }
  auto tile = AttentionTileAttr::get(target.getContext(), chosen->warps, chosen->rowFragments,
                                     chosen->keyTile);
  reason = llvm::formatv("{0} blocks on {1} SMs, {2} query rows x {3} keys per tile{4}",
                         blocks(*chosen), target.getSmCount(), tile.getQueryTile(), chosen->keyTile,
                         blocks(*chosen) >= target.getSmCount()
                             ? ""
                             : " (fewer blocks than SMs: the smallest query tile)")
               .str();
  return tile;
}

std::optional<Sm90AttentionTileAttr>
kiln::selectSm90AttentionTile(int64_t batch, int64_t heads, int64_t queries, int64_t headDim,
                              bool masked, Sm90AttentionLaunch launch, TargetAttr target,
                              std::string &reason, bool paged) {
  // Two consumer warpgroups of 64 query rows (ping-pong), K and V tiles of 128 keys while the
  // consumers' registers hold O (padded head dim / 2 floats), S (keys / 2), P (keys / 4) and
  // about 32 more (attention_sm90.cuh's static_assert; 240 per consumer thread after
  // setmaxnreg), and a mask read per score (keys / 2 more) does not spill; else 64 keys with a
  // third stage. The first that fits the target's shared memory.
  // (attn90::Regs<2, paged>::kConsumer in cuda/attention_sm90.cuh.)
  constexpr int64_t kQueryTile = 128;
  const int64_t consumerRegs = paged ? 232 : 240;
  const int64_t padded = (headDim + 63) / 64 * 64;
  struct Cfg {
    int64_t keyTile, stages;
  };
  const Cfg cfgs[] = {{128, 2}, {64, 3}, {64, 2}};
  const Cfg *chosen = nullptr;
  for (const Cfg &c : cfgs) {
    const int64_t regs = padded / 2 + c.keyTile / 2 + c.keyTile / 4 + 32 +
                         (masked ? c.keyTile / 2 : 0);
    if (regs > consumerRegs ||
        smem_bytes::attentionSm90(headDim, kQueryTile, c.keyTile, c.stages) >
            target.getSmemPerBlock())
      continue;
    chosen = &c;
    break;
  }
  if (!chosen) {
    reason = llvm::formatv("head dim {0} does not fit the Hopper attention's registers and "
                           "shared memory",
                           headDim)
                 .str();
    return std::nullopt;
  }
  const int64_t blocks = (queries + kQueryTile - 1) / kQueryTile * heads * batch;
  if (blocks < target.getSmCount()) {
    reason = llvm::formatv("{0} query tiles of {1} rows on {2} SMs: fewer than one per SM",
                           blocks, kQueryTile, target.getSmCount())
                 .str();
    return std::nullopt;
  }
  const bool persistent =
      launch == Sm90AttentionLaunch::Persistent ||
      (launch == Sm90AttentionLaunch::Auto &&
       blocks <= kSm90AttentionPersistentWaves * target.getSmCount());
  std::string how = persistent ? "walked by persistent blocks" : "as blocks";
  if (launch == Sm90AttentionLaunch::Auto)
    how += llvm::formatv(" ({0} {1} waves)", persistent ? "at most" : "over",
                         kSm90AttentionPersistentWaves)
               .str();
  reason = llvm::formatv("Hopper TMA + wgmma: {0} query tiles {1} on {2} SMs, {3} query rows x "
                         "{4} keys per tile, {5} stages, ping-pong{6}",
                         blocks, how,
                         target.getSmCount(), kQueryTile, chosen->keyTile, chosen->stages,
                         masked ? ", masked" : "")
               .str();
  return Sm90AttentionTileAttr::get(target.getContext(), kQueryTile, chosen->keyTile,
                                    chosen->stages, /*pingpong=*/true, persistent);
}

FailureOr<MmaTileAttr> kiln::parseMmaTile(StringRef spec, TargetAttr target, std::string &error) {
  SmallVector<StringRef> parts;
  spec.split(parts, 'x');
  int64_t v[6];
  bool ok = parts.size() == 6;
  for (size_t i = 0; ok && i < 6; ++i)
    ok = !parts[i].getAsInteger(10, v[i]);
  if (!ok) {
    error = "expected BMxBNxBKxWMxWNxSTAGES, six integers, e.g. 128x128x32x2x4x4";
    return failure();
  }
  MLIRContext *ctx = target.getContext();
  // The tile rules are #kiln.mma_tile's verifier; its message is the reason.
  std::string message;
  auto emitError = [&]() { return mlir::emitError(UnknownLoc::get(ctx)); };
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  MmaTileAttr tile = MmaTileAttr::getChecked(emitError, ctx, v[0], v[1], v[2], v[3], v[4], v[5]);
  if (!tile) {
    error = message;
    return failure();
  }
  int64_t smem = smem_bytes::gemmTc(2, v[0], v[1], v[2], v[5]);
  if (smem > target.getSmemPerBlock()) {
    error = llvm::formatv("its {0} bytes of shared memory (STAGES*(BM+BN)*BK*2) exceed {1}'s "
                          "{2} bytes per block",
                          smem, target.getName(), target.getSmemPerBlock())
                .str();
    return failure();
  }
  return tile;
}

namespace {

/// The element type every operand of `op` has, or null when they differ.
Type commonElementType(Operation *op) {
  Type et;
  for (Value v : op->getOperands()) {
    Type t = cast<RankedTensorType>(v.getType()).getElementType();
    if (et && t != et)
      return {};
    et = t;
  }
  return et;
}

struct SelectTilesPass : public kiln::impl::SelectTilesBase<SelectTilesPass> {
  using SelectTilesBase::SelectTilesBase;

  /// Sets the tile of the GEMM kernel `kernel` (anchored on `matmul`).
  LogicalResult selectForGemm(KernelOp kernel, MatMulOp matmul, TargetAttr target,
                              std::optional<MmaTileAttr> override, bool tf32) {
    ArrayRef<int64_t> shape = matmul.getType().getShape();
    int64_t batch = 1;
    for (int64_t d : shape.drop_back(2))
      batch *= d;
    int64_t m = shape[shape.size() - 2], n = shape.back();
    int64_t k = cast<RankedTensorType>(matmul.getLhs().getType()).getShape().back();
    Type et = commonElementType(matmul);
    bool sixteenBit = et && (et.isF16() || et.isBF16());
    bool tensorCores = sixteenBit || (tf32 && et && et.isF32());
    // A norm folded into this GEMM (kiln-fuse-norm-into-gemm): only the Hopper GEMM computes
    // its row statistics, or for an RMS norm in the A loader of a few-row GEMM (the statistics
    // of x, not of the matmul's lhs x * scale), kiln::gemmSkinnyRms.
    RowStatsOp rowStatsOp = getRowStats(kernel);
    const bool rowStats = bool(rowStatsOp);
    const bool fewRowStats = rowStats && rowStatsOp.getInput() != matmul.getLhs();
    if (rowStats && !(sixteenBit && sm90Gemm && !wgmma && !override &&
                      target.getTensorCores() == TensorCores::Wgmma))
      return kernel.emitError() << "unsupported: kernel @" << kernel.getSymName()
                                << " holds kiln.row_stats (a norm folded into its GEMM), which "
                                   "only the Hopper TMA GEMM and the few-row GEMM compute (16-bit "
                                   "operands, an sm_90 target, sm90-gemm on, no wgmma or mma-tile "
                                   "override); run kiln-fuse-norm-into-gemm only there";
    if (fewRowStats && !(skinnyGemm && rowStatsOp.getRms() && isFewRowGemm(matmul)))
      return kernel.emitError() << "unsupported: kernel @" << kernel.getSymName()
                                << " holds the kiln.row_stats of an RMS norm folded into its A "
                                   "loader, which only the few-row GEMM computes (skinny-gemm on, "
                                   "an RMS norm, 1..16 rows, N % 4 == 0, K >= 64)";
    if (tensorCores && target.getTensorCores() == TensorCores::None)
      return kernel.emitError() << "unsupported: the " << et << " GEMM of kernel @"
                                << kernel.getSymName()
                                << " needs tensor cores (sm_80 or newer); the target is "
                                << target.getName();
    // A kernel planned before (a second kiln-select-tiles, a hand-written
    // plan) is planned again from scratch: codegen prefers a Hopper tile
    // when there is one, so a stale one must not survive.
    for (StringRef name : {kGemmTileAttrName, kMmaTileAttrName, kWgmmaTileAttrName,
                           kSm90GemmTileAttrName, kSkinnyGemmTileAttrName, kTileReasonAttrName})
      kernel->removeAttr(name);
    if (tensorCores &&
        !anyTensorCoreTileFits(target, !sixteenBit, sixteenBit && wgmma && !override))
      return kernel.emitError() << "unsupported: no tensor-core GEMM tile of kernel @"
                                << kernel.getSymName() << " fits the " << target.getSmemPerBlock()
                                << " bytes of shared memory per block of target "
                                << target.getName();
    std::string reason;
    if (sixteenBit && wgmma && !override) {
      WgmmaTileAttr w = selectWgmmaTile(m, n, k, batch, target, reason, wgmmaMmaFallback);
      kernel->setAttr(kWgmmaTileAttrName, w);
    } else if (sixteenBit && sm90Gemm && !override &&
               target.getTensorCores() == TensorCores::Wgmma) {
      // The TMA GEMM (when a candidate fits the target's shared memory), and
      // the mma.sync tile for operands TMA cannot read.
      std::string sm90Reason;
      Sm90GemmTileAttr sm90 =
          fewRowStats ? Sm90GemmTileAttr()
                      : selectSm90GemmTile(m, n, k, batch, target, sm90Reason, rowStats);
      if (!sm90 && rowStats && !fewRowStats)
        return kernel.emitError() << "unsupported: no Hopper GEMM tile with row statistics of "
                                     "kernel @"
                                  << kernel.getSymName() << " fits the target's shared memory";
      kernel->setAttr(kMmaTileAttrName, selectMmaTile(m, n, k, batch, target, reason));
      if (sm90) {
        kernel->setAttr(kSm90GemmTileAttrName, sm90);
        reason = "sm90: " + sm90Reason + "; mma.sync if TMA cannot read an operand: " + reason;
      }
      // A decode step's GEMM: few rows in all (the batch folds into the rows when the weight
      // is shared by it), read at memory bandwidth by kiln::gemmSkinny.
      if (skinnyGemm && (!rowStats || fewRowStats) && isFewRowGemm(matmul)) {
        std::string skinnyReason;
        SkinnyGemmTileAttr skinny = selectSkinnyGemmTile(
            fewRowGemmRows(matmul), n, k, target, skinnyReason, skinnyTensorCores, fewRowStats,
            skinnyWeightPreload, skinnyTcOccupancy, skinnyPreloadRows);
        if (skinnyL2Prefetch)
          skinny = SkinnyGemmTileAttr::get(&getContext(), skinny.getRows(), skinny.getSplitK(),
                                           skinny.getTensorCores(), skinny.getPreload(), true,
                                           skinny.getAChunk(), skinny.getMinBlocksPerSm());
        kernel->setAttr(kSkinnyGemmTileAttrName, skinny);
        reason = fewRowStats ? skinnyReason + "; the RMS norm in the A loader (no other GEMM "
                                              "computes it)"
                             : skinnyReason + "; " + reason;
      }
    } else if (tensorCores) {
      MmaTileAttr t = selectMmaTile(m, n, k, batch, target, reason, !sixteenBit);
      if (sixteenBit && override) {
        t = *override;
        reason = "set by mma-tile";
      }
      kernel->setAttr(kMmaTileAttrName, t);
      if (!sixteenBit)
        reason = "tf32: " + reason;
    } else {
      GemmTileAttr t = selectGemmTile(m, n, batch, target);
      LLVM_DEBUG(llvm::dbgs() << kernel.getSymName() << ": " << t << "\n");
      kernel->setAttr(kGemmTileAttrName, t);
      return success();
    }
    kernel->setAttr(kTileReasonAttrName, StringAttr::get(&getContext(), reason));
    return success();
  }

  /// Sets the tensor-core tile of the attention kernel `kernel` when its
  /// types allow the tensor-core kernel (16-bit storage, D == Dv a multiple
  /// of 16); codegen falls back to the CUDA-core kernel otherwise.
  void selectForAttention(KernelOp kernel, AttentionOp attention, TargetAttr target) {
    kernel->removeAttr(kAttentionTileAttrName); // planned again from scratch
    kernel->removeAttr(kSm90AttentionTileAttrName);
    kernel->removeAttr(kTileReasonAttrName);
    auto q = cast<RankedTensorType>(attention.getQuery().getType());
    auto v = cast<RankedTensorType>(attention.getValue().getType());
    Type et = q.getElementType();
    int64_t d = q.getDimSize(3);
    if (!(et.isF16() || et.isBF16()) || target.getTensorCores() == TensorCores::None ||
        d != v.getDimSize(3) || d % 16 || d > kMaxAttentionHeadDim)
      return;
    std::string reason;
    AttentionTileAttr tile =
        selectAttentionTile(q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), d, target, reason);
    kernel->setAttr(kAttentionTileAttrName, tile);
    // The Hopper kernel beside it (codegen falls back to the mma.sync tile when TMA cannot read
    // Q, K or V); its reason first, or why it was not chosen.
    kernel->removeAttr(kSm90AttentionTileAttrName);
    if (sm90Attention && target.getTensorCores() == TensorCores::Wgmma) {
      std::string why;
      std::optional<Sm90AttentionTileAttr> sm90 =
          selectSm90AttentionTile(q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), d,
                                  bool(attention.getMask()), sm90AttentionPersistent, target, why);
      if (sm90) {
        kernel->setAttr(kSm90AttentionTileAttrName, *sm90);
        reason = why + "; else mma.sync: " + reason;
      } else {
        reason = "mma.sync (" + why + "): " + reason;
      }
    }
    kernel->setAttr(kTileReasonAttrName, StringAttr::get(&getContext(), reason));
  }

  /// A decode step's paged attention (the decode kernel): the keys of each (sequence, KV group)
  /// split over a cluster of blocks (`#kiln.split_kv`), as many as fill one wave of resident
  /// blocks (decode::recommendedMaxSplits for the cache's capacity), at most 8 (a portable
  /// cluster). Clusters need sm_90 on every target, the condition the Hopper GEMM has too
  /// (sm90-gemm; kiln-compile turns it off for other targets); one block per group otherwise.
  void selectSplitKv(KernelOp kernel, PagedAttentionOp attention, TargetAttr target) {
    if (!splitKv || !sm90Gemm || target.getTensorCores() != TensorCores::Wgmma)
      return;
    auto q = cast<RankedTensorType>(attention.getQuery().getType());
    auto pool = cast<RankedTensorType>(attention.getKeyCache().getType());
    auto table = cast<RankedTensorType>(attention.getBlockTable().getType());
    const int64_t d = q.getDimSize(3), hq = q.getDimSize(1), hkv = pool.getDimSize(1);
    const int elemBytes = int(getElementByteSize(q.getElementType()));
    const int64_t capacity = table.getDimSize(1) * pool.getDimSize(2);
    const int groupRows = int(hq / hkv * q.getDimSize(2));
    if (d % 16 || d > 256 || capacity > INT32_MAX || groupRows < 1 ||
        decode::smemBytes(elemBytes, int(d), groupRows, /*cluster=*/true) >
            target.getSmemPerBlock())
      return; // the partial the cluster combines does not fit beside the pipeline
    int slots = std::min(
        8, decode::recommendedMaxSplits(int(q.getDimSize(0)), int(hkv), groupRows, int(capacity),
                                        int(target.getSmCount()), elemBytes, int(d),
                                        target.getSmemPerSm(), /*cluster=*/true));
    // Each (sequence, KV group, row block) is one cluster of `slots` blocks, and clusters are
    // placed within a GPC, so fewer fit at once than the block slots suggest
    // (kiln::residentClusters): a cut that keeps every cluster in one wave. At batch 8 the 0.8B
    // Llama's decode attention ran 64 clusters of 6 with 62 resident, a second wave for 2 of
    // them (14.2 us; ncu on the H200, session 23); 5 slots keep all 64 in one.
    const int64_t clusters =
        q.getDimSize(0) * hkv * decode::rowBlocks(elemBytes, groupRows);
    const int64_t perSm =
        decode::residentBlocks(elemBytes, int(d), groupRows, target.getSmemPerSm(), true);
    const int unclustered = slots;
    while (slots > 1 && clusters > residentClusters(target, slots, perSm))
      --slots;
    if (slots < 2)
      return;
    kernel->setAttr(kSplitKvAttrName,
                    SplitKvAttr::get(&getContext(), slots, decodeAttentionPreload));
    std::string cut;
    if (slots != unclustered)
      cut = llvm::formatv(", cut from {0} so that all {1} clusters are resident at once", unclustered,
                          clusters)
                .str();
    kernel->setAttr(
        kTileReasonAttrName,
        StringAttr::get(
            &getContext(),
            llvm::formatv("decode kernel: the keys of each of the {0} (sequence, KV group) "
                          "pairs split over a cluster of {1} blocks ({2} SMs, a "
                          "capacity of {3} tokens, chunks of at least {4} keys{5}){6}",
                          q.getDimSize(0) * hkv, slots, target.getSmCount(), capacity,
                          decode::kMinSplitKeys, cut,
                          decodeAttentionPreload
                              ? "; lengths, block table and cached rows of the "
                                "first tiles read before the grid-dependency wait"
                              : "")
                .str()));
  }

  /// A prefill chunk's paged attention (kPrefillAttentionMinQueries new tokens or more per
  /// sequence, 16-bit, D a multiple of 16): the tensor-core attention kernel over the paged
  /// cache (kiln::prefillAttentionPaged) with the tile selectAttentionTile gives; without a tile
  /// codegen keeps the decode kernel (one KV group's rows per block, 16 keys per softmax step).
  void selectForPagedAttention(KernelOp kernel, PagedAttentionOp attention, TargetAttr target) {
    kernel->removeAttr(kAttentionTileAttrName);
    kernel->removeAttr(kSm90AttentionTileAttrName);
    kernel->removeAttr(kSplitKvAttrName);
    kernel->removeAttr(kTileReasonAttrName);
    auto q = cast<RankedTensorType>(attention.getQuery().getType());
    Type et = q.getElementType();
    const int64_t d = q.getDimSize(3), queries = q.getDimSize(2);
    if (!(et.isF16() || et.isBF16()) || target.getTensorCores() == TensorCores::None ||
        d % 16 || d > kMaxAttentionHeadDim || queries < kPrefillAttentionMinQueries) {
      selectSplitKv(kernel, attention, target);
      return;
    }
    std::string reason;
    AttentionTileAttr tile =
        selectAttentionTile(q.getDimSize(0), q.getDimSize(1), queries, d, target, reason);
    kernel->setAttr(kAttentionTileAttrName, tile);
    reason = "tensor-core attention over the paged cache, " + reason;
    // The Hopper kernel beside it (codegen keeps the mma.sync tile when TMA cannot read the
    // query): its key tiles are one TMA box inside a cache block, or whole blocks of a multiple
    // of 8 tokens (each box on a 1024-byte swizzle atom).
    if (sm90Attention && sm90PrefillAttention &&
        target.getTensorCores() == TensorCores::Wgmma) {
      const int64_t blockSize =
          cast<RankedTensorType>(attention.getKeyCache().getType()).getDimSize(2);
      std::string why;
      std::optional<Sm90AttentionTileAttr> sm90 =
          selectSm90AttentionTile(q.getDimSize(0), q.getDimSize(1), queries, d,
                                  /*masked=*/false, sm90AttentionPersistent, target, why,
                                  /*paged=*/true);
      if (sm90) {
        const int64_t bn = sm90->getKeyTile();
        if (blockSize % bn == 0 || (bn % blockSize == 0 && blockSize % 8 == 0)) {
          kernel->setAttr(kSm90AttentionTileAttrName, *sm90);
          reason = why + ", K/V through the block table (blocks of " +
                   std::to_string(blockSize) + " tokens); else mma.sync: " + reason;
        } else {
          reason = llvm::formatv("mma.sync (the Hopper kernel's {0}-key tiles do not split into "
                                 "cache blocks of {1} token{2}): ",
                                 bn, blockSize, blockSize == 1 ? "" : "s")
                       .str() +
                   reason;
        }
      } else {
        reason = "mma.sync (" + why + "): " + reason;
      }
    }
    kernel->setAttr(kTileReasonAttrName,
                    StringAttr::get(&getContext(), "prefill chunk of " + std::to_string(queries) +
                                                       " tokens: " + reason));
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    TargetAttr target = getTargetOrDefault(func);
    if (wgmma && target.getTensorCores() != TensorCores::Wgmma) {
      // An option error: report it at the function without dumping its IR.
      mlir::emitError(func.getLoc())
          << "wgmma=true needs a target with wgmma tensor cores (sm_90), but the target is "
          << target.getName();
      return signalPassFailure();
    }
    std::optional<MmaTileAttr> override;
    if (!mmaTile.empty()) {
      std::string error;
      FailureOr<MmaTileAttr> t = parseMmaTile(mmaTile, target, error);
      if (failed(t)) {
        mlir::emitError(func.getLoc()) << "invalid mma-tile '" << mmaTile << "': " << error;
        return signalPassFailure();
      }
      override = *t;
    }
    if (skinnyPreloadRows < 2 || skinnyPreloadRows > 16) {
      mlir::emitError(func.getLoc())
          << "skinny-preload-rows must be 2..16 rows, got " << int64_t(skinnyPreloadRows);
      return signalPassFailure();
    }
    if (skinnyTcOccupancy != 0 && (skinnyTcOccupancy < 2 || skinnyTcOccupancy > 4)) {
      mlir::emitError(func.getLoc())
          << "skinny-tc-occupancy must be 0 (the default plan) or 2..4 blocks per SM, got "
          << int64_t(skinnyTcOccupancy);
      return signalPassFailure();
    }
    bool tf32 = getPrecision(func) == Precision::TF32;
    WalkResult result = func.walk([&](KernelOp kernel) {
      for (Operation &op : kernel.getBodyBlock()) {
        if (auto matmul = dyn_cast<MatMulOp>(op))
          if (failed(selectForGemm(kernel, matmul, target, override, tf32)))
            return WalkResult::interrupt();
        if (auto attention = dyn_cast<AttentionOp>(op))
          selectForAttention(kernel, attention, target);
        if (auto paged = dyn_cast<PagedAttentionOp>(op))
          selectForPagedAttention(kernel, paged, target);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
