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
#   bash .carry-python/run_gpu_check.sh [MORE.kiln ...]   (KILN_RUN=kiln-run: also its --bench)
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
# The GPU machine's carry limit is shared with the bench carry (docs/gpu.md): artifacts travel
# xz-compressed (run_gpu_check.sh unpacks them) and the models, which the work tree holds, as
# relative links into it.
for model in "$CARRY"/artifacts/*.onnx; do
  name="$(basename "$model")"
  for src in "examples/models/gpt2_tiny.onnx" "test/models/$name"; do
    if [[ "$(basename "$src")" == "$name" && -f "$ROOT/$src" ]] && cmp -s "$model" "$ROOT/$src"; then
      ln -sf "../../$src" "$model"
      break
    fi
  done
done
command -v xz >/dev/null && xz -9 -f "$CARRY"/artifacts/*.kiln
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
for f in "$A"/*.kiln.xz; do [[ -e "$f" ]] && { xz -d -f "$f" || "$PY" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3], "wb"))' "$f"; }; done
# Artifacts given as arguments (e.g. GPT-2 124M compiled there by
# `scripts/bench_real_size.sh --models gpt2 --peers "" --keep-artifacts`): gpu_check.py from
# random inputs, then `kiln-run --bench 200` beside it when KILN_RUN names kiln-run.
for extra in "$@"; do
  "$PY" "$HERE/test/python/gpu_check.py" "$extra" --iterations 200 || rc=1
  if [[ -n "${KILN_RUN:-}" ]]; then
    "$KILN_RUN" "$extra" --inputs-generate random:1 --bench 200 || rc=1
  fi
done
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
