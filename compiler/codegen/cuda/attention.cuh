// attention.cuh - fused scaled dot-product attention (kiln.attention).
//
// out[b, h, i, :] = sum_j softmax_j(scale * dot(q[b, h, i, :], k[b, g(h), j, :]) + mask[b, h, i, j])
//                   * v[b, g(h), j, :],   g(h) = h / (Hq / Hkv)  (grouped-query attention)
//
// Both kernels use the online softmax of FlashAttention-2 (Dao 2023, arXiv:2307.08691): keys are
// visited in tiles, each row keeps its running maximum m and sum l in fp32, and the [Sq, Sk] score
// matrix never reaches device memory. The key/value length Sk and the query length Sq are run-time
// arguments (a decoder with a KV cache calls the same kernel with a growing Sk).
//
// Semantics shared by both kernels (they follow ONNX Softmax + MatMul exactly):
//  - causal: key j is visible to query i only when j <= i + (Sk - Sq) (bottom-right aligned).
//  - a row whose scores are all -inf (fully masked) gives NaN, or 0 with zeroMaskedRows.
//  - scores, statistics and the weighted sum are fp32 whatever the storage type.
#pragma once
#include "kiln/common.cuh"
#include "kiln/gemm_tc.cuh"
#include "kiln/smem_sizes.h"

namespace kiln {

namespace attn {
/// The rows of one (b, h) of a strided operand: row j starts at base + j * ss.
template <typename T> struct StridedRows {
  const T *base;
  long long ss;
  __device__ __forceinline__ const T *ptr(int j) const { return base + j * ss; }
};
} // namespace attn

/// A [B, H, S, D] operand with unit stride along D: element (b, h, s, d) is
/// ptr[b * sb + h * sh + s * ss + d] (strides in elements; 0 broadcasts).
template <typename T> struct AttnTensor {
  const T *ptr;
  long long sb, sh, ss;
  /// The rows of (b, h), for attentionTC's tile loads (a paged KV cache gives its own, see
  /// decode_attention.cuh).
  __device__ __forceinline__ attn::StridedRows<T> rows(long long b, long long h) const {
    return {ptr + b * sb + h * sh, ss};
  }
};
/// The [B, H, Sq, Dv] result, unit stride along Dv (bhsd or bshd by the strides).
template <typename T> struct AttnOut {
  T *ptr;
  long long sb, sh, ss;
};
/// A kernel without a mask tensor passes NoMask; otherwise the mask is a functor
/// mask(b, h, i, j) -> float giving the additive mask broadcast to [B, Hq, Sq, Sk].
struct NoMask {};
/// A mask functor whose value does not depend on the query row (a [B, 1 or Hq, 1, Sk] padding
/// mask): attentionTC reads it once per key column of a thread's score fragment instead of once
/// per element (half the loads with one row fragment). f(b, h, i, j) is called with i = 0.
template <typename F> struct RowInvariantMask {
  F f;
  __device__ __forceinline__ float operator()(long long b, long long h, long long i,
                                              long long j) const {
    return f(b, h, i, j);
  }
};
template <typename F>
__host__ __device__ __forceinline__ RowInvariantMask<F> makeRowInvariantMask(F f) {
  return RowInvariantMask<F>{f};
}
namespace attn {
template <typename M> struct IsRowInvariant {
  static constexpr bool value = false;
};
template <typename F> struct IsRowInvariant<RowInvariantMask<F>> {
  static constexpr bool value = true;
};
} // namespace attn
/// No rotary embedding on Q (or K).
struct NoRope {};
/// Rotary embedding (rotate-half, kiln.rotary) applied to Q or K as the tiles arrive:
/// cos(b, h, s, d) and sin(b, h, s, d) return the table entries at sequence position s.
template <typename C, typename S> struct RopeFn {
  C cos;
  S sin;
};
template <typename C, typename S> __device__ RopeFn<C, S> makeRope(C c, S s) { return {c, s}; }

/// AttnShape::keyOffset's default: query row i is key position i + Sk - Sq (bottom-right).
constexpr int kKeyOffsetBottomRight = -2147483647 - 1;

/// Shapes and scalars of one attention call.
struct AttnShape {
  int Hq, Hkv, Sq, Sk;
  float scale;          ///< multiplies dot(q, k) before the mask is added
  bool zeroMaskedRows;  ///< fully masked rows give 0 instead of NaN
  /// Causal: key j is visible to query i when j <= i + keyOffset (and j < Sk). The default is
  /// Sk - Sq; a prefill chunk over a KV cache passes the tokens cached before it (attentionTC).
  int keyOffset = kKeyOffsetBottomRight;
};

namespace attn {

constexpr float kLog2e = 1.4426950408889634f;
__device__ __forceinline__ float negInf() { return -__int_as_float(0x7f800000); }
__device__ __forceinline__ float qNaN() { return __int_as_float(0x7fffffff); }

template <typename T> __device__ __forceinline__ unsigned pack2(float lo, float hi);
template <> __device__ __forceinline__ unsigned pack2<f16>(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
template <> __device__ __forceinline__ unsigned pack2<bf16>(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// Copies rows [row0, row0 + ROWS) x D of `rows` (StridedRows, or a paged KV cache's rows:
/// `rows.ptr(j)` is row j, `rows.base` a valid address) into a padded shared tile (row pitch
/// D + 8 elements) with 16-byte cp.async; rows at or past `limit` are zero-filled (and their
/// address is not computed).
template <typename T, int ROWS, int D, int THREADS, typename Rows>
__device__ __forceinline__ void loadTile(unsigned dst, const Rows &rows, int row0, int limit) {
  constexpr int kChunks = D / 8, kPitch = (D + 8) * 2;
  for (int c = threadIdx.x; c < ROWS * kChunks; c += THREADS) {
    const int r = c / kChunks, ch = c % kChunks;
    const bool valid = row0 + r < limit;
    const T *src = valid ? rows.ptr(row0 + r) + ch * 8 : rows.base;
    tc::cpAsync16(dst + r * kPitch + ch * 16, src, valid);
  }
}

/// The Q tile of attentionTC: a view by cp.async (loadTile), any other source (a fused producer
/// with `q.template load16<T>(b, h, i, d0, x)`, 16 bytes of row i) computed and stored here
/// (visible after the caller's next barrier). Rows at or past `limit` are zero.
template <typename T, int ROWS, int D, int THREADS>
__device__ __forceinline__ void loadQTile(unsigned dst, char *, const AttnTensor<T> &q, int b,
                                          int h, int row0, int limit) {
  loadTile<T, ROWS, D, THREADS>(dst, q.rows(b, h), row0, limit);
}
template <typename T, int ROWS, int D, int THREADS, typename Q>
__device__ __forceinline__ void loadQTile(unsigned, char *dst, const Q &q, int b, int h, int row0,
                                          int limit) {
  constexpr int kChunks = D / 8, kPitch = (D + 8) * 2;
  for (int c = threadIdx.x; c < ROWS * kChunks; c += THREADS) {
    const int r = c / kChunks, ch = c % kChunks;
    unsigned x[4] = {0u, 0u, 0u, 0u};
    if (row0 + r < limit)
      q.template load16<T>(b, h, row0 + r, ch * 8, x);
    *reinterpret_cast<uint4 *>(dst + r * kPitch + ch * 16) = make_uint4(x[0], x[1], x[2], x[3]);
  }
}

/// Rotates rows [row0, row0 + ROWS) of a padded shared tile in place (rotate-half RoPE at
/// positions row0 + r, fp32 math, rounded back to T as the unfused kiln.rotary stores it); rows at
/// or past `limit` are skipped.
template <typename T, int ROWS, int D, int THREADS, typename R>
__device__ __forceinline__ void ropeTile(char *tile, int row0, int limit, int b, int h,
                                         const R &rope) {
  constexpr int H = D / 2, P = D + 8, N = (ROWS * H + THREADS - 1) / THREADS, U = 8;
  T *t = reinterpret_cast<T *>(tile);
  // Batches of U pairs per thread: every table load of a batch is issued before the first is
  // used (the tables come from L2; one pair at a time would wait on each load in turn).
  for (int base = 0; base < N; base += U) {
    float c0[U], s0[U], c1[U], s1[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = threadIdx.x + (base + u) * THREADS;
      const int r = e / H, d = e % H, pos = row0 + r;
      const bool valid = base + u < N && e < ROWS * H && pos < limit;
      c0[u] = valid ? rope.cos(b, h, pos, d) : 0.0f;
      s0[u] = valid ? rope.sin(b, h, pos, d) : 0.0f;
      c1[u] = valid ? rope.cos(b, h, pos, d + H) : 0.0f;
      s1[u] = valid ? rope.sin(b, h, pos, d + H) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = threadIdx.x + (base + u) * THREADS;
      const int r = e / H, d = e % H, pos = row0 + r;
      if (base + u >= N || e >= ROWS * H || pos >= limit)
        continue;
      const float x0 = ld(t[r * P + d]), x1 = ld(t[r * P + d + H]);
      t[r * P + d] = cvt<T>(x0 * c0[u] - x1 * s0[u]);
      t[r * P + d + H] = cvt<T>(x1 * c1[u] + x0 * s1[u]);
    }
  }
}

} // namespace attn

/// Shared memory of attentionTC: the Q tile, two K stages and one V stage, rows padded by 16
/// bytes (conflict-free ldmatrix for D = 64, 80, 96, 128).
template <int D, int BM, int BN> __host__ __device__ constexpr int attentionTcSmemBytes() {
  return int(smem_bytes::attentionTc(D, BM, BN));
}

/// Tensor-core attention for f16/bf16 storage (mma.sync m16n8k16, fp32 accumulation), one
/// block per (query tile of BM = 16 x MF x WARPS rows, head, batch) = (blockIdx.x reversed,
/// blockIdx.y, blockIdx.z). Each warp owns 16 x MF query rows (MF = 2 halves the shared-memory
/// reads of K and V per MMA); K is double-buffered, V single-buffered, both by cp.async. D (= Dv)
/// is a multiple of 16 up to 256. The operands' pointers and strides must be multiples of 8
/// elements (16-byte copies). Without a mask, scores are kept in the log2 domain (one FFMA per
/// exponent); with one, in natural units until the maximum is subtracted, so a mask of the fp32
/// minimum never overflows to -inf (a fully "min"-masked row stays a uniform softmax).
/// ropeQ / ropeK (RopeFn or NoRope) rotate the Q tile and each K tile in shared memory once they
/// have landed (kiln.rotary fused into the attention prologue). Q may also be a fused producer
/// (loadQTile); K and V any source with rows(b, hk) (AttnTensor, or decode_attention.cuh's paged
/// KV cache, read through the block table).
template <typename T, int D, int BN, int WARPS, int MF, bool CAUSAL, typename M,
          typename RQ = NoRope, typename RK = NoRope, typename QS = AttnTensor<T>,
          typename KS = AttnTensor<T>>
__device__ __forceinline__ void attentionTC(const QS &q, const KS &k, const KS &v, const M &mask,
                                            const AttnOut<T> &out, const AttnShape &shape,
                                            char *smem, const RQ &ropeQ = RQ{},
                                            const RK &ropeK = RK{}) {
  static_assert(D % 16 == 0 && D <= 256, "head dim must be a multiple of 16, at most 256");
  static_assert(BN % 16 == 0, "key tile must be a multiple of 16");
  constexpr bool kMask = !tc::IsSame<M, NoMask>::value;
  constexpr int WR = 16 * MF, BM = WR * WARPS, THREADS = 32 * WARPS, kPitch = (D + 8) * 2;
  constexpr int NF = BN / 8, DF = D / 8, R = 2 * MF; // R: rows per thread
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, qd = lane & 3;
  const int mBlock = int(gridDim.x) - 1 - int(blockIdx.x); // longest (causal) tiles first
  const int h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (shape.Hq / shape.Hkv);
  const int m0 = mBlock * BM;
  const int Sq = shape.Sq, Sk = shape.Sk;
  const int off = shape.keyOffset == kKeyOffsetBottomRight ? Sk - Sq : shape.keyOffset;

  const unsigned sQ = tc::smemAddr(smem);
  const unsigned sK = sQ + BM * kPitch;
  const unsigned sV = sK + 2 * BN * kPitch;
  const auto kRows = k.rows(b, hk);
  const auto vRows = v.rows(b, hk);

  int nTiles = (Sk + BN - 1) / BN;
  if constexpr (CAUSAL) {
    const int last = min(m0 + BM, Sq) - 1 + off; // the last key the block's last row sees
    nTiles = last < 0 ? 0 : min(nTiles, last / BN + 1);
  }

  attn::loadQTile<T, BM, D, THREADS>(sQ, smem, q, b, h, m0, Sq);
  if (nTiles > 0)
    attn::loadTile<T, BN, D, THREADS>(sK, kRows, 0, Sk);
  tc::cpAsyncCommit();

  float o[MF][DF][4];
#pragma unroll
  for (int f = 0; f < MF; ++f)
#pragma unroll
    for (int i = 0; i < DF; ++i)
      o[f][i][0] = o[f][i][1] = o[f][i][2] = o[f][i][3] = 0.0f;
  float mRow[R], lRow[R];
#pragma unroll
  for (int i = 0; i < R; ++i)
    mRow[i] = attn::negInf(), lRow[i] = 0.0f;
  // Without a mask the scores are scaled into the log2 domain at once.
  const float sScale = kMask ? shape.scale : shape.scale * attn::kLog2e;
  const float eScale = kMask ? attn::kLog2e : 1.0f;
  const int wRow0 = m0 + warp * WR; // this thread's rows: wRow0 + 16 f + g (+ 8)
  // Query row and key column of score element e of fragment (f, j) (m16n8 accumulator layout).
  auto fragRow = [&](int f, int e) { return wRow0 + f * 16 + (e >> 1) * 8 + g; };
  auto fragCol = [&](int n0, int j, int e) { return n0 + j * 8 + qd * 2 + (e & 1); };

  for (int t = 0; t < nTiles; ++t) {
    const int n0 = t * BN;
    attn::loadTile<T, BN, D, THREADS>(sV, vRows, n0, Sk);
    tc::cpAsyncCommit();
    // The mask values of this tile are read before Q K^T, so their loads (a materialized
    // [B, 1, Sq, Sk] padding mask in BERT exports) overlap the wait for K and the MMAs.
    // Read after the MMAs, each tile waited out their latency: BERT-base at 8x512 spent
    // 87 us per layer in attention against GPT-2's 32 (causal, no mask) on the H200.
    float mk[MF][NF][4];
    if constexpr (kMask && attn::IsRowInvariant<M>::value) {
      // One value per key column (elements e and e + 2 of a fragment share it).
#pragma unroll
      for (int j = 0; j < NF; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int c = fragCol(n0, j, e);
          const float value = c < Sk ? mask(b, h, 0, c) : 0.0f;
#pragma unroll
          for (int f = 0; f < MF; ++f) {
            mk[f][j][e] = fragRow(f, e) < Sq ? value : 0.0f;
            mk[f][j][e + 2] = fragRow(f, e + 2) < Sq ? value : 0.0f;
          }
        }
    } else if constexpr (kMask) {
#pragma unroll
      for (int f = 0; f < MF; ++f)
#pragma unroll
        for (int j = 0; j < NF; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = fragRow(f, e), c = fragCol(n0, j, e);
            mk[f][j][e] = r < Sq && c < Sk ? mask(b, h, r, c) : 0.0f;
          }
    }
    tc::cpAsyncWait<1>(); // Q and K[t] landed
    __syncthreads();
    constexpr bool kRopeQ = !tc::IsSame<RQ, NoRope>::value, kRopeK = !tc::IsSame<RK, NoRope>::value;
    if constexpr (kRopeQ)
      if (t == 0)
        attn::ropeTile<T, BM, D, THREADS>(smem, m0, Sq, b, h, ropeQ);
    if constexpr (kRopeK)
      attn::ropeTile<T, BN, D, THREADS>(smem + BM * kPitch + (t & 1) * BN * kPitch, n0, Sk, b, hk,
                                        ropeK);
    if constexpr (kRopeQ || kRopeK)
      __syncthreads();

    // S = Q K^T for this warp's rows x BN keys.
    float s[MF][NF][4];
#pragma unroll
    for (int f = 0; f < MF; ++f)
#pragma unroll
      for (int j = 0; j < NF; ++j)
        s[f][j][0] = s[f][j][1] = s[f][j][2] = s[f][j][3] = 0.0f;
    const unsigned kStage = sK + (t & 1) * BN * kPitch;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      unsigned a[MF][4];
#pragma unroll
      for (int f = 0; f < MF; ++f)
        tc::ldsmX4<false>(sQ + (warp * WR + f * 16 + (lane & 15)) * kPitch +
                              (kk * 16 + (lane >> 4) * 8) * 2,
                          a[f]);
#pragma unroll
      for (int j = 0; j < NF; j += 2) {
        unsigned bfrag[4];
        tc::ldsmX4<false>(kStage + (j * 8 + (lane & 7) + (lane >> 4) * 8) * kPitch +
                              (kk * 16 + ((lane >> 3) & 1) * 8) * 2,
                          bfrag);
        const unsigned b0[2] = {bfrag[0], bfrag[1]}, b1[2] = {bfrag[2], bfrag[3]};
#pragma unroll
        for (int f = 0; f < MF; ++f) {
          tc::Mma<T>::run(s[f][j], a[f], b0);
          tc::Mma<T>::run(s[f][j + 1], a[f], b1);
        }
      }
    }
    // K[t + 1] streams in while the softmax and P V run.
    if (t + 1 < nTiles)
      attn::loadTile<T, BN, D, THREADS>(sK + ((t + 1) & 1) * BN * kPitch, kRows, n0 + BN, Sk);
    tc::cpAsyncCommit();

    // Scale, mask, online softmax.
    const bool needBounds = n0 + BN > Sk;
    bool needCausal = false;
    if constexpr (CAUSAL)
      needCausal = n0 + BN - 1 > wRow0 + off;
#pragma unroll
    for (int f = 0; f < MF; ++f)
#pragma unroll
      for (int j = 0; j < NF; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float x = s[f][j][e] * sScale;
          if constexpr (kMask)
            x += mk[f][j][e];
          s[f][j][e] = x;
        }
    // Keys past the sequence or a row's causal limit become -inf only in tiles that reach
    // them (a warp-uniform branch), one compare and select per element against each row's
    // last visible key relative to the thread's first column (element (f, j, e) is column
    // 8 j + (e & 1) past it): conditions per element compiled to a branch per element.
    if (needBounds || needCausal) {
      int lim[R];
#pragma unroll
      for (int i = 0; i < R; ++i) {
        int last = needBounds ? Sk - 1 : 0x7fffffff;
        if (needCausal)
          last = min(last, fragRow(i / 2, (i % 2) * 2) + off);
        lim[i] = last - fragCol(n0, 0, 0);
      }
#pragma unroll
      for (int f = 0; f < MF; ++f)
#pragma unroll
        for (int j = 0; j < NF; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            s[f][j][e] = j * 8 + (e & 1) > lim[f * 2 + (e >> 1)] ? attn::negInf() : s[f][j][e];
    }
    float tileMax[R];
#pragma unroll
    for (int i = 0; i < R; ++i)
      tileMax[i] = attn::negInf();
#pragma unroll
    for (int f = 0; f < MF; ++f)
#pragma unroll
      for (int j = 0; j < NF; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          tileMax[f * 2 + (e >> 1)] = fmaxf(tileMax[f * 2 + (e >> 1)], s[f][j][e]);
    float alpha[R], mUse[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      tileMax[i] = fmaxf(tileMax[i], __shfl_xor_sync(0xffffffffu, tileMax[i], 1));
      tileMax[i] = fmaxf(tileMax[i], __shfl_xor_sync(0xffffffffu, tileMax[i], 2));
      const float mNew = fmaxf(mRow[i], tileMax[i]);
      mUse[i] = mNew == attn::negInf() ? 0.0f : mNew; // all -inf so far: p = 0, not NaN
      alpha[i] = exp2f((mRow[i] - mUse[i]) * eScale);
      mRow[i] = mNew;
    }
    float rowSum[R];
#pragma unroll
    for (int i = 0; i < R; ++i)
      rowSum[i] = 0.0f;
    unsigned p[MF][NF / 2][4];
#pragma unroll
    for (int f = 0; f < MF; ++f)
#pragma unroll
      for (int j = 0; j < NF; ++j) {
        const float m0v = mUse[f * 2], m1v = mUse[f * 2 + 1];
        const float p0 = exp2f((s[f][j][0] - m0v) * eScale), p1 = exp2f((s[f][j][1] - m0v) * eScale);
        const float p2 = exp2f((s[f][j][2] - m1v) * eScale), p3 = exp2f((s[f][j][3] - m1v) * eScale);
        rowSum[f * 2] += p0 + p1;
        rowSum[f * 2 + 1] += p2 + p3;
        // The m16n8 accumulator layout of two adjacent key fragments is the m16k16 A layout.
        p[f][j >> 1][(j & 1) * 2 + 0] = attn::pack2<T>(p0, p1);
        p[f][j >> 1][(j & 1) * 2 + 1] = attn::pack2<T>(p2, p3);
      }
#pragma unroll
    for (int i = 0; i < R; ++i)
      lRow[i] = lRow[i] * alpha[i] + rowSum[i];
#pragma unroll
    for (int f = 0; f < MF; ++f)
#pragma unroll
      for (int d = 0; d < DF; ++d) {
        o[f][d][0] *= alpha[f * 2], o[f][d][1] *= alpha[f * 2];
        o[f][d][2] *= alpha[f * 2 + 1], o[f][d][3] *= alpha[f * 2 + 1];
      }

    if (t + 1 < nTiles)
      tc::cpAsyncWait<1>(); // V[t] landed (K[t + 1] may still fly)
    else
      tc::cpAsyncWait<0>();
    __syncthreads();
    // O += P V.
#pragma unroll
    for (int ks = 0; ks < BN / 16; ++ks) {
#pragma unroll
      for (int d = 0; d < DF; d += 2) {
        unsigned bfrag[4];
        tc::ldsmX4<true>(sV + (ks * 16 + (lane & 15)) * kPitch + (d * 8 + (lane >> 4) * 8) * 2,
                         bfrag);
        const unsigned b0[2] = {bfrag[0], bfrag[1]}, b1[2] = {bfrag[2], bfrag[3]};
#pragma unroll
        for (int f = 0; f < MF; ++f) {
          const unsigned a[4] = {p[f][ks][0], p[f][ks][1], p[f][ks][2], p[f][ks][3]};
          tc::Mma<T>::run(o[f][d], a, b0);
          tc::Mma<T>::run(o[f][d + 1], a, b1);
        }
      }
    }
    __syncthreads(); // V and K[t] are overwritten next
  }
  tc::cpAsyncWait<0>();

  // Normalize and store (two adjacent elements per 4-byte store).
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int f = i >> 1, hi = i & 1;
    float l = lRow[i];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const int r = wRow0 + f * 16 + hi * 8 + g;
    if (r >= Sq)
      continue;
    const bool masked = mRow[i] == attn::negInf();
    const float inv = masked ? 0.0f : 1.0f / l;
    T *dst = out.ptr + b * out.sb + h * out.sh + (long long)r * out.ss;
#pragma unroll
    for (int d = 0; d < DF; ++d) {
      float x0 = o[f][d][hi * 2] * inv, x1 = o[f][d][hi * 2 + 1] * inv;
      if (masked)
        x0 = x1 = shape.zeroMaskedRows ? 0.0f : attn::qNaN();
      *reinterpret_cast<unsigned *>(dst + d * 8 + qd * 2) = attn::pack2<T>(x0, x1);
    }
  }
}

/// Shared memory of attentionSimt: K and V tiles of 32 keys (fp32, padded) and one query row per
/// warp.
template <int D, int DV, int WARPS> __host__ __device__ constexpr int attentionSimtSmemBytes() {
  return int(smem_bytes::attentionSimt(D, DV, WARPS));
}

/// Attention on CUDA cores for any storage type and any operand view: one warp per query row,
/// WARPS rows of one (batch, head) per block (blockIdx = (row tile, head, batch)). Operands are
/// read through functors, so fused producers of Q, K, V and the mask evaluate per element:
/// q(b, h, i, d), k(b, hk, j, d), v(b, hk, j, d), mask(b, h, i, j) return fp32 (mask may be
/// NoMask); store(b, h, i, d, value) writes the result. Scores use lanes as keys (32 per tile), the
/// weighted sum lanes as value dims. D, DV <= 256.
template <int D, int DV, int WARPS, bool CAUSAL, typename QF, typename KF, typename VF,
          typename MF, typename SF>
__device__ __forceinline__ void attentionSimt(QF qf, KF kf, VF vf, MF maskf, SF store,
                                              const AttnShape &shape, char *smem) {
  static_assert(D <= 256 && DV <= 256, "head dims up to 256");
  constexpr int DVL = (DV + 31) / 32;
  float *sK = reinterpret_cast<float *>(smem);
  float *sV = sK + 32 * (D + 1);
  float *sQ = sV + 32 * (DV + 1);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (shape.Hq / shape.Hkv);
  const int i = int(blockIdx.x) * WARPS + warp;
  const int Sq = shape.Sq, Sk = shape.Sk, off = Sk - Sq;
  const bool active = i < Sq;
  float *q = sQ + warp * D;
  for (int d = lane; d < D; d += 32)
    q[d] = active ? qf(b, h, i, d) : 0.0f;

  int keys = Sk;
  if constexpr (CAUSAL) {
    const int last = min(int(blockIdx.x) * WARPS + WARPS, Sq) - 1 + off;
    keys = last < 0 ? 0 : min(Sk, last + 1);
  }
  float o[DVL];
#pragma unroll
  for (int x = 0; x < DVL; ++x)
    o[x] = 0.0f;
  float m = attn::negInf(), l = 0.0f;
  for (int n0 = 0; n0 < keys; n0 += 32) {
    __syncthreads();
    for (int e = threadIdx.x; e < 32 * D; e += 32 * WARPS) {
      const int j = e / D, d = e % D;
      sK[j * (D + 1) + d] = n0 + j < Sk ? kf(b, hk, n0 + j, d) : 0.0f;
    }
    for (int e = threadIdx.x; e < 32 * DV; e += 32 * WARPS) {
      const int j = e / DV, d = e % DV;
      sV[j * (DV + 1) + d] = n0 + j < Sk ? vf(b, hk, n0 + j, d) : 0.0f;
    }
    __syncthreads();
    if (!active)
      continue;
    const int j = n0 + lane;
    float sc = 0.0f;
    for (int d = 0; d < D; ++d)
      sc += q[d] * sK[lane * (D + 1) + d];
    sc *= shape.scale;
    if constexpr (!tc::IsSame<MF, NoMask>::value)
      if (j < Sk)
        sc += maskf(b, h, i, j);
    if (j >= Sk || (CAUSAL && j > i + off))
      sc = attn::negInf();
    const float mNew = fmaxf(m, warpMax(sc));
    const float mUse = mNew == attn::negInf() ? 0.0f : mNew;
    const float alpha = expf(m - mUse);
    const float p = expf(sc - mUse);
    l = l * alpha + warpSum(p);
    m = mNew;
#pragma unroll
    for (int x = 0; x < DVL; ++x)
      o[x] *= alpha;
    for (int jj = 0; jj < 32; ++jj) {
      const float pj = __shfl_sync(0xffffffffu, p, jj);
#pragma unroll
      for (int x = 0; x < DVL; ++x)
        if (x * 32 + lane < DV)
          o[x] += pj * sV[jj * (DV + 1) + x * 32 + lane];
    }
  }
  if (!active)
    return;
  const bool masked = m == attn::negInf();
#pragma unroll
  for (int x = 0; x < DVL; ++x) {
    const int d = x * 32 + lane;
    if (d < DV)
      store(b, h, i, d, masked ? (shape.zeroMaskedRows ? 0.0f : attn::qNaN()) : o[x] / l);
  }
}

} // namespace kiln
