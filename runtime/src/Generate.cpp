//===- Generate.cpp - The text-generation loop (kiln_generate) ------------===//
//
// A kiln_generator holds one session per program of a --kv-cache artifact. The first program's
// session owns the KV-cache pools (its own input buffers); every other session binds them, so all
// programs read and write one cache. kiln_generate checks every request, reserves each
// sequence's blocks for its longest extent, prefills the prompts one after another
// (planPrefill's chunks), then decodes the unfinished sequences together, one token per step,
// through the smallest decode program that holds them (pickDecodeStep). A program compiled with
// the sampling inputs (kiln.sample, kiln-compile --device-sampling, the default) picks every
// row's token on the GPU: the loop fills each row's temperature, top_k, top_p, seed and draw
// counter and reads `next_token` (B integers back instead of B x vocab logits), greedy or not.
// An artifact without them (compiled before, or --device-sampling=false) reads `next_token`
// when every row is greedy and otherwise samples on the host from the sequence's logits row
// (sampleToken, also the reference the tests compare with). Host-side planning is in
// Generate.h; docs/generation.md describes the loop.
//
//===----------------------------------------------------------------------===//

#include "Generate.h"

#include "CudaSymbols.h"
#include "DType.h"
#include "Session.h"
#include "Status.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using kiln::makeStatus;
using kiln::makeStatusF;

namespace kiln::generate {

std::optional<size_t> pickDecodeStep(const std::vector<StepShape> &steps, int64_t active) {
  std::optional<size_t> best;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].tokens == 1 && steps[i].batch >= active &&
        (!best || steps[i].batch < steps[*best].batch))
      best = i;
  return best;
}

namespace {
/// planPrefill's plan from prompt token `first` on (the caller accounts for the chunks before).
std::vector<PrefillChunk> planPrefillFrom(const std::vector<StepShape> &steps,
                                          int64_t promptLength, int64_t capacity, int64_t first) {
  std::vector<PrefillChunk> plan;
  if (promptLength < 1 || promptLength > capacity)
    return plan;
  // Prefill steps of one sequence, largest first (ties: lowest index).
  std::vector<size_t> prefill;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].batch == 1 && steps[i].tokens > 1)
      prefill.push_back(i);
  std::stable_sort(prefill.begin(), prefill.end(),
                   [&](size_t a, size_t b) { return steps[a].tokens > steps[b].tokens; });
  std::optional<size_t> single = pickDecodeStep(steps, 1);
  for (int64_t start = first; start < promptLength;) {
    const int64_t rest = promptLength - start;
    auto fits = [&](size_t s) { return start + steps[s].tokens <= capacity; };
    // The smallest step that holds the rest, padded by at most `maxPadding` tokens.
    auto smallestHolding = [&](int64_t maxPadding) -> std::optional<size_t> {
      for (auto it = prefill.rbegin(); it != prefill.rend(); ++it)
        if (steps[*it].tokens >= rest && steps[*it].tokens - rest <= maxPadding && fits(*it))
          return *it;
      return std::nullopt;
    };
    // 1. The smallest step that holds the rest with at most 1/8 of it padding: one chunk
    //    instead of many smaller ones (a 2047-token prompt runs one chunk of 2048, not 7 of 256
    //    and 8 of 32), and the padding waste stays within 12.5%.
    std::optional<size_t> chosen = smallestHolding(rest / 7);
    // 2. The largest step the rest fills completely.
    if (!chosen)
      for (size_t s : prefill)
        if (steps[s].tokens <= rest && fits(s)) {
          chosen = s;
          break;
        }
    // 3. The smallest step that holds the rest (padded).
    if (!chosen)
      chosen = smallestHolding(std::numeric_limits<int64_t>::max());
    // 4. The largest step that fits the cache, partly filled; 5. one token per step.
    if (!chosen)
      for (size_t s : prefill)
        if (fits(s)) {
          chosen = s;
          break;
        }
    if (!chosen)
      chosen = single;
    if (!chosen)
      return {};
    const int64_t n = std::min(rest, steps[*chosen].tokens);
    plan.push_back({*chosen, start, n});
    start += n;
  }
  return plan;
}
} // namespace

PrefillCosts::PrefillCosts(const std::vector<StepShape> &steps, int64_t longest,
                           int64_t capacity, double paddingPriceUs)
    : capacity_(capacity) {
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].batch == 1 && steps[i].tokens > 1)
      candidates_.push_back({i, steps[i].tokens, steps[i].costUs});
  if (std::optional<size_t> single = pickDecodeStep(steps, 1))
    candidates_.push_back({*single, steps[*single].tokens, steps[*single].costUs});
  std::stable_sort(candidates_.begin(), candidates_.end(),
                   [](const Candidate &a, const Candidate &b) { return a.tokens > b.tokens; });
  byTime_ = !candidates_.empty() &&
            std::all_of(candidates_.begin(), candidates_.end(), [](const Candidate &c) {
              return std::isfinite(c.costUs) && c.costUs > 0;
            });
  if (!byTime_ || longest < 0)
    return;
  // (The one-token step may have padding rows, batch > 1: it still carries one token.)
  const double inf = std::numeric_limits<double>::infinity();
  full_.assign(size_t(longest) + 1, inf);
  fullChoice_.assign(size_t(longest) + 1, -1);
  full_[0] = 0;
  for (int64_t m = 1; m <= longest; ++m)
    for (size_t c = 0; c < candidates_.size(); ++c) {
      const int64_t t = candidates_[c].tokens;
      if (t > m || full_[size_t(m - t)] == inf)
        continue;
      const double cost = candidates_[c].costUs + full_[size_t(m - t)];
      if (cost < full_[size_t(m)] * (1 - 1e-9)) { // ties: the larger step (listed first)
        full_[size_t(m)] = cost;
        fullChoice_[size_t(m)] = int(c);
      }
    }
  // The last step of each prompt length P: candidate c with n real tokens starts at P - n, costs
  // c's cost + full_[P - n], and needs P - n + tokens <= capacity when padded (n < tokens; a
  // full one ends at P <= capacity). Its padding, tokens - (P - start), is priced at
  // paddingPriceUs per token: the start minimizes full_[start] + price x start, the same for
  // every P. For each c the best start over its window [P - tokens, min(P - 1, capacity -
  // tokens)] comes from a monotone deque as P grows (ties: the earliest start, the least
  // padding), so all lengths cost O(longest x steps).
  const double price = paddingPriceUs > 0 ? paddingPriceUs : 0;
  auto startKey = [&](int64_t st) { return full_[size_t(st)] + price * double(st); };
  lasts_.assign(size_t(longest) + 1, std::nullopt);
  std::vector<std::deque<int64_t>> windows(candidates_.size());
  std::vector<int64_t> pushed(candidates_.size(), -1); // the last start pushed per candidate
  for (int64_t p = 1; p <= longest && p <= capacity; ++p) {
    std::optional<Last> &choice = lasts_[size_t(p)];
    int64_t bestPadding = 0;
    double bestPriced = 0;
    for (size_t c = 0; c < candidates_.size(); ++c) {
      const int64_t t = candidates_[c].tokens;
      std::deque<int64_t> &w = windows[c];
      for (int64_t st = std::min(p - 1, capacity - t); pushed[c] < st;) {
        const int64_t next = ++pushed[c];
        if (next < 0 || !std::isfinite(full_[size_t(next)]))
          continue;
        while (!w.empty() && startKey(w.back()) > startKey(next))
          w.pop_back();
        w.push_back(next);
      }
      while (!w.empty() && w.front() < p - t)
        w.pop_front();
      if (w.empty())
        continue;
      const int64_t st = w.front();
      const double cost = candidates_[c].costUs + full_[size_t(st)];
      const int64_t padding = t - (p - st);
      const double priced = cost + price * double(padding);
      if (!choice || priced < bestPriced * (1 - 1e-9) ||
          (priced <= bestPriced * (1 + 1e-9) && padding < bestPadding)) {
        choice = Last{c, p - st, cost};
        bestPadding = padding;
        bestPriced = priced;
      }
    }
  }
}

std::optional<PrefillCosts::Last> PrefillCosts::last(int64_t promptLength) const {
  if (!byTime_ || promptLength < 1 || promptLength > capacity_ ||
      size_t(promptLength) >= lasts_.size())
    return std::nullopt;
  return lasts_[size_t(promptLength)];
}

int64_t PrefillCosts::tokensRun(int64_t promptLength, double *costUs) const {
  std::optional<Last> l = last(promptLength);
  if (!l)
    return 0;
  if (costUs)
    *costUs = l->cost;
  return promptLength - l->tokens + candidates_[l->candidate].tokens;
}

std::vector<PrefillChunk> planPrefill(const std::vector<StepShape> &steps, int64_t promptLength,
                                      int64_t capacity, double paddingPriceUs) {
  PrefillCosts costs(steps, promptLength > 0 && promptLength <= capacity ? promptLength : -1,
                     capacity, paddingPriceUs);
  if (!costs.byTime())
    return planPrefillFrom(steps, promptLength, capacity, 0);
  std::optional<PrefillCosts::Last> last = costs.last(promptLength);
  if (!last)
    return {};
  // The full steps of the least-cost cover of the tokens before the last step, largest first.
  std::vector<size_t> full;
  for (int64_t m = promptLength - last->tokens; m > 0;) {
    const int c = costs.fullChoice_[size_t(m)];
    full.push_back(size_t(c));
    m -= costs.candidates_[size_t(c)].tokens;
  }
  std::stable_sort(full.begin(), full.end()); // candidates_ is largest first
  full.push_back(last->candidate);
  std::vector<PrefillChunk> plan;
  int64_t start = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    const PrefillCosts::Candidate &c = costs.candidates_[full[i]];
    const int64_t n = i + 1 == full.size() ? last->tokens : c.tokens;
    plan.push_back({c.step, start, n});
    start += n;
  }
  return plan;
}

int64_t prefillTokensRun(const std::vector<StepShape> &steps, int64_t promptLength,
                         int64_t capacity, double paddingPriceUs) {
  if (promptLength < 1 || promptLength > capacity)
    return 0;
  {
    PrefillCosts costs(steps, promptLength, capacity, paddingPriceUs);
    if (costs.byTime())
      return costs.tokensRun(promptLength);
  }
  int64_t largest = 0;
  for (const StepShape &s : steps)
    if (s.batch == 1 && s.tokens > 1)
      largest = std::max(largest, s.tokens);
  const int64_t leading = largest > 0 ? promptLength / largest * largest : 0;
  const std::vector<PrefillChunk> rest =
      planPrefillFrom(steps, promptLength, capacity, leading);
  if (rest.empty() && leading < promptLength)
    return 0;
  int64_t run = leading;
  for (const PrefillChunk &c : rest)
    run += steps[c.step].tokens;
  return run;
}

namespace {
/// The largest of the mean paddings of the plans by time at `price` over prompt lengths
/// 1..lengths and 1..min(prefix, lengths): padded / run averaged over the lengths, and all
/// padded tokens over all tokens run (kiln_generator_prefill_waste's two numbers), for each
/// range. The steps must plan by time.
double meanPadding(const std::vector<StepShape> &steps, int64_t lengths, int64_t prefix,
                   int64_t capacity, double price) {
  const PrefillCosts costs(steps, lengths, capacity, price);
  double sum = 0, padded = 0, run = 0, worst = 0;
  const int64_t cut = std::min(std::max<int64_t>(prefix, 1), lengths);
  for (int64_t p = 1; p <= lengths; ++p) {
    const int64_t r = std::max(costs.tokensRun(p), p);
    sum += double(r - p) / double(r);
    padded += double(r - p);
    run += double(r);
    if (p == cut || p == lengths)
      worst = std::max({worst, sum / double(p), padded / run});
  }
  return worst;
}

/// The most tokens one prefill step of one row takes (the longest chunk; 0 without one).
int64_t longestChunk(const std::vector<StepShape> &steps) {
  int64_t most = 0;
  for (const StepShape &s : steps)
    if (s.batch == 1 && s.tokens > 1)
      most = std::max(most, s.tokens);
  return most;
}
} // namespace

double prefillPaddingPrice(const std::vector<StepShape> &steps, int64_t capacity) {
  if (capacity < 1 || !PrefillCosts(steps, -1, capacity).byTime())
    return 0;
  // The plans of the first kPaddingPriceLengths lengths only (a capacity of millions would take
  // seconds); a prompt longer than those starts with full chunks of the largest step anyway.
  const int64_t lengths = std::min(capacity, kPaddingPriceLengths);
  // Both ranges: every length a sequence holds, and the prompts up to the longest chunk (the
  // range a --shape of S1 <= 2048 compiles for, over which the bound is stated).
  const int64_t prefix = longestChunk(steps);
  auto meanPadding = [&](double price) {
    return kiln::generate::meanPadding(steps, lengths, prefix, capacity, price);
  };
  if (meanPadding(0) <= kMaxMeanPadding)
    return 0;
  // The largest step cost bounds a padded token's worth: at 1000 x that price every plan pays
  // more for one padded token than for any chunk, so it pads as little as it can.
  double most = 0;
  for (const StepShape &s : steps)
    most = std::max(most, s.costUs);
  double low = 0, high = std::max(most, 1.0);
  while (meanPadding(high) > kMaxMeanPadding && high < most * 1000)
    high *= 4;
  while (high - low > 0.01 * high) { // meanPadding(high) is within the bound (or high is the cap)
    const double mid = 0.5 * (low + high);
    (meanPadding(mid) <= kMaxMeanPadding ? high : low) = mid;
  }
  return high;
}

BlockAllocator::BlockAllocator(int64_t poolBlocks, int64_t blockSize, bool reserveSpare)
    : spare_(reserveSpare && poolBlocks > 0 ? static_cast<int32_t>(poolBlocks - 1) : -1),
      blockSize_(std::max<int64_t>(blockSize, 1)) {
  for (int64_t b = poolBlocks - (spare_ >= 0 ? 2 : 1); b >= 0; --b)
    free_.push_back(static_cast<int32_t>(b));
}

bool BlockAllocator::reserve(std::vector<int32_t> &blocks, int64_t tokens) {
  const int64_t need = (std::max<int64_t>(tokens, 0) + blockSize_ - 1) / blockSize_;
  const int64_t more = need - static_cast<int64_t>(blocks.size());
  if (more <= 0)
    return true;
  if (more > freeBlocks())
    return false;
  for (int64_t i = 0; i < more; ++i) {
    blocks.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void BlockAllocator::release(std::vector<int32_t> &blocks) {
  // Returned in reverse, so the next reserve hands out the same ids in the same order.
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
    free_.push_back(*it);
  blocks.clear();
}

namespace {
/// NaN sorts below every number (it can never be picked unless every logit is NaN).
double key(float v) { return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v; }

/// A double uniform in [0, 1) from the top 53 bits of one draw: the same on every platform
/// (std::uniform_real_distribution is not).
double uniform01(std::mt19937_64 &rng) { return double(rng() >> 11) * 0x1.0p-53; }
} // namespace

int64_t sampleToken(const float *logits, size_t vocab, const kiln_sampling_params_t &params,
                    std::mt19937_64 &rng) {
  if (vocab == 0)
    return 0;
  if (!(params.temperature > 0)) {
    size_t best = 0;
    for (size_t v = 1; v < vocab; ++v)
      if (key(logits[v]) > key(logits[best]))
        best = v;
    return static_cast<int64_t>(best);
  }
  // Candidates in descending order of logit (ties: lower id first) when top-k or top-p needs an
  // order; all tokens in id order otherwise.
  std::vector<uint32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0u);
  const bool restrictK = params.top_k > 0 && size_t(params.top_k) < vocab;
  const bool restrictP = params.top_p < 1.0f;
  auto before = [&](uint32_t a, uint32_t b) {
    double ka = key(logits[a]), kb = key(logits[b]);
    return ka > kb || (ka == kb && a < b);
  };
  size_t count = vocab;
  if (restrictK) {
    count = size_t(params.top_k);
    std::partial_sort(order.begin(), order.begin() + count, order.end(), before);
    order.resize(count);
  } else if (restrictP) {
    std::sort(order.begin(), order.end(), before);
  }
  double top = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < count; ++i)
    top = std::max(top, key(logits[order[i]]));
  if (!std::isfinite(top))
    return static_cast<int64_t>(order[0]);
  std::vector<double> weight(count);
  double total = 0;
  for (size_t i = 0; i < count; ++i) {
    weight[i] = std::exp((key(logits[order[i]]) - top) / double(params.temperature));
    total += weight[i];
  }
  if (restrictP) {
    // The smallest prefix (in descending probability) whose mass reaches top_p; at least one.
    const double target = std::max(0.0, double(params.top_p)) * total;
    double mass = 0;
    size_t keep = 0;
    while (keep < count) {
      mass += weight[keep++];
      if (mass >= target)
        break;
    }
    count = std::max<size_t>(keep, 1);
    total = 0;
    for (size_t i = 0; i < count; ++i)
      total += weight[i];
  }
  double u = uniform01(rng) * total;
  for (size_t i = 0; i < count; ++i) {
    if (u < weight[i])
      return static_cast<int64_t>(order[i]);
    u -= weight[i];
  }
  return static_cast<int64_t>(order[count - 1]);
}

std::string checkSamplingParams(const kiln_sampling_params_t &params) {
  char text[200];
  if (!std::isfinite(params.temperature)) {
    std::snprintf(text, sizeof text,
                  "sampling.temperature is %g; it must be a finite number (<= 0: greedy)",
                  double(params.temperature));
    return text;
  }
  if (params.top_k < 0) {
    std::snprintf(text, sizeof text, "sampling.top_k is %d; it must be >= 0 (0: every token)",
                  int(params.top_k));
    return text;
  }
  if (!(params.top_p > 0.0f && params.top_p <= 1.0f)) {
    std::snprintf(text, sizeof text, "sampling.top_p is %g; it must be in (0, 1] (1: every token)",
                  double(params.top_p));
    return text;
  }
  return {};
}

void SamplingRows::set(size_t row, const kiln_sampling_params_t &params, uint64_t draws) {
  temperature[row] = params.temperature;
  topK[row] = params.top_k;
  topP[row] = params.top_p;
  seed[row] = static_cast<int64_t>(params.seed); // the bits; the kernel reads them unsigned
  offset[row] = static_cast<int64_t>(draws);
}

double percentile(std::vector<double> values, double p) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  double rank = std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * double(values.size()));
  size_t index = rank < 1 ? 0 : size_t(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

} // namespace kiln::generate

using namespace kiln::generate;

/// The decode loop's own device objects (kiln_generate), made on the first decode step of a
/// generator and kept for its life: one stream that every decode step's input copies, run and
/// token copy go on, and two slots of page-locked staging, each with an event. Step n uses slot
/// n % 2, so the host fills step n + 1's inputs while step n runs; the slot of step n is reused
/// by step n + 2 only after step n's event has completed (the loop waits for it to read step n's
/// tokens first).
class DecodeStream {
public:
  DecodeStream() = default;
  DecodeStream(const DecodeStream &) = delete;
  DecodeStream &operator=(const DecodeStream &) = delete;
  ~DecodeStream() { release(); }

  /// Creates the stream, events and staging in the context of `session` (the generator's
  /// first), `bytes` of staging per slot, unless ready().
  kiln_status_t init(const kiln_session_t &session, size_t bytes) {
    if (initialized)
      return nullptr;
    release(); // what a failed earlier init made
    cu = &kiln::sessionSymbols(session);
    context = kiln::sessionContext(session);
    kiln::ContextScope scope(*cu, context);
    KILN_CU_RETURN_IF_ERROR(*cu, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    for (Slot &slot : slots) {
      KILN_CU_RETURN_IF_ERROR(*cu, cuEventCreate(&slot.done, CU_EVENT_DISABLE_TIMING));
      void *host = nullptr;
      KILN_CU_RETURN_IF_ERROR(*cu, cuMemHostAlloc(&host, bytes, 0));
      slot.staging = static_cast<uint8_t *>(host);
      slot.bytes = bytes;
    }
    initialized = true;
    return nullptr;
  }
  /// init succeeded.
  bool ready() const { return initialized; }

  struct Slot {
    uint8_t *staging = nullptr;
    size_t bytes = 0;
    CUevent done = nullptr;
  };
  const kiln::CudaSymbols *cu = nullptr;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  Slot slots[2];

  /// Waits for everything enqueued on the stream (nothing to do before init).
  kiln_status_t drain() {
    if (!stream)
      return nullptr;
    kiln::ContextScope scope(*cu, context);
    KILN_CU_RETURN_IF_ERROR(*cu, cuStreamSynchronize(stream));
    return nullptr;
  }

private:
  bool initialized = false;
  void release() {
    if (!cu)
      return;
    kiln::ContextScope scope(*cu, context);
    if (!scope.ok()) // no context: nothing can be freed through it
      return;
    if (stream)
      cu->cuStreamSynchronize(stream);
    for (Slot &slot : slots) {
      if (slot.done)
        cu->cuEventDestroy(slot.done);
      if (slot.staging)
        cu->cuMemFreeHost(slot.staging);
      slot = Slot();
    }
    if (stream)
      cu->cuStreamDestroy(stream);
    stream = nullptr;
    initialized = false;
  }
};

/// The object behind kiln_generator_t.
struct kiln_generator {
  /// One program: its handle, session and the names of its step inputs.
  struct Program {
    kiln_artifact_t *artifact = nullptr;
    kiln_session_t *session = nullptr;
    std::string name, ids, positions, table, lens, logits;
    /// The compiler's greedy token per row (i64 [batch, 1], kiln-paged-kv-cache's
    /// `next_token`) in decode programs, or empty: greedy steps read it instead of the logits.
    std::string nextToken;
    /// The sampling inputs of kiln.sample (kiln-compile --device-sampling, the default), or
    /// empty (an artifact compiled before them, or with --device-sampling=false): then only
    /// greedy steps read nextToken and sampled ones copy the logits to the host.
    std::string temperature, topK, topP, seed, offset;
    /// next_token samples on the GPU: every step reads it (greedy and sampled rows).
    bool deviceSampling = false;
    std::vector<std::string> pools;
    int64_t batch = 0, tokens = 0, maxBlocks = 0, poolBlocks = 0, blockSize = 0;
    /// Logits rows per batch row: `tokens`, or 1 when a prefill chunk returns its last real
    /// token's only (kiln-compile --prefill-logits last, the default).
    int64_t logitsRows = 0;
    size_t vocab = 0;
    kiln_dtype_t logitsDtype = KILN_DTYPE_F32;
  };
  kiln_artifact_t *file = nullptr;
  std::vector<Program> programs;
  std::vector<StepShape> steps;
  size_t maxBatch = 0;
  int64_t maxSeqLen = 0;
  bool hasIdRange = false;
  int64_t idMin = 0, idMax = 0;
  /// The pool's last block is kept free for padding rows (see describeGenerator).
  bool spareInPool = false;
  /// planPrefill's price per padded token (prefillPaddingPrice of the steps and maxSeqLen; set
  /// by kiln_generator_create and the functions that plan, not by describeGenerator, so that
  /// kiln_generator_limits and _prefill_by_time skip its bisection).
  double paddingPriceUs = 0;
  kiln_generate_stats_t stats{};
  /// The decode loop's stream and staging (made by the first decode step; released before the
  /// sessions).
  std::unique_ptr<DecodeStream> decode;

  ~kiln_generator() {
    // The sessions forget the decode stream before it goes (they wait for their last stream
    // when released).
    if (decode && decode->stream)
      for (Program &program : programs)
        if (program.session)
          kiln::forgetStream(*program.session, decode->stream);
    decode.reset();
    // The first session owns the pools the others bind: it goes last.
    for (size_t i = programs.size(); i-- > 0;) {
      kiln_session_release(programs[i].session);
      kiln_artifact_release(programs[i].artifact);
    }
    kiln_artifact_release(file);
  }
};

namespace {

/// Fills `program` from the artifact handle it holds. An error names the program.
kiln_status_t describeProgram(kiln_generator::Program &program) {
  const kiln_artifact_t *a = program.artifact;
  program.name = kiln_artifact_program_name(a);
  const std::string what =
      program.name.empty() ? "'" + std::string(kiln_artifact_path(a)) + "'"
                           : "program '" + program.name + "' of '" + kiln_artifact_path(a) + "'";
  for (size_t i = 0; i < kiln_artifact_input_count(a); ++i) {
    kiln_tensor_info_t info;
    kiln_input_role_t role;
    KILN_RETURN_IF_ERROR(kiln_artifact_input_info(a, i, &info));
    KILN_RETURN_IF_ERROR(kiln_artifact_input_role(a, i, &role));
    switch (role) {
    case KILN_INPUT_ROLE_DATA:
      if (!std::strcmp(info.name, "input_ids") && info.rank == 2)
        program.ids = info.name, program.batch = info.shape[0], program.tokens = info.shape[1];
      else if (info.byte_size != 0)
        return makeStatusF(KILN_INVALID_ARGUMENT,
                           "kiln_generator_create: %s has input '%s', which a generation step "
                           "does not fill (a --kv-cache step takes input_ids and the KV-cache "
                           "inputs)",
                           what.c_str(), info.name);
      break;
    case KILN_INPUT_ROLE_POSITION_IDS:
      program.positions = info.name;
      break;
    case KILN_INPUT_ROLE_BLOCK_TABLE:
      program.table = info.name;
      program.maxBlocks = info.rank == 2 ? info.shape[1] : 0;
      break;
    case KILN_INPUT_ROLE_SEQ_LENS:
      program.lens = info.name;
      break;
    case KILN_INPUT_ROLE_KEY_CACHE:
    case KILN_INPUT_ROLE_VALUE_CACHE:
      program.pools.push_back(info.name);
      if (info.rank == 4)
        program.poolBlocks = info.shape[0], program.blockSize = info.shape[2];
      break;
    case KILN_INPUT_ROLE_TEMPERATURE:
      program.temperature = info.name;
      break;
    case KILN_INPUT_ROLE_TOP_K:
      program.topK = info.name;
      break;
    case KILN_INPUT_ROLE_TOP_P:
      program.topP = info.name;
      break;
    case KILN_INPUT_ROLE_SEED:
      program.seed = info.name;
      break;
    case KILN_INPUT_ROLE_SAMPLE_OFFSET:
      program.offset = info.name;
      break;
    }
  }
  if (program.ids.empty() || program.positions.empty() || program.table.empty() ||
      program.lens.empty() || program.pools.empty() || program.maxBlocks < 1 ||
      program.poolBlocks < 1 || program.blockSize < 1)
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "kiln_generator_create: %s is not a generation step with a KV cache "
                       "(compile the model with kiln-compile --kv-cache)",
                       what.c_str());
  size_t outputIndex = 0;
  if (kiln_artifact_output_count(a) == 1)
    outputIndex = 0;
  else
    KILN_RETURN_IF_ERROR(kiln_artifact_find_output(a, "logits", &outputIndex));
  kiln_tensor_info_t out;
  KILN_RETURN_IF_ERROR(kiln_artifact_output_info(a, outputIndex, &out));
  if (out.rank != 3 || out.shape[0] != program.batch ||
      (out.shape[1] != program.tokens && out.shape[1] != 1) ||
      (out.dtype != KILN_DTYPE_F32 && out.dtype != KILN_DTYPE_F16 &&
       out.dtype != KILN_DTYPE_BF16))
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "kiln_generator_create: %s's output '%s' is not logits [batch, tokens "
                       "or 1, vocab] of f32, f16 or bf16",
                       what.c_str(), out.name);
  program.logits = out.name;
  program.logitsRows = out.shape[1];
  program.vocab = size_t(out.shape[2]);
  program.logitsDtype = out.dtype;
  // The on-GPU sampler's output, when the program has one (its absence is no error: the
  // statuses of the lookups are freed).
  size_t tokenIndex = 0;
  kiln_tensor_info_t token;
  bool hasToken = false;
  if (kiln_artifact_output_count(a) > 1) {
    kiln_status_t found = kiln_artifact_find_output(a, "next_token", &tokenIndex);
    if (!found)
      found = kiln_artifact_output_info(a, tokenIndex, &token);
    hasToken = !found;
    kiln_status_free(found);
  }
  if (hasToken && token.rank == 2 && token.shape[0] == program.batch && token.shape[1] == 1 &&
      token.dtype == KILN_DTYPE_I64)
    program.nextToken = token.name;
  program.deviceSampling = !program.nextToken.empty() && !program.temperature.empty() &&
                           !program.topK.empty() && !program.topP.empty() &&
                           !program.seed.empty() && !program.offset.empty();
  return nullptr;
}

float toFloat(const uint8_t *p, kiln_dtype_t dtype) {
  if (dtype == KILN_DTYPE_F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  if (dtype == KILN_DTYPE_BF16) {
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  // IEEE half -> float.
  const uint32_t sign = uint32_t(h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f)
    bits = sign | 0x7f800000u | (mantissa << 13);
  else if (exponent != 0)
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  else if (mantissa == 0)
    bits = sign;
  else {
    // Subnormal: normalize.
    uint32_t m = mantissa, e = 113;
    while (!(m & 0x400))
      m <<= 1, --e;
    bits = sign | (e << 23) | ((m & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Calls `set(name, data, bytes)` for each input of one step of `program`, in order: the
/// sampling inputs when the program samples on the GPU, the ids (unless `ids` is NULL: the caller
/// fills them on the device), positions, lengths and block table. Row r takes ids/positions
/// [r * tokens, (r + 1) * tokens), lens[r], table row r and sampling row r. Stops at the first
/// error `set` returns.
template <typename Set>
kiln_status_t setStepInputs(const kiln_generator::Program &program,
                            const std::vector<int64_t> *ids,
                            const std::vector<int64_t> &positions,
                            const std::vector<int32_t> &lens, const std::vector<int32_t> &table,
                            const SamplingRows &sampling, const Set &set) {
  if (program.deviceSampling) {
    KILN_RETURN_IF_ERROR(
        set(program.temperature, sampling.temperature.data(), sampling.temperature.size() * 4));
    KILN_RETURN_IF_ERROR(set(program.topK, sampling.topK.data(), sampling.topK.size() * 4));
    KILN_RETURN_IF_ERROR(set(program.topP, sampling.topP.data(), sampling.topP.size() * 4));
    KILN_RETURN_IF_ERROR(set(program.seed, sampling.seed.data(), sampling.seed.size() * 8));
    KILN_RETURN_IF_ERROR(set(program.offset, sampling.offset.data(), sampling.offset.size() * 8));
  }
  if (ids)
    KILN_RETURN_IF_ERROR(set(program.ids, ids->data(), ids->size() * 8));
  KILN_RETURN_IF_ERROR(set(program.positions, positions.data(), positions.size() * 8));
  KILN_RETURN_IF_ERROR(set(program.lens, lens.data(), lens.size() * 4));
  return set(program.table, table.data(), table.size() * 4);
}

/// Runs one step of `program` (inputs as setStepInputs takes them), each input copied with
/// kiln_session_set_input.
kiln_status_t runStep(kiln_generator::Program &program, const std::vector<int64_t> &ids,
                      const std::vector<int64_t> &positions, const std::vector<int32_t> &lens,
                      const std::vector<int32_t> &table, const SamplingRows &sampling) {
  kiln_session_t *s = program.session;
  KILN_RETURN_IF_ERROR(setStepInputs(
      program, &ids, positions, lens, table, sampling,
      [&](const std::string &name, const void *data, size_t bytes) -> kiln_status_t {
        return kiln_session_set_input(s, name.c_str(), data, bytes);
      }));
  return kiln_session_run(s, nullptr);
}

/// Page-locked bytes one decode step of `g` stages (enqueueDecodeStep's inputs and tokens, each
/// 16-byte aligned), for its largest decode program.
size_t decodeStagingBytes(const kiln_generator &g) {
  size_t most = 0;
  for (const kiln_generator::Program &p : g.programs) {
    if (p.tokens != 1)
      continue;
    const size_t B = size_t(p.batch);
    auto padded = [](size_t bytes) { return (bytes + 15) / 16 * 16; };
    const size_t bytes = 5 * padded(B * 8) + 4 * padded(B * 4) + padded(B * size_t(p.maxBlocks) * 4);
    most = std::max(most, bytes);
  }
  return std::max<size_t>(most, 16);
}

/// Enqueues one decode step of `program` on `d`'s stream, staging its inputs in slot `slot`:
/// the sampling inputs (device-sampling programs), the ids (from `ids`, or with `ids` NULL copied
/// on the device from the program's next_token of the step before, which must be the previous
/// run of this program on this stream), positions, lengths and block table as setStepInputs
/// takes them; then the run, the copy of next_token into the slot (at `tokensAt`) and the slot's event.
kiln_status_t enqueueDecodeStep(DecodeStream &d, int slot, kiln_generator::Program &program,
                                const std::vector<int64_t> *ids,
                                const std::vector<int64_t> &positions,
                                const std::vector<int32_t> &lens,
                                const std::vector<int32_t> &table, const SamplingRows &sampling,
                                size_t &tokensAt) {
  kiln_session_t *s = program.session;
  DecodeStream::Slot &staging = d.slots[slot];
  size_t at = 0;
  auto put = [&](const std::string &name, const void *data, size_t bytes) -> kiln_status_t {
    if (at + bytes > staging.bytes)
      return makeStatusF(KILN_INTERNAL,
                         "kiln_generate: decode staging of %zu bytes is too small for input '%s'",
                         staging.bytes, name.c_str());
    std::memcpy(staging.staging + at, data, bytes);
    KILN_RETURN_IF_ERROR(
        kiln_session_set_input_async(s, name.c_str(), staging.staging + at, bytes, d.stream));
    at += (bytes + 15) / 16 * 16;
    return nullptr;
  };
  const size_t idBytes = size_t(program.batch) * 8;
  if (!ids) {
    uint64_t to = 0, from = 0;
    KILN_RETURN_IF_ERROR(kiln_session_input_device_ptr(s, program.ids.c_str(), &to));
    KILN_RETURN_IF_ERROR(kiln_session_output_device_ptr(s, program.nextToken.c_str(), &from));
    kiln::ContextScope scope(*d.cu, d.context);
    KILN_CU_RETURN_IF_ERROR(*d.cu, cuMemcpyDtoDAsync(CUdeviceptr(to), CUdeviceptr(from),
                                                     idBytes, d.stream));
  }
  KILN_RETURN_IF_ERROR(setStepInputs(program, ids, positions, lens, table, sampling, put));
  KILN_RETURN_IF_ERROR(kiln_session_run(s, d.stream));
  if (at + idBytes > staging.bytes)
    return makeStatus(KILN_INTERNAL, "kiln_generate: decode staging too small for next_token");
  tokensAt = at;
  KILN_RETURN_IF_ERROR(kiln_session_get_output_async(s, program.nextToken.c_str(),
                                                     staging.staging + at, idBytes, d.stream));
  kiln::ContextScope scope(*d.cu, d.context);
  KILN_CU_RETURN_IF_ERROR(*d.cu, cuEventRecord(staging.done, d.stream));
  return nullptr;
}

/// Reads logits rows [row, row + rows) (flattened batch x tokens) of `program`'s last step as
/// floats into `out` (rows x vocab).
kiln_status_t readLogits(kiln_generator::Program &program, size_t row, size_t rows,
                         std::vector<float> &out) {
  const size_t element = kiln_dtype_size(program.logitsDtype);
  std::vector<uint8_t> bytes(rows * program.vocab * element);
  KILN_RETURN_IF_ERROR(kiln_session_get_output_range(program.session, program.logits.c_str(),
                                                     row * program.vocab * element, bytes.data(),
                                                     bytes.size()));
  out.resize(rows * program.vocab);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = toFloat(bytes.data() + i * element, program.logitsDtype);
  return nullptr;
}

using Clock = std::chrono::steady_clock;
double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// One sequence of a kiln_generate call.
struct Sequence {
  std::vector<int32_t> blocks;
  std::mt19937_64 rng;
  int64_t cached = 0;    ///< tokens in the cache
  int64_t lastToken = 0; ///< the newest token, not yet in the cache
  bool finished = false;
};

/// Fills everything of `g` but the sessions from `artifact`'s programs (no device work).
kiln_status_t describeGenerator(kiln_artifact_t *artifact, kiln_generator &g);

} // namespace

extern "C" {

void kiln_sampling_params_initialize(kiln_sampling_params_t *params) {
  if (!params)
    return;
  params->temperature = 0;
  params->top_k = 0;
  params->top_p = 1;
  params->seed = 0;
}

kiln_status_t kiln_generator_create(kiln_artifact_t *artifact, int device_ordinal,
                                    kiln_generator_t **out_generator) {
  if (out_generator)
    *out_generator = nullptr;
  if (!artifact || !out_generator)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_generator_create: artifact and out_generator must be non-NULL");
  std::unique_ptr<kiln_generator> g(new (std::nothrow) kiln_generator());
  if (!g)
    return makeStatus(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  KILN_RETURN_IF_ERROR(describeGenerator(artifact, *g));
  g->paddingPriceUs = prefillPaddingPrice(g->steps, g->maxSeqLen);
  kiln_generator::Program &first = g->programs[0];
  // Sessions; the first one's pools are everyone's.
  for (kiln_generator::Program &program : g->programs) {
    kiln_session_params_t params;
    kiln_session_params_initialize(&params);
    params.device_ordinal = device_ordinal;
    KILN_RETURN_IF_ERROR(kiln_session_create(program.artifact, &params, &program.session));
  }
  for (const std::string &pool : first.pools) {
    uint64_t pointer = 0;
    size_t index = 0;
    kiln_tensor_info_t info;
    KILN_RETURN_IF_ERROR(kiln_session_input_device_ptr(first.session, pool.c_str(), &pointer));
    KILN_RETURN_IF_ERROR(kiln_artifact_find_input(first.artifact, pool.c_str(), &index));
    KILN_RETURN_IF_ERROR(kiln_artifact_input_info(first.artifact, index, &info));
    for (size_t p = 1; p < g->programs.size(); ++p)
      KILN_RETURN_IF_ERROR(kiln_session_bind_input(g->programs[p].session, pool.c_str(), pointer,
                                                   info.byte_size));
  }
  *out_generator = g.release();
  return nullptr;
}

kiln_status_t kiln_generator_limits(kiln_artifact_t *artifact, size_t *out_max_batch,
                                    size_t *out_max_seq_len, int *out_has_id_range,
                                    int64_t *out_id_min, int64_t *out_id_max) {
  if (!artifact || !out_max_batch || !out_max_seq_len || !out_has_id_range || !out_id_min ||
      !out_id_max)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_generator_limits: artifact and the out pointers must be non-NULL");
  kiln_generator g;
  KILN_RETURN_IF_ERROR(describeGenerator(artifact, g));
  *out_max_batch = g.maxBatch;
  *out_max_seq_len = size_t(g.maxSeqLen);
  *out_has_id_range = g.hasIdRange ? 1 : 0;
  *out_id_min = g.idMin;
  *out_id_max = g.idMax;
  return nullptr;
}

kiln_status_t kiln_generator_prefill_by_time(kiln_artifact_t *artifact, int *out_by_time) {
  if (out_by_time)
    *out_by_time = 0;
  if (!artifact || !out_by_time)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_generator_prefill_by_time: artifact and out_by_time must be non-NULL");
  kiln_generator g;
  KILN_RETURN_IF_ERROR(describeGenerator(artifact, g));
  *out_by_time = kiln::generate::PrefillCosts(g.steps, -1, g.maxSeqLen).byTime() ? 1 : 0;
  return nullptr;
}

kiln_status_t kiln_generator_prefill_padding_price(kiln_artifact_t *artifact, double *out_us) {
  if (out_us)
    *out_us = 0;
  if (!artifact || !out_us)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_generator_prefill_padding_price: artifact and out_us must be non-NULL");
  kiln_generator g;
  KILN_RETURN_IF_ERROR(describeGenerator(artifact, g));
  *out_us = prefillPaddingPrice(g.steps, g.maxSeqLen);
  return nullptr;
}

kiln_status_t kiln_generator_prefill_waste(kiln_artifact_t *artifact, size_t max_prompt_length,
                                           double *out_mean_waste, double *out_token_waste) {
  if (!artifact || !out_mean_waste || !out_token_waste)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_generator_prefill_waste: artifact and the out "
                                             "pointers must be non-NULL");
  kiln_generator g;
  KILN_RETURN_IF_ERROR(describeGenerator(artifact, g));
  const int64_t longest = max_prompt_length ? int64_t(max_prompt_length) : g.maxSeqLen;
  if (longest > g.maxSeqLen)
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "kiln_generator_prefill_waste: prompts of up to %zu tokens, but a "
                       "sequence of '%s' holds %lld",
                       max_prompt_length, kiln_artifact_path(g.file),
                       static_cast<long long>(g.maxSeqLen));
  g.paddingPriceUs = prefillPaddingPrice(g.steps, g.maxSeqLen);
  double meanSum = 0, padded = 0, run = 0;
  std::optional<kiln::generate::PrefillCosts> table;
  try {
    table.emplace(g.steps, longest, g.maxSeqLen,
                  g.paddingPriceUs); // about 44 bytes per prompt length
  } catch (const std::bad_alloc &) {
    return makeStatusF(KILN_RESOURCE_EXHAUSTED,
                       "kiln_generator_prefill_waste: no memory for the plans of %lld prompt "
                       "lengths; ask for fewer (max_prompt_length)",
                       static_cast<long long>(longest));
  }
  const kiln::generate::PrefillCosts &costs = *table;
  for (int64_t p = 1; p <= longest; ++p) {
    int64_t tokensRun = costs.byTime() ? costs.tokensRun(p)
                                       : kiln::generate::prefillTokensRun(g.steps, p, g.maxSeqLen,
                                                                          g.paddingPriceUs);
    if (tokensRun < p) // no plan: cannot happen with a decode program, which takes 1 token
      tokensRun = p;
    meanSum += double(tokensRun - p) / double(tokensRun);
    padded += double(tokensRun - p);
    run += double(tokensRun);
  }
  *out_mean_waste = longest > 0 ? meanSum / double(longest) : 0;
  *out_token_waste = run > 0 ? padded / run : 0;
  return nullptr;
}

} // extern "C"

namespace {
kiln_status_t describeGenerator(kiln_artifact_t *artifact, kiln_generator &generator) {
  kiln_generator *g = &generator;
  KILN_RETURN_IF_ERROR(kiln_artifact_program(artifact, 0, &g->file));
  const size_t count = kiln_artifact_program_count(g->file);
  g->programs.resize(count);
  for (size_t p = 0; p < count; ++p) {
    kiln_generator::Program &program = g->programs[p];
    KILN_RETURN_IF_ERROR(kiln_artifact_program(g->file, p, &program.artifact));
    KILN_RETURN_IF_ERROR(describeProgram(program));
    const kiln_generator::Program &first = g->programs[0];
    if (program.pools != first.pools || program.poolBlocks != first.poolBlocks ||
        program.blockSize != first.blockSize || program.maxBlocks != first.maxBlocks ||
        program.vocab != first.vocab)
      return makeStatusF(KILN_INVALID_ARGUMENT,
                         "kiln_generator_create: program '%s' of '%s' has other KV-cache pools, "
                         "block table or vocabulary than program '%s'; the programs of one "
                         "generator share one cache",
                         program.name.c_str(), kiln_artifact_path(g->file), first.name.c_str());
    g->steps.push_back({p, program.batch, program.tokens,
                        kiln_artifact_program_estimated_us(program.artifact)});
    if (program.tokens == 1)
      g->maxBatch = std::max(g->maxBatch, size_t(program.batch));
  }
  if (g->maxBatch == 0)
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "kiln_generator_create: '%s' has no decode program (one token per step)",
                       kiln_artifact_path(g->file));
  kiln_generator::Program &first = g->programs[0];
  // A sequence holds what its block-table row addresses, and no more positions than the model's
  // position table has rows (GPT-2's learned positions; recorded as position_ids' value range).
  g->maxSeqLen = first.maxBlocks * first.blockSize;
  size_t index = 0;
  if (!kiln_artifact_find_input(first.artifact, first.positions.c_str(), &index)) {
    int has = 0;
    int64_t lo = 0, hi = 0;
    kiln_status_free(kiln_artifact_input_value_range(first.artifact, index, &has, &lo, &hi));
    if (has)
      g->maxSeqLen = std::min(g->maxSeqLen, hi + 1);
  }
  if (!kiln_artifact_find_input(first.artifact, first.ids.c_str(), &index)) {
    int has = 0;
    kiln_status_free(
        kiln_artifact_input_value_range(first.artifact, index, &has, &g->idMin, &g->idMax));
    g->hasIdRange = has != 0;
  }
  // A spare block for padding rows when the pool has one beyond every row's blocks (kiln-compile
  // --shape ranges add it); otherwise kiln_generate borrows a free block when it pads.
  g->spareInPool = first.poolBlocks > int64_t(g->maxBatch) * first.maxBlocks;
  return nullptr;
}
/// kiln_generate's error for a request count outside 1 .. the largest decode batch.
kiln_status_t checkRequestCount(const kiln_generator &g, size_t count) {
  if (count < 1 || count > g.maxBatch)
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "kiln_generate: %zu requests; this generator takes 1 to %zu (the largest "
                       "decode batch it was compiled for)",
                       count, g.maxBatch);
  return nullptr;
}

/// Whether `count` sequences borrow a free block for padding rows: the pool has no spare block
/// and some step has more rows than the call's sequences (`chunkPads`: a prefill plan's chunk
/// of batch > 1; several sequences; or a decode step of more than one row for one).
bool borrowsBlock(const kiln_generator &g, size_t count, bool chunkPads) {
  return !g.spareInPool &&
         (chunkPads || count > 1 || g.steps[*pickDecodeStep(g.steps, 1)].batch > 1);
}

/// What checkRequests gives kiln_generate: each request's prefill plan, the KV-cache slots it
/// writes at its longest, and whether the padding rows borrow a free block.
struct RequestPlan {
  std::vector<std::vector<PrefillChunk>> plans;
  std::vector<int64_t> extents;
  bool borrow = false;
};
/// kiln_generate's checks of `requests` before any device work, against `g` with `allocator`'s
/// free blocks, filling `plan`. `results` may be NULL (its arrays are then not checked:
/// kiln_generate_check). Errors are kiln_generate's, which they name.
kiln_status_t checkRequests(const kiln_generator &g, const kiln_generate_request_t *requests,
                            size_t count, const kiln_generate_result_t *results,
                            const BlockAllocator &allocator, RequestPlan &plan) {
  const kiln_generator::Program &first = g.programs[0];
  std::vector<std::vector<PrefillChunk>> &plans = plan.plans;
  std::vector<int64_t> &extents = plan.extents;
  plans.assign(count, {});
  extents.assign(count, 0);
  int64_t blocksNeeded = 0;
  for (size_t i = 0; i < count; ++i) {
    const kiln_generate_request_t &r = requests[i];
    if (!r.prompt || r.prompt_length < 1)
      return makeStatusF(KILN_INVALID_ARGUMENT, "kiln_generate: request %zu has no prompt", i);
    if (r.max_new_tokens < 1)
      return makeStatusF(KILN_INVALID_ARGUMENT,
                         "kiln_generate: request %zu asks for 0 new tokens (max_new_tokens >= 1)",
                         i);
    if (results && !results[i].tokens)
      return makeStatusF(KILN_INVALID_ARGUMENT,
                         "kiln_generate: results[%zu].tokens is NULL (an array of the request's "
                         "max_new_tokens ids)",
                         i);
    if (std::string why = checkSamplingParams(r.sampling); !why.empty())
      return makeStatusF(KILN_INVALID_ARGUMENT, "kiln_generate: request %zu: %s", i, why.c_str());
    if (r.stop_token_count && !r.stop_tokens)
      return makeStatusF(KILN_INVALID_ARGUMENT,
                         "kiln_generate: request %zu has %zu stop tokens but stop_tokens is NULL",
                         i, r.stop_token_count);
    const uint64_t longest = uint64_t(r.prompt_length) + uint64_t(r.max_new_tokens) - 1;
    if (longest > uint64_t(g.maxSeqLen))
      return makeStatusF(KILN_INVALID_ARGUMENT,
                         "kiln_generate: request %zu needs %llu tokens (prompt %zu + %zu new - 1) "
                         "but a sequence holds at most %lld (kiln-compile --max-seq-len)",
                         i, static_cast<unsigned long long>(longest), r.prompt_length,
                         r.max_new_tokens, static_cast<long long>(g.maxSeqLen));
    // Prompt ids and stop ids outside the embedding (a stop id there would never end the
    // sequence).
    if (g.hasIdRange)
      for (const auto &[ids, n, what, why] :
           {std::make_tuple(r.prompt, r.prompt_length, "prompt token", ""),
            std::make_tuple(r.stop_tokens, r.stop_token_count, "stop token",
                            " (it would never end the sequence)")})
        for (size_t t = 0; t < n; ++t)
          if (ids[t] < g.idMin || ids[t] > g.idMax)
            return makeStatusF(KILN_INVALID_ARGUMENT,
                               "kiln_generate: request %zu: %s %zu is %lld, outside the model's "
                               "token ids [%lld, %lld]%s",
                               i, what, t, static_cast<long long>(ids[t]),
                               static_cast<long long>(g.idMin),
                               static_cast<long long>(g.idMax), why);
    plans[i] = planPrefill(g.steps, int64_t(r.prompt_length), g.maxSeqLen, g.paddingPriceUs);
    if (plans[i].empty())
      return makeStatusF(KILN_INVALID_ARGUMENT,
                         "kiln_generate: request %zu: no program can prefill its %zu tokens", i,
                         r.prompt_length);
    // The most slots the sequence writes: its longest length, or a padded chunk's end. With a
    // spare block in the pool a padded chunk's slots past the sequence's blocks write there (its
    // block-table entries point at it; nothing reads them), so they take no blocks of their own.
    extents[i] = int64_t(longest);
    if (allocator.spare() < 0)
      for (const PrefillChunk &c : plans[i])
        extents[i] = std::max(extents[i], c.start + g.steps[c.step].tokens);
    blocksNeeded += (extents[i] + first.blockSize - 1) / first.blockSize;
  }
  // Steps with more rows than sequences pad; without a spare block in the pool the padding rows
  // write into a free block borrowed for the call.
  bool chunkPads = false;
  for (size_t i = 0; i < count; ++i)
    for (const PrefillChunk &c : plans[i])
      chunkPads |= g.steps[c.step].batch > 1;
  const bool borrow = borrowsBlock(g, count, chunkPads);
  blocksNeeded += borrow ? 1 : 0;
  plan.borrow = borrow;
  if (blocksNeeded > allocator.freeBlocks())
    return makeStatusF(KILN_RESOURCE_EXHAUSTED,
                       "kiln_generate: the KV cache has %lld free blocks of %lld tokens; these %zu "
                       "requests need %lld at their longest (kiln-compile --kv-blocks sizes the "
                       "pool)",
                       static_cast<long long>(allocator.freeBlocks()),
                       static_cast<long long>(first.blockSize), count,
                       static_cast<long long>(blocksNeeded));

  return nullptr;
}

} // namespace

extern "C" {

void kiln_generator_release(kiln_generator_t *generator) { delete generator; }

size_t kiln_generator_max_batch(const kiln_generator_t *generator) {
  return generator ? generator->maxBatch : 0;
}

size_t kiln_generator_max_seq_len(const kiln_generator_t *generator) {
  return generator ? size_t(generator->maxSeqLen) : 0;
}

kiln_status_t kiln_generator_last_stats(const kiln_generator_t *generator,
                                        kiln_generate_stats_t *out_stats) {
  if (!generator || !out_stats)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_generator_last_stats: generator and out_stats must be non-NULL");
  *out_stats = generator->stats;
  return nullptr;
}

kiln_status_t kiln_generator_kv_blocks(kiln_artifact_t *artifact, size_t *out_blocks,
                                       size_t *out_block_size, size_t *out_full_sequences) {
  if (!artifact || !out_blocks || !out_block_size || !out_full_sequences)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_generator_kv_blocks: artifact and the out pointers must be non-NULL");
  kiln_generator g;
  KILN_RETURN_IF_ERROR(describeGenerator(artifact, g));
  const kiln_generator::Program &first = g.programs[0];
  // BlockAllocator's count without its list: the pool less the spare block.
  const int64_t blocks = first.poolBlocks - (g.spareInPool ? 1 : 0);
  // A sequence at its longest takes every block its length needs (a padded chunk ends within
  // them, on one-row prefill steps); n sequences may borrow one more, as checkRequests counts.
  const int64_t perSequence = (g.maxSeqLen + first.blockSize - 1) / first.blockSize;
  size_t full = 0;
  for (size_t n = 1; n <= g.maxBatch; ++n) {
    if (int64_t(n) * perSequence + (borrowsBlock(g, n, false) ? 1 : 0) > blocks)
      break;
    full = n;
  }
  *out_blocks = size_t(blocks);
  *out_block_size = size_t(first.blockSize);
  *out_full_sequences = full;
  return nullptr;
}

kiln_status_t kiln_generate_check(kiln_artifact_t *artifact, const kiln_generate_request_t *requests,
                                  size_t count) {
  if (!artifact || !requests)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_generate_check: artifact and requests must be non-NULL");
  kiln_generator g;
  KILN_RETURN_IF_ERROR(describeGenerator(artifact, g));
  KILN_RETURN_IF_ERROR(checkRequestCount(g, count));
  // The plans kiln_generate makes: priced as kiln_generator_create prices them.
  g.paddingPriceUs = prefillPaddingPrice(g.steps, g.maxSeqLen);
  const kiln_generator::Program &first = g.programs[0];
  RequestPlan plan;
  return checkRequests(g, requests, count, nullptr,
                       BlockAllocator(first.poolBlocks, first.blockSize, g.spareInPool), plan);
}

kiln_status_t kiln_generate(kiln_generator_t *g, const kiln_generate_request_t *requests,
                            size_t count, kiln_generate_result_t *results,
                            kiln_token_callback_t callback, void *user_data) {
  const auto t0 = Clock::now();
  if (!g || !requests || !results)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_generate: generator, requests and results must be non-NULL");
  KILN_RETURN_IF_ERROR(checkRequestCount(*g, count));
  // 1. Every check before any device work.
  const kiln_generator::Program &first = g->programs[0];
  BlockAllocator allocator(first.poolBlocks, first.blockSize, g->spareInPool);
  RequestPlan plan;
  KILN_RETURN_IF_ERROR(checkRequests(*g, requests, count, results, allocator, plan));
  const std::vector<std::vector<PrefillChunk>> &plans = plan.plans;
  const std::vector<int64_t> &extents = plan.extents;
  const bool borrow = plan.borrow;

  // 2. Blocks and state.
  std::vector<Sequence> seqs(count);
  for (size_t i = 0; i < count; ++i) {
    const kiln_generate_request_t &r = requests[i];
    allocator.reserve(seqs[i].blocks, extents[i]); // checked above
    seqs[i].rng.seed(r.sampling.seed);
    results[i].length = 0;
    results[i].finish_reason = KILN_FINISH_LENGTH;
    results[i].time_to_first_token_ms = 0;
  }
  struct Release {
    BlockAllocator &allocator;
    std::vector<Sequence> &seqs;
    ~Release() {
      for (Sequence &s : seqs)
        allocator.release(s.blocks);
    }
  } release{allocator, seqs};
  (void)release;
  const int64_t maxBlocks = first.maxBlocks;
  // Where padding rows and unused block-table entries point: the spare block, a borrowed one,
  // or (no padding) block 0, which nothing reads through an unused entry.
  std::vector<int32_t> borrowed;
  if (borrow)
    allocator.reserve(borrowed, 1); // counted in blocksNeeded
  const int32_t spare = allocator.spare() >= 0 ? allocator.spare() : borrow ? borrowed[0] : 0;
  auto tableRow = [&](const Sequence &s, std::vector<int32_t> &table, size_t row) {
    std::fill(table.begin() + row * maxBlocks, table.begin() + (row + 1) * maxBlocks, spare);
    std::copy(s.blocks.begin(), s.blocks.end(), table.begin() + row * maxBlocks);
  };
  bool cancelled = false;
  kiln_generate_stats_t stats{};
  // Records token `token` for sequence i; false when the sequence (or the call) ends with it.
  auto emit = [&](size_t i, int64_t token) {
    kiln_generate_result_t &res = results[i];
    const kiln_generate_request_t &r = requests[i];
    if (res.length == 0)
      res.time_to_first_token_ms = msBetween(t0, Clock::now());
    res.tokens[res.length++] = token;
    ++stats.generated_tokens;
    seqs[i].lastToken = token;
    if (std::find(r.stop_tokens, r.stop_tokens + r.stop_token_count, token) !=
        r.stop_tokens + r.stop_token_count) {
      res.finish_reason = KILN_FINISH_STOP;
      seqs[i].finished = true;
    } else if (res.length >= r.max_new_tokens) {
      res.finish_reason = KILN_FINISH_LENGTH;
      seqs[i].finished = true;
    }
    if (callback && callback(user_data, i, token))
      cancelled = true;
  };
  auto cancelRest = [&]() {
    for (size_t i = 0; i < count; ++i)
      if (!seqs[i].finished) {
        seqs[i].finished = true;
        results[i].finish_reason = KILN_FINISH_CANCELLED;
      }
  };

  // 3. Prefill, one sequence at a time. A chunk reads the cache rows the chunks before it wrote:
  // when it runs on another program (session, stream) than the chunk before, that one is waited
  // for first (a session's own calls only wait for its own runs).
  std::vector<float> logits;
  const auto prefillStart = Clock::now();
  kiln_session_t *lastPrefill = nullptr;
  for (size_t i = 0; i < count && !cancelled; ++i) {
    const kiln_generate_request_t &r = requests[i];
    for (const PrefillChunk &c : plans[i]) {
      kiln_generator::Program &p = g->programs[g->steps[c.step].program];
      if (lastPrefill && lastPrefill != p.session)
        KILN_RETURN_IF_ERROR(kiln_session_synchronize(lastPrefill));
      lastPrefill = p.session;
      const size_t B = size_t(p.batch), S = size_t(p.tokens);
      const int64_t pad = r.prompt[c.start + c.tokens - 1];
      std::vector<int64_t> ids(B * S, pad), positions(B * S, 0);
      std::vector<int32_t> lens(B, 0), table(B * size_t(maxBlocks), spare);
      for (size_t t = 0; t < S; ++t)
        positions[t] = c.start + std::min<int64_t>(int64_t(t), c.tokens - 1);
      for (int64_t t = 0; t < c.tokens; ++t)
        ids[size_t(t)] = r.prompt[c.start + t];
      lens[0] = int32_t(c.start);
      tableRow(seqs[i], table, 0);
      const bool last = c.start + c.tokens == int64_t(r.prompt_length);
      // The chunk's next_token is the first generated token when it holds the prompt's end
      // (a chunk returning one logits row: that row is the last real token's).
      const bool onDevice = last && p.deviceSampling && p.logitsRows == 1;
      SamplingRows sampling(B);
      if (onDevice)
        sampling.set(0, r.sampling, 0);
      KILN_RETURN_IF_ERROR(runStep(p, ids, positions, lens, table, sampling));
      ++stats.prefill_steps;
      if (last) {
        seqs[i].cached = int64_t(r.prompt_length);
        if (onDevice) {
          int64_t token = 0;
          KILN_RETURN_IF_ERROR(
              kiln_session_get_output_range(p.session, p.nextToken.c_str(), 0, &token, 8));
          emit(i, token);
        } else {
          // The last real token's row: row 0 when the chunk returns that row only.
          const size_t row = p.logitsRows == 1 ? 0 : size_t(c.tokens - 1);
          KILN_RETURN_IF_ERROR(readLogits(p, row, 1, logits));
          emit(i, sampleToken(logits.data(), p.vocab, r.sampling, seqs[i].rng));
        }
      }
    }
  }
  stats.prefill_ms = msBetween(prefillStart, Clock::now());
  if (cancelled)
    cancelRest();

  // 4. Decode the unfinished sequences together. A step whose tokens the program computes on
  // the GPU (next_token: it samples there, or every row is greedy) goes on the generator's
  // decode stream and is chained: the next step, same rows, is enqueued before this one's tokens
  // are read, its ids copied from this step's next_token on the device, so the GPU never waits
  // for the host between steps. A chained step of a sequence that then turns out to have ended
  // (a stop token, a cancelling callback) is run and discarded: it writes one key/value row
  // inside the sequence's own blocks (at most its longest length). A step whose tokens the host
  // samples from the logits runs alone.
  std::vector<double> stepMs;
  struct InFlight {
    size_t program = 0;
    std::vector<size_t> rows;
    int slot = 0;
    size_t tokensAt = 0; // the tokens' offset in the slot's staging
    Clock::time_point start;
  };
  std::optional<InFlight> pending;
  struct Drain {
    kiln_generator &g;
    ~Drain() {
      if (g.decode)
        kiln_status_free(g.decode->drain()); // on every return: no step outlives the call
    }
  } drainAtExit{*g};
  (void)drainAtExit;
  int slot = 0;
  Clock::time_point lastArrival = Clock::now();
  // KILN_DECODE_CHAIN=0: every step waits for the one before (A/B measurements and tests).
  const char *chainEnv = std::getenv("KILN_DECODE_CHAIN");
  const bool chainSteps = !chainEnv || std::strcmp(chainEnv, "0") != 0;
  while (true) {
    // The rows of the next step: unfinished sequences that still need a token after the one in
    // flight.
    std::vector<size_t> active;
    for (size_t i = 0; i < count; ++i) {
      const size_t inFlight =
          pending && std::count(pending->rows.begin(), pending->rows.end(), i) ? 1 : 0;
      if (!seqs[i].finished && results[i].length + inFlight < requests[i].max_new_tokens)
        active.push_back(i);
    }
    if (active.empty() && !pending)
      break;
    std::optional<InFlight> next;
    kiln_generator::Program *p = nullptr;
    size_t programIndex = 0;
    bool onDevice = false;
    if (!active.empty()) {
      std::optional<size_t> step = pickDecodeStep(g->steps, int64_t(active.size()));
      if (!step) // count <= maxBatch was checked
        return makeStatus(KILN_INTERNAL, "kiln_generate: no decode program for the batch");
      programIndex = g->steps[*step].program;
      p = &g->programs[programIndex];
      // The program samples on the GPU, or every row is greedy and it computes the greedy
      // token: read B integers back, not B x vocab logits.
      onDevice = !p->nextToken.empty() &&
                 (p->deviceSampling || std::all_of(active.begin(), active.end(), [&](size_t i) {
                    return !(requests[i].sampling.temperature > 0);
                  }));
    }
    const bool chain = pending && onDevice && chainSteps && pending->program == programIndex &&
                       pending->rows == active;
    // The inputs of a step of `active` through *p, `shift` tokens past what is cached (1: the
    // step after the one in flight). Padding rows: position and length 0, the spare block.
    const size_t B = p ? size_t(p->batch) : 0;
    std::vector<int64_t> ids, positions;
    std::vector<int32_t> lens, table;
    SamplingRows sampling(B);
    auto stepInputs = [&](size_t shift) {
      ids.assign(B, requests[active[0]].prompt[0]);
      positions.assign(B, 0);
      lens.assign(B, 0);
      table.assign(B * size_t(maxBlocks), spare);
      for (size_t row = 0; row < active.size(); ++row) {
        const size_t i = active[row];
        const Sequence &s = seqs[i];
        ids[row] = s.lastToken;
        positions[row] = s.cached + int64_t(shift);
        lens[row] = int32_t(s.cached + int64_t(shift));
        tableRow(s, table, row);
        if (p->deviceSampling)
          sampling.set(row, requests[i].sampling, results[i].length + shift);
      }
    };
    if (onDevice && (!pending || chain)) {
      stepInputs(pending ? 1 : 0);
      if (!g->decode)
        g->decode = std::make_unique<DecodeStream>();
      if (!g->decode->ready())
        KILN_RETURN_IF_ERROR(g->decode->init(*g->programs[0].session, decodeStagingBytes(*g)));
      InFlight f;
      f.program = programIndex;
      f.rows = active;
      f.slot = slot;
      f.start = Clock::now();
      KILN_RETURN_IF_ERROR(enqueueDecodeStep(*g->decode, slot, *p, chain ? nullptr : &ids,
                                             positions, lens, table, sampling, f.tokensAt));
      slot ^= 1;
      next = std::move(f);
    }
    if (pending) {
      // The step in flight: its tokens.
      DecodeStream &d = *g->decode;
      {
        kiln::ContextScope scope(*d.cu, d.context);
        KILN_CU_RETURN_IF_ERROR(*d.cu, cuEventSynchronize(d.slots[pending->slot].done));
      }
      const auto arrival = Clock::now();
      // A chained step whose rows had all ended gives no token and is not counted.
      if (std::any_of(pending->rows.begin(), pending->rows.end(),
                      [&](size_t i) { return !seqs[i].finished; })) {
        stepMs.push_back(msBetween(std::max(pending->start, lastArrival), arrival));
        lastArrival = arrival;
      }
      const uint8_t *staged = d.slots[pending->slot].staging + pending->tokensAt;
      for (size_t row = 0; row < pending->rows.size() && !cancelled; ++row) {
        const size_t i = pending->rows[row];
        if (seqs[i].finished) // ended by an earlier token of this chain: discarded
          continue;
        int64_t token;
        std::memcpy(&token, staged + row * 8, 8);
        ++seqs[i].cached;
        emit(i, token);
      }
    } else if (!next) {
      // A step alone: the host samples from the logits.
      stepInputs(0);
      const auto stepStart = Clock::now();
      KILN_RETURN_IF_ERROR(runStep(*p, ids, positions, lens, table, sampling));
      KILN_RETURN_IF_ERROR(readLogits(*p, 0, active.size(), logits));
      lastArrival = Clock::now();
      stepMs.push_back(msBetween(stepStart, lastArrival));
      for (size_t row = 0; row < active.size() && !cancelled; ++row) {
        const size_t i = active[row];
        ++seqs[i].cached;
        emit(i, sampleToken(logits.data() + row * p->vocab, p->vocab, requests[i].sampling,
                            seqs[i].rng));
      }
    }
    pending = std::move(next);
    if (cancelled) {
      cancelRest();
      if (g->decode)
        KILN_RETURN_IF_ERROR(g->decode->drain()); // a chained step in flight is discarded
      pending.reset();
    }
  }
  stats.decode_steps = stepMs.size();
  stats.decode_ms = std::accumulate(stepMs.begin(), stepMs.end(), 0.0);
  stats.decode_step_p50_ms = percentile(stepMs, 50);
  stats.decode_step_p99_ms = percentile(stepMs, 99);
  g->stats = stats;
  return nullptr;
}

} // extern "C"
