#!/usr/bin/env bash
# test/e2e/tp_correctness.sh - the tensor-parallel correctness table: TP=1 vs TP=2 vs loopback
# 2/4/8, per model and precision, from test/e2e/e2e_test.py.
#
# For each precision in $PRECS (default "fp32 fp16") and each mode in $MODES (default
# "tp1 tp2 loop2 loop4 loop8") it runs e2e_test.py once:
#   tp1    the plain artifact against onnxruntime;
#   tpN    --tensor-parallel N: rank artifacts on N GPUs (kiln-run --tensor-parallel N), against
#          onnxruntime and against the TP=1 artifact ("vs TP=1"); SKIP (exit 77) with fewer GPUs;
#   loopN  --tp-loopback N: all N shards in one artifact on one GPU, against both as well.
# Each log goes to $LOG_DIR/tp_<mode>_<precision>.log (default /tmp). All runs share one seed
# ($SEED, default random, printed) and one work folder (the TP=1 artifacts are compiled once).
# A model whose heads do not allow N is "n/a" (not a failure). At the end: every mode's summary
# line (`e2e tp2 fp16: 12 passed, 0 failed, 0 n/a`) and a table per model.
#
# Usage: test/e2e/tp_correctness.sh [options] [-- extra e2e_test.py arguments]
#   --kiln-compile PATH   (or $KILN_COMPILE; default build/bin/kiln-compile)
#   --kiln-run PATH       (or $KILN_RUN; default build/bin/kiln-run)
#   --models-dir DIR      (or $KILN_MODELS_DIR; default ../shared/models)
#   --artifacts DIR       (or $KILN_ARTIFACTS) run precompiled artifacts, no compiler needed
#   --compile-only DIR    compile every mode's artifacts (and the TP=1 ones) into DIR; no GPU needed
#   --log-dir DIR         (or $LOG_DIR)
# Python: $KILN_PYTHON, else <repo>/.venv/bin/python3 when it has numpy and onnxruntime, else python3.
# Exit status: 0 every mode passed or was n/a/skipped, 1 a mode failed, 2 a setup error,
# 77 every mode skipped (no GPU).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
KC="${KILN_COMPILE:-$ROOT/build/bin/kiln-compile}"
KR="${KILN_RUN:-$ROOT/build/bin/kiln-run}"
MODELS_DIR="${KILN_MODELS_DIR:-$ROOT/../shared/models}"
ARTIFACTS="${KILN_ARTIFACTS:-}"
COMPILE_ONLY=""
LOG_DIR="${LOG_DIR:-/tmp}"
PRECS="${PRECS:-fp32 fp16}"
MODES="${MODES:-tp1 tp2 loop2 loop4 loop8}"
EXTRA=()

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kiln-compile) KC="$2"; shift 2 ;;
    --kiln-run) KR="$2"; shift 2 ;;
    --models-dir) MODELS_DIR="$2"; shift 2 ;;
    --artifacts) ARTIFACTS="$2"; shift 2 ;;
    --compile-only) COMPILE_ONLY="$2"; shift 2 ;;
    --log-dir) LOG_DIR="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "tp_correctness: unknown argument '$1' (--help)"; exit 2 ;;
  esac
done
if [[ -n "$ARTIFACTS" && -n "$COMPILE_ONLY" ]]; then
  echo "tp_correctness: --artifacts and --compile-only exclude each other"; exit 2
fi

if [[ -n "${KILN_PYTHON:-}" ]]; then
  PY="$KILN_PYTHON"
elif [[ -x "$ROOT/.venv/bin/python3" ]] && "$ROOT/.venv/bin/python3" -c 'import numpy, onnxruntime' 2>/dev/null; then
  PY="$ROOT/.venv/bin/python3"
else
  PY=python3
fi
mkdir -p "$LOG_DIR" || exit 2
SEED="${SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kiln-tp-correctness.XXXXXX")"
MODEL_LINES="$WORK/model-lines.txt"
: > "$MODEL_LINES"

if [[ -n "$COMPILE_ONLY" ]]; then
  echo "tp_correctness: compile-only into $COMPILE_ONLY; modes: $MODES; precisions: $PRECS"
else
  echo "tp_correctness: seed $SEED, $GPUS GPU(s), modes: $MODES; precisions: $PRECS; logs: $LOG_DIR/tp_<mode>_<precision>.log"
fi

failed=0 errors=0 ran=0 skipped=0
SUMMARY=()
for prec in $PRECS; do
  for mode in $MODES; do
    case "$mode" in
      tp1) margs=() ;;
      tp[0-9]*) margs=(--tensor-parallel "${mode#tp}") ;;
      loop[0-9]*) margs=(--tp-loopback "${mode#loop}") ;;
      *) echo "tp_correctness: unknown mode '$mode' (tp1, tpN, loopN)"; exit 2 ;;
    esac
    log="$LOG_DIR/tp_${mode}_${prec}.log"
    cmd=("$PY" "$HERE/e2e_test.py" --models-dir "$MODELS_DIR" --kiln-compile "$KC" --kiln-run "$KR"
         --precision "$prec" ${margs[@]+"${margs[@]}"})
    if [[ -n "$COMPILE_ONLY" ]]; then
      cmd+=(--compile-only "$COMPILE_ONLY")
      pattern="^compile-only $mode $prec: "
    else
      cmd+=(--seed "$SEED" --work-dir "$WORK/run")
      [[ -n "$ARTIFACTS" ]] && cmd+=(--artifacts "$ARTIFACTS")
      pattern="^e2e $mode $prec: "
    fi
    cmd+=(${EXTRA[@]+"${EXTRA[@]}"})
    echo "\$ ${cmd[*]}" > "$log"
    "${cmd[@]}" >> "$log" 2>&1
    rc=$?
    line="$(grep -E "$pattern" "$log" | tail -1)"
    [[ -n "$line" ]] || line="$mode $prec: exit $rc without a summary line"
    case $rc in
      0) ran=$((ran + 1)) ;;
      77) skipped=$((skipped + 1)); echo "skip $mode $prec" >> "$MODEL_LINES"
          grep -qE "$pattern" "$log" || line="$line: $(grep -m1 '^SKIP: ' "$log")" ;;
      1) ran=$((ran + 1)); failed=1; line="$line  FAILED (log: $log)" ;;
      *) errors=1; line="$line  ERROR exit $rc (log: $log)"; echo "error $mode $prec" >> "$MODEL_LINES" ;;
    esac
    grep '^e2e-model ' "$log" >> "$MODEL_LINES"
    echo "$line"
    SUMMARY+=("$line")
  done
done

if [[ -z "$COMPILE_ONLY" ]] && grep -q '^e2e-model ' "$MODEL_LINES"; then
  echo
  echo "per model: result, max_rel_err vs onnxruntime / vs TP=1 (worst over shapes and masks); seed $SEED"
  awk -v modes="$MODES" -v precs="$PRECS" '
    function fmt(x) { return (x == "-" || x ~ /inf|nan/) ? x : sprintf("%.1e", x) }
    $1 == "skip" || $1 == "error" { status[$2 " " $3] = $1; next }
    $1 == "e2e-model" {
      name = $4; sub(/:$/, "", name)
      key = $2 " " $3 " " name
      if (!(name in seen)) { seen[name] = 1; order[++n] = name }
      if ($5 == "missing") { cell[key] = "missing"; next }
      pass = $5; fail = $7; na = $9; err = $12; vs = $15; sub(/,$/, "", err)
      e = fmt(err)
      v = (vs == "-") ? "" : "/" fmt(vs)
      if (fail > 0) cell[key] = "FAIL " e v
      else if (pass == 0 && na > 0) cell[key] = "n/a (heads)"
      else cell[key] = "ok " e v
    }
    END {
      nm = split(modes, m, " "); np = split(precs, p, " ")
      printf "%-20s %-6s", "model", "prec"
      for (j = 1; j <= nm; j++) printf " %-21s", m[j]
      printf "\n"
      for (i = 1; i <= n; i++) for (k = 1; k <= np; k++) {
        printf "%-20s %-6s", order[i], p[k]
        for (j = 1; j <= nm; j++) {
          key = m[j] " " p[k] " " order[i]
          c = (key in cell) ? cell[key] : ((m[j] " " p[k]) in status ? status[m[j] " " p[k]] : "-")
          printf " %-21s", c
        }
        printf "\n"
      }
    }' "$MODEL_LINES"
  echo
  echo "summary (seed $SEED):"
  printf '  %s\n' "${SUMMARY[@]}"
fi

if [[ $failed != 0 ]]; then
  if [[ -n "$COMPILE_ONLY" ]]; then
    rm -rf "$WORK"
    echo "tp_correctness: FAILED (see the logs)"
  else
    echo "tp_correctness: FAILED (inputs, outputs and artifacts kept in $WORK/run)"
  fi
  exit 1
fi
rm -rf "$WORK"
if [[ $errors != 0 ]]; then
  echo "tp_correctness: setup error (see the logs)"
  exit 2
fi
if [[ $ran == 0 && $skipped -gt 0 ]]; then
  echo "tp_correctness: every mode skipped"
  exit 77
fi
if [[ -n "$COMPILE_ONLY" ]]; then
  echo "tp_correctness: compiled every mode into $COMPILE_ONLY (n/a is not a failure)"
else
  echo "tp_correctness: passed ($ran run, $skipped skipped; n/a is not a failure)"
fi
exit 0
