#!/usr/bin/env bash
# scripts/prepare_bench_carry.sh - fill .carry-bench/ so the GPU machine can compile real-size models.
#
# The real-size benchmark (scripts/bench_real_size.sh, docs/gpu.md) exports GPT-2 124M, BERT-base
# and a 0.8B Llama on the GPU machine (they are too large to carry: 0.5-3.2 GB of ONNX) and
# compiles them there, so it needs kiln-compile on that machine. The GPU machine (Ubuntu 24.04,
# CUDA toolkit, no MLIR) lacks some of kiln-compile's shared libraries; this script carries them:
#   .carry-bench/bin/kiln-compile.xz, .carry-bench/bin/kiln-run   from the build tree
#   .carry-bench/lib/<soname>.xz   every library `ldd kiln-compile` resolves that is not glibc,
#                                  libstdc++/libgcc or CUDA (libLLVM, libprotobuf, libonnx_proto,
#                                  libxml2, ICU, ...), compressed with xz -9
#   libz3.so.4 is not carried but replaced by an empty library of that soname built here: libLLVM
#   names Z3 (for clang's static analyzer) but kiln-compile never calls it, and with lazy binding
#   (the loader's default; LD_BIND_NOW must stay unset) the loader resolves a Z3 function only
#   when called. libicudata.so.NN (30 MB of ICU's locale and converter data, 7 MB compressed)
#   is replaced the same way by a library holding only an empty icudtNN_dat: libxml2 links ICU
#   for encoding conversion, which kiln-compile (it reads no XML) never reaches. This keeps the
#   work tree plus .carry-bench under the 64 MiB a call may carry.
#   .carry-bench/MANIFEST          sonames, sizes, sha256 of the uncompressed files, git revision
# scripts/bench_real_size.sh unpacks lib/ into a temporary folder and runs kiln-compile with
# LD_LIBRARY_PATH pointing there (only kiln-compile; Python and torch keep the system libraries).
# The device machine takes at most 64 MiB of carried paths, work tree included; this folder is
# about 33 MiB.
# Environment: as scripts/build.sh; KILN_SKIP_SETUP=1 skips setup.sh; KILN_SKIP_BUILD=1 uses
# build/ as it is (no ninja run); KILN_XZ_THREADS (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
export KILN_BUILD_DIR="$BUILD"
CARRY="$ROOT/.carry-bench"
XZ_THREADS="${KILN_XZ_THREADS:-2}"
LIMIT_KIB=$((60 * 1024))

if [[ "${KILN_SKIP_BUILD:-0}" != 1 ]]; then
  if [[ "${KILN_SKIP_SETUP:-0}" != 1 ]]; then
    "$ROOT/scripts/setup.sh"
  fi
  "$ROOT/scripts/build.sh" kiln-compile kiln-run
fi
for tool in kiln-compile kiln-run; do
  if [[ ! -x "$BUILD/bin/$tool" ]]; then
    echo "[bench-carry] ERROR: $BUILD/bin/$tool missing (build it with scripts/build.sh)" >&2
    exit 2
  fi
done
command -v xz >/dev/null || { echo "[bench-carry] ERROR: xz not found (apt-get install xz-utils)" >&2; exit 2; }

# Libraries the GPU machine provides itself: glibc (and its split-off parts), the GCC runtime,
# and CUDA (the toolkit at /usr/local/cuda holds NVRTC; the driver holds libcuda).
is_system_lib() {
  case "$1" in
    linux-vdso.so* | ld-linux*.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | \
      librt.so.* | libdl.so.* | libresolv.so.* | libutil.so.* | libstdc++.so.* | libgcc_s.so.* | \
      libnvrtc*.so* | libcuda.so* | libcudart.so* | libnvJitLink.so* | libnvptxcompiler*.so*)
      return 0 ;;
  esac
  return 1
}

ldd_out="$(ldd "$BUILD/bin/kiln-compile")"
if grep -q "not found" <<<"$ldd_out"; then
  echo "[bench-carry] ERROR: kiln-compile has unresolved libraries here:" >&2
  grep "not found" <<<"$ldd_out" >&2
  exit 2
fi

rm -rf "$CARRY"
mkdir -p "$CARRY/bin" "$CARRY/lib"
cp "$BUILD/bin/kiln-run" "$CARRY/bin/"
xz -9 -T"$XZ_THREADS" -c "$BUILD/bin/kiln-compile" >"$CARRY/bin/kiln-compile.xz"

{
  echo "# .carry-bench made by scripts/prepare_bench_carry.sh on $(uname -n), $(date -u +%FT%TZ)"
  echo "# git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "# $("$BUILD/bin/kiln-compile" --version 2>&1 | tr '\n' ' ')"
  echo "# kiln-compile sha256 $(sha256sum "$BUILD/bin/kiln-compile" | cut -d' ' -f1)"
  echo "# soname bytes sha256 (uncompressed) source"
} >"$CARRY/MANIFEST"

carried=()
skipped=()
# ldd lines: "libX.so.N => /path/libX.so.N (0x...)"; the soname is what the loader searches for.
while read -r soname path; do
  if is_system_lib "$soname"; then
    skipped+=("$soname")
    continue
  fi
  real="$(readlink -f "$path")"
  if [[ "$soname" == libz3.so.* ]]; then # an empty stand-in (see the top of this file)
    stub_dir="$(mktemp -d)"
    echo '/* stands in for Z3, which kiln-compile never calls */' >"$stub_dir/z3.c"
    "${CC:-cc}" -shared -fPIC -Wl,-soname,"$soname" -o "$stub_dir/$soname" "$stub_dir/z3.c"
    real="$stub_dir/$soname"
  fi
  if [[ "$soname" =~ ^libicudata\.so\.([0-9]+)$ ]]; then # an empty stand-in (see the top)
    stub_dir="$(mktemp -d)"
    echo "const char icudt${BASH_REMATCH[1]}_dat[32] __attribute__((aligned(16))) = {0};" \
      >"$stub_dir/icudata.c"
    "${CC:-cc}" -shared -fPIC -Wl,-soname,"$soname" -o "$stub_dir/$soname" "$stub_dir/icudata.c"
    real="$stub_dir/$soname"
  fi
  bytes=$(stat -c %s "$real")
  sum=$(sha256sum "$real" | cut -d' ' -f1)
  echo "[bench-carry] $soname ($((bytes / 1024)) KiB) <- $real"
  xz -9 -T"$XZ_THREADS" -c "$real" >"$CARRY/lib/$soname.xz"
  echo "$soname $bytes $sum $real" >>"$CARRY/MANIFEST"
  carried+=("$soname")
done < <(awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' <<<"$ldd_out")

for need in libLLVM.so.22.1 libz3.so.4 libprotobuf.so.32 libonnx_proto.so.1; do
  if [[ ! -f "$CARRY/lib/$need.xz" ]]; then
    echo "[bench-carry] WARNING: expected $need among kiln-compile's libraries; ldd did not list it" >&2
  fi
done

echo "[bench-carry] carried ${#carried[@]} libraries: ${carried[*]}"
echo "[bench-carry] left to the GPU machine: ${skipped[*]}"
echo "[bench-carry] kiln-run needs: $(ldd "$CARRY/bin/kiln-run" | awk '{print $1}' | tr '\n' ' ')"
size_kib=$(du -sk "$CARRY" | cut -f1)
echo "[bench-carry] .carry-bench/ holds $(find "$CARRY" -type f | wc -l) files, ${size_kib} KiB ($((size_kib / 1024)) MiB)"
if ((size_kib > LIMIT_KIB)); then
  echo "[bench-carry] ERROR: over 60 MiB; the device machine takes at most 64 MiB of carried paths" >&2
  exit 1
fi
echo "[bench-carry] on the GPU machine, from the repo root (carry .carry-bench):"
echo "[bench-carry]   scripts/bench_real_size.sh [--models gpt2,bert,llama] [--precision fp16] [--gemm]"
