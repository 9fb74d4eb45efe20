#!/usr/bin/env bash
# scripts/bench_real_size.sh - kiln against PyTorch at real model size, on the GPU machine.
#
# Run from the repo root on the GPU machine (NVIDIA GPU, CUDA toolkit with NVRTC at
# /usr/local/cuda, python3 with torch, transformers, onnx, numpy), with .carry-bench/ from
# scripts/prepare_bench_carry.sh beside the work tree. It unpacks the carried libraries of
# kiln-compile into a temporary folder (reused while the machine lives), checks that kiln-compile
# starts, logs the machine, then runs test/bench/bench_real_size.py with every argument:
#   scripts/bench_real_size.sh [--models gpt2,bert,llama] [--precision fp16] [--iters 50]
#                              [--gemm] [--quick]
#   scripts/bench_real_size.sh --setup-only    # only steps 1-2; prints the kiln-compile wrapper's path
#   scripts/bench_real_size.sh --generate [ARGS] # text generation instead: test/bench/bench_generate.py
# Logs go to $KILN_LOG_DIR (default .carry-bench/logs): bench-device-info.log, bench-console.log
# (everything printed, warnings included; both appended), and from the Python script <run>.log,
# <run>.md and <run>/ (every export, kiln-compile and kiln-run output).
# Exports are cached in $KILN_BENCH_WORK (default .bench-work/, git-ignored, so it stays between
# calls of the device machine while it is warm); $KILN_PYTHON picks the interpreter (default python3). Exit status is the benchmark's: 0 all passed, 1 a check failed or
# a peer was not measured, 2 setup error, 77 no GPU. See docs/gpu.md, "Real-size benchmark".
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2
CARRY="$ROOT/.carry-bench"
LOGS="${KILN_LOG_DIR:-$CARRY/logs}"
WORK="${KILN_BENCH_WORK:-$ROOT/.bench-work}"
PYTHON="${KILN_PYTHON:-python3}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
export PYTHONUNBUFFERED=1

fail_setup() {
  echo "bench_real_size: $*" >&2
  exit 2
}

for need in "$CARRY/bin/kiln-compile.xz" "$CARRY/bin/kiln-run" "$CARRY/lib" "$CARRY/MANIFEST"; do
  [[ -e "$need" ]] || fail_setup "missing $need - run scripts/prepare_bench_carry.sh on the build machine and carry .carry-bench/"
done
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "SKIP: no GPU (nvidia-smi -L found none); this benchmark needs an NVIDIA GPU (docs/gpu.md)"
  exit 77
fi
mkdir -p "$LOGS" "$WORK" || fail_setup "cannot create $LOGS or $WORK"
chmod +x "$CARRY/bin/kiln-run"

# 1. The carried libraries, unpacked once per MANIFEST into a temporary folder.
stamp="$(sha256sum "$CARRY/MANIFEST" | cut -c1-12)"
LIBDIR="${TMPDIR:-/tmp}/kiln-bench-lib-$stamp"
if [[ ! -f "$LIBDIR/.complete" ]]; then
  rm -rf "$LIBDIR"
  mkdir -p "$LIBDIR" || fail_setup "cannot create $LIBDIR"
  for packed in "$CARRY"/lib/*.xz "$CARRY/bin/kiln-compile.xz"; do
    lib="$LIBDIR/$(basename "$packed" .xz)"
    [[ "$packed" == */bin/* ]] && lib="$LIBDIR/kiln-compile.bin"
    if command -v xz >/dev/null; then
      xz -dc "$packed" >"$lib" || fail_setup "cannot unpack $packed"
    else # python3's lzma reads .xz too
      "$PYTHON" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
        "$packed" "$lib" || fail_setup "cannot unpack $packed"
    fi
  done
  # Check the unpacked files against the sha256 the build machine recorded.
  while read -r soname _ sum _; do
    [[ "$soname" == \#* || -z "$soname" ]] && continue
    echo "$sum  $LIBDIR/$soname"
  done <"$CARRY/MANIFEST" | sha256sum --quiet -c - || fail_setup "unpacked libraries do not match $CARRY/MANIFEST"
  chmod +x "$LIBDIR/kiln-compile.bin"
  touch "$LIBDIR/.complete"
fi

# 2. kiln-compile through a wrapper: only it sees the carried libraries (and NVRTC from the
#    toolkit); python, torch and kiln-run keep the machine's own.
KILN_COMPILE="$LIBDIR/kiln-compile"
LD_PATH="$LIBDIR:$CUDA_HOME/lib64:$CUDA_HOME/lib:$CUDA_HOME/targets/x86_64-linux/lib"
cat >"$KILN_COMPILE" <<EOF
#!/bin/sh
unset LD_BIND_NOW # the carried libz3 is an empty stand-in (scripts/prepare_bench_carry.sh)
LD_LIBRARY_PATH="$LD_PATH\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$LIBDIR/kiln-compile.bin" "\$@"
EOF
chmod +x "$KILN_COMPILE"
missing="$(LD_LIBRARY_PATH="$LD_PATH" ldd "$LIBDIR/kiln-compile.bin" | grep "not found")"
[[ -z "$missing" ]] || fail_setup "kiln-compile still lacks libraries here:
$missing"
"$KILN_COMPILE" --version >/dev/null 2>&1 || fail_setup "kiln-compile does not start: $("$KILN_COMPILE" --version 2>&1 | tail -3)"
if [[ "${1:-}" == --setup-only ]]; then
  echo "$KILN_COMPILE"
  exit 0
fi

# 3. The machine, for the log.
{
  echo "== $(date -u +%FT%TZ) $(uname -n); $(nproc) cores; args: $*"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader || true
  "$CUDA_HOME/bin/nvcc" --version 2>/dev/null | tail -2 || echo "nvcc: not at $CUDA_HOME/bin"
  "$PYTHON" -c 'import torch, transformers, onnx, numpy; print("torch", torch.__version__, "cuda", torch.version.cuda, "| transformers", transformers.__version__, "| onnx", onnx.__version__, "| numpy", numpy.__version__)' 2>&1
  "$KILN_COMPILE" --version 2>&1
  grep '^#' "$CARRY/MANIFEST"
  echo "carried libraries in $LIBDIR; NVRTC: $(LD_LIBRARY_PATH="$LD_PATH" ldd "$LIBDIR/kiln-compile.bin" | awk '/nvrtc/ {print $3}')"
  df -h "$WORK" | tail -1
} 2>&1 | tee -a "$LOGS/bench-device-info.log"

# 4. The benchmark.
BENCH="$ROOT/test/bench/bench_real_size.py"
if [[ "${1:-}" == --generate ]]; then
  shift
  BENCH="$ROOT/test/bench/bench_generate.py"
fi
"$PYTHON" "$BENCH" --kiln-compile "$KILN_COMPILE" \
  --kiln-run "$CARRY/bin/kiln-run" --work-dir "$WORK" --log-dir "$LOGS" "$@" 2>&1 |
  tee -a "$LOGS/bench-console.log"
rc=${PIPESTATUS[0]}
echo "bench_real_size: exit $rc (logs in $LOGS)"
exit "$rc"
