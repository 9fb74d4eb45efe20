// persistent_decode_bench.cu - how close a persistent batch-1 decode step can get to the copy
// bandwidth on this GPU: the experiment behind docs/generation.md "Not done" item 0 (a persistent
// decode layer), before kiln's code generator is changed to emit one.
//
// The step is the 0.8B Llama's of the generation benchmark (hidden 2048, 16 layers, 32 query and
// 8 KV heads of 64, intermediate 5632, vocabulary 32000, fp16 weights): per layer an RMS norm and
// the QKV GEMV [3072 x 2048], an attention stage (here only its grid barrier: at a 128-token cache
// its K/V are 4.2 MB of the step's 1578 MB), the o-proj GEMV [2048 x 2048] + residual, an RMS norm
// and the gate/up GEMV [11264 x 2048], SiLU(gate) * up, the down GEMV [2048 x 5632] + residual;
// then the final norm and the lm_head GEMV [32000 x 2048]. The math is the layer's; the attention
// output is replaced by the first 2048 QKV sums.
//
// One cooperative launch of one block per SM runs the whole step. Each weight is stored as tiles
// of 16 rows x 512 columns (16 KiB contiguous: kiln stores constants in whatever layout its kernels
// want); a block takes every G-th tile of each GEMV (split-K over 512-column chunks, partial sums
// added to fp32 accumulators with atomics). A producer warp streams the block's tiles of the whole
// step, in order, into a ring of shared-memory stages with 1-D bulk copies (cp.async.bulk, one
// mbarrier per stage), never waiting for activations: weights do not depend on them, so the ring
// fills with the next GEMV's tiles while the block waits at the grid barrier between stages (the
// "no bubbles" megakernel design; Hazy Research, "Look Ma, No Bubbles!", 2025). Eight consumer
// warps compute; between stages every block waits at a grid-wide barrier (one self-resetting
// counter, as cooperative groups' grid sync), then builds the stage's input vector from the
// previous accumulators (norm, residual, SiLU) in shared memory.
//
// Printed: the copy bandwidth (1 GiB copied by a kernel, counted as 2 GiB moved, as bench_generate.py
// measures it with torch's copy_, so that a step's bytes read over its time compare as in the benchmark), then
// per ring depth and with / without the prefetch across stages the step time and its fraction of
// the copy bandwidth, and once without waiting at the barriers (the streaming ceiling of this
// GEMV loop: the sums are then wrong); then the same loop as a kernel per stage in a CUDA graph,
// with and without programmatic dependent launch (how kiln runs a step today); a check of the logits against one plain kernel per GEMV (fp32 sums in
// another order: max|err| / max|ref| <= 1e-3). Exit 0, 1 when the check fails, 77 without a GPU.
//
//   test/gpu/build_gpu_test.sh persistent_decode_bench OUT && OUT [--layers N] [--iters N]
#include "gpu_test_util.h"

#include "kiln/gemm_sm90.cuh" // sm90:: mbarrier and named-barrier wrappers

namespace {

constexpr int kHidden = 2048, kInter = 5632, kQkv = 3072, kVocab = 32000;
constexpr int kTileRows = 16, kTileCols = 512, kTileElems = kTileRows * kTileCols;
constexpr unsigned kTileBytes = kTileElems * 2;
constexpr int kConsumerWarps = 8, kThreads = (kConsumerWarps + 1) * 32;
constexpr int kMaxRing = 12;
constexpr float kEps = 1e-6f;

/// How a stage builds its GEMV input vector x (K floats) in shared memory.
enum Input : int {
  kNormResidual,  // QKV of layer l: x = rms(resid[l]); resid[0] given, else mid[l-1] + down[l-1]
  kBarrierOnly,   // the attention stage: no GEMV, only the barrier (and zeroing)
  kAttention,     // o-proj: x = the first 2048 QKV sums (stands in for the attention output)
  kNormMid,       // gate/up: mid[l] = resid[l] + o[l] (written by slices); x = rms(mid[l])
  kSwiGlu,        // down: x[i] = silu(gu[i]) * gu[I + i]
  kNormFinal,     // lm_head: x = rms(mid[L-1] + down[L-1])
};

struct Stage {
  int input;
  int n, k;             // GEMV rows (outputs) and columns
  const __half *w;      // tiles of 16 x 512, row-group major
  float *acc;           // n fp32 sums (zeroed by the previous stage)
  const float *a, *b;   // the accumulators / residuals the input is built from
  float *write;         // kNormMid: mid[l]; kNormResidual (l > 0): resid[l] (for the check)
};

constexpr int kMaxStages = 5 * 32 + 1;
struct Step {
  int stages;
  Stage s[kMaxStages];
};
/// The persistent kernel's stages (9 KB: constant memory rather than parameters).
__constant__ Step cStep;

__device__ __forceinline__ unsigned smemAddr(const void *p) {
  return unsigned(__cvta_generic_to_shared(p));
}
using kiln::sm90::mbarArrive; // the mbarrier wrappers of the Hopper GEMM
using kiln::sm90::mbarArriveExpectTx;
using kiln::sm90::mbarInit;
using kiln::sm90::mbarWait;
/// 1-D bulk copy of `bytes` (a multiple of 16, 16-byte aligned) from global to shared memory,
/// completing on the mbarrier `bar`.
__device__ __forceinline__ void bulkLoad(unsigned dst, const void *src, unsigned bytes,
                                         unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
               "[%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ unsigned ldAcquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
/// The consumer warps' barrier (named barrier 1; the producer warp never joins it).
__device__ __forceinline__ void consumersSync() { kiln::sm90::namedBarrier(1, kConsumerWarps * 32); }

/// Tiles of a stage: (n / 16) row groups x (k / 512) column chunks.
__host__ __device__ inline int tilesOf(const Stage &s) {
  return s.input == kBarrierOnly ? 0 : (s.n / kTileRows) * (s.k / kTileCols);
}

/// Sum over the consumer threads (all of them get it).
__device__ float consumersSum(float v, float *scratch) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32;
  consumersSync();
  if (threadIdx.x % 32 == 0)
    scratch[warp] = v;
  consumersSync();
  float t = 0;
  for (int w = 0; w < kConsumerWarps; ++w)
    t += scratch[w];
  return t;
}

/// Consumer loops: kSession28 as session 28 wrote it (per row, each lane reads its 16 x values
/// from shared memory again, 2-way bank conflicts: about 770 shared-memory wavefronts per 16 KiB
/// tile with the bulk copy's writes, where streaming at the DRAM rate leaves about 860 cycles per
/// tile and SM; the input vector's global loads one iteration at a time); kFast: a lane's 16 x
/// values in registers for as long as its tiles stay in one 512-column chunk (with 132 blocks, a
/// whole stage: 132 is a multiple of 4 and of 11 chunks), about 256 wavefronts per tile, and the
/// input's global loads all issued before any is used.
/// kOwner (session 34): each consumer warp takes whole tiles (every eighth of the block's), all 16
/// rows: tiles in flight through the consumers at once instead of one, 128 shared-memory
/// wavefronts per tile (each weight read once, conflict-free), the 16 row sums folded across the
/// lanes in 16 shuffles (a transpose-reduce) instead of 80, and a slot freed by its one warp.
/// Its ring must be a multiple of the consumer warps (8): each slot then has one consumer warp,
/// which waits for its phases in order. (With ring 4, tile i + 4 went to another warp, whose wait
/// for the slot's next phase passed while the slot's current load was still in flight: a parity
/// wait cannot tell a phase two ahead from the one before; session 34's run 2 hung there.)
enum Consumer : int { kSession28 = 0, kFast = 1, kOwner = 2 };
/// persistentStep's flags.
enum StepFlags : int { kWaitAtBarriers = 1, kSkipTiles = 2, kSkipBuilds = 4, kChunkBuilds = 8 };

/// xr = the lane's 16 values of x's 512-column chunk `chunk`: x[512 chunk + 8 (lane + 32 h) + e]
/// at xr[8 h + e], the columns whose weights the lane reads in dotRow.
__device__ __forceinline__ void loadChunk(const float *x, int chunk, int lane, float (&xr)[16]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float *xp = x + chunk * kTileCols + (lane + 32 * h) * 8;
    const float4 x0 = *reinterpret_cast<const float4 *>(xp);
    const float4 x1 = *reinterpret_cast<const float4 *>(xp + 4);
    xr[8 * h + 0] = x0.x, xr[8 * h + 1] = x0.y, xr[8 * h + 2] = x0.z, xr[8 * h + 3] = x0.w;
    xr[8 * h + 4] = x1.x, xr[8 * h + 5] = x1.y, xr[8 * h + 6] = x1.z, xr[8 * h + 7] = x1.w;
  }
}

/// The lane's part of row `row` of a 16 x 512 fp16 tile times its chunk of x (loadChunk): 16
/// products in fp32 (the caller sums the lanes).
__device__ __forceinline__ float dotRow(const __half *tile, int row, int lane,
                                        const float (&xr)[16]) {
  float sum = 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint4 wv = *reinterpret_cast<const uint4 *>(tile + row * kTileCols + (lane + 32 * h) * 8);
    const __half2 *w2 = reinterpret_cast<const __half2 *>(&wv);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = __half22float2(w2[e]);
      sum += f.x * xr[8 * h + 2 * e] + f.y * xr[8 * h + 2 * e + 1];
    }
  }
  return sum;
}

/// One fold of kOwner's transpose-reduce: rows r and r + HALF of lanes that differ in the lane
/// mask 2 * HALF; a lane with that bit set keeps the upper row.
template <int HALF> __device__ __forceinline__ void foldRows(float (&v)[kTileRows], int lane) {
  const bool hi = (lane & (2 * HALF)) != 0;
#pragma unroll
  for (int r = 0; r < HALF; ++r) {
    const float keep = hi ? v[r + HALF] : v[r], send = hi ? v[r] : v[r + HALF];
    v[r] = keep + __shfl_xor_sync(0xffffffffu, send, 2 * HALF);
  }
}

/// kChunkBuilds (a timing part of the owner loop): x[512 c, 512 c + 512) only, the one chunk
/// a block's tiles of a stage use when the grid is a multiple of the stage's chunks (132: 4 and
/// 11), without the RMS norms' block-wide sum (the norm stages' sums are then unscaled: wrong,
/// as an experiment in what the build's latency is made of). Two values per consumer thread.
__device__ void buildChunk(const Stage &s, float *x, int c) {
  constexpr int nt = kConsumerWarps * 32;
  const int t = threadIdx.x;
  float a[2], b[2];
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int i = c * kTileCols + t + j * nt;
    a[j] = __ldcg(s.a + i);
    b[j] = s.input == kSwiGlu ? __ldcg(s.a + kInter + i)
           : (s.input != kAttention && s.b) ? __ldcg(s.b + i)
                                            : 0.0f;
  }
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int i = c * kTileCols + t + j * nt;
    x[i] = s.input == kSwiGlu ? a[j] / (1.0f + __expf(-a[j])) * b[j] : a[j] + b[j];
  }
}

/// x (shared) = the stage's input vector, by the consumer threads, every global load issued
/// before the first is used (kFast).
__device__ void buildInputBatched(const Stage &s, float *x, float *scratch) {
  constexpr int nt = kConsumerWarps * 32, kPer = (kInter + nt - 1) / nt;
  const int t = threadIdx.x;
  float a[kPer], b[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = t + j * nt;
    a[j] = i < s.k ? __ldcg(s.a + i) : 0.0f;
    b[j] = 0.0f;
    if (s.input == kSwiGlu)
      b[j] = i < s.k ? __ldcg(s.a + kInter + i) : 0.0f;
    else if (s.input != kAttention && s.b)
      b[j] = i < s.k ? __ldcg(s.b + i) : 0.0f;
  }
  if (s.input == kAttention || s.input == kSwiGlu) {
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = t + j * nt;
      if (i < s.k)
        x[i] = s.input == kSwiGlu ? a[j] / (1.0f + __expf(-a[j])) * b[j] : a[j];
    }
    return;
  }
  const int per = (s.k + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = lo + per;
  float ss = 0;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = t + j * nt;
    a[j] += b[j];
    ss += a[j] * a[j]; // zero past k
    if (s.write && i < s.k && i >= lo && i < hi)
      s.write[i] = a[j];
  }
  const float r = rsqrtf(consumersSum(ss, scratch) / float(s.k) + kEps);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = t + j * nt;
    if (i < s.k)
      x[i] = a[j] * r;
  }
}

/// x (shared) = the stage's input vector, by the consumer threads (kSession28).
__device__ void buildInput(const Stage &s, float *x, float *scratch) {
  const int t = threadIdx.x, nt = kConsumerWarps * 32;
  float ss = 0;
  switch (s.input) {
  case kAttention:
    for (int i = t; i < s.k; i += nt)
      x[i] = __ldcg(s.a + i);
    return;
  case kSwiGlu:
    for (int i = t; i < s.k; i += nt) {
      const float g = __ldcg(s.a + i), u = __ldcg(s.a + kInter + i);
      x[i] = g / (1.0f + __expf(-g)) * u;
    }
    return;
  default:
    break;
  }
  // The norms: v = a (+ b), x = v * rsqrt(mean(v^2) + eps) (unit norm weights). The block that
  // owns a slice of v writes it (the residual the next layers read; every block has all of v).
  const int per = (s.k + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = lo + per;
  for (int i = t; i < s.k; i += nt) {
    float v = __ldcg(s.a + i);
    if (s.b)
      v += __ldcg(s.b + i);
    x[i] = v;
    ss += v * v;
    if (s.write && i >= lo && i < hi)
      s.write[i] = v;
  }
  const float r = rsqrtf(consumersSum(ss, scratch) / float(s.k) + kEps);
  for (int i = t; i < s.k; i += nt)
    x[i] *= r;
}

/// Stages first..last of the step (all of them: the persistent step; one: a kernel per stage, as
/// kiln launches today, with `pdl` its weights loaded before the grid-dependency wait). Dynamic
/// shared memory: `ring` tiles, then x (kInter floats).
template <int CONSUMER>
__global__ void __launch_bounds__(kThreads, 1)
    persistentStep(int first, int last, int ring, int crossStagePrefetch, int flags, int pdl,
                   unsigned *barrier) {
  const Step &step = cStep;
  // flags: kWaitAtBarriers; with the owner loop also kSkipTiles (the stages' input builds and
  // barriers alone) and kSkipBuilds (x left as it is: wrong sums), which take the step apart.
  const bool waitAtBarriers = flags & kWaitAtBarriers;
  const bool skipTiles = CONSUMER == kOwner && (flags & kSkipTiles);
  const bool skipBuilds = CONSUMER == kOwner && (flags & kSkipBuilds);
  const bool chunkBuilds = CONSUMER == kOwner && (flags & kChunkBuilds);
  const bool multi = last > first; // grid barriers between the stages
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long full[kMaxRing], empty[kMaxRing];
  __shared__ float scratch[kConsumerWarps];
  __shared__ volatile int stagesPassed; // stages whose grid barrier the consumers passed
  float *x = reinterpret_cast<float *>(smem + size_t(ring) * kTileBytes);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int G = gridDim.x, b = blockIdx.x;
  if (threadIdx.x == 0) {
    for (int i = 0; i < ring; ++i) {
      mbarInit(smemAddr(&full[i]), 1);
      mbarInit(smemAddr(&empty[i]), CONSUMER == kOwner ? 1 : kConsumerWarps);
    }
    stagesPassed = first;
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (warp == kConsumerWarps) { // the producer: every tile of this block, in step order
    if (lane != 0)
      return;
    long long i = 0;
    for (int si = first; si <= last; ++si) {
      const Stage &s = step.s[si];
      const int tiles = skipTiles ? 0 : tilesOf(s);
      if (!crossStagePrefetch)
        while (stagesPassed < si) // as a kernel per stage would: no loads before the inputs
          ;
      for (int t = b; t < tiles; t += G, ++i) {
        const int slot = int(i % ring);
        const unsigned use = unsigned(i / ring);
        if (use > 0)
          mbarWait(smemAddr(&empty[slot]), (use - 1) & 1);
        mbarArriveExpectTx(smemAddr(&full[slot]), kTileBytes);
        bulkLoad(smemAddr(smem + size_t(slot) * kTileBytes), s.w + size_t(t) * kTileElems,
                 kTileBytes, smemAddr(&full[slot]));
      }
    }
    return;
  }

  // The consumers.
  long long i = 0;
  unsigned arrived = 0; // the counter before this block's last arrival
  for (int si = first; si <= last; ++si) {
    const Stage &s = step.s[si];
    if (si == first && pdl) { // the previous kernel's sums are complete (the weights are loading)
      asm volatile("griddepcontrol.wait;" ::: "memory");
      asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
    if (si > first) { // the previous stage's sums are complete everywhere
      if (threadIdx.x == 0) {
        while (waitAtBarriers && ((ldAcquire(barrier) ^ arrived) & 0x80000000u) == 0)
          ;
        __threadfence();
        stagesPassed = si;
      }
      consumersSync();
    }
    // Zero the next stage's accumulators (nobody touches them before this stage's barrier; the
    // last stage zeroes the first's for the next launch).
    const Stage &next = step.s[(si + 1) % step.stages];
    if (next.input != kBarrierOnly)
      for (int j = b * kConsumerWarps * 32 + threadIdx.x; j < next.n; j += G * kConsumerWarps * 32)
        next.acc[j] = 0.0f;
    if (s.input != kBarrierOnly && CONSUMER == kFast) {
      buildInputBatched(s, x, scratch);
      consumersSync();
      const int tiles = tilesOf(s), chunks = s.k / kTileCols;
      int xChunk = -1;
      float xr[16]; // x[col0 + 8 (lane + 32 h) + e] at xr[8 h + e]
      for (int t = b; t < tiles; t += G, ++i) {
        const int slot = int(i % ring);
        const int group = t / chunks, chunk = t % chunks;
        if (chunk != xChunk) { // before the wait: x is this stage's, complete since the sync
          xChunk = chunk;
          loadChunk(x, chunk, lane, xr);
        }
        mbarWait(smemAddr(&full[slot]), unsigned(i / ring) & 1);
        const __half *tile = reinterpret_cast<const __half *>(smem + size_t(slot) * kTileBytes);
        float sums[2];
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
          const int row = warp * 2 + rr;
          sums[rr] = dotRow(tile, row, lane, xr);
        }
        __syncwarp();
        if (lane == 0) // the slot is free once every lane has read its weights
          mbarArrive(smemAddr(&empty[slot]));
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
          float sum = sums[rr];
          for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
          if (lane == 0)
            atomicAdd(s.acc + group * kTileRows + warp * 2 + rr, sum);
        }
      }
    } else if (s.input != kBarrierOnly && CONSUMER == kOwner) {
      if (chunkBuilds) {
        buildChunk(s, x, b % (s.k / kTileCols));
        consumersSync();
      } else if (!skipBuilds) {
        buildInputBatched(s, x, scratch);
        consumersSync();
      }
      const int tiles = skipTiles ? 0 : tilesOf(s), chunks = s.k / kTileCols;
      const int mine = b < tiles ? (tiles - b + G - 1) / G : 0; // this block's tiles
      // This warp's: the block's j-th tile of the stage is the step's (i + j)-th.
      int xChunk = -1;
      float xr[16];
      for (int j = int((warp - i % kConsumerWarps + kConsumerWarps) % kConsumerWarps); j < mine;
           j += kConsumerWarps) {
        const long long ij = i + j;
        const int slot = int(ij % ring), t = b + j * G;
        const int group = t / chunks, chunk = t % chunks;
        if (chunk != xChunk) {
          xChunk = chunk;
          loadChunk(x, chunk, lane, xr);
        }
        mbarWait(smemAddr(&full[slot]), unsigned(ij / ring) & 1);
        const __half *tile = reinterpret_cast<const __half *>(smem + size_t(slot) * kTileBytes);
        float v[kTileRows];
#pragma unroll
        for (int row = 0; row < kTileRows; ++row) {
          v[row] = dotRow(tile, row, lane, xr);
        }
        __syncwarp();
        if (lane == 0)
          mbarArrive(smemAddr(&empty[slot]));
        // Transpose-reduce: after the fold over lane bit 4 - m, lane holds rows with that bit
        // of (lane >> 1); the last fold (bit 0) sums the pair. Lane 2r + {0,1} ends with row r.
        foldRows<8>(v, lane);
        foldRows<4>(v, lane);
        foldRows<2>(v, lane);
        foldRows<1>(v, lane);
        v[0] += __shfl_xor_sync(0xffffffffu, v[0], 1);
        if ((lane & 1) == 0)
          atomicAdd(s.acc + group * kTileRows + (lane >> 1), v[0]);
      }
      i += mine;
    } else if (s.input != kBarrierOnly) {
      buildInput(s, x, scratch);
      consumersSync();
      const int tiles = tilesOf(s), chunks = s.k / kTileCols;
      for (int t = b; t < tiles; t += G, ++i) {
        const int slot = int(i % ring);
        mbarWait(smemAddr(&full[slot]), unsigned(i / ring) & 1);
        const __half *tile = reinterpret_cast<const __half *>(smem + size_t(slot) * kTileBytes);
        const int group = t / chunks, col0 = (t % chunks) * kTileCols;
        for (int rr = 0; rr < 2; ++rr) {
          const int row = warp * 2 + rr;
          float sum = 0;
          for (int h = 0; h < 2; ++h) {
            const int c = (lane + 32 * h) * 8;
            const uint4 wv = *reinterpret_cast<const uint4 *>(tile + row * kTileCols + c);
            const __half2 *w2 = reinterpret_cast<const __half2 *>(&wv);
            const float4 x0 = *reinterpret_cast<const float4 *>(x + col0 + c);
            const float4 x1 = *reinterpret_cast<const float4 *>(x + col0 + c + 4);
            const float2 a = __half22float2(w2[0]), bb = __half22float2(w2[1]),
                         cc = __half22float2(w2[2]), d = __half22float2(w2[3]);
            sum += a.x * x0.x + a.y * x0.y + bb.x * x0.z + bb.y * x0.w + cc.x * x1.x +
                   cc.y * x1.y + d.x * x1.z + d.y * x1.w;
          }
          for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
          if (lane == 0)
            atomicAdd(s.acc + group * kTileRows + row, sum);
        }
        __syncwarp();
        if (lane == 0)
          mbarArrive(smemAddr(&empty[slot]));
      }
    }
    // Arrive: this block's sums (and zeroing, residual slices) are issued.
    if (!multi)
      break;
    consumersSync();
    if (threadIdx.x == 0) {
      __threadfence();
      arrived = atomicAdd(barrier, b == 0 ? 0x80000000u - unsigned(G - 1) : 1u);
    }
  }
  // Leave only when every block has arrived at the last barrier (the next launch's first stage
  // reads what the last one zeroed; stream order covers the launch boundary).
  // Without the waits the flips no longer line up with the stages (blocks arrive at later
  // barriers before others reach earlier ones; the adds still sum to a multiple of 2^31, so the
  // counter is ready for the next launch): no final wait either.
  if (threadIdx.x == 0 && waitAtBarriers && multi)
    while (((ldAcquire(barrier) ^ arrived) & 0x80000000u) == 0)
      ;
}

// ------------------------------------------------------------------------------------------
// The reference: one plain kernel per stage, fixed summation order.

__global__ void refInput(Stage s, float *x) {
  __shared__ float red[1024 / 32];
  const int t = threadIdx.x;
  float ss = 0;
  for (int i = t; i < s.k; i += blockDim.x) {
    float v;
    if (s.input == kAttention) {
      v = s.a[i];
    } else if (s.input == kSwiGlu) {
      const float g = s.a[i], u = s.a[kInter + i];
      v = g / (1.0f + expf(-g)) * u;
    } else {
      v = s.a[i] + (s.b ? s.b[i] : 0.0f);
      if (s.write)
        s.write[i] = v;
    }
    x[i] = v;
    ss += v * v;
  }
  if (s.input == kAttention || s.input == kSwiGlu)
    return;
  for (int o = 16; o > 0; o >>= 1)
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if (t % 32 == 0)
    red[t / 32] = ss;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < int(blockDim.x / 32); ++w)
    total += red[w];
  const float r = rsqrtf(total / float(s.k) + kEps);
  __syncthreads();
  for (int i = t; i < s.k; i += blockDim.x)
    x[i] *= r;
}

/// One warp per output row, over the row's column chunks in order.
__global__ void refGemv(Stage s, const float *x) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= s.n)
    return;
  const int group = row / kTileRows, r = row % kTileRows, chunks = s.k / kTileCols;
  float sum = 0;
  for (int c = 0; c < chunks; ++c) {
    const __half *tile = s.w + size_t(group * chunks + c) * kTileElems + r * kTileCols;
    for (int j = lane; j < kTileCols; j += 32)
      sum += __half2float(tile[j]) * x[c * kTileCols + j];
  }
  for (int o = 16; o > 0; o >>= 1)
    sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (lane == 0)
    s.acc[row] = sum;
}

/// Uniform values in [-scale, scale] from a hash of the index.
/// dst[i] = src[i] for n / 16 uint4s, grid-stride: the copy bandwidth as torch's copy_ measures it
/// (an SM kernel; a cudaMemcpyAsync device-to-device node in a CUDA graph runs on the copy engines,
/// about 2.75 TB/s on the H200 against 4.2 for a kernel, session 29).
__global__ void copyKernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void fillUniform(__half *w, size_t n, float scale, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ (unsigned(i >> 32) + seed) * 2246822519u;
    h ^= h >> 15;
    h *= 2654435761u;
    h ^= h >> 13;
    w[i] = __float2half((float(h & 0xffffff) / 8388608.0f - 1.0f) * scale);
  }
}

} // namespace

int main(int argc, char **argv) {
  int layers = 16, iters = 50, only = -1;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--layers") && a + 1 < argc)
      layers = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--consumer") && a + 1 < argc) {
      const char *c = argv[++a];
      only = !std::strcmp(c, "session28") ? kSession28 : !std::strcmp(c, "fast") ? kFast
             : !std::strcmp(c, "owner") ? kOwner : -2;
      if (only == -2) {
        std::fprintf(stderr, "persistent_decode_bench: --consumer is session28, fast or owner\n");
        return 2;
      }
    }
    else if (!std::strcmp(argv[a], "--iters") && a + 1 < argc)
      iters = std::atoi(argv[++a]);
    else {
      std::fprintf(stderr, "usage: %s [--layers N (1-32)] [--iters N] [--consumer session28|fast|owner]\n",
                   argv[0]);
      return 2;
    }
  }
  if (layers < 1 || layers > 32 || iters < 1) {
    std::fprintf(stderr, "persistent_decode_bench: --layers must be 1-32, --iters >= 1\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no GPU\n");
    return 77;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int coop = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
  if (prop.major != 9 || !coop) { // built as sm_90 SASS only
    std::printf("SKIP: built for sm_90 (bulk copies) with cooperative launch; %s is sm_%d%d\n",
                prop.name, prop.major, prop.minor);
    return 77;
  }
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);

  // Weights (tiled) and activations.
  struct Layer {
    __half *qkv, *o, *gu, *down;
  };
  std::vector<Layer> w(layers);
  size_t weightBytes = 0;
  auto alloc = [&](int n, int k, unsigned seed) {
    __half *p;
    const size_t elems = size_t(n) * k;
    CHECK_CUDA(cudaMalloc(&p, elems * 2));
    fillUniform<<<1024, 256>>>(p, elems, std::sqrt(3.0f / float(k)), seed);
    CHECK_CUDA(cudaGetLastError());
    weightBytes += elems * 2;
    return p;
  };
  for (int l = 0; l < layers; ++l)
    w[l] = {alloc(kQkv, kHidden, 4 * l + 1), alloc(kHidden, kHidden, 4 * l + 2),
            alloc(2 * kInter, kHidden, 4 * l + 3), alloc(kHidden, kInter, 4 * l + 4)};
  __half *lmHead = alloc(kVocab, kHidden, 999);
  const size_t perLayer = size_t(kQkv + kHidden + 2 * kInter) * kHidden + size_t(kHidden) * kInter;
  float *act;
  const size_t actPerLayer = kQkv + kHidden + 2 * kInter + kHidden + 2 * kHidden; // sums, mid, resid
  const size_t actFloats = actPerLayer * layers + kVocab + kHidden;
  CHECK_CUDA(cudaMalloc(&act, actFloats * 4));
  CHECK_CUDA(cudaMemset(act, 0, actFloats * 4));
  float *input = act + actPerLayer * layers + kVocab; // resid[0], the embedding row
  {
    std::vector<float> h(kHidden);
    for (int i = 0; i < kHidden; ++i)
      h[i] = std::sin(0.37f * float(i)) + 0.1f;
    CHECK_CUDA(cudaMemcpy(input, h.data(), kHidden * 4, cudaMemcpyHostToDevice));
  }

  // The step's stages; `acc` buffers: persistent (zeroed in-kernel) and reference apart.
  auto buildStep = [&](float *base) {
    Step st{};
    float *p = base;
    std::vector<float *> qkv(layers), o(layers), gu(layers), dn(layers), mid(layers), res(layers);
    for (int l = 0; l < layers; ++l) {
      qkv[l] = p, p += kQkv;
      o[l] = p, p += kHidden;
      gu[l] = p, p += 2 * kInter;
      dn[l] = p, p += kHidden;
      mid[l] = p, p += kHidden;
      res[l] = p, p += kHidden;
    }
    float *logits = p;
    int n = 0;
    for (int l = 0; l < layers; ++l) {
      st.s[n++] = l == 0 ? Stage{kNormResidual, kQkv, kHidden, w[l].qkv, qkv[l], input, nullptr,
                                 nullptr}
                         : Stage{kNormResidual, kQkv, kHidden, w[l].qkv, qkv[l], mid[l - 1],
                                 dn[l - 1], res[l]};
      st.s[n++] = Stage{kBarrierOnly, 0, 0, nullptr, nullptr, nullptr, nullptr, nullptr};
      st.s[n++] = Stage{kAttention, kHidden, kHidden, w[l].o, o[l], qkv[l], nullptr, nullptr};
      st.s[n++] = Stage{kNormMid, 2 * kInter, kHidden, w[l].gu, gu[l],
                        l == 0 ? input : res[l], o[l], mid[l]};
      st.s[n++] = Stage{kSwiGlu, kHidden, kInter, w[l].down, dn[l], gu[l], nullptr, nullptr};
    }
    st.s[n++] = Stage{kNormFinal, kVocab, kHidden, lmHead, logits, mid[layers - 1],
                      dn[layers - 1], nullptr};
    st.stages = n;
    return std::make_pair(st, logits);
  };
  // A kNormMid stage of layer l > 0 reads resid[l], which the QKV stage of l wrote (every block
  // builds v, the owner of each slice stores it): ordered by the barriers in between.
  const auto built = buildStep(act);
  const Step &step = built.first;
  float *const logits = built.second;
  float *refAct;
  CHECK_CUDA(cudaMalloc(&refAct, actFloats * 4));
  CHECK_CUDA(cudaMemset(refAct, 0, actFloats * 4));
  const auto refBuilt = buildStep(refAct);
  const Step &refStep = refBuilt.first;
  float *const refLogits = refBuilt.second;
  // The reference's layer 0 reads the same input.
  float *refX;
  CHECK_CUDA(cudaMalloc(&refX, kInter * 4));
  for (int si = 0; si < refStep.stages; ++si) {
    const Stage &s = refStep.s[si];
    if (s.input == kBarrierOnly)
      continue;
    refInput<<<1, 1024>>>(s, refX);
    refGemv<<<(s.n + 7) / 8, 256>>>(s, refX);
    CHECK_CUDA(cudaGetLastError());
  }
  CHECK_CUDA(cudaDeviceSynchronize());

  CHECK_CUDA(cudaMemcpyToSymbol(cStep, &step, sizeof(Step)));
  unsigned *barrier;
  CHECK_CUDA(cudaMalloc(&barrier, 4));
  CHECK_CUDA(cudaMemset(barrier, 0, 4));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  const int G = prop.multiProcessorCount;
  auto kernelOf = [](int consumer) {
    return consumer == kOwner  ? persistentStep<kOwner>
           : consumer == kFast ? persistentStep<kFast>
                               : persistentStep<kSession28>;
  };
  auto consumerName = [](int consumer) {
    return consumer == kOwner ? "owner warps: " : consumer == kFast ? "fast loop:   " : "session 28's:";
  };
  auto launch = [&](int ring, int prefetch, int flags = kWaitAtBarriers, int consumer = kSession28) {
    if (consumer == kOwner && ring % kConsumerWarps != 0) { // see kOwner: a slot per warp
      std::fprintf(stderr, "persistent_decode_bench: the owner loop needs a ring of a multiple of %d\n",
                   kConsumerWarps);
      std::exit(2);
    }
    const size_t smem = size_t(ring) * kTileBytes + kInter * 4;
    CHECK_CUDA(cudaFuncSetAttribute(kernelOf(consumer),
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    int first = 0, last = step.stages - 1, pdl = 0;
    void *args[] = {&first, &last, &ring, &prefetch, &flags, &pdl, &barrier};
    CHECK_CUDA(cudaLaunchCooperativeKernel((void *)kernelOf(consumer), dim3(G), dim3(kThreads),
                                           args, smem, stream));
  };
  // A kernel per stage (the attention stage included: kiln's attention is a launch too), as kiln
  // runs a decode step today: with `pdl`, programmatic dependent launch, each kernel's producer
  // loading its first tiles before the grid-dependency wait.
  // (The caller sets the kernel's dynamic shared memory limit: no such call while capturing.)
  auto launchPerStage = [&](cudaStream_t s, int ring, int pdl, int consumer) {
    const size_t smem = size_t(ring) * kTileBytes + kInter * 4;
    for (int si = 0; si < step.stages; ++si) {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(G);
      cfg.blockDim = dim3(kThreads);
      cfg.dynamicSmemBytes = smem;
      cfg.stream = s;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[0].val.programmaticStreamSerializationAllowed = pdl;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      CHECK_CUDA(cudaLaunchKernelEx(&cfg, kernelOf(consumer), si, si, ring, 1, 1, pdl, barrier));
    }
  };

  // Copy bandwidth, measured the way bench_generate.py does (1 GiB read + 1 GiB written).
  double copyGBs;
  {
    const size_t n = size_t(1) << 30;
    void *a, *c;
    CHECK_CUDA(cudaMalloc(&a, n));
    CHECK_CUDA(cudaMalloc(&c, n));
    const double us = kiln_test::timeGraph(
        stream,
        [&](cudaStream_t s) {
          copyKernel<<<G * 8, 512, 0, s>>>(static_cast<const uint4 *>(a), static_cast<uint4 *>(c),
                                              n / sizeof(uint4));
        },
        1, 20);
    copyGBs = 2.0 * double(n) / (us * 1e-6) / 1e9;
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(c));
  }
  const double stepBytes = double(weightBytes);
  std::printf("copy bandwidth: %.0f GB/s (1 GiB copied by a kernel in a CUDA graph, median of 20)\n",
              copyGBs);
  std::printf("step: %d layers x %.1f MB + lm_head %.1f MB = %.1f MB of fp16 weights, %d stages, "
              "%d blocks of %d threads\n",
              layers, perLayer * 2 / 1e6, double(kVocab) * kHidden * 2 / 1e6, stepBytes / 1e6,
              step.stages, G, kThreads);

  // Correctness first (the deepest ring, with the prefetch across stages), twice: the second
  // launch checks that the first left the accumulators and the barrier ready.
  int status = 0;
  std::vector<float> got(kVocab), ref(kVocab);
  CHECK_CUDA(cudaMemcpy(ref.data(), refLogits, kVocab * 4, cudaMemcpyDeviceToHost));
  // The logits of the last launch against the reference.
  auto check = [&](const char *what) {
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(got.data(), logits, kVocab * 4, cudaMemcpyDeviceToHost));
    double err = 0, mag = 0;
    for (int v = 0; v < kVocab; ++v) {
      if (!std::isfinite(got[v])) {
        err = INFINITY;
        break;
      }
      err = std::max(err, double(std::fabs(got[v] - ref[v])));
      mag = std::max(mag, double(std::fabs(ref[v])));
    }
    const double rel = mag > 0 ? err / mag : err;
    std::printf("  check (%s): logits max|err|/max|ref| = %.2e (max|ref| %.3f) %s\n", what, rel,
                mag, rel <= 1e-3 ? "ok" : "FAIL");
    if (!(rel <= 1e-3))
      status = 1;
  };
  // The loops to run (--consumer: one of them) and the deepest ring each can use.
  std::vector<int> consumers;
  for (int c : {kSession28, kFast, kOwner})
    if (only < 0 || only == c)
      consumers.push_back(c);
  auto deepest = [](int consumer) { return consumer == kOwner ? 8 : 11; };
  for (int consumer : consumers)
    for (int rep = 0; rep < 2; ++rep) {
      launch(deepest(consumer), 1, 1, consumer);
      check(rep == 0 ? "first launch, deepest ring" : "second launch, deepest ring");
    }

  // Timing: back-to-back launches between two events (a launch is ~0.4-0.9 ms; the front end
  // queues the next while one runs).
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  auto timeIt = [&](int ring, int prefetch, int flags, int consumer) {
    for (int r = 0; r < 3; ++r)
      launch(ring, prefetch, flags, consumer);
    CHECK_CUDA(cudaEventRecord(e0, stream));
    for (int r = 0; r < iters; ++r)
      launch(ring, prefetch, flags, consumer);
    CHECK_CUDA(cudaEventRecord(e1, stream));
    CHECK_CUDA(cudaEventSynchronize(e1));
    float ms;
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    const double stepMs = ms / iters;
    std::printf("%s ring %2d x 16 KiB, prefetch across stages %-3s%s: %.3f ms per step, %.0f GB/s, "
                "%.2f of the copy bandwidth\n",
                consumerName(consumer), ring, prefetch ? "on" : "off",
                flags == kWaitAtBarriers        ? ""
                : flags == 0                    ? ", no waits at the grid barriers (wrong sums; the ceiling)"
                : flags == (kWaitAtBarriers | kSkipTiles) ? ", no tiles: the input builds and barriers alone"
                : flags == kSkipTiles           ? ", no tiles, no waits: the input builds alone"
                : flags == (kWaitAtBarriers | kSkipBuilds) ? ", no input builds (wrong sums)"
                : flags == kSkipBuilds          ? ", no input builds, no waits (wrong sums): the tiles alone"
                : flags == (kWaitAtBarriers | kSkipTiles | kSkipBuilds) ? ", no tiles, no input builds: the barriers alone"
                : flags == (kSkipTiles | kSkipBuilds) ? ", no tiles, no input builds, no waits: the stage loop's fences, arrivals and zeroing"
                : flags == (kSkipTiles | kChunkBuilds) ? ", no tiles, no waits, each block's x chunk only (no norms): the chunk builds alone"
                : flags == (kWaitAtBarriers | kChunkBuilds) ? ", each block's x chunk only, no norms (wrong sums)"
                : flags == kChunkBuilds         ? ", each block's x chunk only, no norms, no waits (wrong sums)"
                                                : ", other flags",
                stepMs, stepBytes / (stepMs * 1e-3) / 1e9, stepBytes / (stepMs * 1e-3) / 1e9 / copyGBs);
    if (flags == kWaitAtBarriers)
      check("the last timed launch");
  };
  for (int consumer : consumers) {
    for (int prefetch : {1, 0})
      for (int ring : {4, 8, 11})
        if (consumer != kOwner || ring % kConsumerWarps == 0)
          timeIt(ring, prefetch, kWaitAtBarriers, consumer);
    timeIt(deepest(consumer), 1, 0, consumer);
    if (consumer == kOwner) // the step taken apart (GB/s and fractions count the whole step's bytes)
      for (int prefetch : {0, 1})
        for (int flags : {0, int(kWaitAtBarriers | kSkipTiles), int(kSkipTiles),
                          int(kWaitAtBarriers | kSkipBuilds), int(kSkipBuilds),
                          int(kWaitAtBarriers | kSkipTiles | kSkipBuilds),
                          int(kSkipTiles | kSkipBuilds), int(kSkipTiles | kChunkBuilds),
                          int(kWaitAtBarriers | kChunkBuilds), int(kChunkBuilds)})
          if ((prefetch == 0 || flags == 0 || flags == kSkipBuilds ||
               flags == (kWaitAtBarriers | kChunkBuilds)) &&
              (!(flags & kChunkBuilds) || (G % (kHidden / kTileCols) == 0 && G % (kInter / kTileCols) == 0)))
            timeIt(8, prefetch, flags, consumer); // chunk builds: one chunk per block and stage
  }
  // The same GEMV loop as a kernel per stage in a CUDA graph (ring 5: two blocks fit an SM, so
  // the next kernel's blocks can start beside the running ones).
  // (The owner loop's ring must be a multiple of its 8 warps: 8 stages, so one block per SM.)
  for (int consumer : consumers)
  for (int pdl : {1, 0}) {
    const int ring = consumer == kOwner ? 8 : 5;
    CHECK_CUDA(cudaFuncSetAttribute(kernelOf(consumer), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(ring * kTileBytes + kInter * 4)));
    const double stepMs =
        kiln_test::timeGraph(stream, [&](cudaStream_t s) { launchPerStage(s, ring, pdl, consumer); },
                             5, 10) /
        1e3;
    std::printf("%s a kernel per stage (%d launches, ring %d%s), CUDA graph: %.3f ms per step, "
                "%.0f GB/s, %.2f of the copy bandwidth\n",
                consumerName(consumer), step.stages, ring, pdl ? ", programmatic launch, weights loaded before the wait" : "",
                stepMs, stepBytes / (stepMs * 1e-3) / 1e9,
                stepBytes / (stepMs * 1e-3) / 1e9 / copyGBs);
    check("the last launch of the graph");
  }
  return status;
}
