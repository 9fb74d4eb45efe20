// sample_test.cu - the next-token sampler of generated decode steps (kiln::sampleRow,
// compiler/codegen/cuda/sample.cuh) against host references.
//
//   test/gpu/build_sample_test.sh && build/sample_test
//
// 1. Philox4x32-10 at key 0, counter 0 gives Random123's known answer, on host and device.
// 2. Greedy rows (temperature 0, -1, NaN; top_k 1 at temperature 1; a row holding +inf) give the
//    host's first maximum with NaN never picked, over rows with ties and NaNs, V up to 128000.
// 3. Distribution: 200000 draws (one row each, counters 0..N-1) of small vocabularies with ties
//    against the exact distribution of kiln_sampling_params_t's rule computed in fp64 on the host:
//    chi-square below dof + 6 sqrt(2 dof) + 10 (p ~ 1e-6 for these dofs), and no draw outside
//    the kept set.
// 4. Reproducibility: the same logits, parameters, seed and counter give the same token at 128
//    and 512 threads and in any row; seeds 1 and 2 give different streams.
// 5. The shared-memory candidates (sorted there, then binary searches): at V = 32000 and 128256,
//    model-like logits, greedy, top-k, top-p, full vocabulary, top-k above and at the candidate
//    capacity, and nearly flat rows (top-k survivors of 1 to 2048 sorted), every row's token
//    equals the full-pass sampler's (sampleRow<..., false>).
// 6. The cluster form (a row's maximum over 2 or 8 blocks, block 0 going on alone): every row's
//    token equals the one-block sampler's, greedy (ties, NaN, +inf, V 1 to 128000) and sampled.
//   build/sample_test --bench   microseconds per launch at 1 and 8 rows, with and without them,
//                               and over a cluster of 8 blocks.
// Exit 0 pass, 1 fail, 2 CUDA error, 77 no GPU.
#include "kiln/sample.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

/// Row r samples logits[r * rowStride ...] (rowStride 0: every row the same logits).
/// COMPACT false: sampleRow without the shared-memory candidates (the reference of testCompact).
template <bool COMPACT>
__global__ void sampleKernel(const float *logits, long long rowStride, long long V,
                             const float *temperature, const int *topK, const float *topP,
                             const unsigned long long *seed, const unsigned long long *offset,
                             long long *out) {
  const long long row = blockIdx.x;
  auto load = [&](long long k) { return logits[row * rowStride + k]; };
  kiln::sampleRow<decltype(load), COMPACT>(load, V, temperature[row], topK[row], topP[row],
                                           seed[row], offset[row], out + row);
}

/// The cluster form (sampleRow's CLUSTER; the generated kernel of a large vocabulary): row
/// blockIdx.y over CL blocks blockIdx.x, one cluster on sm_90.
template <int CL>
__global__ void KILN_CLUSTER_DIMS(CL, 1, 1)
    sampleClusterKernel(const float *logits, long long rowStride, long long V,
                        const float *temperature, const int *topK, const float *topP,
                        const unsigned long long *seed, const unsigned long long *offset,
                        long long *out) {
  const long long row = blockIdx.y;
  auto load = [&](long long k) { return logits[row * rowStride + k]; };
  kiln::sampleRow<decltype(load), true, CL>(load, V, temperature[row], topK[row], topP[row],
                                            seed[row], offset[row], out + row);
}

__global__ void philoxKernel(unsigned long long key, unsigned long long counter,
                             unsigned long long *out) {
  *out = kiln::sample::philox64(key, counter);
}

namespace {

int failures = 0;

void expect(bool ok, const char *what) {
  if (!ok) {
    std::printf("FAIL %s\n", what);
    ++failures;
  }
}

template <typename T> T *toDevice(const std::vector<T> &v) {
  T *d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, std::max<size_t>(v.size(), 1) * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

struct Params {
  float temperature = 0;
  int topK = 0;
  float topP = 1;
  unsigned long long seed = 0;
};

/// Runs `rows` rows (rowStride 0: one shared logits row) with per-row params and counters.
std::vector<long long> run(const std::vector<float> &logits, long long V, long long rowStride,
                           const std::vector<Params> &params,
                           const std::vector<unsigned long long> &offsets, unsigned threads,
                           bool compact = true, float *launchUs = nullptr, int cluster = 1) {
  const size_t rows = params.size();
  std::vector<float> t(rows), p(rows);
  std::vector<int> k(rows);
  std::vector<unsigned long long> s(rows);
  for (size_t r = 0; r < rows; ++r)
    t[r] = params[r].temperature, k[r] = params[r].topK, p[r] = params[r].topP,
    s[r] = params[r].seed;
  float *dLogits = toDevice(logits), *dT = toDevice(t), *dP = toDevice(p);
  int *dK = toDevice(k);
  unsigned long long *dS = toDevice(s), *dO = toDevice(offsets);
  long long *dOut = nullptr;
  CHECK_CUDA(cudaMalloc(&dOut, rows * sizeof(long long)));
  CHECK_CUDA(cudaMemset(dOut, 0xff, rows * sizeof(long long))); // poisoned: -1
  auto launch = [&] {
    if (cluster == 8)
      sampleClusterKernel<8><<<dim3(8, unsigned(rows)), threads>>>(dLogits, rowStride, V, dT, dK,
                                                                   dP, dS, dO, dOut);
    else if (cluster == 2)
      sampleClusterKernel<2><<<dim3(2, unsigned(rows)), threads>>>(dLogits, rowStride, V, dT, dK,
                                                                   dP, dS, dO, dOut);
    else if (compact)
      sampleKernel<true><<<unsigned(rows), threads>>>(dLogits, rowStride, V, dT, dK, dP, dS, dO,
                                                      dOut);
    else
      sampleKernel<false><<<unsigned(rows), threads>>>(dLogits, rowStride, V, dT, dK, dP, dS, dO,
                                                       dOut);
  };
  launch();
  CHECK_CUDA(cudaGetLastError());
  if (launchUs) {
    // Median-free mean of 50 back-to-back launches after 5 warm-up ones (the kernel runs for
    // tens of microseconds or more, far above the launch gap).
    for (int i = 0; i < 5; ++i)
      launch();
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    CHECK_CUDA(cudaEventRecord(start));
    for (int i = 0; i < 50; ++i)
      launch();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    *launchUs = ms * 1000.0f / 50;
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
  }
  std::vector<long long> out(rows);
  CHECK_CUDA(cudaMemcpy(out.data(), dOut, rows * sizeof(long long), cudaMemcpyDeviceToHost));
  for (void *ptr : {(void *)dLogits, (void *)dT, (void *)dP, (void *)dK, (void *)dS, (void *)dO,
                    (void *)dOut})
    CHECK_CUDA(cudaFree(ptr));
  return out;
}

/// NaN sorts as -inf (runtime/src/Generate.cpp's sampleToken).
double key(float v) { return std::isnan(v) ? -INFINITY : double(v); }

long long hostGreedy(const float *x, long long V) {
  long long best = 0;
  for (long long i = 1; i < V; ++i)
    if (key(x[i]) > key(x[best]))
      best = i;
  return best;
}

/// The exact probabilities of kiln_sampling_params_t's rule, fp64.
std::vector<double> exactDistribution(const std::vector<float> &x, const Params &p) {
  const size_t V = x.size();
  std::vector<size_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return key(x[a]) > key(x[b]); });
  size_t count = p.topK > 0 && size_t(p.topK) < V ? size_t(p.topK) : V;
  const double top = key(x[order[0]]);
  std::vector<double> w(count);
  double total = 0;
  for (size_t i = 0; i < count; ++i)
    total += w[i] = std::exp((key(x[order[i]]) - top) / p.temperature);
  if (p.topP < 1) {
    double mass = 0;
    size_t keep = 0;
    while (keep < count) {
      mass += w[keep++];
      if (mass >= double(p.topP) * total)
        break;
    }
    count = keep;
  }
  total = 0;
  for (size_t i = 0; i < count; ++i)
    total += w[i];
  std::vector<double> prob(V, 0.0);
  for (size_t i = 0; i < count; ++i)
    prob[order[i]] = w[i] / total;
  return prob;
}

void testPhilox() {
  // Random123 kat_vectors: philox4x32 10, counter 0, key 0 -> 6627e8d5 e169c58d ...
  const unsigned long long want = 0xe169c58d6627e8d5ull;
  unsigned long long *d = nullptr, got = 0;
  CHECK_CUDA(cudaMalloc(&d, 8));
  philoxKernel<<<1, 1>>>(0, 0, d);
  CHECK_CUDA(cudaMemcpy(&got, d, 8, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(d));
  expect(kiln::sample::philox64(0, 0) == want, "philox host known answer");
  expect(got == want, "philox device known answer");
}

void testGreedy() {
  std::mt19937 rng(7);
  for (long long V : {1LL, 7LL, 1000LL, 32000LL, 128000LL}) {
    const int rows = 6;
    std::vector<float> x(size_t(rows * V));
    std::uniform_int_distribution<int> level(-20, 20); // many ties
    for (float &v : x)
      v = float(level(rng)) * 0.25f;
    for (int r = 0; r < rows; ++r) // NaNs, one above every number if it counted
      for (long long i = r; i < V; i += 97)
        x[size_t(r * V + i)] = NAN;
    if (V > 3)
      x[size_t(5 * V + 2)] = INFINITY, x[size_t(5 * V + 3)] = INFINITY; // a non-finite max
    std::vector<Params> params(rows);
    params[1].temperature = -1;
    params[2].temperature = NAN;
    params[3].temperature = 1, params[3].topK = 1, params[3].seed = 3;
    params[4].temperature = 0.5f, params[4].topP = 1e-7f, params[4].seed = 4;
    params[5].temperature = 1; // +inf present: greedy
    std::vector<unsigned long long> offsets(rows, 5);
    for (unsigned threads : {128u, 512u}) {
      std::vector<long long> got = run(x, V, V, params, offsets, threads);
      for (int r = 0; r < rows; ++r) {
        const long long want = hostGreedy(&x[size_t(r * V)], V);
        if (got[r] != want) {
          std::printf("FAIL greedy V=%lld row %d threads %u: %lld, want %lld\n", V, r, threads,
                      got[r], want);
          ++failures;
        }
      }
    }
  }
  // Every logit NaN: token 0.
  std::vector<float> nan(100, NAN);
  std::vector<Params> one(1);
  expect(run(nan, 100, 100, one, {0}, 128)[0] == 0, "greedy over NaN only gives 0");
  one[0].temperature = 1;
  expect(run(nan, 100, 100, one, {0}, 128)[0] == 0, "sampling over NaN only gives 0");
}

void testDistribution() {
  std::mt19937 rng(11);
  struct Case {
    int V;
    Params p;
  };
  const Case cases[] = {{8, {1.0f, 0, 1.0f, 1}},   {40, {0.7f, 5, 1.0f, 2}},
                        {40, {1.3f, 0, 0.8f, 3}},  {64, {1.0f, 10, 0.6f, 4}},
                        {64, {2.0f, 63, 0.95f, 5}}, {600, {0.9f, 300, 0.9f, 6}}};
  const int N = 200000;
  for (const Case &c : cases) {
    std::vector<float> x(size_t(c.V));
    std::uniform_int_distribution<int> level(-12, 12);
    for (float &v : x)
      v = float(level(rng)) * 0.2f; // ties across the top-k boundary
    x[size_t(c.V / 2)] = NAN;
    std::vector<double> prob = exactDistribution(x, c.p);
    std::vector<Params> params(N, c.p);
    std::vector<unsigned long long> offsets(N);
    std::iota(offsets.begin(), offsets.end(), 0ull);
    std::vector<long long> got = run(x, c.V, 0, params, offsets, 128);
    std::vector<double> counts(size_t(c.V), 0.0);
    bool inRange = true;
    for (long long t : got) {
      if (t < 0 || t >= c.V) {
        inRange = false;
        break;
      }
      counts[size_t(t)] += 1;
    }
    double chi2 = 0;
    int kept = 0, outside = 0;
    for (int t = 0; t < c.V; ++t) {
      if (prob[t] > 0) {
        ++kept;
        const double e = prob[t] * N;
        chi2 += (counts[t] - e) * (counts[t] - e) / e;
      } else if (counts[t] > 0) {
        outside += int(counts[t]);
      }
    }
    const int dof = std::max(kept - 1, 1);
    const double bound = dof + 6 * std::sqrt(2.0 * dof) + 10;
    const bool ok = inRange && outside == 0 && chi2 < bound;
    std::printf("%s distribution V=%d T=%g top_k=%d top_p=%g: %d kept, chi2 %.1f (bound %.1f), "
                "%d draws outside the kept set\n",
                ok ? "PASS" : "FAIL", c.V, c.p.temperature, c.p.topK, c.p.topP, kept, chi2,
                bound, outside);
    failures += ok ? 0 : 1;
  }
}

void testReproducible() {
  const long long V = 5000;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(V));
  for (float &v : x)
    v = normal(rng);
  const int rows = 256;
  Params p{1.0f, 50, 0.9f, 1};
  std::vector<Params> params(rows, p);
  std::vector<unsigned long long> offsets(rows);
  std::iota(offsets.begin(), offsets.end(), 0ull);
  std::vector<long long> a = run(x, V, 0, params, offsets, 128);
  std::vector<long long> b = run(x, V, 0, params, offsets, 512);
  std::vector<long long> again = run(x, V, 0, params, offsets, 128);
  expect(a == b, "the same tokens at 128 and 512 threads");
  expect(a == again, "the same tokens when run again");
  // Rows in reverse order (other blocks) give each counter's token.
  std::vector<unsigned long long> reversed(offsets.rbegin(), offsets.rend());
  std::vector<long long> c = run(x, V, 0, params, reversed, 256);
  std::reverse(c.begin(), c.end());
  expect(a == c, "the same token for a counter in any row");
  // Another seed: another stream (the kept set holds up to 50 tokens).
  for (Params &q : params)
    q.seed = 2;
  std::vector<long long> d = run(x, V, 0, params, offsets, 128);
  int same = 0;
  for (int r = 0; r < rows; ++r)
    same += a[r] == d[r];
  std::printf("seeds 1 and 2 agree on %d of %d draws\n", same, rows);
  expect(same < rows / 2, "seeds 1 and 2 give different streams");
  std::set<long long> distinct(a.begin(), a.end());
  expect(distinct.size() > 5, "one seed's draws vary with the counter");
}

/// Logits like a language model's: normal with a heavier top, some ties.
std::vector<float> modelLikeLogits(long long V, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.5f);
  std::vector<float> x(size_t(V * rows));
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = normal(rng);
    x[i] = i % 7 == 0 ? std::round(v * 4.0f) * 0.25f : v; // ties
  }
  for (int r = 0; r < rows; ++r) // a few clear favourites per row
    for (int j = 0; j < 20; ++j)
      x[size_t(r * V + (j * 7919LL + r * 104729LL) % V)] = 9.0f - 0.3f * float(j);
  return x;
}

struct NamedParams {
  const char *name;
  Params p;
};
const NamedParams kModelParams[] = {
    {"greedy", {0.0f, 0, 1.0f, 1}},
    {"T0.8 k50 p0.95", {0.8f, 50, 0.95f, 2}},
    {"T1 p0.9", {1.0f, 0, 0.9f, 3}},
    {"T0.7 full vocab", {0.7f, 0, 1.0f, 4}},
    {"T1.2 k4000 p0.8", {1.2f, 4000, 0.8f, 5}},
    {"T1 k2048", {1.0f, 2048, 1.0f, 6}},
    {"T1 k2049 p0.99", {1.0f, 2049, 0.99f, 7}},
};

/// The shared-memory candidates change the cost, not the token: at model vocabularies every row
/// and counter gives the same token with and without them.
/// Rows whose tokens differ between two runs of the same rows.
int rowsDiffer(const std::vector<long long> &a, const std::vector<long long> &b) {
  int differ = 0;
  for (size_t r = 0; r < a.size(); ++r)
    differ += a[r] != b[r];
  return differ;
}

void testCompact() {
  for (long long V : {32000LL, 128256LL}) {
    const int rows = 48;
    std::vector<float> x = modelLikeLogits(V, rows, unsigned(V));
    for (const NamedParams &np : kModelParams) {
      std::vector<Params> params(rows, np.p);
      std::vector<unsigned long long> offsets(rows);
      for (int r = 0; r < rows; ++r)
        offsets[size_t(r)] = 1000003ull * unsigned(r);
      std::vector<long long> a = run(x, V, V, params, offsets, 512, true);
      std::vector<long long> b = run(x, V, V, params, offsets, 512, false);
      const int differ = rowsDiffer(a, b);
      std::printf("%s candidates V=%lld %s: %d of %d rows differ from the full-pass sampler\n",
                  differ ? "FAIL" : "PASS", V, np.name, differ, rows);
      failures += differ ? 1 : 0;
    }
  }
}

/// Nearly flat rows (every logit within 0.01 of the others): no threshold holds the selection in
/// kCandidates elements, so a top-k of at most kCandidates is found over the row and its
/// survivors are sorted in shared memory; above it everything runs over the row. Sorted sizes
/// from 1 to 2048 survivors, powers of two and not.
void testCompactFlat() {
  const long long V = 32000;
  const int rows = 24;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> flat(0.0f, 0.01f);
  std::vector<float> x(size_t(V * rows));
  for (float &v : x)
    v = flat(rng);
  const NamedParams flatParams[] = {
      {"flat T1 k1", {1.0f, 1, 1.0f, 8}},       {"flat T1 k3 p0.5", {1.0f, 3, 0.5f, 9}},
      {"flat T1 k50", {1.0f, 50, 1.0f, 10}},    {"flat T0.5 k1000 p0.9", {0.5f, 1000, 0.9f, 11}},
      {"flat T1 k2048", {1.0f, 2048, 1.0f, 12}}, {"flat T1 k3000 p0.3", {1.0f, 3000, 0.3f, 13}},
  };
  for (const NamedParams &np : flatParams) {
    std::vector<Params> params(rows, np.p);
    std::vector<unsigned long long> offsets(rows);
    for (int r = 0; r < rows; ++r)
      offsets[size_t(r)] = 7919ull * unsigned(r);
    std::vector<long long> a = run(x, V, V, params, offsets, 256, true);
    std::vector<long long> b = run(x, V, V, params, offsets, 256, false);
    const int differ = rowsDiffer(a, b);
    std::printf("%s candidates V=%lld %s: %d of %d rows differ from the full-pass sampler\n",
                differ ? "FAIL" : "PASS", V, np.name, differ, rows);
    failures += differ ? 1 : 0;
  }
}

/// The cluster form (2 and 8 blocks per row) gives every row the one-block sampler's token:
/// greedy rows with ties, NaNs and +inf (V from 1, fewer words than blocks, to 128000) and the
/// model-like rows of testCompact under every parameter set (the maximum feeds the sampling).
void testCluster() {
  std::mt19937 rng(11);
  for (long long V : {1LL, 5LL, 1000LL, 32000LL, 128000LL}) {
    const int rows = 6;
    std::vector<float> x(size_t(rows * V));
    std::uniform_int_distribution<int> level(-20, 20);
    for (float &v : x)
      v = float(level(rng)) * 0.25f;
    for (int r = 0; r < rows; ++r)
      for (long long i = r; i < V; i += 97)
        x[size_t(r * V + i)] = NAN;
    if (V > 3)
      x[size_t(5 * V + 2)] = INFINITY, x[size_t(5 * V + 3)] = INFINITY;
    std::vector<Params> params(rows);
    params[1].temperature = -1;
    params[3].temperature = 1, params[3].topK = 1, params[3].seed = 3;
    params[4].temperature = 0.7f, params[4].topP = 0.9f, params[4].seed = 4;
    params[5].temperature = 1;
    std::vector<unsigned long long> offsets(rows, 5);
    const std::vector<long long> want = run(x, V, V, params, offsets, 512);
    for (int cluster : {2, 8}) {
      const std::vector<long long> got = run(x, V, V, params, offsets, 512, true, nullptr, cluster);
      const int differ = rowsDiffer(got, want);
      std::printf("%s cluster %d V=%lld ties/NaN/inf rows: %d of %d rows differ from one block\n",
                  differ ? "FAIL" : "PASS", cluster, V, differ, rows);
      failures += differ ? 1 : 0;
    }
  }
  for (long long V : {32000LL, 128256LL}) {
    const int rows = 16;
    std::vector<float> x = modelLikeLogits(V, rows, unsigned(V) + 1);
    for (const NamedParams &np : kModelParams) {
      std::vector<Params> params(rows, np.p);
      std::vector<unsigned long long> offsets(rows);
      for (int r = 0; r < rows; ++r)
        offsets[size_t(r)] = 7919ull * unsigned(r);
      const std::vector<long long> a = run(x, V, V, params, offsets, 512);
      const std::vector<long long> b = run(x, V, V, params, offsets, 512, true, nullptr, 8);
      const int differ = rowsDiffer(a, b);
      std::printf("%s cluster 8 V=%lld %s: %d of %d rows differ from one block\n",
                  differ ? "FAIL" : "PASS", V, np.name, differ, rows);
      failures += differ ? 1 : 0;
    }
  }
}

/// --bench: microseconds per launch of B rows at model vocabularies, with and without the
/// shared-memory candidates.
void bench() {
  std::printf("%-18s %7s %4s %12s %14s %14s\n", "params", "V", "rows", "us", "us (no cand.)",
              "us (cluster 8)");
  for (long long V : {32000LL, 128256LL})
    for (int rows : {1, 8}) {
      std::vector<float> x = modelLikeLogits(V, rows, 3);
      for (const NamedParams &np : kModelParams) {
        std::vector<Params> params(size_t(rows), np.p);
        std::vector<unsigned long long> offsets(size_t(rows), 17);
        float us = 0, usFull = 0, usCluster = 0;
        run(x, V, V, params, offsets, 512, true, &us);
        run(x, V, V, params, offsets, 512, false, &usFull);
        run(x, V, V, params, offsets, 512, true, &usCluster, 8);
        std::printf("%-18s %7lld %4d %12.1f %14.1f %14.1f\n", np.name, V, rows, us, usFull,
                    usCluster);
      }
    }
}

} // namespace

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("sample_test: no GPU, skipped\n");
    return 77;
  }
  if (argc > 1 && std::string(argv[1]) == "--bench") {
    bench();
    return 0;
  }
  testPhilox();
  testGreedy();
  testDistribution();
  testReproducible();
  testCompact();
  testCompactFlat();
  testCluster();
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
