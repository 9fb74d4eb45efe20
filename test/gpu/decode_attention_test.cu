// decode_attention_test.cu - GPU test and timing of kiln::kvCacheAppend,
// kiln::decodeAttentionPartial and kiln::decodeAttentionReduce
// (compiler/codegen/cuda/decode_attention.cuh): attention of a generation step over a paged KV
// cache with split-KV.
//
// Correctness (every run): f16, bf16 and fp32 at head dims 64, 128 (every combination below) and
// 96 / 80 / 256 (fewer); Hq / Hkv = 4/4, 8/2, 32/8 (and MQA 8/1, GPT-2's 12/12); block sizes 16,
// 64, 256, a contiguous cache (one block per sequence, blockSize = capacity, not a power of two),
// and 1, 7, 100; q_len 1 and 5 (and 3, 16, 100, 256; the prefill path, prefillAttentionPaged,
// at 33 to 300 for f16 / bf16, and in sm_90a builds the Hopper prefill path,
// prefillAttentionSm90Paged, at 33 to 2048 with block sizes 8 to 256 and contiguous caches, grid
// and persistent launches); one batch of sequences with cached lengths 0, 1, 17,
// 255, 1000 and 4096 per launch; the split slots as recommendedMaxSplits gives them for the
// device's SM count, and 1, 3 and 7. Each case:
//  1. fills both pools with a NaN sentinel, writes the cached tokens through a block table of
//     shuffled pool blocks (spare pool blocks stay unreferenced), runs kvCacheAppend with
//     k_new / v_new in bshd or bhsd strides, and compares the whole pools bit for bit with the
//     expected ones: the new rows in exactly their slots, every other slot unchanged (a row past
//     the capacity, in the overflow case, is not written);
//  2. runs the partial and reduce kernels with the output and the workspace NaN-poisoned (plus a
//     guard after each that must stay untouched) and compares with an fp64 host reference built
//     from the logical sequences, not the pools. A case fails when max|out - ref| / max|ref|
//     exceeds 1e-4 (fp32) or 1e-2 (f16, bf16), or any output is NaN.
// One PASS/FAIL line per case, then a summary; exit 1 on any failure, 77 without a GPU.
//
// Timing (after the cases; --timing runs only it, --no-timing skips it; not asserted): f16,
// D = 128, Hq = 32, Hkv = 8 (Llama-3-8B's attention), blockSize 16, q_len 1. (a) valid length
// 1024 with caches of capacity 2048 and 8192 (the time should not change); (b) batch 1 and 8 at
// valid length 4096: GB/s = bytes of K and V read / time. Each launch of the CUDA graph (20
// launches, median of 20 replays; gpu_test_util.h) uses the next of several layers' caches, so
// the K/V working set is at least 4x the L2 and the numbers are HBM numbers, as in a real model.
// (d) sm_90a builds: prefill chunks (the 0.8B Llama's 2048-token chunk, a 512-token chunk after
// 1536 cached, batch 4, D = 128) on prefillAttentionPaged against the Hopper kernel, grid and
// persistent, in us and TFLOP/s.
//
// Build and run: test/gpu/build_decode_attention_test.sh [OUT]; OUT [--timing | --no-timing |
// --sm90]. --sm90: the Hopper prefill path's cases and its timings only (sm_90a builds).
#include "kiln/decode_attention.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace kiln_test;

namespace {

template <typename T, int D>
__global__ void __launch_bounds__(kiln::decode::kAppendThreads)
    appendKernel(kiln::AttnTensor<T> kNew, kiln::AttnTensor<T> vNew, kiln::PagedKvCache<T> cache,
                 kiln::DecodeShape shape) {
  kiln::kvCacheAppend<T, D>(kNew, vNew, cache, shape);
}

template <typename T, int D>
__global__ void __launch_bounds__(kiln::decode::kThreads)
    partialKernel(kiln::AttnTensor<T> q, kiln::PagedKvCache<T> cache, kiln::AttnOut<T> out,
                  float *workspace, kiln::DecodeShape shape) {
  extern __shared__ __align__(16) char smem[];
  kiln::decodeAttentionPartial<T, D>(q, cache, out, workspace, shape, smem);
}

/// The one-launch split-KV kernel (CL split slots per KV group as one thread-block cluster).
template <typename T, int D, int CL>
__global__ void __launch_bounds__(kiln::decode::kThreads) __cluster_dims__(1, 1, CL)
    clusterKernel(kiln::AttnTensor<T> q, kiln::PagedKvCache<T> cache, kiln::AttnOut<T> out,
                  kiln::DecodeShape shape) {
  extern __shared__ __align__(16) char smem[];
  kiln::decodeAttentionPartial<T, D, CL>(q, cache, out, nullptr, shape, smem);
}

/// The partial kernel with this step's keys and values appended by its own blocks
/// (kiln-fuse-kv-append's form: no appendKernel launch before it).
template <typename T, int D>
__global__ void __launch_bounds__(kiln::decode::kThreads)
    partialAppendKernel(kiln::AttnTensor<T> q, kiln::PagedKvCache<T> cache, kiln::AttnOut<T> out,
                        float *workspace, kiln::DecodeShape shape, kiln::AttnTensor<T> kNew,
                        kiln::AttnTensor<T> vNew) {
  extern __shared__ __align__(16) char smem[];
  kiln::decodeAttentionPartial<T, D>(q, cache, out, workspace, shape, smem, kNew, vNew);
}

/// The cluster kernel with the fused append.
template <typename T, int D, int CL>
__global__ void __launch_bounds__(kiln::decode::kThreads) __cluster_dims__(1, 1, CL)
    clusterAppendKernel(kiln::AttnTensor<T> q, kiln::PagedKvCache<T> cache, kiln::AttnOut<T> out,
                        kiln::DecodeShape shape, kiln::AttnTensor<T> kNew,
                        kiln::AttnTensor<T> vNew) {
  extern __shared__ __align__(16) char smem[];
  kiln::decodeAttentionPartial<T, D, CL>(q, cache, out, nullptr, shape, smem, kNew, vNew);
}

/// The grid-dependency wait of the pre-wait kernels below (what kiln::gridDependencySync does
/// for a generated kernel).
struct PdlWait {
  __device__ __forceinline__ void operator()() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  }
};

/// The cluster kernels with their loads before the grid-dependency wait (`#kiln.split_kv<...,
/// preload = true>`), launched with programmatic stream serialization after producerKernel.
template <typename T, int D, int CL>
__global__ void __launch_bounds__(kiln::decode::kThreads) __cluster_dims__(1, 1, CL)
    clusterPreKernel(kiln::AttnTensor<T> q, kiln::PagedKvCache<T> cache, kiln::AttnOut<T> out,
                     kiln::DecodeShape shape) {
  extern __shared__ __align__(16) char smem[];
  kiln::decodeAttentionPartial<T, D, CL>(q, cache, out, nullptr, shape, smem,
                                         kiln::decode::NoAppend(), kiln::decode::NoAppend(),
                                         PdlWait());
}
/// ELEMFN: Q and the new keys and values as element functions (kiln::makeElemFn, what a
/// generated step passes when the rotary is fused into the kernel: element loads, plain shared
/// stores for Q) reading the same views.
template <typename T, int D, int CL, bool ELEMFN = false>
__global__ void __launch_bounds__(kiln::decode::kThreads) __cluster_dims__(1, 1, CL)
    clusterAppendPreKernel(kiln::AttnTensor<T> q, kiln::PagedKvCache<T> cache,
                           kiln::AttnOut<T> out, kiln::DecodeShape shape,
                           kiln::AttnTensor<T> kNew, kiln::AttnTensor<T> vNew) {
  extern __shared__ __align__(16) char smem[];
  if constexpr (ELEMFN) {
    auto elem = [](const kiln::AttnTensor<T> &t) {
      return kiln::makeElemFn([t](long long b, long long h, long long i, long long d) -> float {
        return kiln::ld(t.ptr[b * t.sb + h * t.sh + i * t.ss + d]);
      });
    };
    kiln::decodeAttentionPartial<T, D, CL>(elem(q), cache, out, nullptr, shape, smem, elem(kNew),
                                           elem(vNew), PdlWait());
  } else {
    kiln::decodeAttentionPartial<T, D, CL>(q, cache, out, nullptr, shape, smem, kNew, vNew,
                                           PdlWait());
  }
}

/// The previous launch of the pre-wait cases: lets the attention start at once
/// (griddepcontrol.launch_dependents), spins about `spin` cycles, then writes what the
/// attention may read only after its wait: Q, the new keys and values (copied from staging
/// buffers over poisoned ones) and, without the fused append, their rows in the pools
/// (kvCacheAppend).
template <typename T, int D>
__global__ void __launch_bounds__(kiln::decode::kAppendThreads)
    producerKernel(T *q, const T *qSrc, long long qElems, T *kNew, T *vNew, const T *kSrc,
                   const T *vSrc, long long kvElems, bool append, kiln::AttnTensor<T> kView,
                   kiln::AttnTensor<T> vView, kiln::PagedKvCache<T> cache,
                   kiln::DecodeShape shape, long long spin) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
  for (long long e = threadIdx.x; e < qElems; e += blockDim.x)
    q[e] = qSrc[e];
  for (long long e = threadIdx.x; e < kvElems; e += blockDim.x)
    kNew[e] = kSrc[e], vNew[e] = vSrc[e];
  if (append) {
    __syncthreads();
    kiln::kvCacheAppend<T, D>(kView, vView, cache, shape);
  }
}

template <typename T, int D>
__global__ void __launch_bounds__(kiln::decode::kThreads)
    reduceKernel(kiln::PagedKvCache<T> cache, const float *workspace, kiln::AttnOut<T> out,
                 kiln::DecodeShape shape) {
  kiln::decodeAttentionReduce<T, D>(cache, workspace, out, shape);
}

/// The attentionTC tile of the prefill path per head dim (kiln-select-tiles' first choices):
/// 64 query rows x 64 keys up to D = 64, 128 rows x 32 keys up to 128, 64 x 32 above.
template <int D> struct PrefillTile {
  static constexpr int kWarps = 4, kMf = D > 64 && D <= 128 ? 2 : 1, kBn = D <= 64 ? 64 : 32;
  static constexpr int kBm = 16 * kMf * kWarps;
};

template <typename T, int D>
__global__ void __launch_bounds__(32 * PrefillTile<D>::kWarps)
    prefillKernel(kiln::AttnTensor<T> q, kiln::PagedKvCache<T> cache, kiln::AttnOut<T> out,
                  kiln::DecodeShape shape) {
  extern __shared__ __align__(128) char smem[];
  using P = PrefillTile<D>;
  kiln::prefillAttentionPaged<T, D, P::kBn, P::kWarps, P::kMf>(q, cache, out, shape, smem);
}

/// The Hopper prefill path (prefillAttentionSm90Paged): kiln-select-tiles' choice, 128 query
/// rows, 128 keys per tile up to D = 128, else 64; two stages; ping-pong.
template <int D> struct Sm90Tile {
  static constexpr int kBm = 128, kBn = D <= 128 ? 128 : 64, kStages = 2;
  static constexpr int kThreads = 128 * (kBm / 64 + 1);
};

/// A rotary table [positions, D] in global memory, read as the generated kernels read theirs
/// (kiln::RopeFn's cos / sin: (batch, head, position, d) -> float).
template <typename T> struct RopeTable {
  const T *t;
  int d;
  __device__ float operator()(int, int, int pos, int i) const {
    return kiln::ld(t[size_t(pos) * d + i]);
  }
};

template <typename T, int D, typename RQ>
__global__ void __launch_bounds__(Sm90Tile<D>::kThreads, 1)
    prefillSm90Kernel(const __grid_constant__ kiln::TensorMap tq,
                      const __grid_constant__ kiln::TensorMap tk,
                      const __grid_constant__ kiln::TensorMap tv, kiln::PagedKvCache<T> cache,
                      kiln::AttnOut<T> out, kiln::DecodeShape shape, bool persistent, RQ ropeQ) {
  extern __shared__ __align__(128) char smem[];
  using P = Sm90Tile<D>;
  kiln::prefillAttentionSm90Paged<T, D, P::kBm, P::kBn, P::kStages, true>(
      &tq, &tk, &tv, cache, out, shape, smem, ropeQ, persistent);
}

template <typename T> struct KilnType;
template <> struct KilnType<__half> { using type = kiln::f16; };
template <> struct KilnType<__nv_bfloat16> { using type = kiln::bf16; };
template <> struct KilnType<float> { using type = float; };

template <typename T> const char *typeName() {
  return std::is_same<T, __half>::value ? "f16" : std::is_same<T, float>::value ? "fp32" : "bf16";
}

/// A NaN with a payload no computation produces, marking pool slots nobody may write.
template <typename T> T sentinel();
template <> __half sentinel<__half>() {
  __half_raw r;
  r.x = 0x7d5a;
  return __half(r);
}
template <> __nv_bfloat16 sentinel<__nv_bfloat16>() {
  __nv_bfloat16_raw r;
  r.x = 0x7f9a;
  return __nv_bfloat16(r);
}
template <> float sentinel<float>() {
  const uint32_t bits = 0x7fa5a5a5u;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Shared memory per SM of the device (the compiler passes #kiln.target's smem_per_sm), and the
/// most one block may opt in to.
static long long gSmemPerSm = 0, gSmemOptin = 0;

/// Launches of the three kernels for one storage type and head dim (as a generated launcher
/// would make them, with the sizes from kiln::decode).
template <typename KT, int D> struct Launch {
  static constexpr int kElem = int(sizeof(KT));

  /// Raises the partial kernel's dynamic shared-memory limit (once, before any graph capture).
  static void prepare() {
    const long long most = kiln::decode::smemBytes(kElem, D, kiln::decode::rowsPerBlock(kElem));
    CHECK_CUDA(cudaFuncSetAttribute(partialKernel<KT, D>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, int(most)));
    // The cluster kernels: as much as the device allows (kiln-select-tiles plans no cluster
    // whose shared memory passes the target's limit; runCase skips such cases).
    const long long cl = std::min<long long>(
        kiln::decode::smemBytes(kElem, D, kiln::decode::rowsPerBlock(kElem), true), gSmemOptin);
    for (auto f : {clusterKernel<KT, D, 2>, clusterKernel<KT, D, 3>, clusterKernel<KT, D, 4>,
                   clusterKernel<KT, D, 5>, clusterKernel<KT, D, 6>, clusterKernel<KT, D, 7>,
                   clusterKernel<KT, D, 8>})
      CHECK_CUDA(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(cl)));
    CHECK_CUDA(cudaFuncSetAttribute(partialAppendKernel<KT, D>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, int(most)));
    for (auto f : {clusterAppendKernel<KT, D, 2>, clusterAppendKernel<KT, D, 5>,
                   clusterAppendKernel<KT, D, 8>, clusterAppendPreKernel<KT, D, 2>,
                   clusterAppendPreKernel<KT, D, 5>, clusterAppendPreKernel<KT, D, 8>,
                   clusterAppendPreKernel<KT, D, 2, true>, clusterAppendPreKernel<KT, D, 5, true>,
                   clusterAppendPreKernel<KT, D, 8, true>})
      CHECK_CUDA(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(cl)));
    for (auto f : {clusterPreKernel<KT, D, 2>, clusterPreKernel<KT, D, 5>,
                   clusterPreKernel<KT, D, 8>})
      CHECK_CUDA(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(cl)));
  }
  /// The pre-wait forms (2, 5 or 8 slots, with or without the fused append): producerKernel,
  /// then the cluster kernel launched with programmatic stream serialization, so that its
  /// loads before the wait overlap the producer's spin and would read the poisoned Q, new
  /// keys and values (and pool rows) if they were taken before the wait.
  static void attentionPreWait(KT *q, const KT *qSrc, long long qElems, KT *kNew, KT *vNew,
                               const KT *kSrc, const KT *vSrc, long long kvElems,
                               const kiln::AttnTensor<KT> &aq, const kiln::AttnTensor<KT> &ak,
                               const kiln::AttnTensor<KT> &av, const kiln::AttnTensor<KT> &skv,
                               const kiln::AttnTensor<KT> &svv,
                               const kiln::PagedKvCache<KT> &cache, const kiln::AttnOut<KT> &out,
                               const kiln::DecodeShape &s, bool fused, bool elemFn,
                               cudaStream_t stream) {
    // The producer appends from the staging views (skv, svv), not from what it just wrote.
    producerKernel<KT, D><<<1, kiln::decode::kAppendThreads, 0, stream>>>(
        q, qSrc, qElems, kNew, vNew, kSrc, vSrc, kvElems, !fused, skv, svv, cache, s, 200000);
    const int groupRows = s.qHeads / s.kvHeads * s.qLen;
    const kiln::decode::Grid pg =
        kiln::decode::partialGrid(s.batch, s.qHeads, s.kvHeads, s.qLen, s.maxSplits, kElem);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(pg.x, pg.y, pg.z);
    cfg.blockDim = dim3(kiln::decode::kThreads);
    cfg.dynamicSmemBytes = size_t(kiln::decode::smemBytes(kElem, D, groupRows, true));
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr, cfg.numAttrs = 1;
#define KILN_PRE_CASE(CL)                                                                        \
  case CL:                                                                                       \
    if (fused && elemFn)                                                                         \
      CHECK_CUDA(cudaLaunchKernelEx(&cfg, clusterAppendPreKernel<KT, D, CL, true>, aq, cache,   \
                                    out, s, ak, av));                                            \
    else if (fused)                                                                              \
      CHECK_CUDA(cudaLaunchKernelEx(&cfg, clusterAppendPreKernel<KT, D, CL>, aq, cache, out, s, \
                                    ak, av));                                                    \
    else                                                                                         \
      CHECK_CUDA(cudaLaunchKernelEx(&cfg, clusterPreKernel<KT, D, CL>, aq, cache, out, s));      \
    break;
    switch (s.maxSplits) {
      KILN_PRE_CASE(2)
      KILN_PRE_CASE(5)
      KILN_PRE_CASE(8)
    default: std::fprintf(stderr, "no pre-wait cluster kernel of %d slots\n", s.maxSplits); std::abort();
    }
#undef KILN_PRE_CASE
  }
  /// The fused-append forms (kiln-fuse-kv-append): the partial kernel (then the reduce) or the
  /// cluster kernel (2, 5 or 8 slots) appending kNew / vNew itself.
  static void attentionAppend(const kiln::AttnTensor<KT> &q, const kiln::AttnTensor<KT> &k,
                              const kiln::AttnTensor<KT> &v, const kiln::PagedKvCache<KT> &cache,
                              const kiln::AttnOut<KT> &out, float *workspace,
                              const kiln::DecodeShape &s, bool cluster, cudaStream_t stream) {
    const int groupRows = s.qHeads / s.kvHeads * s.qLen;
    const kiln::decode::Grid pg =
        kiln::decode::partialGrid(s.batch, s.qHeads, s.kvHeads, s.qLen, s.maxSplits, kElem);
    const dim3 grid(pg.x, pg.y, pg.z), block(kiln::decode::kThreads);
    if (!cluster) {
      const int smem = int(kiln::decode::smemBytes(kElem, D, groupRows));
      partialAppendKernel<KT, D><<<grid, block, smem, stream>>>(q, cache, out, workspace, s, k, v);
      const kiln::decode::Grid rg = kiln::decode::reduceGrid(s.batch, s.qHeads, s.qLen);
      reduceKernel<KT, D><<<rg.x, kiln::decode::kThreads, 0, stream>>>(cache, workspace, out, s);
      return;
    }
    const int smem = int(kiln::decode::smemBytes(kElem, D, groupRows, true));
    switch (s.maxSplits) {
    case 2: clusterAppendKernel<KT, D, 2><<<grid, block, smem, stream>>>(q, cache, out, s, k, v); break;
    case 5: clusterAppendKernel<KT, D, 5><<<grid, block, smem, stream>>>(q, cache, out, s, k, v); break;
    case 8: clusterAppendKernel<KT, D, 8><<<grid, block, smem, stream>>>(q, cache, out, s, k, v); break;
    default: std::fprintf(stderr, "no fused-append cluster kernel of %d slots\n", s.maxSplits); std::abort();
    }
  }
  /// The one-launch split-KV path: s.maxSplits slots (2 to 8) per KV group as a cluster.
  static void attentionCluster(const kiln::AttnTensor<KT> &q, const kiln::PagedKvCache<KT> &cache,
                               const kiln::AttnOut<KT> &out, const kiln::DecodeShape &s,
                               cudaStream_t stream) {
    const int groupRows = s.qHeads / s.kvHeads * s.qLen;
    const kiln::decode::Grid pg =
        kiln::decode::partialGrid(s.batch, s.qHeads, s.kvHeads, s.qLen, s.maxSplits, kElem);
    const int smem = int(kiln::decode::smemBytes(kElem, D, groupRows, true));
    const dim3 grid(pg.x, pg.y, pg.z), block(kiln::decode::kThreads);
    switch (s.maxSplits) {
    case 2: clusterKernel<KT, D, 2><<<grid, block, smem, stream>>>(q, cache, out, s); break;
    case 3: clusterKernel<KT, D, 3><<<grid, block, smem, stream>>>(q, cache, out, s); break;
    case 4: clusterKernel<KT, D, 4><<<grid, block, smem, stream>>>(q, cache, out, s); break;
    case 5: clusterKernel<KT, D, 5><<<grid, block, smem, stream>>>(q, cache, out, s); break;
    case 6: clusterKernel<KT, D, 6><<<grid, block, smem, stream>>>(q, cache, out, s); break;
    case 7: clusterKernel<KT, D, 7><<<grid, block, smem, stream>>>(q, cache, out, s); break;
    case 8: clusterKernel<KT, D, 8><<<grid, block, smem, stream>>>(q, cache, out, s); break;
    default: std::fprintf(stderr, "no cluster kernel of %d slots\n", s.maxSplits); std::abort();
    }
  }
  static void append(const kiln::AttnTensor<KT> &k, const kiln::AttnTensor<KT> &v,
                     const kiln::PagedKvCache<KT> &cache, const kiln::DecodeShape &s,
                     cudaStream_t stream) {
    const kiln::decode::Grid g = kiln::decode::appendGrid(s.batch, s.kvHeads, s.qLen, D, kElem);
    appendKernel<KT, D><<<g.x, kiln::decode::kAppendThreads, 0, stream>>>(k, v, cache, s);
  }
  static void attention(const kiln::AttnTensor<KT> &q, const kiln::PagedKvCache<KT> &cache,
                        const kiln::AttnOut<KT> &out, float *workspace,
                        const kiln::DecodeShape &s, cudaStream_t stream) {
    const int groupRows = s.qHeads / s.kvHeads * s.qLen;
    const kiln::decode::Grid pg =
        kiln::decode::partialGrid(s.batch, s.qHeads, s.kvHeads, s.qLen, s.maxSplits, kElem);
    const int smem = int(kiln::decode::smemBytes(kElem, D, groupRows));
    partialKernel<KT, D><<<dim3(pg.x, pg.y, pg.z), kiln::decode::kThreads, smem, stream>>>(
        q, cache, out, workspace, s);
    const kiln::decode::Grid rg = kiln::decode::reduceGrid(s.batch, s.qHeads, s.qLen);
    reduceKernel<KT, D><<<rg.x, kiln::decode::kThreads, 0, stream>>>(cache, workspace, out, s);
  }
  /// Whether the Hopper prefill path can read a cache of `blockSize` tokens per block (one TMA
  /// box per tile inside a page, or whole pages of a multiple of 8 rows per tile).
  static bool sm90Pages(int blockSize) {
    constexpr int bn = Sm90Tile<D>::kBn;
    return blockSize % bn == 0 || (bn % blockSize == 0 && blockSize % 8 == 0);
  }
  /// The Hopper prefill path (16-bit types, sm_90a builds): prefillAttentionSm90Paged with the
  /// query read through a map of q's strides (elements) and the pools through maps of their
  /// layout; grid or persistent blocks (one per SM).
  static void prefillSm90(const kiln::AttnTensor<KT> &q, const kiln::PagedKvCache<KT> &cache,
                          const kiln::AttnOut<KT> &out, const kiln::DecodeShape &s,
                          int numBlocks, bool persistent, int smCount, cudaStream_t stream,
                          const KT *ropeTable = nullptr) {
    if constexpr (kElem == 2) {
      using P = Sm90Tile<D>;
      const bool bf16 = std::is_same<KT, kiln::bf16>::value;
      kiln::TensorMap tq, tk, tv;
      makeTensorMap(&tq, q.ptr, bf16,
                    {uint64_t(D), uint64_t(s.qLen), uint64_t(s.qHeads), uint64_t(s.batch)},
                    {uint64_t(q.ss * 2), uint64_t(q.sh * 2), uint64_t(q.sb * 2)},
                    {64u, uint32_t(P::kBm), 1u, 1u});
      const uint64_t bs = uint64_t(cache.blockSize);
      const std::vector<uint64_t> dims = {uint64_t(D), bs, uint64_t(s.kvHeads),
                                          uint64_t(numBlocks)};
      const std::vector<uint64_t> strides = {uint64_t(D) * 2, bs * D * 2,
                                             uint64_t(s.kvHeads) * bs * D * 2};
      const std::vector<uint32_t> box = {64u, uint32_t(std::min<uint64_t>(bs, P::kBn)), 1u, 1u};
      makeTensorMap(&tk, cache.k, bf16, dims, strides, box);
      makeTensorMap(&tv, cache.v, bf16, dims, strides, box);
      const int smem = kiln::attentionSm90SmemBytes<D, P::kBm, P::kBn, P::kStages>();
      using Rope = kiln::RopeFn<RopeTable<KT>, RopeTable<KT>>;
      static bool raised = false; // once, before any graph capture (timePrefill calls it first)
      if (!raised) {
        CHECK_CUDA(cudaFuncSetAttribute(prefillSm90Kernel<KT, D, kiln::NoRope>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        CHECK_CUDA(cudaFuncSetAttribute(prefillSm90Kernel<KT, D, Rope>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      }
      raised = true;
      const int tiles = (s.qLen + P::kBm - 1) / P::kBm;
      const dim3 grid = persistent ? dim3(std::min(tiles * s.qHeads * s.batch, smCount), 1, 1)
                                   : dim3(tiles, s.qHeads, s.batch);
      if (ropeTable)
        prefillSm90Kernel<KT, D, Rope><<<grid, P::kThreads, smem, stream>>>(
            tq, tk, tv, cache, out, s, persistent,
            Rope{RopeTable<KT>{ropeTable, D}, RopeTable<KT>{ropeTable, D}});
      else
        prefillSm90Kernel<KT, D, kiln::NoRope><<<grid, P::kThreads, smem, stream>>>(
            tq, tk, tv, cache, out, s, persistent, kiln::NoRope{});
    }
  }
  /// The prefill path (16-bit types): prefillAttentionPaged, one launch, no workspace.
  static void prefill(const kiln::AttnTensor<KT> &q, const kiln::PagedKvCache<KT> &cache,
                      const kiln::AttnOut<KT> &out, const kiln::DecodeShape &s,
                      cudaStream_t stream) {
    if constexpr (kElem == 2) {
      using P = PrefillTile<D>;
      const int smem = kiln::attentionTcSmemBytes<D, P::kBm, P::kBn>();
      static bool raised = false; // once, before any graph capture (timePrefill calls it first)
      if (!raised)
        CHECK_CUDA(cudaFuncSetAttribute(prefillKernel<KT, D>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      raised = true;
      const dim3 grid((s.qLen + P::kBm - 1) / P::kBm, s.qHeads, s.batch);
      prefillKernel<KT, D><<<grid, 32 * P::kWarps, smem, stream>>>(q, cache, out, s);
    }
  }
};

/// Strides (sb, sh, ss) of a [B, H, S, D] tensor stored bshd ([B, S, H, D]) or bhsd.
struct Strides {
  long long sb, sh, ss;
};
Strides stridesOf(bool bshd, int H, int S, int D) {
  if (bshd)
    return {(long long)S * H * D, D, (long long)H * D};
  return {(long long)H * S * D, (long long)S * D, D};
}

struct Case {
  int hq, hkv;
  int blockSize; ///< 0: contiguous (one block per sequence, blockSize = capacity)
  int qLen;
  std::vector<int> seqLens;
  int maxSplits = 0; ///< 0: recommendedMaxSplits for the device
  bool bshd = true;  ///< q, k_new, v_new bshd (the output then bhsd), else the other way round
  int capacity = 0;  ///< 0: the longest sequence + qLen + 40 (rounded up to whole blocks)
  bool prefill = false; ///< the prefill path (prefillAttentionPaged) instead of partial + reduce
  bool cluster = false; ///< the one-launch cluster path (maxSplits slots: 2 to 8)
  /// The attention kernel appends the new rows itself (kiln-fuse-kv-append; cluster: 2, 5 or 8
  /// slots): no kvCacheAppend launch, the same pools expected bit for bit.
  bool fusedAppend = false;
  /// The cluster kernel with its loads before the grid-dependency wait, launched (PDL) after a
  /// kernel that writes Q, the new keys and values (and, without fusedAppend, appends them)
  /// only after a spin (2, 5 or 8 slots).
  bool preWait = false;
  /// With preWait and fusedAppend: Q and the new keys and values as element functions.
  bool elemFn = false;
  int sm90 = 0; ///< the Hopper prefill path: 1 grid, 2 persistent blocks (sm_90a builds)
};

/// Runs one case; true when it passes.

template <typename T, int D> bool runCase(const Case &c, int smCount) {
  using KT = typename KilnType<T>::type;
  using L = Launch<KT, D>;
  const int B = int(c.seqLens.size()), Hq = c.hq, Hkv = c.hkv, qLen = c.qLen, G = Hq / Hkv;
  const int maxSeq = *std::max_element(c.seqLens.begin(), c.seqLens.end());
  int capacity = c.capacity ? c.capacity : maxSeq + qLen + 40;
  int bs, maxBlocks;
  if (c.blockSize == 0) {
    bs = capacity, maxBlocks = 1;
  } else {
    bs = c.blockSize, maxBlocks = (capacity + bs - 1) / bs, capacity = maxBlocks * bs;
  }
  const int numBlocks = B * maxBlocks + 3; // 3 spare blocks, never referenced
  const int maxSplits =
      c.maxSplits ? c.maxSplits
                  : kiln::decode::recommendedMaxSplits(B, Hkv, G * qLen, capacity, smCount,
                                                       int(sizeof(KT)), D, gSmemPerSm);
  if (c.cluster && kiln::decode::smemBytes(int(sizeof(KT)), D, G * qLen, true) > gSmemOptin) {
    std::printf("SKIP %-4s D=%3d Hq=%2d Hkv=%2d qLen=%2d cluster: %lld bytes of shared memory "
                "pass the device's %lld (kiln-select-tiles plans no cluster then)\n",
                typeName<T>(), D, Hq, Hkv, qLen,
                kiln::decode::smemBytes(int(sizeof(KT)), D, G * qLen, true), gSmemOptin);
    return true;
  }
  std::mt19937 rng(unsigned(B * 7919 + Hq * 131 + Hkv * 31 + bs * 7 + qLen * 3 + D + maxSplits +
                            int(sizeof(T)) + c.bshd));
  std::normal_distribution<float> dist(0.0f, 1.0f);

  // Logical sequences: keys and values of positions [0, seqLen + qLen) per (b, g); the last
  // qLen are this step's new tokens.
  std::vector<std::vector<float>> kSeq(B), vSeq(B);
  for (int b = 0; b < B; ++b) {
    const size_t n = size_t(Hkv) * (c.seqLens[b] + qLen) * D;
    kSeq[b].resize(n), vSeq[b].resize(n);
    for (auto &x : kSeq[b]) x = roundTo<T>(dist(rng));
    for (auto &x : vSeq[b]) x = roundTo<T>(dist(rng));
  }
  auto seqAt = [&](const std::vector<float> &s, int b, int g, int j) {
    return &s[(size_t(g) * (c.seqLens[b] + qLen) + j) * D];
  };
  std::vector<float> q(size_t(B) * Hq * qLen * D);
  for (auto &x : q) x = roundTo<T>(dist(rng));

  // Block table: the sequences' logical blocks on shuffled pool blocks.
  std::vector<int> perm(numBlocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int> table(size_t(B) * maxBlocks);
  for (size_t e = 0; e < table.size(); ++e)
    table[e] = perm[e];
  auto slotOf = [&](int b, int g, int j) {
    return ((size_t(table[size_t(b) * maxBlocks + j / bs]) * Hkv + g) * bs + j % bs) * D;
  };
  // Pools: sentinel everywhere, then the cached tokens (kPool, vPool: what the test uploads);
  // kExpect, vExpect add this step's tokens inside the capacity (what kvCacheAppend must leave).
  const size_t poolElems = size_t(numBlocks) * Hkv * bs * D;
  std::vector<T> kPool(poolElems, sentinel<T>()), vPool(poolElems, sentinel<T>());
  auto writeTokens = [&](std::vector<T> &kp, std::vector<T> &vp, bool withNew) {
    for (int b = 0; b < B; ++b)
      for (int g = 0; g < Hkv; ++g)
        for (int j = 0; j < std::min(c.seqLens[b] + (withNew ? qLen : 0), capacity); ++j) {
          const size_t slot = slotOf(b, g, j);
          for (int d = 0; d < D; ++d) {
            kp[slot + d] = toT<T>(seqAt(kSeq[b], b, g, j)[d]);
            vp[slot + d] = toT<T>(seqAt(vSeq[b], b, g, j)[d]);
          }
        }
  };
  writeTokens(kPool, vPool, false);
  std::vector<T> kExpect = kPool, vExpect = vPool;
  writeTokens(kExpect, vExpect, true);

  // Device buffers: q and k_new / v_new in the case's layout, the output in the other.
  const Strides qs = stridesOf(c.bshd, Hq, qLen, D), ns = stridesOf(c.bshd, Hkv, qLen, D);
  const Strides os = stridesOf(!c.bshd, Hq, qLen, D);
  std::vector<T> hq(q.size()), hk(size_t(B) * Hkv * qLen * D), hv(hk.size());
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < Hq; ++h)
      for (int i = 0; i < qLen; ++i)
        for (int d = 0; d < D; ++d)
          hq[b * qs.sb + h * qs.sh + i * qs.ss + d] =
              toT<T>(q[((size_t(b) * Hq + h) * qLen + i) * D + d]);
    for (int g = 0; g < Hkv; ++g)
      for (int i = 0; i < qLen; ++i)
        for (int d = 0; d < D; ++d) {
          hk[b * ns.sb + g * ns.sh + i * ns.ss + d] =
              toT<T>(seqAt(kSeq[b], b, g, c.seqLens[b] + i)[d]);
          hv[b * ns.sb + g * ns.sh + i * ns.ss + d] =
              toT<T>(seqAt(vSeq[b], b, g, c.seqLens[b] + i)[d]);
        }
  }
  auto upload = [](const void *h, size_t bytes) {
    void *d;
    CHECK_CUDA(cudaMalloc(&d, bytes));
    CHECK_CUDA(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
  };
  T *dq = (T *)upload(hq.data(), hq.size() * sizeof(T));
  T *dkNew = (T *)upload(hk.data(), hk.size() * sizeof(T));
  T *dvNew = (T *)upload(hv.data(), hv.size() * sizeof(T));
  T *dkPool = (T *)upload(kPool.data(), poolElems * sizeof(T));
  T *dvPool = (T *)upload(vPool.data(), poolElems * sizeof(T));
  int *dTable = (int *)upload(table.data(), table.size() * sizeof(int));
  int *dSeq = (int *)upload(c.seqLens.data(), B * sizeof(int));
  constexpr size_t kGuard = 4096; // bytes after the output and the workspace that stay poisoned
  const size_t outBytes = q.size() * sizeof(T);
  const size_t wsBytes = size_t(kiln::decode::workspaceBytes(B, Hq, qLen, maxSplits, D));
  T *dOut;
  float *dWs;
  CHECK_CUDA(cudaMalloc(&dOut, outBytes + kGuard));
  CHECK_CUDA(cudaMalloc(&dWs, wsBytes + kGuard));
  CHECK_CUDA(cudaMemset(dOut, 0xff, outBytes + kGuard)); // NaN in every type
  CHECK_CUDA(cudaMemset(dWs, 0xff, wsBytes + kGuard));

  kiln::PagedKvCache<KT> cache{(KT *)dkPool, (KT *)dvPool, dTable, dSeq, bs, maxBlocks};
  kiln::DecodeShape shape{B, Hq, Hkv, qLen, maxSplits, float(1.0 / std::sqrt(double(D)))};
  kiln::AttnTensor<KT> aq{(const KT *)dq, qs.sb, qs.sh, qs.ss};
  kiln::AttnTensor<KT> ak{(const KT *)dkNew, ns.sb, ns.sh, ns.ss};
  kiln::AttnTensor<KT> av{(const KT *)dvNew, ns.sb, ns.sh, ns.ss};
  kiln::AttnOut<KT> ao{(KT *)dOut, os.sb, os.sh, os.ss};
  L::prepare();
  if (c.preWait) {
    // What the producer writes after its spin starts poisoned (NaN in every type) on the
    // device; the real values wait in staging buffers.
    T *sq = (T *)upload(hq.data(), hq.size() * sizeof(T));
    T *sk = (T *)upload(hk.data(), hk.size() * sizeof(T));
    T *sv = (T *)upload(hv.data(), hv.size() * sizeof(T));
    CHECK_CUDA(cudaMemset(dq, 0xff, hq.size() * sizeof(T)));
    CHECK_CUDA(cudaMemset(dkNew, 0xff, hk.size() * sizeof(T)));
    CHECK_CUDA(cudaMemset(dvNew, 0xff, hv.size() * sizeof(T)));
    L::attentionPreWait((KT *)dq, (const KT *)sq, (long long)hq.size(), (KT *)dkNew,
                        (KT *)dvNew, (const KT *)sk, (const KT *)sv, (long long)hk.size(), aq,
                        ak, av, kiln::AttnTensor<KT>{(const KT *)sk, ns.sb, ns.sh, ns.ss},
                        kiln::AttnTensor<KT>{(const KT *)sv, ns.sb, ns.sh, ns.ss}, cache, ao,
                        shape, c.fusedAppend, c.elemFn, 0);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    cudaFree(sq), cudaFree(sk), cudaFree(sv);
  } else if (!c.fusedAppend)
    L::append(ak, av, cache, shape, 0);
  CHECK_CUDA(cudaGetLastError());
  if (c.sm90 && !L::sm90Pages(bs)) {
    std::printf("SKIP %-4s D=%3d bs=%d sm90: the Hopper prefill path takes no blocks of %d tokens "
                "(kiln-select-tiles keeps mma.sync then)\n",
                typeName<T>(), D, bs, bs);
    cudaFree(dq), cudaFree(dkNew), cudaFree(dvNew), cudaFree(dkPool), cudaFree(dvPool);
    cudaFree(dTable), cudaFree(dSeq), cudaFree(dOut), cudaFree(dWs);
    return true;
  }
  if (c.preWait)
    ; // launched above
  else if (c.fusedAppend)
    L::attentionAppend(aq, ak, av, cache, ao, dWs, shape, c.cluster, 0);
  else if (c.sm90)
    L::prefillSm90(aq, cache, ao, shape, numBlocks, c.sm90 == 2, smCount, 0);
  else if (c.prefill)
    L::prefill(aq, cache, ao, shape, 0);
  else if (c.cluster)
    L::attentionCluster(aq, cache, ao, shape, 0);
  else
    L::attention(aq, cache, ao, dWs, shape, 0);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  // 1. The pools, bit for bit.
  size_t poolBad = 0;
  long long firstBad = -1;
  for (int which = 0; which < 2; ++which) {
    std::vector<T> got(poolElems);
    CHECK_CUDA(cudaMemcpy(got.data(), which ? dvPool : dkPool, poolElems * sizeof(T),
                          cudaMemcpyDeviceToHost));
    const std::vector<T> &want = which ? vExpect : kExpect;
    for (size_t e = 0; e < poolElems; ++e)
      if (std::memcmp(&got[e], &want[e], sizeof(T)) != 0) {
        if (firstBad < 0)
          firstBad = (long long)e;
        ++poolBad;
      }
  }

  // 2. The attention output against the fp64 reference.
  const double scale = 1.0 / std::sqrt(double(D));
  std::vector<double> ref(q.size());
  parallelFor(B * Hq * qLen, [&](int row) {
    const int i = row % qLen, h = row / qLen % Hq, b = row / (qLen * Hq), g = h / G;
    const int keys = std::min(c.seqLens[b] + i + 1, capacity);
    const float *qr = &q[size_t(row) * D];
    std::vector<double> s(keys);
    double mx = -INFINITY;
    for (int j = 0; j < keys; ++j) {
      const float *kr = seqAt(kSeq[b], b, g, j);
      double dot = 0;
      for (int d = 0; d < D; ++d)
        dot += double(qr[d]) * kr[d];
      s[j] = dot * scale;
      mx = std::max(mx, s[j]);
    }
    double l = 0;
    for (int j = 0; j < keys; ++j)
      l += (s[j] = std::exp(s[j] - mx));
    for (int d = 0; d < D; ++d) {
      double acc = 0;
      for (int j = 0; j < keys; ++j)
        acc += s[j] * seqAt(vSeq[b], b, g, j)[d];
      ref[size_t(row) * D + d] = acc / l;
    }
  });
  std::vector<T> out(q.size());
  CHECK_CUDA(cudaMemcpy(out.data(), dOut, outBytes, cudaMemcpyDeviceToHost));
  double maxErr = 0, maxRef = 1e-30;
  size_t nans = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hq; ++h)
      for (int i = 0; i < qLen; ++i)
        for (int d = 0; d < D; ++d) {
          const double r = ref[((size_t(b) * Hq + h) * qLen + i) * D + d];
          const float x = fromT<T>(out[b * os.sb + h * os.sh + i * os.ss + d]);
          if (std::isnan(x)) {
            ++nans;
            continue;
          }
          maxErr = std::max(maxErr, std::fabs(x - r));
          maxRef = std::max(maxRef, std::fabs(r));
        }
  // The guards after the output and the workspace stay 0xff.
  size_t guardBad = 0;
  for (int which = 0; which < 2; ++which) {
    std::vector<unsigned char> guard(kGuard);
    CHECK_CUDA(cudaMemcpy(guard.data(), which ? (char *)dWs + wsBytes : (char *)dOut + outBytes,
                          kGuard, cudaMemcpyDeviceToHost));
    for (unsigned char x : guard)
      guardBad += x != 0xff;
  }

  const double tol = std::is_same<T, float>::value ? 1e-4 : 1e-2;
  const bool ok = poolBad == 0 && nans == 0 && guardBad == 0 && maxErr / maxRef <= tol;
  std::string lens;
  for (int s : c.seqLens)
    lens += (lens.empty() ? "" : ",") + std::to_string(s);
  std::printf("%s %-4s D=%3d Hq=%2d Hkv=%2d bs=%4d%s cap=%4d qLen=%2d %s %s<=%2d lens=%s  "
              "rel err %.2e  nan %zu  pool mismatches %zu",
              ok ? "PASS" : "FAIL", typeName<T>(), D, Hq, Hkv, bs, c.blockSize ? "" : "(contig)",
              capacity, qLen, c.bshd ? "bshd" : "bhsd",
              c.preWait     ? (c.fusedAppend ? (c.elemFn ? "prewait+append+elemfn" : "prewait+append")
                                             : "prewait")
              : c.fusedAppend ? (c.cluster ? "cluster+append" : "splits+append")
              : c.sm90 == 2 ? "sm90-persistent"
              : c.sm90      ? "sm90"
              : c.prefill   ? "prefill"
              : c.cluster   ? "cluster"
                            : "splits",
              c.prefill ? 1 : maxSplits, lens.c_str(), maxErr / maxRef, nans, poolBad);
  if (firstBad >= 0)
    std::printf(" (first at element %lld)", firstBad % (long long)poolElems);
  if (guardBad)
    std::printf("  guard bytes overwritten %zu", guardBad);
  std::printf("\n");
  cudaFree(dq), cudaFree(dkNew), cudaFree(dvNew), cudaFree(dkPool), cudaFree(dvPool);
  cudaFree(dTable), cudaFree(dSeq), cudaFree(dOut), cudaFree(dWs);
  return ok;
}

template <typename T, int D> int runAll(const std::vector<Case> &cases, int smCount) {
  int failed = 0;
  for (const Case &c : cases)
    failed += !runCase<T, D>(c, smCount);
  return failed;
}

/// Every (heads, block size, q_len) combination of the brief, on the mixed-length batch.
std::vector<Case> fullCases() {
  const std::vector<int> lens = {0, 1, 17, 255, 1000, 4096};
  std::vector<Case> cases;
  bool bshd = true;
  for (auto [hq, hkv] : {std::pair{4, 4}, std::pair{8, 2}, std::pair{32, 8}})
    for (int bs : {16, 64, 256, 0})
      for (int qLen : {1, 5}) {
        Case c{hq, hkv, bs, qLen, lens};
        c.bshd = bshd, bshd = !bshd;
        cases.push_back(c);
      }
  return cases;
}

/// A few layouts for the other head dims.
std::vector<Case> shortCases() {
  const std::vector<int> lens = {0, 1, 17, 255, 1000, 4096};
  std::vector<Case> cases = {{8, 2, 16, 1, lens}, {8, 2, 0, 5, lens}, {32, 8, 64, 5, lens}};
  cases[1].bshd = false;
  return cases;
}

/// Edge cases: split counts, odd block sizes, the capacity overflow, many rows per group.
std::vector<Case> edgeCases() {
  const std::vector<int> lens = {0, 1, 17, 255, 1000, 4096};
  std::vector<Case> cases;
  Case c{8, 2, 16, 5, lens};
  c.maxSplits = 1; // every sequence in one split: the partial kernel writes the output
  cases.push_back(c);
  c.maxSplits = 3, c.bshd = false;
  cases.push_back(c);
  c = Case{32, 8, 7, 1, lens};
  c.maxSplits = 7;
  cases.push_back(c);
  cases.push_back(Case{4, 4, 100, 5, lens});
  cases.push_back(Case{8, 2, 1, 5, {0, 3, 130, 700}});
  // Overflow: 1000 + 5 passes the capacity of 1003: rows 3 and 4 are not written and the
  // reference clamps their keys to the capacity.
  c = Case{8, 2, 16, 5, {1000, 5, 998}};
  c.capacity = 1003, c.blockSize = 0;
  cases.push_back(c);
  c.blockSize = 17, c.capacity = 1003; // 59 blocks of 17 = 1003 tokens
  cases.push_back(c);
  cases.push_back(Case{32, 8, 16, 16, {0, 33, 500, 2000}}); // 64 rows per group
  cases.push_back(Case{8, 1, 16, 16, {0, 33, 500, 2000}});  // MQA, 128 rows per group
  cases.push_back(Case{8, 1, 64, 5, {7, 3000}});            // MQA, 40 rows (3 row tiles)
  cases.push_back(Case{12, 12, 16, 3, {1, 64, 1023}});      // GPT-2-like
  std::vector<int> many(16);
  for (int b = 0; b < 16; ++b)
    many[b] = (b * 977) % 3001;
  cases.push_back(Case{32, 8, 16, 1, many});
  // Prefill chunks (q_len in the hundreds): 64-row blocks inside one head skip the tiles past
  // their last token (block-level causal limit); q_len 100 has a block that crosses heads.
  cases.push_back(Case{8, 2, 16, 256, {0, 37, 900}});
  c = Case{8, 2, 16, 256, {0, 700}};
  c.maxSplits = 7; // splits past a row block's last visible key leave empty partials
  cases.push_back(c);
  c = Case{4, 4, 16, 100, {0, 5, 300}};
  c.maxSplits = 3, c.bshd = false;
  cases.push_back(c);
  return cases;
}

/// The fused append (kiln-fuse-kv-append): the attention kernels write this step's rows of
/// their own split chunk, with and without a cluster; one new token (decode steps, what the
/// compiler merges) and q_len 5 and 16 (rows split over several chunks and row blocks), the
/// capacity overflow (rows past it not written), odd blocks, MQA.
std::vector<Case> fusedAppendCases() {
  const std::vector<int> lens = {0, 1, 17, 127, 128, 255, 1000, 4096};
  std::vector<Case> cases;
  auto add = [&](Case c, bool cluster, int slots, bool bshd) {
    c.fusedAppend = true, c.cluster = cluster, c.maxSplits = slots, c.bshd = bshd;
    cases.push_back(c);
  };
  add(Case{32, 8, 16, 1, lens}, true, 8, true);
  add(Case{32, 8, 16, 1, lens}, true, 5, false);
  add(Case{8, 2, 7, 1, lens}, true, 2, true);
  add(Case{8, 2, 16, 5, lens}, true, 8, false);
  add(Case{8, 1, 16, 16, {0, 33, 500, 2000}}, true, 5, true); // MQA, 128 rows per group
  add(Case{32, 8, 16, 1, lens}, false, 0, true);              // recommended slots + reduce
  add(Case{8, 2, 0, 5, lens}, false, 1, false);               // contiguous, one split
  add(Case{8, 2, 1, 5, {0, 3, 130, 700}}, false, 3, true);    // blocks of one token
  Case over{8, 2, 16, 5, {1000, 5, 998}};                     // 1000 + 5 passes 1003
  over.capacity = 1003, over.blockSize = 0;
  add(over, false, 3, true);
  over.blockSize = 17;
  add(over, true, 8, false);
  return cases;
}

/// The cluster kernels with their loads before the grid-dependency wait (#kiln.split_kv<...,
/// preload = true>), with and without the fused append, after a producer that writes Q and the
/// new rows late: one new token over lengths whose new row falls in a preloaded tile or past
/// them (4096: chunks of many tiles), q_len 5 and 16 (new rows across tiles and chunks), odd
/// blocks, MQA, a length past the capacity, and Q / new rows as element functions.
std::vector<Case> preWaitCases() {
  const std::vector<int> lens = {0, 1, 17, 63, 64, 127, 128, 255, 1000, 4096};
  std::vector<Case> cases;
  auto add = [&](Case c, bool fused, int slots, bool bshd) {
    c.preWait = true, c.cluster = true, c.fusedAppend = fused, c.maxSplits = slots, c.bshd = bshd;
    cases.push_back(c);
  };
  for (bool fused : {true, false}) {
    add(Case{32, 8, 16, 1, lens}, fused, 8, true);
    add(Case{32, 8, 16, 1, lens}, fused, 5, false);
    add(Case{8, 2, 7, 1, lens}, fused, 2, true);
    add(Case{8, 2, 16, 5, lens}, fused, 8, false);
    add(Case{8, 1, 16, 16, {0, 33, 500, 2000}}, fused, 5, true); // MQA, 128 rows per group
    add(Case{8, 2, 0, 1, {5, 300}}, fused, 2, true);             // contiguous
    Case over{8, 2, 16, 5, {1000, 5, 998}};                      // 1000 + 5 passes 1003
    over.capacity = 1003, over.blockSize = 17;
    add(over, fused, 8, false);
  }
  // Q and the new rows as element functions (a generated step's fused rotary): Q computed into
  // shared memory by plain stores after the wait.
  auto addElemFn = [&](Case c, int slots, bool bshd) {
    add(c, true, slots, bshd);
    cases.back().elemFn = true;
  };
  addElemFn(Case{32, 8, 16, 1, lens}, 8, true);
  addElemFn(Case{8, 2, 7, 5, lens}, 5, false);
  addElemFn(Case{8, 1, 16, 16, {0, 33, 500, 2000}}, 2, true);
  return cases;
}

/// The one-launch cluster path: 2 to 8 slots over mixed lengths (one split, all slots
/// used, slots past the partition), q_len 1 and 5, paged, contiguous and odd blocks, GQA, MQA,
/// many rows per group, a chunk whose rows see different splits, and the capacity overflow.
std::vector<Case> clusterCases() {
  const std::vector<int> lens = {0, 1, 17, 255, 1000, 4096};
  std::vector<Case> cases;
  auto add = [&](Case c, int slots, bool bshd) {
    c.cluster = true, c.maxSplits = slots, c.bshd = bshd;
    cases.push_back(c);
  };
  add(Case{32, 8, 16, 1, lens}, 8, true);
  add(Case{32, 8, 16, 1, {2047, 130, 129, 128}}, 8, false);
  add(Case{8, 2, 64, 5, lens}, 4, true);
  add(Case{8, 2, 0, 1, lens}, 3, false);
  add(Case{4, 4, 7, 5, lens}, 2, true);
  add(Case{8, 1, 16, 16, {0, 33, 500, 2000}}, 8, false); // MQA, 128 rows per group
  add(Case{12, 12, 16, 3, {1, 64, 1023}}, 4, true);
  add(Case{8, 2, 16, 100, {0, 700}}, 8, true); // rows of one block see different splits
  // The odd sizes kiln-select-tiles picks when it cuts a cluster to keep every cluster
  // resident (residentClusters: 5 slots at 64 clusters on sm_90), and 6 and 7.
  add(Case{32, 8, 16, 1, lens}, 5, false);
  add(Case{32, 8, 16, 1, {2047, 640, 129, 128}}, 6, true);
  add(Case{8, 2, 7, 5, lens}, 7, false);
  Case c{8, 2, 16, 5, {1000, 5, 998}};
  c.capacity = 1003, c.blockSize = 0;
  add(c, 8, true);
  return cases;
}

/// The prefill path (f16 / bf16): chunks of 33 to 300 tokens on empty and filled caches, paged,
/// contiguous and odd block sizes, GQA and MQA, and the capacity overflow.
std::vector<Case> prefillCases() {
  std::vector<Case> cases;
  auto add = [&](Case c, bool bshd) {
    c.prefill = true, c.bshd = bshd;
    cases.push_back(c);
  };
  add(Case{8, 2, 16, 256, {0, 37, 900}}, true);
  add(Case{32, 8, 16, 300, {0, 1000}}, false);
  add(Case{4, 4, 0, 64, {0, 5, 4000}}, true);
  add(Case{8, 1, 7, 33, {0, 1, 17, 255}}, false);
  add(Case{12, 12, 64, 100, {3, 64, 1023}}, true);
  Case c{8, 2, 16, 128, {1000, 5, 950}}; // 1000 + 128 passes the capacity of 1060
  c.capacity = 1060, c.blockSize = 0;
  add(c, true);
  return cases;
}

/// The Hopper prefill path (f16 / bf16, sm_90a builds): the prefill cases whose block size it
/// reads (16 and 64 tokens per block, contiguous caches of whole 128-key tiles, 256, 8), with
/// grid and persistent blocks. The NaN sentinel in the pool rows past each sequence's last key
/// checks that the tail V tile is zeroed before P V.
std::vector<Case> sm90PrefillCases() {
  std::vector<Case> cases;
  auto add = [&](Case c, bool bshd, int mode) {
    c.prefill = true, c.bshd = bshd, c.sm90 = mode;
    cases.push_back(c);
  };
  for (int mode : {1, 2}) {
    add(Case{8, 2, 16, 256, {0, 37, 900}}, true, mode);
    add(Case{32, 8, 16, 300, {0, 1000}}, false, mode);
    Case c{4, 4, 0, 64, {0, 5, 4000}};
    c.capacity = 4096 + 128; // contiguous: whole tiles of 128 keys
    add(c, true, mode);
    add(Case{8, 1, 8, 33, {0, 1, 17, 255}}, false, mode);
    add(Case{12, 12, 64, 100, {3, 64, 1023}}, true, mode);
    add(Case{8, 2, 256, 129, {0, 127, 128, 700}}, true, mode);
    c = Case{8, 2, 0, 128, {1000, 5, 950}}; // 1000 + 128 passes the capacity of 1024
    c.capacity = 1024;
    add(c, true, mode);
    add(Case{32, 8, 16, 2048, {0}}, true, mode); // the 0.8B Llama's first chunk
  }
  return cases;
}

/// Times the two prefill paths (attentionTC over the cache, and the Hopper kernel) for one
/// chunk of qLen tokens after `cached` tokens, f16, blocks of 16; prints one line each.
template <int D>
void timePrefill(const char *what, int B, int Hq, int Hkv, int qLen, int cached, int capacity,
                 int smCount, cudaStream_t stream) {
  using KT = kiln::f16;
  using L = Launch<KT, D>;
  const int bs = 16, maxBlocks = (capacity + bs - 1) / bs, numBlocks = B * maxBlocks;
  const size_t poolElems = size_t(numBlocks) * Hkv * bs * D;
  std::vector<int> table(size_t(B) * maxBlocks), seqLens(B, cached);
  std::iota(table.begin(), table.end(), 0);
  std::mt19937 rng(11);
  std::shuffle(table.begin(), table.end(), rng);
  int *dTable, *dSeq;
  KT *k, *v, *q, *out;
  CHECK_CUDA(cudaMalloc(&dTable, table.size() * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dSeq, B * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dTable, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dSeq, seqLens.data(), B * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&k, poolElems * 2));
  CHECK_CUDA(cudaMalloc(&v, poolElems * 2));
  CHECK_CUDA(cudaMemset(k, 0x11, poolElems * 2));
  CHECK_CUDA(cudaMemset(v, 0x22, poolElems * 2));
  const size_t qElems = size_t(B) * qLen * Hq * D;
  CHECK_CUDA(cudaMalloc(&q, qElems * 2));
  CHECK_CUDA(cudaMalloc(&out, qElems * 2));
  CHECK_CUDA(cudaMemset(q, 0x11, qElems * 2));
  kiln::PagedKvCache<KT> cache{k, v, dTable, dSeq, bs, maxBlocks};
  kiln::DecodeShape shape{B, Hq, Hkv, qLen, 1, float(1.0 / std::sqrt(double(D)))};
  const Strides qs = stridesOf(true, Hq, qLen, D);
  kiln::AttnTensor<KT> aq{q, qs.sb, qs.sh, qs.ss};
  kiln::AttnOut<KT> ao{out, qs.sb, qs.sh, qs.ss};
  double us[3];
  for (int mode = 0; mode < 3; ++mode) {
    auto launch = [&](cudaStream_t s) {
      if (mode == 0)
        L::prefill(aq, cache, ao, shape, s);
      else
        L::prefillSm90(aq, cache, ao, shape, numBlocks, mode == 2, smCount, s);
    };
    launch(stream); // eagerly first: the shared-memory attribute is set outside the capture
    CHECK_CUDA(cudaStreamSynchronize(stream));
    us[mode] = timeGraph(stream, launch);
    CHECK_CUDA(cudaGetLastError());
  }
  // Causal FLOPs: 4 D per visible (query, key) pair.
  double pairs = 0;
  for (int i = 0; i < qLen; ++i)
    pairs += std::min(cached + i + 1, capacity);
  const double flops = 4.0 * D * pairs * Hq * B;
  std::printf("time %-22s f16 D=%d B=%d Hq=%d Hkv=%d qLen=%d cached=%d: mma.sync %7.2f us, "
              "sm90 %7.2f us (%.0f TFLOP/s), sm90 persistent %7.2f us; mma.sync / sm90 %.2f\n",
              what, D, B, Hq, Hkv, qLen, cached, us[0], us[1], flops / us[1] * 1e-6, us[2],
              us[0] / std::min(us[1], us[2]));
  // The same with random operands (uniform in [-1, 1]: the constant bit patterns above give
  // every score the same value), then with a rotary of Q in the kernel (kiln's models).
  {
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    auto fill = [&](KT *dst, size_t n) {
      std::vector<__half> h(n);
      for (auto &x : h)
        x = __float2half(uni(gen));
      CHECK_CUDA(cudaMemcpy(dst, h.data(), n * 2, cudaMemcpyHostToDevice));
    };
    fill(k, poolElems), fill(v, poolElems), fill(q, qElems);
    KT *rope;
    const size_t ropeElems = size_t(capacity) * D;
    CHECK_CUDA(cudaMalloc(&rope, ropeElems * 2));
    fill(rope, ropeElems);
    double ur[2];
    for (int r = 0; r < 2; ++r) {
      auto launch = [&](cudaStream_t s) {
        L::prefillSm90(aq, cache, ao, shape, numBlocks, true, smCount, s, r ? rope : nullptr);
      };
      launch(stream);
      CHECK_CUDA(cudaStreamSynchronize(stream));
      ur[r] = timeGraph(stream, launch);
      CHECK_CUDA(cudaGetLastError());
    }
    std::printf("time %-22s random operands: sm90 persistent %7.2f us (%.0f TFLOP/s), with the "
                "query rotary %7.2f us\n",
                what, ur[0], flops / ur[0] * 1e-6, ur[1]);
    cudaFree(rope);
  }
  cudaFree(dTable), cudaFree(dSeq), cudaFree(k), cudaFree(v), cudaFree(q), cudaFree(out);
}

/// How timeCase appends the step's keys and values: not at all (the attention alone), with
/// kvCacheAppend's kernel before the attention, or inside it (kiln-fuse-kv-append).
enum class AppendTiming { None, Kernel, Fused };

/// Allocates `layers` caches of one layout and times the attention (partial + reduce) over
/// them; prints one line.
template <typename T, int D>
void timeCase(const char *what, int B, int Hq, int Hkv, int blockSize, int validLen, int capacity,
              int smCount, size_t l2Bytes, cudaStream_t stream, int slots = 0,
              bool cluster = false, AppendTiming append = AppendTiming::None) {
  using KT = typename KilnType<T>::type;
  using L = Launch<KT, D>;
  const int qLen = 1, bs = blockSize ? blockSize : capacity;
  const int maxBlocks = (capacity + bs - 1) / bs;
  const size_t kvBytes = size_t(B) * Hkv * validLen * D * 2 * sizeof(T); // K and V read per launch
  const size_t poolElems = size_t(B) * maxBlocks * Hkv * bs * D;
  const int layers = int(std::min<size_t>(32, std::max<size_t>(1, (4 * l2Bytes + kvBytes - 1) /
                                                                       kvBytes)));
  const int maxSplits =
      slots ? slots
            : kiln::decode::recommendedMaxSplits(B, Hkv, Hq / Hkv * qLen, capacity, smCount,
                                                 int(sizeof(KT)), D, gSmemPerSm);
  std::mt19937 rng(5);
  std::vector<int> table(size_t(B) * maxBlocks), seqLens(B, validLen - qLen);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), rng);
  int *dTable, *dSeq;
  CHECK_CUDA(cudaMalloc(&dTable, table.size() * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dSeq, B * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dTable, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dSeq, seqLens.data(), B * sizeof(int), cudaMemcpyHostToDevice));
  std::vector<kiln::PagedKvCache<KT>> caches(layers);
  for (auto &c : caches) {
    KT *k, *v;
    CHECK_CUDA(cudaMalloc(&k, poolElems * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&v, poolElems * sizeof(T)));
    CHECK_CUDA(cudaMemset(k, 0x11, poolElems * sizeof(T)));
    CHECK_CUDA(cudaMemset(v, 0x22, poolElems * sizeof(T)));
    c = {k, v, dTable, dSeq, bs, maxBlocks};
  }
  KT *q, *out;
  float *ws;
  CHECK_CUDA(cudaMalloc(&q, size_t(B) * Hq * D * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&out, size_t(B) * Hq * D * sizeof(T)));
  CHECK_CUDA(cudaMemset(q, 0x11, size_t(B) * Hq * D * sizeof(T)));
  CHECK_CUDA(
      cudaMalloc(&ws, size_t(kiln::decode::workspaceBytes(B, Hq, qLen, maxSplits, D))));
  kiln::DecodeShape shape{B, Hq, Hkv, qLen, maxSplits, float(1.0 / std::sqrt(double(D)))};
  kiln::AttnTensor<KT> aq{q, (long long)Hq * D, D, D};
  kiln::AttnOut<KT> ao{out, (long long)Hq * D, D, D};
  KT *kvNew;
  CHECK_CUDA(cudaMalloc(&kvNew, size_t(B) * Hkv * D * sizeof(T)));
  CHECK_CUDA(cudaMemset(kvNew, 0x11, size_t(B) * Hkv * D * sizeof(T)));
  kiln::AttnTensor<KT> an{kvNew, (long long)Hkv * D, D, D};
  L::prepare();
  int next = 0;
  const double us = timeGraph(stream, [&](cudaStream_t s) {
    const kiln::PagedKvCache<KT> &cache = caches[next++ % layers];
    if (append == AppendTiming::Fused) {
      L::attentionAppend(aq, an, an, cache, ao, ws, shape, cluster, s);
      return;
    }
    if (append == AppendTiming::Kernel)
      L::append(an, an, cache, shape, s);
    if (cluster)
      L::attentionCluster(aq, cache, ao, shape, s);
    else
      L::attention(aq, cache, ao, ws, shape, s);
  });
  CHECK_CUDA(cudaGetLastError());
  const int splits =
      kiln::decode::partition(kiln::decode::validKeys(validLen - qLen, qLen, capacity), maxSplits,
                              int(sizeof(KT)))
          .splits;
  std::printf("time %-22s %-4s D=%d B=%d Hq=%d Hkv=%d bs=%d L=%d cap=%d slots=%d splits=%d "
              "layers=%d%s: %7.2f us  %7.1f GB/s\n",
              what, typeName<T>(), D, B, Hq, Hkv, bs, validLen, capacity, maxSplits, splits,
              layers,
              append == AppendTiming::Fused    ? " append=fused"
              : append == AppendTiming::Kernel ? " append=kernel"
                                               : "",
              us, kvBytes / us * 1e-3);
  for (auto &c : caches)
    cudaFree(c.k), cudaFree(c.v);
  cudaFree(dTable), cudaFree(dSeq), cudaFree(q), cudaFree(out), cudaFree(ws), cudaFree(kvNew);
}

/// Times kvCacheAppend for one step of batch B (q_len 1).
template <typename T, int D>
void timeAppend(int B, int Hkv, int capacity, cudaStream_t stream) {
  using KT = typename KilnType<T>::type;
  const int bs = 16, maxBlocks = capacity / bs, qLen = 1;
  const size_t poolElems = size_t(B) * maxBlocks * Hkv * bs * D;
  std::vector<int> table(size_t(B) * maxBlocks), seqLens(B, capacity / 2);
  std::iota(table.begin(), table.end(), 0);
  int *dTable, *dSeq;
  KT *k, *v, *kn;
  CHECK_CUDA(cudaMalloc(&dTable, table.size() * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dSeq, B * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dTable, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dSeq, seqLens.data(), B * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&k, poolElems * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&v, poolElems * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&kn, size_t(B) * Hkv * D * sizeof(T)));
  CHECK_CUDA(cudaMemset(kn, 0, size_t(B) * Hkv * D * sizeof(T)));
  kiln::PagedKvCache<KT> cache{k, v, dTable, dSeq, bs, maxBlocks};
  kiln::DecodeShape shape{B, Hkv, Hkv, qLen, 1, 1.0f};
  kiln::AttnTensor<KT> an{kn, (long long)Hkv * D, D, D};
  const double us = timeGraph(stream, [&](cudaStream_t s) {
    Launch<KT, D>::append(an, an, cache, shape, s);
  });
  CHECK_CUDA(cudaGetLastError());
  std::printf("time %-22s %-4s D=%d B=%d Hkv=%d: %7.2f us\n", "kvCacheAppend", typeName<T>(), D,
              B, Hkv, us);
  cudaFree(dTable), cudaFree(dSeq), cudaFree(k), cudaFree(v), cudaFree(kn);
}

/// (d) Prefill chunks (sm_90a builds): attentionTC over the cache against the Hopper kernel.
void runPrefillTiming(int smCount) {
#ifdef KILN_TEST_SM90A
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  timePrefill<64>("prefill-llama0.8b", 1, 32, 8, 2048, 0, 2304, smCount, stream);
  timePrefill<64>("prefill-llama0.8b-c256", 1, 32, 8, 2048, 256, 2304, smCount, stream);
  timePrefill<64>("prefill-llama0.8b-tail", 1, 32, 8, 512, 1536, 2304, smCount, stream);
  timePrefill<64>("prefill-llama0.8b-b4", 4, 32, 8, 512, 0, 2304, smCount, stream);
  timePrefill<128>("prefill-d128", 1, 32, 8, 2048, 0, 2304, smCount, stream);
  CHECK_CUDA(cudaStreamDestroy(stream));
#else
  (void)smCount;
#endif
}

void runTiming(int smCount, size_t l2Bytes) {
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  std::printf("# time: attention = partial + reduce kernels, median over CUDA-graph replays of "
              "20 launches; GB/s = K+V bytes read / time\n");
  // (a) The time follows the valid length, not the capacity.
  timeCase<__half, 128>("L1024-cap2048", 1, 32, 8, 16, 1024, 2048, smCount, l2Bytes, stream);
  timeCase<__half, 128>("L1024-cap8192", 1, 32, 8, 16, 1024, 8192, smCount, l2Bytes, stream);
  timeCase<__half, 128>("L1024-cap8192-b8", 8, 32, 8, 16, 1024, 8192, smCount, l2Bytes, stream);
  timeCase<__half, 128>("L1024-cap2048-b8", 8, 32, 8, 16, 1024, 2048, smCount, l2Bytes, stream);
  // (b) Bandwidth at 4096 tokens (and longer), and how it depends on the layout and the split
  // slots (the recommended ones fill one wave of resident blocks; the grid's other slots
  // return at once).
  timeCase<__half, 128>("L4096-b1", 1, 32, 8, 16, 4096, 8192, smCount, l2Bytes, stream);
  timeCase<__half, 128>("L4096-b8", 8, 32, 8, 16, 4096, 8192, smCount, l2Bytes, stream);
  timeCase<__half, 128>("L4096-b8-contig", 8, 32, 8, 0, 4096, 4096, smCount, l2Bytes, stream);
  timeCase<__half, 128>("L4096-b8-bs256", 8, 32, 8, 256, 4096, 8192, smCount, l2Bytes, stream);
  timeCase<__nv_bfloat16, 128>("L4096-b8", 8, 32, 8, 16, 4096, 8192, smCount, l2Bytes, stream);
  timeCase<float, 128>("L4096-b8", 8, 32, 8, 16, 4096, 8192, smCount, l2Bytes, stream);
  timeCase<__half, 64>("L4096-b8-gpt2", 8, 12, 12, 16, 4096, 8192, smCount, l2Bytes, stream);
  timeCase<__half, 128>("L32768-b1", 1, 32, 8, 16, 32768, 32768, smCount, l2Bytes, stream);
  timeCase<__half, 128>("L16384-b8", 8, 32, 8, 16, 16384, 16384, smCount, l2Bytes, stream);
  for (int slots : {2, 8, 9, 16})
    timeCase<__half, 128>("L4096-b8-slots", 8, 32, 8, 16, 4096, 8192, smCount, l2Bytes, stream,
                          slots);
  for (int slots : {16, 64})
    timeCase<__half, 128>("L4096-b1-slots", 1, 32, 8, 16, 4096, 8192, smCount, l2Bytes, stream,
                          slots);
  // (c) The one-launch cluster path (kiln-select-tiles' #kiln.split_kv: up to 8 slots), as
  // compiled decode steps run it, against the two-launch path above.
  for (int L : {128, 1024, 2048, 4096})
    for (int B : {1, 8})
      timeCase<__half, 128>(B == 1 ? "cluster-b1" : "cluster-b8", B, 32, 8, 16, L, 8192, smCount,
                            l2Bytes, stream, B == 1 ? 8 : 4, true);
  timeCase<__half, 64>("cluster-b1-llama0.8b", 1, 32, 8, 16, 2048, 2304, smCount, l2Bytes, stream,
                       8, true);
  timeCase<__half, 64>("one-slot-b1-llama0.8b", 1, 32, 8, 16, 2048, 2304, smCount, l2Bytes,
                       stream, 1);
  // (d) The append of one decode step: its own kernel before the attention against the
  // attention kernel's blocks writing it (kiln-fuse-kv-append), the 0.8B Llama's layer (D = 64,
  // 32/8 heads, cache of 2304 tokens) at batch 1 (8 slots) and 8 (5 slots: every cluster
  // resident), 128 and 2048 tokens.
  for (int B : {1, 8})
    for (int L : {128, 2048})
      for (AppendTiming a : {AppendTiming::Kernel, AppendTiming::Fused})
        timeCase<__half, 64>(B == 1 ? "append-b1-llama0.8b" : "append-b8-llama0.8b", B, 32, 8, 16,
                             L, 2304, smCount, l2Bytes, stream, B == 1 ? 8 : 5, true, a);
  timeAppend<__half, 128>(8, 8, 8192, stream);
  CHECK_CUDA(cudaStreamDestroy(stream));
  runPrefillTiming(smCount);
}

} // namespace

int main(int argc, char **argv) {
  const bool timingOnly = argc > 1 && std::strcmp(argv[1], "--timing") == 0;
  const bool noTiming = argc > 1 && std::strcmp(argv[1], "--no-timing") == 0;
  const bool sm90Only = argc > 1 && std::strcmp(argv[1], "--sm90") == 0;
  if (argc > 2 || (argc == 2 && !timingOnly && !noTiming && !sm90Only)) {
    std::fprintf(stderr, "usage: %s [--timing | --no-timing | --sm90]\n", argv[0]);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs, %d MiB L2)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.l2CacheSize >> 20);
  const int sms = prop.multiProcessorCount;
  gSmemPerSm = (long long)prop.sharedMemPerMultiprocessor;
  gSmemOptin = (long long)prop.sharedMemPerBlockOptin;
  int failed = 0, total = 0;
  auto count = [&](int f, size_t n) { failed += f, total += int(n); };
  if (!timingOnly && !sm90Only) {
    const std::vector<Case> full = fullCases(), few = shortCases(), edge = edgeCases();
    const std::vector<Case> pre = prefillCases(), clu = clusterCases();
    count(runAll<__half, 128>(full, sms), full.size());
    count(runAll<__nv_bfloat16, 128>(full, sms), full.size());
    count(runAll<float, 128>(full, sms), full.size());
    count(runAll<__half, 64>(full, sms), full.size());
    count(runAll<__nv_bfloat16, 64>(full, sms), full.size());
    count(runAll<float, 64>(full, sms), full.size());
    count(runAll<__half, 96>(few, sms), few.size());
    count(runAll<__nv_bfloat16, 80>(few, sms), few.size());
    count(runAll<float, 96>(few, sms), few.size());
    count(runAll<__half, 256>(few, sms), few.size());
    count(runAll<float, 256>(few, sms), few.size());
    count(runAll<__half, 128>(edge, sms), edge.size());
    count(runAll<__nv_bfloat16, 64>(edge, sms), edge.size());
    count(runAll<float, 128>(edge, sms), edge.size());
    count(runAll<__half, 64>(pre, sms), pre.size());
    count(runAll<__nv_bfloat16, 64>(pre, sms), pre.size());
    count(runAll<__half, 128>(pre, sms), pre.size());
    count(runAll<__nv_bfloat16, 80>(pre, sms), pre.size());
    count(runAll<__half, 256>(pre, sms), pre.size());
    count(runAll<__half, 128>(clu, sms), clu.size());
    count(runAll<__nv_bfloat16, 64>(clu, sms), clu.size());
    count(runAll<float, 128>(clu, sms), clu.size());
    count(runAll<__half, 256>(clu, sms), clu.size());
    const std::vector<Case> fused = fusedAppendCases();
    count(runAll<__half, 128>(fused, sms), fused.size());
    count(runAll<__half, 64>(fused, sms), fused.size());
    count(runAll<__nv_bfloat16, 128>(fused, sms), fused.size());
    count(runAll<float, 64>(fused, sms), fused.size());
    const std::vector<Case> preWait = preWaitCases();
    count(runAll<__half, 128>(preWait, sms), preWait.size());
    count(runAll<__half, 64>(preWait, sms), preWait.size());
    count(runAll<__nv_bfloat16, 64>(preWait, sms), preWait.size());
    count(runAll<float, 64>(preWait, sms), preWait.size());
  }
#ifdef KILN_TEST_SM90A
  if (!timingOnly) {
    // The Hopper prefill path (sm_90a builds only; built for sm_90 its kernel traps).
    const std::vector<Case> h = sm90PrefillCases();
    count(runAll<__half, 64>(h, sms), h.size());
    count(runAll<__nv_bfloat16, 64>(h, sms), h.size());
    count(runAll<__half, 128>(h, sms), h.size());
    count(runAll<__nv_bfloat16, 80>(h, sms), h.size());
    count(runAll<__half, 256>(h, sms), h.size());
  }
#else
  if (sm90Only) {
    std::fprintf(stderr, "--sm90: this build is not for sm_90a (test/gpu/build_gpu_test.sh)\n");
    return 2;
  }
#endif
  if (!timingOnly)
    std::printf("%s: %d of %d cases failed\n", failed ? "FAILED" : "OK", failed, total);
  if (sm90Only)
    runPrefillTiming(sms);
  else if (!noTiming)
    runTiming(sms, size_t(prop.l2CacheSize));
  return failed ? 1 : 0;
}
