// common.cuh - scalar helpers shared by every generated kiln kernel.
//
// Included by each generated CUDA C++ module (embedded in kiln-compile and
// handed to NVRTC as a named header). No CUDA runtime headers are needed.
#pragma once

namespace kiln {

//===----------------------------------------------------------------------===//
// 16-bit storage types. Kernels compute in fp32 registers and keep f16/bf16
// only in memory: loads widen with ld(), stores narrow with cvt<T>(). The
// types are plain 16-bit patterns (no cuda_fp16.h), so the embedded headers
// need nothing from the toolkit; conversions are single PTX instructions.
//===----------------------------------------------------------------------===//

/// IEEE binary16 storage (bit pattern).
struct f16 {
  unsigned short bits;
};
/// bfloat16 storage (bit pattern: the upper half of an fp32).
struct bf16 {
  unsigned short bits;
};

/// Programmatic dependent launch (PDL; CUDA programming guide, "Programmatic Dependent Launch and
/// Synchronization"; PTX ISA, griddepcontrol). With kiln-compile --programmatic-launch=early a
/// generated kernel calls this first, before it touches global memory (by default it calls
/// gridDependencyWait below instead): `griddepcontrol.wait` returns once the grids this launch
/// depends on have completed and their writes are visible, then
/// `griddepcontrol.launch_dependents` lets the next launch of the stream start its blocks (they
/// run up to their own wait) while this grid runs. The runtime launches such kernels with the
/// programmatic stream serialization attribute (docs/runtime.md), so a kernel's launch latency and
/// block scheduling overlap the previous kernel's tail instead of following it. Triggering only
/// after the wait keeps at most two grids of a stream resident. Without the attribute both
/// instructions are no-ops; below sm_90 they are not emitted.
__device__ __forceinline__ void gridDependencySync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// `__cluster_dims__(...)` where clusters exist (sm_90 and newer), nothing below: a kernel whose
/// code works either way (sampleRow's CLUSTER) declares its cluster with it.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define KILN_CLUSTER_DIMS(x, y, z)
#else
#define KILN_CLUSTER_DIMS(x, y, z) __cluster_dims__(x, y, z)
#endif

/// gridDependencySync without the trigger (kiln-compile --programmatic-launch=at-exit, the
/// default; the first statement of every generated kernel then): the next
/// launch may start once every block of this grid has exited, before the grid's completion is
/// flushed, so only that last step and the launch latency overlap.
__device__ __forceinline__ void gridDependencyWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Widens a stored element to its compute type (fp32 for 16-bit floats).
__device__ __forceinline__ float ld(float x) { return x; }
__device__ __forceinline__ float ld(f16 x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}
__device__ __forceinline__ float ld(bf16 x) { return __uint_as_float(unsigned(x.bits) << 16); }
__device__ __forceinline__ long long ld(long long x) { return x; }
__device__ __forceinline__ int ld(int x) { return x; }
__device__ __forceinline__ bool ld(bool x) { return x; }

/// Read-only loads of kernel inputs (ld.global.nc). A kernel never writes a buffer it reads
/// (memory planning keeps every kernel's inputs and outputs apart), so these loads are not
/// ordered against the kernel's stores: plain asm without a memory clobber lets the compiler
/// hoist a fused epilogue's loads above earlier stores, which possible pointer aliasing would
/// otherwise forbid. (Measured speed-neutral on the H200 models so far; docs/results.md.)
__device__ __forceinline__ float ldg(const float *p) {
  float v;
  asm("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ f16 ldg(const f16 *p) {
  f16 v;
  asm("ld.global.nc.b16 %0, [%1];" : "=h"(v.bits) : "l"(p));
  return v;
}
__device__ __forceinline__ bf16 ldg(const bf16 *p) {
  bf16 v;
  asm("ld.global.nc.b16 %0, [%1];" : "=h"(v.bits) : "l"(p));
  return v;
}
__device__ __forceinline__ long long ldg(const long long *p) {
  long long v;
  asm("ld.global.nc.s64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ int ldg(const int *p) {
  int v;
  asm("ld.global.nc.s32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned long long ldg(const unsigned long long *p) {
  unsigned long long v;
  asm("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned ldg(const unsigned *p) {
  unsigned v;
  asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ short ldg(const short *p) {
  short v;
  asm("ld.global.nc.s16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned short ldg(const unsigned short *p) {
  unsigned short v;
  asm("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ signed char ldg(const signed char *p) {
  int v;
  asm("ld.global.nc.s8 %0, [%1];" : "=r"(v) : "l"(p));
  return (signed char)v;
}
__device__ __forceinline__ unsigned char ldg(const unsigned char *p) {
  unsigned v;
  asm("ld.global.nc.u8 %0, [%1];" : "=r"(v) : "l"(p));
  return (unsigned char)v;
}
__device__ __forceinline__ bool ldg(const bool *p) {
  unsigned v;
  asm("ld.global.nc.u8 %0, [%1];" : "=r"(v) : "l"(p));
  return v != 0;
}

/// Largest finite value of each 16-bit float type.
constexpr float kF16Max = 65504.0f;
constexpr float kBF16Max = 3.38953139e38f;

/// Narrows an fp32 value for storage. 16-bit floats round to nearest even
/// and saturate: a finite fp32 value never becomes inf (an additive mask of
/// -1e12 stays the largest negative finite value); inf and NaN stay.
template <typename T> __device__ __forceinline__ T cvt(float x);
template <> __device__ __forceinline__ float cvt<float>(float x) { return x; }
template <> __device__ __forceinline__ f16 cvt<f16>(float x) {
  if (fabsf(x) != __int_as_float(0x7f800000)) // finite or NaN; NaN stays NaN
    x = x != x ? x : fminf(fmaxf(x, -kF16Max), kF16Max);
  f16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
  return r;
}
template <> __device__ __forceinline__ bf16 cvt<bf16>(float x) {
  if (fabsf(x) != __int_as_float(0x7f800000))
    x = x != x ? x : fminf(fmaxf(x, -kBF16Max), kBF16Max);
  bf16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
  return r;
}

/// ONNX Cast of an fp32 value to a 16-bit float (IEEE 754 convertFormat): rounds to nearest
/// even, and a finite value half an ulp or more past the largest finite one becomes an infinity
/// (fp16: 65520.0f gives inf, 65519.99f gives 65504); infinities and NaN stay. PTX ISA, cvt:
/// without .satfinite, .rn conversions to f16/bf16 overflow to infinity. Unlike cvt<T>, the
/// storage rule above, which saturates.
template <typename T> __device__ __forceinline__ T castRn(float x);
template <> __device__ __forceinline__ f16 castRn<f16>(float x) {
  f16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
  return r;
}
template <> __device__ __forceinline__ bf16 castRn<bf16>(float x) {
  bf16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
  return r;
}

/// ONNX Cast of a 64-bit integer to a 16-bit float with one rounding to nearest even (as castRn):
/// the integer first goes to fp32 rounded to odd (truncate, then set the last significand bit if
/// anything was dropped), which then rounds correctly to the 8- or 11-bit significand (Boldo and
/// Melquiond, "When double rounding is odd", 2005; fp32 keeps 13 or more extra bits). Plain
/// (float) rounding first would round ties twice (2^25 + 2^17 + 1 to bf16).
template <typename T> __device__ __forceinline__ T castRnInt(long long v) {
  float f = __ll2float_rz(v);
  if (static_cast<long long>(f) != v)
    f = __uint_as_float(__float_as_uint(f) | 1u);
  return castRn<T>(f);
}
template <typename T> __device__ __forceinline__ T castRnInt(unsigned long long v) {
  float f = __ull2float_rz(v);
  if (static_cast<unsigned long long>(f) != v)
    f = __uint_as_float(__float_as_uint(f) | 1u);
  return castRn<T>(f);
}

/// Warp-wide sum of a float through shuffles (all 32 lanes active).
__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// 1 + tanh(x), computed as 2 / (1 + 2^(-2 x log2(e))): the (1 + tanh(u)) of GELU-tanh
/// (0.5 x (1 + tanh(u)), GPT-2 and other exports) in four PTX instructions (mul, ex2.approx,
/// add, div.approx) instead of tanhf's two branch-free paths (about 25), and without the
/// cancellation of 1 + tanh(x) for negative x. exp2f has 2 ulp, __fdividef 2 ulp for
/// denominators below 2^126 (above, the result is 0, as 2 / d is then below 2^-125); +inf gives
/// 2, -inf gives 0, NaN gives NaN.
__device__ __forceinline__ float onePlusTanh(float x) {
  return __fdividef(2.0f, 1.0f + exp2f(x * -2.88539008177792681472f));
}

/// 1 + erf(x): the (1 + erf(x / sqrt 2)) of exact GELU (0.5 x (1 + erf(x / sqrt 2)), BERT and
/// other exports), branch-free and without the cancellation of 1 + erf(x) for negative x. With
/// z = |x|: erfc(z) = t exp(-z^2 - 1.26551223 + t P(t)), t = 1 / (1 + z / 2), P a degree-8
/// polynomial (Press et al., Numerical Recipes in C, 2nd ed., section 6.2, erfcc: fractional
/// error below 1.2e-7 for every z >= 0); then 1 + erf(x) is 2 - erfc(x) for x >= 0 and
/// erfc(-x) for x < 0. In fp32 the absolute error stays below 4e-7 and the relative error below
/// 4e-6 for |x| <= 6 and 1e-5 wherever the result is at least 1e-30 (test/gpu/emulate_math.py,
/// an fp32 emulation of these operations; the exponent's rounding grows with x^2;
/// test/gpu/math_test.cu checks it on the GPU), while erff plus 1 is off by up to one fp32 ulp
/// of 1 absolute, i.e. has no relative accuracy for x < -3. Cost, counted in the PTX of a kernel
/// y[i] = x * 0.5f * onePlusErf(x * 0.7071f) against one with 1.0f + erff(x / 1.4142f) (nvcc 13
/// -O3 -arch=sm_90a -ptx, build machine, 2026-12-02): 18 FMA/ALU instructions, ex2.approx and
/// div.approx, no branch; erff is 20 (9 selp choosing between its two polynomials, 7 fma,
/// ex2.approx.ftz) and the division a div.rn.f32 with a slow-path branch, so the gain in exact
/// GELU is accuracy plus the x / sqrt 2 that ExprEmitter turns into a multiplication.
/// +inf gives 2, -inf gives 0, NaN gives NaN.
__device__ __forceinline__ float onePlusErf(float x) {
  const float z = fabsf(x);
  const float t = __fdividef(1.0f, 1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = fmaf(p, t, -0.82215223f);
  p = fmaf(p, t, 1.48851587f);
  p = fmaf(p, t, -1.13520398f);
  p = fmaf(p, t, 0.27886807f);
  p = fmaf(p, t, -0.18628806f);
  p = fmaf(p, t, 0.09678418f);
  p = fmaf(p, t, 0.37409196f);
  p = fmaf(p, t, 1.00002368f);
  const float e = t * exp2f(fmaf(-z, z, fmaf(t, p, -1.26551223f)) * 1.44269504088896340736f);
  return x >= 0.0f ? 2.0f - e : e;
}

/// NaN-propagating max/min as ONNX Max/Min specify.
__device__ __forceinline__ float maxNaN(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}
__device__ __forceinline__ float minNaN(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b);
}

/// Integer power, exact (repeated squaring in 64-bit two's complement, so an
/// overflow wraps like numpy's): x^y for y >= 0; for y < 0 the truncated
/// 1 / x^-y, i.e. 1 for x = 1, +-1 for x = -1, else 0 (no trap for x = 0).
/// The constant folder computes the same (intPow in KilnFolders.cpp); a
/// detour through pow(double) is not exact (3^k can come out one less).
__device__ __forceinline__ long long ipow(long long x, long long y) {
  if (y < 0)
    return x == 1 ? 1 : x == -1 ? ((-y) % 2 ? -1 : 1) : 0;
  unsigned long long result = 1, base = (unsigned long long)x;
  for (unsigned long long e = (unsigned long long)y; e; e >>= 1, base *= base)
    if (e & 1)
      result *= base;
  return (long long)result;
}

/// ONNX Mod with fmod = 0 on integers: the remainder takes the divisor's sign
/// (Python's %). A zero divisor (undefined in ONNX) and -1 give 0, never a
/// trap. The constant folder computes the same (ModOp::fold).
__device__ __forceinline__ long long imod(long long x, long long y) {
  if (y == 0 || y == -1)
    return 0;
  long long r = x % y;
  return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}
/// ONNX Mod with fmod = 1 on integers: C's remainder (the dividend's sign).
__device__ __forceinline__ long long ifmod(long long x, long long y) {
  return y == 0 || y == -1 ? 0 : x % y;
}
/// Mod on unsigned integers: fmod = 0 and 1 agree; a zero divisor gives 0.
__device__ __forceinline__ unsigned long long umod(unsigned long long x, unsigned long long y) {
  return y == 0 ? 0 : x % y;
}
/// Floating remainder with the divisor's sign (Mod fmod = 0 on floats, which
/// ONNX forbids but the folder and kernels define alike).
__device__ __forceinline__ float fmodSigned(float x, float y) {
  float r = fmodf(x, y);
  return r != 0.0f && ((r < 0.0f) != (y < 0.0f)) ? r + y : r;
}

/// A CUDA tensor map (TMA descriptor, the driver's CUtensorMap): 128 opaque
/// bytes that the runtime encodes on the host with cuTensorMapEncodeTiled and
/// passes by value. A kernel declares it after its pointer parameters as
/// `const __grid_constant__ kiln::TensorMap tmap0` (grid constant, so its
/// address is the parameter's own, as cp.async.bulk.tensor needs) and gives
/// `&tmap0` to the TMA instructions (PTX ISA, "Tensor copy instructions").
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};
static_assert(sizeof(TensorMap) == 128, "a CUtensorMap is 128 bytes");

/// Warp-wide maximum of a float (all 32 lanes active); NaN in any lane
/// gives NaN, like the per-thread maxNaN (fmaxf would drop it).
__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = maxNaN(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Warp-wide minimum of a float (all 32 lanes active); NaN in any lane gives NaN.
__device__ __forceinline__ float warpMin(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = minNaN(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// ONNX Gather index normalization: negative indices count from the end;
/// out-of-range indices (undefined in ONNX) are clamped so no kernel reads
/// outside its operand.
__device__ __forceinline__ long long normIndex(long long i, long long dim) {
  // dim > 0 always (kiln-eliminate-empty-tensors rejects gathers from an
  // empty axis at compile time; codegen checks it again); 0 for dim <= 0
  // keeps even a broken caller from indexing before the operand.
  if (dim <= 0)
    return 0;
  if (i < 0)
    i += dim;
  return i < 0 ? 0 : (i >= dim ? dim - 1 : i);
}

} // namespace kiln
