#!/usr/bin/env bash
# scripts/fuzz.sh - build the libFuzzer targets (scripts/sanitize.sh's ASan + UBSan build) and
# run each for a bounded time with the seed corpus; replays test/fuzz/regressions first.
#
#   kiln-fuzz-onnx      ONNX bytes -> import -> kiln pass pipeline (kiln-compile --emit=kernels)
#   kiln-fuzz-artifact  .kiln bytes -> the runtime's artifact verifier -> every C accessor
#
# Seeds (copied into <work>/seeds/<target>, read only by the fuzzer):
#   onnx:     test/onnx/Inputs, test/codegen/Inputs, examples/models and, when present, the shared
#             models (${KILN_MODELS_DIR:-<repo>/../shared/models});
#   artifact: a few artifacts compiled with kiln-compile (NVRTC, no GPU needed): small graphs in
#             fp32 and fp16, GPT-2 tiny (fp32, and fp16 with TMA tensor maps: format 3), and GPT-2
#             tiny's two tensor-parallel rank files (format 2).
# New inputs go to <work>/corpus/<target> (kept between runs); a crash, sanitizer report, leak,
# timeout or out-of-memory stops the target, leaves the input in <work>/crashes/<target>/ and
# makes the script exit non-zero. Minimize one with
#   build-san/bin/kiln-fuzz-onnx -minimize_crash=1 -runs=10000 -exact_artifact_path=min.onnx CRASH
# and add it to test/fuzz/regressions/<target>/ (replayed here and by ctest).
#
# Usage: scripts/fuzz.sh [--time SECONDS] [--runs N] [--target onnx|artifact] [--replay-only]
#   --time   -max_total_time per target (default ${KILN_FUZZ_TIME:-60})
#   --runs   -runs per target instead of a time bound (e.g. 1000000)
# Environment: KILN_FUZZ_WORK (default <build-san>/fuzz), KILN_FUZZ_ARGS (extra libFuzzer flags),
#   KILN_COMPILE (kiln-compile for the artifact seeds; default build/bin/kiln-compile when built,
#   else the sanitized one), plus scripts/sanitize.sh's variables.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_SAN_BUILD_DIR:-$ROOT/build-san}"
WORK="${KILN_FUZZ_WORK:-$BUILD/fuzz}"
TIME="${KILN_FUZZ_TIME:-60}"
RUNS=""
TARGETS=(onnx artifact)
REPLAY_ONLY=0

log() { printf '[fuzz] %s\n' "$*"; }
die() { printf '[fuzz] ERROR: %s\n' "$*" >&2; exit 1; }

while (($#)); do
  case "$1" in
    --time) TIME="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --target) TARGETS=("$2"); shift 2 ;;
    --replay-only) REPLAY_ONLY=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

KILN_SAN_BUILD_DIR="$BUILD" "$ROOT/scripts/sanitize.sh" --build-only

# Same runtime options as scripts/sanitize.sh; libFuzzer handles the crash itself (it saves the
# input before the process ends), so no abort_on_error here.
SUPP="$ROOT/test/sanitizers"
export ASAN_OPTIONS="detect_leaks=1:allow_user_poisoning=0:suppressions=$SUPP/asan.supp${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$SUPP/ubsan.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
[[ -x /usr/lib/llvm-22/bin/llvm-symbolizer ]] && export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer

rc=0
# ---- 1. replay the stored crash inputs (test/fuzz/regressions; XFAIL lists the unfixed ones) --------
mkdir -p "$WORK"
for t in "${TARGETS[@]}"; do
  log "replaying test/fuzz/regressions/$t"
  cmake -DFUZZER="$BUILD/bin/kiln-fuzz-$t" -DKIND="$t" -DDIR="$ROOT/test/fuzz/regressions" \
    -P "$ROOT/test/fuzz/ReplayRegressions.cmake" >"$WORK/replay-$t.log" 2>&1 || {
    log "FAIL: replay of test/fuzz/regressions/$t:"; tail -60 "$WORK/replay-$t.log"; rc=1; }
  grep -E '^-- ' "$WORK/replay-$t.log" | sed "s/^-- /[fuzz] /" || true
done
((REPLAY_ONLY)) && exit "$rc"

# ---- 2. seeds --------------------------------------------------------------------------------------
mkdir -p "$WORK/seeds/onnx" "$WORK/seeds/artifact"
for t in "${TARGETS[@]}"; do mkdir -p "$WORK/corpus/$t" "$WORK/crashes/$t"; done
MODELS_DIR="${KILN_MODELS_DIR:-$ROOT/../shared/models}"
cp -f "$ROOT"/test/onnx/Inputs/*.onnx "$ROOT"/test/codegen/Inputs/*.onnx "$ROOT"/examples/models/*.onnx \
  "$WORK/seeds/onnx/"
if compgen -G "$MODELS_DIR/*.onnx" >/dev/null; then
  for m in "$MODELS_DIR"/*.onnx; do cp -f "$m" "$WORK/seeds/onnx/shared_$(basename "$m")"; done
fi

if [[ " ${TARGETS[*]} " == *" artifact "* ]]; then
  COMPILE="${KILN_COMPILE:-}"
  if [[ -z "$COMPILE" ]]; then
    COMPILE="$BUILD/bin/kiln-compile"
    [[ -x "$ROOT/build/bin/kiln-compile" ]] && COMPILE="$ROOT/build/bin/kiln-compile"
  fi
  A="$WORK/seeds/artifact"
  if ! compgen -G "$A/*.kiln" >/dev/null; then
    log "compiling artifact seeds with $COMPILE"
    I="$ROOT/test/codegen/Inputs"
    ok=1
    "$COMPILE" "$I/chain.onnx" --shape x=2x8 -o "$A/chain.kiln" >/dev/null || ok=0
    "$COMPILE" "$I/passthrough.onnx" -o "$A/passthrough.kiln" >/dev/null || ok=0
    "$COMPILE" "$I/two_inputs.onnx" --shape a=2x8,b=2x8 -o "$A/two_inputs.kiln" >/dev/null || ok=0
    "$COMPILE" "$I/attention_gqa.onnx" --precision fp16 -o "$A/attention_gqa_fp16.kiln" >/dev/null || ok=0
    G="$ROOT/examples/models/gpt2_tiny.onnx"
    "$COMPILE" "$G" --shape input_ids=1x4 -o "$A/gpt2_tiny_1x4.kiln" >/dev/null || ok=0
    "$COMPILE" "$G" --shape input_ids=1x4 --tensor-parallel 2 -o "$A/gpt2_tiny_tp2.kiln" >/dev/null || ok=0
    # fp16 on sm_90: Hopper GEMMs with TMA tensor maps (format 3)
    "$COMPILE" "$G" --shape input_ids=1x4 --precision fp16 -o "$A/gpt2_tiny_1x4_fp16.kiln" >/dev/null || ok=0
    ((ok)) || die "kiln-compile failed on an artifact seed (see above)"
  fi
fi

# ---- 3. every seed once, whole (libFuzzer's default -max_len of 1 MiB truncates the larger ones,
# the tiny transformer models and their artifacts, inside the fuzzing corpus) -----------------------
for t in "${TARGETS[@]}"; do
  mapfile -t seeds < <(find "$WORK/seeds/$t" -type f | sort)
  log "kiln-fuzz-$t on its ${#seeds[@]} seeds"
  if ! "$BUILD/bin/kiln-fuzz-$t" -rss_limit_mb=4096 "${seeds[@]}" >"$WORK/seeds-$t.log" 2>&1; then
    log "FAIL: a seed of kiln-fuzz-$t crashes ($WORK/seeds-$t.log):"
    grep -m1 -A30 -E '^==[0-9]+==|runtime error:|Assertion' "$WORK/seeds-$t.log" || tail -40 "$WORK/seeds-$t.log"
    grep -m1 '^Running: ' "$WORK/seeds-$t.log" >/dev/null && grep '^Running: ' "$WORK/seeds-$t.log" | tail -1
    rc=1
  fi
done

# ---- 4. fuzz -----------------------------------------------------------------------------------
# -timeout: one input running longer than this is a finding; -rss_limit_mb: so is using more
# memory (also the largest single allocation, -malloc_limit_mb defaults to it).
# shellcheck disable=SC2206
EXTRA=(${KILN_FUZZ_ARGS:-})
for t in "${TARGETS[@]}"; do
  bound=(-max_total_time="$TIME")
  [[ -n "$RUNS" ]] && bound=(-runs="$RUNS")
  log "kiln-fuzz-$t ${bound[*]} (log: $WORK/$t.log)"
  set +e
  "$BUILD/bin/kiln-fuzz-$t" "${bound[@]}" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$WORK/crashes/$t/" "${EXTRA[@]}" "$WORK/corpus/$t" "$WORK/seeds/$t" \
    >"$WORK/$t.log" 2>&1
  status=$?
  set -e
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^Done [0-9]+ runs' "$WORK/$t.log" |
    sed "s/^/[fuzz] kiln-fuzz-$t: /" || true
  if ((status)); then
    log "FAIL: kiln-fuzz-$t exited $status; the input is in $WORK/crashes/$t/:"
    ls -l "$WORK/crashes/$t/" || true
    grep -m1 -B2 -A30 -E '^==[0-9]+==ERROR|runtime error:|ERROR: libFuzzer' "$WORK/$t.log" || tail -40 "$WORK/$t.log"
    rc=1
  fi
done
exit "$rc"
