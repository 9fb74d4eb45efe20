// norm.cuh - row-wise softmax, layer normalization and RMS normalization
// building blocks.
//
// One warp per row (short rows), or one block per row with the row held in
// registers (rows of kiln::kBlockRowMin elements or more: *RowBlock);
// statistics in fp32. Softmax subtracts the row maximum
// (numerically safe) and returns NaN for a row of -inf, as ONNX does. LayerNorm follows
// ONNX LayerNormalization-17: y = (x - mean) / sqrt(var + eps) * scale + bias
// with the biased variance. RMSNorm follows ONNX RMSNormalization-23 (and
// LlamaRMSNorm): y = x * (1 / sqrt(mean(x^2) + eps)) * scale.
#pragma once
#include "kiln/common.cuh"

namespace kiln {

/// Softmax over one row of L elements (float, f16 or bf16; statistics in fp32) `stride` apart (1 for the last axis):
/// epilogue(c, softmax(x)[c]) for every c (the epilogue stores, possibly
/// after fused pointwise ops). One warp per row. A row of -inf gives NaN
/// everywhere (0/0 in the ONNX definition; onnxruntime agrees).
template <typename T, typename Epilogue>
__device__ __forceinline__ void softmaxRow(const T *__restrict__ x, long long L,
                                           long long stride, Epilogue epilogue) {
  const int lane = threadIdx.x & 31;
  float m = -__int_as_float(0x7f800000);
  for (long long c = lane; c < L; c += 32)
    m = fmaxf(m, ld(x[c * stride]));
  m = warpMax(m);
  if (m == -__int_as_float(0x7f800000)) {
    // Every element -inf: exp(-inf - -inf) is NaN, as ONNX Softmax (and
    // onnxruntime) gives; exporters that want zeros add Where(IsNaN(p), 0, p).
    for (long long c = lane; c < L; c += 32)
      epilogue(c, __int_as_float(0x7fc00000));
    return;
  }
  float s = 0.0f;
  for (long long c = lane; c < L; c += 32)
    s += expf(ld(x[c * stride]) - m);
  s = warpSum(s);
  const float inv = 1.0f / s;
  for (long long c = lane; c < L; c += 32)
    epilogue(c, expf(ld(x[c * stride]) - m) * inv);
}

/// LayerNorm over one row of length D: epilogue(c, y[c]) for every column.
/// `bias` may be null.
template <typename T, typename TS, typename TB, typename Epilogue>
__device__ __forceinline__ void layerNormRow(const T *__restrict__ x, const TS *__restrict__ scale,
                                             const TB *__restrict__ bias, long long D, float eps,
                                             Epilogue epilogue) {
  const int lane = threadIdx.x & 31;
  float s = 0.0f;
  for (long long c = lane; c < D; c += 32)
    s += ld(x[c]);
  const float mean0 = warpSum(s) / float(D);
  // One refinement step: the rounding error of the first mean is measured
  // and removed, so a constant row gets an exact zero deviation. Without it,
  // (x - mean) ~ 1e-7 * |x| is amplified by rstd = 1/sqrt(eps) ~ 316.
  float residual = 0.0f;
  for (long long c = lane; c < D; c += 32)
    residual += ld(x[c]) - mean0;
  const float mean = mean0 + warpSum(residual) / float(D);
  float v = 0.0f;
  for (long long c = lane; c < D; c += 32) {
    float d = ld(x[c]) - mean;
    v += d * d;
  }
  const float rstd = 1.0f / sqrtf(warpSum(v) / float(D) + eps);
  for (long long c = lane; c < D; c += 32) {
    float r = (ld(x[c]) - mean) * rstd * ld(scale[c]);
    epilogue(c, bias ? r + ld(bias[c]) : r);
  }
}

/// RMSNorm over one row of length D: epilogue(c, y[c]) for every column, with
/// y = x * rstd * scale and rstd = 1 / sqrt(mean(x^2) + eps), all in fp32
/// whatever the storage types (float, f16, bf16). The products are taken in
/// the order the exported graph takes them (x * rstd, then * scale).
template <typename T, typename TS, typename Epilogue>
__device__ __forceinline__ void rmsNormRow(const T *__restrict__ x, const TS *__restrict__ scale,
                                           long long D, float eps, Epilogue epilogue) {
  const int lane = threadIdx.x & 31;
  float s = 0.0f;
  for (long long c = lane; c < D; c += 32) {
    const float v = ld(x[c]);
    s += v * v;
  }
  const float rstd = 1.0f / sqrtf(warpSum(s) / float(D) + eps);
  for (long long c = lane; c < D; c += 32)
    epilogue(c, ld(x[c]) * rstd * ld(scale[c]));
}

namespace norm {

/// Elements of T in one 16-byte vector.
template <typename T> __host__ __device__ constexpr int vecElems() { return int(16 / sizeof(T)); }

/// Loads the N = vecElems<T>() consecutive elements at p, widened to fp32: one 16-byte load
/// when `vec` (p 16-byte aligned), else element by element.
template <typename T>
__device__ __forceinline__ void loadVec(const T *__restrict__ p, bool vec,
                                        float (&v)[vecElems<T>()]) {
  constexpr int N = vecElems<T>();
  if (vec) {
    const uint4 u = *reinterpret_cast<const uint4 *>(p);
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (sizeof(T) == 2) {
        v[2 * i] = ld(T{static_cast<unsigned short>(w[i] & 0xffffu)});
        v[2 * i + 1] = ld(T{static_cast<unsigned short>(w[i] >> 16)});
      } else {
        v[i] = __uint_as_float(w[i]);
      }
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < N; ++i)
    v[i] = ld(p[i]);
}

/// Stores the N values o[0..N) at p: 16-byte stores when `vec` (p aligned to the run's bytes,
/// at most 16) and the run is 8, 16 or 32 bytes, else element by element.
template <typename OutT, int N>
__device__ __forceinline__ void storeVec(OutT *__restrict__ p, bool vec, const OutT (&o)[N]) {
  constexpr int kBytes = int(sizeof(OutT)) * N;
  if constexpr (kBytes % 16 == 0) {
    if (vec) {
#pragma unroll
      for (int i = 0; i < kBytes / 16; ++i)
        reinterpret_cast<uint4 *>(p)[i] = reinterpret_cast<const uint4 *>(o)[i];
      return;
    }
  } else if constexpr (kBytes == 8) {
    if (vec) {
      *reinterpret_cast<uint2 *>(p) = *reinterpret_cast<const uint2 *>(o);
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < N; ++i)
    p[i] = o[i];
}

/// True when p is a multiple of `bytes` (a power of two).
template <typename P> __device__ __forceinline__ bool aligned(const P *p, unsigned bytes) {
  return (reinterpret_cast<unsigned long long>(p) & (bytes - 1)) == 0;
}

/// Bytes one storeVec of N OutT needs its pointer aligned to (0: never vectorized).
template <typename OutT, int N> __host__ __device__ constexpr unsigned storeAlign() {
  return (sizeof(OutT) * N) % 16 == 0 ? 16u : (sizeof(OutT) * N == 8 ? 8u : 0u);
}

/// Loads the vectors of a row of D elements (D a multiple of N = vecElems<T>()) that lane l
/// holds, l, l + 32, ... (VPL of them), widened to fp32 into v; zeros past D. 16-byte loads when
/// x is 16-byte aligned, else element loads.
template <int VPL, typename T>
__device__ __forceinline__ void loadRowVec(const T *__restrict__ x, long long D,
                                           float (&v)[VPL][vecElems<T>()]) {
  constexpr int N = vecElems<T>();
  const int lane = threadIdx.x & 31;
  const bool vec = aligned(x, 16);
#pragma unroll
  for (int i = 0; i < VPL; ++i) {
    const long long c0 = (long long)(lane + 32 * i) * N;
    if (c0 < D) {
      loadVec(x + c0, vec, v[i]);
    } else {
#pragma unroll
      for (int j = 0; j < N; ++j)
        v[i][j] = 0.0f;
    }
  }
}

/// Stores f(c, v[i][j]) (an OutT) at out[c] for every element of the row the lane holds
/// (loadRowVec's layout), N values with one storeVec when out is aligned for it.
template <int VPL, int N, typename OutT, typename F>
__device__ __forceinline__ void storeRowVec(OutT *__restrict__ out, long long D,
                                            const float (&v)[VPL][N], F f) {
  const int lane = threadIdx.x & 31;
  constexpr unsigned kAlign = storeAlign<OutT, N>();
  const bool vec = kAlign != 0 && aligned(out, kAlign);
#pragma unroll
  for (int i = 0; i < VPL; ++i) {
    const long long c0 = (long long)(lane + 32 * i) * N;
    if (c0 < D) {
      alignas(16) OutT o[N];
#pragma unroll
      for (int j = 0; j < N; ++j)
        o[j] = f(c0 + j, v[i][j]);
      storeVec(out + c0, vec, o);
    }
  }
}

} // namespace norm

/// LayerNorm over one row of length D with one warp per row and the row in registers, read
/// with 16-byte loads: lane l holds the vectors l, l + 32, ... (VPL of them, N =
/// vecElems<T>() elements each; D a multiple of N, at most 32 VPL N). Same arithmetic as
/// layerNormRow (refined mean, biased variance, fp32). `value(c, y)` returns y[c] after the
/// fused epilogue as stored (OutT); the N results of a vector leave with one store of 8..32
/// bytes at out[c] (`out` is the row's output, contiguous along c). Unaligned pointers fall
/// back to element loads and stores.
template <int VPL, typename T, typename TS, typename TB, typename OutT, typename Value>
__device__ __forceinline__ void layerNormRowVec(const T *__restrict__ x,
                                                const TS *__restrict__ scale,
                                                const TB *__restrict__ bias, long long D,
                                                float eps, OutT *__restrict__ out, Value value) {
  constexpr int N = norm::vecElems<T>();
  const int lane = threadIdx.x & 31;
  float v[VPL][N];
  norm::loadRowVec<VPL>(x, D, v);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < VPL; ++i)
#pragma unroll
    for (int j = 0; j < N; ++j)
      s += v[i][j];
  const float mean0 = warpSum(s) / float(D);
  float residual = 0.0f;
#pragma unroll
  for (int i = 0; i < VPL; ++i)
    if ((long long)(lane + 32 * i) * N < D)
#pragma unroll
      for (int j = 0; j < N; ++j)
        residual += v[i][j] - mean0;
  const float mean = mean0 + warpSum(residual) / float(D);
  float var = 0.0f;
#pragma unroll
  for (int i = 0; i < VPL; ++i)
    if ((long long)(lane + 32 * i) * N < D)
#pragma unroll
      for (int j = 0; j < N; ++j) {
        const float d = v[i][j] - mean;
        var += d * d;
      }
  const float rstd = 1.0f / sqrtf(warpSum(var) / float(D) + eps);
  norm::storeRowVec(out, D, v, [&](long long c, float xc) {
    const float r = (xc - mean) * rstd * ld(scale[c]);
    return value(c, bias ? r + ld(bias[c]) : r);
  });
}

/// RMSNorm over one row of length D, one warp per row with the row in registers (see
/// layerNormRowVec for the layout, `value` and `out`); same arithmetic as rmsNormRow.
template <int VPL, typename T, typename TS, typename OutT, typename Value>
__device__ __forceinline__ void rmsNormRowVec(const T *__restrict__ x,
                                              const TS *__restrict__ scale, long long D,
                                              float eps, OutT *__restrict__ out, Value value) {
  constexpr int N = norm::vecElems<T>();
  float v[VPL][N];
  norm::loadRowVec<VPL>(x, D, v);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < VPL; ++i)
#pragma unroll
    for (int j = 0; j < N; ++j)
      s += v[i][j] * v[i][j];
  const float rstd = 1.0f / sqrtf(warpSum(s) / float(D) + eps);
  norm::storeRowVec(out, D, v,
                    [&](long long c, float xc) { return value(c, xc * rstd * ld(scale[c])); });
}

/// Sum of `v` over the thread block (blockDim.x a multiple of 32, at most
/// 1024); every thread gets the total. Every thread of the block must call it.
__device__ __forceinline__ float blockSum(float v) {
  __shared__ float partial[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpSum(v);
  __syncthreads(); // `partial` may still be read by a previous call
  if (lane == 0)
    partial[warp] = v;
  __syncthreads();
  v = lane < int(blockDim.x >> 5) ? partial[lane] : 0.0f;
  return warpSum(v);
}

/// LayerNorm over one row of length D with one thread block per row: thread
/// t holds columns t, t + blockDim.x, ... (PER of them, PER * blockDim.x >=
/// D) in registers, so the row is read from memory once; same arithmetic as
/// layerNormRow (refined mean, biased variance, fp32).
template <int PER, typename T, typename TS, typename TB, typename Epilogue>
__device__ __forceinline__ void layerNormRowBlock(const T *__restrict__ x,
                                                  const TS *__restrict__ scale,
                                                  const TB *__restrict__ bias, long long D,
                                                  float eps, Epilogue epilogue) {
  float v[PER];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const long long c = threadIdx.x + (long long)i * blockDim.x;
    v[i] = c < D ? ld(x[c]) : 0.0f;
    s += v[i];
  }
  const float mean0 = blockSum(s) / float(D);
  float residual = 0.0f;
#pragma unroll
  for (int i = 0; i < PER; ++i)
    if (threadIdx.x + (long long)i * blockDim.x < D)
      residual += v[i] - mean0;
  const float mean = mean0 + blockSum(residual) / float(D);
  float var = 0.0f;
#pragma unroll
  for (int i = 0; i < PER; ++i)
    if (threadIdx.x + (long long)i * blockDim.x < D) {
      const float d = v[i] - mean;
      var += d * d;
    }
  const float rstd = 1.0f / sqrtf(blockSum(var) / float(D) + eps);
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const long long c = threadIdx.x + (long long)i * blockDim.x;
    if (c < D) {
      const float r = (v[i] - mean) * rstd * ld(scale[c]);
      epilogue(c, bias ? r + ld(bias[c]) : r);
    }
  }
}

/// RMSNorm over one row of length D with one thread block per row, the row in
/// registers (see layerNormRowBlock); same arithmetic as rmsNormRow.
template <int PER, typename T, typename TS, typename Epilogue>
__device__ __forceinline__ void rmsNormRowBlock(const T *__restrict__ x,
                                                const TS *__restrict__ scale, long long D,
                                                float eps, Epilogue epilogue) {
  float v[PER];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const long long c = threadIdx.x + (long long)i * blockDim.x;
    v[i] = c < D ? ld(x[c]) : 0.0f;
    s += v[i] * v[i];
  }
  const float rstd = 1.0f / sqrtf(blockSum(s) / float(D) + eps);
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const long long c = threadIdx.x + (long long)i * blockDim.x;
    if (c < D)
      epilogue(c, v[i] * rstd * ld(scale[c]));
  }
}

} // namespace kiln

namespace kiln {

namespace argreduce {
/// True when candidate (v, i) replaces (best, bi) in an arg-reduce over one row, whatever order
/// the two were visited in: the result is what a sequential scan from index 0 gives (the first
/// extreme, or the last with SELECT_LAST; for floats the first NaN wins over everything). An
/// index below 0 marks "no element yet".
template <typename ACC, bool MAX, bool SELECT_LAST, bool FLOAT>
__device__ __forceinline__ bool beats(ACC v, long long i, ACC best, long long bi) {
  if (i < 0)
    return false;
  if (bi < 0)
    return true;
  if constexpr (FLOAT) {
    const bool vNaN = v != v, bNaN = best != best;
    if (vNaN || bNaN)
      return vNaN && (!bNaN || i < bi);
  }
  if (v != best)
    return MAX ? v > best : v < best;
  return SELECT_LAST ? i > bi : i < bi;
}
} // namespace argreduce

/// ArgMax / ArgMin of one row of `n` elements by a whole block (blockDim.x a multiple of 32, at
/// most 1024): `load(k)` returns element k as ACC (float for floating types, long long for
/// integers); thread 0 writes the index to *out. The same index as the sequential scan of
/// ReduceEmitter's one-thread-per-row kernel (argreduce::beats). Used for long rows (a decode
/// step's greedy token over the vocabulary), where one thread per row would scan tens of
/// thousands of elements alone.
template <typename ACC, bool MAX, bool SELECT_LAST, bool FLOAT, typename Load>
__device__ __forceinline__ void argReduceRow(const Load &load, long long n, long long *out) {
  using argreduce::beats;
  ACC best = ACC(0);
  long long bi = -1;
  // kUnroll loads in flight per thread before the first compare (one load at a time left the
  // scan latency-bound: 60 us for a 32000-way row on the H200 with 128 threads). Each thread
  // still visits its elements in increasing k, so ties resolve as in the sequential scan.
  constexpr int kUnroll = 8;
  const long long stride = blockDim.x;
  for (long long k0 = threadIdx.x; k0 < n; k0 += kUnroll * stride) {
    ACC v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long k = k0 + u * stride;
      v[u] = k < n ? load(k) : ACC(0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long k = k0 + u * stride;
      if (k < n && beats<ACC, MAX, SELECT_LAST, FLOAT>(v[u], k, best, bi)) {
        best = v[u];
        bi = k;
      }
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const ACC v = __shfl_xor_sync(0xffffffffu, best, offset);
    const long long i = __shfl_xor_sync(0xffffffffu, bi, offset);
    if (beats<ACC, MAX, SELECT_LAST, FLOAT>(v, i, best, bi)) {
      best = v;
      bi = i;
    }
  }
  __shared__ ACC sBest[32];
  __shared__ long long sIndex[32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  if (lane == 0) {
    sBest[warp] = best;
    sIndex[warp] = bi;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < warps; ++w)
      if (beats<ACC, MAX, SELECT_LAST, FLOAT>(sBest[w], sIndex[w], best, bi)) {
        best = sBest[w];
        bi = sIndex[w];
      }
    *out = bi < 0 ? 0 : bi;
  }
}

} // namespace kiln
