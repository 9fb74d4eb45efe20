// gpu_test_util.h - host-side helpers shared by the standalone GEMM GPU tests.
//
// Error checking that names the failing CUDA / cuBLAS call, a host parallel-for for the fp64
// references, and the CUDA-graph timing both benchmarks use (20 launches per graph, median of
// 20 replays), so the two tests measure kiln's kernels and cuBLAS the same way.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

/// Median time in µs of one launch: `launch` is captured 20 times into a CUDA graph, the graph
/// is replayed 3 times to warm up, then 20 timed replays; the median replay / 20.
double timeGraph(cudaStream_t stream, const std::function<void(cudaStream_t)> &launch) {
  constexpr int kLaunches = 20, kReplays = 20, kWarmup = 3;
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

} // namespace kiln_test
