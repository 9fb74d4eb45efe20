#!/usr/bin/env bash
# scripts/run-example.sh - compile the shipped GPT-2 example and, on a GPU, check it against
# onnxruntime.
#
#   1. scripts/setup.sh + scripts/build.sh (kiln-compile, kiln-run and the Python package, which
#      .venv then imports)
#   2. kiln-compile examples/models/gpt2_tiny.onnx --shape input_ids=1x16 -> out/gpt2_tiny.kiln
#   3. random token ids and onnxruntime's output for them (out/gpt2_tiny.{input_ids,ref}.npy);
#      with a GPU (`nvidia-smi -L` succeeds): kiln-run vs onnxruntime, comparison; without one:
#      kernel count, arena size, and the kiln-run commands to run on a GPU machine (docs/gpu.md).
# Environment: as scripts/build.sh; KILN_SKIP_SETUP=1 skips setup.sh; KILN_SKIP_BUILD=1 uses build/
# as it is; KILN_SHAPE (default 1x16).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
export KILN_BUILD_DIR="$BUILD"
SHAPE="${KILN_SHAPE:-1x16}"
MODEL="$ROOT/examples/models/gpt2_tiny.onnx"
OUT="$ROOT/out"
ART="$OUT/gpt2_tiny.kiln"

if [[ "${KILN_SKIP_SETUP:-0}" != 1 ]]; then
  "$ROOT/scripts/setup.sh"
fi
if [[ "${KILN_SKIP_BUILD:-0}" != 1 ]]; then
  "$ROOT/scripts/build.sh" kiln-compile kiln-run
  # The Python package too (docs/python.md), where the configure found nanobind (setup.sh
  # installs it into .venv): build.sh then points .venv at it, so `import kiln` works.
  if ninja -C "${KILN_BUILD_DIR:-$ROOT/build}" -t query kiln-python >/dev/null 2>&1; then
    "$ROOT/scripts/build.sh" kiln-python
  fi
fi
PYTHON="$ROOT/.venv/bin/python3"
[[ -x "$PYTHON" ]] || PYTHON=python3

mkdir -p "$OUT"
echo
echo "== kiln-compile ${MODEL#"$ROOT"/} --shape input_ids=$SHAPE"
"$BUILD/bin/kiln-compile" "$MODEL" -o "$ART" --shape "input_ids=$SHAPE" | tee "$OUT/gpt2_tiny.summary.txt"
echo "artifact: ${ART#"$ROOT"/} ($(stat -c %s "$ART") bytes)"

kernels="$(sed -n 's/^[[:space:]]*kernels:[[:space:]]*\([0-9]*\).*/\1/p' "$OUT/gpt2_tiny.summary.txt" | head -1)"
arena="$(sed -n 's/^[[:space:]]*arena bytes:[[:space:]]*\(.*\)/\1/p' "$OUT/gpt2_tiny.summary.txt" | head -1)"

# Fresh random token ids (< 1000, the model's vocabulary) and the onnxruntime reference (CPU),
# written to out/ on both paths: the GPU path compares with them here, the no-GPU path names them
# in the instructions for a GPU machine.
make_reference() {
  "$PYTHON" - "$MODEL" "$SHAPE" "$OUT" <<'PY'
import sys, numpy as np, onnxruntime as ort
model, shape, out = sys.argv[1], sys.argv[2], sys.argv[3]
b, s = (int(v) for v in shape.split("x"))
seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
ids = np.random.default_rng(seed).integers(0, 1000, size=(b, s), dtype=np.int64)
np.save(out + "/gpt2_tiny.input_ids.npy", ids)
ref = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(
    ["last_hidden_state"], {"input_ids": ids})[0]
np.save(out + "/gpt2_tiny.ref.npy", ref)
print("input_ids: %s (seed %d); onnxruntime %s reference: %s" % (ids.shape, seed, ort.__version__, ref.shape))
PY
}

if nvidia-smi -L >/dev/null 2>&1; then
  echo
  echo "== GPU: $(nvidia-smi -L | head -1)"
  make_reference
  echo "== kiln-run vs onnxruntime"
  set +e
  "$BUILD/bin/kiln-run" "$ART" --input "input_ids=$OUT/gpt2_tiny.input_ids.npy" \
    --output "last_hidden_state=$OUT/gpt2_tiny.out.npy" \
    --compare "last_hidden_state=$OUT/gpt2_tiny.ref.npy" --rtol 1e-4 --atol 0
  rc=$?
  set -e
  if ((rc == 0)); then
    echo "RESULT: kiln matches onnxruntime (max relative error <= 1e-4)"
  else
    echo "RESULT: kiln-run exit $rc (1 = mismatch, 2 = error)"
  fi
  exit "$rc"
fi

echo
echo "== no GPU on this machine (nvidia-smi -L failed): compiled, not run"
echo "   kernels:     ${kernels:-?}"
echo "   arena bytes: ${arena:-?}"
"$BUILD/bin/kiln-run" "$ART" --info 2>/dev/null | grep -v -e '^  [0-9]*: ' -e '^      ' | sed 's/^/   /' || true
# kiln-run is linked statically against the runtime: the binary alone runs on the GPU machine.
KILN_RUN_PATH="$BUILD/bin/kiln-run"
KILN_RUN_PATH="${KILN_RUN_PATH#"$ROOT"/}"
echo
if make_reference >"$OUT/gpt2_tiny.reference.log" 2>&1; then
  sed 's/^/   /' "$OUT/gpt2_tiny.reference.log"
  echo
  cat <<MSG
To run it on a machine with an NVIDIA GPU (driver only; no MLIR, no CUDA toolkit needed there):
   copy out/gpt2_tiny.kiln, out/gpt2_tiny.input_ids.npy, out/gpt2_tiny.ref.npy (token ids and
   onnxruntime's output for them, written just now) and $KILN_RUN_PATH into one directory, then
   ./kiln-run gpt2_tiny.kiln --input input_ids=gpt2_tiny.input_ids.npy --compare last_hidden_state=gpt2_tiny.ref.npy --rtol 1e-4 --atol 0
   ./kiln-run gpt2_tiny.kiln --inputs-generate random:1 --bench 100 --profile 20
(the second needs no .npy file: generated token ids, latency and per-kernel times)
MSG
else
  cat <<MSG
   (no onnxruntime reference: $PYTHON could not write one, see out/gpt2_tiny.reference.log;
   scripts/setup.sh installs numpy and onnxruntime into .venv)
To run it on a machine with an NVIDIA GPU (driver only; no MLIR, no CUDA toolkit needed there):
   copy out/gpt2_tiny.kiln and $KILN_RUN_PATH into one directory, then
   ./kiln-run gpt2_tiny.kiln --inputs-generate random:1 --bench 100 --profile 20
(generated token ids, latency and per-kernel times; no .npy file needed)
MSG
fi
cat <<MSG
or run this script on a GPU machine that can also build kiln. docs/gpu.md describes it, including the full e2e suite
(scripts/prepare_device_carry.sh here, scripts/device_e2e.sh on the GPU machine).
MSG
