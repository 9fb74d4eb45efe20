// sample.cuh - the next token of one row of logits on the GPU: greedy, or temperature / top-k /
// top-p sampling (kiln.sample; the rule of kiln_sampling_params_t in runtime.h).
//
// One thread block per row, every step exact and deterministic:
//  1. the first maximum over 64-bit rank keys (the logit's order-preserving bits, NaN as -inf,
//     then the complement of the id, so keys are unique and descending key order is "logit
//     descending, lower id first"); greedy rows stop here;
//  2. top-k: the k-th largest key by a radix select (MSD, 4 bits per level, stopping as soon as
//     the selected bin holds one element; Alabi et al., "Fast k-selection algorithms for
//     graphics processing units", JEA 2012, as in PyTorch's and FlashInfer's samplers);
//  3. the softmax weights exp((x - max) / T) of the survivors in 2^-40 fixed point, so every sum
//     is an integer sum: the same in any order, for any block size;
//  4. top-p (nucleus, Holtzman et al. 2020, arXiv:1904.09751): the element where the cumulative
//     weight in descending order first reaches ceil(p * total), by the same radix descent over
//     the keys with weights instead of counts;
//  5. the draw: inverse CDF over the survivors in descending order, u = Philox4x32-10 (Salmon et
//     al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) at key `seed`, counter
//     `offset`: the token depends on the row's logits and parameters, not on the batch row or
//     the launch configuration.
// Cost per sampled row: one pass over the V logits for the maximum, one for the total weight,
// and, per selection (top-k, top-p, draw; at most 16 radix levels each), one per level until the
// selected bin holds at most sample::kCandidates elements; those then move to shared memory
// (one more pass) and the remaining levels read only them. Usually (sampleByThreshold) the
// elements that matter are near the maximum: one counting pass finds at most kCandidates of
// them, one more moves them to shared memory, where a bitonic sort puts them in descending key
// order and a prefix sum gives their cumulative weights, so top-k, top-p and the draw are
// binary searches (the same elements the radix selections pick). With a top-k of at most
// kCandidates the k survivors move to shared memory once and are sorted the same way.
// Greedy rows make one pass. Weights below 2^-41 of the largest (probability ratio < 5e-13) are
// never drawn; vocabularies up to 2^23 tokens keep the sums inside 64 bits.
#pragma once
#include "kiln/common.cuh"
#include "kiln/gemm_sm90.cuh" // sm90::clusterSync (sampleRow's CLUSTER > 1 on sm_90)

namespace kiln {
namespace sample {

/// Largest vocabulary kiln::sampleRow takes: V * 2^40 must fit 64 bits.
constexpr long long kMaxVocab = 1ll << 23;
/// Fixed-point scale of the weights: the largest is 2^40.
constexpr float kWeightScale = 1099511627776.0f; // 2^40

/// Philox4x32-10 (Salmon et al. 2011; the constants of Random123 and cuRAND): 64 random bits at
/// 64-bit counter `counter` under 64-bit key `key`. The same on the host (for tests).
__host__ __device__ inline unsigned long long philox64(unsigned long long key,
                                                       unsigned long long counter) {
  unsigned c0 = unsigned(counter), c1 = unsigned(counter >> 32), c2 = 0, c3 = 0;
  unsigned k0 = unsigned(key), k1 = unsigned(key >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
    const unsigned hi0 = unsigned(p0 >> 32), lo0 = unsigned(p0);
    const unsigned hi1 = unsigned(p1 >> 32), lo1 = unsigned(p1);
    const unsigned n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return (unsigned long long)c1 << 32 | c0;
}

/// Order-preserving bits of a logit: NaN counts as -inf, -0 as +0.
__device__ __forceinline__ unsigned orderBits(float x) {
  x = x != x ? -__int_as_float(0x7f800000) : x + 0.0f;
  const unsigned b = __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

/// The logit that orderBits maps to `bits` (NaN comes back as -inf).
__device__ __forceinline__ float fromOrderBits(unsigned bits) {
  return __uint_as_float((bits & 0x80000000u) ? (bits & 0x7fffffffu) : ~bits);
}

/// Unique rank key of element `i`: descending key order is logit descending, then id ascending.
__device__ __forceinline__ unsigned long long rankKey(float x, long long i) {
  return (unsigned long long)orderBits(x) << 32 | (0xffffffffu - unsigned(i));
}

__device__ __forceinline__ long long idOf(unsigned long long key) {
  return (long long)(0xffffffffu - unsigned(key));
}

/// Block-wide state of sampleRow (static shared memory, about 1.8 KiB).
struct Shared {
  unsigned long long warpWeight[32][16];
  unsigned warpCount[32][16];
  unsigned long long scalar[32];
  unsigned long long binTotalWeight[16];
  unsigned binTotalCount[16];
  unsigned long long prefix, target, before, binWeight, found;
  unsigned count;
};

__device__ __forceinline__ unsigned long long blockMaxU64(unsigned long long v, Shared &sh) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w > v ? w : v;
  }
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if ((threadIdx.x & 31) == 0)
    sh.scalar[warp] = v;
  __syncthreads();
  v = sh.scalar[0];
  for (int w = 1; w < warps; ++w)
    v = sh.scalar[w] > v ? sh.scalar[w] : v;
  return v;
}

__device__ __forceinline__ unsigned long long blockSumU64(unsigned long long v, Shared &sh) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if ((threadIdx.x & 31) == 0)
    sh.scalar[warp] = v;
  __syncthreads();
  v = 0;
  for (int w = 0; w < warps; ++w) // the same order in every thread: the same sum
    v += sh.scalar[w];
  return v;
}

/// Adds each of NB per-thread bin sums over the warp and leaves warp w's in
/// sh.warpWeight[w][b] / sh.warpCount[w][b]; block-wide (ends with __syncthreads, so every
/// thread may read them).
template <int NB>
__device__ __forceinline__ void warpBinsToShared(unsigned long long (&w)[NB], unsigned (&c)[NB],
                                                 Shared &sh) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
  for (int b = 0; b < NB; ++b) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      w[b] += __shfl_xor_sync(0xffffffffu, w[b], o);
      c[b] += __shfl_xor_sync(0xffffffffu, c[b], o);
    }
    if (lane == 0)
      sh.warpWeight[warp][b] = w[b], sh.warpCount[warp][b] = c[b];
  }
  __syncthreads();
}

/// Calls f(x, k) for this thread's elements k = threadIdx.x, + blockDim.x, ... of load (over
/// n), with kLoads loads in flight: one block reads a whole row, so its loads in flight bound
/// a pass. Elements past n are not visited.
constexpr int kLoads = 8;
template <typename Load, typename F>
__device__ __forceinline__ void forEachLoaded(const Load &load, long long n, const F &f) {
  for (long long k0 = threadIdx.x; k0 < n; k0 += kLoads * (long long)blockDim.x) {
    float x[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const long long k = k0 + u * (long long)blockDim.x;
      x[u] = k < n ? load(k) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const long long k = k0 + u * (long long)blockDim.x;
      if (k < n)
        f(x[u], k);
    }
  }
}

/// Result of a selection: the chosen element's key and the weight of it and every element
/// before it in descending key order.
struct Pick {
  unsigned long long key, cumulative;
};

/// Most candidates a selection moves into shared memory (16 bytes each: 32 KiB).
constexpr int kCandidates = 2048;

/// Keys and weights of at most kCandidates elements in shared memory (filled in any order by
/// compactCandidates: every use sums integers or compares unique keys, so the order does not
/// matter).
struct Candidates {
  unsigned long long key[kCandidates];
  unsigned long long weight[kCandidates];
  unsigned count;
};

/// keyWeight over a Candidates buffer: element k is the buffer's entry k.
struct CandidateKeys {
  const Candidates *c;
  __device__ __forceinline__ unsigned long long operator()(long long k,
                                                           unsigned long long &key) const {
    key = c->key[k];
    return c->weight[k];
  }
};

/// Moves the elements of keyWeight (over n) with a non-zero weight and (key & mask) == prefix
/// into `cand` (the caller knows they are at most kCandidates). Block-wide; every thread may read
/// `cand` afterwards.
template <typename KeyWeight>
__device__ void compactCandidates(const KeyWeight &keyWeight, long long n, unsigned long long mask,
                                  unsigned long long prefix, Candidates &cand) {
  __syncthreads(); // earlier readers of cand are done
  if (threadIdx.x == 0)
    cand.count = 0;
  __syncthreads();
  for (long long k = threadIdx.x; k < n; k += blockDim.x) {
    unsigned long long key;
    const unsigned long long w = keyWeight(k, key);
    if (w != 0 && (key & mask) == prefix) {
      const unsigned i = atomicAdd(&cand.count, 1u);
      cand.key[i] = key;
      cand.weight[i] = w;
    }
  }
  __syncthreads();
}

/// The element at which the cumulative weight, in descending key order, first reaches `target`
/// (1 <= target <= the total weight). `keyWeight(k, key)` sets element k's rank key and returns
/// its weight (0: not a candidate). MSD radix descent, 4 bits per level, from digit `shift` down
/// with the digits above it fixed to `prefix` and `before` the weight of the elements above that
/// prefix: per level every thread sums the weights and counts of its candidates per digit in
/// registers, the block adds them (integers: deterministic), thread 0 walks the 16 bins from the
/// top; it stops when the chosen bin holds one candidate. COMPACT: as soon as the chosen bin holds
/// at most kCandidates elements they move to `cand` and the remaining levels read shared memory
/// instead of the n elements (a top-k of 50 over 32k logits then reads them about 4 times, not
/// once per level).
template <bool COMPACT, typename KeyWeight>
__device__ Pick descend(const KeyWeight &keyWeight, long long n, unsigned long long target,
                        unsigned long long prefix, unsigned long long before, int startShift,
                        Shared &sh, Candidates *cand) {
  const int warps = blockDim.x >> 5;
  __syncthreads();
  for (int shift = startShift; shift >= 0; shift -= 4) {
    const unsigned long long high = shift == 60 ? 0ull : ~0ull << (shift + 4);
    unsigned long long w16[16];
    unsigned c16[16];
#pragma unroll
    for (int b = 0; b < 16; ++b)
      w16[b] = 0, c16[b] = 0;
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      unsigned long long key;
      const unsigned long long w = keyWeight(k, key);
      if (w == 0 || (key & high) != prefix)
        continue;
      const unsigned d = unsigned(key >> shift) & 15u;
#pragma unroll
      for (int b = 0; b < 16; ++b) {
        const bool hit = d == unsigned(b);
        w16[b] += hit ? w : 0ull;
        c16[b] += hit ? 1u : 0u;
      }
    }
    warpBinsToShared(w16, c16, sh);
    // The 16 bins' totals over the warps, one thread per bin (a serial sum of 16 x warps
    // shared loads by one thread took most of a level), then thread 0 walks the bins.
    if (threadIdx.x < 16) {
      unsigned long long w = 0;
      unsigned c = 0;
      for (int i = 0; i < warps; ++i)
        w += sh.warpWeight[i][threadIdx.x], c += sh.warpCount[i][threadIdx.x];
      sh.binTotalWeight[threadIdx.x] = w;
      sh.binTotalCount[threadIdx.x] = c;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long acc = 0, binWeight = 0;
      unsigned binCount = 0;
      int chosen = -1;
      for (int d = 15; d >= 0; --d) {
        const unsigned long long w = sh.binTotalWeight[d];
        const unsigned c = sh.binTotalCount[d];
        if (c == 0)
          continue;
        chosen = d, binWeight = w, binCount = c; // the last candidate bin if target > total
        if (acc + w >= target)
          break;
        acc += w;
      }
      if (chosen < 0) // no candidate at all: cannot happen for 1 <= target <= total
        chosen = 0, binCount = 1;
      sh.target = target - acc;
      sh.before = before + acc;
      sh.prefix = prefix | (unsigned long long)chosen << shift;
      sh.binWeight = binWeight;
      sh.count = binCount;
      sh.found = sh.prefix;
    }
    __syncthreads();
    target = sh.target;
    before = sh.before;
    prefix = sh.prefix;
    const unsigned count = sh.count;
    const unsigned long long binWeight = sh.binWeight;
    if (count <= 1 || shift == 0) {
      if (shift > 0) {
        // One candidate left under `prefix`: find its full key.
        const unsigned long long mask = ~0ull << shift;
        for (long long k = threadIdx.x; k < n; k += blockDim.x) {
          unsigned long long key;
          if (keyWeight(k, key) != 0 && (key & mask) == prefix)
            sh.found = key;
        }
        __syncthreads();
        prefix = sh.found;
      }
      __syncthreads();
      return {prefix, before + binWeight};
    }
    if constexpr (COMPACT) {
      if (count <= unsigned(kCandidates)) {
        compactCandidates(keyWeight, n, ~0ull << shift, prefix, *cand);
        return descend<false>(CandidateKeys{cand}, (long long)count, target, prefix, before,
                              shift - 4, sh, nullptr);
      }
    }
  }
  return {prefix, before}; // not reached: shift 0 returns above
}

/// Sorts the `c` candidates of `cand` (1 <= c <= kCandidates) by key, descending, each weight
/// moving with its key: a bitonic network over the next power of two (Batcher 1968), the entries
/// past c padded with key 0 and weight 0 (no element has rank key 0: its id would be 2^32 - 1),
/// which sort to the end. log2(N) (log2(N) + 1) / 2 steps of N / 2 compare-exchanges, one block
/// barrier each (66 for 2048 candidates). Block-wide; every thread may read `cand` afterwards.
__device__ __forceinline__ void sortCandidatesDescending(Candidates &cand, int c) {
  int n2 = 1;
  while (n2 < c)
    n2 <<= 1;
  for (int i = c + int(threadIdx.x); i < n2; i += int(blockDim.x))
    cand.key[i] = 0ull, cand.weight[i] = 0ull;
  __syncthreads();
  for (int size = 2; size <= n2; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = int(threadIdx.x); t < n2 / 2; t += int(blockDim.x)) {
        const int lo = 2 * t - (t & (stride - 1)), hi = lo + stride; // lo has bit `stride` clear
        const unsigned long long a = cand.key[lo], b = cand.key[hi];
        // Descending runs where bit `size` of lo is clear, ascending elsewhere; the last stage
        // (size = n2) is descending throughout.
        if ((lo & size) == 0 ? a < b : a > b) {
          cand.key[lo] = b, cand.key[hi] = a;
          const unsigned long long w = cand.weight[lo];
          cand.weight[lo] = cand.weight[hi], cand.weight[hi] = w;
        }
      }
      __syncthreads();
    }
}

/// Replaces weight[0..m) by its inclusive prefix sums (integers: exact, the same for any block
/// size): each thread sums a contiguous segment, the segments' offsets come from a warp scan and
/// the warps' totals. Block-wide; every thread may read the sums afterwards.
__device__ __forceinline__ void inclusiveScanWeights(unsigned long long *weight, int m,
                                                     Shared &sh) {
  const int per = (m + int(blockDim.x) - 1) / int(blockDim.x);
  const int b0 = min(m, int(threadIdx.x) * per), b1 = min(m, b0 + per);
  unsigned long long own = 0;
  for (int i = b0; i < b1; ++i) {
    own += weight[i];
    weight[i] = own;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned long long x = own; // inclusive scan of the segment totals within the warp
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned long long y = __shfl_up_sync(0xffffffffu, x, o);
    x += lane >= o ? y : 0ull;
  }
  __syncthreads(); // earlier readers of sh.scalar are done
  if (lane == 31)
    sh.scalar[warp] = x;
  __syncthreads();
  unsigned long long offset = x - own;
  for (int w = 0; w < warp; ++w)
    offset += sh.scalar[w];
  for (int i = b0; i < b1; ++i)
    weight[i] += offset;
  __syncthreads();
}

/// The first index i < m whose cumulative weight cum[i] reaches `target` (cum non-decreasing,
/// 1 <= target <= cum[m - 1]): the element descend() picks for that target, since the sorted
/// order is the descending key order. Every thread searches the same way (no barrier).
__device__ __forceinline__ int firstReaching(const unsigned long long *cum, int m,
                                             unsigned long long target) {
  int lo = 0, hi = m - 1;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (cum[mid] >= target)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/// Steps 3-5 of sampleRow over candidates sorted by sortCandidatesDescending whose weights
/// inclusiveScanWeights turned into cumulative sums, restricted to the first m (the top-k
/// survivors): the top-p prefix (ceil(topP * total) of their total), then the draw.
__device__ __forceinline__ long long drawFromSorted(const Candidates &cand, int m, float topP,
                                                    unsigned long long seed,
                                                    unsigned long long offset) {
  unsigned long long total = cand.weight[m - 1];
  if (topP < 1.0f) {
    unsigned long long target = 1;
    if (topP > 0.0f) {
      const double want = ceil(double(topP) * double(total));
      target = want < 1.0 ? 1ull : want >= double(total) ? total : (unsigned long long)want;
    }
    total = cand.weight[firstReaching(cand.weight, m, target)];
  }
  const unsigned long long r = __umul64hi(philox64(seed, offset), total);
  return idOf(cand.key[firstReaching(cand.weight, m, r + 1)]);
}

/// descend over all of keyWeight's elements (COMPACT: with `cand` as the candidate buffer).
template <bool COMPACT, typename KeyWeight>
__device__ Pick selectDescending(const KeyWeight &keyWeight, long long n, unsigned long long target,
                                 Shared &sh, Candidates *cand) {
  return descend<COMPACT>(keyWeight, n, target, 0ull, 0ull, 60, sh, cand);
}

/// Steps 3 (the total) to 5 (the draw) of sampleRow over the weights `weight` of n elements
/// (the survivors of top-k, zero weight for the others).
template <bool COMPACT, typename Weight>
__device__ long long sampleSurvivors(const Weight &weight, long long n, float topP,
                                     unsigned long long seed, unsigned long long offset,
                                     Shared &sh, Candidates *cand) {
  unsigned long long total = 0;
  for (long long k = threadIdx.x; k < n; k += blockDim.x) {
    unsigned long long key;
    total += weight(k, key);
  }
  total = blockSumU64(total, sh);
  // 4. Top-p: the smallest prefix whose weight reaches ceil(p * total).
  if (topP < 1.0f) {
    unsigned long long target = 1;
    if (topP > 0.0f) {
      const double want = ceil(double(topP) * double(total));
      target = want < 1.0 ? 1ull : want >= double(total) ? total : (unsigned long long)want;
    }
    total = selectDescending<COMPACT>(weight, n, target, sh, cand).cumulative;
  }
  // 5. The draw: r uniform in [0, total), the element where the cumulative weight passes r.
  const unsigned long long r = __umul64hi(philox64(seed, offset), total);
  return idOf(selectDescending<COMPACT>(weight, n, r + 1, sh, cand).key);
}


/// Candidate thresholds of sampleByThreshold: the logits within thresholdDistance(j) of the
/// maximum, 0.5 to 64 (the same for any temperature: a top-k does not depend on it).
constexpr int kThresholds = 8;
__device__ __forceinline__ float thresholdDistance(int j) { return 0.5f * float(1 << j); }

/// sampleRow's steps 2-5 from shared memory when the elements that can matter lie close to the
/// maximum `top` (the usual case): one pass counts, per threshold thresholdDistance(j), the
/// elements with x >= top - that distance and (without top-k) their softmax weight; the nearest
/// threshold that holds the top-k (or the top-p mass, or the draw) and at most kCandidates
/// elements is chosen, a second pass moves those elements to `cand`, and the selections run
/// there, sorted (sortCandidatesDescending, inclusiveScanWeights, firstReaching). Such a set is
/// a prefix of the descending key order, so every selection gives the element the full-row
/// selections give. Returns false (nothing chosen, the caller samples over
/// the row) when no threshold qualifies, e.g. nearly flat logits or a top-k above kCandidates.
/// Block-uniform.
template <typename Load>
__device__ bool sampleByThreshold(const Load &load, long long n, float top, float temperature,
                                  int topK, float topP, unsigned long long seed,
                                  unsigned long long offset, Shared &sh, Candidates &cand,
                                  long long &id) {
  const bool cut = topK > 0 && (long long)topK < n;
  if (cut && topK > kCandidates)
    return false;
  const bool needMass = !cut; // top-k: counts only, the weights come with the candidates
  auto weightOf = [&](float x) -> unsigned long long {
    return __float2ull_rn(expf((x - top) / temperature) * kWeightScale);
  };
  unsigned cnt[kThresholds];
  unsigned long long mass[kThresholds];
#pragma unroll
  for (int j = 0; j < kThresholds; ++j)
    cnt[j] = 0, mass[j] = 0;
  unsigned long long total = 0;
  forEachLoaded(load, n, [&](float x, long long) {
    const float d = top - x; // NaN and -inf compare false below
    if (!(d <= thresholdDistance(kThresholds - 1)) && !needMass)
      return;
    const unsigned long long w = needMass && x == x ? weightOf(x) : 0ull;
    total += w;
#pragma unroll
    for (int j = 0; j < kThresholds; ++j) {
      const bool in = d <= thresholdDistance(j);
      cnt[j] += in ? 1u : 0u;
      mass[j] += in ? w : 0ull;
    }
  });
  // Block sums (integers: the same in any order); every thread reads them.
  const int warps = blockDim.x >> 5;
  __syncthreads();
  warpBinsToShared(mass, cnt, sh);
#pragma unroll
  for (int j = 0; j < kThresholds; ++j) {
    unsigned c = 0;
    unsigned long long m = 0;
    for (int w = 0; w < warps; ++w)
      c += sh.warpCount[w][j], m += sh.warpWeight[w][j];
    cnt[j] = c, mass[j] = m;
  }
  if (needMass)
    total = blockSumU64(total, sh);
  // The nearest threshold that holds what the selection needs.
  unsigned long long target = 0;
  if (!cut) {
    if (topP < 1.0f) {
      target = 1;
      if (topP > 0.0f) {
        const double want = ceil(double(topP) * double(total));
        target = want < 1.0 ? 1ull : want >= double(total) ? total : (unsigned long long)want;
      }
    } else {
      target = __umul64hi(philox64(seed, offset), total) + 1;
    }
  }
  int chosen = -1;
#pragma unroll
  for (int j = kThresholds - 1; j >= 0; --j)
    if (cut ? cnt[j] >= unsigned(topK) : mass[j] >= target)
      chosen = j;
  if (chosen < 0 || cnt[chosen] > unsigned(kCandidates))
    return false;
  // The elements within the chosen distance, in shared memory.
  float limit = 0.0f;
#pragma unroll
  for (int j = 0; j < kThresholds; ++j)
    limit = j == chosen ? thresholdDistance(j) : limit;
  __syncthreads();
  if (threadIdx.x == 0)
    cand.count = 0;
  __syncthreads();
  for (long long k = threadIdx.x; k < n; k += blockDim.x) {
    const float x = load(k);
    if (top - x <= limit) {
      const unsigned i = atomicAdd(&cand.count, 1u);
      cand.key[i] = rankKey(x, k);
      cand.weight[i] = weightOf(x);
    }
  }
  __syncthreads();
  // The candidates in descending key order with cumulative weights: each selection is then a
  // binary search (the radix descents over them cost 3 x up to 16 block-wide levels). With a
  // top-k the survivors are the first topK; without, `target` comes from the whole row's mass.
  const int c = int(cand.count);
  sortCandidatesDescending(cand, c);
  const int m = cut ? topK : c;
  inclusiveScanWeights(cand.weight, m, sh);
  if (cut) {
    id = drawFromSorted(cand, m, topP, seed, offset);
  } else if (topP < 1.0f) {
    const unsigned long long nucleus = cand.weight[firstReaching(cand.weight, m, target)];
    const unsigned long long r = __umul64hi(philox64(seed, offset), nucleus);
    id = idOf(cand.key[firstReaching(cand.weight, m, r + 1)]);
  } else {
    id = idOf(cand.key[firstReaching(cand.weight, m, target)]);
  }
  return true;
}

} // namespace sample

/// The next token of one row of `n` logits (`load(k)` returns logit k as float) by one block
/// (blockDim.x a multiple of 32, at most 1024): the rule of kiln.sample (KilnOps.td) and of
/// kiln_sampling_params_t. `temperature <= 0` or NaN: greedy, the first maximum (NaN never
/// picked; all NaN: 0). Otherwise softmax(x / temperature) restricted to the `topK` largest
/// (`topK <= 0` or `>= n`: all; ties by lower id), then to the smallest most likely set whose
/// probability reaches `topP` (`topP >= 1` or NaN: all; `<= 0`: the most likely), drawn by
/// inverse CDF with Philox4x32-10 at (`seed`, `offset`). A maximum that is not finite gives the
/// greedy token. Thread 0 writes the id to *out. Needs n <= sample::kMaxVocab. COMPACT false
/// keeps every radix level on the n logits (the same tokens, slower; for tests). Uses about
/// 34 KiB of static shared memory.
///
/// CLUSTER > 1: the row's blocks are blockIdx.x = 0 .. CLUSTER - 1, which on sm_90 are one
/// thread-block cluster (the kernel declares KILN_CLUSTER_DIMS(CLUSTER, 1, 1)): each block finds
/// the maximum of its slice of the row, block 0 combines them over distributed shared memory
/// and goes on alone (greedy: that is the token; else the steps below, over the whole row).
/// Below sm_90 block 0 does all of it and the others return at once.
template <typename Load, bool COMPACT = true, int CLUSTER = 1>
__device__ void sampleRow(const Load &load, long long n, float temperature, int topK, float topP,
                          unsigned long long seed, unsigned long long offset, long long *out) {
  using namespace sample;
  static_assert(CLUSTER >= 1 && CLUSTER <= 8, "CLUSTER: 1 (no cluster) to 8 (portable)");
  __shared__ Shared sh;
  __shared__ Candidates cand;
  // 1. The first maximum.
  unsigned long long best = 0;
  auto maxOf = [&](long long lo, long long hi) {
    forEachLoaded([&](long long k) { return load(lo + k); }, hi - lo, [&](float x, long long k) {
      const unsigned long long key = rankKey(x, lo + k);
      best = key > best ? key : best;
    });
    best = blockMaxU64(best, sh);
  };
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (CLUSTER > 1) {
    __shared__ unsigned long long sliceBest;
    const long long per = (n + CLUSTER - 1) / CLUSTER, rank = blockIdx.x;
    const long long lo = rank * per < n ? rank * per : n, hi = lo + per < n ? lo + per : n;
    maxOf(lo, hi);
    if (threadIdx.x == 0)
      sliceBest = best;
    sm90::clusterSync(); // every slice's maximum written and visible to the cluster
    if (rank == 0) {
      const unsigned addr = unsigned(__cvta_generic_to_shared(&sliceBest));
      for (unsigned r = 1; r < unsigned(CLUSTER); ++r) {
        const unsigned long long v = sm90::ldClusterU64(addr, r);
        best = v > best ? v : best;
      }
    }
    sm90::clusterSync(); // no block leaves while block 0 reads its shared memory
    if (rank != 0)
      return;
  } else {
    maxOf(0, n);
  }
#else
  if (CLUSTER > 1 && blockIdx.x != 0)
    return;
  maxOf(0, n);
#endif
  const float top = fromOrderBits(unsigned(best >> 32));
  if (!(temperature > 0.0f) || !(fabsf(top) < __int_as_float(0x7f800000))) {
    if (threadIdx.x == 0)
      *out = n > 0 ? idOf(best) : 0;
    return;
  }
  // 2-5 from shared memory when the elements that matter are near the maximum.
  if constexpr (COMPACT) {
    long long id;
    if (sampleByThreshold(load, n, top, temperature, topK, topP, seed, offset, sh, cand, id)) {
      if (threadIdx.x == 0)
        *out = id;
      return;
    }
  }
  // 2. Top-k: the key of the k-th largest logit; survivors have keys >= kth.
  unsigned long long kth = 0;
  const bool cut = topK > 0 && (long long)topK < n;
  if (cut) {
    auto one = [&](long long k, unsigned long long &key) -> unsigned long long {
      key = rankKey(load(k), k);
      return 1ull;
    };
    kth = selectDescending<COMPACT>(one, n, (unsigned long long)topK, sh, &cand).key;
  }
  // 3. Softmax weights of the survivors in 2^-40 fixed point (the maximum's is 2^40).
  auto weight = [&](long long k, unsigned long long &key) -> unsigned long long {
    const float x = load(k);
    key = rankKey(x, k);
    if (key < kth || x != x)
      return 0ull;
    return __float2ull_rn(expf((x - top) / temperature) * kWeightScale);
  };
  long long id;
  if (COMPACT && cut && topK <= kCandidates) {
    // The topK survivors (keys are unique) fit in shared memory: steps 3-5 read only them.
    compactCandidates(weight, n, 0ull, 0ull, cand);
    const int c = int(cand.count); // >= 1: the maximum's weight is 2^40
    sortCandidatesDescending(cand, c);
    inclusiveScanWeights(cand.weight, c, sh);
    id = drawFromSorted(cand, c, topP, seed, offset);
  } else {
    id = sampleSurvivors<COMPACT>(weight, n, topP, seed, offset, sh, &cand);
  }
  if (threadIdx.x == 0)
    *out = id;
}

} // namespace kiln
