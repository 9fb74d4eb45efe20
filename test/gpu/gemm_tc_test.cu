// gemm_tc_test.cu - GPU test and benchmark of kiln::gemmTileTC (compiler/codegen/cuda/gemm_tc.cuh).
//
// Correctness (default): for f16, bf16 and tf32 (fp32 storage, T = float), every tile
// configuration kiln-select-tiles may pick (for tf32 those whose shared memory fits sm_90's
// 227 KiB, plus 128x128x64 with 3 stages), every operand layout (K-major / MN-major
// StridedOperand on either side, FnOperand through a transposing or negating functor) and awkward
// shapes (M, N not multiples of the tile, M = 1, K = 8, K not a multiple of the 16-byte chunk for
// functor operands, K a multiple of 4 but not 8) plus model-like shapes, the output of the kernel
// (fp32, row-major, row pitch N + 3, poisoned with NaN before the launch) is compared with a host
// fp64 reference computed from the kernel's inputs (the rounded 16-bit values; for tf32 the fp32
// values, which the kernel rounds to TF32 itself). A case fails when max|out - ref| / max|ref|
// exceeds 2e-3 (f16), 1e-2 (bf16) or 5e-3 (tf32: 10-bit mantissa, K up to 3072), when any
// in-range element is NaN (unwritten, or read from the NaN padding around the operands), or when
// the epilogue wrote to the row padding. Cases that break a StridedOperand precondition (the
// contiguous extent % 8 for 16-bit, % 4 for fp32) are skipped: the code generator uses FnOperand
// there.
//
// Benchmark (--bench): f16 GEMMs C[M,N] = A[M,K] B[K,N], all row-major, f16 out, timed for every
// tile configuration and for cublasGemmEx (CUBLAS_COMPUTE_32F); then tf32 GEMMs (fp32 in and out)
// against cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32. Each inside a CUDA graph of 20
// launches, the median of 20 graph replays after warm-up; prints the best configuration per shape
// against cuBLAS and checks its output against cuBLAS's.
//
// Build and run: test/gpu/build_gemm_tc_test.sh [OUT]; OUT [--bench] [--quick] [-v].
// The kernel wrappers are shaped like kiln's generated code: extern "C" __global__
// __launch_bounds__ functions (the benchmark kernels, stamped by KILN_BENCH_KERNEL) or kernel
// templates with the same body (the correctness matrix), dynamic shared memory, blockIdx.x = N
// tile, blockIdx.y = M tile.
#include "kiln/common.cuh"
#include "kiln/gemm_tc.cuh"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu_test_util.h"

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

/// Element types under test: kernel template argument T = kiln::f16, kiln::bf16, float (TF32).
enum DType : int { kF16 = 0, kBF16 = 1, kTF32 = 2 };
constexpr unsigned kAllDTypes = 1u << kF16 | 1u << kBF16 | 1u << kTF32;
const char *dtypeName(DType d) { return d == kF16 ? "f16" : d == kBF16 ? "bf16" : "tf32"; }
/// Bytes per stored element, and elements per 16-byte chunk (the StridedOperand granule).
int elemBytes(DType d) { return d == kTF32 ? 4 : 2; }
int chunkElems(DType d) { return 16 / elemBytes(d); }
/// Tolerance on max|out - ref| / max|ref|.
double tolerance(DType d) { return d == kF16 ? 2e-3 : d == kBF16 ? 1e-2 : 5e-3; }

/// Largest dynamic shared memory per block on sm_90 (the opt-in limit): tf32 configurations
/// above it are not instantiated.
constexpr int kSm90MaxSmem = 227 * 1024;

/// How a test kernel presents an operand to gemmTileTC.
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
template <typename T, int BM, int BN, int BK, int WM, int WN, int S, int LA, int LB>
__global__ void __launch_bounds__(32 * WM * WN) gemmTcTestKernel(GemmArgs p) {
  extern __shared__ __align__(16) char smem[];
  const auto a = makeOperandA<T, LA>(static_cast<const T *>(p.A), p.lda, p.M);
  const auto b = makeOperandB<T, LB>(static_cast<const T *>(p.B), p.ldb, p.N);
  float *__restrict__ C = p.C;
  const long long ldc = p.ldc;
  kiln::gemmTileTC<T, BM, BN, BK, WM, WN, S>(
      p.M, p.N, p.K, blockIdx.y, blockIdx.x, a, b,
      [&](int m, int n, float acc) { C[m * ldc + n] = acc; }, smem);
}

/// One entry of the correctness matrix.
struct TestCase {
  DType dtype;
  int bm, bn, bk, wm, wn, stages, la, lb;
  void (*launch)(const GemmArgs &, cudaStream_t);
  std::string name() const {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%dx%dx%d w%dx%d s%d A:%s B:%s", bm, bn, bk, wm, wn, stages,
                  layoutName(la), layoutName(lb));
    return buf;
  }
};

template <typename T, int BM, int BN, int BK, int WM, int WN, int S, int LA, int LB>
void launchTest(const GemmArgs &p, cudaStream_t stream) {
  auto kernel = gemmTcTestKernel<T, BM, BN, BK, WM, WN, S, LA, LB>;
  constexpr int smem = kiln::gemmTcSmemBytes<T, BM, BN, BK, S, LA != kMNMajor, LB != kMNMajor>();
  if (smem > 48 * 1024)
    CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  dim3 grid((p.N + BN - 1) / BN, (p.M + BM - 1) / BM);
  kernel<<<grid, 32 * WM * WN, smem, stream>>>(p);
  CHECK_CUDA(cudaGetLastError());
}

/// Adds the case for each dtype in the mask DT; tf32 only where its shared memory (twice the
/// 16-bit one) fits sm_90.
template <unsigned DT, int BM, int BN, int BK, int WM, int WN, int S, int LA, int LB>
void addCase(std::vector<TestCase> &cases) {
  if constexpr ((DT >> kF16) & 1)
    cases.push_back({kF16, BM, BN, BK, WM, WN, S, LA, LB,
                     launchTest<kiln::f16, BM, BN, BK, WM, WN, S, LA, LB>});
  if constexpr ((DT >> kBF16) & 1)
    cases.push_back({kBF16, BM, BN, BK, WM, WN, S, LA, LB,
                     launchTest<kiln::bf16, BM, BN, BK, WM, WN, S, LA, LB>});
  if constexpr (((DT >> kTF32) & 1) &&
                kiln::gemmTcSmemBytes<float, BM, BN, BK, S, true, true>() <= kSm90MaxSmem)
    cases.push_back(
        {kTF32, BM, BN, BK, WM, WN, S, LA, LB, launchTest<float, BM, BN, BK, WM, WN, S, LA, LB>});
}

/// Every layout pair: the four strided combinations and functor operands on either side.
template <int BM, int BN, int BK, int WM, int WN, int S, unsigned DT = kAllDTypes>
void addAllLayouts(std::vector<TestCase> &cases) {
  addCase<DT, BM, BN, BK, WM, WN, S, kKMajor, kKMajor>(cases);
  addCase<DT, BM, BN, BK, WM, WN, S, kKMajor, kMNMajor>(cases);
  addCase<DT, BM, BN, BK, WM, WN, S, kMNMajor, kKMajor>(cases);
  addCase<DT, BM, BN, BK, WM, WN, S, kMNMajor, kMNMajor>(cases);
  addCase<DT, BM, BN, BK, WM, WN, S, kFn, kMNMajor>(cases);
  addCase<DT, BM, BN, BK, WM, WN, S, kKMajor, kFn>(cases);
  addCase<DT, BM, BN, BK, WM, WN, S, kFn, kFn>(cases);
}
/// The two layouts of ONNX MatMul / Gemm weights: B row-major [K, N] or transposed [N, K].
template <int BM, int BN, int BK, int WM, int WN, int S, unsigned DT = kAllDTypes>
void addWeightLayouts(std::vector<TestCase> &cases) {
  addCase<DT, BM, BN, BK, WM, WN, S, kKMajor, kMNMajor>(cases);
  addCase<DT, BM, BN, BK, WM, WN, S, kKMajor, kKMajor>(cases);
}

std::vector<TestCase> allCases() {
  std::vector<TestCase> cases;
  // The tile configurations of kiln-select-tiles (BM, BN, BK, WARPS_M, WARPS_N, STAGES); tf32
  // skips 128x128x64 with 4 stages (256 KiB of shared memory) and gets 3 stages instead.
  addAllLayouts<128, 128, 32, 2, 4, 4>(cases);
  addWeightLayouts<128, 64, 32, 2, 2, 4>(cases);
  addAllLayouts<64, 64, 32, 2, 2, 4>(cases);
  addWeightLayouts<64, 128, 32, 2, 2, 4>(cases);
  addWeightLayouts<32, 64, 64, 1, 2, 4>(cases);
  addAllLayouts<32, 32, 64, 1, 2, 3>(cases);
  addAllLayouts<16, 64, 64, 1, 2, 4>(cases);
  addAllLayouts<128, 128, 64, 2, 4, 4>(cases);
  addWeightLayouts<128, 64, 64, 2, 2, 4>(cases);
  addWeightLayouts<64, 64, 64, 2, 2, 4>(cases);
  addWeightLayouts<64, 128, 64, 2, 2, 4>(cases);
  addAllLayouts<128, 128, 64, 2, 4, 3, 1u << kTF32>(cases);
  // tf32 with 96 KiB instead of 128 KiB (two blocks per SM): a benchmark candidate.
  addWeightLayouts<128, 128, 32, 2, 4, 3, 1u << kTF32>(cases);
  // Warp tile 32 x 8: an odd number of n8 fragments (the ldmatrix.x2 path), two stages.
  addAllLayouts<64, 16, 32, 2, 2, 2>(cases);
  // tf32 only: the smallest tile lines (BK = 8 and 16: 2 and 4 chunks per K-major line; BN = 8:
  // 2 chunks per MN-major line, one n8 fragment per warp).
  addAllLayouts<32, 32, 8, 2, 2, 4, 1u << kTF32>(cases);
  addAllLayouts<64, 8, 16, 4, 1, 3, 1u << kTF32>(cases);
  return cases;
}

//===----------------------------------------------------------------------===//
// Host data and reference
//===----------------------------------------------------------------------===//

/// The stored bit pattern of x in dtype d (16-bit types rounded to nearest even; tf32 operands
/// are stored as fp32, unrounded: the kernel rounds them).
uint32_t toBits(float x, DType d) {
  if (d == kBF16) {
    uint16_t bits;
    __nv_bfloat16 h = __float2bfloat16_rn(x);
    std::memcpy(&bits, &h, 2);
    return bits;
  }
  if (d == kF16) {
    uint16_t bits;
    __half h = __float2half_rn(x);
    std::memcpy(&bits, &h, 2);
    return bits;
  }
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return bits;
}
/// The exact value of a stored bit pattern.
float fromBits(uint32_t bits, DType d) {
  float f;
  if (d == kF16) {
    const uint16_t b = uint16_t(bits);
    __half h;
    std::memcpy(&h, &b, 2);
    return __half2float(h);
  }
  if (d == kBF16)
    bits <<= 16;
  std::memcpy(&f, &bits, 4);
  return f;
}

// All-ones bit patterns are NaN in f16, bf16 and fp32: operand padding and unwritten output.
constexpr uint32_t kPoison = 0xffffffffu;

/// Random nonzero values in [-1, 1] stored as dtype d (bits) and their exact fp32 values.
void randomOperand(std::mt19937 &rng, size_t n, DType d, std::vector<uint32_t> &bits,
                   std::vector<float> &vals) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  bits.resize(n);
  vals.resize(n);
  for (size_t i = 0; i < n; ++i) {
    float x = dist(rng);
    if (std::fabs(x) < 1e-3f)
      x = 0.5f;
    bits[i] = toBits(x, d);
    vals[i] = fromBits(bits[i], d);
  }
}


/// ref[m, n] = sum_k a[m, k] * bt[n, k] in fp64 (products of fp32 values are exact).
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

/// A device buffer of `rows` x `ld` elements of dtype d whose [rows, cols] part is the bit
/// pattern value(r, c) and the rest NaN.
void *uploadPadded(int rows, int cols, long long ld, DType d,
                   const std::function<uint32_t(int, int)> &value) {
  const size_t bytes = size_t(elemBytes(d));
  std::vector<unsigned char> host(size_t(rows) * ld * bytes, 0xff);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const uint32_t v = value(r, c); // little-endian: the low `bytes` bytes are the element
      std::memcpy(&host[(size_t(r) * ld + c) * bytes], &v, bytes);
    }
  void *dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, std::max<size_t>(host.size(), 1)));
  CHECK_CUDA(cudaMemcpy(dev, host.data(), host.size(), cudaMemcpyHostToDevice));
  return dev;
}

long long roundUp8(long long x) { return (x + 7) / 8 * 8; }

struct Shape {
  int M, N, K;
};

/// The StridedOperand precondition of case `c`: each strided operand's contiguous extent (K when
/// K-major, its rows otherwise) is a multiple of the 16-byte chunk (8 16-bit or 4 fp32 elements;
/// the leading dimensions used here always are). The code generator uses FnOperand otherwise.
bool preconditionsHold(const TestCase &c, int M, int N, int K) {
  const int v = chunkElems(c.dtype);
  auto ok = [K, v](int layout, int rows) {
    return layout == kFn || (layout == kKMajor ? K : rows) % v == 0;
  };
  return ok(c.la, M) && ok(c.lb, N);
}

/// Runs every case of one dtype on one shape; returns the number of failures.
int checkShape(const Shape &s, DType dtype, const std::vector<TestCase> &cases, std::mt19937 &rng,
               bool verbose, int &passed, int &skipped) {
  const int M = s.M, N = s.N, K = s.K;
  const double tol = tolerance(dtype);
  std::vector<uint32_t> aBits, bBits; // a [M, K], bt [N, K]
  std::vector<float> a, bt;
  randomOperand(rng, size_t(M) * K, dtype, aBits, a);
  randomOperand(rng, size_t(N) * K, dtype, bBits, bt);
  const std::vector<double> ref = reference(a, bt, M, N, K);
  double refMax = 0;
  for (double v : ref)
    refMax = std::max(refMax, std::fabs(v));

  // Operand storage (padding NaN): A [M, K + 8] and [K, M8 + 8]; B [N, K + 8] and [K, N8 + 8].
  const long long ldaK = K + 8, ldaMN = roundUp8(M) + 8, ldbK = K + 8, ldbMN = roundUp8(N) + 8;
  void *dAK =
      uploadPadded(M, K, ldaK, dtype, [&](int m, int k) { return aBits[size_t(m) * K + k]; });
  void *dAMN =
      uploadPadded(K, M, ldaMN, dtype, [&](int k, int m) { return aBits[size_t(m) * K + k]; });
  void *dBK =
      uploadPadded(N, K, ldbK, dtype, [&](int n, int k) { return bBits[size_t(n) * K + k]; });
  void *dBMN =
      uploadPadded(K, N, ldbMN, dtype, [&](int k, int n) { return bBits[size_t(n) * K + k]; });
  const long long ldc = N + 3;
  const size_t cElems = size_t(M) * ldc;
  float *dC = nullptr;
  CHECK_CUDA(cudaMalloc(&dC, cElems * 4));
  std::vector<float> out(cElems);

  int failures = 0, ran = 0;
  double worst = 0;
  std::string worstName = "-";
  for (const TestCase &c : cases) {
    if (c.dtype != dtype)
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
      std::printf("  %s %-4s %dx%dx%d %-32s rel err %.3e  NaN %lld  padding writes %lld\n",
                  pass ? "ok  " : "FAIL", dtypeName(dtype), M, N, K, c.name().c_str(), rel, nan,
                  padWrites);
  }
  std::printf("%-4s M=%-5d N=%-5d K=%-5d %3d cases, %d failed; worst rel err %.3e (%s)\n",
              dtypeName(dtype), M, N, K, ran, failures, worst, worstName.c_str());
  for (void *ptr : {dAK, dAMN, dBK, dBMN, (void *)dC})
    CHECK_CUDA(cudaFree(ptr));
  return failures;
}

int runCorrectness(bool quick, bool verbose) {
  const std::vector<TestCase> cases = allCases();
  // {36, 44, 20}: extents that are multiples of 4 but not 8 (tf32 strided, 16-bit functor only).
  std::vector<Shape> shapes = {{77, 200, 136}, {1, 200, 136}, {1, 768, 768}, {64, 96, 8},
                               {200, 77, 264}, {45, 70, 37},  {33, 40, 24},  {36, 44, 20}};
  if (!quick)
    for (Shape s :
         std::vector<Shape>{{128, 768, 768}, {512, 512, 64}, {4096, 3072, 768}, {4096, 768, 3072}})
      shapes.push_back(s);
  std::mt19937 rng(20261130);
  int failures = 0, passed = 0, skipped = 0;
  for (DType dtype : {kF16, kBF16, kTF32})
    for (const Shape &s : shapes)
      failures += checkShape(s, dtype, cases, rng, verbose, passed, skipped);
  std::printf("gemm_tc correctness: %d passed, %d failed, %d skipped (StridedOperand "
              "precondition)\n",
              passed, failures, skipped);
  std::printf("%d passed, %d failed\n", passed, failures);
  return failures == 0 ? 0 : 1;
}

} // namespace

//===----------------------------------------------------------------------===//
// Benchmark kernels: what kiln generates for an f16 or fp32 (tf32) MatMul with row-major A [M, K]
// and B [K, N] (a weight), output in the input type, and a plain store epilogue.
//===----------------------------------------------------------------------===//

#define KILN_BENCH_KERNEL(NAME, T, BM, BN, BK, WM, WN, S)                                          \
  extern "C" __global__ void __launch_bounds__(32 * WM * WN)                                       \
      NAME(int M, int N, int K, const T *__restrict__ in0, const T *__restrict__ in1,              \
           T *__restrict__ out0) {                                                                 \
    extern __shared__ __align__(16) char smem[];                                                   \
    const kiln::StridedOperand<T, true> a{in0, K, M};                                              \
    const kiln::StridedOperand<T, false> b{in1, N, N};                                             \
    kiln::gemmTileTC<T, BM, BN, BK, WM, WN, S>(                                                    \
        M, N, K, blockIdx.y, blockIdx.x, a, b,                                                     \
        [&](int m, int n, float acc) { out0[(long long)m * N + n] = kiln::cvt<T>(acc); }, smem);   \
  }

KILN_BENCH_KERNEL(bench_128x128x32_w2x4_s4, kiln::f16, 128, 128, 32, 2, 4, 4)
KILN_BENCH_KERNEL(bench_128x64x32_w2x2_s4, kiln::f16, 128, 64, 32, 2, 2, 4)
KILN_BENCH_KERNEL(bench_64x64x32_w2x2_s4, kiln::f16, 64, 64, 32, 2, 2, 4)
KILN_BENCH_KERNEL(bench_64x128x32_w2x2_s4, kiln::f16, 64, 128, 32, 2, 2, 4)
KILN_BENCH_KERNEL(bench_32x64x64_w1x2_s4, kiln::f16, 32, 64, 64, 1, 2, 4)
KILN_BENCH_KERNEL(bench_32x32x64_w1x2_s3, kiln::f16, 32, 32, 64, 1, 2, 3)
KILN_BENCH_KERNEL(bench_16x64x64_w1x2_s4, kiln::f16, 16, 64, 64, 1, 2, 4)
KILN_BENCH_KERNEL(bench_128x128x64_w2x4_s4, kiln::f16, 128, 128, 64, 2, 4, 4)
KILN_BENCH_KERNEL(bench_128x64x64_w2x2_s4, kiln::f16, 128, 64, 64, 2, 2, 4)
KILN_BENCH_KERNEL(bench_64x64x64_w2x2_s4, kiln::f16, 64, 64, 64, 2, 2, 4)
KILN_BENCH_KERNEL(bench_64x128x64_w2x2_s4, kiln::f16, 64, 128, 64, 2, 2, 4)

// tf32: the same configurations, except 128x128x64 with 3 stages (4 would need 256 KiB), and
// 128x128x32 with 3 stages (96 KiB: two blocks per SM where 4 stages allow one).
KILN_BENCH_KERNEL(bench_tf32_128x128x32_w2x4_s4, float, 128, 128, 32, 2, 4, 4)
KILN_BENCH_KERNEL(bench_tf32_128x128x32_w2x4_s3, float, 128, 128, 32, 2, 4, 3)
KILN_BENCH_KERNEL(bench_tf32_128x64x32_w2x2_s4, float, 128, 64, 32, 2, 2, 4)
KILN_BENCH_KERNEL(bench_tf32_64x64x32_w2x2_s4, float, 64, 64, 32, 2, 2, 4)
KILN_BENCH_KERNEL(bench_tf32_64x128x32_w2x2_s4, float, 64, 128, 32, 2, 2, 4)
KILN_BENCH_KERNEL(bench_tf32_32x64x64_w1x2_s4, float, 32, 64, 64, 1, 2, 4)
KILN_BENCH_KERNEL(bench_tf32_32x32x64_w1x2_s3, float, 32, 32, 64, 1, 2, 3)
KILN_BENCH_KERNEL(bench_tf32_16x64x64_w1x2_s4, float, 16, 64, 64, 1, 2, 4)
KILN_BENCH_KERNEL(bench_tf32_128x128x64_w2x4_s3, float, 128, 128, 64, 2, 4, 3)
KILN_BENCH_KERNEL(bench_tf32_128x64x64_w2x2_s4, float, 128, 64, 64, 2, 2, 4)
KILN_BENCH_KERNEL(bench_tf32_64x64x64_w2x2_s4, float, 64, 64, 64, 2, 2, 4)
KILN_BENCH_KERNEL(bench_tf32_64x128x64_w2x2_s4, float, 64, 128, 64, 2, 2, 4)

namespace {

/// One benchmark kernel of element type T (kiln::f16 or float) and its launch shape.
template <typename T> struct BenchConfig {
  using Fn = void (*)(int, int, int, const T *, const T *, T *);
  const char *name;
  Fn kernel;
  int bm, bn, threads, smem;
};

template <typename T, int BM, int BN, int BK, int WM, int WN, int S>
BenchConfig<T> benchConfig(const char *name, typename BenchConfig<T>::Fn kernel) {
  constexpr int smem = kiln::gemmTcSmemBytes<T, BM, BN, BK, S, true, false>();
  static_assert(smem <= kSm90MaxSmem, "benchmark configuration exceeds sm_90 shared memory");
  return {name, kernel, BM, BN, 32 * WM * WN, smem};
}
#define KILN_BENCH_CONFIG(NAME, T, BM, BN, BK, WM, WN, S)                                          \
  benchConfig<T, BM, BN, BK, WM, WN, S>(#NAME + sizeof("bench_") - 1, NAME)

const BenchConfig<kiln::f16> kBenchConfigsF16[] = {
    KILN_BENCH_CONFIG(bench_128x128x32_w2x4_s4, kiln::f16, 128, 128, 32, 2, 4, 4),
    KILN_BENCH_CONFIG(bench_128x64x32_w2x2_s4, kiln::f16, 128, 64, 32, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_64x64x32_w2x2_s4, kiln::f16, 64, 64, 32, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_64x128x32_w2x2_s4, kiln::f16, 64, 128, 32, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_32x64x64_w1x2_s4, kiln::f16, 32, 64, 64, 1, 2, 4),
    KILN_BENCH_CONFIG(bench_32x32x64_w1x2_s3, kiln::f16, 32, 32, 64, 1, 2, 3),
    KILN_BENCH_CONFIG(bench_16x64x64_w1x2_s4, kiln::f16, 16, 64, 64, 1, 2, 4),
    KILN_BENCH_CONFIG(bench_128x128x64_w2x4_s4, kiln::f16, 128, 128, 64, 2, 4, 4),
    KILN_BENCH_CONFIG(bench_128x64x64_w2x2_s4, kiln::f16, 128, 64, 64, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_64x64x64_w2x2_s4, kiln::f16, 64, 64, 64, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_64x128x64_w2x2_s4, kiln::f16, 64, 128, 64, 2, 2, 4),
};

const BenchConfig<float> kBenchConfigsTf32[] = {
    KILN_BENCH_CONFIG(bench_tf32_128x128x32_w2x4_s4, float, 128, 128, 32, 2, 4, 4),
    KILN_BENCH_CONFIG(bench_tf32_128x128x32_w2x4_s3, float, 128, 128, 32, 2, 4, 3),
    KILN_BENCH_CONFIG(bench_tf32_128x64x32_w2x2_s4, float, 128, 64, 32, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_tf32_64x64x32_w2x2_s4, float, 64, 64, 32, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_tf32_64x128x32_w2x2_s4, float, 64, 128, 32, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_tf32_32x64x64_w1x2_s4, float, 32, 64, 64, 1, 2, 4),
    KILN_BENCH_CONFIG(bench_tf32_32x32x64_w1x2_s3, float, 32, 32, 64, 1, 2, 3),
    KILN_BENCH_CONFIG(bench_tf32_16x64x64_w1x2_s4, float, 16, 64, 64, 1, 2, 4),
    KILN_BENCH_CONFIG(bench_tf32_128x128x64_w2x4_s3, float, 128, 128, 64, 2, 4, 3),
    KILN_BENCH_CONFIG(bench_tf32_128x64x64_w2x2_s4, float, 128, 64, 64, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_tf32_64x64x64_w2x2_s4, float, 64, 64, 64, 2, 2, 4),
    KILN_BENCH_CONFIG(bench_tf32_64x128x64_w2x2_s4, float, 64, 128, 64, 2, 2, 4),
};

template <typename T>
void launchBench(const BenchConfig<T> &c, int M, int N, int K, const T *A, const T *B, T *C,
                 cudaStream_t stream) {
  dim3 grid((N + c.bn - 1) / c.bn, (M + c.bm - 1) / c.bm);
  c.kernel<<<grid, c.threads, c.smem, stream>>>(M, N, K, A, B, C);
  CHECK_CUDA(cudaGetLastError());
}


/// The benchmark's view of an element type: storage dtype, cuBLAS data and compute types.
template <typename T> struct BenchType;
template <> struct BenchType<kiln::f16> {
  static constexpr DType kDType = kF16;
  static constexpr cudaDataType_t kCudaType = CUDA_R_16F;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;
  static constexpr const char *kTitle = "f16 in/out, cuBLAS CUBLAS_COMPUTE_32F";
};
template <> struct BenchType<float> {
  static constexpr DType kDType = kTF32;
  static constexpr cudaDataType_t kCudaType = CUDA_R_32F;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F_FAST_TF32;
  static constexpr const char *kTitle = "tf32: fp32 in/out, cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32";
};

/// max |x - y| / max |y| over two device buffers of n elements of dtype d.
double relDiff(const void *x, const void *y, size_t n, DType d) {
  const size_t bytes = size_t(elemBytes(d));
  std::vector<unsigned char> hx(n * bytes), hy(n * bytes);
  CHECK_CUDA(cudaMemcpy(hx.data(), x, n * bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hy.data(), y, n * bytes, cudaMemcpyDeviceToHost));
  double err = 0, mag = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bx = 0, by = 0;
    std::memcpy(&bx, &hx[i * bytes], bytes);
    std::memcpy(&by, &hy[i * bytes], bytes);
    double a = fromBits(bx, d), b = fromBits(by, d);
    if (std::isnan(a) || std::isnan(b))
      return INFINITY;
    err = std::max(err, std::fabs(a - b));
    mag = std::max(mag, std::fabs(b));
  }
  return mag > 0 ? err / mag : err;
}

/// Times every configuration of `configs` and cuBLAS on each shape and prints one row per shape
/// (the best configuration); returns the number of shapes whose output differs from cuBLAS's by
/// more than `tol` (max|kiln - cuBLAS| / max|cuBLAS|).
template <typename T, size_t NC>
int benchTable(const BenchConfig<T> (&configs)[NC], const std::vector<Shape> &shapes, double tol,
               cublasHandle_t handle, cudaStream_t stream, std::mt19937 &rng, bool verbose) {
  using BT = BenchType<T>;
  for (const BenchConfig<T> &c : configs)
    if (c.smem > 48 * 1024)
      CHECK_CUDA(
          cudaFuncSetAttribute(c.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, c.smem));
  int failures = 0;
  std::printf("%s\n", BT::kTitle);
  std::printf("%-18s %-20s %10s %8s %10s %8s %12s %10s\n", "M x N x K", "kiln config", "kiln us",
              "TFLOP/s", "cuBLAS us", "TFLOP/s", "cuBLAS/kiln", "rel diff");
  for (const Shape &s : shapes) {
    const int M = s.M, N = s.N, K = s.K;
    std::vector<uint32_t> aBits, bBits;
    std::vector<float> unused;
    randomOperand(rng, size_t(M) * K, BT::kDType, aBits, unused);
    randomOperand(rng, size_t(K) * N, BT::kDType, bBits, unused);
    std::vector<T> aHost(aBits.size()), bHost(bBits.size()); // the low sizeof(T) bytes
    for (size_t i = 0; i < aBits.size(); ++i)
      std::memcpy(&aHost[i], &aBits[i], sizeof(T));
    for (size_t i = 0; i < bBits.size(); ++i)
      std::memcpy(&bHost[i], &bBits[i], sizeof(T));
    T *A, *B, *C, *Cref;
    CHECK_CUDA(cudaMalloc(&A, aHost.size() * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&B, bHost.size() * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&C, size_t(M) * N * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&Cref, size_t(M) * N * sizeof(T)));
    CHECK_CUDA(cudaMemcpy(A, aHost.data(), aHost.size() * sizeof(T), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(B, bHost.data(), bHost.size() * sizeof(T), cudaMemcpyHostToDevice));

    // cuBLAS, column-major view: C^T [N, M] = B^T [N, K] * A^T [K, M].
    const float alpha = 1.0f, beta = 0.0f;
    auto cublasLaunch = [&](cudaStream_t) {
      CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, BT::kCudaType,
                                N, A, BT::kCudaType, K, &beta, Cref, BT::kCudaType, N, BT::kCompute,
                                CUBLAS_GEMM_DEFAULT));
    };
    cublasLaunch(stream);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const double cublasUs = timeGraph(stream, cublasLaunch);

    const BenchConfig<T> *best = nullptr;
    double bestUs = 0;
    for (const BenchConfig<T> &c : configs) {
      launchBench(c, M, N, K, A, B, C, stream); // warm-up outside the capture
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const double us =
          timeGraph(stream, [&](cudaStream_t st) { launchBench(c, M, N, K, A, B, C, st); });
      if (verbose)
        std::printf("    %-18s %-20s %10.2f %8.1f\n", "", c.name, us, 2.0 * M * N * K / us * 1e-6);
      if (!best || us < bestUs) {
        best = &c;
        bestUs = us;
      }
    }
    CHECK_CUDA(cudaMemsetAsync(C, 0xff, size_t(M) * N * sizeof(T), stream));
    launchBench(*best, M, N, K, A, B, C, stream);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const double diff = relDiff(C, Cref, size_t(M) * N, BT::kDType);
    const bool ok = diff <= tol;
    failures += !ok;
    char shape[32];
    std::snprintf(shape, sizeof(shape), "%dx%dx%d", M, N, K);
    const double flop = 2.0 * M * N * K;
    std::printf("%-18s %-20s %10.2f %8.1f %10.2f %8.1f %12.3f %10.2e%s\n", shape, best->name,
                bestUs, flop / bestUs * 1e-6, cublasUs, flop / cublasUs * 1e-6, cublasUs / bestUs,
                diff, ok ? "" : "  FAIL");
    for (void *ptr : {(void *)A, (void *)B, (void *)C, (void *)Cref})
      CHECK_CUDA(cudaFree(ptr));
  }
  return failures;
}

int runBench(bool verbose) {
  const std::vector<Shape> f16Shapes = {{128, 2304, 768},   {128, 768, 768},   {128, 3072, 768},
                                        {128, 768, 3072},   {4096, 2304, 768}, {4096, 768, 768},
                                        {4096, 3072, 768},  {4096, 768, 3072}, {2048, 2048, 2048},
                                        {2048, 5632, 2048}, {2048, 2048, 5632}};
  const std::vector<Shape> tf32Shapes = {{4096, 768, 768}, {4096, 3072, 768}, {128, 768, 768}};
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
  // f16: both round to f16, about one f16 ulp of the largest output. tf32: both round the
  // operands to TF32 (cuBLAS possibly differently) and sum in fp32 in different orders.
  int failures = benchTable(kBenchConfigsF16, f16Shapes, 5e-3, handle, stream, rng, verbose);
  std::printf("\n");
  failures += benchTable(kBenchConfigsTf32, tf32Shapes, 5e-3, handle, stream, rng, verbose);
  std::printf("cuBLAS/kiln > 1 means kiln is faster; rel diff = max|kiln - cuBLAS| / max|cuBLAS| "
              "of the outputs (f16 or fp32)\n");
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
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  if (prop.major < 9) {
    std::fprintf(stderr, "this build targets sm_90; the device is sm_%d%d\n", prop.major,
                 prop.minor);
    return 2;
  }
  return bench ? runBench(verbose) : runCorrectness(quick, verbose);
}
