#!/usr/bin/env bash
# scripts/build.sh - configure (when needed) and build kiln into build/ with CMake + Ninja + ccache.
#
# When the build made the Python package (<build>/python/kiln; docs/python.md), the repository's
# .venv gets a kiln-build.pth pointing at <build>/python, so `.venv/bin/python -c 'import kiln'`
# imports the package of the last build.sh build (an editable install without a second build).
#
# Environment: KILN_BUILD_DIR (default <repo>/build), KILN_JOBS (default 2), CUDA_HOME
# (default /usr/local/cuda), KILN_CMAKE_ARGS (extra configure arguments), CCACHE_DIR (ccache's own
# default, ~/.cache/ccache, when unset). Extra arguments are passed to ninja (e.g. a target name).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
JOBS="${KILN_JOBS:-2}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
LLVM_PREFIX=/usr/lib/llvm-22

log() { printf '[build] %s\n' "$*"; }

PYTHON="$ROOT/.venv/bin/python3"
[[ -x "$PYTHON" ]] || PYTHON="$(command -v python3)"

CMAKE_ARGS=(
  -G Ninja
  -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir"
  -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit"
  -DCMAKE_BUILD_TYPE=Release
  -DKILN_CUDA_ROOT="$CUDA_HOME"
  -DCUDAToolkit_ROOT="$CUDA_HOME"
  -DKILN_PYTHON:FILEPATH="$PYTHON"
)
if command -v ccache >/dev/null; then
  CMAKE_ARGS+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
  # Paths below the repository hashed relative to it: another clone reuses this one's objects.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
fi
# This build's ccache hits and misses: the difference of the counters around it.
ccache_counts() {
  ccache --print-stats 2>/dev/null | awk '$1 ~ /^(direct|preprocessed)_cache_hit$/ { h += $2 }
    $1 == "cache_miss" { m += $2 } END { print h + 0, m + 0 }'
}
# shellcheck disable=SC2206
CMAKE_ARGS+=(${KILN_CMAKE_ARGS:-})

# Configure when the tree has never been configured, was configured without MLIR, the Python
# interpreter for the tests changed, or nanobind was installed after the last configure (the
# Python package, python/). Otherwise ninja re-runs CMake itself when a CMakeLists changes.
cache="$BUILD/CMakeCache.txt"
nanobind_new() {
  "$PYTHON" -c 'import nanobind' 2>/dev/null && ! grep -q "^KILN_NANOBIND_FOUND_DIR:" "$cache"
}
if [[ ! -f "$BUILD/build.ninja" ]] || ! grep -q "^MLIR_DIR:.*=$LLVM_PREFIX/lib/cmake/mlir" "$cache" ||
   ! grep -qx "KILN_PYTHON:FILEPATH=$PYTHON" "$cache" || [[ -n "${KILN_CMAKE_ARGS:-}" ]] ||
   nanobind_new; then
  log "configuring $BUILD"
  cmake -S "$ROOT" -B "$BUILD" "${CMAKE_ARGS[@]}"
fi

log "ninja -j$JOBS $*"
start=$(date +%s)
command -v ccache >/dev/null && read -r hits0 misses0 < <(ccache_counts)
ninja -C "$BUILD" -j"$JOBS" "$@"
log "built in $(( $(date +%s) - start )) s"
if [[ -f "$BUILD/python/kiln/__init__.py" && -x "$ROOT/.venv/bin/python3" ]]; then
  site="$("$ROOT/.venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$BUILD/python" >"$site/kiln-build.pth"
  log "Python package: $BUILD/python/kiln (imported by .venv through $site/kiln-build.pth)"
fi
if command -v ccache >/dev/null && read -r hits1 misses1 < <(ccache_counts); then
  log "ccache: $((hits1 - ${hits0:-0})) hits, $((misses1 - ${misses0:-0})) misses in this build"
fi
