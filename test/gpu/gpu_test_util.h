// gpu_test_util.h - host-side helpers shared by the standalone GEMM GPU tests.
//
// Error checking that names the failing CUDA / cuBLAS call, a host parallel-for for the fp64
// references, and the CUDA-graph timing both benchmarks use (20 launches per graph, median of
// 20 replays), so the two tests measure kiln's kernels and cuBLAS the same way.
#pragma once

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

// Every CUDA / cuBLAS call is checked; a failure prints the call, file, line and the driver's
// text and exits with status 2 (a test program, not a library).
#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,               \
                   cudaGetErrorName(err_), cudaGetErrorString(err_));                              \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

#define CHECK_CUBLAS(call)                                                                         \
  do {                                                                                             \
    cublasStatus_t st_ = (call);                                                                   \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                            \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                    \
                   cublasGetStatusString(st_));                                                    \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

namespace kiln_test {

/// Runs body(i) for i in [0, n) on all host cores.
void parallelFor(int n, const std::function<void(int)> &body) {
  int workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (int i = w; i < n; i += workers)
        body(i);
    });
  for (auto &t : pool)
    t.join();
}

/// Median time in µs of one launch: `launch` is captured `kLaunches` (default 20) times into a
/// CUDA graph, the graph is replayed 3 times to warm up, then `kReplays` (default 20) timed
/// replays; the median replay / kLaunches. Long kernels (tens of ms) take fewer of each.
double timeGraph(cudaStream_t stream, const std::function<void(cudaStream_t)> &launch,
                 int kLaunches = 20, int kReplays = 20) {
  constexpr int kWarmup = 3;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kLaunches; ++i)
    launch(stream);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < kWarmup; ++i)
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<float> ms(kReplays);
  for (int i = 0; i < kReplays; ++i) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    CHECK_CUDA(cudaEventElapsedTime(&ms[i], start, stop));
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  std::sort(ms.begin(), ms.end());
  return 0.5 * (ms[kReplays / 2 - 1] + ms[kReplays / 2]) * 1e3 / kLaunches;
}

/// The fp32 value of an f16 (bf16 with `bf16`) bit pattern.
float halfBitsToFloat(uint16_t bits, bool bf16) {
  if (bf16) {
    __nv_bfloat16 h;
    std::memcpy(&h, &bits, 2);
    return __bfloat162float(h);
  }
  __half h;
  std::memcpy(&h, &bits, 2);
  return __half2float(h);
}

/// The f16 (bf16) bit pattern nearest to `x` (round to nearest even).
uint16_t floatToHalfBits(float x, bool bf16) {
  uint16_t bits;
  if (bf16) {
    __nv_bfloat16 h = __float2bfloat16_rn(x);
    std::memcpy(&bits, &h, 2);
  } else {
    __half h = __float2half_rn(x);
    std::memcpy(&bits, &h, 2);
  }
  return bits;
}

/// max |x - y| / max |y| over two f16 device buffers of n elements; inf when either holds a NaN.
double relDiffF16(const void *x, const void *y, size_t n) {
  std::vector<uint16_t> hx(n), hy(n);
  CHECK_CUDA(cudaMemcpy(hx.data(), x, n * 2, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hy.data(), y, n * 2, cudaMemcpyDeviceToHost));
  double err = 0, mag = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = halfBitsToFloat(hx[i], false), b = halfBitsToFloat(hy[i], false);
    if (std::isnan(a) || std::isnan(b))
      return INFINITY;
    err = std::max(err, std::fabs(a - b));
    mag = std::max(mag, std::fabs(b));
  }
  return mag > 0 ? err / mag : err;
}

/// cuTensorMapEncodeTiled through the runtime's driver entry point (no -lcuda needed).
using TensorMapEncodeFn = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                       const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                       const cuuint32_t *, CUtensorMapInterleave,
                                       CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill);
inline TensorMapEncodeFn tensorMapEncodeFn() {
  static TensorMapEncodeFn fn = [] {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q;
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                cudaEnableDefault, &q));
    if (!p || q != cudaDriverEntryPointSuccess) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled not found\n");
      std::exit(2);
    }
    return reinterpret_cast<TensorMapEncodeFn>(p);
  }();
  return fn;
}

/// Encodes into `out` (128 bytes: a kiln::TensorMap) a 16-bit tensor map over `ptr` (f16, or
/// bf16 with `bf16`) with dims (innermost first), byte strides of dims 1.. and box; swizzle
/// 128B, zero fill out of bounds. Rank = dims.size(). What the kiln runtime encodes from an
/// artifact's tensor-map entries.
inline void makeTensorMap(void *out, const void *ptr, bool bf16, std::vector<uint64_t> dims,
                          std::vector<uint64_t> strides, std::vector<uint32_t> box) {
  static_assert(sizeof(CUtensorMap) == 128, "tensor map size");
  CUtensorMap map;
  std::vector<cuuint32_t> elementStrides(dims.size(), 1);
  CUresult r = tensorMapEncodeFn()(
      &map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      cuuint32_t(dims.size()), const_cast<void *>(ptr), dims.data(), strides.data(), box.data(),
      elementStrides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d): rank %zu dims", int(r), dims.size());
    for (auto d : dims)
      std::fprintf(stderr, " %llu", (unsigned long long)d);
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  std::memcpy(out, &map, sizeof(map));
}

/// Prints the current device into `prop`'s description; false (with a message on stderr) unless
/// it is sm_90, the only architecture the sm_90a test builds run on.
bool printDeviceIsSm90(cudaDeviceProp &prop) {
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  if (prop.major != 9 || prop.minor != 0) {
    std::fprintf(stderr, "this build targets sm_90a; the device is sm_%d%d\n", prop.major,
                 prop.minor);
    return false;
  }
  return true;
}

} // namespace kiln_test

/// Host conversions between float and a test's element type T (__half, __nv_bfloat16, float):
/// roundTo<T>(x) is x rounded to T and back (round to nearest even), toT<T> converts, fromT<T>
/// widens. Shared by the attention and decode-attention tests.
template <typename T> float roundTo(float x);
template <> inline float roundTo<__half>(float x) { return __half2float(__float2half_rn(x)); }
template <> inline float roundTo<__nv_bfloat16>(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}
template <> inline float roundTo<float>(float x) { return x; }
template <typename T> T toT(float x);
template <> inline __half toT<__half>(float x) { return __float2half_rn(x); }
template <> inline __nv_bfloat16 toT<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> inline float toT<float>(float x) { return x; }
template <typename T> float fromT(T x);
template <> inline float fromT<__half>(__half x) { return __half2float(x); }
template <> inline float fromT<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> inline float fromT<float>(float x) { return x; }
