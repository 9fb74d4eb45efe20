#!/usr/bin/env bash
# scripts/device_e2e.sh - run the e2e tests on the GPU machine from what .carry/ holds.
#
# Run from the repo root on a machine with an NVIDIA GPU and python3 with onnxruntime, numpy and
# onnx installed system-wide (no MLIR, no compiler). .carry/ comes from
# scripts/prepare_device_carry.sh. Extra arguments go to test/e2e/e2e_test.py (e.g. --bench,
# --seed N, --models bert_tiny_dynamo). Logs go to $KILN_LOG_DIR when set (else .carry/logs/).
# Exit status is the e2e test's: 0 passed, 1 failed, 2 setup error, 77 no GPU.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CARRY="$ROOT/.carry"
LOGS="${KILN_LOG_DIR:-$CARRY/logs}"
PYTHON="${KILN_PYTHON:-python3}"
mkdir -p "$LOGS"

for need in "$CARRY/bin/kiln-run" "$CARRY/artifacts" "$CARRY/models"; do
  if [[ ! -e "$need" ]]; then
    echo "device_e2e: missing $need - run scripts/prepare_device_carry.sh on the build machine and carry .carry/"
    exit 2
  fi
done
chmod +x "$CARRY/bin/kiln-run"
if ! "$PYTHON" -c 'import numpy, onnxruntime' 2>/dev/null; then
  echo "device_e2e: $PYTHON lacks numpy or onnxruntime (pip install numpy onnxruntime, or set KILN_PYTHON)"
  exit 2
fi

{
  echo "== $(date -u +%FT%TZ) $(uname -n)"
  nvidia-smi -L || echo "nvidia-smi -L failed"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader || true
  "$PYTHON" -c 'import onnxruntime, numpy; print("onnxruntime", onnxruntime.__version__, "numpy", numpy.__version__)'
  "$CARRY/bin/kiln-run" "$(ls "$CARRY"/artifacts/*.kiln | head -1)" --info 2>&1 | grep -v -e "^  [0-9]*: " -e "^      " || true
} 2>&1 | tee "$LOGS/device-info.log"

WORK="$(mktemp -d /tmp/kiln-e2e-XXXXXX)"
"$PYTHON" "$ROOT/test/e2e/e2e_test.py" --artifacts "$CARRY/artifacts" --kiln-run "$CARRY/bin/kiln-run" \
  --models-dir "$CARRY/models" --work-dir "$WORK" --require-models "$@" 2>&1 | tee "$LOGS/e2e.log"
rc=${PIPESTATUS[0]}
if [[ $rc == 0 ]]; then
  rm -rf "$WORK"
  echo "device_e2e: exit 0 (log: $LOGS/e2e.log)"
else
  echo "device_e2e: exit $rc (log: $LOGS/e2e.log, inputs/outputs kept in $WORK)"
fi
exit "$rc"
