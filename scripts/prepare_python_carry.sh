#!/usr/bin/env bash
# scripts/prepare_python_carry.sh - fill .carry-python/ for the Python package's GPU check.
#
#   scripts/prepare_python_carry.sh --python PATH
#
# PATH is an interpreter of the GPU machine's Python minor version (3.12 there: the wheel is abi3,
# so any CPython >= 3.12 builds one that installs on 3.12 and later). Puts into .carry-python/
# (git-ignored):
#   kiln_runtime-*.whl        the runtime-only wheel (scripts/build_runtime_wheel.sh)
#   artifacts/                artifacts, models and references (test/python/prepare_gpu_check.py)
#   test/python/              the pytest suite and gpu_check.py
#   run_gpu_check.sh          what to run there (below)
# Then on the GPU machine, in a venv with torch, numpy, onnxruntime and pytest:
#   bash .carry-python/run_gpu_check.sh
# Environment: as scripts/build.sh (the build must have made the Python package: .venv's kiln).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
CARRY="$ROOT/.carry-python"
PYTHON=""
while (($#)); do
  case "$1" in
    --python) PYTHON="$2"; shift 2 ;;
    --python=*) PYTHON="${1#--python=}"; shift ;;
    *) echo "usage: $0 --python PATH" >&2; exit 2 ;;
  esac
done
[[ -n "$PYTHON" ]] || { echo "usage: $0 --python PATH (an interpreter like the GPU machine's)" >&2; exit 2; }

rm -rf "$CARRY"
mkdir -p "$CARRY/artifacts" "$CARRY/test"
"$ROOT/scripts/build_runtime_wheel.sh" --python "$PYTHON" --out "$CARRY"
PYTHONPATH="$BUILD/python" "$ROOT/.venv/bin/python3" "$ROOT/test/python/prepare_gpu_check.py" \
  "$CARRY/artifacts"
cp -r "$ROOT/test/python" "$CARRY/test/python"
rm -rf "$CARRY/test/python/__pycache__"
cat >"$CARRY/run_gpu_check.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the Python package's GPU checks from this directory's files (docs/python.md, "Tests").
# Needs: a venv with torch (CUDA), numpy, onnxruntime, pytest; no network (pip --no-index).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
A="$HERE/artifacts"
PY="${PYTHON:-python3}"
"$PY" -m pip install --no-index --force-reinstall --no-deps "$HERE"/kiln_runtime-*.whl || exit 1
rc=0
"$PY" "$HERE/test/python/gpu_check.py" "$A/gpt2_tiny_1x128.kiln" --input "input_ids=$A/ids_1x128.npy" \
  --reference "last_hidden_state=$A/ref_1x128.npy" --tol 1e-4 || rc=1
"$PY" "$HERE/test/python/gpu_check.py" "$A/gpt2_tiny_1x128_fp16.kiln" --input "input_ids=$A/ids_1x128.npy" \
  --reference "last_hidden_state=$A/ref_1x128.npy" --tol 2e-2 || rc=1
"$PY" "$HERE/test/python/gpu_check.py" "$A/gpt2_causal_decode.kiln" \
  --input "prompt=$A/gpt2_causal_prompt.npy" --reference "$A/gpt2_causal_greedy.npy" || rc=1
KILN_TEST_CARRY="$A" "$PY" -m pytest -q -rs -p no:cacheprovider "$HERE/test/python" || rc=1
echo "run_gpu_check: $([[ $rc == 0 ]] && echo PASS || echo FAIL)"
exit $rc
RUN
chmod +x "$CARRY/run_gpu_check.sh"
du -sh "$CARRY"
ls "$CARRY"
