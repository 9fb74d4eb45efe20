#!/usr/bin/env bash
# scripts/prepare_device_carry.sh - build here and fill .carry/ for the GPU machine.
#
# The GPU machine has the NVIDIA driver and python3 with onnxruntime/numpy/onnx, but no MLIR and no
# compiler build. This script puts everything the e2e test needs there into .carry/ (git-ignored):
#   .carry/bin/kiln-run            the runner (links only the kiln runtime; libcuda is dlopen'ed)
#   .carry/artifacts/*.kiln        <model>_<b>x<s>.kiln for the e2e shapes and the 1x128 bench shape
#   .carry/models/*.onnx           the 4 shared models (onnxruntime's reference runs on them)
# Then, on the GPU machine, from the repo root: scripts/device_e2e.sh (see docs/gpu.md).
# Environment: as scripts/build.sh; KILN_MODELS_DIR (default <repo>/../shared/models);
#              KILN_PRECISIONS (default "fp32 fp16 bf16 fp16-model": the artifacts' --precision values);
#              KILN_SKIP_SETUP=1 skips setup.sh; KILN_SKIP_BUILD=1 uses build/ as it is.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
export KILN_BUILD_DIR="$BUILD"
MODELS_DIR="${KILN_MODELS_DIR:-$ROOT/../shared/models}"
CARRY="$ROOT/.carry"
MODELS=(gpt2_tiny_dynamo bert_tiny_dynamo bert_tiny_legacy llama_tiny_dynamo)

if [[ "${KILN_SKIP_SETUP:-0}" != 1 ]]; then
  "$ROOT/scripts/setup.sh"
fi
if [[ "${KILN_SKIP_BUILD:-0}" != 1 ]]; then
  "$ROOT/scripts/build.sh" kiln-compile kiln-run
fi

rm -rf "$CARRY"
mkdir -p "$CARRY/bin" "$CARRY/artifacts" "$CARRY/models"
cp "$BUILD/bin/kiln-run" "$CARRY/bin/"

for m in "${MODELS[@]}"; do
  if [[ -f "$MODELS_DIR/$m.onnx" ]]; then
    cp "$MODELS_DIR/$m.onnx" "$CARRY/models/"
  elif [[ "$m" == gpt2_tiny_dynamo ]]; then
    cp "$ROOT/examples/models/gpt2_tiny.onnx" "$CARRY/models/$m.onnx"
  else
    echo "[carry] SKIP $m: not in $MODELS_DIR"
  fi
done

# fp32 (the exact contract) and the two 16-bit storage precisions: artifacts
# <model>_<b>x<s>[_fp16|_bf16].kiln; device_e2e.sh --precision fp16 checks them.
for precision in ${KILN_PRECISIONS:-fp32 fp16 bf16 fp16-model}; do
  "$ROOT/.venv/bin/python3" "$ROOT/test/e2e/e2e_test.py" --compile-only "$CARRY/artifacts" \
    --models-dir "$CARRY/models" --kiln-compile "$BUILD/bin/kiln-compile" --precision "$precision"
done

echo "[carry] kiln-run needs: $(ldd "$CARRY/bin/kiln-run" | awk '{print $1}' | tr '\n' ' ')"
size_kib=$(du -sk "$CARRY" | cut -f1)
echo "[carry] .carry/ holds $(find "$CARRY" -type f | wc -l) files, $((size_kib / 1024)) MiB"
if ((size_kib > 60 * 1024)); then
  echo "[carry] WARNING: over 60 MiB; the device machine takes at most 64 MiB of carried paths"
fi
echo "[carry] on the GPU machine, from the repo root: scripts/device_e2e.sh [--bench]"
