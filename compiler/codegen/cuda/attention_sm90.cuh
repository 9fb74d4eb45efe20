// attention_sm90.cuh - Hopper (sm_90a) fused attention: TMA tiles, wgmma, warp specialization.
//
// The same attention as attention.cuh's attentionTC (same mask functors, AttnShape, AttnOut and
// semantics: bottom-right aligned causal or AttnShape::keyOffset, fully masked rows NaN or 0 with
// zeroMaskedRows, fp32 scores and statistics), built the way FlashAttention-3 (Shah et al. 2024,
// arXiv:2407.08608) builds it for Hopper:
//
//  * Warp specialization. A block is 1 + CONSUMERS warpgroups (BM = 64 CONSUMERS query rows of
//    one (batch, head)). Warpgroup 0 is the producer: one thread issues the TMA copies of the Q
//    tile once and of every K and V tile into a STAGES-deep ring of 128-byte-swizzled stages
//    ("full" / "empty" mbarriers per stage, K and V apart so Q K^T starts before V lands); it
//    gives its registers away (setmaxnreg.dec). Each consumer warpgroup (setmaxnreg.inc) owns
//    64 query rows and runs Q K^T and P V on wgmma.
//  * Intra-warpgroup overlap (FA3 section 3.2): in iteration t a consumer issues S_t = Q K_t^T
//    and then O += P_{t-1} V_{t-1} (two wgmma groups in flight), runs the softmax of S_t on the
//    CUDA cores while the tensor cores compute P_{t-1} V_{t-1}, then rescales O and packs P_t.
//    P is never written to shared memory: the fp32 accumulator fragment of S, packed to 16 bits,
//    is the register A fragment of the next wgmma (gemm_wgmma.cuh, wg::WgmmaRS).
//  * Inter-warpgroup ping-pong (PINGPONG, two consumers; FA3 section 3.1): two hardware barriers
//    hand the tensor cores from one consumer to the other, so one warpgroup's softmax overlaps
//    the other's GEMMs.
//  * Causal blocks stop at their last visible key tile; masking (causal, key bounds) is applied
//    only on the tiles that need it.
//
// Operands: Q, K and V through rank-4 tensor maps over [B, H, S, D] views with unit stride along
// D ({D, S, H, B}, innermost first; any 16-byte-multiple strides, so bhsd and bshd layouts and
// slices of a fused QKV projection alike), swizzle 128B, box {64, BM or BN, 1, 1}. The head dim
// is covered by DP / 64 boxes of 64 elements (DP = D rounded up to 64; the TMA zero-fills
// d >= D, which adds nothing to Q K^T and gives output columns that are never stored), so the
// shared tiles are the canonical 128-byte-swizzle layouts the GEMM uses (gemm_wgmma.cuh,
// wg::TileDesc): block j of 64 d holds row r at byte 128 r.
//   Q K^T: A = Q (K-major), B = K (K-major), k = d.  P V: A = P (registers), B = V read as an
//   MN-major (N = d contiguous) operand: k = key row, 8-key groups 1024 bytes apart (SBO), 64-d
//   blocks BN 128 bytes apart (LBO), transpose bit set.
// Rows past Sq or Sk read as zeros (the TMA fills them); keys past Sk are masked to -inf.
//
// The wgmma / TMA / setmaxnreg code exists only for sm_90a (`__CUDA_ARCH_FEAT_SM90_ALL`);
// compiled for any other target attentionSm90 traps, so every module can include the header.
#pragma once
#include "kiln/attention.cuh"
#include "kiln/common.cuh"
#include "kiln/gemm_sm90.cuh"
#include "kiln/gemm_wgmma.cuh"
#include "kiln/smem_sizes.h"

namespace kiln {

/// Dynamic shared memory of attentionSm90 (smem_sizes.h).
template <int D, int BM, int BN, int STAGES>
__host__ __device__ constexpr int attentionSm90SmemBytes() {
  return int(smem_bytes::attentionSm90(D, BM, BN, STAGES));
}

namespace attn90 {

/// Compiler-only fence on a packed P fragment: its registers are read by an asynchronous wgmma
/// until wgmma.wait_group, so they must not be reused or rewritten before this point.
template <int K> __device__ __forceinline__ void fenceFragments(unsigned (&p)[K][4]) {
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      asm volatile("" : "+r"(p[k][i])::"memory");
}

/// Rotates (rotate-half RoPE, kiln.rotary) rows row0 .. row0 + 63 of the Q tile at shared
/// address sQ (DP / 64 blocks of BM rows x 128 bytes, 128-byte swizzle: 16-byte chunk c of row r
/// at chunk position c ^ (r % 8)) in place, at sequence positions m0 + row; rows at or past Sq
/// are skipped. fp32 math, rounded back to T as the unfused kiln.rotary stores it (the same
/// arithmetic as attn::ropeTile). Called by the 128 threads of the consumer warpgroup that owns
/// the rows; the caller fences the writes for wgmma and syncs the warpgroup.
template <typename T, int D, int BM, typename R>
__device__ __forceinline__ void ropeRows(char *tile, int row0, int m0, int Sq, int b, int h,
                                         const R &rope, int tid) {
  constexpr int H = D / 2, N = 64 * H / 128, U = 4;
  static_assert(64 * H % 128 == 0, "ropeRows: 128 threads over 64 rows of D / 2 pairs");
  auto at = [&](int row, int d) -> T * {
    return reinterpret_cast<T *>(tile + (d / 64) * BM * 128 + row * 128 +
                                 ((((d % 64) / 8) ^ (row % 8)) * 16) + (d % 8) * 2);
  };
  // Batches of U pairs per thread, every table load of a batch issued before the first is used.
#pragma unroll 1
  for (int base = 0; base < N; base += U) {
    float c0[U], s0[U], c1[U], s1[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = tid + (base + u) * 128, r = e / H, d = e % H, pos = m0 + row0 + r;
      const bool valid = base + u < N && pos < Sq;
      c0[u] = valid ? rope.cos(b, h, pos, d) : 0.0f;
      s0[u] = valid ? rope.sin(b, h, pos, d) : 0.0f;
      c1[u] = valid ? rope.cos(b, h, pos, d + H) : 0.0f;
      s1[u] = valid ? rope.sin(b, h, pos, d + H) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = tid + (base + u) * 128, r = e / H, d = e % H, pos = m0 + row0 + r;
      if (base + u >= N || pos >= Sq)
        continue;
      T *p0 = at(row0 + r, d), *p1 = at(row0 + r, d + H);
      const float x0 = ld(*p0), x1 = ld(*p1);
      *p0 = cvt<T>(x0 * c0[u] - x1 * s0[u]);
      *p1 = cvt<T>(x1 * c1[u] + x0 * s1[u]);
    }
  }
}

/// 2^x as one MUFU.EX2 (PTX ex2.approx.ftz.f32: about 2 ulp, -inf gives +0, results below
/// 2^-126 flush to 0). exp2f without fast math adds the subnormal handling around it; the
/// softmax's probabilities are rounded to 16 bits for P V anyway, and this is the unit that
/// bounds the softmax (16 per clock per SM against 128 FMAs).
__device__ __forceinline__ float exp2Approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// Registers per thread after setmaxnreg: the producer warpgroup keeps few, the consumers take
/// the rest of the 64 K registers of the SM (one block per SM). A producer that reads a block
/// table (WIDE) keeps 40 (128 x 40 + 256 x 232 = 64512 with two consumers, 128 x 40 + 384 x
/// 152 = 63488 with three). setmaxnreg.inc waits until the block's pool has the registers, so
/// the total must fit the 64 K of one block per SM.
template <int CONSUMERS, bool WIDE = false> struct Regs {
  static constexpr int kProducer = WIDE ? 40 : CONSUMERS == 2 ? 24 : 32;
  static constexpr int kConsumer =
      CONSUMERS == 2 ? (WIDE ? 232 : 240) : (WIDE ? 152 : 160);
  static_assert(128 * (kProducer + CONSUMERS * kConsumer) <= 65536,
                "attentionSm90: the warpgroups' registers exceed the SM's 64 K");
};

/// Hardware barrier the consumers meet at after zeroing a tail V tile (KV::kZeroTail); 1 and 2
/// are the ping-pong turns, 3 + c the rotary of consumer c.
constexpr int kTailBarrier = 7;

/// The K / V source of attentionSm90Body for plain tensors: one rank-4 map {D, S, H, B} each (box
/// {64, BN, 1, 1}), the same key count and causal offset for every sequence. Rows past Sk are
/// zero-filled by the TMA (out of the map's bounds), so no tail needs zeroing.
struct DenseKv {
  const TensorMap *k, *v;
  int Sk;  ///< keys per sequence
  int off; ///< causal: query row i sees keys j <= i + off
  static constexpr bool kZeroTail = false; ///< rows past Sk may hold anything (zeroed in V)
  static constexpr bool kWarpLoads = false; ///< load() is called by the whole producer warp
  __device__ __forceinline__ int keys(int) const { return Sk; }
  __device__ __forceinline__ int offset(int) const { return off; }
  __device__ __forceinline__ void prefetch() const {
    sm90::prefetchTensorMap(k);
    sm90::prefetchTensorMap(v);
  }
  /// What `lane` of the producer needs to load the tile of keys n0.. of sequence b (sk =
  /// keys(b)), read one tile ahead (K and V of a tile share it): here b itself.
  template <int BN>
  __device__ __forceinline__ int tileSource(int n0, int b, int sk, int lane) const {
    (void)n0, (void)sk, (void)lane;
    return b;
  }
  /// Issues the copies of keys n0 .. n0 + BN - 1 of kv head hk (value: V, else K) into the tile
  /// at shared address dst (DB blocks of BN rows x 128 bytes), completing on bar; the phase
  /// expects BN * DB * 128 bytes. source: tileSource's value for this tile and lane.
  template <int BN, int DB>
  __device__ __forceinline__ void load(bool value, unsigned dst, unsigned bar, int n0, int hk,
                                       int source, int lane) const {
    (void)lane;
#pragma unroll
    for (int j = 0; j < DB; ++j)
      sm90::tmaLoad(dst + unsigned(j * BN * 128), value ? v : k, bar, 64 * j, n0, hk, source);
  }
};

template <typename T, int D, int BM, int BN, int STAGES, bool CAUSAL, bool PINGPONG,
          typename KV, typename M, typename RQ>
__device__ __forceinline__ void attentionSm90Body(const TensorMap *qMap, const KV &kv,
                                                  const M &mask, const AttnOut<T> &out,
                                                  const AttnShape &shape, char *smem,
                                                  const RQ &ropeQ, int batch);

} // namespace attn90

/// The body of a Hopper attention kernel (call it from a `__global__ __launch_bounds__(128 *
/// (BM / 64 + 1), 1)` function that takes the three maps as `const __grid_constant__
/// kiln::TensorMap` parameters):
///   out[b, h, i, :] = softmax_j(scale q_i . k_j + mask(b, h, i, j)) V   (see attention.cuh)
/// for the block's BM query rows of head blockIdx.y, batch blockIdx.z; query tiles are taken
/// longest first (blockIdx.x reversed), so launch grid (ceil(Sq / BM), Hq, B). Or, with
/// `batch` = B > 0, persistent: launch grid (n, 1, 1) for any n (one block per SM: the
/// target's SM count), and block i computes the query tiles i, i + n, ... of the list ordered
/// longest first, its producer loading the next tile's Q and K while the consumers finish the
/// current one. T: kiln::f16 or
/// kiln::bf16. D (= Dv): a multiple of 16 up to 256; BM: 128 or 192 (2 or 3 consumer
/// warpgroups); BN: 64, 128 or 192 keys per tile; STAGES >= 2 K/V stages; the consumers'
/// registers must hold O (DP / 2), S (BN / 2) and P (BN / 4) floats (static_assert). qMap /
/// kMap / vMap: rank-4 maps {D, S, H, B} of Q [B, Hq, Sq, D], K and V [B, Hkv, Sk, D] (16-bit,
/// swizzle 128B, box {64, BM, 1, 1} for Q, {64, BN, 1, 1} for K and V). mask: kiln::NoMask, a
/// functor mask(b, h, i, j) -> float, or a kiln::RowInvariantMask (read once per key column).
/// ropeQ (kiln::RopeFn or NoRope): a rotary embedding applied to the Q tile in shared memory
/// once it has landed (kiln.rotary on Q fused as a prologue, as in attentionTC; qMap then maps
/// the rotary's input). Dynamic shared memory: attentionSm90SmemBytes<D, BM, BN, STAGES>().
/// Q is released to the producer (a "Q empty" mbarrier) once the consumers' last S = Q K^T of
/// a tile has retired.
/// Requires sm_90a; compiled for any other target the call traps.
template <typename T, int D, int BM, int BN, int STAGES, bool CAUSAL, bool PINGPONG,
          typename M, typename RQ = NoRope>
__device__ __forceinline__ void attentionSm90(const TensorMap *qMap, const TensorMap *kMap,
                                              const TensorMap *vMap, const M &mask,
                                              const AttnOut<T> &out, const AttnShape &shape,
                                              char *smem, const RQ &ropeQ = RQ{},
                                              int batch = 0) {
  const int off =
      shape.keyOffset == kKeyOffsetBottomRight ? shape.Sk - shape.Sq : shape.keyOffset;
  attn90::attentionSm90Body<T, D, BM, BN, STAGES, CAUSAL, PINGPONG>(
      qMap, attn90::DenseKv{kMap, vMap, shape.Sk, off}, mask, out, shape, smem, ropeQ, batch);
}

namespace attn90 {

/// attentionSm90 with the K / V source `kv` (DenseKv, or a paged cache: decode_attention.cuh's
/// PagedKvTma): KV::keys(b) keys for sequence b, causal offset KV::offset(b), tiles issued by
/// KV::load from KV::tileSource (by producer thread 0, or its whole warp with KV::kWarpLoads). With
/// KV::kZeroTail the rows past keys(b) of the last V tile are zeroed in shared memory by the
/// consumers before P V reads them (P is 0 there, but 0 * NaN is not 0). shape.Sk and
/// shape.keyOffset are not read.
template <typename T, int D, int BM, int BN, int STAGES, bool CAUSAL, bool PINGPONG,
          typename KV, typename M, typename RQ>
__device__ __forceinline__ void attentionSm90Body(const TensorMap *qMap, const KV &kv,
                                                  const M &mask, const AttnOut<T> &out,
                                                  const AttnShape &shape, char *smem,
                                                  const RQ &ropeQ, int batch) {
  static_assert(tc::IsSame<T, f16>::value || tc::IsSame<T, bf16>::value,
                "attentionSm90: T must be kiln::f16 or kiln::bf16");
  static_assert(D % 16 == 0 && D >= 16 && D <= 256,
                "attentionSm90: head dim must be a multiple of 16, at most 256");
  static_assert(BM == 128 || BM == 192, "attentionSm90: BM must be 128 or 192 (64 per consumer)");
  static_assert(BN == 64 || BN == 128 || BN == 192, "attentionSm90: BN must be 64, 128 or 192");
  static_assert(STAGES >= 2, "attentionSm90: STAGES must be >= 2");
  static_assert(!PINGPONG || BM == 128, "attentionSm90: ping-pong needs two consumers");
  static_assert((D + 63) / 64 * 64 / 2 + BN / 2 + BN / 4 + 32 <=
                    Regs<BM / 64, KV::kWarpLoads>::kConsumer,
                "attentionSm90: O, S and P do not fit the consumers' registers; use a smaller BN");
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int CONSUMERS = BM / 64;
  constexpr int DP = (D + 63) / 64 * 64, DB = DP / 64; // padded head dim, 64-wide d blocks
  constexpr unsigned kQBytes = unsigned(BM * DP * 2), kTileBytes = unsigned(BN * DP * 2);
  constexpr bool kMask = !tc::IsSame<M, NoMask>::value;
  using Regs = attn90::Regs<CONSUMERS, KV::kWarpLoads>;

  // Shared memory: Q, STAGES K tiles, STAGES V tiles (each DB blocks of rows x 128 bytes), then
  // the mbarriers: Q full, K full / empty, V full / empty per stage, Q empty.
  const unsigned sQ = (tc::smemAddr(smem) + 1023u) & ~1023u;
  const unsigned sK = sQ + kQBytes;
  const unsigned sV = sK + STAGES * kTileBytes;
  const unsigned bars = sV + STAGES * kTileBytes;
  const unsigned qFull = bars, qEmpty = bars + 8u + 8u * unsigned(4 * STAGES);
  auto kFull = [&](int s) { return bars + 8u + 8u * unsigned(s); };
  auto kEmpty = [&](int s) { return bars + 8u + 8u * unsigned(STAGES + s); };
  auto vFull = [&](int s) { return bars + 8u + 8u * unsigned(2 * STAGES + s); };
  auto vEmpty = [&](int s) { return bars + 8u + 8u * unsigned(3 * STAGES + s); };

  // Work items: one query tile of one (batch, head). Grid mode (batch == 0): the block's own,
  // blockIdx = (query tile reversed, head, batch). Persistent mode: items blockIdx.x,
  // blockIdx.x + gridDim.x, ... of the list ordered longest first (query tiles from the last,
  // every (batch, head) of one before the next), so causal blocks balance.
  const int Sq = shape.Sq, Hq = shape.Hq;
  const int mBlocks = (Sq + BM - 1) / BM;
  const bool persistent = batch > 0;
  const int nItems = persistent ? mBlocks * Hq * batch : 1;
  const int firstItem = persistent ? int(blockIdx.x) : 0;
  const int itemStep = persistent ? int(gridDim.x) : 1;
  struct Item {
    int m0, h, b, hk, nTiles;
    int Sk, off; // the sequence's keys and causal offset (kv.keys(b), kv.offset(b))
  };
  auto itemAt = [&](int w) {
    Item it;
    int mBlock;
    if (persistent) {
      const int hb = Hq * batch, r = w % hb;
      mBlock = mBlocks - 1 - w / hb;
      it.h = r % Hq;
      it.b = r / Hq;
    } else {
      mBlock = int(gridDim.x) - 1 - int(blockIdx.x); // longest (causal) tiles first
      it.h = int(blockIdx.y);
      it.b = int(blockIdx.z);
    }
    it.m0 = mBlock * BM;
    it.hk = it.h / (Hq / shape.Hkv);
    it.Sk = kv.keys(it.b);
    it.off = kv.offset(it.b);
    it.nTiles = (it.Sk + BN - 1) / BN;
    if constexpr (CAUSAL) {
      const int last = min(it.m0 + BM, Sq) - 1 + it.off; // the last key the tile's last row sees
      it.nTiles = last < 0 ? 0 : min(it.nTiles, last / BN + 1);
    }
    return it;
  };

  const int wgIdx = int(threadIdx.x) >> 7, tid = int(threadIdx.x) & 127;
  if (threadIdx.x == 0) {
    sm90::mbarInit(qFull, 1);
    sm90::mbarInit(qEmpty, CONSUMERS * 4); // one arrival per consumer warp
    for (int s = 0; s < STAGES; ++s) {
      sm90::mbarInit(kFull(s), 1);
      sm90::mbarInit(vFull(s), 1);
      sm90::mbarInit(kEmpty(s), CONSUMERS * 4);
      sm90::mbarInit(vEmpty(s), CONSUMERS * 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wgIdx == 0) {
    // Producer: thread 0 issues every copy (with KV::kWarpLoads its warp issues the K / V
    // copies with it, thread 0 arming the barriers first): per item the Q tile (once the
    // consumers are done with the previous one's), then K[t] before V[t] (Q K^T needs K
    // first). The K / V ring and the Q barrier phases run on across items.
    sm90::regDealloc<Regs::kProducer>();
    if (KV::kWarpLoads ? tid < 32 : tid == 0) {
      const int lane = tid;
      if (lane == 0) {
        sm90::prefetchTensorMap(qMap);
        kv.prefetch();
      }
      int stage = 0;
      unsigned phase = 0, qPhase = 0;
      for (int w = firstItem; w < nItems; w += itemStep) {
        const Item it = itemAt(w);
        if (it.nTiles == 0)
          continue;
        if (lane == 0) {
          sm90::mbarWait(qEmpty, qPhase ^ 1u);
          sm90::mbarArriveExpectTx(qFull, kQBytes);
#pragma unroll
          for (int j = 0; j < DB; ++j)
            sm90::tmaLoad(sQ + unsigned(j * BM * 128), qMap, qFull, 64 * j, it.m0, it.h, it.b);
        }
        qPhase ^= 1u;
        // The next tile's source (a block-table entry for a paged cache) is read while this
        // tile waits for its stage.
        int source = kv.template tileSource<BN>(0, it.b, it.Sk, lane);
        for (int t = 0; t < it.nTiles; ++t) {
          const int next =
              t + 1 < it.nTiles ? kv.template tileSource<BN>((t + 1) * BN, it.b, it.Sk, lane) : 0;
          // K[t], then V[t]: wait for the stage, arm its barrier (thread 0), issue the copies.
          for (int value = 0; value < 2; ++value) {
            if (lane == 0) {
              sm90::mbarWait(value ? vEmpty(stage) : kEmpty(stage), phase ^ 1u);
              sm90::mbarArriveExpectTx(value ? vFull(stage) : kFull(stage), kTileBytes);
            }
            if constexpr (KV::kWarpLoads)
              __syncwarp();
            kv.template load<BN, DB>(value != 0, (value ? sV : sK) + stage * kTileBytes,
                                     value ? vFull(stage) : kFull(stage), t * BN, it.hk, source,
                                     lane);
          }
          source = next;
          if (++stage == STAGES) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
    }
    return;
  }

  // Consumers.
  sm90::regAlloc<Regs::kConsumer>();
  const int c = wgIdx - 1;
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, qd = lane & 3;
  // Without a mask the scores stay unscaled until the exponent, which takes them to the log2
  // domain with sScale (scale * log2 e); with one they are scaled to natural units and the mask
  // added, then taken to the log2 domain with eScale after the maximum is subtracted (a mask of
  // the fp32 minimum never overflows to -inf).
  const float sScale = kMask ? shape.scale : shape.scale * attn::kLog2e;
  const float eScale = kMask ? attn::kLog2e : 1.0f;
  // Unscaled scores need a positive scale (their maximum is the scaled one's, and -inf stays
  // -inf); a mask, or a scale of any other sign (ONNX Attention takes one), scales them first.
  const bool scaleFirst = kMask || !(sScale > 0.0f);
  // From the units of the scores the softmax holds (and of mRow) to the log2 domain.
  const float toLog2 = kMask ? eScale : scaleFirst ? 1.0f : sScale;

  // Ping-pong: hardware barrier 1 + c is "consumer c may issue"; 256 threads (its own
  // bar.sync, the other's bar.arrive). Consumer 1 lets consumer 0 go first; consumer 0 takes
  // consumer 1's last hand-over at the end, so every barrier phase completes. Both consumers
  // walk the same items and tiles, so their turns pair up.
  auto turnWait = [&]() {
    if constexpr (PINGPONG)
      sm90::namedBarrier(1 + c, 256);
  };
  auto turnPass = [&]() {
    if constexpr (PINGPONG)
      sm90::namedBarrierArrive(2 - c, 256);
  };
  if constexpr (PINGPONG)
    if (c == 1)
      sm90::namedBarrierArrive(1, 256);

  // Descriptors (start of the Q rows of this warpgroup, K stage 0, V stage 0); stage s and
  // k step add their byte offset >> 4 (addresses stay below 2^18: no carry out of the field).
  const unsigned long long descQ = wg::makeDesc(sQ + unsigned(64 * c * 128), 16u, 1024u);
  const unsigned long long descK = wg::makeDesc(sK, 16u, 1024u);
  const unsigned long long descV = wg::makeDesc(sV, unsigned(BN * 128), 1024u);
  int kStage = 0, vStage = 0; // the K / V ring position, run on across items like the producer's
  unsigned kPhase = 0, vPhase = 0, qPhase = 0;

  for (int w = firstItem; w < nItems; w += itemStep) {
    const Item it = itemAt(w);
    const int h = it.h, b = it.b, m0 = it.m0, nTiles = it.nTiles, Sk = it.Sk, off = it.off;
    const int rowW = m0 + 64 * c + 16 * warp;   // the warp's first query row
    const int row0 = rowW + g, row1 = row0 + 8; // this thread's two rows (D fragment layout)

    float o[DP / 2];
#pragma unroll
    for (int i = 0; i < DP / 2; ++i)
      o[i] = 0.0f;
    float mRow[2] = {attn::negInf(), attn::negInf()}, lRow[2] = {0.0f, 0.0f};

    if (nTiles > 0) {
      // S = Q K^T over DP / 16 k steps: k step kk is 32 bytes into the lines of d block kk / 4.
      auto issueS = [&](float(&s)[BN / 2], int st) {
#pragma unroll
        for (int kk = 0; kk < DP / 16; ++kk)
          wg::Wgmma<T, BN>::template run<0, 0>(
              s, descQ + (unsigned((kk / 4) * BM * 128 + (kk % 4) * 32) >> 4),
              descK + ((st * kTileBytes + unsigned((kk / 4) * BN * 128 + (kk % 4) * 32)) >> 4),
              kk > 0 ? 1 : 0);
      };
      // O += P V over BN / 16 key steps: 16 keys are two 1024-byte atoms of every d block.
      auto issuePV = [&](const unsigned(&p)[BN / 16][4], int st) {
#pragma unroll
        for (int ks = 0; ks < BN / 16; ++ks)
          wg::WgmmaRS<T, DP>::template run<1>(
              o, p[ks], descV + ((st * kTileBytes + unsigned(ks * 2048)) >> 4));
      };
      // Mask values of the fragment of keys n0.. (issued while the wgmma run).
      float mk[kMask ? BN / 2 : 1];
      auto loadMask = [&](int n0) {
        if constexpr (kMask && attn::IsRowInvariant<M>::value) {
#pragma unroll
          for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int col = n0 + 8 * j + 2 * qd + e;
              const float value = col < Sk ? mask(b, h, 0, col) : 0.0f;
              mk[4 * j + e] = row0 < Sq ? value : 0.0f;
              mk[4 * j + e + 2] = row1 < Sq ? value : 0.0f;
            }
        } else if constexpr (kMask) {
#pragma unroll
          for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int r = e >= 2 ? row1 : row0, col = n0 + 8 * j + 2 * qd + (e & 1);
              mk[4 * j + e] = r < Sq && col < Sk ? mask(b, h, r, col) : 0.0f;
            }
        }
      };
      // Online softmax of the tile of keys n0..: mask, new row maxima, exponentials in place,
      // running sums; alpha: the factor the old O and sums are rescaled by. Without a mask and
      // with a positive scale the scores stay unscaled until the exponent (one FFMA per
      // element: exp2(s * scale * log2e - m * scale * log2e)), and mRow holds unscaled maxima
      // (scaleFirst and toLog2 above). Keys past the sequence or past a
      // row's causal limit become -inf only in tiles that reach them (a warp-uniform branch),
      // one compare and select per element against each row's last visible key: per-element
      // conditions compiled to a branch per element and made the softmax issue-bound.
      auto softmax = [&](float(&s)[BN / 2], int n0, float(&alpha)[2]) {
        const bool needBounds = n0 + BN > Sk;
        bool needCausal = false;
        if constexpr (CAUSAL)
          needCausal = n0 + BN - 1 > rowW + off;
        if (scaleFirst) {
#pragma unroll
          for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              s[4 * j + e] *= sScale;
              if constexpr (kMask)
                s[4 * j + e] += mk[4 * j + e];
            }
        }
        if (needBounds || needCausal) {
          // The last visible key of each of this thread's rows, relative to its first column
          // n0 + 2 qd (element (j, e) is column 8 j + (e & 1) past it).
          int lim[2];
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            int last = needBounds ? Sk - 1 : 0x7fffffff;
            if (needCausal)
              last = min(last, (i ? row1 : row0) + off);
            lim[i] = last - (n0 + 2 * qd);
          }
#pragma unroll
          for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              s[4 * j + e] = 8 * j + (e & 1) > lim[e >> 1] ? attn::negInf() : s[4 * j + e];
        }
        float tileMax[2] = {attn::negInf(), attn::negInf()};
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            tileMax[e >> 1] = fmaxf(tileMax[e >> 1], s[4 * j + e]);
        // mSub: the maxima subtracted (in the log2 domain without a mask, in natural units with
        // one).
        float mSub[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          tileMax[i] = fmaxf(tileMax[i], __shfl_xor_sync(0xffffffffu, tileMax[i], 1));
          tileMax[i] = fmaxf(tileMax[i], __shfl_xor_sync(0xffffffffu, tileMax[i], 2));
          const float mNew = fmaxf(mRow[i], tileMax[i]);
          const float mUse = mNew == attn::negInf() ? 0.0f : mNew; // all -inf so far: p = 0
          alpha[i] = attn90::exp2Approx((mRow[i] - mUse) * toLog2);
          mRow[i] = mNew;
          mSub[i] = kMask ? mUse : mUse * toLog2;
        }
        float rowSum[2] = {0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int ri = e >> 1;
            // With a mask the difference comes first: scores and maxima near the fp32 minimum
            // (a mask of finfo.min) would overflow to -inf once multiplied by log2(e).
            const float pv = attn90::exp2Approx(
                kMask ? (s[4 * j + e] - mSub[ri]) * toLog2 : fmaf(s[4 * j + e], toLog2, -mSub[ri]));
            s[4 * j + e] = pv;
            rowSum[ri] += pv;
          }
#pragma unroll
        for (int i = 0; i < 2; ++i)
          lRow[i] = lRow[i] * alpha[i] + rowSum[i];
      };
      // P (16-bit) in the register A layout: k step k is columns 16 k .. 16 k + 15.
      auto packP = [&](const float(&s)[BN / 2], unsigned(&p)[BN / 16][4]) {
#pragma unroll
        for (int k = 0; k < BN / 16; ++k) {
          p[k][0] = attn::pack2<T>(s[8 * k + 0], s[8 * k + 1]);
          p[k][1] = attn::pack2<T>(s[8 * k + 2], s[8 * k + 3]);
          p[k][2] = attn::pack2<T>(s[8 * k + 4], s[8 * k + 5]);
          p[k][3] = attn::pack2<T>(s[8 * k + 6], s[8 * k + 7]);
        }
      };
      // Stage advance of the K / V rings.
      auto nextK = [&]() {
        if (++kStage == STAGES) {
          kStage = 0;
          kPhase ^= 1u;
        }
      };
      auto nextV = [&]() {
        if (++vStage == STAGES) {
          vStage = 0;
          vPhase ^= 1u;
        }
      };

      float s[BN / 2];
      unsigned p[BN / 16][4];
      float alpha[2];
      sm90::mbarWait(qFull, qPhase);
      qPhase ^= 1u;
      if constexpr (!tc::IsSame<RQ, NoRope>::value) {
        // Rotate this warpgroup's Q rows in place; the generic-proxy writes are fenced for the
        // tensor cores' async-proxy reads, then the warpgroup syncs (hardware barrier 3 + c).
        attn90::ropeRows<T, D, BM>(smem + (sQ - tc::smemAddr(smem)), 64 * c, m0, Sq, b, h, ropeQ,
                                   tid);
        wg::fenceProxyAsync();
        sm90::namedBarrier(3 + c, 128);
      }

      // Tile 0: S_0, its softmax, P_0. (After the last tile's S, Q is released to the
      // producer for the next item.)
      sm90::mbarWait(kFull(kStage), kPhase);
      turnWait();
      wg::wgmmaFence();
      issueS(s, kStage);
      wg::wgmmaCommit();
      turnPass();
      loadMask(0);
      wg::wgmmaWait<0>();
      wg::fenceOperands(s);
      if (lane == 0) {
        sm90::mbarArrive(kEmpty(kStage));
        if (nTiles == 1)
          sm90::mbarArrive(qEmpty);
      }
      nextK();
      softmax(s, 0, alpha);
      packP(s, p);

      // Iteration t: S_t and P_{t-1} V_{t-1} in flight together, the softmax of S_t while the
      // second runs, then O rescaled and P_t packed.
      for (int t = 1; t < nTiles; ++t) {
        sm90::mbarWait(kFull(kStage), kPhase);
        sm90::mbarWait(vFull(vStage), vPhase);
        turnWait();
        wg::fenceOperands(s);
        wg::fenceOperands(o);
        wg::wgmmaFence();
        issueS(s, kStage);
        wg::wgmmaCommit();
        issuePV(p, vStage);
        wg::wgmmaCommit();
        turnPass();
        loadMask(t * BN);
        wg::wgmmaWait<1>(); // S_t done (groups retire in order), P V may still run
        wg::fenceOperands(s);
        if (lane == 0) {
          sm90::mbarArrive(kEmpty(kStage));
          if (t == nTiles - 1)
            sm90::mbarArrive(qEmpty);
        }
        nextK();
        softmax(s, t * BN, alpha);
        wg::wgmmaWait<0>();
        wg::fenceOperands(o);
        attn90::fenceFragments(p);
        if (lane == 0)
          sm90::mbarArrive(vEmpty(vStage));
        nextV();
#pragma unroll
        for (int j = 0; j < DP / 8; ++j) {
          o[4 * j + 0] *= alpha[0], o[4 * j + 1] *= alpha[0];
          o[4 * j + 2] *= alpha[1], o[4 * j + 3] *= alpha[1];
        }
        packP(s, p);
      }

      // The last P V. A tail V tile read from a cache holds rows past Sk that were never
      // written for this sequence: every consumer zeroes its share of them (whole 128-byte
      // rows, so the swizzle does not matter), fences the writes for the tensor cores and meets
      // the others (no turn is held here, so ping-pong cannot deadlock on it).
      sm90::mbarWait(vFull(vStage), vPhase);
      if constexpr (KV::kZeroTail) {
        const int valid = Sk - (nTiles - 1) * BN; // > 0: the last tile holds key Sk - 1 or less
        if (valid < BN) {
          char *tile = smem + (sV - tc::smemAddr(smem)) + vStage * kTileBytes;
          const int perBlock = (BN - valid) * 8; // 16-byte chunks per d block
          for (int e = c * 128 + tid; e < perBlock * DB; e += 128 * CONSUMERS) {
            const int blk = e / perBlock, r = valid + e % perBlock / 8, ch = e % 8;
            *reinterpret_cast<uint4 *>(tile + blk * BN * 128 + r * 128 + ch * 16) =
                make_uint4(0u, 0u, 0u, 0u);
          }
          wg::fenceProxyAsync();
          sm90::namedBarrier(attn90::kTailBarrier, 128 * CONSUMERS);
        }
      }
      turnWait();
      wg::fenceOperands(o);
      wg::wgmmaFence();
      issuePV(p, vStage);
      wg::wgmmaCommit();
      turnPass();
      wg::wgmmaWait<0>();
      wg::fenceOperands(o);
      attn90::fenceFragments(p);
      if (lane == 0)
        sm90::mbarArrive(vEmpty(vStage));
      nextV();
    }

    // Normalize and store: the thread's rows row0 and row1, columns 8 j + 2 qd (+ 1).
#pragma unroll
    for (int ri = 0; ri < 2; ++ri) {
      float l = lRow[ri];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const int r = ri ? row1 : row0;
      if (r >= Sq)
        continue;
      const bool masked = mRow[ri] == attn::negInf();
      const float inv = masked ? 0.0f : 1.0f / l;
      T *dst = out.ptr + b * out.sb + h * out.sh + (long long)r * out.ss;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        float x0 = o[4 * j + 2 * ri] * inv, x1 = o[4 * j + 2 * ri + 1] * inv;
        if (masked)
          x0 = x1 = shape.zeroMaskedRows ? 0.0f : attn::qNaN();
        *reinterpret_cast<unsigned *>(dst + 8 * j + 2 * qd) = attn::pack2<T>(x0, x1);
      }
    }
  }
  if constexpr (PINGPONG)
    if (c == 0) // consumer 1's last hand-over (balances its first arrive)
      sm90::namedBarrier(1, 256);
#elif defined(__CUDA_ARCH__)
  // Not sm_90a: wgmma, TMA and setmaxnreg do not exist. The code generator never selects this.
  (void)qMap, (void)kv, (void)mask, (void)out, (void)shape, (void)smem, (void)ropeQ, (void)batch;
  asm volatile("trap;");
#endif
}

} // namespace attn90
} // namespace kiln
