// common.cuh - scalar helpers shared by every generated kiln kernel.
//
// Included by each generated CUDA C++ module (embedded in kiln-compile and
// handed to NVRTC as a named header). No CUDA runtime headers are needed.
#pragma once

namespace kiln {

/// Warp-wide sum of a float through shuffles (all 32 lanes active).
__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// NaN-propagating max/min as ONNX Max/Min specify.
__device__ __forceinline__ float maxNaN(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}
__device__ __forceinline__ float minNaN(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b);
}

/// Warp-wide maximum of a float (all 32 lanes active); NaN in any lane
/// gives NaN, like the per-thread maxNaN (fmaxf would drop it).
__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = maxNaN(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// ONNX Gather index normalization: negative indices count from the end;
/// out-of-range indices (undefined in ONNX) are clamped so no kernel reads
/// outside its operand.
__device__ __forceinline__ long long normIndex(long long i, long long dim) {
  if (i < 0)
    i += dim;
  return i < 0 ? 0 : (i >= dim ? dim - 1 : i);
}

} // namespace kiln
