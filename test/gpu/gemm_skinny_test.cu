// gemm_skinny_test.cu - GPU test and benchmark of kiln::gemmSkinny and kiln::gemmSkinnyRms
// (compiler/codegen/cuda/gemm_skinny.cuh): GEMMs of R = 1..16 rows (decode steps) against a
// row-major 16-bit weight read once, with the inner product on the CUDA cores (TC = false) or on
// the tensor cores (TC = true, mma.sync m16n8k16).
//
// Correctness (every run): f16 and bf16, both inner products, R in {1, 2, 3, 4, 5, 8, 12, 16}, on
// the 0.8B Llama's decode GEMMs (K = 2048: N = 3072, 2048, 11264; K = 5632: N = 2048) and odd
// shapes (N = 4 x odd, so a 16-byte chunk of B straddles N; K not a multiple of the 16-row step,
// of the 128-row round or of the A chunk; K below 16; empty K slices at split-K 8), split-K as
// kiln-select-tiles would choose it and swept over 1..8 (every split for R = 1 and 8, 1/2/4/8 for
// the other R), the RMS variant (gemmSkinnyRms: A = x * scale, the epilogue multiplies by the
// row's rstd) and the pair epilogue. B's row pitch is N rounded up to 8 (the tensor-core path's
// precondition), its padding columns hold NaN (a read of them poisons the output); the output
// (fp32, R x N, then a guard) is poisoned with NaN before the launch. Each case is compared with
// two host fp64 references:
//  - "kernel": from exactly the values the kernel multiplies (A = loadA's fp32 value, rounded to
//    the weight's type on the tensor-core path as the kernel stages it), tolerance 1e-4 of
//    max|ref| (only the fp32 accumulation order differs);
//  - "model": from the unrounded inputs in fp64, tolerance 1e-2 of max|ref| (the small-model
//    checks' tolerance for fp16 / bf16, test/e2e/small_models_test.py).
// A case fails when either error is above its tolerance, any output is NaN or the guard after
// the output was written. One PASS/FAIL line per case, then a summary; exit 1 on any failure,
// 77 without a GPU.
//
// Benchmark (--bench; --bench-only skips the cases): f16 (and bf16 with --bf16) at the 0.8B
// Llama's decode GEMMs, R in {1, 2, 4, 8, 12, 16}: µs per launch (a CUDA graph of 20 launches,
// median of 20 replays, gpu_test_util.h) and GB/s of B for both inner products side by side, at
// the split kiln-select-tiles would choose for each and at the best split of the sweep, plus
// cublasGemmEx (fp32 compute, f16/bf16 out) at the same shape, and the tensor cores with the
// weight preloaded before the grid-dependency wait at the preload's split (one block per SM),
// launched with programmatic dependent launch as kiln's decode programs are: the next launch's
// blocks copy their weight while the previous launch runs. Each launch of the graph reads
// the next of several copies of B (together at least 4x the L2), so the numbers are HBM numbers,
// as in a model whose layers each have their own weights. The column "occupancy-3" is
// kiln-select-tiles' skinny-tc-occupancy=3 plan (tensor cores, A in chunks of occChunk(R) K rows,
// 3 blocks per SM, its split), whose cases the correctness run also checks. Nothing is asserted.
//
// Build and run: test/gpu/build_gemm_skinny_test.sh [OUT]; OUT [--bench | --bench-only] [--bf16]
// [--preload-only] [-v] (--preload-only: only the cases with the weight preloaded; -v: every
// case's errors).
#include "kiln/gemm_skinny.cuh"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace kiln_test;

namespace {

constexpr int kThreads = kiln::skinny::kThreads;
double gReadGBs = 0, gCopyGBs = 0;

/// What the epilogue does: store acc (Plain), acc x the row's rstd (Rms, gemmSkinnyRms with
/// loadA = x * scale), or the pair (acc[n], acc[n + 1]) through a PairEpilogue (Pair).
/// PlainPre / RmsPre: Plain / Rms with the weight's first ring stages issued by
/// gemmSkinnyTcPreloadB first (tensor cores only; the preload of kiln-select-tiles'
/// skinny-weight-preload).
/// PlainOcc / RmsOcc: Plain / Rms on the tensor cores with kiln-select-tiles' skinny-tc-occupancy
/// plan for 3 blocks per SM (A in chunks of occChunk(R) K rows, __launch_bounds__(256, 3)).
/// PlainPreOcc / RmsPreOcc: both, the plan of skinny-preload-rows above 2 rows (the weight
/// preloaded, A in chunks of preOccChunk(R) K rows so that 3 blocks fit an SM, 2 of them
/// planned).
enum Mode {
  Plain = 0,
  Rms = 1,
  Pair = 2,
  PlainPre = 3,
  RmsPre = 4,
  PlainOcc = 5,
  RmsOcc = 6,
  PlainPreOcc = 7,
  RmsPreOcc = 8
};
/// The A chunk of the 3-blocks-per-SM plan on the H100 / H200 (228 KiB of shared memory per SM):
/// what kiln-select-tiles picks with skinny-tc-occupancy=3 (the longest that fits).
__host__ __device__ constexpr int occChunk(int rows) { return rows <= 8 ? 512 : 256; }
/// The A chunk of skinny-preload-rows' plan on the H100 / H200: the longest below the default
/// (2048 up to 8 rows, 1024 above) with which 3 blocks fit an SM (what kiln-select-tiles picks;
/// 0, the default, where it already fits: 1-2 rows).
__host__ __device__ constexpr int preOccChunk(int rows) {
  return rows <= 2 ? 0 : rows <= 5 ? 1024 : rows <= 10 ? 512 : 256;
}
__host__ __device__ constexpr bool isOcc(int mode) {
  return mode == PlainOcc || mode == RmsOcc || mode == PlainPreOcc || mode == RmsPreOcc;
}
__host__ __device__ constexpr bool isPre(int mode) {
  return mode == PlainPre || mode == RmsPre || mode == PlainPreOcc || mode == RmsPreOcc;
}
__host__ __device__ constexpr bool isRms(int mode) {
  return mode == Rms || mode == RmsPre || mode == RmsOcc || mode == RmsPreOcc;
}
/// The tensor-core path's A chunk a mode's kernels use (0: the default chunk).
__host__ __device__ constexpr int modeChunk(int mode, int rows) {
  return !isOcc(mode) ? 0 : isPre(mode) ? preOccChunk(rows) : occChunk(rows);
}

template <typename T> struct Args {
  const T *x;     // [R, lda]: A (Plain, Pair) or the norm's input x (Rms)
  const T *scale; // [K] (Rms)
  const T *B;     // [K, ldb]
  long long lda, ldb;
  int N, K;
  float eps;
  float *C; // [R, N] fp32
  // --bench-layers only (PlainPre / RmsPre): before the wait, warm L2 with `ownRows` K rows of
  // this block's share of B after the preloaded ones (gemmSkinnyPrefetchB, as kiln's code
  // generator does), and with this block's share of `pfBytes` bytes at `pf` (the next kernel's
  // weight) by bulk L2 prefetches (evict_last when pfHint).
  int ownRows = 0;
  const char *pf = nullptr;
  long long pfBytes = 0;
  int pfHint = 0;
  // --bench-layers: a kernel without the preload launched with programmatic dependent launch
  // waits for the previous kernel first (kiln's decode programs launch every kernel so).
  int pdl = 0;
};

/// This block's share of `bytes` (a multiple of 16) at `p` into L2 by cp.async.bulk.prefetch.L2
/// (PTX ISA, "cp.async.bulk.prefetch"), 16 KiB per instruction over the block's threads. Not
/// kiln::l2PrefetchShare (one piece per thread, its size a template argument the code generator
/// computes): this loop takes run-time sizes, so one kernel serves every plan below; session 30's
/// run 1 measured it, and run 2 kiln's own (--weight-prefetch=next) in the 0.8B Llama.
__device__ __forceinline__ void bulkPrefetchShare(const char *p, long long bytes, int hint) {
  const long long per = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const long long begin = per * blockIdx.x, end = min(bytes, begin + per);
  constexpr long long kPiece = 16384;
  for (long long off = begin + threadIdx.x * kPiece; off < end; off += blockDim.x * kPiece) {
    const unsigned size = unsigned(min(kPiece, end - off));
    if (hint)
      asm volatile("{\n .reg .b64 pol;\n createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
                   " cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, pol;\n}\n"
                   ::"l"(p + off), "r"(size) : "memory");
    else
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p + off), "r"(size)
                   : "memory");
  }
}

/// One launch of the few-row GEMM, shaped like kiln's generated kernels (a per-element A
/// loader, the epilogue storing each accumulator once).
template <typename T, int R, int SPLITK, bool TC, int MODE>
__global__ void __launch_bounds__(kThreads, isOcc(MODE) ? 3 : 1) skinnyKernel(Args<T> a) {
  extern __shared__ __align__(16) char smem[];
  constexpr bool kPre = isPre(MODE);
  constexpr int kChunk = modeChunk(MODE, R);
  static_assert(!isOcc(MODE) || TC, "the occupancy plan is the tensor-core path's");
  if constexpr (kPre) {
    // As kiln's decode programs launch it: the preload, then the wait for the previous kernel
    // and the early trigger of the next (programmatic dependent launch, see Launcher).
    if (a.pfBytes > 0)
      bulkPrefetchShare(a.pf, a.pfBytes, a.pfHint);
    kiln::gemmSkinnyTcPreloadB<T, SPLITK>(a.N, a.K, a.B, a.ldb, smem);
    if (a.ownRows > 0)
      kiln::gemmSkinnyPrefetchB<T, SPLITK, 8, true>(
          a.N, a.K, a.B, a.ldb, a.ownRows, int(8 * (kiln::smem_bytes::kSkinnyTcStages - 1) * 16));
    kiln::gridDependencySync();
  } else {
    if (a.pdl)
      kiln::gridDependencySync();
  }
  if constexpr (isRms(MODE)) {
    const float *rstd = kiln::skinny::rowRstd<R, TC, kChunk>(smem);
    auto loadA = [&](int r, int k) -> float {
      return kiln::ld(a.x[r * a.lda + k]) * kiln::ld(a.scale[k]);
    };
    auto loadX = [&](int r, int k) -> float { return kiln::ld(a.x[r * a.lda + k]); };
    auto epilogue = [&](int r, int n, float acc) { a.C[(long long)r * a.N + n] = acc * rstd[r]; };
    kiln::gemmSkinnyRms<T, R, SPLITK, TC, kPre, kChunk>(a.N, a.K, loadA, loadX, a.eps, a.B,
                                                        a.ldb, epilogue, smem);
  } else {
    auto loadA = [&](int r, int k) -> float { return kiln::ld(a.x[r * a.lda + k]); };
    if constexpr (MODE == Pair) {
      auto epilogue = kiln::makePairEpilogue([&](int r, int n, float acc0, float acc1) {
        *reinterpret_cast<float2 *>(a.C + (long long)r * a.N + n) = make_float2(acc0, acc1);
      });
      kiln::gemmSkinny<T, R, SPLITK, TC>(a.N, a.K, loadA, a.B, a.ldb, epilogue, smem);
    } else {
      auto epilogue = [&](int r, int n, float acc) { a.C[(long long)r * a.N + n] = acc; };
      kiln::gemmSkinny<T, R, SPLITK, TC, kPre, kChunk>(a.N, a.K, loadA, a.B, a.ldb, epilogue,
                                                       smem);
    }
  }
}

long long smemBytes(int rows, bool tc, int mode) {
  return tc ? kiln::smem_bytes::gemmSkinnyTc(rows, isRms(mode), modeChunk(mode, rows))
            : kiln::smem_bytes::gemmSkinny(rows, isRms(mode));
}

/// A type-erased launcher: the kernel for (T, R, SPLITK, TC, MODE), launched on ceil(N / 64) x
/// SPLITK blocks with SPLITK per cluster (the generated code's __cluster_dims__).
struct Launcher {
  const void *fn = nullptr;
  int rows = 0, split = 0;
  bool tc = false;
  int mode = 0;
  explicit operator bool() const { return fn != nullptr; }
  template <typename T> void launch(const Args<T> &a, cudaStream_t stream) const {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(unsigned((a.N + 63) / 64 * split), 1, 1);
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.dynamicSmemBytes = size_t(smemBytes(rows, tc, mode));
    cfg.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned n = 0;
    if (split > 1) {
      attr[n].id = cudaLaunchAttributeClusterDimension;
      attr[n].val.clusterDim.x = unsigned(split);
      attr[n].val.clusterDim.y = 1;
      attr[n].val.clusterDim.z = 1;
      ++n;
    }
    if (isPre(mode) || a.pdl) { // programmatic dependent launch, as in a model
      attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[n].val.programmaticStreamSerializationAllowed = 1;
      ++n;
    }
    cfg.attrs = attr;
    cfg.numAttrs = n;
    void *params[] = {const_cast<Args<T> *>(&a)};
    CHECK_CUDA(cudaLaunchKernelExC(&cfg, fn, params));
  }
};

template <typename T, int R, int SPLITK, bool TC, int MODE> Launcher makeLauncher() {
  const void *fn = reinterpret_cast<const void *>(&skinnyKernel<T, R, SPLITK, TC, MODE>);
  CHECK_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  int(smemBytes(R, TC, MODE))));
  Launcher l;
  l.fn = fn;
  l.rows = R;
  l.split = SPLITK;
  l.tc = TC;
  l.mode = MODE;
  return l;
}

// The instantiated (R, SPLITK) pairs: every split for R = 1 and 8, 1/2/4/8 for the others
// (plain); the RMS variant at splits 1, 3 and 8; the pair epilogue at R = 8, split 2 and R = 3,
// split 1. A pair that is not instantiated gives an empty Launcher.
template <typename T, bool TC, int MODE, int R> Launcher bySplit(int split) {
  constexpr bool kAll = MODE == Plain && (R == 1 || R == 8);
  if constexpr (isOcc(MODE)) {
    // The occupancy plan's splits on the 0.8B Llama's GEMMs (1-4, 6) and 8.
    switch (split) {
    case 1:
      return makeLauncher<T, R, 1, true, MODE>();
    case 2:
      return makeLauncher<T, R, 2, true, MODE>();
    case 3:
      return makeLauncher<T, R, 3, true, MODE>();
    case 4:
      return makeLauncher<T, R, 4, true, MODE>();
    case 6:
      return makeLauncher<T, R, 6, true, MODE>();
    case 8:
      return makeLauncher<T, R, 8, true, MODE>();
    }
    return {};
  }
  if constexpr (MODE == PlainPre || MODE == RmsPre) {
    // The preload's splits (1, 4 and 6 on the 0.8B Llama's GEMMs) and a few more.
    switch (split) {
    case 1:
      return makeLauncher<T, R, 1, TC, MODE>();
    case 2:
      return makeLauncher<T, R, 2, TC, MODE>();
    case 3:
      return makeLauncher<T, R, 3, TC, MODE>();
    case 4:
      return makeLauncher<T, R, 4, TC, MODE>();
    case 6:
      return makeLauncher<T, R, 6, TC, MODE>();
    case 8:
      return makeLauncher<T, R, 8, TC, MODE>();
    }
    return {};
  }
  switch (split) {
  case 1:
    if constexpr (MODE != Pair || R == 3)
      return makeLauncher<T, R, 1, TC, MODE>();
    break;
  case 2:
    if constexpr (MODE == Plain || (MODE == Pair && R == 8))
      return makeLauncher<T, R, 2, TC, MODE>();
    break;
  case 3:
    if constexpr (kAll || MODE == Rms)
      return makeLauncher<T, R, 3, TC, MODE>();
    break;
  case 4:
    if constexpr (MODE == Plain || (MODE == Rms && R == 8)) // Rms: the batch-8 QKV's split
      return makeLauncher<T, R, 4, TC, MODE>();
    break;
  case 5:
    if constexpr (kAll)
      return makeLauncher<T, R, 5, TC, MODE>();
    break;
  case 6:
    if constexpr (kAll)
      return makeLauncher<T, R, 6, TC, MODE>();
    break;
  case 7:
    if constexpr (kAll)
      return makeLauncher<T, R, 7, TC, MODE>();
    break;
  case 8:
    if constexpr (MODE != Pair)
      return makeLauncher<T, R, 8, TC, MODE>();
    break;
  }
  return {};
}

template <typename T, bool TC, int MODE> Launcher byRows(int rows, int split) {
  switch (rows) {
  case 1:
    return bySplit<T, TC, MODE, 1>(split);
  case 2:
    return bySplit<T, TC, MODE, 2>(split);
  case 3:
    return bySplit<T, TC, MODE, 3>(split);
  case 4:
    return bySplit<T, TC, MODE, 4>(split);
  case 5:
    return bySplit<T, TC, MODE, 5>(split);
  case 8:
    return bySplit<T, TC, MODE, 8>(split);
  case 12:
    return bySplit<T, TC, MODE, 12>(split);
  case 16:
    return bySplit<T, TC, MODE, 16>(split);
  }
  return {};
}

/// The split of the plain kernels closest to `split` from below that is instantiated.
int plainSplit(int rows, int split) {
  if (rows == 1 || rows == 8)
    return split;
  return split >= 8 ? 8 : split >= 4 ? 4 : split >= 2 ? 2 : 1;
}

template <typename T> Launcher find(bool tc, int mode, int rows, int split) {
  switch (mode) {
  case PlainOcc:
    return byRows<T, true, PlainOcc>(rows, split);
  case RmsOcc:
    return byRows<T, true, RmsOcc>(rows, split);
  case PlainPreOcc:
    return byRows<T, true, PlainPreOcc>(rows, split);
  case RmsPreOcc:
    return byRows<T, true, RmsPreOcc>(rows, split);
  default:
    break;
  }
  if (tc && mode == PlainPre)
    return byRows<T, true, PlainPre>(rows, split);
  if (tc && mode == RmsPre)
    return byRows<T, true, RmsPre>(rows, split);
  if (tc)
    return mode == Rms ? byRows<T, true, Rms>(rows, split)
           : mode == Pair ? byRows<T, true, Pair>(rows, split)
                          : byRows<T, true, Plain>(rows, split);
  return mode == Rms ? byRows<T, false, Rms>(rows, split)
         : mode == Pair ? byRows<T, false, Pair>(rows, split)
                        : byRows<T, false, Plain>(rows, split);
}

/// kiln-select-tiles' split-K for `rows` x [K] x [K, N] (passes/tiling/SelectTiles.cpp,
/// selectSkinnyGemmTile): two blocks per SM, at most 8, at least 128 K rows per block, cut back
/// while a second wave of blocks or of clusters appears (kiln::residentClusters with the H100 /
/// H200's 8 GPCs); blocks per SM by registers (CUDA cores) or by shared memory (tensor cores).
/// With tc, also the split of skinny-weight-preload's plan, whose 2 blocks per SM (one slot of 3
/// left for the next kernel) are what the tensor-core path gets here on the H200.
int selectSplit(int rows, int n, int k, int sms, bool tc, long long smemPerSm, int occupancy = 0) {
  constexpr int kGpcs = 8;
  const int columnTiles = (n + 63) / 64;
  int split = std::clamp((2 * sms + columnTiles - 1) / columnTiles, 1, 8);
  while (split > 1 && k / split < 128)
    --split;
  int perSm = 65536 / (256 * (rows <= 4 ? 80 : 128));
  if (tc)
    perSm = std::min<int>(65536 / (256 * 96),
                          int(smemPerSm / (kiln::smem_bytes::gemmSkinnyTc(rows) + 1024)));
  if (occupancy > 0) // skinny-tc-occupancy's plan (its chunk fits `occupancy` blocks)
    perSm = occupancy;
  perSm = std::max(perSm, 1);
  while (split > 1 && (columnTiles * split > perSm * sms ||
                       columnTiles > (perSm * sms - kGpcs * (split - 1)) / split))
    --split;
  return split;
}

/// A split rounded down to one the occupancy and preload kernels have (1, 2, 3, 4, 6, 8).
int roundSplit(int split) { return split >= 8 ? 8 : split >= 6 ? 6 : split >= 4 ? 4 : split; }

/// The split of skinny-tc-occupancy=3's plan, rounded down to one the occupancy kernels have.
int occSplit(int rows, int n, int k, int sms, long long smemPerSm) {
  return roundSplit(selectSplit(rows, n, k, sms, true, smemPerSm, 3));
}

/// The split of skinny-preload-rows' plan above 2 rows (2 blocks per SM planned, one slot left:
/// the default tensor-core count on the H100 / H200), rounded like occSplit.
int preOccSplit(int rows, int n, int k, int sms, long long smemPerSm) {
  return roundSplit(selectSplit(rows, n, k, sms, true, smemPerSm));
}

template <typename T> constexpr bool isBf16() { return std::is_same<T, kiln::bf16>::value; }
template <typename T> const char *typeName() { return isBf16<T>() ? "bf16" : "f16"; }

/// The value of a 16-bit pattern of T / the pattern nearest to x.
template <typename T> float toFloat(uint16_t b) { return halfBitsToFloat(b, isBf16<T>()); }
template <typename T> uint16_t fromFloat(float x) { return floatToHalfBits(x, isBf16<T>()); }

struct Shape {
  const char *name;
  int k, n;
};

/// Device buffers and host copies of one problem (R rows of A or x, scale, B with NaN padding).
template <typename T> struct Problem {
  int rows, k, n;
  long long ldb;
  std::vector<uint16_t> x, scale, b;
  T *dX = nullptr, *dScale = nullptr, *dB = nullptr;
  float *dC = nullptr;
  static constexpr int kGuard = 64;
  Problem(int rows, int k, int n, std::mt19937 &rng, bool rms)
      : rows(rows), k(k), n(n), ldb((n + 7) / 8 * 8) {
    std::uniform_real_distribution<float> u(-1.f, 1.f), s(0.5f, 1.5f);
    x.resize(size_t(rows) * k);
    // RMS: rows of different scales and a mean offset, as a residual stream has.
    for (int r = 0; r < rows; ++r)
      for (int i = 0; i < k; ++i)
        x[size_t(r) * k + i] = fromFloat<T>(rms ? (0.3f + u(rng)) * (1.f + 3.f * r) : u(rng));
    scale.resize(k);
    for (auto &v : scale)
      v = fromFloat<T>(s(rng));
    b.assign(size_t(k) * ldb, fromFloat<T>(NAN));
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < n; ++j)
        b[size_t(i) * ldb + j] = fromFloat<T>(u(rng));
    CHECK_CUDA(cudaMalloc(&dX, x.size() * 2));
    CHECK_CUDA(cudaMalloc(&dScale, scale.size() * 2));
    CHECK_CUDA(cudaMalloc(&dB, b.size() * 2));
    CHECK_CUDA(cudaMalloc(&dC, (size_t(rows) * n + kGuard) * 4));
    CHECK_CUDA(cudaMemcpy(dX, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dScale, scale.data(), scale.size() * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dB, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  }
  ~Problem() {
    cudaFree(dX);
    cudaFree(dScale);
    cudaFree(dB);
    cudaFree(dC);
  }
  Args<T> args(float eps) const { return {dX, dScale, dB, k, ldb, n, k, eps, dC}; }
};

/// The two references of the top of this file for R x N: `kernel` (A as the kernel multiplies
/// it) and `model` (unrounded, fp64).
template <typename T>
void reference(const Problem<T> &p, bool tc, bool rms, float eps, std::vector<double> &kernel,
               std::vector<double> &model) {
  const int R = p.rows, K = p.k, N = p.n;
  std::vector<double> aKernel(size_t(R) * K), aModel(size_t(R) * K), rstd(R, 1.0);
  // B transposed ([N][K]) so that a column's dot products read contiguous memory.
  std::vector<double> bt(size_t(K) * N);
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < N; ++j)
      bt[size_t(j) * K + i] = toFloat<T>(p.b[size_t(i) * p.ldb + j]);
  for (int r = 0; r < R; ++r) {
    double sumSq = 0;
    for (int i = 0; i < K; ++i) {
      const float x = toFloat<T>(p.x[size_t(r) * K + i]);
      const float s = rms ? toFloat<T>(p.scale[i]) : 1.f;
      const float a = rms ? x * s : x; // loadA's fp32 value
      aKernel[size_t(r) * K + i] = tc ? toFloat<T>(fromFloat<T>(a)) : a;
      aModel[size_t(r) * K + i] = double(x) * double(s);
      sumSq += double(x) * x;
    }
    if (rms)
      rstd[r] = 1.0 / std::sqrt(sumSq / K + eps);
  }
  kernel.assign(size_t(R) * N, 0);
  model.assign(size_t(R) * N, 0);
  parallelFor(N, [&](int j) {
    const double *col = &bt[size_t(j) * K];
    for (int r = 0; r < R; ++r) {
      double sk = 0, sm = 0;
      for (int i = 0; i < K; ++i) {
        sk += aKernel[size_t(r) * K + i] * col[i];
        sm += aModel[size_t(r) * K + i] * col[i];
      }
      kernel[size_t(r) * N + j] = sk * rstd[r];
      model[size_t(r) * N + j] = sm * rstd[r];
    }
  });
}

bool gVerbose = false;
constexpr double kTolKernel = 1e-4, kTolModel = 1e-2;

/// Runs one case; prints its PASS/FAIL line. Returns true when it passed.
template <typename T>
bool runCase(const char *what, int rows, int k, int n, int split, bool tc, int mode,
             std::mt19937 &rng) {
  Launcher l = find<T>(tc, mode, rows, split);
  if (!l) {
    std::printf("INTERNAL: no kernel for R=%d split=%d mode=%d\n", rows, split, mode);
    return false;
  }
  Problem<T> p(rows, k, n, rng, isRms(mode));
  const float eps = 1e-5f;
  // Poison: a NaN pattern in every output float and the guard after them.
  CHECK_CUDA(cudaMemset(p.dC, 0xff, (size_t(rows) * n + Problem<T>::kGuard) * 4));
  l.launch(p.args(eps), nullptr);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(size_t(rows) * n + Problem<T>::kGuard);
  CHECK_CUDA(cudaMemcpy(out.data(), p.dC, out.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<double> kernel, model;
  reference(p, tc, isRms(mode), eps, kernel, model);
  double errK = 0, errM = 0, magK = 0, magM = 0;
  bool nan = false, guard = true;
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (std::isnan(out[i]))
      nan = true;
    errK = std::max(errK, std::fabs(out[i] - kernel[i]));
    errM = std::max(errM, std::fabs(out[i] - model[i]));
    magK = std::max(magK, std::fabs(kernel[i]));
    magM = std::max(magM, std::fabs(model[i]));
  }
  for (int i = 0; i < Problem<T>::kGuard; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &out[kernel.size() + i], 4);
    guard &= bits == 0xffffffffu;
  }
  errK = magK > 0 ? errK / magK : errK;
  errM = magM > 0 ? errM / magM : errM;
  const bool ok = !nan && guard && errK <= kTolKernel && errM <= kTolModel;
  if (!ok || gVerbose)
    std::printf("%s %s %s %s R=%d K=%d N=%d split-K %d %s: kernel ref %.2e, model ref %.2e%s%s\n",
                ok ? "PASS" : "FAIL", typeName<T>(), tc ? "tensor-core" : "cuda-core", what, rows,
                k, n, split,
                mode == Rms       ? "rms"
                : mode == RmsPre  ? "rms-pre"
                : mode == PlainOcc ? "occupancy-3"
                : mode == RmsOcc  ? "rms-occupancy-3"
                : mode == PlainPre ? "preload"
                : mode == PlainPreOcc ? "preload, A in chunks"
                : mode == RmsPreOcc ? "rms-preload, A in chunks"
                : mode == Pair    ? "pair"
                                  : "plain",
                errK, errM,
                nan ? ", NaN in the output" : "", guard ? "" : ", guard overwritten");
  return ok;
}

const int kRows[] = {1, 2, 3, 4, 5, 8, 12, 16};
const Shape kLlama[] = {{"qkv", 2048, 3072},
                        {"o-proj", 2048, 2048},
                        {"gate-up", 2048, 11264},
                        {"down", 5632, 2048}};
// N = 4 x odd (a 16-byte chunk straddles N); K past a step, a round, a chunk; K < 16.
const Shape kOdd[] = {{"odd", 1000, 300}, {"odd", 2100, 68}, {"odd", 72, 196}, {"odd", 5, 36},
                      {"odd", 4500, 4 * 33}};

/// Every case for T; returns the number of failures and adds the case count to `total`.
template <typename T> int runAll(int sms, long long smemPerSm, int &total, bool preloadOnly) {
  std::mt19937 rng(1234);
  int failed = 0;
  auto run = [&](const char *what, int rows, int k, int n, int split, bool tc, int mode) {
    ++total;
    failed += !runCase<T>(what, rows, k, n, split, tc, mode, rng);
  };
  for (bool tc : {false, true}) {
    if (preloadOnly)
      break;
    // The selected split, every R, every shape.
    for (int rows : kRows) {
      for (const Shape &s : kLlama)
        run(s.name, rows, s.k, s.n,
            plainSplit(rows, selectSplit(rows, s.n, s.k, sms, tc, smemPerSm)), tc, Plain);
      for (const Shape &s : kOdd)
        run(s.name, rows, s.k, s.n, 1, tc, Plain);
    }
    // Split-K sweeps.
    for (int rows : kRows) {
      const bool all = rows == 1 || rows == 8;
      for (int split = 1; split <= 8; ++split) {
        if (!all && split != 1 && split != 2 && split != 4 && split != 8)
          continue;
        run("sweep", rows, 1000, 300, split, tc, Plain);
        run("sweep", rows, 72, 196, split, tc, Plain); // short K: empty slices at large splits
        if (all)
          run("sweep", rows, 5632, 2048, split, tc, Plain);
      }
    }
    // The RMS norm in the A loader.
    for (int rows : kRows)
      for (int split : {1, 3, 8}) {
        run("rms", rows, 2048, 3072, split, tc, Rms);
        run("rms", rows, 1000, 300, split, tc, Rms);
      }
    // The pair epilogue.
    run("pair", 8, 2048, 11264, 2, tc, Pair);
    run("pair", 8, 1000, 300, 2, tc, Pair);
    run("pair", 3, 2100, 68, 1, tc, Pair);
  }
  // The weight preloaded before the main loop (tensor cores): the selected split on every
  // shape, the odd shapes, splits 1-3 and 8 over short and long K, and the RMS variant.
  for (int rows : kRows) {
    for (const Shape &s : kLlama)
      run(s.name, rows, s.k, s.n, selectSplit(rows, s.n, s.k, sms, true, smemPerSm), true,
          PlainPre);
    for (const Shape &s : kOdd)
      run(s.name, rows, s.k, s.n, 1, true, PlainPre);
    for (int split : {1, 2, 3, 4, 6, 8}) {
      run("sweep", rows, 1000, 300, split, true, PlainPre);
      run("sweep", rows, 72, 196, split, true, PlainPre);
      run("rms", rows, 2048, 3072, split, true, RmsPre);
    }
  }
  // skinny-tc-occupancy=3's plan (tensor cores, A in shorter chunks, 3 blocks per SM): the
  // selected split on every shape (its K slices span several A chunks), the odd shapes, a split
  // sweep over short and long K, and the RMS variant.
  if (!preloadOnly)
    for (int rows : kRows) {
      for (const Shape &s : kLlama)
        run(s.name, rows, s.k, s.n, occSplit(rows, s.n, s.k, sms, smemPerSm), true, PlainOcc);
      for (const Shape &s : kOdd)
        run(s.name, rows, s.k, s.n, 1, true, PlainOcc);
      for (int split : {1, 2, 3, 4, 8}) {
        run("sweep", rows, 1000, 300, split, true, PlainOcc);
        run("sweep", rows, 72, 196, split, true, PlainOcc);
        run("sweep", rows, 5632, 2048, split, true, PlainOcc);
      }
      for (int split : {1, 3, 8})
        run("rms", rows, 2048, 3072, split, true, RmsOcc);
    }
  // skinny-preload-rows' plan (the weight preloaded and A in shorter chunks, 3 blocks per SM by
  // shared memory): the selected split on every shape, the odd shapes, a split sweep over short
  // and long K, and the RMS variant (its statistics span the chunks).
  for (int rows : kRows) {
    for (const Shape &s : kLlama)
      run(s.name, rows, s.k, s.n, preOccSplit(rows, s.n, s.k, sms, smemPerSm), true, PlainPreOcc);
    for (const Shape &s : kOdd)
      run(s.name, rows, s.k, s.n, 1, true, PlainPreOcc);
    for (int split : {1, 3, 8}) {
      run("sweep", rows, 1000, 300, split, true, PlainPreOcc);
      run("sweep", rows, 72, 196, split, true, PlainPreOcc);
      run("sweep", rows, 5632, 2048, split, true, PlainPreOcc);
      run("rms", rows, 2048, 3072, split, true, RmsPreOcc);
    }
  }
  return failed;
}

/// Benchmark of the 0.8B Llama's decode GEMMs (see the top of this file).
template <typename T> void bench(int sms, long long smemPerSm, size_t l2Bytes) {
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  const cudaDataType_t dt = isBf16<T>() ? CUDA_R_16BF : CUDA_R_16F;
  std::printf("\n%s: us per launch (GB/s of B) at kiln-select-tiles' split and at the best split "
              "of 1..8; cuBLAS cublasGemmEx (fp32 compute, %s out)\n",
              typeName<T>(), typeName<T>());
  std::printf("%-8s %5s %6s %3s | %-26s | %-26s | %-26s | %-26s | %-26s | %-26s | %9s\n", "gemm",
              "K", "N", "R", "cuda-core selected", "tensor-core selected", "cuda-core best",
              "tensor-core best", "preload selected", "occupancy-3 selected", "cuBLAS");
  for (const Shape &s : kLlama) {
    const size_t bBytes = size_t(s.k) * s.n * 2;
    const int copies = int(std::min<size_t>(20, (4 * l2Bytes + bBytes - 1) / bBytes));
    std::vector<T *> bs(copies);
    for (auto &b : bs) {
      CHECK_CUDA(cudaMalloc(&b, bBytes));
      CHECK_CUDA(cudaMemset(b, 0x3c, bBytes)); // 1.06 in f16, a small value in bf16
    }
    T *x;
    float *c;
    __half *ch;
    CHECK_CUDA(cudaMalloc(&x, size_t(16) * s.k * 2));
    CHECK_CUDA(cudaMemset(x, 0x3c, size_t(16) * s.k * 2));
    CHECK_CUDA(cudaMalloc(&c, size_t(16) * s.n * 4));
    CHECK_CUDA(cudaMalloc(&ch, size_t(16) * s.n * 2));
    for (int rows : {1, 2, 4, 8, 12, 16}) {
      auto time = [&](bool tc, int split, int mode = Plain) {
        Launcher l = find<T>(tc, mode, rows, split);
        if (!l)
          return -1.0;
        int i = 0;
        return timeGraph(stream, [&](cudaStream_t st) {
          Args<T> a = {x, x, bs[i++ % copies], s.k, s.n, s.n, s.k, 0.f, c};
          l.launch(a, st);
        });
      };
      char cell[6][64];
      {
        const int sel = occSplit(rows, s.n, s.k, sms, smemPerSm);
        const double t = time(true, sel, PlainOcc);
        std::snprintf(cell[5], sizeof cell[5], "s%d %7.2f (%6.0f)", sel, t, bBytes / t * 1e-3);
      }
      {
        const int sel = selectSplit(rows, s.n, s.k, sms, true, smemPerSm);
        const double t = time(true, sel, PlainPre);
        std::snprintf(cell[4], sizeof cell[4], "s%d %7.2f (%6.0f)", sel, t, bBytes / t * 1e-3);
      }
      for (int tc = 0; tc < 2; ++tc) {
        const int sel = plainSplit(rows, selectSplit(rows, s.n, s.k, sms, tc, smemPerSm));
        const double t = time(tc, sel);
        std::snprintf(cell[tc], sizeof cell[tc], "s%d %7.2f (%6.0f)", sel, t,
                      bBytes / t * 1e-3);
        double best = 1e30;
        int bestSplit = 0;
        for (int split = 1; split <= 8; ++split) {
          const double ts = time(tc, split);
          if (ts > 0 && ts < best)
            best = ts, bestSplit = split;
        }
        std::snprintf(cell[2 + tc], sizeof cell[2 + tc], "s%d %7.2f (%6.0f)", bestSplit, best,
                      bBytes / best * 1e-3);
      }
      int i = 0;
      const float alpha = 1.f, beta = 0.f;
      const double tBlas = timeGraph(stream, [&](cudaStream_t) {
        // Row-major C[R, N] = A[R, K] B[K, N] as column-major C^T = B^T A^T.
        CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, rows, s.k, &alpha,
                                  bs[i++ % copies], dt, s.n, x, dt, s.k, &beta, ch, dt, s.n,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      });
      std::printf("%-8s %5d %6d %3d | %-26s | %-26s | %-26s | %-26s | %-26s | %-26s | %9.2f\n",
                  s.name, s.k, s.n, rows, cell[0], cell[1], cell[2], cell[3], cell[4], cell[5],
                  tBlas);
    }
    for (auto &b : bs)
      CHECK_CUDA(cudaFree(b));
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(c));
    CHECK_CUDA(cudaFree(ch));
  }
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
}


/// Reads `n` 16-byte words (the read bandwidth's ceiling; the sum keeps the loads alive).
__global__ void readKernel(const int4 *__restrict__ p, long long n, int *sink) {
  int acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const int4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff)
    *sink = acc;
}
/// Copies `n` 16-byte words (the copy bandwidth as the generation benchmark measures it).
__global__ void copyKernel(const int4 *__restrict__ a, int4 *__restrict__ b, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    b[i] = a[i];
}

/// The weights of --bench-layers' 16 layers x 4 decode GEMMs (each layer its own, half of each
/// 1.06 and half 0), an input of up to 16 rows and an output of up to 16 x 11264 floats.
struct LayerWeights {
  static constexpr int kLayers = 16;
  std::vector<kiln::f16 *> w;
  kiln::f16 *x = nullptr;
  float *c = nullptr;
  size_t total = 0; // bytes of all weights
  explicit LayerWeights(const Shape (&shapes)[4]) : w(kLayers * 4) {
    for (int l = 0; l < kLayers; ++l)
      for (int g = 0; g < 4; ++g) {
        const size_t bytes = size_t(shapes[g].k) * shapes[g].n * 2;
        CHECK_CUDA(cudaMalloc(&w[l * 4 + g], bytes));
        CHECK_CUDA(cudaMemset(w[l * 4 + g], 0x3c, bytes / 2));
        total += bytes;
      }
    CHECK_CUDA(cudaMalloc(&x, size_t(16) * 5632 * 2));
    CHECK_CUDA(cudaMemset(x, 0x3c, size_t(16) * 5632 * 2));
    CHECK_CUDA(cudaMalloc(&c, size_t(16) * 11264 * 4));
  }
  ~LayerWeights() {
    for (kiln::f16 *p : w)
      cudaFree(p);
    cudaFree(x);
    cudaFree(c);
  }
};

/// --bench-layers: the 0.8B Llama's batch-1 decode GEMMs of 16 layers (QKV with the RMS norm,
/// o-proj, gate/up with the RMS norm, down: 64 launches, each layer its own weights, 1445 MB) as
/// one CUDA graph with programmatic dependent launch and the weight preload, as kiln's decode_b1
/// runs them (without the attention and the lm_head), under several L2-prefetch plans: none,
/// each kernel's own share (kiln today), and each kernel's bulk prefetch of the next kernel's
/// weight (whole or capped) before its wait. Prints µs per step and the fraction of the read
/// and copy bandwidths measured in the same run.
void benchLayers(int sms, long long smemPerSm, size_t l2Bytes) {
  using T = kiln::f16;
  constexpr int kLayers = 16;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  const Shape shapes[4] = {kLlama[0], kLlama[1], kLlama[2], kLlama[3]};
  const int modes[4] = {RmsPre, PlainPre, RmsPre, PlainPre};
  LayerWeights weights(shapes);
  const std::vector<T *> &w = weights.w;
  T *x = weights.x;
  float *c = weights.c;
  const size_t total = weights.total;
  Launcher launchers[4];
  int splits[4], blocks[4];
  for (int g = 0; g < 4; ++g) {
    splits[g] = selectSplit(1, shapes[g].n, shapes[g].k, sms, true, smemPerSm);
    launchers[g] = find<T>(true, modes[g], 1, splits[g]);
    blocks[g] = (shapes[g].n + 63) / 64 * splits[g];
    if (!launchers[g]) {
      std::printf("bench-layers: no launcher for %s split %d\n", shapes[g].name, splits[g]);
      return;
    }
  }
  // Ceilings: one read of all the weights' bytes (in one buffer) and a 1 GiB copy.
  {
    char *big;
    const size_t copyBytes = size_t(1) << 30;
    CHECK_CUDA(cudaMalloc(&big, std::max(total, 2 * copyBytes)));
    CHECK_CUDA(cudaMemset(big, 1, std::max(total, 2 * copyBytes)));
    int *sink;
    CHECK_CUDA(cudaMalloc(&sink, 4));
    const double read = timeGraph(stream, [&](cudaStream_t st) {
      readKernel<<<sms * 8, 256, 0, st>>>(reinterpret_cast<const int4 *>(big),
                                         (long long)(total / 16), sink);
    }, 5, 20);
    const double copy = timeGraph(stream, [&](cudaStream_t st) {
      copyKernel<<<sms * 8, 256, 0, st>>>(reinterpret_cast<const int4 *>(big),
                                         reinterpret_cast<int4 *>(big + copyBytes),
                                         (long long)(copyBytes / 16));
    }, 5, 20);
    gReadGBs = total / read * 1e-3;
    gCopyGBs = 2.0 * copyBytes / copy * 1e-3;
    std::printf("\nbench-layers: %d layers x 4 decode GEMMs at batch 1, %.1f MB of weights; "
                "splits qkv %d o %d gate-up %d down %d\n",
                kLayers, total * 1e-6, splits[0], splits[1], splits[2], splits[3]);
    std::printf("read of the same bytes in one kernel: %.1f us (%.0f GB/s); copy of 1 GiB: %.0f "
                "GB/s (read + write)\n",
                read, gReadGBs, gCopyGBs);
    CHECK_CUDA(cudaFree(big));
    CHECK_CUDA(cudaFree(sink));
  }
  struct Plan {
    const char *name;
    bool own;          // each kernel's own share (kiln today)
    long long nextCap; // bytes of the next kernel's weight prefetched (0: none, -1: all)
    int hint;
    int ahead; // how many kernels ahead the prefetched weight is (1: the next)
  };
  const Plan plans[] = {
      {"preload only", false, 0, 0, 1},
      {"own share to L2 (kiln today)", true, 0, 0, 1},
      {"own + next weight, whole", true, -1, 0, 1},
      {"own + next weight, whole, evict_last", true, -1, 1, 1},
      {"own + next weight, <= 16 MB", true, 16 << 20, 0, 1},
      {"own + next weight, <= 32 MB", true, 32 << 20, 0, 1},
      {"next weight, whole (no own)", false, -1, 0, 1},
      {"own + the weight 2 ahead, whole", true, -1, 0, 2},
  };
  {
    // The same bytes as 64 plain read kernels (one per weight, no PDL): the kernel-per-GEMM
    // structure's ceiling without any GEMM work.
    int *sink;
    CHECK_CUDA(cudaMalloc(&sink, 4));
    const double us = timeGraph(stream, [&](cudaStream_t st) {
      for (int i = 0; i < kLayers * 4; ++i) {
        const Shape &s = shapes[i % 4];
        readKernel<<<sms * 4, 256, 0, st>>>(reinterpret_cast<const int4 *>(w[i]),
                                           (long long)s.k * s.n * 2 / 16, sink);
      }
    }, 1, 20);
    const double gbs = total / us * 1e-3;
    std::printf("%-40s %8.1f us per step  %6.0f GB/s  %.3f of read  %.3f of copy\n",
                "64 read kernels (no GEMM)", us, gbs, gbs / gReadGBs, gbs / gCopyGBs);
    CHECK_CUDA(cudaFree(sink));
  }
  for (const Plan &plan : plans) {
    const double us = timeGraph(stream, [&](cudaStream_t st) {
      for (int l = 0; l < kLayers; ++l)
        for (int g = 0; g < 4; ++g) {
          const Shape &s = shapes[g];
          Args<T> a = {x, x, w[l * 4 + g], s.k, s.n, s.n, s.k, 1e-5f, c};
          if (plan.own) {
            const long long kPer = ((s.k + splits[g] - 1) / splits[g] + 15) / 16 * 16;
            const long long preloadRows = 8 * (kiln::smem_bytes::kSkinnyTcStages - 1) * 16;
            a.ownRows = int(std::min<long long>(
                {kPer - preloadRows, (long long)l2Bytes / 2 / (blocks[g] * 128LL), 2048}));
          }
          const int next = l * 4 + g + plan.ahead;
          if (plan.nextCap != 0 && next < kLayers * 4) {
            const Shape &ns = shapes[next % 4];
            const long long bytes = (long long)ns.k * ns.n * 2;
            a.pf = reinterpret_cast<const char *>(w[next]);
            a.pfBytes = plan.nextCap < 0 ? bytes : std::min(bytes, plan.nextCap);
            a.pfHint = plan.hint;
          }
          launchers[g].launch(a, st);
        }
    }, 1, 20);
    const double gbs = total / us * 1e-3;
    std::printf("%-40s %8.1f us per step  %6.0f GB/s  %.3f of read  %.3f of copy\n", plan.name,
                us, gbs, gbs / gReadGBs, gbs / gCopyGBs);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
}

/// --bench-layers, batch 8: the same 64 decode GEMMs at 8 rows (a batch-8 decode step) as one
/// CUDA graph with programmatic dependent launch, under the three tensor-core plans kiln can
/// emit: the default (2 blocks per SM, each kernel waits for the previous one first),
/// skinny-tc-occupancy=3 (3 blocks per SM, A in chunks of 512 K rows), and skinny-preload-rows
/// (2 blocks per SM and the weight's first stages preloaded before the wait, A in chunks of 512
/// K rows so that the next kernel's block fits beside them). Prints µs per step and the fraction
/// of the copy bandwidth measured by benchLayers.
void benchLayers8(int sms, long long smemPerSm) {
  using T = kiln::f16;
  constexpr int kLayers = 16, kRowsB8 = 8;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  const Shape shapes[4] = {kLlama[0], kLlama[1], kLlama[2], kLlama[3]};
  LayerWeights weights(shapes);
  const std::vector<T *> &w = weights.w;
  T *x = weights.x;
  float *c = weights.c;
  const size_t total = weights.total;
  struct Plan {
    const char *name;
    int plain, rms; // the modes of the plain (o-proj, down) and RMS (QKV, gate/up) GEMMs
  };
  const Plan plans[] = {{"default plan (2 per SM)", Plain, Rms},
                        {"skinny-tc-occupancy=3", PlainOcc, RmsOcc},
                        {"skinny-preload-rows=16", PlainPreOcc, RmsPreOcc}};
  std::printf("\nbench-layers, batch 8: %d layers x 4 decode GEMMs at %d rows, %.1f MB of "
              "weights, every kernel launched with programmatic dependent launch\n",
              kLayers, kRowsB8, total * 1e-6);
  for (int round = 0; round < 2; ++round)
    for (const Plan &plan : plans) {
      Launcher launchers[4];
      int splits[4];
      bool ok = true;
      for (int g = 0; g < 4; ++g) {
        const Shape &sh = shapes[g];
        const int mode = g % 2 == 0 ? plan.rms : plan.plain;
        splits[g] = isOcc(mode) && !isPre(mode) ? occSplit(kRowsB8, sh.n, sh.k, sms, smemPerSm)
                    : isPre(mode) ? preOccSplit(kRowsB8, sh.n, sh.k, sms, smemPerSm)
                                  : selectSplit(kRowsB8, sh.n, sh.k, sms, true, smemPerSm);
        launchers[g] = find<T>(true, mode, kRowsB8, splits[g]);
        if (!launchers[g]) {
          std::printf("bench-layers: no launcher for %s, %s split %d\n", plan.name, sh.name,
                      splits[g]);
          ok = false;
        }
      }
      if (!ok)
        continue;
      const double us = timeGraph(stream, [&](cudaStream_t st) {
        for (int l = 0; l < kLayers; ++l)
          for (int g = 0; g < 4; ++g) {
            const Shape &sh = shapes[g];
            Args<T> a = {x, x, w[l * 4 + g], sh.k, sh.n, sh.n, sh.k, 1e-5f, c};
            a.pdl = 1;
            launchers[g].launch(a, st);
          }
      }, 1, 20);
      const double gbs = total / us * 1e-3;
      std::printf("round %d %-28s splits %d/%d/%d/%d %8.1f us per step  %6.0f GB/s  %.3f of copy\n",
                  round, plan.name, splits[0], splits[1], splits[2], splits[3], us, gbs,
                  gCopyGBs > 0 ? gbs / gCopyGBs : 0.0);
    }
  CHECK_CUDA(cudaStreamDestroy(stream));
}

} // namespace

int main(int argc, char **argv) {
  bool doBench = false, benchOnly = false, bf16Bench = false, preloadOnly = false, layers = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--bench")
      doBench = true;
    else if (a == "--bench-only")
      doBench = benchOnly = true;
    else if (a == "--bf16")
      bf16Bench = true;
    else if (a == "-v")
      gVerbose = true;
    else if (a == "--preload-only")
      preloadOnly = true;
    else if (a == "--bench-layers")
      layers = benchOnly = true;
    else {
      std::fprintf(stderr, "usage: %s [--bench | --bench-only | --bench-layers] [--bf16] [--preload-only] [-v]\n",
                   argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs, %d MiB L2, %zu KiB shared memory per SM)\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20,
              prop.sharedMemPerMultiprocessor >> 10);
  if (prop.major < 9) {
    std::printf("SKIP: thread-block clusters need sm_90\n");
    return 77;
  }
  const int sms = prop.multiProcessorCount;
  const long long smemPerSm = (long long)prop.sharedMemPerMultiprocessor;
  int failed = 0, total = 0;
  if (!benchOnly) {
    failed += runAll<kiln::f16>(sms, smemPerSm, total, preloadOnly);
    failed += runAll<kiln::bf16>(sms, smemPerSm, total, preloadOnly);
    std::printf("%s: %d of %d cases failed\n", failed ? "FAILED" : "OK", failed, total);
  }
  if (doBench) {
    bench<kiln::f16>(sms, smemPerSm, size_t(prop.l2CacheSize));
    if (bf16Bench)
      bench<kiln::bf16>(sms, smemPerSm, size_t(prop.l2CacheSize));
  }
  if (layers) {
    benchLayers(sms, smemPerSm, size_t(prop.l2CacheSize));
    benchLayers8(sms, smemPerSm);
  }
  return failed ? 1 : 0;
}
