// kv_cache_decode_test.cpp - a `kiln-compile --kv-cache` decode step (S = 1) run token by token
// through the runtime's C API against a reference forward pass.
//
//   kv_cache_decode_test STEP.kiln TOKENS.i64 LOGITS.f32 [--tol 1e-4]
//
// TOKENS.i64: T int64 token ids (little-endian); LOGITS.f32: T x V float32, the logits of a full
// forward pass over the T tokens (row t: the logits after token t). The artifact's batch B may be
// 1 or more: every row decodes the same tokens, row r starting r steps later (its first r steps
// are idle: it holds 0 tokens and re-reads its first token at position 0 each step), so
// one batched step mixes sequences of different lengths. Each layer's cache is the artifact's
// KV-cache inputs, which the steps write in place; the block table gives row r the pool blocks
// r, r + B, r + 2B, ... (interleaved, not contiguous). Every row's logits at every real step are
// compared with the reference: max |err| / max |ref| <= tol, and the argmax must agree wherever
// the reference's top-2 margin exceeds 2 * tol * max |ref|. Then issue 19's layout rules: row r
// decodes the tokens rotated by r (so that rows hold different keys and values, and a read
// through another row's blocks shows), each pass from pools filled with a finite pattern of its
// own (so that a read of a slot the pass did not write shows), every real row-step's logits
// compared bit for bit with the pass over the interleaved table, whose row 0 (not rotated) must
// equal the reference pass's row 0 bit for bit:
//  - contiguous: row r gets the pool blocks r * MB .. r * MB + MB - 1 in order (MB blocks per
//    sequence), the contiguous layout of the same pool;
//  - shuffled: every row's blocks a seeded permutation of the whole pool's first B * MB blocks;
//  - alone (B > 1): each row decoded by itself (its tokens from step 0, every other row idle at
//    0 tokens), with the interleaved table: a sequence batched with others of different lengths
//    gives the logits it gives alone.
// Prints one line per step and a summary per check; exit 0 pass, 1 fail, 2 usage or runtime
// error, 77 no GPU.
#include "kiln/runtime.h"
#include "kv_cache_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {
bool ok(kiln_status_t s, const char *what) { return kvtest::ok(s, "kv_cache_decode_test", what); }
using kvtest::ArtifactRelease;
using kvtest::SessionRelease;
using kvtest::readFile;
} // namespace

// Every exit releases the artifact and the session (the sanitizer build checks for leaks).
int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: kv_cache_decode_test STEP.kiln TOKENS.i64 LOGITS.f32 [--tol X]\n");
    return 2;
  }
  double tol = 1e-4;
  for (int i = 4; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--tol"))
      tol = std::atof(argv[i + 1]);
  std::vector<int64_t> tokens;
  std::vector<float> ref;
  if (!readFile(argv[2], tokens) || !readFile(argv[3], ref) || ref.size() % tokens.size()) {
    std::fprintf(stderr, "kv_cache_decode_test: cannot read %s / %s (or sizes disagree)\n",
                 argv[2], argv[3]);
    return 2;
  }
  const size_t T = tokens.size(), V = ref.size() / T;

  kiln_artifact_t *artifact = nullptr;
  if (!ok(kiln_artifact_open(argv[1], &artifact), "open"))
    return 2;
  std::unique_ptr<kiln_artifact_t, ArtifactRelease> artifactHolder(artifact);
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  kiln_session_t *session = nullptr;
  kiln_status_t created = kiln_session_create(artifact, &params, &session);
  std::unique_ptr<kiln_session_t, SessionRelease> sessionHolder(session);
  if (created && kiln_status_code(created) == KILN_UNAVAILABLE) {
    std::printf("kv_cache_decode_test: no GPU (%s)\n", kiln_status_message(created));
    kiln_status_free(created);
    return 77;
  }
  if (!ok(created, "session"))
    return 2;

  // The step's inputs by role.
  std::string ids, positions, table, lens, logits = "logits";
  int64_t B = 0, maxBlocks = 0, poolBlocks = 0;
  std::vector<std::pair<std::string, size_t>> pools; // every layer's key and value pool, bytes
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_tensor_info_t info;
    kiln_input_role_t role;
    if (!ok(kiln_artifact_input_info(artifact, i, &info), "input info") ||
        !ok(kiln_artifact_input_role(artifact, i, &role), "input role"))
      return 2;
    if (role == KILN_INPUT_ROLE_DATA && !std::strcmp(info.name, "input_ids"))
      ids = info.name, B = info.shape[0];
    else if (role == KILN_INPUT_ROLE_POSITION_IDS)
      positions = info.name;
    else if (role == KILN_INPUT_ROLE_BLOCK_TABLE)
      table = info.name, maxBlocks = info.shape[1];
    else if (role == KILN_INPUT_ROLE_SEQ_LENS)
      lens = info.name;
    else if (role == KILN_INPUT_ROLE_KEY_CACHE)
      poolBlocks = info.shape[0];
    if (role == KILN_INPUT_ROLE_KEY_CACHE || role == KILN_INPUT_ROLE_VALUE_CACHE)
      pools.emplace_back(info.name, info.byte_size);
  }
  if (ids.empty() || positions.empty() || table.empty() || lens.empty() || !poolBlocks) {
    std::fprintf(stderr, "kv_cache_decode_test: %s is not a --kv-cache step\n", argv[1]);
    return 2;
  }
  kiln_tensor_info_t out;
  size_t outIndex = 0;
  if (!ok(kiln_artifact_find_output(artifact, logits.c_str(), &outIndex), "logits") ||
      !ok(kiln_artifact_output_info(artifact, outIndex, &out), "logits info"))
    return 2;
  const size_t elementBytes = out.dtype == KILN_DTYPE_F32 ? 4 : 2;
  if ((out.dtype != KILN_DTYPE_F32 && out.dtype != KILN_DTYPE_F16 &&
       out.dtype != KILN_DTYPE_BF16) ||
      out.byte_size != size_t(B) * V * elementBytes) {
    std::fprintf(stderr, "kv_cache_decode_test: logits must be f32, f16 or bf16 [%lld, 1, %zu]\n",
                 (long long)B, V);
    return 2;
  }
  if (poolBlocks < B * maxBlocks) {
    std::fprintf(stderr, "kv_cache_decode_test: the pool (%lld blocks) is smaller than batch x "
                         "blocks per sequence\n",
                 (long long)poolBlocks);
    return 2;
  }
  // One pass over the tokens with `table`: row r starts `delay * r` steps late (0: every row
  // from step 0), and when `only` >= 0 every other row stays idle (0 tokens, token 0 at position
  // 0). Before its start and after its last token a row re-reads its first / last token (idle).
  // Each real row-step's logits go to `store` at (position t, row r).
  std::vector<int64_t> stepIds(static_cast<size_t>(B)), stepPos(static_cast<size_t>(B));
  std::vector<int32_t> stepLens(static_cast<size_t>(B));
  std::vector<float> got(size_t(B) * V);
  // `rotate`: row r decodes tokens[(t + r) % T] at position t (the layout passes), else tokens[t];
  // `fill` (non-zero): every byte of the pools is set to it first (0x38..0x3f: finite values in
  // f32, f16 and bf16, a different one per pass).
  std::vector<unsigned char> pattern;
  auto runPass = [&](const std::vector<int32_t> &blockTable, int64_t delay, int64_t only,
                     bool rotate, unsigned char fill, std::vector<float> &store,
                     const std::function<void(size_t, int64_t, int64_t)> &onRow) -> bool {
    if (!ok(kiln_session_set_input(session, table.c_str(), blockTable.data(),
                                   blockTable.size() * sizeof(int32_t)),
            "block table"))
      return false;
    for (const auto &[name, bytes] : pools)
      if (fill) {
        pattern.assign(bytes, fill);
        if (!ok(kiln_session_set_input(session, name.c_str(), pattern.data(), bytes), "pool"))
          return false;
      }
    auto tokenAt = [&](int64_t r, int64_t t) {
      return tokens[size_t((rotate ? t + r : t) % int64_t(T))];
    };
    store.assign(T * size_t(B) * V, 0.0f);
    const size_t steps = T + size_t(delay * (B - 1));
    for (size_t step = 0; step < steps; ++step) {
      for (int64_t r = 0; r < B; ++r) {
        const bool idle = only >= 0 && r != only;
        const int64_t t = idle ? 0 : std::max<int64_t>(0, int64_t(step) - delay * r);
        stepIds[size_t(r)] = idle ? tokens[0] : tokenAt(r, std::min<int64_t>(t, int64_t(T) - 1));
        stepPos[size_t(r)] = std::min<int64_t>(t, int64_t(T) - 1);
        stepLens[size_t(r)] = int32_t(stepPos[size_t(r)]);
      }
      if (!ok(kiln_session_set_input(session, ids.c_str(), stepIds.data(), stepIds.size() * 8),
              "input_ids") ||
          !ok(kiln_session_set_input(session, positions.c_str(), stepPos.data(),
                                     stepPos.size() * 8),
              "position_ids") ||
          !ok(kiln_session_set_input(session, lens.c_str(), stepLens.data(),
                                     stepLens.size() * 4),
              "seq_lens") ||
          !ok(kiln_session_run(session, nullptr), "run") ||
          !kvtest::getOutputAsFloat(session, logits.c_str(), out, got, "kv_cache_decode_test"))
        return false;
      for (int64_t r = 0; r < B; ++r) {
        const int64_t t = int64_t(step) - delay * r;
        if ((only >= 0 && r != only) || t < 0 || t >= int64_t(T))
          continue; // idle (not started, or finished and repeating its last token)
        std::copy(got.begin() + r * int64_t(V), got.begin() + (r + 1) * int64_t(V),
                  store.begin() + (t * B + r) * int64_t(V));
        if (onRow)
          onRow(step, r, t);
      }
    }
    return true;
  };

  // Row r gets pool blocks r, r + B, r + 2B, ... (interleaved).
  std::vector<int32_t> interleaved(size_t(B * maxBlocks)), contiguous(interleaved.size()),
      shuffled(interleaved.size());
  for (int64_t r = 0; r < B; ++r)
    for (int64_t n = 0; n < maxBlocks; ++n) {
      interleaved[size_t(r * maxBlocks + n)] = int32_t(n * B + r);
      contiguous[size_t(r * maxBlocks + n)] = int32_t(r * maxBlocks + n);
    }
  std::iota(shuffled.begin(), shuffled.end(), 0);
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(20261205));

  double worst = 0;
  int failures = 0, checked = 0;
  std::vector<float> first;
  if (!runPass(interleaved, 1, -1, false, 0, first, [&](size_t step, int64_t r, int64_t t) {
        const float *want = ref.data() + size_t(t) * V,
                    *have = first.data() + size_t(t * B + r) * V;
        const kvtest::RowCheck c = kvtest::compareRow(have, want, V, tol);
        worst = std::max(worst, c.rel);
        ++checked;
        failures += !c.pass;
        std::printf("%s step %2zu row %lld position %2lld: rel err %.2e, argmax %zu (ref %zu)\n",
                    c.pass ? "PASS" : "FAIL", step, (long long)r, (long long)t, c.rel, c.argHave,
                    c.argWant);
      }))
    return 2;

  // The layout rules: bit for bit against the rotated tokens over the interleaved table.
  std::vector<float> reference = std::move(first);
  if (!runPass(interleaved, 1, -1, true, 0x38, first, nullptr))
    return 2;
  auto sameAsFirst = [&](const char *what, const std::vector<float> &other, int64_t onlyRow) {
    int differ = 0, compared = 0;
    for (int64_t t = 0; t < int64_t(T); ++t)
      for (int64_t r = 0; r < B; ++r) {
        if (onlyRow >= 0 && r != onlyRow)
          continue;
        const size_t at = size_t(t * B + r) * V;
        ++compared;
        if (std::memcmp(first.data() + at, other.data() + at, V * sizeof(float)) != 0) {
          ++differ;
          double d = 0;
          for (size_t v = 0; v < V; ++v)
            d = std::max(d, double(std::fabs(first[at + v] - other[at + v])));
          std::printf("FAIL %s: row %lld position %lld differs from the interleaved batch (max "
                      "|diff| %.3e)\n",
                      what, (long long)r, (long long)t, d);
        }
      }
    return std::make_pair(differ, compared);
  };
  int layoutFailures = 0;
  {
    // Row 0 is not rotated: the baseline's row 0 is the reference pass's, bit for bit.
    const auto [differ, compared] = sameAsFirst("row 0 rotated", reference, 0);
    std::printf("%s rotated baseline: %d of %d steps of row 0 differ from the reference pass's "
                "(bit for bit)\n",
                differ ? "FAIL" : "PASS", differ, compared);
    layoutFailures += differ != 0;
  }
  std::vector<float> other;
  for (const auto &[what, layout, fill] :
       {std::make_tuple("contiguous", &contiguous, 0x39), std::make_tuple("shuffled", &shuffled, 0x3a)}) {
    if (!runPass(*layout, 1, -1, true, (unsigned char)fill, other, nullptr))
      return 2;
    const auto [differ, compared] = sameAsFirst(what, other, -1);
    layoutFailures += differ != 0;
    std::printf("%s %s blocks: %d of %d row-steps differ from the interleaved table's (bit for "
                "bit)\n",
                differ ? "FAIL" : "PASS", what, differ, compared);
  }
  if (B > 1) {
    int differ = 0, compared = 0;
    for (int64_t r = 0; r < B; ++r) {
      if (!runPass(interleaved, 0, r, true, (unsigned char)(0x3b + r % 5), other, nullptr))
        return 2;
      const auto [d, c] = sameAsFirst("alone", other, r);
      differ += d;
      compared += c;
    }
    std::printf("%s alone: %d of %d row-steps of a row decoded by itself differ from the "
                "batched run's (bit for bit)\n",
                differ ? "FAIL" : "PASS", differ, compared);
    layoutFailures += differ != 0;
  }
  std::printf("%s: %d of %d row-steps failed; worst rel err %.2e (tol %.1e), batch %lld, %zu "
              "tokens; layouts (row 0 rotated, contiguous, shuffled%s) bit for bit: %d of %d failed\n",
              failures || layoutFailures ? "FAIL" : "OK", failures, checked, worst, tol,
              (long long)B, T, B > 1 ? ", alone" : "", layoutFailures, B > 1 ? 4 : 3);
  return failures || layoutFailures ? 1 : 0;
}
