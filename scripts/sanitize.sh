#!/usr/bin/env bash
# scripts/sanitize.sh - build kiln with AddressSanitizer + UndefinedBehaviorSanitizer (clang 22)
# into its own directory and run the lit and unit suites under it.
#
# The build (KILN_SANITIZE=address,undefined, KILN_FUZZ=ON, -O1, assertions on) instruments
# kiln's own code: the compiler, the runtime host code, the tools, the unit tests and the fuzz
# targets (scripts/fuzz.sh uses the same build). LLVM/MLIR, protobuf, NVRTC and libcuda are the
# uninstrumented system libraries; what they need is in the suppression files of
# test/sanitizers/ (each entry says why), never a check turned off wholesale.
#
# Usage: scripts/sanitize.sh [--build-only] [ctest arguments...]
#   default ctest selection: everything except the compile-only conformance suite
#   (onnx-node-tests, 1163 compiles, covered by the normal build), the ptxas check and the
#   benchmarks; GPU tests skip without a GPU as in the normal build.
# Environment: KILN_SAN_BUILD_DIR (default <repo>/build-san), KILN_JOBS (default 2), CUDA_HOME,
#   KILN_SAN_CC / KILN_SAN_CXX (default clang-22 / clang++-22), CCACHE_DIR.
# Exit status: non-zero if the build fails or any test fails (a sanitizer report aborts the
# process, so `not kiln-compile ...` lit tests fail on it too).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_SAN_BUILD_DIR:-$ROOT/build-san}"
JOBS="${KILN_JOBS:-2}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
LLVM_PREFIX=/usr/lib/llvm-22
CC_BIN="${KILN_SAN_CC:-clang-22}"
CXX_BIN="${KILN_SAN_CXX:-clang++-22}"

log() { printf '[sanitize] %s\n' "$*"; }
die() { printf '[sanitize] ERROR: %s\n' "$*" >&2; exit 1; }

BUILD_ONLY=0
if [[ "${1:-}" == --build-only ]]; then
  BUILD_ONLY=1
  shift
fi

command -v "$CXX_BIN" >/dev/null || die "$CXX_BIN not found: run scripts/setup.sh (packages clang-22, libclang-rt-22-dev)"
PYTHON="$ROOT/.venv/bin/python3"
[[ -x "$PYTHON" ]] || PYTHON="$(command -v python3)"

CMAKE_ARGS=(
  -G Ninja
  -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir"
  -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit"
  -DCMAKE_C_COMPILER="$CC_BIN"
  -DCMAKE_CXX_COMPILER="$CXX_BIN"
  # RelWithDebInfo with -O1 and without -DNDEBUG: kiln's assertions stay on.
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
  -DKILN_SANITIZE=address,undefined
  -DKILN_FUZZ=ON
  -DKILN_CUDA_ROOT="$CUDA_HOME"
  -DCUDAToolkit_ROOT="$CUDA_HOME"
  -DKILN_PYTHON:FILEPATH="$PYTHON"
)
if [[ ! -f "$BUILD/build.ninja" ]]; then
  log "configuring $BUILD"
  cmake -S "$ROOT" -B "$BUILD" "${CMAKE_ARGS[@]}"
fi
log "ninja -j$JOBS (ASan + UBSan)"
start=$(date +%s)
ninja -C "$BUILD" -j"$JOBS"
log "built in $(( $(date +%s) - start )) s"
((BUILD_ONLY)) && exit 0

# Runtime options (test/sanitizers/README.md explains each). abort_on_error: a report ends the
# process with SIGABRT, which `not` in lit does not accept as a normal failure.
SUPP="$ROOT/test/sanitizers"
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allow_user_poisoning=0:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:suppressions=$SUPP/asan.supp${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:suppressions=$SUPP/ubsan.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# With a GPU: the CUDA driver maps memory inside ASan's shadow gap; without this cuInit fails
# (CUDA_ERROR_OUT_OF_MEMORY) and every GPU test reports a driver error.
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU; then
  ASAN_OPTIONS="$ASAN_OPTIONS:protect_shadow_gap=0"
fi
[[ -x "$LLVM_PREFIX/bin/llvm-symbolizer" ]] && export ASAN_SYMBOLIZER_PATH="$LLVM_PREFIX/bin/llvm-symbolizer"

if (($# == 0)); then
  set -- -E '^(onnx-node-tests|ptxas-check|bench-peers)$'
fi
JUNIT="$BUILD/Testing/kiln-ctest.xml"
rm -f "$JUNIT"
log "ctest --output-on-failure $*"
set +e
(cd "$BUILD" && ctest --output-on-failure --test-output-size-passed 262144 --output-junit "$JUNIT" "$@")
rc=$?
set -e
if [[ -f "$JUNIT" ]]; then
  "$PYTHON" "$ROOT/scripts/test_summary.py" "$JUNIT" || rc=1
else
  log "ctest wrote no report; exit $rc"
  ((rc)) || rc=1
fi
exit "$rc"
