// gemm_wgmma_test.cu - GPU test and benchmark of kiln::gemmTileWgmma
// (compiler/codegen/cuda/gemm_wgmma.cuh, sm_90a).
//
// Correctness (default): for f16 and bf16, every target tile configuration, every operand layout
// (K-major / MN-major StridedOperand on either side, FnOperand through a transposing or negating
// functor) and awkward shapes (M, N not multiples of the tile, M = 1, K = 8, K not a multiple of 8
// for functor operands) plus model-like shapes, the output of the kernel (fp32, row-major, row
// pitch N + 3, poisoned with NaN before the launch) is compared with a host fp64 reference
// computed from the same rounded 16-bit inputs (random in [-1, 1], never zero). A case fails when
// max|out - ref| / max|ref| exceeds 2e-3 (f16) or 1e-2 (bf16), when any in-range element is NaN
// (unwritten, or read from the NaN padding around the operands), or when the epilogue wrote to
// the row padding. Cases that break a StridedOperand precondition (the contiguous extent % 8)
// are skipped: the code generator uses FnOperand there.
//
// Benchmark (--bench): f16 GEMMs C[M,N] = A[M,K] B, A row-major [M, K], B either row-major
// [K, N] (MN-major, the ONNX MatMul weight) or [N, K] (K-major, a transposed Gemm weight), f16
// out; every tile configuration and cublasGemmEx (CUBLAS_COMPUTE_32F) are timed inside a CUDA
// graph of 20 launches, the median of 20 graph replays after warm-up; prints the best
// configuration per shape and layout against cuBLAS and checks its output against cuBLAS's.
//
// Build and run: test/gpu/build_gemm_wgmma_test.sh [OUT]; OUT [--bench] [--quick] [-v].
// Needs an sm_90 device (the build targets sm_90a only). Kernel wrappers are shaped like kiln's
// generated code: __global__ __launch_bounds__(128 * CONSUMER_WARPGROUPS) functions, dynamic
// shared memory, blockIdx.x = N tile, blockIdx.y = M tile.
#include "kiln/common.cuh"
#include "kiln/gemm_wgmma.cuh"

#include "gpu_test_util.h"
#include <cublas_v2.h>
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
#include <random>
#include <string>
#include <thread>
#include <vector>

// Error checking (CHECK_CUDA, CHECK_CUBLAS), parallelFor and timeGraph: gpu_test_util.h.

namespace {
using kiln_test::parallelFor;
using kiln_test::timeGraph;

//===----------------------------------------------------------------------===//
// Correctness kernels
//===----------------------------------------------------------------------===//

/// How a test kernel presents an operand to gemmTileWgmma.
enum Layout : int {
  kKMajor = 0,  ///< StridedOperand<T, true>: A stored [M, lda], B stored [N, ldb]
  kMNMajor = 1, ///< StridedOperand<T, false>: A stored [K, lda], B stored [K, ldb]
  kFn = 2,      ///< FnOperand: A = transposing read of [K, lda]; B = -(read of [N, ldb])
};
const char *layoutName(int l) { return l == kKMajor ? "K" : l == kMNMajor ? "MN" : "Fn"; }

/// Arguments of a correctness kernel; C is fp32 [M, ldc].
struct GemmArgs {
  int M, N, K;
  const void *A;
  long long lda;
  const void *B;
  long long ldb;
  float *C;
  long long ldc;
};

/// The A operand (rows = M) in layout L.
template <typename T, int L>
__device__ __forceinline__ auto makeOperandA(const T *__restrict__ A, long long lda, int M) {
  if constexpr (L == kKMajor)
    return kiln::StridedOperand<T, true>{A, lda, M};
  else if constexpr (L == kMNMajor)
    return kiln::StridedOperand<T, false>{A, lda, M};
  else {
    auto f = [A, lda](int m, int k) -> float { return kiln::ld(A[k * lda + m]); };
    return kiln::FnOperand<T, decltype(f)>{f, M};
  }
}

/// The B operand (rows = N) in layout L.
template <typename T, int L>
__device__ __forceinline__ auto makeOperandB(const T *__restrict__ B, long long ldb, int N) {
  if constexpr (L == kKMajor)
    return kiln::StridedOperand<T, true>{B, ldb, N};
  else if constexpr (L == kMNMajor)
    return kiln::StridedOperand<T, false>{B, ldb, N};
  else {
    auto f = [B, ldb](int n, int k) -> float { return -kiln::ld(B[n * ldb + k]); };
    return kiln::FnOperand<T, decltype(f)>{f, N};
  }
}

/// One correctness kernel: the body kiln generates, with fp32 output.
template <typename T, int BM, int BN, int BK, int CWG, int S, int LA, int LB>
__global__ void __launch_bounds__(128 * CWG) gemmWgmmaTestKernel(GemmArgs p) {
  extern __shared__ __align__(16) char smem[];
  const auto a = makeOperandA<T, LA>(static_cast<const T *>(p.A), p.lda, p.M);
  const auto b = makeOperandB<T, LB>(static_cast<const T *>(p.B), p.ldb, p.N);
  float *__restrict__ C = p.C;
  const long long ldc = p.ldc;
  kiln::gemmTileWgmma<T, BM, BN, BK, CWG, S>(
      p.M, p.N, p.K, blockIdx.y, blockIdx.x, a, b,
      [&](int m, int n, float acc) { C[m * ldc + n] = acc; }, smem);
}

/// One entry of the correctness matrix.
struct TestCase {
  bool bf16;
  int bm, bn, bk, cwg, stages, la, lb;
  void (*launch)(const GemmArgs &, cudaStream_t);
  std::string name() const {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%dx%dx%d wg%d s%d A:%s B:%s", bm, bn, bk, cwg, stages,
                  layoutName(la), layoutName(lb));
    return buf;
  }
};

template <typename T, int BM, int BN, int BK, int CWG, int S, int LA, int LB>
void launchTest(const GemmArgs &p, cudaStream_t stream) {
  auto kernel = gemmWgmmaTestKernel<T, BM, BN, BK, CWG, S, LA, LB>;
  constexpr int smem = kiln::gemmWgmmaSmemBytes<T, BM, BN, BK, S>();
  if (smem > 48 * 1024)
    CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  dim3 grid((p.N + BN - 1) / BN, (p.M + BM - 1) / BM);
  kernel<<<grid, 128 * CWG, smem, stream>>>(p);
  CHECK_CUDA(cudaGetLastError());
}

template <int BM, int BN, int BK, int CWG, int S, int LA, int LB>
void addCase(std::vector<TestCase> &cases) {
  cases.push_back(
      {false, BM, BN, BK, CWG, S, LA, LB, launchTest<kiln::f16, BM, BN, BK, CWG, S, LA, LB>});
  cases.push_back(
      {true, BM, BN, BK, CWG, S, LA, LB, launchTest<kiln::bf16, BM, BN, BK, CWG, S, LA, LB>});
}

/// Every layout pair: the four strided combinations and functor operands on either side.
template <int BM, int BN, int BK, int CWG, int S> void addAllLayouts(std::vector<TestCase> &cases) {
  addCase<BM, BN, BK, CWG, S, kKMajor, kKMajor>(cases);
  addCase<BM, BN, BK, CWG, S, kKMajor, kMNMajor>(cases);
  addCase<BM, BN, BK, CWG, S, kMNMajor, kKMajor>(cases);
  addCase<BM, BN, BK, CWG, S, kMNMajor, kMNMajor>(cases);
  addCase<BM, BN, BK, CWG, S, kFn, kMNMajor>(cases);
  addCase<BM, BN, BK, CWG, S, kKMajor, kFn>(cases);
  addCase<BM, BN, BK, CWG, S, kFn, kFn>(cases);
}
/// The two layouts of ONNX MatMul / Gemm weights: B row-major [K, N] or transposed [N, K].
template <int BM, int BN, int BK, int CWG, int S>
void addWeightLayouts(std::vector<TestCase> &cases) {
  addCase<BM, BN, BK, CWG, S, kKMajor, kMNMajor>(cases);
  addCase<BM, BN, BK, CWG, S, kKMajor, kKMajor>(cases);
}

std::vector<TestCase> allCases() {
  std::vector<TestCase> cases;
  // The target configurations (BM, BN, BK, CONSUMER_WARPGROUPS, STAGES).
  addAllLayouts<128, 128, 64, 2, 4>(cases);
  addAllLayouts<128, 256, 64, 2, 3>(cases);
  addAllLayouts<64, 128, 64, 1, 4>(cases);
  addAllLayouts<64, 64, 64, 1, 4>(cases);
  addAllLayouts<128, 64, 64, 2, 4>(cases);
  // Benchmark extras: four stages at 128 x 256; two m64 blocks per warpgroup; N = 192.
  addWeightLayouts<128, 256, 64, 2, 4>(cases);
  addAllLayouts<128, 128, 64, 1, 3>(cases);
  addWeightLayouts<128, 192, 64, 2, 4>(cases);
  return cases;
}

//===----------------------------------------------------------------------===//
// Host data and reference
//===----------------------------------------------------------------------===//

uint16_t toBits(float x, bool bf16) { return kiln_test::floatToHalfBits(x, bf16); }
float fromBits(uint16_t bits, bool bf16) { return kiln_test::halfBitsToFloat(bits, bf16); }

constexpr uint16_t kNaN16 = 0xffff;       // NaN in f16 and bf16: operand padding
constexpr uint32_t kPoison = 0xffffffffu; // NaN in fp32: unwritten output

/// Random nonzero 16-bit values in [-1, 1] (bits) and their exact fp32 values.
void randomOperand(std::mt19937 &rng, size_t n, bool bf16, std::vector<uint16_t> &bits,
                   std::vector<float> &vals) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  bits.resize(n);
  vals.resize(n);
  for (size_t i = 0; i < n; ++i) {
    float x = dist(rng);
    if (std::fabs(x) < 1e-3f)
      x = 0.5f;
    bits[i] = toBits(x, bf16);
    vals[i] = fromBits(bits[i], bf16);
  }
}

/// ref[m, n] = sum_k a[m, k] * bt[n, k] in fp64 (products of 16-bit values are exact).
std::vector<double> reference(const std::vector<float> &a, const std::vector<float> &bt, int M,
                              int N, int K) {
  std::vector<double> ref(size_t(M) * N);
  parallelFor(M, [&](int m) {
    const float *ar = &a[size_t(m) * K];
    for (int n = 0; n < N; ++n) {
      const float *br = &bt[size_t(n) * K];
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int k = 0;
      for (; k + 4 <= K; k += 4) {
        s0 += double(ar[k]) * br[k];
        s1 += double(ar[k + 1]) * br[k + 1];
        s2 += double(ar[k + 2]) * br[k + 2];
        s3 += double(ar[k + 3]) * br[k + 3];
      }
      for (; k < K; ++k)
        s0 += double(ar[k]) * br[k];
      ref[size_t(m) * N + n] = (s0 + s1) + (s2 + s3);
    }
  });
  return ref;
}

/// A device buffer of `rows` x `ld` 16-bit elements whose [rows, cols] part is
/// value(r, c) and the rest NaN.
uint16_t *uploadPadded(int rows, int cols, long long ld,
                       const std::function<uint16_t(int, int)> &value) {
  std::vector<uint16_t> host(size_t(rows) * ld, kNaN16);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      host[size_t(r) * ld + c] = value(r, c);
  uint16_t *dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, std::max<size_t>(host.size(), 1) * 2));
  CHECK_CUDA(cudaMemcpy(dev, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  return dev;
}

long long roundUp8(long long x) { return (x + 7) / 8 * 8; }

struct Shape {
  int M, N, K;
};

/// The StridedOperand precondition of case `c`: each strided operand's contiguous extent (K when
/// K-major, its rows otherwise) is a multiple of 8. The code generator uses FnOperand otherwise.
bool preconditionsHold(const TestCase &c, int M, int N, int K) {
  auto ok = [K](int layout, int rows) {
    return layout == kFn || (layout == kKMajor ? K : rows) % 8 == 0;
  };
  return ok(c.la, M) && ok(c.lb, N);
}

/// Runs every case of one dtype on one shape; returns the number of failures.
int checkShape(const Shape &s, bool bf16, const std::vector<TestCase> &cases, std::mt19937 &rng,
               bool verbose, int &passed, int &skipped) {
  const int M = s.M, N = s.N, K = s.K;
  const double tol = bf16 ? 1e-2 : 2e-3;
  std::vector<uint16_t> aBits, bBits; // a [M, K], bt [N, K]
  std::vector<float> a, bt;
  randomOperand(rng, size_t(M) * K, bf16, aBits, a);
  randomOperand(rng, size_t(N) * K, bf16, bBits, bt);
  const std::vector<double> ref = reference(a, bt, M, N, K);
  double refMax = 0;
  for (double v : ref)
    refMax = std::max(refMax, std::fabs(v));

  // Operand storage (padding NaN): A [M, K + 8] and [K, M8 + 8]; B [N, K + 8] and [K, N8 + 8].
  const long long ldaK = K + 8, ldaMN = roundUp8(M) + 8, ldbK = K + 8, ldbMN = roundUp8(N) + 8;
  uint16_t *dAK = uploadPadded(M, K, ldaK, [&](int m, int k) { return aBits[size_t(m) * K + k]; });
  uint16_t *dAMN =
      uploadPadded(K, M, ldaMN, [&](int k, int m) { return aBits[size_t(m) * K + k]; });
  uint16_t *dBK = uploadPadded(N, K, ldbK, [&](int n, int k) { return bBits[size_t(n) * K + k]; });
  uint16_t *dBMN =
      uploadPadded(K, N, ldbMN, [&](int k, int n) { return bBits[size_t(n) * K + k]; });
  const long long ldc = N + 3;
  const size_t cElems = size_t(M) * ldc;
  float *dC = nullptr;
  CHECK_CUDA(cudaMalloc(&dC, cElems * 4));
  std::vector<float> out(cElems);

  int failures = 0, ran = 0;
  double worst = 0;
  std::string worstName = "-";
  for (const TestCase &c : cases) {
    if (c.bf16 != bf16)
      continue;
    if (!preconditionsHold(c, M, N, K)) {
      ++skipped;
      continue;
    }
    GemmArgs p{M, N, K, nullptr, 0, nullptr, 0, dC, ldc};
    p.A = c.la == kKMajor ? dAK : dAMN;
    p.lda = c.la == kKMajor ? ldaK : ldaMN;
    p.B = c.lb == kMNMajor ? dBMN : dBK;
    p.ldb = c.lb == kMNMajor ? ldbMN : ldbK;
    CHECK_CUDA(cudaMemset(dC, 0xff, cElems * 4));
    c.launch(p, 0);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(out.data(), dC, cElems * 4, cudaMemcpyDeviceToHost));
    const double sign = c.lb == kFn ? -1.0 : 1.0; // the B functor negates
    double errMax = 0;
    long long nan = 0, padWrites = 0;
    for (int m = 0; m < M; ++m) {
      const float *row = &out[size_t(m) * ldc];
      for (int n = 0; n < N; ++n) {
        if (std::isnan(row[n])) {
          ++nan;
          continue;
        }
        errMax = std::max(errMax, std::fabs(row[n] - sign * ref[size_t(m) * N + n]));
      }
      for (int n = N; n < ldc; ++n) {
        uint32_t u;
        std::memcpy(&u, &row[n], 4);
        padWrites += u != kPoison;
      }
    }
    const double rel = refMax > 0 ? errMax / refMax : errMax;
    const bool pass = nan == 0 && padWrites == 0 && rel <= tol;
    ++ran;
    if (ran == 1 || rel > worst) {
      worst = rel;
      worstName = c.name();
    }
    if (pass)
      ++passed;
    else
      ++failures;
    if (!pass || verbose)
      std::printf("  %s %s %dx%dx%d %-30s rel err %.3e  NaN %lld  padding writes %lld\n",
                  pass ? "ok  " : "FAIL", bf16 ? "bf16" : "f16 ", M, N, K, c.name().c_str(), rel,
                  nan, padWrites);
  }
  std::printf("%-4s M=%-5d N=%-5d K=%-5d %3d cases, %d failed; worst rel err %.3e (%s)\n",
              bf16 ? "bf16" : "f16", M, N, K, ran, failures, worst, worstName.c_str());
  for (void *ptr : {(void *)dAK, (void *)dAMN, (void *)dBK, (void *)dBMN, (void *)dC})
    CHECK_CUDA(cudaFree(ptr));
  return failures;
}

int runCorrectness(bool quick, bool verbose) {
  const std::vector<TestCase> cases = allCases();
  std::vector<Shape> shapes = {{77, 200, 136}, {1, 200, 136}, {1, 768, 768}, {64, 96, 8},
                               {200, 77, 264}, {45, 70, 37},  {33, 40, 24}};
  if (!quick)
    for (Shape s :
         std::vector<Shape>{{128, 768, 768}, {512, 512, 64}, {4096, 3072, 768}, {4096, 768, 3072}})
      shapes.push_back(s);
  std::mt19937 rng(20261130);
  int failures = 0, passed = 0, skipped = 0;
  for (bool bf16 : {false, true})
    for (const Shape &s : shapes)
      failures += checkShape(s, bf16, cases, rng, verbose, passed, skipped);
  std::printf("gemm_wgmma correctness: %d passed, %d failed, %d skipped (StridedOperand "
              "precondition)\n",
              passed, failures, skipped);
  return failures == 0 ? 0 : 1;
}

} // namespace

//===----------------------------------------------------------------------===//
// Benchmark kernels: what kiln generates for an f16 MatMul with row-major A [M, K], B either
// [K, N] (BKMAJOR = false) or [N, K] (BKMAJOR = true), and a plain store epilogue.
//===----------------------------------------------------------------------===//

#define KILN_BENCH_KERNEL(NAME, BM, BN, BK, CWG, S, BKMAJOR)                                       \
  extern "C" __global__ void __launch_bounds__(128 * CWG)                                          \
      NAME(int M, int N, int K, const kiln::f16 *__restrict__ in0,                                 \
           const kiln::f16 *__restrict__ in1, kiln::f16 *__restrict__ out0) {                      \
    extern __shared__ __align__(16) char smem[];                                                   \
    const kiln::StridedOperand<kiln::f16, true> a{in0, K, M};                                      \
    const kiln::StridedOperand<kiln::f16, BKMAJOR> b{in1, BKMAJOR ? K : N, N};                     \
    kiln::gemmTileWgmma<kiln::f16, BM, BN, BK, CWG, S>(                                            \
        M, N, K, blockIdx.y, blockIdx.x, a, b,                                                     \
        [&](int m, int n, float acc) { out0[(long long)m * N + n] = kiln::cvt<kiln::f16>(acc); },  \
        smem);                                                                                     \
  }

#define KILN_BENCH_KERNELS(TAG, BM, BN, BK, CWG, S)                                                \
  KILN_BENCH_KERNEL(bench_##TAG##_bmn, BM, BN, BK, CWG, S, false)                                  \
  KILN_BENCH_KERNEL(bench_##TAG##_bk, BM, BN, BK, CWG, S, true)

KILN_BENCH_KERNELS(128x128x64_wg2_s4, 128, 128, 64, 2, 4)
KILN_BENCH_KERNELS(128x256x64_wg2_s3, 128, 256, 64, 2, 3)
KILN_BENCH_KERNELS(64x128x64_wg1_s4, 64, 128, 64, 1, 4)
KILN_BENCH_KERNELS(64x64x64_wg1_s4, 64, 64, 64, 1, 4)
KILN_BENCH_KERNELS(128x64x64_wg2_s4, 128, 64, 64, 2, 4)
KILN_BENCH_KERNELS(128x256x64_wg2_s4, 128, 256, 64, 2, 4)
KILN_BENCH_KERNELS(128x128x64_wg1_s3, 128, 128, 64, 1, 3)
KILN_BENCH_KERNELS(128x192x64_wg2_s4, 128, 192, 64, 2, 4)

namespace {

using BenchFn = void (*)(int, int, int, const kiln::f16 *, const kiln::f16 *, kiln::f16 *);

struct BenchConfig {
  const char *name;
  BenchFn kernelBMN, kernelBK; // B [K, N]; B [N, K]
  int bm, bn, threads, smem;
};

template <int BM, int BN, int BK, int CWG, int S>
BenchConfig benchConfig(const char *name, BenchFn bmn, BenchFn bk) {
  return {name, bmn, bk, BM, BN, 128 * CWG, kiln::gemmWgmmaSmemBytes<kiln::f16, BM, BN, BK, S>()};
}
#define KILN_BENCH_CONFIG(TAG, BM, BN, BK, CWG, S)                                                 \
  benchConfig<BM, BN, BK, CWG, S>(#TAG, bench_##TAG##_bmn, bench_##TAG##_bk)

const BenchConfig kBenchConfigs[] = {
    KILN_BENCH_CONFIG(128x128x64_wg2_s4, 128, 128, 64, 2, 4),
    KILN_BENCH_CONFIG(128x256x64_wg2_s3, 128, 256, 64, 2, 3),
    KILN_BENCH_CONFIG(64x128x64_wg1_s4, 64, 128, 64, 1, 4),
    KILN_BENCH_CONFIG(64x64x64_wg1_s4, 64, 64, 64, 1, 4),
    KILN_BENCH_CONFIG(128x64x64_wg2_s4, 128, 64, 64, 2, 4),
    KILN_BENCH_CONFIG(128x256x64_wg2_s4, 128, 256, 64, 2, 4),
    KILN_BENCH_CONFIG(128x128x64_wg1_s3, 128, 128, 64, 1, 3),
    KILN_BENCH_CONFIG(128x192x64_wg2_s4, 128, 192, 64, 2, 4),
};

void launchBench(const BenchConfig &c, bool bKMajor, int M, int N, int K, const kiln::f16 *A,
                 const kiln::f16 *B, kiln::f16 *C, cudaStream_t stream) {
  dim3 grid((N + c.bn - 1) / c.bn, (M + c.bm - 1) / c.bm);
  (bKMajor ? c.kernelBK : c.kernelBMN)<<<grid, c.threads, c.smem, stream>>>(M, N, K, A, B, C);
  CHECK_CUDA(cudaGetLastError());
}

int runBench(bool verbose) {
  const Shape shapes[] = {{128, 2304, 768},   {128, 768, 768},    {128, 3072, 768},
                          {128, 768, 3072},   {4096, 2304, 768},  {4096, 768, 768},
                          {4096, 3072, 768},  {4096, 768, 3072},  {2048, 2048, 2048},
                          {2048, 5632, 2048}, {2048, 2048, 5632}, {2048, 4096, 2048}};
  for (const BenchConfig &c : kBenchConfigs)
    for (BenchFn k : {c.kernelBMN, c.kernelBK})
      if (c.smem > 48 * 1024)
        CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, c.smem));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  void *workspace = nullptr;
  const size_t workspaceBytes = size_t(64) << 20; // no allocation inside graph capture
  CHECK_CUDA(cudaMalloc(&workspace, workspaceBytes));
  CHECK_CUBLAS(cublasSetWorkspace(handle, workspace, workspaceBytes));

  std::mt19937 rng(7);
  int failures = 0;
  std::printf("%-16s %-4s %-20s %9s %8s %10s %8s %12s %10s\n", "M x N x K", "B", "kiln config",
              "kiln us", "TFLOP/s", "cuBLAS us", "TFLOP/s", "cuBLAS/kiln", "rel diff");
  for (const Shape &s : shapes) {
    const int M = s.M, N = s.N, K = s.K;
    std::vector<uint16_t> aBits, bBits;
    std::vector<float> unused;
    randomOperand(rng, size_t(M) * K, false, aBits, unused);
    randomOperand(rng, size_t(K) * N, false, bBits, unused);
    kiln::f16 *A, *B, *C, *Cref;
    CHECK_CUDA(cudaMalloc(&A, aBits.size() * 2));
    CHECK_CUDA(cudaMalloc(&B, bBits.size() * 2));
    CHECK_CUDA(cudaMalloc(&C, size_t(M) * N * 2));
    CHECK_CUDA(cudaMalloc(&Cref, size_t(M) * N * 2));
    CHECK_CUDA(cudaMemcpy(A, aBits.data(), aBits.size() * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(B, bBits.data(), bBits.size() * 2, cudaMemcpyHostToDevice));

    // The same B buffer serves both layouts (random data): [K, N] row-major, or [N, K].
    for (bool bKMajor : {false, true}) {
      // cuBLAS, column-major view: C^T [N, M] = op(B) [N, K] * A^T [K, M], where B [K, N]
      // row-major is a column-major N x K matrix (op N, ld N) and B [N, K] row-major is the
      // transpose of a column-major K x N one (op T, ld K).
      const float alpha = 1.0f, beta = 0.0f;
      auto cublasLaunch = [&](cudaStream_t) {
        CHECK_CUBLAS(cublasGemmEx(handle, bKMajor ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, N, M, K,
                                  &alpha, B, CUDA_R_16F, bKMajor ? K : N, A, CUDA_R_16F, K, &beta,
                                  Cref, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      cublasLaunch(stream);
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const double cublasUs = timeGraph(stream, cublasLaunch);

      const BenchConfig *best = nullptr;
      double bestUs = 0;
      for (const BenchConfig &c : kBenchConfigs) {
        launchBench(c, bKMajor, M, N, K, A, B, C, stream); // warm-up outside the capture
        CHECK_CUDA(cudaStreamSynchronize(stream));
        const double us = timeGraph(
            stream, [&](cudaStream_t st) { launchBench(c, bKMajor, M, N, K, A, B, C, st); });
        if (verbose)
          std::printf("    %-16s %-4s %-20s %9.2f %8.1f\n", "", bKMajor ? "K" : "MN", c.name, us,
                      2.0 * M * N * K / us * 1e-6);
        if (!best || us < bestUs) {
          best = &c;
          bestUs = us;
        }
      }
      CHECK_CUDA(cudaMemsetAsync(C, 0xff, size_t(M) * N * 2, stream));
      launchBench(*best, bKMajor, M, N, K, A, B, C, stream);
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const double diff = kiln_test::relDiffF16(C, Cref, size_t(M) * N);
      const bool ok = diff <= 5e-3; // both round to f16: about one f16 ulp of the largest output
      failures += !ok;
      char shape[32];
      std::snprintf(shape, sizeof(shape), "%dx%dx%d", M, N, K);
      const double flop = 2.0 * M * N * K;
      std::printf("%-16s %-4s %-20s %9.2f %8.1f %10.2f %8.1f %12.3f %10.2e%s\n", shape,
                  bKMajor ? "K" : "MN", best->name, bestUs, flop / bestUs * 1e-6, cublasUs,
                  flop / cublasUs * 1e-6, cublasUs / bestUs, diff, ok ? "" : "  FAIL");
    }
    for (void *ptr : {(void *)A, (void *)B, (void *)C, (void *)Cref})
      CHECK_CUDA(cudaFree(ptr));
  }
  std::printf("B: MN = [K, N] row-major weight (N-major), K = [N, K] (K-major). cuBLAS/kiln > 1 "
              "means kiln is faster; rel diff = max|kiln - cuBLAS| / max|cuBLAS| of the f16 "
              "outputs\n");
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaFree(workspace));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  bool bench = false, quick = false, verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--bench")
      bench = true;
    else if (arg == "--quick")
      quick = true;
    else if (arg == "-v")
      verbose = true;
    else {
      std::fprintf(stderr, "usage: %s [--bench] [--quick] [-v]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop;
  if (!kiln_test::printDeviceIsSm90(prop))
    return 2;
  return bench ? runBench(verbose) : runCorrectness(quick, verbose);
}
