// attention_test.cu - GPU test and benchmark of kiln::attentionTC / kiln::attentionSimt
// (compiler/codegen/cuda/attention.cuh).
//
// Correctness (default): f16 and bf16 through the tensor-core kernel for head dims 64, 80, 96,
// 128 (and 32), and fp32 through the CUDA-core kernel; causal and not; no mask, a padding mask
// [B, 1, 1, Sk] of -inf (one batch fully masked: NaN rows, or zeros with zeroMaskedRows) and a
// finite "min" mask (uniform softmax over masked keys; the tensor-core kernel reads this one
// through kiln::RowInvariantMask, once per key column); GQA (Hq 8 over Hkv 2) and MQA (Hkv 1);
// Sq != Sk (decode Sq = 1, Sq < Sk) and lengths that are not tile multiples. Q is read from a
// [B, Sq, Hq, D] buffer (as from a QKV projection), K and V from [B, Hkv, Sk, D], the output
// written [B, Hq, Sq, D] into a NaN-poisoned buffer. Reference: fp64 on the host from the stored
// (rounded) inputs. A case fails when max|out - ref| / max|ref| exceeds 4e-3 (f16), 2e-2 (bf16)
// or 1e-5 (fp32), when a NaN is missing or extra, or an unwritten element remains.
//
// Benchmark (--bench): f16, [B, H, S, D] contiguous, inside a CUDA graph of 20 launches; prints
// one line per shape "attn <name> B H S D causal us TFLOP/s" (causal FLOPs counted as half).
//
// Build and run: test/gpu/build_attention_test.sh [OUT]; OUT [--bench | --bench-long] (long:
// batch 1/4/8 x 4k/8k/16k tokens, h32 d128, 2 launches per graph and 6 replays).
#include "kiln/attention.cuh"

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
#include <vector>

using namespace kiln_test;

namespace {

/// Padding mask functor: mask[b * Sk + j] (additive, fp32 values), broadcast over heads and rows.
struct PadMask {
  const float *m;
  int Sk;
  __device__ float operator()(long long b, long long, long long, long long j) const {
    return m[b * Sk + j];
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

template <typename T> struct KilnType;
template <> struct KilnType<__half> { using type = kiln::f16; };
template <> struct KilnType<__nv_bfloat16> { using type = kiln::bf16; };
template <> struct KilnType<float> { using type = float; };

struct Case {
  int B, Hq, Hkv, Sq, Sk;
  bool causal;
  int mask; // 0 none, 1 -inf padding (batch 1 fully masked when B > 1), 2 finite min padding
  bool zeroRows;
};

/// Runs one case; returns true when it passes.
template <typename T, int D, int MF = (D > 128 ? 1 : 2), int BN = (D > 64 ? 32 : 64)>
bool runCase(const Case &c) {
  using KT = typename KilnType<T>::type;
  const int B = c.B, Hq = c.Hq, Hkv = c.Hkv, Sq = c.Sq, Sk = c.Sk;
  std::mt19937 rng(B * 131 + Hq * 31 + Sq * 7 + Sk + D + c.mask * 3 + c.causal);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> q(size_t(B) * Sq * Hq * D), k(size_t(B) * Hkv * Sk * D), v(k.size());
  for (auto &x : q) x = roundTo<T>(dist(rng));
  for (auto &x : k) x = roundTo<T>(dist(rng));
  for (auto &x : v) x = roundTo<T>(dist(rng));
  std::vector<float> mask(size_t(B) * Sk, 0.0f);
  if (c.mask)
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < Sk; ++j) {
        bool masked = (b == 1) || (j % 5 == 3);
        if (masked)
          mask[b * Sk + j] = c.mask == 1 ? -INFINITY : -3.4028234663852886e38f;
      }
  const double scale = 1.0 / std::sqrt(double(D));
  // Reference (fp64), output [B, Hq, Sq, D].
  std::vector<double> ref(size_t(B) * Hq * Sq * D);
  std::vector<char> refNaN(ref.size(), 0);
  const int rep = Hq / Hkv, off = Sk - Sq;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hq; ++h)
      for (int i = 0; i < Sq; ++i) {
        std::vector<double> s(Sk);
        double mx = -INFINITY;
        for (int j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(q[((size_t(b) * Sq + i) * Hq + h) * D + d]) *
                   k[((size_t(b) * Hkv + h / rep) * Sk + j) * D + d];
          double x = float(float(dot * scale) + mask[b * Sk + j]); // the kernel adds in fp32
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
  // Device buffers.
  auto upload = [](const std::vector<float> &h) {
    std::vector<T> t(h.size());
    for (size_t i = 0; i < h.size(); ++i) t[i] = toT<T>(h[i]);
    T *d;
    CHECK_CUDA(cudaMalloc(&d, t.size() * sizeof(T)));
    CHECK_CUDA(cudaMemcpy(d, t.data(), t.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
  };
  T *dq = upload(q), *dk = upload(k), *dv = upload(v), *dout;
  float *dmask;
  CHECK_CUDA(cudaMalloc(&dmask, mask.size() * 4));
  CHECK_CUDA(cudaMemcpy(dmask, mask.data(), mask.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&dout, ref.size() * sizeof(T)));
  CHECK_CUDA(cudaMemset(dout, 0xff, ref.size() * sizeof(T))); // NaN poison
  kiln::AttnTensor<KT> aq{(const KT *)dq, (long long)Sq * Hq * D, D, (long long)Hq * D};
  kiln::AttnTensor<KT> ak{(const KT *)dk, (long long)Hkv * Sk * D, (long long)Sk * D, D};
  kiln::AttnTensor<KT> av{(const KT *)dv, (long long)Hkv * Sk * D, (long long)Sk * D, D};
  kiln::AttnOut<KT> ao{(KT *)dout, (long long)Hq * Sq * D, (long long)Sq * D, D};
  kiln::AttnShape shape{Hq, Hkv, Sq, Sk, float(scale), c.zeroRows};
  PadMask pm{dmask, Sk};
  auto launch = [&](auto kernel, int threads, int bm, int smem, auto mask) {
    CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    dim3 grid((Sq + bm - 1) / bm, Hq, B);
    kernel<<<grid, threads, smem>>>(aq, ak, av, mask, ao, shape);
  };
  if constexpr (std::is_same<T, float>::value) {
    constexpr int W = 8, smem = kiln::attentionSimtSmemBytes<D, D, W>();
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
  } else {
    constexpr int W = 4, BM = 16 * MF * W, smem = kiln::attentionTcSmemBytes<D, BM, BN>();
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
  }
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
  double tol = std::is_same<T, __half>::value ? 4e-3 : std::is_same<T, float>::value ? 1e-5 : 2e-2;
  bool ok = nanBad == 0 && maxErr / maxRef <= tol;
  std::printf("%s %-5s MF=%d BN=%2d D=%3d B=%d Hq=%d Hkv=%d Sq=%4d Sk=%4d causal=%d mask=%d zero=%d  rel err "
              "%.2e  nan mismatches %zu\n",
              ok ? "PASS" : "FAIL",
              std::is_same<T, __half>::value ? "f16" : std::is_same<T, float>::value ? "fp32" : "bf16",
              MF, BN, D, B, Hq, Hkv, Sq, Sk, c.causal, c.mask, c.zeroRows, maxErr / maxRef, nanBad);
  cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dout), cudaFree(dmask);
  return ok;
}

template <typename T, int D, int... Cfg> int runAll(const std::vector<Case> &cases) {
  int failed = 0;
  for (const Case &c : cases)
    failed += !runCase<T, D, Cfg...>(c);
  return failed;
}

template <int D, bool C, int W, int MF, int BN>
void benchOne(const char *name, int B, int H, int S, cudaStream_t stream) {
  // Long rows (--bench-long: up to 35 TFLOP a launch) take 2 launches and 6 replays.
  const double work = 4.0 * B * H * double(S) * S * D * (C ? 0.5 : 1.0);
  const int launches = work > 1e12 ? 2 : 20, replays = work > 1e12 ? 6 : 20;
  using KT = kiln::f16;
  constexpr int BM = 16 * MF * W;
  constexpr int smem = kiln::attentionTcSmemBytes<D, BM, BN>();
  size_t n = size_t(B) * H * S * D;
  __half *q, *k, *v, *o;
  CHECK_CUDA(cudaMalloc(&q, n * 2));
  CHECK_CUDA(cudaMalloc(&k, n * 2));
  CHECK_CUDA(cudaMalloc(&v, n * 2));
  CHECK_CUDA(cudaMalloc(&o, n * 2));
  // Up to 4M normals, repeated to fill the long rows' operands (up to 512M elements each).
  std::vector<__half> h(std::min<size_t>(n, size_t(1) << 22));
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto &x : h) x = __float2half_rn(dist(rng));
  for (__half *dst : {q, k, v})
    for (size_t at = 0; at < n; at += h.size())
      CHECK_CUDA(cudaMemcpy(dst + at, h.data(), std::min(h.size(), n - at) * 2,
                            cudaMemcpyHostToDevice));
  long long sb = (long long)H * S * D, sh = (long long)S * D;
  kiln::AttnTensor<KT> aq{(const KT *)q, sb, sh, D}, ak{(const KT *)k, sb, sh, D},
      av{(const KT *)v, sb, sh, D};
  kiln::AttnOut<KT> ao{(KT *)o, sb, sh, D};
  kiln::AttnShape shape{H, H, S, S, float(1.0 / std::sqrt(double(D))), false};
  auto kern = tcKernel<KT, D, BN, W, MF, C, kiln::NoMask>;
  CHECK_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  dim3 grid((S + BM - 1) / BM, H, B);
  double us = timeGraph(
      stream,
      [&](cudaStream_t s) { kern<<<grid, 32 * W, smem, s>>>(aq, ak, av, kiln::NoMask{}, ao, shape); },
      launches, replays);
  double flops = 4.0 * B * H * double(S) * S * D * (C ? 0.5 : 1.0);
  std::printf("attn %s %d %d %d %d %d %.2f %.1f W%d-MF%d-BN%d\n", name, B, H, S, D, int(C), us,
              flops / us * 1e-6, W, MF, BN);
  cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o);
}

/// Every configuration the code generator may choose, for one shape.
template <int D, bool C> void benchShape(const char *name, int B, int H, int S, cudaStream_t st) {
  benchOne<D, C, 4, 1, 64>(name, B, H, S, st);
  benchOne<D, C, 2, 1, 64>(name, B, H, S, st);
  benchOne<D, C, 4, 2, 32>(name, B, H, S, st);
  if constexpr (D <= 64)
    benchOne<D, C, 4, 2, 64>(name, B, H, S, st);
  benchOne<D, C, 8, 1, 64>(name, B, H, S, st);
}

} // namespace

int main(int argc, char **argv) {
  bool bench = argc > 1 && std::strcmp(argv[1], "--bench") == 0;
  if (argc > 1 && std::strcmp(argv[1], "--bench-long") == 0) {
    // Long prompts (issue "Long-context prefill"): batch 1, 4 and 8 at 4k, 8k and 16k tokens,
    // 32 heads of 128, causal and not.
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    std::printf("# kernel name B H S D causal us TFLOP/s\n");
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
    std::printf("# kernel name B H S D causal us TFLOP/s\n");
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
  std::printf("%s: %d failed\n", failed ? "FAILED" : "OK", failed);
  return failed ? 1 : 0;
}
