// kv_cache_programs_test.cpp - the programs of one `kiln-compile --kv-cache --shape
// input_ids=1..B1x1..S1` artifact run as a generation loop would run them, through the runtime's
// C API, against a reference forward pass.
//
//   kv_cache_programs_test STEPS.kiln TOKENS.i64 LOGITS.f32 PROMPT [--tol 1e-4] [--chunk 3]
//
// TOKENS.i64: T int64 token ids; LOGITS.f32: T x V float32, the logits of a full forward pass
// over them (row t: after token t). One sequence:
//   1. prefill: the first PROMPT tokens in chunks of --chunk real tokens through the smallest
//      prefill program (prefill_b1_s<C>), each chunk padded to C tokens (pad: token 0 at the
//      chunk's last real position) and attending to the chunks before it through the cache;
//      every real row of every chunk is compared with the reference, or the last real row
//      when the program returns that row only (kiln-compile --prefill-logits last, the default);
//   2. decode: the remaining tokens one per step through decode_b1, each compared;
//   3. a batch bucket: the last token again through the smallest decode program with batch > 1
//      (when there is one), row 0 the sequence and the other rows padding (0 tokens, every block
//      table entry the pool's last, spare block): row 0 is compared, and decode_b1 run again on
//      the same token must give bit-identical logits to step 2's (the padding rows wrote nothing
//      of the sequence's).
// All programs share one set of KV-cache pools: the prefill session's own buffers, bound into the
// decode sessions (kiln_session_bind_input). Comparison: max |err| / max |ref| <= tol, argmax
// equal where the reference's top-2 margin exceeds 2 * tol * max |ref|. Exit 0 pass, 1 fail, 2
// usage or runtime error, 77 no GPU.
#include "kiln/runtime.h"
#include "kv_cache_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

bool ok(kiln_status_t s, const char *what) { return kvtest::ok(s, "kv_cache_programs_test", what); }
using kvtest::ArtifactPtr;
using kvtest::readFile;
using kvtest::SessionPtr;

/// One program and its session, with its inputs found by role.
struct Step {
  ArtifactPtr program;
  SessionPtr session;
  std::string name, ids, positions, table, lens;
  std::vector<std::string> pools; // key and value pools, in input order
  int64_t batch = 0, tokens = 0, maxBlocks = 0, poolBlocks = 0;
};

/// Fills `step` from program `program`. False (with a message) when it is not a --kv-cache step.
bool describe(kiln_artifact_t *program, Step &step) {
  step.program.reset(program);
  step.name = kiln_artifact_program_name(program);
  for (size_t i = 0; i < kiln_artifact_input_count(program); ++i) {
    kiln_tensor_info_t info;
    kiln_input_role_t role;
    if (!ok(kiln_artifact_input_info(program, i, &info), "input info") ||
        !ok(kiln_artifact_input_role(program, i, &role), "input role"))
      return false;
    if (role == KILN_INPUT_ROLE_DATA && !std::strcmp(info.name, "input_ids"))
      step.ids = info.name, step.batch = info.shape[0], step.tokens = info.shape[1];
    else if (role == KILN_INPUT_ROLE_POSITION_IDS)
      step.positions = info.name;
    else if (role == KILN_INPUT_ROLE_BLOCK_TABLE)
      step.table = info.name, step.maxBlocks = info.shape[1];
    else if (role == KILN_INPUT_ROLE_SEQ_LENS)
      step.lens = info.name;
    else if (role == KILN_INPUT_ROLE_KEY_CACHE || role == KILN_INPUT_ROLE_VALUE_CACHE)
      step.pools.push_back(info.name), step.poolBlocks = info.shape[0];
  }
  if (step.ids.empty() || step.positions.empty() || step.table.empty() || step.lens.empty() ||
      step.pools.empty()) {
    std::fprintf(stderr, "kv_cache_programs_test: program '%s' is not a --kv-cache step\n",
                 step.name.c_str());
    return false;
  }
  return true;
}

/// Runs one step: row r of the batch gets ids[r * tokens ..], positions likewise, seq_lens[r] and
/// block table row r; returns the logits [batch, tokens or 1, V] in `logits`.
bool run(Step &step, const std::vector<int64_t> &ids, const std::vector<int64_t> &positions,
         const std::vector<int32_t> &lens, const std::vector<int32_t> &table,
         std::vector<float> &logits) {
  kiln_session_t *s = step.session.get();
  size_t index = 0;
  kiln_tensor_info_t out;
  if (!ok(kiln_artifact_find_output(step.program.get(), "logits", &index), "logits") ||
      !ok(kiln_artifact_output_info(step.program.get(), index, &out), "logits info"))
    return false;
  return ok(kiln_session_set_input(s, step.ids.c_str(), ids.data(), ids.size() * 8), "ids") &&
         ok(kiln_session_set_input(s, step.positions.c_str(), positions.data(),
                                   positions.size() * 8),
            "positions") &&
         ok(kiln_session_set_input(s, step.lens.c_str(), lens.data(), lens.size() * 4), "lens") &&
         ok(kiln_session_set_input(s, step.table.c_str(), table.data(), table.size() * 4),
            "table") &&
         ok(kiln_session_run(s, nullptr), "run") &&
         kvtest::getOutputAsFloat(s, "logits", out, logits, "kv_cache_programs_test");
}

struct Checker {
  double tol = 1e-4, worst = 0;
  int failures = 0, checked = 0;
  /// Compares V logits `have` with the reference row `want`.
  void check(const char *what, long long position, const float *have, const float *want,
             size_t V) {
    const kvtest::RowCheck c = kvtest::compareRow(have, want, V, tol);
    const double rel = c.rel;
    const bool pass = c.pass;
    const size_t argHave = c.argHave, argWant = c.argWant;
    worst = std::max(worst, rel);
    ++checked;
    failures += !pass;
    std::printf("%s %s position %2lld: rel err %.2e, argmax %zu (ref %zu)\n",
                pass ? "PASS" : "FAIL", what, position, rel, argHave, argWant);
  }
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: kv_cache_programs_test STEPS.kiln TOKENS.i64 LOGITS.f32 PROMPT "
                         "[--tol X] [--chunk N]\n");
    return 2;
  }
  Checker checker;
  int64_t chunk = 3;
  for (int i = 5; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--tol"))
      checker.tol = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--chunk"))
      chunk = std::max(1, std::atoi(argv[i + 1]));
  }
  std::vector<int64_t> tokens;
  std::vector<float> ref;
  if (!readFile(argv[2], tokens) || !readFile(argv[3], ref) || ref.size() % tokens.size()) {
    std::fprintf(stderr, "kv_cache_programs_test: cannot read %s / %s (or sizes disagree)\n",
                 argv[2], argv[3]);
    return 2;
  }
  const int64_t T = int64_t(tokens.size()), prompt = std::atoll(argv[4]);
  const size_t V = ref.size() / size_t(T);
  if (prompt < 1 || prompt >= T) {
    std::fprintf(stderr, "kv_cache_programs_test: PROMPT must be in [1, %lld)\n", (long long)T);
    return 2;
  }

  kiln_artifact_t *opened = nullptr;
  if (!ok(kiln_artifact_open(argv[1], &opened), "open"))
    return 2;
  ArtifactPtr file(opened);
  // The smallest prefill chunk, decode_b1 and the smallest batch bucket above 1.
  Step prefill, decode, bucket;
  for (size_t p = 0; p < kiln_artifact_program_count(file.get()); ++p) {
    kiln_artifact_t *program = nullptr;
    if (!ok(kiln_artifact_program(file.get(), p, &program), "program"))
      return 2;
    Step step;
    if (!describe(program, step))
      return 2;
    Step *slot = nullptr;
    if (step.tokens > 1 && step.batch == 1)
      slot = !prefill.program || step.tokens < prefill.tokens ? &prefill : nullptr;
    else if (step.tokens == 1 && step.batch == 1)
      slot = &decode;
    else if (step.tokens == 1 && (!bucket.program || step.batch < bucket.batch))
      slot = &bucket;
    if (slot)
      *slot = std::move(step);
  }
  if (!prefill.program || !decode.program) {
    std::fprintf(stderr, "kv_cache_programs_test: %s has no prefill_b1_s<C> or no decode_b1 "
                         "program (compile with --shape input_ids=1..B1x1..S1, S1 > 1)\n",
                 argv[1]);
    return 2;
  }
  if (chunk > prefill.tokens)
    chunk = prefill.tokens;
  std::printf("programs: prefill '%s' (chunks of %lld real tokens), decode '%s', bucket '%s'\n",
              prefill.name.c_str(), (long long)chunk, decode.name.c_str(),
              bucket.program ? bucket.name.c_str() : "(none)");

  // Sessions; the prefill session's pools are everyone's.
  for (Step *step : {&prefill, &decode, &bucket}) {
    if (!step->program)
      continue;
    kiln_session_params_t params;
    kiln_session_params_initialize(&params);
    kiln_session_t *session = nullptr;
    kiln_status_t created = kiln_session_create(step->program.get(), &params, &session);
    if (created && kiln_status_code(created) == KILN_UNAVAILABLE) {
      std::printf("kv_cache_programs_test: no GPU (%s)\n", kiln_status_message(created));
      kiln_status_free(created);
      return 77;
    }
    if (!ok(created, "session"))
      return 2;
    step->session.reset(session);
  }
  for (const std::string &pool : prefill.pools) {
    uint64_t pointer = 0;
    size_t index = 0;
    kiln_tensor_info_t info;
    if (!ok(kiln_session_input_device_ptr(prefill.session.get(), pool.c_str(), &pointer),
            "pool pointer") ||
        !ok(kiln_artifact_find_input(prefill.program.get(), pool.c_str(), &index), "pool") ||
        !ok(kiln_artifact_input_info(prefill.program.get(), index, &info), "pool info"))
      return 2;
    for (Step *step : {&decode, &bucket})
      if (step->program &&
          !ok(kiln_session_bind_input(step->session.get(), pool.c_str(), pointer, info.byte_size),
              "bind pool"))
        return 2;
  }
  // The sequence owns blocks 0 .. maxBlocks - 1; the pool's last block is the spare.
  std::vector<int32_t> sequenceTable(size_t(decode.maxBlocks));
  for (int64_t n = 0; n < decode.maxBlocks; ++n)
    sequenceTable[size_t(n)] = int32_t(n);
  const int32_t spare = int32_t(decode.poolBlocks - 1);
  if (decode.poolBlocks <= decode.maxBlocks) {
    std::fprintf(stderr, "kv_cache_programs_test: the pool has no spare block\n");
    return 2;
  }

  // 1. Prefill in chunks.
  std::vector<float> logits;
  for (int64_t start = 0; start < prompt; start += chunk) {
    const int64_t n = std::min(chunk, prompt - start), C = prefill.tokens;
    std::vector<int64_t> ids(size_t(C), tokens[0]), positions(size_t(C), start + n - 1);
    for (int64_t i = 0; i < n; ++i)
      ids[size_t(i)] = tokens[size_t(start + i)], positions[size_t(i)] = start + i;
    if (!run(prefill, ids, positions, {int32_t(start)}, sequenceTable, logits))
      return 2;
    if (logits.size() == V) { // --prefill-logits last: the last real token's row only
      checker.check("prefill", start + n - 1, logits.data(),
                    ref.data() + size_t(start + n - 1) * V, V);
      continue;
    }
    for (int64_t i = 0; i < n; ++i)
      checker.check("prefill", start + i, logits.data() + size_t(i) * V,
                    ref.data() + size_t(start + i) * V, V);
  }
  // 2. Decode.
  std::vector<float> lastDecode;
  for (int64_t t = prompt; t < T; ++t) {
    if (!run(decode, {tokens[size_t(t)]}, {t}, {int32_t(t)}, sequenceTable, logits))
      return 2;
    checker.check("decode ", t, logits.data(), ref.data() + size_t(t) * V, V);
    lastDecode = logits;
  }
  // 3. The batch bucket with padding rows, then decode_b1 again.
  if (bucket.program) {
    const int64_t B = bucket.batch, t = T - 1;
    std::vector<int64_t> ids(size_t(B), tokens[0]), positions(size_t(B), 0);
    std::vector<int32_t> lens(size_t(B), 0), table(size_t(B * bucket.maxBlocks), spare);
    ids[0] = tokens[size_t(t)], positions[0] = t, lens[0] = int32_t(t);
    std::copy(sequenceTable.begin(), sequenceTable.end(), table.begin());
    if (!run(bucket, ids, positions, lens, table, logits))
      return 2;
    checker.check("bucket ", t, logits.data(), ref.data() + size_t(t) * V, V);
    if (!run(decode, {tokens[size_t(t)]}, {t}, {int32_t(t)}, sequenceTable, logits))
      return 2;
    const bool same = logits == lastDecode;
    checker.failures += !same;
    ++checker.checked;
    std::printf("%s decode_b1 after the bucket's padding rows: logits %s\n",
                same ? "PASS" : "FAIL", same ? "bit-identical" : "differ");
  }
  std::printf("%s: %d of %d checks failed; worst rel err %.2e (tol %.1e), prompt %lld, %lld "
              "tokens\n",
              checker.failures ? "FAIL" : "OK", checker.failures, checker.checked, checker.worst,
              checker.tol, (long long)prompt, (long long)T);
  return checker.failures ? 1 : 0;
}
