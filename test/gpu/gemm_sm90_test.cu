// gemm_sm90_test.cu - GPU test and benchmark of kiln::gemmSm90 (compiler/codegen/cuda/
// gemm_sm90.cuh: TMA, warp-specialized wgmma, persistent tiles, cluster split-K; sm_90a).
//
// Correctness (default): for every kernel configuration below (persistent and split-K), f16
// and bf16, operand layouts (A K-major or MN-major; B [K, N] MN-major or [N, K] K-major;
// rank-3 batched operands and a rank-2 weight shared by the batch), plain and pair
// epilogues, f16 / bf16 / fp32 outputs, and awkward shapes (M = 1, M and N not multiples of
// the tile, K = 8, K not a multiple of 64, K = 0), the kernel's output (poisoned with NaN
// before the launch) is compared with a host fp64 reference from the same rounded inputs
// (random in [-1, 1], never zero): max|out - ref| / max|ref| <= 4e-3 (f16 out), 1.6e-2 (bf16),
// 1e-3 (fp32 out from f16), and no NaN anywhere in range (an unwritten element). The
// epilogue is out = 0.5 acc + bias[n] (pair: acc0 - 2 acc1 + bias[n]), so a wrong column
// index in the epilogue shows.
// Row statistics (ROWSTATS 1 / 2: a layer / RMS norm of A folded into the GEMM): fp32 out =
// rstd_m (acc - mean_m colSum[n]) + bias[n] (pair: column n minus 2x column n + 1) against the
// unfused fp64 norm-then-GEMM, on cooperative, ping-pong and one-consumer tiles with 64 and 128
// rows per consumer, f16 and bf16, K = 768, 200, 72, small persistent grids (several tiles per
// block), and A rows of N(0, 1), of a large offset (+-40 + N(0, 1), 40 + 0.25 N(0, 1)) and all
// equal (variance 0): max|out - ref| / max|ref| <= 2e-3 (f16), 4e-3 (bf16), no NaN.
//
// Benchmark (--bench): f16 C[M, N] = A[M, K] B, A row-major, B row-major [K, N] (the ONNX
// MatMul weight) and [N, K], f16 out, the GEMM shapes of the real-size benchmark (GPT-2 124M
// and BERT-base at 1x128 and 8x512, the 0.8B Llama at 1x128 and 4x512) and 8192^3; every
// configuration and cublasGemmEx (CUBLAS_COMPUTE_32F) timed inside a CUDA graph of 20 launches
// (median of 20 replays); prints the best configuration per shape against cuBLAS, checks it
// against cuBLAS's output, and the geometric means of cuBLAS/kiln.
//
// Build: test/gpu/build_gemm_sm90_test.sh [OUT]; run OUT [--bench] [-v]. Needs an sm_90 device.
#include "kiln/common.cuh"
#include "kiln/gemm_sm90.cuh"

#include "gpu_test_util.h"
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {
using kiln_test::parallelFor;
using kiln_test::timeGraph;

//===----------------------------------------------------------------------===//
// Tensor maps (what the kiln runtime encodes from the artifact's TensorMap entries)
//===----------------------------------------------------------------------===//

/// A 16-bit tensor map with swizzle 128B (gpu_test_util.h's makeTensorMap).
kiln::TensorMap makeMap(const void *ptr, bool bf16, std::vector<uint64_t> dims,
                        std::vector<uint64_t> strides, std::vector<uint32_t> box) {
  kiln::TensorMap out;
  kiln_test::makeTensorMap(&out, ptr, bf16, dims, strides, box);
  return out;
}

/// The map of an operand with `rows` rows (M for A, N for B), stored K-major ([batch?, rows,
/// K] row-major) or MN-major ([batch?, K, rows]); box {64, tileRows} or {64, 64}.
kiln::TensorMap operandMap(const void *ptr, bool bf16, bool kMajor, bool batched, int batch,
                           int rows, int K, int tileRows) {
  // K = 0 issues no copies; the map still needs positive extents.
  const uint64_t k = K > 0 ? uint64_t(K) : 8;
  const uint64_t inner = kMajor ? k : uint64_t(rows), outer = kMajor ? uint64_t(rows) : k;
  std::vector<uint64_t> dims = {inner, outer}, strides = {inner * 2};
  std::vector<uint32_t> box = {64, uint32_t(kMajor ? tileRows : 64)};
  if (batched) {
    dims.push_back(uint64_t(batch));
    strides.push_back(inner * outer * 2);
    box.push_back(1);
  }
  return makeMap(ptr, bf16, dims, strides, box);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

template <typename T, typename OutT, int BM, int BN, int CW, int S, int SK, bool PP, bool AK,
          int AR, bool BK, int BR, bool PAIR>
__global__ void __launch_bounds__(128 * (CW + 1), 1)
    gemmKernel(const __grid_constant__ kiln::TensorMap tmA,
               const __grid_constant__ kiln::TensorMap tmB, int M, int N, int K, int batch,
               OutT *__restrict__ out, const float *__restrict__ bias) {
  extern __shared__ __align__(1024) char smem[];
  const kiln::sm90::TmaOperand<AK, AR> a{&tmA};
  const kiln::sm90::TmaOperand<BK, BR> b{&tmB};
  if constexpr (PAIR)
    kiln::gemmSm90<T, OutT, BM, BN, CW, S, SK, PP>(
        M, N, K, batch, a, b, out,
        kiln::makePairEpilogue(
            [&](long long, int, int n, float a0, float a1) { return a0 - 2.0f * a1 + bias[n]; }),
        smem);
  else
    kiln::gemmSm90<T, OutT, BM, BN, CW, S, SK, PP>(
        M, N, K, batch, a, b, out,
        [&](long long, int, int n, float acc) { return 0.5f * acc + bias[n]; }, smem);
}

/// One kernel configuration.
struct Config {
  const char *name;
  int bm, bn, consumers, stages, splitK;
  bool pingpong = false;
};

const Config kConfigs[] = {
    {"128x256 c2 s4", 128, 256, 2, 4, 1},       {"128x128 c2 s6", 128, 128, 2, 6, 1},
    {"128x192 c2 s5", 128, 192, 2, 5, 1},       {"256x128 c2 s4", 256, 128, 2, 4, 1},
    {"64x128 c1 s6", 64, 128, 1, 6, 1},         {"128x128 c2 s4 k2", 128, 128, 2, 4, 2},
    {"128x128 c2 s4 k4", 128, 128, 2, 4, 4},    {"64x128 c1 s4 k2", 64, 128, 1, 4, 2},
    {"64x128 c1 s4 k4", 64, 128, 1, 4, 4},      {"64x64 c1 s4 k4", 64, 64, 1, 4, 4},
    {"64x64 c1 s4 k8", 64, 64, 1, 4, 8},        {"64x256 pp s5", 64, 256, 2, 5, 1, true},
    {"128x128 pp s6", 128, 128, 2, 6, 1, true}, {"64x192 pp s6", 64, 192, 2, 6, 1, true},
    {"64x128 pp s8", 64, 128, 2, 8, 1, true},
};

/// Operand / output variant of a launch.
struct Variant {
  bool bf16;
  int out; // 0: same 16-bit type as the operands, 1: fp32
  bool aK, bK;
  bool aBatched, bBatched;
  bool pair;
};

using KernelPtr = const void *;

template <typename T, typename OutT, int BM, int BN, int CW, int S, int SK, bool PP, bool AK,
          int AR, bool BK, int BR, bool PAIR>
KernelPtr kernelOf() {
  return reinterpret_cast<KernelPtr>(
      &gemmKernel<T, OutT, BM, BN, CW, S, SK, PP, AK, AR, BK, BR, PAIR>);
}

/// The kernel of config c for variant v. The correctness variants (layouts, batching, pair,
/// types) are instantiated for two configurations (one persistent, one split-K) to bound the
/// build time; every configuration gets the benchmark variant (f16, A K-major, B either way).
template <int BM, int BN, int CW, int S, int SK, bool PP, bool FULL>
KernelPtr pick(const Variant &v) {
  using kiln::bf16;
  using kiln::f16;
  if (!v.bf16 && v.out == 0 && v.aK && !v.aBatched && !v.bBatched && !v.pair)
    return v.bK ? kernelOf<f16, f16, BM, BN, CW, S, SK, PP, true, 2, true, 2, false>()
                : kernelOf<f16, f16, BM, BN, CW, S, SK, PP, true, 2, false, 2, false>();
  if constexpr (!FULL)
    return nullptr;
  else {
    if (v.bf16 && v.out == 0 && v.aK && !v.aBatched && !v.bBatched && !v.pair && !v.bK)
      return kernelOf<bf16, bf16, BM, BN, CW, S, SK, PP, true, 2, false, 2, false>();
    if (!v.bf16 && v.out == 1 && v.aK && !v.aBatched && !v.bBatched && !v.pair && !v.bK)
      return kernelOf<f16, float, BM, BN, CW, S, SK, PP, true, 2, false, 2, false>();
    if (!v.bf16 && v.out == 0 && !v.aK && !v.aBatched && !v.bBatched && !v.pair && v.bK)
      return kernelOf<f16, f16, BM, BN, CW, S, SK, PP, false, 2, true, 2, false>();
    if (!v.bf16 && v.out == 0 && v.aK && v.aBatched && v.bBatched && !v.pair && !v.bK)
      return kernelOf<f16, f16, BM, BN, CW, S, SK, PP, true, 3, false, 3, false>();
    if (!v.bf16 && v.out == 0 && v.aK && v.aBatched && !v.bBatched && !v.pair && !v.bK)
      return kernelOf<f16, f16, BM, BN, CW, S, SK, PP, true, 3, false, 2, false>();
    if (!v.bf16 && v.out == 0 && v.aK && !v.aBatched && !v.bBatched && v.pair && !v.bK)
      return kernelOf<f16, f16, BM, BN, CW, S, SK, PP, true, 2, false, 2, true>();
    return nullptr;
  }
}

KernelPtr kernelFor(const Config &c, const Variant &v) {
#define KILN_PICK(BM, BN, CW, S, SK, PP, FULL)                                                     \
  if (c.bm == BM && c.bn == BN && c.consumers == CW && c.stages == S && c.splitK == SK &&          \
      c.pingpong == PP)                                                                            \
    return pick<BM, BN, CW, S, SK, PP, FULL>(v);
  KILN_PICK(128, 256, 2, 4, 1, false, true)
  KILN_PICK(128, 128, 2, 6, 1, false, false)
  KILN_PICK(128, 192, 2, 5, 1, false, false)
  KILN_PICK(256, 128, 2, 4, 1, false, false)
  KILN_PICK(64, 128, 1, 6, 1, false, true)
  KILN_PICK(128, 128, 2, 4, 2, false, false)
  KILN_PICK(128, 128, 2, 4, 4, false, false)
  KILN_PICK(64, 128, 1, 4, 2, false, false)
  KILN_PICK(64, 128, 1, 4, 4, false, true)
  KILN_PICK(64, 64, 1, 4, 4, false, false)
  KILN_PICK(64, 64, 1, 4, 8, false, false)
  KILN_PICK(64, 256, 2, 5, 1, true, true)
  KILN_PICK(128, 128, 2, 6, 1, true, false)
  KILN_PICK(64, 192, 2, 6, 1, true, false)
  KILN_PICK(64, 128, 2, 8, 1, true, false)
#undef KILN_PICK
  return nullptr;
}

int smemBytes(const Config &c) {
  return int(kiln::smem_bytes::gemmSm90(c.bm, c.bn, c.stages, c.consumers));
}

/// Launches config c: persistent grid min(tiles, SMs), or tiles x splitK blocks in clusters
/// of splitK.
void launch(const Config &c, KernelPtr k, const kiln::TensorMap &ma, const kiln::TensorMap &mb,
            int M, int N, int K, int batch, void *out, const float *bias, int numSMs,
            cudaStream_t stream) {
  const int tiles = ((M + c.bm - 1) / c.bm) * ((N + c.bn - 1) / c.bn) * batch;
  if (tiles == 0)
    return;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(c.splitK == 1 ? std::min(tiles, numSMs) : tiles * c.splitK);
  cfg.blockDim = dim3(128 * (c.consumers + 1));
  cfg.dynamicSmemBytes = size_t(smemBytes(c));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  if (c.splitK > 1) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(c.splitK);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  void *args[] = {const_cast<kiln::TensorMap *>(&ma),
                  const_cast<kiln::TensorMap *>(&mb),
                  &M,
                  &N,
                  &K,
                  &batch,
                  &out,
                  const_cast<float **>(&bias)};
  CHECK_CUDA(cudaLaunchKernelExC(&cfg, k, args));
}

void prepare(KernelPtr k, const Config &c) {
  CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes(c)));
  if (c.splitK > 1)
    CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 0));
}

//===----------------------------------------------------------------------===//
// Host data
//===----------------------------------------------------------------------===//

using kiln_test::halfBitsToFloat;

/// n random 16-bit values in [-1, 1] \ {0}.
std::vector<uint16_t> randomBits(std::mt19937 &rng, size_t n, bool bf16) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<uint16_t> v(n);
  for (auto &x : v) {
    float f;
    do
      f = d(rng);
    while (std::fabs(f) < 1e-3f);
    x = kiln_test::floatToHalfBits(f, bf16);
  }
  return v;
}

struct Shape {
  int M, N, K, batch;
};

/// Whether TMA can read the operands of case (v, s): 16-byte aligned strides of the innermost
/// dims (the code generator uses mma.sync otherwise); a pair epilogue needs an even N.
bool tmaReadable(const Variant &v, const Shape &s) {
  return (v.aK ? s.K : s.M) % 8 == 0 && (v.bK ? s.K : s.N) % 8 == 0 && !(v.pair && s.N % 2);
}

/// Runs one correctness case (kernelFor(c, v) exists and tmaReadable(v, s)); returns true when
/// it passes (prints a line when it fails or when verbose).
bool runCase(const Config &c, const Variant &v, const Shape &s, std::mt19937 &rng, int numSMs,
             bool verbose) {
  KernelPtr k = kernelFor(c, v);
  const int M = s.M, N = s.N, K = s.K, batch = s.batch;
  prepare(k, c);
  const size_t aN = size_t(v.aBatched ? batch : 1) * M * K,
               bN = size_t(v.bBatched ? batch : 1) * N * K;
  const int outCols = v.pair ? N / 2 : N;
  const size_t cN = size_t(batch) * M * outCols;
  auto aBits = randomBits(rng, aN, v.bf16), bBits = randomBits(rng, bN, v.bf16);
  std::vector<float> bias(std::max(N, 1));
  for (auto &x : bias)
    x = std::uniform_real_distribution<float>(-1, 1)(rng);
  void *dA, *dB, *dC;
  float *dBias;
  CHECK_CUDA(cudaMalloc(&dA, std::max<size_t>(aN, 1) * 2));
  CHECK_CUDA(cudaMalloc(&dB, std::max<size_t>(bN, 1) * 2));
  const int outBytes = v.out == 1 ? 4 : 2;
  CHECK_CUDA(cudaMalloc(&dC, std::max<size_t>(cN, 1) * outBytes));
  CHECK_CUDA(cudaMalloc(&dBias, bias.size() * 4));
  CHECK_CUDA(cudaMemcpy(dA, aBits.data(), aN * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, bBits.data(), bN * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dBias, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dC, 0xff, std::max<size_t>(cN, 1) * outBytes)); // NaN poison
  const auto ma = operandMap(dA, v.bf16, v.aK, v.aBatched, batch, M, K, c.bm);
  const auto mb = operandMap(dB, v.bf16, v.bK, v.bBatched, batch, N, K, c.bn);
  launch(c, k, ma, mb, M, N, K, batch, dC, dBias, numSMs, 0);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<uint8_t> outRaw(cN * outBytes);
  CHECK_CUDA(cudaMemcpy(outRaw.data(), dC, cN * outBytes, cudaMemcpyDeviceToHost));

  // fp64 reference.
  std::vector<double> A(aN), B(bN);
  for (size_t i = 0; i < aN; ++i)
    A[i] = halfBitsToFloat(aBits[i], v.bf16);
  for (size_t i = 0; i < bN; ++i)
    B[i] = halfBitsToFloat(bBits[i], v.bf16);
  std::vector<double> ref(cN);
  parallelFor(batch * M, [&](int bm) {
    const int b = bm / M, m = bm % M;
    const size_t aOff = size_t(v.aBatched ? b : 0) * M * K;
    const size_t bOff = size_t(v.bBatched ? b : 0) * N * K;
    std::vector<double> row(N);
    for (int n = 0; n < N; ++n) {
      double sum = 0;
      for (int kk = 0; kk < K; ++kk) {
        const double x = v.aK ? A[aOff + size_t(m) * K + kk] : A[aOff + size_t(kk) * M + m];
        const double y = v.bK ? B[bOff + size_t(n) * K + kk] : B[bOff + size_t(kk) * N + n];
        sum += x * y;
      }
      row[n] = sum;
    }
    for (int n = 0; n < outCols; ++n)
      ref[size_t(bm) * outCols + n] =
          v.pair ? row[2 * n] - 2.0 * row[2 * n + 1] + bias[2 * n] : 0.5 * row[n] + bias[n];
  });
  double err = 0, mag = 0;
  bool nan = false;
  for (size_t i = 0; i < cN; ++i) {
    double o;
    if (v.out == 1) {
      float f;
      std::memcpy(&f, &outRaw[4 * i], 4);
      o = f;
    } else {
      uint16_t b16;
      std::memcpy(&b16, &outRaw[2 * i], 2);
      o = halfBitsToFloat(b16, v.bf16);
    }
    if (std::isnan(o))
      nan = true;
    err = std::max(err, std::fabs(o - ref[i]));
    mag = std::max(mag, std::fabs(ref[i]));
  }
  const double rel = mag > 0 ? err / mag : err;
  const double tol = v.out == 1 ? 1e-3 : v.bf16 ? 1.6e-2 : 4e-3;
  const bool ok = !nan && rel <= tol;
  if (!ok || verbose)
    std::printf("%s %-18s %s A%s%s B%s%s %s out=%s M=%d N=%d K=%d batch=%d: rel %.2e%s\n",
                ok ? "ok  " : "FAIL", c.name, v.bf16 ? "bf16" : "f16", v.aK ? "K" : "MN",
                v.aBatched ? "3" : "2", v.bK ? "K" : "MN", v.bBatched ? "3" : "2",
                v.pair ? "pair" : "plain", v.out == 1 ? "f32" : "16", M, N, K, batch, rel,
                nan ? " NaN" : "");
  for (void *p : {dA, dB, dC, (void *)dBias})
    CHECK_CUDA(cudaFree(p));
  return ok;
}

int runCorrectness(int numSMs, bool verbose) {
  std::mt19937 rng(1234);
  const Variant variants[] = {
      {false, 0, true, false, false, false, false}, // f16, A K, B MN (ONNX MatMul)
      {false, 0, true, true, false, false, false},  // B K-major
      {true, 0, true, false, false, false, false},  // bf16
      {false, 1, true, false, false, false, false}, // fp32 out
      {false, 0, false, true, false, false, false}, // A MN-major
      {false, 0, true, false, true, true, false},   // batched A and B
      {false, 0, true, false, true, false, false},  // batched A, shared weight
      {false, 0, true, false, false, false, true},  // pair epilogue
  };
  const Shape shapes[] = {{1, 64, 64, 1},      {130, 72, 40, 2},    {200, 264, 136, 3},
                          {64, 256, 8, 1},     {257, 520, 1000, 2}, {128, 768, 768, 1},
                          {512, 1024, 512, 2}, {96, 128, 0, 1},     {333, 200, 2048, 1}};
  int passed = 0, failed = 0, skipped = 0;
  for (const Config &c : kConfigs)
    for (const Variant &v : variants)
      for (const Shape &s : shapes) {
        if (!kernelFor(c, v))
          continue;
        if (!tmaReadable(v, s))
          ++skipped;
        else if (runCase(c, v, s, rng, numSMs, verbose))
          ++passed;
        else
          ++failed;
      }
  std::printf("gemm_sm90 correctness: %d passed, %d failed, %d skipped (operands TMA cannot "
              "read)\n",
              passed, failed, skipped);
  return failed ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// Row statistics (ROWSTATS: a layer / RMS norm of A folded into the GEMM)
//===----------------------------------------------------------------------===//

/// The folded norm: out[m, n] = rstd_m (acc - mean_m colSum[n]) + bias[n], colSum[n] = sum_k
/// B[k, n] (RMS: mean 0); pair: folded(n) - 2 folded(n + 1) + bias[n]. A [M, K], B [K, N], fp32
/// out (only the accumulation and the statistics matter).
template <typename T, int BM, int BN, int CW, int S, bool PP, int RS, bool PAIR>
__global__ void __launch_bounds__(128 * (CW + 1), 1)
    normGemmKernel(const __grid_constant__ kiln::TensorMap tmA,
                   const __grid_constant__ kiln::TensorMap tmB, int M, int N, int K,
                   float *__restrict__ out, const float *__restrict__ colSum,
                   const float *__restrict__ bias, float eps) {
  extern __shared__ __align__(1024) char smem[];
  const kiln::sm90::TmaOperand<true, 2> a{&tmA};
  const kiln::sm90::TmaOperand<false, 2> b{&tmB};
  auto folded = [&](int n, float acc, float mean, float rstd) {
    return rstd * (acc - mean * colSum[n]);
  };
  if constexpr (PAIR)
    kiln::gemmSm90<T, float, BM, BN, CW, S, 1, PP, RS>(
        M, N, K, 1, a, b, out,
        kiln::makePairEpilogue(
            [&](long long, int, int n, float a0, float a1, float mean, float rstd) {
              return folded(n, a0, mean, rstd) - 2.0f * folded(n + 1, a1, mean, rstd) + bias[n];
            }),
        smem, eps);
  else
    kiln::gemmSm90<T, float, BM, BN, CW, S, 1, PP, RS>(
        M, N, K, 1, a, b, out,
        [&](long long, int, int n, float acc, float mean, float rstd) {
          return folded(n, acc, mean, rstd) + bias[n];
        },
        smem, eps);
}

struct NormCase {
  Config c;
  int rowStats; // 1: layer norm, 2: RMS norm
  bool bf16, pair;
  KernelPtr kernel;
};

template <typename T, int BM, int BN, int CW, int S, bool PP, int RS, bool PAIR>
NormCase normCase(const char *name) {
  return {{name, BM, BN, CW, S, 1, PP},
          RS,
          std::is_same<T, kiln::bf16>::value,
          PAIR,
          reinterpret_cast<KernelPtr>(&normGemmKernel<T, BM, BN, CW, S, PP, RS, PAIR>)};
}

/// Row m of the tests' A: class 0 (m % 8 < 3) N(0, 1); class 1 (3..6) a large offset: +-40 +
/// N(0, 1) or 40 + 0.25 N(0, 1) (a naive fp32 E[x^2] - E[x]^2 loses ~1e-2 of the output there);
/// class 2 (7) all equal: 40, -1.25, 0.5 or 0 (variance 0, rstd = 1 / sqrt(eps)).
int normRowClass(int m) { return m % 8 < 3 ? 0 : m % 8 < 7 ? 1 : 2; }
double normRowValue(int m, std::mt19937 &rng) {
  std::normal_distribution<double> nd;
  switch (m % 8) {
  case 3:
    return 40 + nd(rng);
  case 4:
    return -40 + nd(rng);
  case 5:
  case 6:
    return 40 + 0.25 * nd(rng);
  case 7: {
    const double c[4] = {40, -1.25, 0.5, 0};
    return c[(m / 8) % 4];
  }
  default:
    return nd(rng);
  }
}

/// One ROWSTATS case on M x N x K (batch 1; grid: the persistent grid, 0 = min(tiles, SMs), a
/// small one makes blocks (and both ping-pong consumers) take several tiles). B is random in
/// k / 128 (k in [-128, 128] \ {0}), so the all-equal rows' acc - mean colSum[n] cancels exactly
/// (rstd = 1 / sqrt(eps) amplifies any rounding there) and colSum is exact in fp32. Reference:
/// the unfused norm in fp64, y = ((x - mean) / sqrt(var + eps)) B + bias (population variance;
/// RMS: x / sqrt(mean(x^2) + eps)).
bool runNormCase(const NormCase &nc, int M, int N, int K, int grid, std::mt19937 &rng, int numSMs,
                 bool verbose) {
  const Config &c = nc.c;
  const bool bf16 = nc.bf16;
  const float eps = nc.rowStats == 1 ? 1e-5f : 1e-6f;
  const int smem = int(kiln::smem_bytes::gemmSm90(c.bm, c.bn, c.stages, c.consumers, true));
  CHECK_CUDA(cudaFuncSetAttribute(nc.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int outCols = nc.pair ? N / 2 : N;
  std::vector<uint16_t> aBits(size_t(M) * K), bBits(size_t(K) * N);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k)
      aBits[size_t(m) * K + k] = kiln_test::floatToHalfBits(float(normRowValue(m, rng)), bf16);
  std::uniform_int_distribution<int> bd(-128, 127);
  for (auto &x : bBits) {
    const int q = bd(rng);
    x = kiln_test::floatToHalfBits(float(q >= 0 ? q + 1 : q) / 128.0f, bf16);
  }
  std::vector<double> A(aBits.size()), B(bBits.size());
  for (size_t i = 0; i < A.size(); ++i)
    A[i] = halfBitsToFloat(aBits[i], bf16);
  for (size_t i = 0; i < B.size(); ++i)
    B[i] = halfBitsToFloat(bBits[i], bf16);
  std::vector<float> colSum(N), bias(N);
  for (int n = 0; n < N; ++n) {
    double s = 0;
    for (int k = 0; k < K; ++k)
      s += B[size_t(k) * N + n];
    colSum[n] = float(s);
    bias[n] = std::uniform_real_distribution<float>(-1, 1)(rng);
  }
  void *dA, *dB;
  float *dOut, *dColSum, *dBias;
  CHECK_CUDA(cudaMalloc(&dA, aBits.size() * 2));
  CHECK_CUDA(cudaMalloc(&dB, bBits.size() * 2));
  CHECK_CUDA(cudaMalloc(&dOut, size_t(M) * outCols * 4));
  CHECK_CUDA(cudaMalloc(&dColSum, size_t(N) * 4));
  CHECK_CUDA(cudaMalloc(&dBias, size_t(N) * 4));
  CHECK_CUDA(cudaMemcpy(dA, aBits.data(), aBits.size() * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, bBits.data(), bBits.size() * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dColSum, colSum.data(), size_t(N) * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dBias, bias.data(), size_t(N) * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dOut, 0xff, size_t(M) * outCols * 4)); // NaN poison
  auto ma = operandMap(dA, bf16, true, false, 1, M, K, c.bm);
  auto mb = operandMap(dB, bf16, false, false, 1, N, K, c.bn);
  const int tiles = ((M + c.bm - 1) / c.bm) * ((N + c.bn - 1) / c.bn);
  void *args[] = {&ma, &mb, &M, &N, &K, &dOut, &dColSum, &dBias, const_cast<float *>(&eps)};
  CHECK_CUDA(cudaLaunchKernel(nc.kernel, dim3(std::min(tiles, grid > 0 ? grid : numSMs)),
                              dim3(128 * (c.consumers + 1)), args, size_t(smem), 0));
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(size_t(M) * outCols);
  CHECK_CUDA(cudaMemcpy(out.data(), dOut, out.size() * 4, cudaMemcpyDeviceToHost));

  std::vector<double> ref(out.size());
  parallelFor(M, [&](int m) {
    const double *x = &A[size_t(m) * K];
    double mean = 0, var = 0;
    if (nc.rowStats == 1) {
      for (int k = 0; k < K; ++k)
        mean += x[k];
      mean /= K;
    }
    for (int k = 0; k < K; ++k)
      var += (x[k] - mean) * (x[k] - mean); // RMS: mean 0, so mean(x^2)
    var /= K;
    const double rstd = 1.0 / std::sqrt(var + double(eps));
    std::vector<double> y(N, 0.0);
    for (int k = 0; k < K; ++k) {
      const double z = (x[k] - mean) * rstd;
      for (int n = 0; n < N; ++n)
        y[n] += z * B[size_t(k) * N + n];
    }
    for (int j = 0; j < outCols; ++j)
      ref[size_t(m) * outCols + j] =
          nc.pair ? y[2 * j] - 2.0 * y[2 * j + 1] + bias[2 * j] : y[j] + bias[j];
  });
  double err[3] = {0, 0, 0}, mag = 0;
  bool nan = false;
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < outCols; ++j) {
      const size_t i = size_t(m) * outCols + j;
      nan |= std::isnan(out[i]);
      double &e = err[normRowClass(m)];
      e = std::max(e, std::fabs(out[i] - ref[i]));
      mag = std::max(mag, std::fabs(ref[i]));
    }
  const double rel = std::max({err[0], err[1], err[2]}) / mag;
  const double tol = bf16 ? 4e-3 : 2e-3;
  const bool ok = !nan && rel <= tol;
  if (!ok || verbose)
    std::printf("%s %-14s %s %s%s M=%d N=%d K=%d grid=%d: rel %.2e (rows N(0,1) %.2e, offset "
                "%.2e, all-equal %.2e)%s\n",
                ok ? "ok  " : "FAIL", c.name, bf16 ? "bf16" : "f16",
                nc.rowStats == 1 ? "layernorm" : "rmsnorm", nc.pair ? " pair" : "", M, N, K, grid,
                rel, err[0] / mag, err[1] / mag, err[2] / mag, nan ? " NaN" : "");
  for (void *p : {dA, dB, (void *)dOut, (void *)dColSum, (void *)dBias})
    CHECK_CUDA(cudaFree(p));
  return ok;
}

int runNormCorrectness(int numSMs, bool verbose) {
  using kiln::bf16;
  using kiln::f16;
  const NormCase cases[] = {
      // BM = 64 (one row per statistics thread) and 128 (two); 64 or 128 rows per consumer
      normCase<f16, 128, 128, 2, 6, false, 1, false>("128x128 c2 s6"),
      normCase<f16, 128, 128, 2, 6, false, 2, false>("128x128 c2 s6"),
      normCase<f16, 128, 128, 2, 6, false, 2, true>("128x128 c2 s6"),
      normCase<f16, 64, 128, 2, 8, true, 1, false>("64x128 pp s8"),
      normCase<f16, 64, 128, 2, 8, true, 2, false>("64x128 pp s8"),
      normCase<f16, 64, 128, 1, 6, false, 1, false>("64x128 c1 s6"),
      normCase<bf16, 64, 128, 1, 6, false, 2, false>("64x128 c1 s6"),
      normCase<f16, 128, 128, 2, 6, true, 1, false>("128x128 pp s6"),
      normCase<f16, 128, 128, 2, 6, true, 2, false>("128x128 pp s6"),
      normCase<bf16, 128, 192, 2, 5, false, 1, false>("128x192 c2 s5"),
      normCase<f16, 64, 256, 2, 5, true, 1, false>("64x256 pp s5"),
  };
  struct NormShape {
    int M, N, K, grid;
  };
  const NormShape shapes[] = {
      {200, 384, 768, 0}, {300, 200, 72, 0}, {300, 384, 200, 3}, {200, 200, 768, 1}};
  std::mt19937 rng(4321);
  int passed = 0, failed = 0;
  for (const NormCase &nc : cases)
    for (const NormShape &s : shapes)
      (runNormCase(nc, s.M, s.N, s.K, s.grid, rng, numSMs, verbose) ? passed : failed)++;
  std::printf("gemm_sm90 row statistics (folded layer / RMS norm): %d passed, %d failed\n", passed,
              failed);
  return failed ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// Benchmark
//===----------------------------------------------------------------------===//

__global__ void biasZero(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 0.0f;
}

int runBench(int numSMs, bool verbose) {
  struct BenchShape {
    int M, N, K;
    bool large;
  };
  const BenchShape shapes[] = {
      {128, 2304, 768, false},  {128, 768, 768, false},   {128, 3072, 768, false},
      {128, 768, 3072, false},  {128, 2048, 2048, false}, {128, 512, 2048, false},
      {128, 5632, 2048, false}, {128, 2048, 5632, false}, {4096, 2304, 768, true},
      {4096, 768, 768, true},   {4096, 3072, 768, true},  {4096, 768, 3072, true},
      {2048, 2048, 2048, true}, {2048, 512, 2048, true},  {2048, 5632, 2048, true},
      {2048, 2048, 5632, true}, {8192, 8192, 8192, true},
  };
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  void *workspace = nullptr;
  const size_t workspaceBytes = size_t(64) << 20;
  CHECK_CUDA(cudaMalloc(&workspace, workspaceBytes));
  CHECK_CUBLAS(cublasSetWorkspace(handle, workspace, workspaceBytes));
  for (const Config &c : kConfigs)
    for (bool bK : {false, true})
      if (KernelPtr k = kernelFor(c, {false, 0, true, bK, false, false, false}))
        prepare(k, c);

  std::mt19937 rng(7);
  int failures = 0;
  double logAll = 0, logLarge = 0;
  int nAll = 0, nLarge = 0;
  double minRatio = 1e9;
  std::printf("%-16s %-3s %-18s %9s %8s %10s %8s %12s %9s\n", "M x N x K", "B", "kiln config",
              "kiln us", "TFLOP/s", "cuBLAS us", "TFLOP/s", "cuBLAS/kiln", "rel diff");
  for (const BenchShape &s : shapes) {
    const int M = s.M, N = s.N, K = s.K;
    auto aBits = randomBits(rng, size_t(M) * K, false);
    auto bBits = randomBits(rng, size_t(K) * N, false);
    void *A, *B, *C, *Cref;
    float *bias;
    CHECK_CUDA(cudaMalloc(&A, aBits.size() * 2));
    CHECK_CUDA(cudaMalloc(&B, bBits.size() * 2));
    CHECK_CUDA(cudaMalloc(&C, size_t(M) * N * 2));
    CHECK_CUDA(cudaMalloc(&Cref, size_t(M) * N * 2));
    CHECK_CUDA(cudaMalloc(&bias, size_t(N) * 4));
    biasZero<<<(N + 255) / 256, 256>>>(bias, N);
    CHECK_CUDA(cudaMemcpy(A, aBits.data(), aBits.size() * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(B, bBits.data(), bBits.size() * 2, cudaMemcpyHostToDevice));
    for (bool bK : {false, true}) {
      const float alpha = 0.5f, beta = 0.0f; // the kernels' epilogue is 0.5 acc + bias (0)
      auto cublasLaunch = [&](cudaStream_t) {
        CHECK_CUBLAS(cublasGemmEx(handle, bK ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, N, M, K,
                                  &alpha, B, CUDA_R_16F, bK ? K : N, A, CUDA_R_16F, K, &beta, Cref,
                                  CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      cublasLaunch(stream);
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const double cublasUs = timeGraph(stream, cublasLaunch);
      const Config *best = nullptr;
      double bestUs = 0;
      for (const Config &c : kConfigs) {
        KernelPtr k = kernelFor(c, {false, 0, true, bK, false, false, false});
        const auto maC = operandMap(A, false, true, false, 1, M, K, c.bm);
        const auto mbC = operandMap(B, false, bK, false, 1, N, K, c.bn);
        launch(c, k, maC, mbC, M, N, K, 1, C, bias, numSMs, stream);
        CHECK_CUDA(cudaStreamSynchronize(stream));
        const double us = timeGraph(stream, [&](cudaStream_t st) {
          launch(c, k, maC, mbC, M, N, K, 1, C, bias, numSMs, st);
        });
        if (verbose)
          std::printf("    %-16s %-3s %-18s %9.2f %8.1f\n", "", bK ? "K" : "MN", c.name, us,
                      2.0 * M * N * K / us * 1e-6);
        if (!best || us < bestUs) {
          best = &c;
          bestUs = us;
        }
      }
      CHECK_CUDA(cudaMemsetAsync(C, 0xff, size_t(M) * N * 2, stream));
      {
        KernelPtr k = kernelFor(*best, {false, 0, true, bK, false, false, false});
        const auto maC = operandMap(A, false, true, false, 1, M, K, best->bm);
        const auto mbC = operandMap(B, false, bK, false, 1, N, K, best->bn);
        launch(*best, k, maC, mbC, M, N, K, 1, C, bias, numSMs, stream);
      }
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const double diff = kiln_test::relDiffF16(C, Cref, size_t(M) * N);
      const bool ok = diff <= 5e-3;
      failures += !ok;
      const double ratio = cublasUs / bestUs;
      if (!bK && M * 1.0 * N * K < 8192.0 * 8192 * 8192) {
        logAll += std::log(ratio), ++nAll;
        if (s.large)
          logLarge += std::log(ratio), ++nLarge;
        minRatio = std::min(minRatio, ratio);
      }
      char shape[40];
      std::snprintf(shape, sizeof(shape), "%dx%dx%d", M, N, K);
      const double flop = 2.0 * M * N * K;
      std::printf("%-16s %-3s %-18s %9.2f %8.1f %10.2f %8.1f %12.3f %9.2e%s\n", shape,
                  bK ? "K" : "MN", best->name, bestUs, flop / bestUs * 1e-6, cublasUs,
                  flop / cublasUs * 1e-6, ratio, diff, ok ? "" : "  FAIL");
    }
    for (void *p : {A, B, C, Cref, (void *)bias})
      CHECK_CUDA(cudaFree(p));
  }
  std::printf("B [K, N] (MN) shapes without 8192^3: geomean cuBLAS/kiln %.3f over %d, %.3f over "
              "the %d large, min %.3f\n",
              std::exp(logAll / std::max(nAll, 1)), nAll, std::exp(logLarge / std::max(nLarge, 1)),
              nLarge, minRatio);
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaFree(workspace));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return failures ? 1 : 0;
}

/// --one CONFIG M N K [K]: three launches of one configuration (B [K, N], or [N, K] with a
/// trailing K), for a profiler.
int runOne(const std::string &name, int M, int N, int K, bool bK, int numSMs) {
  const Config *c = nullptr;
  for (const Config &x : kConfigs)
    if (name == x.name)
      c = &x;
  if (!c) {
    std::fprintf(stderr, "no configuration '%s'\n", name.c_str());
    return 2;
  }
  KernelPtr k = kernelFor(*c, {false, 0, true, bK, false, false, false});
  prepare(k, *c);
  std::mt19937 rng(3);
  auto aBits = randomBits(rng, size_t(M) * K, false), bBits = randomBits(rng, size_t(K) * N, false);
  void *A, *B, *C;
  float *bias;
  CHECK_CUDA(cudaMalloc(&A, aBits.size() * 2));
  CHECK_CUDA(cudaMalloc(&B, bBits.size() * 2));
  CHECK_CUDA(cudaMalloc(&C, size_t(M) * N * 2));
  CHECK_CUDA(cudaMalloc(&bias, size_t(N) * 4));
  biasZero<<<(N + 255) / 256, 256>>>(bias, N);
  CHECK_CUDA(cudaMemcpy(A, aBits.data(), aBits.size() * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(B, bBits.data(), bBits.size() * 2, cudaMemcpyHostToDevice));
  const auto ma = operandMap(A, false, true, false, 1, M, K, c->bm);
  const auto mb = operandMap(B, false, bK, false, 1, N, K, c->bn);
  for (int i = 0; i < 3; ++i)
    launch(*c, k, ma, mb, M, N, K, 1, C, bias, numSMs, 0);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::printf("ran %s on %dx%dx%d\n", c->name, M, N, K);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  bool bench = false, verbose = false;
  std::vector<std::string> one;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--one") {
      for (++i; i < argc; ++i)
        one.push_back(argv[i]);
      if (one.size() != 4 && one.size() != 5) {
        std::fprintf(stderr, "usage: %s --one CONFIG M N K [K]\n", argv[0]);
        return 2;
      }
    } else if (arg == "--bench")
      bench = true;
    else if (arg == "-v")
      verbose = true;
    else {
      std::fprintf(stderr, "usage: %s [--bench] [-v]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop;
  if (!kiln_test::printDeviceIsSm90(prop))
    return 2;
  if (!one.empty())
    return runOne(one[0], std::stoi(one[1]), std::stoi(one[2]), std::stoi(one[3]), one.size() == 5,
                  prop.multiProcessorCount);
  if (bench)
    return runBench(prop.multiProcessorCount, verbose);
  const int rc = runCorrectness(prop.multiProcessorCount, verbose);
  return runNormCorrectness(prop.multiProcessorCount, verbose) | rc;
}
