// GenerateTest.cpp - the host-side parts of kiln_generate (runtime/src/Generate.h): which program
// runs a step, prefill chunking, the cache's block allocator, the sampler, and the argument
// checks of the generation API that come before any device work. The loop itself runs on a GPU
// (test/gpu/kv_cache_programs_test.cpp and kiln-run --generate).
#include "Generate.h"
#include "kiln/runtime.h"

#include "TestArtifact.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace kiln::generate;

namespace {
/// The programs kiln-compile makes for --shape input_ids=1..8x1..2048: decode_b1, _b2, _b4, _b8,
/// prefill_b1_s2048, prefill_b1_s256, prefill_b1_s32.
std::vector<StepShape> defaultSteps() {
  return {{0, 1, 1}, {1, 2, 1}, {2, 4, 1}, {3, 8, 1}, {4, 1, 2048}, {5, 1, 256}, {6, 1, 32}};
}

std::string describe(const std::vector<PrefillChunk> &plan,
                     const std::vector<StepShape> &steps) {
  std::string text;
  for (const PrefillChunk &c : plan)
    text += (text.empty() ? "" : " ") + std::to_string(steps[c.step].tokens) + ":" +
            std::to_string(c.start) + "+" + std::to_string(c.tokens);
  return text;
}
} // namespace

TEST(GeneratePlan, DecodeStepIsTheSmallestBatchThatHoldsTheSequences) {
  auto steps = defaultSteps();
  EXPECT_EQ(pickDecodeStep(steps, 1), 0u);
  EXPECT_EQ(pickDecodeStep(steps, 2), 1u);
  EXPECT_EQ(pickDecodeStep(steps, 3), 2u);
  EXPECT_EQ(pickDecodeStep(steps, 5), 3u);
  EXPECT_EQ(pickDecodeStep(steps, 8), 3u);
  EXPECT_EQ(pickDecodeStep(steps, 9), std::nullopt);
}

TEST(GeneratePlan, PrefillUsesLargeChunksThenPadsTheLastSmallOne) {
  auto steps = defaultSteps();
  EXPECT_EQ(describe(planPrefill(steps, 1, 2048), steps), "32:0+1");
  EXPECT_EQ(describe(planPrefill(steps, 32, 2048), steps), "32:0+32");
  EXPECT_EQ(describe(planPrefill(steps, 100, 2048), steps), "32:0+32 32:32+32 32:64+32 32:96+4");
  EXPECT_EQ(describe(planPrefill(steps, 300, 2048), steps), "256:0+256 32:256+32 32:288+12");
  EXPECT_EQ(describe(planPrefill(steps, 512, 2048), steps), "256:0+256 256:256+256");
  // A larger step padded by at most 1/8 of it runs instead of many smaller ones.
  EXPECT_EQ(describe(planPrefill(steps, 250, 2048), steps), "256:0+250");
  EXPECT_EQ(describe(planPrefill(steps, 2047, 2304), steps), "2048:0+2047");
  EXPECT_EQ(describe(planPrefill(steps, 1792, 2304), steps), "2048:0+1792");
  EXPECT_EQ(describe(planPrefill(steps, 1700, 2304), steps),
            "256:0+256 256:256+256 256:512+256 256:768+256 256:1024+256 256:1280+256 "
            "32:1536+32 32:1568+32 32:1600+32 32:1632+32 32:1664+32 32:1696+4");
  EXPECT_EQ(describe(planPrefill(steps, 4000, 4096), steps), "2048:0+2048 2048:2048+1952");
  // ... but not past the end of the cache.
  EXPECT_EQ(describe(planPrefill(steps, 2047, 2047), steps).substr(0, 10), "256:0+256 ");
  // Near the end of the cache a padded chunk must not reach past it: smaller steps, then one
  // token per step.
  EXPECT_EQ(describe(planPrefill(steps, 40, 40), steps), "32:0+32 1:32+1 1:33+1 1:34+1 1:35+1 "
                                                         "1:36+1 1:37+1 1:38+1 1:39+1");
  EXPECT_TRUE(planPrefill(steps, 0, 2048).empty());
  EXPECT_TRUE(planPrefill(steps, 41, 40).empty());
}

// prefillTokensRun (what kiln_generator_prefill_waste sums over every prompt length, so that
// --info stays fast for a --max-seq-len of millions) equals the plan's tokens for every prompt,
// near the end of the cache too, and without prefill programs.
TEST(GeneratePlan, TokensRunMatchesThePlanForEveryPrompt) {
  auto steps = defaultSteps();
  std::vector<StepShape> decodeOnly = {{0, 1, 1}, {1, 2, 1}};
  std::vector<StepShape> oneChunk = {{0, 1, 1}, {1, 1, 48}};
  for (const auto *set : {&steps, &decodeOnly, &oneChunk})
    for (int64_t capacity : {int64_t(1), int64_t(40), int64_t(300), int64_t(2304)})
      for (int64_t p = 0; p <= capacity + 1; ++p) {
        int64_t planned = 0;
        for (const PrefillChunk &c : planPrefill(*set, p, capacity))
          planned += (*set)[c.step].tokens;
        ASSERT_EQ(prefillTokensRun(*set, p, capacity), planned)
            << "prompt " << p << ", capacity " << capacity << ", " << set->size() << " steps";
      }
}

/// defaultSteps with the program latencies measured on the H200 (0.8B Llama, session 22, CUDA
/// graph p50 in us; decode_b2 and _b4 between b1's and b8's).
std::vector<StepShape> timedSteps() {
  return {{0, 1, 1, 830},     {1, 2, 1, 900},     {2, 4, 1, 1100}, {3, 8, 1, 1933},
          {4, 1, 2048, 8000}, {5, 1, 256, 1946}, {6, 1, 32, 1114}};
}

/// The least summed cost plus `price` per padded token (the last step's) over every plan of
/// whole steps with only the last one padded, by exhaustive recursion (small prompts only):
/// what the time plan must reach.
double bruteForceCost(const std::vector<StepShape> &steps, int64_t start, int64_t prompt,
                      int64_t capacity, double price = 0) {
  if (start >= prompt)
    return 0;
  double best = std::numeric_limits<double>::infinity();
  for (const StepShape &s : steps) {
    const bool prefill = s.batch == 1 && s.tokens > 1, single = s.tokens == 1 && s.batch == 1;
    if ((!prefill && !single) || start + s.tokens > capacity)
      continue;
    if (start + s.tokens >= prompt) // the last step, padded or exactly full
      best = std::min(best, s.costUs + price * double(start + s.tokens - prompt));
    else
      best = std::min(best, s.costUs + bruteForceCost(steps, start + s.tokens, prompt, capacity,
                                                      price));
  }
  return best;
}

double planCost(const std::vector<PrefillChunk> &plan, const std::vector<StepShape> &steps) {
  double cost = 0;
  for (const PrefillChunk &c : plan)
    cost += steps[c.step].costUs;
  return cost;
}

TEST(GeneratePlan, PrefillByTimePadsOneLargeChunkWhereItIsFaster) {
  auto steps = timedSteps();
  // One chunk of 256 (1.95 ms), not 4 of 32 (4.46 ms); one of 2048 (8.0 ms), not 6 x 256 + 6 x 32.
  EXPECT_EQ(describe(planPrefill(steps, 128, 2304), steps), "256:0+128");
  EXPECT_EQ(describe(planPrefill(steps, 40, 2304), steps), "256:0+40");
  // 33 tokens: one step of 1 and one of 32 (1.944 ms) against a padded 256 (1.946 ms).
  EXPECT_EQ(describe(planPrefill(steps, 33, 2304), steps), "1:0+1 32:1+32");
  EXPECT_EQ(describe(planPrefill(steps, 1700, 2304), steps), "2048:0+1700");
  EXPECT_EQ(describe(planPrefill(steps, 1024, 2304), steps),
            "256:0+256 256:256+256 256:512+256 256:768+256");
  EXPECT_EQ(describe(planPrefill(steps, 300, 2304), steps), "256:0+256 256:256+44");
  // Where one step is exactly full nothing changes.
  EXPECT_EQ(describe(planPrefill(steps, 32, 2304), steps), "32:0+32");
  EXPECT_EQ(describe(planPrefill(steps, 1, 2304), steps), "1:0+1");
  EXPECT_EQ(describe(planPrefill(steps, 4000, 4096), steps), "2048:0+2048 2048:2048+1952");
  // The padded end stays within the cache: 2047 tokens of a 2047-token cache cannot pad to 2048.
  std::vector<PrefillChunk> nearEnd = planPrefill(steps, 2047, 2047);
  ASSERT_FALSE(nearEnd.empty());
  EXPECT_EQ(nearEnd.back().start + nearEnd.back().tokens, 2047);
  for (const PrefillChunk &c : nearEnd)
    EXPECT_LE(c.start + steps[c.step].tokens, 2047) << describe(nearEnd, steps);
  EXPECT_TRUE(planPrefill(steps, 0, 2048).empty());
  EXPECT_TRUE(planPrefill(steps, 41, 40).empty());
}

// Against exhaustive search: the plan covers the prompt exactly once, in order, pads only its
// last step, stays in the cache, and costs the least any such plan costs.
TEST(GeneratePlan, PrefillByTimeIsTheCheapestPlan) {
  std::vector<StepShape> steps = {{0, 1, 1, 300}, {1, 1, 8, 500}, {2, 1, 20, 900}};
  for (int64_t capacity : {int64_t(25), int64_t(60)})
    for (int64_t p = 1; p <= capacity; ++p) {
      std::vector<PrefillChunk> plan = planPrefill(steps, p, capacity);
      ASSERT_FALSE(plan.empty()) << p;
      int64_t at = 0;
      for (size_t i = 0; i < plan.size(); ++i) {
        EXPECT_EQ(plan[i].start, at);
        EXPECT_LE(plan[i].start + steps[plan[i].step].tokens, capacity);
        if (i + 1 < plan.size()) {
          EXPECT_EQ(plan[i].tokens, steps[plan[i].step].tokens) << "only the last step pads";
        }
        at += plan[i].tokens;
      }
      EXPECT_EQ(at, p);
      EXPECT_NEAR(planCost(plan, steps), bruteForceCost(steps, 0, p, capacity), 1e-6)
          << "prompt " << p << ", capacity " << capacity << ": " << describe(plan, steps);
    }
}

// PrefillCosts (kiln_generator_prefill_waste's table) gives every prompt's plan tokens and cost;
// an artifact without estimates (a step of cost 0) keeps the padding plan.
TEST(GeneratePlan, PrefillCostsMatchThePlanForEveryPrompt) {
  auto steps = timedSteps();
  for (int64_t capacity : {int64_t(40), int64_t(300), int64_t(2304)}) {
    PrefillCosts costs(steps, capacity, capacity);
    ASSERT_TRUE(costs.byTime());
    for (int64_t p = 1; p <= capacity; ++p) {
      std::vector<PrefillChunk> plan = planPrefill(steps, p, capacity);
      int64_t planned = 0;
      for (const PrefillChunk &c : plan)
        planned += steps[c.step].tokens;
      double cost = 0;
      ASSERT_EQ(costs.tokensRun(p, &cost), planned) << p;
      ASSERT_EQ(prefillTokensRun(steps, p, capacity), planned) << p;
      ASSERT_NEAR(cost, planCost(plan, steps), 1e-6) << p;
    }
  }
  auto untimed = timedSteps();
  untimed[5].costUs = 0;
  EXPECT_FALSE(PrefillCosts(untimed, 100, 2304).byTime());
  EXPECT_EQ(describe(planPrefill(untimed, 100, 2304), untimed),
            describe(planPrefill(defaultSteps(), 100, 2304), defaultSteps()));
}

// A price per padded token: the plan of least cost plus price x padding, and the tables agree.
TEST(GeneratePlan, PricedPaddingIsTheCheapestPricedPlan) {
  std::vector<StepShape> steps = {{0, 1, 1, 300}, {1, 1, 8, 500}, {2, 1, 20, 900}};
  for (double price : {0.0, 10.0, 40.0, 200.0})
    for (int64_t capacity : {int64_t(25), int64_t(60)}) {
      PrefillCosts costs(steps, capacity, capacity, price);
      for (int64_t p = 1; p <= capacity; ++p) {
        std::vector<PrefillChunk> plan = planPrefill(steps, p, capacity, price);
        ASSERT_FALSE(plan.empty()) << p;
        int64_t run = 0;
        for (const PrefillChunk &c : plan)
          run += steps[c.step].tokens;
        EXPECT_NEAR(planCost(plan, steps) + price * double(run - p),
                    bruteForceCost(steps, 0, p, capacity, price), 1e-6)
            << "prompt " << p << ", price " << price << ": " << describe(plan, steps);
        double cost = 0;
        ASSERT_EQ(costs.tokensRun(p, &cost), run) << p;
        ASSERT_EQ(prefillTokensRun(steps, p, capacity, price), run) << p;
        ASSERT_NEAR(cost, planCost(plan, steps), 1e-6) << "the cost leaves the price out";
      }
    }
}

/// Mean padding of the plans over prompts 1..prompts (all of 1..capacity by default) of
/// sequences of `capacity` tokens (kiln_generator_prefill_waste's mean).
double meanPaddingOf(const std::vector<StepShape> &steps, int64_t capacity, double price,
                     int64_t prompts = 0) {
  const int64_t n = prompts > 0 ? prompts : capacity;
  double sum = 0;
  for (int64_t p = 1; p <= n; ++p) {
    const int64_t run = prefillTokensRun(steps, p, capacity, price);
    sum += double(run - p) / double(run);
  }
  return sum / double(n);
}

// prefillPaddingPrice: 0 where the plans of least time pad little enough; for the 0.8B Llama's
// estimates (five programs, session 23) the price that keeps the mean padding within 1/8, close
// to the least such price.
TEST(GeneratePlan, PaddingPriceKeepsTheMeanPaddingWithinTheBound) {
  std::vector<StepShape> llama = {{0, 1, 1, 1363},    {1, 8, 1, 2400},    {2, 1, 2048, 6452},
                                  {3, 1, 1024, 3827}, {4, 1, 256, 1859}, {5, 1, 32, 1558}};
  const int64_t capacity = 2304;
  EXPECT_GT(meanPaddingOf(llama, capacity, 0), 0.2); // 20.2%: plans of least time pad a lot
  const double price = prefillPaddingPrice(llama, capacity);
  EXPECT_GT(price, 0);
  EXPECT_LE(meanPaddingOf(llama, capacity, price), kMaxMeanPadding);
  // And over the prompts up to the longest chunk (1..2048, the range; session 34):
  // there the plans pad more than over 1..2304, so that range sets the price.
  EXPECT_LE(meanPaddingOf(llama, capacity, price, 2048), kMaxMeanPadding);
  EXPECT_GT(meanPaddingOf(llama, capacity, price * 0.9, 2048), kMaxMeanPadding) << price;
  EXPECT_LT(meanPaddingOf(llama, capacity, price * 0.9), kMaxMeanPadding) << price;
  // The benchmark's prompts keep their plans: 128 tokens in one padded chunk of 256, 2048 in one.
  EXPECT_EQ(describe(planPrefill(llama, 128, capacity, price), llama), "256:0+128");
  EXPECT_EQ(describe(planPrefill(llama, 2048, capacity, price), llama), "2048:0+2048");
  // Steps whose plans already pad little (or that plan by padding) need no price.
  std::vector<StepShape> fine = {{0, 1, 1, 100}, {1, 1, 2, 120}, {2, 1, 4, 150}};
  EXPECT_EQ(prefillPaddingPrice(fine, 64), 0);
  EXPECT_EQ(prefillPaddingPrice(defaultSteps(), 2304), 0);
}

TEST(GeneratePlan, WithoutPrefillProgramsPromptsGoOneTokenPerStep) {
  std::vector<StepShape> decodeOnly = {{0, 1, 1}};
  EXPECT_EQ(describe(planPrefill(decodeOnly, 3, 64), decodeOnly), "1:0+1 1:1+1 1:2+1");
  // A single artifact of batch 4 only: its decode step, with padding rows.
  std::vector<StepShape> batch4 = {{0, 4, 1}};
  EXPECT_EQ(describe(planPrefill(batch4, 2, 64), batch4), "1:0+1 1:1+1");
  // Prefill only: a padded last chunk while the cache holds it, else no plan.
  std::vector<StepShape> prefillOnly = {{0, 1, 16}};
  EXPECT_EQ(describe(planPrefill(prefillOnly, 20, 64), prefillOnly), "16:0+16 16:16+4");
  EXPECT_TRUE(planPrefill(prefillOnly, 20, 20).empty()) << "no step fits the last 4 tokens";
}

TEST(GenerateBlocks, ReservesInOrderKeepsTheSpareAndRefusesWhenFull) {
  BlockAllocator blocks(/*poolBlocks=*/5, /*blockSize=*/16);
  EXPECT_EQ(blocks.spare(), 4);
  EXPECT_EQ(blocks.freeBlocks(), 4);
  std::vector<int32_t> a, b;
  EXPECT_TRUE(blocks.reserve(a, 17));
  EXPECT_EQ(a, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(blocks.reserve(a, 32)); // already held
  EXPECT_EQ(a.size(), 2u);
  EXPECT_FALSE(blocks.reserve(b, 2 * 16 + 1)) << "the two free blocks hold 32 tokens";
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(blocks.reserve(b, 32));
  EXPECT_EQ(b, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(blocks.freeBlocks(), 0);
  blocks.release(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(blocks.freeBlocks(), 2);
  std::vector<int32_t> c;
  EXPECT_TRUE(blocks.reserve(c, 20));
  EXPECT_EQ(c, (std::vector<int32_t>{0, 1}));
}

TEST(GenerateBlocks, WithoutASpareEveryBlockIsHandedOut) {
  // A pool of exactly batch x blocks-per-sequence (kiln-compile --shape BxS) keeps no spare.
  BlockAllocator blocks(/*poolBlocks=*/4, /*blockSize=*/16, /*reserveSpare=*/false);
  EXPECT_EQ(blocks.spare(), -1);
  EXPECT_EQ(blocks.freeBlocks(), 4);
  std::vector<int32_t> a;
  EXPECT_TRUE(blocks.reserve(a, 64));
  EXPECT_EQ(a, (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(GenerateSample, GreedyIsTheFirstLargestAndIgnoresNaN) {
  std::mt19937_64 rng(1);
  kiln_sampling_params_t greedy;
  kiln_sampling_params_initialize(&greedy);
  EXPECT_EQ(greedy.temperature, 0.0f);
  EXPECT_EQ(greedy.top_p, 1.0f);
  std::vector<float> logits = {0.5f, 2.0f, NAN, 2.0f, -1.0f};
  EXPECT_EQ(sampleToken(logits.data(), logits.size(), greedy, rng), 1);
  std::vector<float> nanFirst = {NAN, -3.0f, -2.0f};
  EXPECT_EQ(sampleToken(nanFirst.data(), nanFirst.size(), greedy, rng), 2);
  // top_k 1 and a tiny top_p give the argmax at any temperature.
  kiln_sampling_params_t k1 = greedy;
  k1.temperature = 5.0f;
  k1.top_k = 1;
  kiln_sampling_params_t p0 = greedy;
  p0.temperature = 5.0f;
  p0.top_p = 1e-6f;
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(sampleToken(logits.data(), logits.size(), k1, rng), 1);
    EXPECT_EQ(sampleToken(logits.data(), logits.size(), p0, rng), 1);
  }
}

TEST(GenerateSample, SamplingFollowsTheSoftmaxAndTheSeed) {
  // logits log(1), log(2), log(3), log(4): probabilities 0.1 .. 0.4 at temperature 1.
  std::vector<float> logits = {0.0f, std::log(2.0f), std::log(3.0f), std::log(4.0f)};
  kiln_sampling_params_t params;
  kiln_sampling_params_initialize(&params);
  params.temperature = 1.0f;
  std::mt19937_64 rng(42);
  std::map<int64_t, int> counts;
  const int draws = 20000;
  for (int i = 0; i < draws; ++i)
    ++counts[sampleToken(logits.data(), logits.size(), params, rng)];
  for (int64_t t = 0; t < 4; ++t)
    EXPECT_NEAR(counts[t] / double(draws), (t + 1) / 10.0, 0.015) << "token " << t;
  // top_k 2 keeps tokens 3 and 2 (4/7 and 3/7); top_p 0.65 keeps 3 and 2 as well (0.4 + 0.3).
  for (auto [k, p] : {std::pair<int, float>{2, 1.0f}, {0, 0.65f}}) {
    params.top_k = k;
    params.top_p = p;
    counts.clear();
    for (int i = 0; i < draws; ++i)
      ++counts[sampleToken(logits.data(), logits.size(), params, rng)];
    EXPECT_EQ(counts[0] + counts[1], 0) << "top_k " << k << " top_p " << p;
    EXPECT_NEAR(counts[3] / double(draws), 4.0 / 7.0, 0.015) << "top_k " << k << " top_p " << p;
  }
  // The same seed gives the same tokens.
  params.top_k = 0;
  params.top_p = 1.0f;
  std::mt19937_64 a(7), b(7);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(sampleToken(logits.data(), logits.size(), params, a),
              sampleToken(logits.data(), logits.size(), params, b));
}

TEST(GenerateSample, SamplingParametersAreCheckedWithTheirValues) {
  kiln_sampling_params_t params;
  kiln_sampling_params_initialize(&params);
  EXPECT_EQ(checkSamplingParams(params), "");
  // Any finite temperature is valid (<= 0: greedy); top_k 0 and top_p 1 keep every token.
  for (float t : {-3.0f, 0.0f, 1e-6f, 0.7f, 50.0f}) {
    params.temperature = t;
    EXPECT_EQ(checkSamplingParams(params), "") << t;
  }
  params.top_k = 40;
  params.top_p = 1e-6f;
  EXPECT_EQ(checkSamplingParams(params), "");
  struct Bad {
    float temperature;
    int32_t topK;
    float topP;
    const char *message;
  };
  const Bad bad[] = {
      {NAN, 0, 1.0f, "sampling.temperature is nan; it must be a finite number (<= 0: greedy)"},
      {INFINITY, 0, 1.0f,
       "sampling.temperature is inf; it must be a finite number (<= 0: greedy)"},
      {-INFINITY, 0, 1.0f,
       "sampling.temperature is -inf; it must be a finite number (<= 0: greedy)"},
      {1.0f, -1, 1.0f, "sampling.top_k is -1; it must be >= 0 (0: every token)"},
      {1.0f, 0, 0.0f, "sampling.top_p is 0; it must be in (0, 1] (1: every token)"},
      {1.0f, 0, -0.5f, "sampling.top_p is -0.5; it must be in (0, 1] (1: every token)"},
      {1.0f, 0, 1.5f, "sampling.top_p is 1.5; it must be in (0, 1] (1: every token)"},
      {1.0f, 0, NAN, "sampling.top_p is nan; it must be in (0, 1] (1: every token)"},
      // Greedy requests are checked too: the values would matter once sampling is on.
      {0.0f, -2, 1.0f, "sampling.top_k is -2; it must be >= 0 (0: every token)"},
  };
  for (const Bad &b : bad) {
    params.temperature = b.temperature;
    params.top_k = b.topK;
    params.top_p = b.topP;
    EXPECT_EQ(checkSamplingParams(params), b.message);
  }
}

TEST(GenerateSample, SamplingRowsStartGreedyAndCarryTheCounter) {
  SamplingRows rows(3);
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(rows.temperature[r], 0.0f);
    EXPECT_EQ(rows.topK[r], 0);
    EXPECT_EQ(rows.topP[r], 1.0f);
    EXPECT_EQ(rows.seed[r], 0);
    EXPECT_EQ(rows.offset[r], 0);
  }
  kiln_sampling_params_t params = {0.8f, 50, 0.9f, 0xfedcba9876543210ull};
  rows.set(1, params, 17);
  EXPECT_EQ(rows.temperature[1], 0.8f);
  EXPECT_EQ(rows.topK[1], 50);
  EXPECT_EQ(rows.topP[1], 0.9f);
  // The seed's 64 bits go through unchanged (the kernel reads them unsigned).
  EXPECT_EQ(static_cast<uint64_t>(rows.seed[1]), 0xfedcba9876543210ull);
  EXPECT_EQ(rows.offset[1], 17);
  EXPECT_EQ(rows.temperature[0], 0.0f);
  EXPECT_EQ(rows.temperature[2], 0.0f);
}

TEST(GenerateSample, PercentileIsNearestRank) {
  EXPECT_EQ(percentile({}, 50), 0.0);
  EXPECT_EQ(percentile({3, 1, 2}, 50), 2.0);
  EXPECT_EQ(percentile({1, 2, 3, 4}, 50), 2.0);
  EXPECT_EQ(percentile({1, 2, 3, 4}, 99), 4.0);
  EXPECT_EQ(percentile({5}, 0), 5.0);
}

TEST(GenerateApi, RefusesNullArgumentsAndArtifactsWithoutACache) {
  kiln_generator_t *generator = reinterpret_cast<kiln_generator_t *>(0x1);
  kiln_status_t status = kiln_generator_create(nullptr, 0, &generator);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(generator, nullptr);
  kiln_status_free(status);

  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("generate-add.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  status = kiln_generator_create(artifact, 0, &generator);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("has input 'x', which a generation step does not fill"),
            std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(generator, nullptr);
  kiln_status_free(status);
  // The prefill padding needs a generation artifact too, and its out pointers.
  double mean = -1, tokens = -1;
  status = kiln_generator_prefill_waste(artifact, 0, &mean, &tokens);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_generator_prefill_waste(artifact, 0, nullptr, &tokens);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status)).find("must be non-NULL"), std::string::npos);
  kiln_status_free(status);
  // So does the plan kind.
  int byTime = -1;
  status = kiln_generator_prefill_by_time(artifact, &byTime);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(byTime, 0);
  kiln_status_free(status);
  status = kiln_generator_prefill_by_time(artifact, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  // And the padding price.
  double price = -1;
  status = kiln_generator_prefill_padding_price(artifact, &price);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(price, 0);
  kiln_status_free(status);
  status = kiln_generator_prefill_padding_price(artifact, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status)).find("must be non-NULL"), std::string::npos);
  kiln_status_free(status);
  status = kiln_generator_prefill_padding_price(nullptr, &price);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  // The cache's blocks and the checks without a GPU (test/cli/kiln-run-generate.test has them
  // on a generation artifact): KILN_INVALID_ARGUMENT with `what` in the message.
  auto expectRefused = [](kiln_status_t refused, const char *what) {
    EXPECT_EQ(kiln_status_code(refused), KILN_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kiln_status_message(refused)).find(what), std::string::npos)
        << kiln_status_message(refused);
    kiln_status_free(refused);
  };
  const char *const notGeneration = "has input 'x', which a generation step does not fill";
  size_t blocks = 7, blockSize = 7, fullSequences = 7;
  expectRefused(kiln_generator_kv_blocks(artifact, &blocks, &blockSize, &fullSequences),
                notGeneration);
  expectRefused(kiln_generator_kv_blocks(artifact, nullptr, &blockSize, &fullSequences),
                "must be non-NULL");
  const int64_t prompt[] = {1, 2};
  kiln_generate_request_t request{};
  request.prompt = prompt;
  request.prompt_length = 2;
  request.max_new_tokens = 4;
  kiln_sampling_params_initialize(&request.sampling);
  expectRefused(kiln_generate_check(artifact, &request, 1), notGeneration);
  expectRefused(kiln_generate_check(artifact, nullptr, 1), "must be non-NULL");
  status = kiln_generate_check(nullptr, &request, 1);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  kiln_artifact_release(artifact);

  status = kiln_generate(nullptr, nullptr, 1, nullptr, nullptr, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  kiln_generate_stats_t stats;
  status = kiln_generator_last_stats(nullptr, &stats);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  EXPECT_EQ(kiln_generator_max_batch(nullptr), 0u);
  EXPECT_EQ(kiln_generator_max_seq_len(nullptr), 0u);
  kiln_generator_release(nullptr);
  kiln_sampling_params_initialize(nullptr);
}
