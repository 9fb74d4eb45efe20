//===- Generate.h - Host-side planning of the generation loop ---*- C++ -*-===//
//
// The parts of kiln_generate that need no device, exposed for the runtime's unit tests: which
// program runs a step, how a prompt is cut into prefill chunks, the KV cache's block allocator,
// and the token sampler. Generate.cpp drives the sessions with them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_GENERATE_H
#define KILN_RUNTIME_SRC_GENERATE_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kiln::generate {

/// One program of a --kv-cache artifact as the loop sees it: input_ids [batch, tokens].
struct StepShape {
  size_t program = 0; ///< index of the program in the artifact
  int64_t batch = 1;
  int64_t tokens = 1;
  /// The program's estimated time in microseconds (kiln_artifact_program_estimated_us), 0 when
  /// the artifact has none: then planPrefill plans by padding instead of by time.
  double costUs = 0;
};

/// The decode program (tokens == 1) with the smallest batch >= `active`; ties: the lowest index.
/// std::nullopt when no decode program holds `active` sequences.
std::optional<size_t> pickDecodeStep(const std::vector<StepShape> &steps, int64_t active);

/// One prefill step of a plan: the step (index into the `steps` given to planPrefill), the first
/// prompt token it covers, and how many real tokens it carries (<= the step's tokens; the rest
/// of the step's tokens are padding).
struct PrefillChunk {
  size_t step = 0;
  int64_t start = 0;
  int64_t tokens = 0;
};

/// Cuts a prompt of `promptLength` tokens into steps run one after another on one sequence.
///
/// By time, when every step it may use (batch 1 with tokens > 1, and the one-token step below)
/// has a costUs: the plan of least summed cost among plans of whole steps with at most the last
/// one padded (a shortest path over the prompt's positions: the full steps' least cost to cover
/// m tokens exactly, then the best padded or full last step), its padded end within `capacity`,
/// each padded token costing `paddingPriceUs` more (prefillPaddingPrice: what keeps the mean
/// padding within kMaxMeanPadding); ties go to less padding, then to larger steps first. A
/// chunk costs far more than its tokens' share (H200, 0.8B Llama: 1.11 ms for 32 tokens, 1.95
/// for 256, 8.0 for 2048), so a 128-token prompt runs one chunk of 256, padded, instead of
/// four of 32. Full steps come first, largest first, then the last step.
///
/// Otherwise by padding, each
/// time (among steps of batch 1 with tokens > 1): the smallest step that holds the rest with at
/// most 1/8 of its tokens padding; else the largest step the rest fills; else the smallest step
/// that holds the rest, padded (padding writes the slots after
/// the real tokens, which the next steps overwrite); a chunk is only used when its padded end
/// stays within `capacity` tokens (the sequence's cache), else smaller steps, down to one token
/// per step through the decode step of batch 1 (or, without one, the smallest decode step, with
/// padding rows). Empty when promptLength < 1 or no step can run the prompt.
std::vector<PrefillChunk> planPrefill(const std::vector<StepShape> &steps, int64_t promptLength,
                                      int64_t capacity, double paddingPriceUs = 0);

/// The bound on the mean padding of the prefill plans over prompt lengths 1..capacity (padded
/// tokens / tokens run averaged over the lengths, and all padded tokens / all tokens run): 1/8,
/// the text-generation issue's bound.
constexpr double kMaxMeanPadding = 0.125;

/// prefillPaddingPrice averages over prompt lengths 1..min(capacity, this).
constexpr int64_t kPaddingPriceLengths = int64_t(1) << 17;

/// The price in microseconds per padded token that planPrefill's plan by time charges so that
/// both mean paddings of its plans over prompt lengths 1..min(capacity, kPaddingPriceLengths),
/// and over 1..the longest prefill step's tokens (the prompt range a --shape up to 2048 tokens
/// compiles for; since session 34), stay within kMaxMeanPadding:
/// 0 when the plans of least time already do (or the steps plan by padding, which keeps each
/// chunk within 1/8), else the least price that does, found by bisection to 1% (each try
/// O(capacity x steps)). For the 0.8B Llama's programs (today's estimates 1117, 1541, 1843,
/// 3811 and 6435 us for 1, 32, 256, 1024 and 2048 tokens, capacity 2304) 11.4 us: the mean
/// padding per prompt is 11.9% over 1..2048 and 11.0% over 1..2304 (20.2% there without the
/// price), and the mean prefill over 1..2048, scored with session 23's H200 latencies, is about
/// 9% above the plans of least time (test/bench/prefill_plan_model.py; docs/generation.md).
double prefillPaddingPrice(const std::vector<StepShape> &steps, int64_t capacity);

/// The tokens planPrefill's plan runs (its steps' sizes, padding included), 0 when there is no
/// plan. Planning by padding, in time independent of `promptLength`: every plan starts with
/// floor(promptLength / L) chunks of the largest prefill step L (the rest fills each one, and a
/// prompt that fits its sequence leaves room for it), so only the plan of the rest is built.
/// Planning by time, in O(promptLength x steps); PrefillCosts answers many lengths at once.
int64_t prefillTokensRun(const std::vector<StepShape> &steps, int64_t promptLength,
                         int64_t capacity, double paddingPriceUs = 0);

/// The time plan's cost and tokens for every prompt length up to `longest` at once (what
/// kiln_generator_prefill_waste sums and what planPrefill reads its plan from): built in
/// O(longest x steps), then O(1) per length. Valid only when planPrefill plans `steps` by time
/// (byTime()).
class PrefillCosts {
public:
  PrefillCosts(const std::vector<StepShape> &steps, int64_t longest, int64_t capacity,
               double paddingPriceUs = 0);
  /// True when every step the plan may use has a cost (planPrefill plans by time).
  bool byTime() const { return byTime_; }
  /// The tokens the time plan of `promptLength` (1..longest) runs, padding included; 0 when
  /// there is no plan. `costUs` (optional) receives its summed cost.
  int64_t tokensRun(int64_t promptLength, double *costUs = nullptr) const;

private:
  friend std::vector<PrefillChunk> planPrefill(const std::vector<StepShape> &, int64_t, int64_t,
                                               double);
  /// A step the plan may use: its index in the `steps` given, its tokens and cost.
  struct Candidate {
    size_t step = 0;
    int64_t tokens = 0;
    double costUs = 0;
  };
  struct Last {
    size_t candidate = 0; ///< index into candidates_
    int64_t tokens = 0;   ///< real tokens in the last step
    double cost = 0;      ///< the plan's summed cost (its padding's price not included)
  };
  std::optional<Last> last(int64_t promptLength) const;
  std::vector<Candidate> candidates_; ///< largest first
  std::vector<double> full_;          ///< least cost of covering m tokens with full steps
  std::vector<int> fullChoice_;       ///< index into candidates_ of that plan's first step; -1
  std::vector<std::optional<Last>> lasts_; ///< the last step of each prompt length's plan
  int64_t capacity_ = 0;
  bool byTime_ = false;
};

/// The cache's blocks, handed out lowest id first. With `reserveSpare` the last block is kept
/// as the spare that padding rows and unused block-table entries point at (spare() is its id);
/// without, every block is handed out and spare() is -1.
class BlockAllocator {
public:
  BlockAllocator(int64_t poolBlocks, int64_t blockSize, bool reserveSpare = true);
  /// Grows `blocks` (a sequence's blocks in logical order) to hold `tokens` tokens. False, with
  /// `blocks` unchanged, when the free blocks do not suffice.
  bool reserve(std::vector<int32_t> &blocks, int64_t tokens);
  /// Returns every block of `blocks` and clears it.
  void release(std::vector<int32_t> &blocks);
  int64_t freeBlocks() const { return static_cast<int64_t>(free_.size()); }
  int32_t spare() const { return spare_; }
  int64_t blockSize() const { return blockSize_; }

private:
  std::vector<int32_t> free_; ///< a stack; the lowest ids are handed out first
  int32_t spare_ = 0;
  int64_t blockSize_ = 1;
};

/// Picks the next token from `logits` (V floats) per kiln_sampling_params_t's rule; `rng` is the
/// sequence's generator (seeded once with the request's seed). Greedy draws no random number.
int64_t sampleToken(const float *logits, size_t vocab, const kiln_sampling_params_t &params,
                    std::mt19937_64 &rng);

/// Empty when `params` is valid, else why not (the text after "request N: "): temperature
/// NaN or infinite (any finite value is allowed; <= 0 is greedy), top_k < 0, top_p NaN or
/// outside (0, 1]. kiln_generate checks every request with it before any device work, greedy
/// or not, so a parameter that would only matter once sampling is turned on is still refused.
std::string checkSamplingParams(const kiln_sampling_params_t &params);

/// One step's per-row sampling inputs (the kiln.sample inputs of a --kv-cache program, [batch]
/// each). Rows without a sequence (padding) and rows of prefill chunks whose token is not used
/// are greedy: temperature 0, top_k 0, top_p 1, seed 0, offset 0.
struct SamplingRows {
  std::vector<float> temperature, topP;
  std::vector<int32_t> topK;
  std::vector<int64_t> seed, offset;
  explicit SamplingRows(size_t batch)
      : temperature(batch, 0.0f), topP(batch, 1.0f), topK(batch, 0), seed(batch, 0),
        offset(batch, 0) {}
  /// Row `row` samples with `params`; `offset` is the number of tokens the sequence generated
  /// before this one (the random stream's counter: each draw of a sequence uses a new one).
  void set(size_t row, const kiln_sampling_params_t &params, uint64_t draws);
};

/// The p-th percentile (0..100, nearest rank) of `values`; 0 when empty.
double percentile(std::vector<double> values, double p);

} // namespace kiln::generate

#endif // KILN_RUNTIME_SRC_GENERATE_H
