#!/usr/bin/env bash
# scripts/device_sanitize.sh - compute-sanitizer (memcheck, racecheck) over every kernel family and
# the 10,000-run soak test, on the GPU machine.
#
# Every kiln-run of the GPU tests runs under compute-sanitizer through a wrapper:
#   - the small codegen models (test/e2e/small_models_test.py: pointwise chains, GEMMs with
#     epilogues, layer/RMS norms incl. block-per-row, softmax, reductions, CumSum scans, ArgMax,
#     attention, rotary, integer dtypes, zero-size tensors, contrib ops), fp32;
#   - the shared tiny models (test/e2e/e2e_test.py: GPT-2, BERT x2, Llama) at every precision the
#     carry holds (fp32 SIMT GEMMs; fp16/bf16 tensor-core GEMMs and flash attention);
#   - kiln_runtime_gpu_tests (runtime: CUDA graphs, streams, cubins, poisoning).
# Then the soak: kiln_runtime_gpu_tests --gtest_filter=Soak.* on one model (KILN_SOAK_RUNS runs,
# default 10000; device memory flat, outputs bit-identical).
#
# Inputs (environment; paths relative to the repo root):
#   KILN_RUN          kiln-run binary (required)
#   KILN_SMALL_DIR    artifacts of small_models_test.py --compile-only (optional)
#   KILN_E2E_DIR      carry folder of prepare_device_carry.sh (artifacts/, models/) (optional)
#   KILN_E2E_PRECISIONS  e2e precisions to run (default "fp32 fp16 bf16")
#   KILN_GPU_TESTS    kiln_runtime_gpu_tests binary (optional)
#   KILN_SOAK_MODEL   .kiln artifact for the soak (optional; no soak without it)
#   KILN_SANITIZE_TOOLS  default "memcheck racecheck"
#   KILN_LOG_DIR      logs (default $TMPDIR/kiln-sanitize); compute-sanitizer writes one log per
#                     process there
#   COMPUTE_SANITIZER the compute-sanitizer binary (default: PATH, then the CUDA toolkit's)
# Prints `compute-sanitizer <tool>: P processes, E errors` per tool and `soak: ...`; exit 0 when
# every tool found 0 errors, every test passed and the soak held; 1 otherwise; 2 setup error.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${KILN_PYTHON:-python3}"
LOGS="${KILN_LOG_DIR:-${TMPDIR:-/tmp}/kiln-sanitize}"
mkdir -p "$LOGS"
SAN="${COMPUTE_SANITIZER:-}"
if [[ -z "$SAN" ]]; then
  for c in "$(command -v compute-sanitizer || true)" /usr/local/cuda/bin/compute-sanitizer \
           /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    if [[ -n "$c" && -x "$c" ]]; then SAN="$c"; break; fi
  done
fi
if [[ -z "$SAN" ]]; then
  echo "device_sanitize: compute-sanitizer not found (set COMPUTE_SANITIZER)"
  exit 2
fi
if [[ -z "${KILN_RUN:-}" || ! -x "${KILN_RUN}" ]]; then
  echo "device_sanitize: set KILN_RUN to an executable kiln-run"
  exit 2
fi
KILN_RUN="$(cd "$(dirname "$KILN_RUN")" && pwd)/$(basename "$KILN_RUN")"
echo "compute-sanitizer: $SAN ($("$SAN" --version 2>&1 | grep -i version | head -1))"

SANITIZER_EXCLUDED_TESTS="Soak.*:TensorParallel*:GpuSession.PtxSyntaxErrorReportsJitLog:"
SANITIZER_EXCLUDED_TESTS+="GpuSession.MissingKernelIsReported:CudaGraphChain.BenchmarkCapturesBeforeTiming"
status=0
for tool in ${KILN_SANITIZE_TOOLS:-memcheck racecheck}; do
  dir="$LOGS/$tool"
  rm -rf "$dir"
  mkdir -p "$dir"
  wrapper="$dir/kiln-run"
  cat > "$wrapper" <<EOF
#!/bin/sh
exec "$SAN" --tool $tool --error-exitcode 99 --print-limit 20 --log-file "$dir/%p.log" "$KILN_RUN" "\$@"
EOF
  chmod +x "$wrapper"
  if [[ -n "${KILN_SMALL_DIR:-}" ]]; then
    "$PYTHON" test/e2e/small_models_test.py --kiln-run "$wrapper" --artifacts "$KILN_SMALL_DIR" \
      --seed 1 > "$dir/small_models.log" 2>&1 || { echo "$tool: small models FAILED"; status=1; }
    echo "$tool small models: $(tail -1 "$dir/small_models.log")"
  fi
  if [[ -n "${KILN_E2E_DIR:-}" ]]; then
    for p in ${KILN_E2E_PRECISIONS:-fp32 fp16 bf16}; do
      "$PYTHON" test/e2e/e2e_test.py --artifacts "$KILN_E2E_DIR/artifacts" --kiln-run "$wrapper" \
        --models-dir "$KILN_E2E_DIR/models" --precision "$p" --seed 1 > "$dir/e2e_$p.log" 2>&1 ||
        { echo "$tool: e2e $p FAILED"; status=1; }
      echo "$tool e2e $p: $(grep -E '^e2e ' "$dir/e2e_$p.log" | tail -1)"
    done
  fi
  if [[ -n "${KILN_GPU_TESTS:-}" ]]; then
    # Left out: the soak and the 2-GPU tests (run on their own), two tests that make CUDA API
    # calls fail on purpose (a PTX syntax error, a missing kernel: compute-sanitizer reports
    # those API errors), and a timing bound that an instrumented run cannot meet.
    "$SAN" --tool "$tool" --error-exitcode 99 --print-limit 20 --log-file "$dir/gpu_tests.%p.log" \
      "$KILN_GPU_TESTS" --gtest_filter="-${SANITIZER_EXCLUDED_TESTS}" > "$dir/gpu_tests.log" 2>&1 ||
      { echo "$tool: kiln_runtime_gpu_tests FAILED"; status=1; }
    echo "$tool gpu tests: $(grep -E '^\[  (PASSED|FAILED)' "$dir/gpu_tests.log" | tr '\n' ' ')"
  fi
  # memcheck ends each log with "ERROR SUMMARY: N errors", racecheck with
  # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
  processes=$(ls "$dir"/*.log 2>/dev/null | xargs grep -lE "(ERROR|RACECHECK) SUMMARY" 2>/dev/null |
              wc -l)
  errors=$(cat "$dir"/*.log 2>/dev/null |
           sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p; s/.*RACECHECK SUMMARY: .*\(([0-9]+) error.*/\1/p' |
           awk '{s += $1} END {print s + 0}')
  echo "compute-sanitizer $tool: $processes processes, $errors errors"
  ((errors == 0)) || status=1
  if ((errors > 0)); then
    grep -lE "ERROR SUMMARY: [1-9]|\([1-9][0-9]* errors" "$dir"/*.log | head -3 | while read -r f; do
      echo "--- $f"; head -40 "$f"; done
  fi
done

if [[ -n "${KILN_GPU_TESTS:-}" && -n "${KILN_SOAK_MODEL:-}" ]]; then
  KILN_TEST_MODELS="$KILN_SOAK_MODEL" KILN_SOAK_RUNS="${KILN_SOAK_RUNS:-10000}" \
    "$KILN_GPU_TESTS" --gtest_filter='Soak.*' > "$LOGS/soak.log" 2>&1 || status=1
  echo "soak: $(grep -E '^soak .* runs,' "$LOGS/soak.log" | tail -1)"
  echo "soak: $(grep -E '^\[  (PASSED|FAILED)|SKIPPED' "$LOGS/soak.log" | tr '\n' ' ')"
fi
exit "$status"
