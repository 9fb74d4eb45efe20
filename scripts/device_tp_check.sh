#!/usr/bin/env bash
# scripts/device_tp_check.sh - tensor-parallel checks on a GPU machine (docs/gpu.md, "Tensor parallelism").
#
# Needs: kiln-compile and kiln-run ($KILN_COMPILE, $KILN_RUN; default build/bin/), python3 with
# numpy, onnx and onnxruntime ($KILN_PYTHON), the shared models ($KILN_MODELS_DIR, default
# ../shared/models), and for steps 3-4 two GPUs and torchrun (step 4 only). Logs go to
# $KILN_LOG_DIR (default /tmp/kiln-tp-logs). Steps:
#   1. the GPU unit tests of the runtime ($KILN_GPU_TESTS, if given: kiln_runtime_gpu_tests);
#   2. test/e2e/tp_correctness.sh: TP=1, TP=2, loopback 2/4/8 per shared model and precision;
#   3. a multi-process launch: two kiln-run processes, rank and world size from KILN_TP_RANK /
#      KILN_TP_WORLD_SIZE, the group id through the file KILN_TP_ID_FILE;
#   4. the same under torchrun (RANK, WORLD_SIZE, LOCAL_RANK from the launcher);
#   5. a peer that never arrives: rank 0 alone with --tp-timeout 5000 must fail within seconds
#      (one GPU is enough).
# Exit status: 0 all passed, 1 a check failed, 77 no GPU.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KC="${KILN_COMPILE:-$ROOT/build/bin/kiln-compile}"
KR="${KILN_RUN:-$ROOT/build/bin/kiln-run}"
PY="${KILN_PYTHON:-python3}"
MODELS="${KILN_MODELS_DIR:-$ROOT/../shared/models}"
LOGS="${KILN_LOG_DIR:-/tmp/kiln-tp-logs}"
mkdir -p "$LOGS"
W="$(mktemp -d "${TMPDIR:-/tmp}/kiln-tp.XXXXXX")"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c GPU || true)
if [[ "$GPUS" -lt 1 ]]; then echo "SKIP: no GPU"; exit 77; fi
status=0
step() { echo; echo "== $*"; }

if [[ -n "${KILN_GPU_TESTS:-}" ]]; then
  step "1. runtime GPU unit tests"
  "$KILN_GPU_TESTS" > "$LOGS/gpu_unit_tests.log" 2>&1; rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]" "$LOGS/gpu_unit_tests.log" | tail -6
  grep -E "^\[  FAILED  \]|^\[  SKIPPED \]" "$LOGS/gpu_unit_tests.log" | head -20
  [[ $rc -eq 0 ]] || status=1
fi

step "2. correctness: TP=1, TP=2, loopback 2/4/8"
KILN_COMPILE="$KC" KILN_RUN="$KR" KILN_MODELS_DIR="$MODELS" LOG_DIR="$LOGS" \
  "$ROOT/test/e2e/tp_correctness.sh" || status=1

# Inputs and the onnxruntime reference for the shared Llama at 2x16.
"$PY" - "$MODELS/llama_tiny_dynamo.onnx" "$W" <<'PYEOF' || exit 1
import sys, numpy as np, onnxruntime as ort
model, w = sys.argv[1], sys.argv[2]
ids = np.random.default_rng(7).integers(0, 1000, size=(2, 16), dtype=np.int64)
np.save(w + "/ids.npy", ids)
sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
np.save(w + "/ref.npy", sess.run(["last_hidden_state"], {"input_ids": ids})[0])
PYEOF
"$KC" "$MODELS/llama_tiny_dynamo.onnx" --shape input_ids=2x16 --tensor-parallel 2 -o "$W/llama.kiln" \
  > "$LOGS/mp_compile.log" 2>&1 || { cat "$LOGS/mp_compile.log"; exit 1; }
RUN_ARGS=(--input "input_ids=$W/ids.npy" --compare "last_hidden_state=$W/ref.npy")

step "3. two processes, KILN_TP_RANK / KILN_TP_WORLD_SIZE / KILN_TP_ID_FILE"
if [[ "$GPUS" -ge 2 ]]; then
echo "\$ for r in 0 1; do KILN_TP_RANK=\$r KILN_TP_WORLD_SIZE=2 KILN_TP_ID_FILE=tp.id kiln-run llama.kiln --input input_ids=ids.npy --compare last_hidden_state=ref.npy & done; wait"
pids=()
for r in 0 1; do
  KILN_TP_RANK=$r KILN_TP_WORLD_SIZE=2 KILN_TP_ID_FILE="$W/tp.id" timeout 120 "$KR" "$W/llama.kiln" \
    "${RUN_ARGS[@]}" > "$LOGS/mp_rank$r.log" 2>&1 &
  pids+=($!)
done
for i in 0 1; do wait "${pids[$i]}"; rc=$?; echo "rank $i exit $rc"; sed 's/^/  /' "$LOGS/mp_rank$i.log"; [[ $rc -eq 0 ]] || status=1; done

step "4. torchrun --nproc-per-node 2 --no-python kiln-run"
if command -v torchrun >/dev/null; then
  echo "\$ KILN_TP_ID_FILE=tp2.id torchrun --nproc-per-node 2 --no-python kiln-run llama.kiln --input input_ids=ids.npy --compare last_hidden_state=ref.npy"
  KILN_TP_ID_FILE="$W/tp2.id" timeout 180 torchrun --nproc-per-node 2 --no-python "$KR" "$W/llama.kiln" \
    "${RUN_ARGS[@]}" > "$LOGS/mp_torchrun.log" 2>&1; rc=$?
  echo "torchrun exit $rc"; grep -v "^W\|^\*\*\*\|OMP_NUM_THREADS" "$LOGS/mp_torchrun.log" | sed 's/^/  /' | tail -12
  [[ $rc -eq 0 ]] || status=1
else
  echo "SKIP: torchrun not found"
fi
else
  echo "SKIP steps 3 and 4: they need 2 GPUs, this machine has $GPUS"
fi

step "5. a peer that never arrives: rank 0 alone, --tp-timeout 5000"
start=$(date +%s%N)
KILN_TP_RANK=0 KILN_TP_WORLD_SIZE=2 KILN_TP_ID_FILE="$W/lonely.id" timeout 120 "$KR" "$W/llama.kiln" \
  "${RUN_ARGS[@]}" --tp-timeout 5000 > "$LOGS/mp_timeout.log" 2>&1; rc=$?
end=$(date +%s%N)
echo "exit $rc after $(( (end - start) / 1000000 )) ms"
sed 's/^/  /' "$LOGS/mp_timeout.log" | tail -4
[[ $rc -eq 2 ]] && grep -q "DEADLINE\|did not\|timed out\|timeout" "$LOGS/mp_timeout.log" || { echo "FAIL: expected exit 2 with a timeout message"; status=1; }
rm -rf "$W"
exit $status
