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
