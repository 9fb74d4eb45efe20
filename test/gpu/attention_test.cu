// attention_test.cu - GPU test and benchmark of kiln::attentionTC / kiln::attentionSimt
// (compiler/codegen/cuda/attention.cuh) and kiln::attentionSm90 (attention_sm90.cuh: TMA,
// warp-specialized wgmma; sm_90a).
//
// Correctness (default): f16 and bf16 through the tensor-core kernels for head dims 64, 80, 96,
// 128 (and 32; 256 on the Hopper kernel), and fp32 through the CUDA-core kernel; causal and not;
// masks: none, a padding mask [B, 1, 1, Sk] of -inf (one batch fully masked: NaN rows, or zeros
// with zeroMaskedRows), a finite "min" padding mask (uniform softmax over masked keys; read
// through kiln::RowInvariantMask, once per key column) and (Hopper kernel) a per-element mask
// [B, 1, Sq, Sk]: a sliding window of 40 keys (-inf further back) plus -2.5 on every 7th key,
// and RoPE on Q applied in the kernel (the fused kiln.rotary prologue);
// GQA (Hq 8 over Hkv 2) and MQA (Hkv 1); Sq != Sk (decode Sq = 1, Sq < Sk, and Sq > Sk causal,
// whose first rows see no key) and lengths that are not tile multiples. Q is read from a
// [B, Sq, Hq, D] buffer (as from a QKV projection), K and V from [B, Hkv, Sk, D], the output
// written [B, Hq, Sq, D] into a NaN-poisoned buffer. Reference: fp64 on the host from the stored
// (rounded) inputs. A case fails when max|out - ref| / max|ref| exceeds 4e-3 (f16), 2e-2 (bf16)
// or 1e-5 (fp32), when a NaN is missing or extra, or an unwritten element remains. Each case
// prints "PASS|FAIL <kernel> <dtype> <config> <shape> rel err .. nan mismatches ..".
//
// Benchmark (--bench): f16, [B, H, S, D] contiguous, inside a CUDA graph of 20 launches; prints
// one line per shape and configuration "attn <name> B H S D causal us TFLOP/s <config>" (causal
// FLOPs counted as half, as FlashAttention and test/bench/bench_attention.py count them).
// --bench-long: batch 1/4/8 x 4k/8k/16k tokens, h32 d128, 2 launches per graph and 6 replays.
//
// Options: --filter K runs only the kernels whose tag contains K (tags: tc, simt, sm90); e.g.
// `--filter sm90` for the Hopper kernel's cases or bench rows alone. The Hopper cases need an
// sm_90 device and an sm_90a build (build_attention_test.sh's default); elsewhere they are
// reported as SKIP.
//
// Build and run: test/gpu/build_attention_test.sh [OUT]; OUT [--bench | --bench-long]
// [--filter K].
#include "kiln/attention.cuh"
#include "kiln/attention_sm90.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace kiln_test;

namespace {

/// --filter: run only kernels whose tag contains this ("" runs all).
std::string gFilter;
/// Whether the device runs the sm_90a kernel (checked once in main).
bool gSm90 = false;
bool selected(const char *tag) { return gFilter.empty() || std::strstr(tag, gFilter.c_str()); }
std::string gShape; // --shape S: only the benchmark shapes whose name contains S
bool shapeSelected(const char *name) {
  return gShape.empty() || std::strstr(name, gShape.c_str());
}

/// Padding mask functor: mask[b * Sk + j] (additive, fp32 values), broadcast over heads and rows.
struct PadMask {
  const float *m;
  int Sk;
  __device__ float operator()(long long b, long long, long long, long long j) const {
    return m[b * Sk + j];
  }
};

/// Per-element mask (mask kind 3): keys more than kWindow behind the row's diagonal i + off are
/// -inf (a sliding window), every 7th key (j % 7 == 1) gets -2.5 (an additive mask).
constexpr int kWindow = 40;
__host__ __device__ inline float windowMaskValue(long long i, long long j, int off) {
  if (j < i + off - kWindow)
    return -INFINITY;
  return j % 7 == 1 ? -2.5f : 0.0f;
}
struct WindowMask {
  int off;
  __device__ float operator()(long long, long long, long long i, long long j) const {
    return windowMaskValue(i, j, off);
  }
};

/// Rotary tables (case mask kind 4: RoPE on Q, no mask): table[pos * D + d], fp32.
struct RopeTable {
  const float *t;
  int D;
  __device__ float operator()(long long, long long, long long pos, long long d) const {
    return t[pos * D + d];
  }
};

template <typename T, int D, int BN, int W, int MF, bool C, typename M>
__global__ void __launch_bounds__(32 * W)
    tcKernel(kiln::AttnTensor<T> q, kiln::AttnTensor<T> k, kiln::AttnTensor<T> v, M mask,
             kiln::AttnOut<T> o, kiln::AttnShape s) {
  extern __shared__ __align__(128) char smem[];
  kiln::attentionTC<T, D, BN, W, MF, C>(q, k, v, mask, o, s, smem);
}

template <int D, int W, bool C, typename M>
__global__ void __launch_bounds__(32 * W)
    simtKernel(kiln::AttnTensor<float> q, kiln::AttnTensor<float> k, kiln::AttnTensor<float> v,
               M mask, kiln::AttnOut<float> o, kiln::AttnShape s) {
  extern __shared__ __align__(128) char smem[];
  auto qf = [&](long long b, long long h, long long i, long long d) {
    return q.ptr[b * q.sb + h * q.sh + i * q.ss + d];
  };
  auto kf = [&](long long b, long long h, long long j, long long d) {
    return k.ptr[b * k.sb + h * k.sh + j * k.ss + d];
  };
  auto vf = [&](long long b, long long h, long long j, long long d) {
    return v.ptr[b * v.sb + h * v.sh + j * v.ss + d];
  };
  auto store = [&](long long b, long long h, long long i, long long d, float x) {
    o.ptr[b * o.sb + h * o.sh + i * o.ss + d] = x;
  };
  kiln::attentionSimt<D, D, W, C>(qf, kf, vf, mask, store, s, smem);
}

template <typename T, int D, int BM, int BN, int ST, bool C, bool PP, typename M,
          typename RQ>
__global__ void __launch_bounds__(128 * (BM / 64 + 1), 1)
    sm90Kernel(const __grid_constant__ kiln::TensorMap tq,
               const __grid_constant__ kiln::TensorMap tk,
               const __grid_constant__ kiln::TensorMap tv, M mask, kiln::AttnOut<T> o,
               kiln::AttnShape s, RQ ropeQ, int batch) {
  extern __shared__ __align__(128) char smem[]; // attentionSm90 aligns it to 1024
  kiln::attentionSm90<T, D, BM, BN, ST, C, PP>(&tq, &tk, &tv, mask, o, s, smem, ropeQ, batch);
}

template <typename T> struct KilnType;
template <> struct KilnType<__half> { using type = kiln::f16; };
template <> struct KilnType<__nv_bfloat16> { using type = kiln::bf16; };
template <> struct KilnType<float> { using type = float; };
template <typename T> const char *typeName() {
  return std::is_same<T, __half>::value ? "f16" : std::is_same<T, float>::value ? "fp32" : "bf16";
}

struct Case {
  int B, Hq, Hkv, Sq, Sk;
  bool causal;
  int mask; // 0 none, 1 -inf padding (batch 1 fully masked when B > 1), 2 finite min padding,
            // 3 per-element window mask (WindowMask), 4 no mask but RoPE on Q (RopeTable),
            // 5 no mask and a negative scale (ONNX Attention allows one; the Hopper kernel
            // must scale before the row maxima and the causal -inf)
  bool zeroRows;
};

/// The case's attention scale: 1 / sqrt(D), negated for mask kind 5.
inline double scaleOf(const Case &c, int D) {
  return (c.mask == 5 ? -1.0 : 1.0) / std::sqrt(double(D));
}

/// One case's inputs on the host and the device, its fp64 reference and the check.
template <typename T> struct Problem {
  using KT = typename KilnType<T>::type;
  Case c;
  int D;
  std::vector<float> q, k, v, mask, cosT, sinT;
  std::vector<double> ref;
  std::vector<char> refNaN;
  T *dq = nullptr, *dk = nullptr, *dv = nullptr, *dout = nullptr;
  float *dmask = nullptr, *dcos = nullptr, *dsin = nullptr;

  Problem(const Case &cs, int d) : c(cs), D(d) {
    const int B = c.B, Hq = c.Hq, Hkv = c.Hkv, Sq = c.Sq, Sk = c.Sk;
    std::mt19937 rng(B * 131 + Hq * 31 + Sq * 7 + Sk + D + c.mask * 3 + c.causal);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    q.resize(size_t(B) * Sq * Hq * D), k.resize(size_t(B) * Hkv * Sk * D), v.resize(k.size());
    for (auto &x : q) x = roundTo<T>(dist(rng));
    for (auto &x : k) x = roundTo<T>(dist(rng));
    for (auto &x : v) x = roundTo<T>(dist(rng));
    mask.assign(size_t(B) * Sk, 0.0f);
    if (c.mask == 1 || c.mask == 2)
      for (int b = 0; b < B; ++b)
        for (int j = 0; j < Sk; ++j) {
          bool masked = (b == 1) || (j % 5 == 3);
          if (masked)
            mask[b * Sk + j] = c.mask == 1 ? -INFINITY : -3.4028234663852886e38f;
        }
    // RoPE on Q (mask kind 4): the reference reads Q rotated at position i (rotate-half, fp32,
    // rounded to T as kiln.rotary stores it); the kernel rotates the tile in shared memory.
    std::vector<float> qr = q;
    if (c.mask == 4) {
      const int H = D / 2;
      cosT.resize(size_t(Sq) * D), sinT.resize(size_t(Sq) * D);
      for (int pos = 0; pos < Sq; ++pos)
        for (int d = 0; d < D; ++d) {
          const double theta = pos * std::pow(10000.0, -2.0 * (d % H) / D);
          cosT[size_t(pos) * D + d] = float(std::cos(theta));
          sinT[size_t(pos) * D + d] = float(std::sin(theta));
        }
      for (int b = 0; b < B; ++b)
        for (int i = 0; i < Sq; ++i)
          for (int h = 0; h < Hq; ++h) {
            float *row = &qr[((size_t(b) * Sq + i) * Hq + h) * D];
            const float *cs = &cosT[size_t(i) * D], *sn = &sinT[size_t(i) * D];
            std::vector<float> x(row, row + D);
            for (int d = 0; d < H; ++d) {
              row[d] = roundTo<T>(x[d] * cs[d] - x[d + H] * sn[d]);
              row[d + H] = roundTo<T>(x[d + H] * cs[d + H] + x[d] * sn[d + H]);
            }
          }
    }
    const double scale = scaleOf(c, D);
    // Reference (fp64), output [B, Hq, Sq, D].
    ref.assign(size_t(B) * Hq * Sq * D, 0.0);
    refNaN.assign(ref.size(), 0);
    const int rep = Hq / Hkv, off = Sk - Sq;
    parallelFor(B * Hq, [&](int bh) {
      const int b = bh / Hq, h = bh % Hq;
      std::vector<double> s(Sk);
      for (int i = 0; i < Sq; ++i) {
        double mx = -INFINITY;
        for (int j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(qr[((size_t(b) * Sq + i) * Hq + h) * D + d]) *
                   k[((size_t(b) * Hkv + h / rep) * Sk + j) * D + d];
          const float m = c.mask == 3 ? windowMaskValue(i, j, off) : mask[b * Sk + j];
          double x = float(float(dot * scale) + m); // the kernel adds in fp32
          if (c.causal && j > i + off)
            x = -INFINITY;
          s[j] = x;
          mx = std::max(mx, x);
        }
        size_t o = ((size_t(b) * Hq + h) * Sq + i) * D;
        if (mx == -INFINITY) {
          for (int d = 0; d < D; ++d)
            refNaN[o + d] = !c.zeroRows, ref[o + d] = 0.0;
          continue;
        }
        double l = 0;
        for (int j = 0; j < Sk; ++j)
          l += (s[j] = std::exp(s[j] - mx));
        for (int d = 0; d < D; ++d) {
          double acc = 0;
          for (int j = 0; j < Sk; ++j)
            acc += s[j] * v[((size_t(b) * Hkv + h / rep) * Sk + j) * D + d];
          ref[o + d] = acc / l;
        }
      }
    });
    auto upload = [](const std::vector<float> &h) {
      std::vector<T> t(h.size());
      for (size_t i = 0; i < h.size(); ++i) t[i] = toT<T>(h[i]);
      T *d;
      CHECK_CUDA(cudaMalloc(&d, std::max<size_t>(t.size(), 1) * sizeof(T)));
      CHECK_CUDA(cudaMemcpy(d, t.data(), t.size() * sizeof(T), cudaMemcpyHostToDevice));
      return d;
    };
    dq = upload(q), dk = upload(k), dv = upload(v);
    CHECK_CUDA(cudaMalloc(&dmask, mask.size() * 4));
    CHECK_CUDA(cudaMemcpy(dmask, mask.data(), mask.size() * 4, cudaMemcpyHostToDevice));
    if (c.mask == 4) {
      CHECK_CUDA(cudaMalloc(&dcos, cosT.size() * 4));
      CHECK_CUDA(cudaMalloc(&dsin, sinT.size() * 4));
      CHECK_CUDA(cudaMemcpy(dcos, cosT.data(), cosT.size() * 4, cudaMemcpyHostToDevice));
      CHECK_CUDA(cudaMemcpy(dsin, sinT.data(), sinT.size() * 4, cudaMemcpyHostToDevice));
    }
    CHECK_CUDA(cudaMalloc(&dout, ref.size() * sizeof(T)));
    CHECK_CUDA(cudaMemset(dout, 0xff, ref.size() * sizeof(T))); // NaN poison
  }
  ~Problem() {
    cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dout), cudaFree(dmask);
    cudaFree(dcos), cudaFree(dsin);
  }

  kiln::AttnTensor<KT> qView() const {
    return {(const KT *)dq, (long long)c.Sq * c.Hq * D, D, (long long)c.Hq * D};
  }
  kiln::AttnTensor<KT> kView(const T *p) const {
    return {(const KT *)p, (long long)c.Hkv * c.Sk * D, (long long)c.Sk * D, D};
  }
  kiln::AttnOut<KT> outView() const {
    return {(KT *)dout, (long long)c.Hq * c.Sq * D, (long long)c.Sq * D, D};
  }
  kiln::AttnShape shape() const {
    return {c.Hq, c.Hkv, c.Sq, c.Sk, float(scaleOf(c, D)), c.zeroRows};
  }
  PadMask padMask() const { return {dmask, c.Sk}; }
  WindowMask windowMask() const { return {c.Sk - c.Sq}; }
  kiln::RopeFn<RopeTable, RopeTable> ropeQ() const { return {{dcos, D}, {dsin, D}}; }

  /// Compares the output with the reference and prints one line; true when it passes.
  bool check(const char *kernel, const char *config) const {
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<T> out(ref.size());
    CHECK_CUDA(cudaMemcpy(out.data(), dout, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
    double maxErr = 0, maxRef = 1e-30;
    size_t nanBad = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      float x = fromT<T>(out[i]);
      bool isNan = std::isnan(x);
      if (isNan != bool(refNaN[i])) {
        ++nanBad;
        continue;
      }
      if (!isNan) {
        maxErr = std::max(maxErr, std::fabs(x - ref[i]));
        maxRef = std::max(maxRef, std::fabs(ref[i]));
      }
    }
    double tol =
        std::is_same<T, __half>::value ? 4e-3 : std::is_same<T, float>::value ? 1e-5 : 2e-2;
    bool ok = nanBad == 0 && maxErr / maxRef <= tol;
    std::printf("%s %-4s %-5s %-27s D=%3d B=%d Hq=%d Hkv=%d Sq=%4d Sk=%4d causal=%d mask=%d "
                "zero=%d  rel err %.2e  nan mismatches %zu\n",
                ok ? "PASS" : "FAIL", kernel, typeName<T>(), config, D, c.B, c.Hq, c.Hkv, c.Sq,
                c.Sk, c.causal, c.mask, c.zeroRows, maxErr / maxRef, nanBad);
    return ok;
  }
};

/// Runs one case on attentionTC (f16/bf16) or attentionSimt (fp32); true when it passes.
template <typename T, int D, int MF = (D > 128 ? 1 : 2), int BN = (D > 64 ? 32 : 64)>
bool runCase(const Case &c) {
  using KT = typename KilnType<T>::type;
  if (c.mask >= 3)
    return true; // the window mask and RoPE cases are exercised on the Hopper kernel
  Problem<T> p(c, D);
  const auto aq = p.qView();
  const auto ak = p.kView(p.dk), av = p.kView(p.dv);
  const auto ao = p.outView();
  const auto shape = p.shape();
  const PadMask pm = p.padMask();
  const int B = c.B, Hq = c.Hq, Sq = c.Sq;
  auto launch = [&](auto kernel, int threads, int bm, int smem, auto mask) {
    CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    dim3 grid((Sq + bm - 1) / bm, Hq, B);
    kernel<<<grid, threads, smem>>>(aq, ak, av, mask, ao, shape);
  };
  char config[64];
  if constexpr (std::is_same<T, float>::value) {
    constexpr int W = 8, smem = kiln::attentionSimtSmemBytes<D, D, W>();
    std::snprintf(config, sizeof config, "W=%d", W);
    if (c.mask) {
      auto kern = c.causal ? simtKernel<D, W, true, PadMask> : simtKernel<D, W, false, PadMask>;
      CHECK_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      kern<<<dim3((Sq + W - 1) / W, Hq, B), 32 * W, smem>>>(aq, ak, av, pm, ao, shape);
    } else {
      auto kern = c.causal ? simtKernel<D, W, true, kiln::NoMask>
                           : simtKernel<D, W, false, kiln::NoMask>;
      CHECK_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      kern<<<dim3((Sq + W - 1) / W, Hq, B), 32 * W, smem>>>(aq, ak, av, kiln::NoMask{}, ao,
                                                            shape);
    }
    return p.check("simt", config);
  } else {
    constexpr int W = 4, BM = 16 * MF * W, smem = kiln::attentionTcSmemBytes<D, BM, BN>();
    std::snprintf(config, sizeof config, "MF=%d BN=%d", MF, BN);
    if (c.mask == 2) { // the finite padding mask through the row-invariant path
      using RM = kiln::RowInvariantMask<PadMask>;
      auto kern = c.causal ? tcKernel<KT, D, BN, W, MF, true, RM>
                           : tcKernel<KT, D, BN, W, MF, false, RM>;
      launch(kern, 32 * W, BM, smem, kiln::makeRowInvariantMask(pm));
    } else if (c.mask) {
      auto kern = c.causal ? tcKernel<KT, D, BN, W, MF, true, PadMask>
                           : tcKernel<KT, D, BN, W, MF, false, PadMask>;
      launch(kern, 32 * W, BM, smem, pm);
    } else {
      auto kern = c.causal ? tcKernel<KT, D, BN, W, MF, true, kiln::NoMask>
                           : tcKernel<KT, D, BN, W, MF, false, kiln::NoMask>;
      launch(kern, 32 * W, BM, smem, kiln::NoMask{});
    }
    return p.check("tc", config);
  }
}

template <typename T, int D, int... Cfg> int runAll(const std::vector<Case> &cases) {
  if (!selected(std::is_same<T, float>::value ? "simt" : "tc"))
    return 0;
  int failed = 0;
  for (const Case &c : cases)
    failed += !runCase<T, D, Cfg...>(c);
  return failed;
}

//===----------------------------------------------------------------------===//
// The Hopper kernel
//===----------------------------------------------------------------------===//

/// Tensor map of a [B, H, S, D] operand with element strides (sb, sh, ss) and unit stride along
/// D, as attentionSm90 reads it: rank 4 {D, S, H, B}, box {64, rows, 1, 1}.
template <typename T>
kiln::TensorMap headsMap(const T *ptr, int B, int H, int S, int D, long long sb, long long sh,
                         long long ss, int rows) {
  kiln::TensorMap m;
  makeTensorMap(&m, ptr, std::is_same<T, __nv_bfloat16>::value,
                {uint64_t(D), uint64_t(std::max(S, 1)), uint64_t(H), uint64_t(B)},
                {uint64_t(ss * 2), uint64_t(sh * 2), uint64_t(sb * 2)},
                {64u, uint32_t(rows), 1u, 1u});
  return m;
}

/// SMs of the device (the persistent launches' grid).
int smCount() {
  static int n = [] {
    int device = 0, count = 0;
    CHECK_CUDA(cudaGetDevice(&device));
    CHECK_CUDA(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
  }();
  return n;
}

/// Launches attentionSm90 over (B, Hq, s.Sq): grid mode (one block per query tile, grid
/// (tiles, Hq, B)) or, with `persistent`, min(tiles x Hq x B, SMs) blocks walking the tiles.
template <typename KT, int D, int BM, int BN, int ST, bool PP, typename M,
          typename RQ = kiln::NoRope>
void launchSm90(bool causal, bool persistent, int B, cudaStream_t stream,
                const kiln::TensorMap &tq, const kiln::TensorMap &tk, const kiln::TensorMap &tv,
                const M &mask, const kiln::AttnOut<KT> &o, const kiln::AttnShape &s,
                const RQ &ropeQ = RQ{}) {
  const int tiles = (s.Sq + BM - 1) / BM;
  const dim3 grid = persistent ? dim3(std::min(tiles * s.Hq * B, smCount()), 1, 1)
                               : dim3(tiles, s.Hq, B);
  constexpr int smem = kiln::attentionSm90SmemBytes<D, BM, BN, ST>();
  auto kern = causal ? sm90Kernel<KT, D, BM, BN, ST, true, PP, M, RQ>
                     : sm90Kernel<KT, D, BM, BN, ST, false, PP, M, RQ>;
  static bool attrSet[2] = {false, false};
  if (!attrSet[causal]) {
    CHECK_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    attrSet[causal] = true;
  }
  kern<<<grid, 128 * (BM / 64 + 1), smem, stream>>>(tq, tk, tv, mask, o, s, ropeQ,
                                                    persistent ? B : 0);
}

/// Runs one case on attentionSm90<T, D, BM, BN, ST, causal, PP>, launched one block per query
/// tile ("grid") and persistent ("pers", the same kernel); true when both pass.
template <typename T, int D, int BM, int BN, int ST, bool PP> bool runCaseSm90(const Case &c) {
  using KT = typename KilnType<T>::type;
  char config[64];
  std::snprintf(config, sizeof config, "BM=%d BN=%d ST=%d PP=%d", BM, BN, ST, int(PP));
  if (!gSm90) {
    std::printf("SKIP sm90 %-5s %-27s D=%3d (no sm_90 device)\n", typeName<T>(), config, D);
    return true;
  }
  Problem<T> p(c, D);
  const int B = c.B, Hq = c.Hq, Hkv = c.Hkv, Sq = c.Sq, Sk = c.Sk;
  const auto tq = headsMap(p.dq, B, Hq, Sq, D, (long long)Sq * Hq * D, D, (long long)Hq * D, BM);
  const auto tk = headsMap(p.dk, B, Hkv, Sk, D, (long long)Hkv * Sk * D, (long long)Sk * D, D, BN);
  const auto tv = headsMap(p.dv, B, Hkv, Sk, D, (long long)Hkv * Sk * D, (long long)Sk * D, D, BN);
  const auto o = p.outView();
  const auto s = p.shape();
  bool ok = true;
  for (bool pers : {false, true}) {
    if (pers) // poison again
      CHECK_CUDA(cudaMemset(p.dout, 0xff, p.ref.size() * sizeof(T)));
    std::snprintf(config, sizeof config, "BM=%d BN=%d ST=%d PP=%d %s", BM, BN, ST, int(PP),
                  pers ? "pers" : "grid");
    switch (c.mask) {
    case 0:
      launchSm90<KT, D, BM, BN, ST, PP>(c.causal, pers, B, 0, tq, tk, tv, kiln::NoMask{}, o, s);
      break;
    case 1:
      launchSm90<KT, D, BM, BN, ST, PP>(c.causal, pers, B, 0, tq, tk, tv, p.padMask(), o, s);
      break;
    case 2:
      launchSm90<KT, D, BM, BN, ST, PP>(c.causal, pers, B, 0, tq, tk, tv,
                                        kiln::makeRowInvariantMask(p.padMask()), o, s);
      break;
    case 3:
      launchSm90<KT, D, BM, BN, ST, PP>(c.causal, pers, B, 0, tq, tk, tv, p.windowMask(), o, s);
      break;
    case 5:
      launchSm90<KT, D, BM, BN, ST, PP>(c.causal, pers, B, 0, tq, tk, tv, kiln::NoMask{}, o, s);
      break;
    default:
      launchSm90<KT, D, BM, BN, ST, PP>(c.causal, pers, B, 0, tq, tk, tv, kiln::NoMask{}, o, s,
                                        p.ropeQ());
      break;
    }
    ok &= p.check("sm90", config);
  }
  return ok;
}

template <typename T, int D, int BM, int BN, int ST, bool PP>
int runAllSm90(const std::vector<Case> &cases) {
  if (!selected("sm90"))
    return 0;
  int failed = 0;
  for (const Case &c : cases)
    failed += !runCaseSm90<T, D, BM, BN, ST, PP>(c);
  return failed;
}

//===----------------------------------------------------------------------===//
// Benchmarks
//===----------------------------------------------------------------------===//

/// f16 [B, H, S, D] operands filled with normals (up to 4M distinct values, repeated).
struct BenchBuffers {
  size_t n;
  __half *q, *k, *v, *o;
  BenchBuffers(int B, int H, int S, int D) : n(size_t(B) * H * S * D) {
    CHECK_CUDA(cudaMalloc(&q, n * 2));
    CHECK_CUDA(cudaMalloc(&k, n * 2));
    CHECK_CUDA(cudaMalloc(&v, n * 2));
    CHECK_CUDA(cudaMalloc(&o, n * 2));
    std::vector<__half> h(std::min<size_t>(n, size_t(1) << 22));
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto &x : h) x = __float2half_rn(dist(rng));
    for (__half *dst : {q, k, v})
      for (size_t at = 0; at < n; at += h.size())
        CHECK_CUDA(cudaMemcpy(dst + at, h.data(), std::min(h.size(), n - at) * 2,
                              cudaMemcpyHostToDevice));
  }
  ~BenchBuffers() { cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o); }
};

/// Long rows (--bench-long: up to 35 TFLOP a launch) take 2 launches and 6 replays.
double benchTime(cudaStream_t stream, double work, const std::function<void(cudaStream_t)> &f) {
  return timeGraph(stream, f, work > 1e12 ? 2 : 20, work > 1e12 ? 6 : 20);
}

template <int D, bool C, int W, int MF, int BN>
void benchOne(const char *name, int B, int H, int S, cudaStream_t stream) {
  using KT = kiln::f16;
  constexpr int BM = 16 * MF * W;
  constexpr int smem = kiln::attentionTcSmemBytes<D, BM, BN>();
  BenchBuffers buf(B, H, S, D);
  long long sb = (long long)H * S * D, sh = (long long)S * D;
  kiln::AttnTensor<KT> aq{(const KT *)buf.q, sb, sh, D}, ak{(const KT *)buf.k, sb, sh, D},
      av{(const KT *)buf.v, sb, sh, D};
  kiln::AttnOut<KT> ao{(KT *)buf.o, sb, sh, D};
  kiln::AttnShape shape{H, H, S, S, float(1.0 / std::sqrt(double(D))), false};
  auto kern = tcKernel<KT, D, BN, W, MF, C, kiln::NoMask>;
  CHECK_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  dim3 grid((S + BM - 1) / BM, H, B);
  const double flops = 4.0 * B * H * double(S) * S * D * (C ? 0.5 : 1.0);
  double us = benchTime(stream, flops, [&](cudaStream_t s) {
    kern<<<grid, 32 * W, smem, s>>>(aq, ak, av, kiln::NoMask{}, ao, shape);
  });
  std::printf("attn %s %d %d %d %d %d %.2f %.1f tc-W%d-MF%d-BN%d\n", name, B, H, S, D, int(C), us,
              flops / us * 1e-6, W, MF, BN);
}

template <int D, bool C, int BM, int BN, int ST, bool PP>
void benchSm90(const char *name, int B, int H, int S, cudaStream_t stream,
               bool persistent = false) {
  using KT = kiln::f16;
  BenchBuffers buf(B, H, S, D);
  long long sb = (long long)H * S * D, sh = (long long)S * D;
  const auto tq = headsMap(buf.q, B, H, S, D, sb, sh, D, BM);
  const auto tk = headsMap(buf.k, B, H, S, D, sb, sh, D, BN);
  const auto tv = headsMap(buf.v, B, H, S, D, sb, sh, D, BN);
  kiln::AttnOut<KT> ao{(KT *)buf.o, sb, sh, D};
  kiln::AttnShape shape{H, H, S, S, float(1.0 / std::sqrt(double(D))), false};
  const double flops = 4.0 * B * H * double(S) * S * D * (C ? 0.5 : 1.0);
  double us = benchTime(stream, flops, [&](cudaStream_t s) {
    launchSm90<KT, D, BM, BN, ST, PP>(C, persistent, B, s, tq, tk, tv, kiln::NoMask{}, ao,
                                      shape);
  });
  std::printf("attn %s %d %d %d %d %d %.2f %.1f sm90-BM%d-BN%d-ST%d-PP%d%s\n", name, B, H, S, D,
              int(C), us, flops / us * 1e-6, BM, BN, ST, int(PP), persistent ? "-pers" : "");
}

/// Every configuration the code generator may choose, for one shape.
template <int D, bool C> void benchShape(const char *name, int B, int H, int S, cudaStream_t st) {
  if (!shapeSelected(name))
    return;
  if (selected("tc")) {
    benchOne<D, C, 4, 1, 64>(name, B, H, S, st);
    benchOne<D, C, 2, 1, 64>(name, B, H, S, st);
    benchOne<D, C, 4, 2, 32>(name, B, H, S, st);
    if constexpr (D <= 64)
      benchOne<D, C, 4, 2, 64>(name, B, H, S, st);
    benchOne<D, C, 8, 1, 64>(name, B, H, S, st);
  }
  if (selected("sm90") && gSm90) {
    if constexpr (D <= 64) {
      benchSm90<D, C, 128, 128, 2, true>(name, B, H, S, st);
      benchSm90<D, C, 128, 128, 2, true>(name, B, H, S, st, true);
      benchSm90<D, C, 128, 128, 3, true>(name, B, H, S, st);
      benchSm90<D, C, 192, 128, 2, false>(name, B, H, S, st);
      benchSm90<D, C, 128, 64, 2, true>(name, B, H, S, st);
    } else {
      benchSm90<D, C, 128, 128, 2, true>(name, B, H, S, st);
      benchSm90<D, C, 128, 128, 2, true>(name, B, H, S, st, true);
      benchSm90<D, C, 128, 128, 2, false>(name, B, H, S, st);
      benchSm90<D, C, 128, 64, 3, true>(name, B, H, S, st);
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  bool bench = false, benchLong = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--bench") == 0)
      bench = true;
    else if (std::strcmp(argv[i], "--bench-long") == 0)
      benchLong = true;
    else if (std::strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
      gFilter = argv[++i];
    else if (std::strcmp(argv[i], "--shape") == 0 && i + 1 < argc)
      gShape = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--bench | --bench-long [--shape NAME]] [--filter tc|simt|sm90]\n",
                   argv[0]);
      return 2;
    }
  }
  {
    cudaDeviceProp prop;
    int device = 0;
    CHECK_CUDA(cudaGetDevice(&device));
    CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
    std::printf("# device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount);
#if defined(KILN_TEST_SM90A)
    gSm90 = prop.major == 9 && prop.minor == 0;
#endif
    if (!gSm90)
      std::printf("# the Hopper kernel's cases are skipped (needs an sm_90a build on sm_90)\n");
  }
  if (benchLong) {
    // Long prompts (issue "Long-context prefill"): batch 1, 4 and 8 at 4k, 8k and 16k tokens,
    // 32 heads of 128, causal and not.
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    std::printf("# kernel name B H S D causal us TFLOP/s config\n");
    for (int B : {1, 4, 8})
      for (int S : {4096, 8192, 16384}) {
        std::string name = "b" + std::to_string(B) + "h32s" + std::to_string(S) + "d128";
        benchShape<128, true>((name + "c").c_str(), B, 32, S, stream);
        benchShape<128, false>(name.c_str(), B, 32, S, stream);
      }
    return 0;
  }
  if (bench) {
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    std::printf("# kernel name B H S D causal us TFLOP/s config\n");
    benchShape<128, true>("b4h32s2048d128c", 4, 32, 2048, stream);
    benchShape<128, false>("b4h32s2048d128", 4, 32, 2048, stream);
    benchShape<64, true>("gpt2-8x512", 8, 12, 512, stream);
    benchShape<64, false>("bert-8x512", 8, 12, 512, stream);
    benchShape<64, true>("gpt2-1x128", 1, 12, 128, stream);
    benchShape<64, false>("bert-1x128", 1, 12, 128, stream);
    benchShape<64, true>("llama-4x512", 4, 32, 512, stream);
    benchShape<64, true>("llama-1x128", 1, 32, 128, stream);
    benchShape<64, true>("llama-1x2048", 1, 32, 2048, stream); // a 2048-token prefill chunk
    return 0;
  }
  std::vector<Case> cases = {
      {1, 4, 4, 16, 16, true, 0, false},   {2, 4, 4, 77, 77, true, 0, false},
      {2, 8, 2, 130, 130, true, 0, false}, {2, 8, 1, 64, 200, false, 0, false},
      {3, 4, 4, 100, 100, false, 1, false}, {3, 4, 4, 100, 100, false, 1, true},
      {2, 4, 2, 33, 70, true, 1, false},   {2, 4, 4, 50, 50, false, 2, false},
      {1, 8, 2, 1, 300, true, 0, false},   {1, 4, 4, 200, 200, true, 2, false},
  };
  int failed = 0;
  failed += runAll<__half, 64>(cases);
  failed += runAll<__half, 64, 1, 64>(cases);
  failed += runAll<__half, 128>(cases);
  failed += runAll<__half, 128, 1, 64>(cases);
  failed += runAll<__half, 80>(cases);
  failed += runAll<__half, 96>(cases);
  failed += runAll<__half, 32>(cases);
  failed += runAll<__nv_bfloat16, 64>(cases);
  failed += runAll<__nv_bfloat16, 128>(cases);
  failed += runAll<float, 64>(cases);
  failed += runAll<float, 80>(cases);
  failed += runAll<float, 128>(cases);

  // The Hopper kernel: the cases above, longer rows (several key tiles, odd lengths), Sq > Sk
  // causal (rows that see no key), the per-element window mask with and without causal.
  std::vector<Case> sm90Cases = cases;
  const std::vector<Case> more = {
      {2, 4, 4, 1000, 1000, true, 0, false},  {1, 4, 4, 513, 513, false, 0, false},
      {2, 8, 2, 300, 700, true, 0, false},    {1, 4, 4, 300, 100, true, 0, false},
      {1, 4, 4, 300, 100, true, 0, true},     {2, 4, 4, 333, 333, true, 3, false},
      {2, 8, 2, 257, 400, false, 3, false},   {3, 4, 4, 450, 450, true, 1, false},
      {2, 4, 4, 384, 384, false, 2, false},   {1, 4, 1, 129, 1031, false, 0, false},
      {2, 8, 2, 200, 200, true, 4, false},    {1, 4, 4, 300, 300, false, 4, false},
      {2, 8, 2, 300, 300, true, 5, false},    {1, 4, 4, 200, 330, false, 5, false},
  };
  sm90Cases.insert(sm90Cases.end(), more.begin(), more.end());
  failed += runAllSm90<__half, 64, 128, 128, 2, true>(sm90Cases);
  failed += runAllSm90<__half, 64, 128, 128, 2, false>(sm90Cases);
  failed += runAllSm90<__half, 64, 192, 128, 2, false>(sm90Cases);
  failed += runAllSm90<__half, 128, 128, 128, 2, true>(sm90Cases);
  failed += runAllSm90<__half, 128, 128, 64, 3, false>(sm90Cases);
  failed += runAllSm90<__nv_bfloat16, 64, 128, 128, 2, true>(sm90Cases);
  failed += runAllSm90<__nv_bfloat16, 128, 128, 128, 2, true>(sm90Cases);
  failed += runAllSm90<__half, 80, 128, 128, 2, true>(sm90Cases);
  failed += runAllSm90<__half, 96, 128, 128, 2, true>(sm90Cases);
  failed += runAllSm90<__half, 32, 128, 128, 2, true>(sm90Cases);
  failed += runAllSm90<__half, 256, 128, 64, 2, true>(sm90Cases);
  std::printf("%s: %d failed\n", failed ? "FAILED" : "OK", failed);
  return failed ? 1 : 0;
}
