#!/usr/bin/env bash
# scripts/check_install.sh - check the installed kiln tree the way an outside application uses it.
#
#   scripts/check_install.sh [BUILD_DIR]      (default: $KILN_BUILD_DIR, else <repo>/build)
#
# Needs BUILD_DIR built (it installs what is there; nothing is compiled in it). Steps:
#   1. `cmake --install BUILD_DIR --prefix TMP` and check the layout: libkiln_runtime.so with its
#      SONAME, libkiln_runtime.a, kiln/runtime.h + runtime.hpp, the CMake package with its version
#      file, kiln.pc, and the tools (kiln-run; kiln-compile and kiln-opt when the compiler is built);
#   2. copy examples/embed out of the repository and build it against TMP alone, four ways:
#      CMake with find_package(kiln) (kiln::runtime, and kiln::runtime_static), and cc with
#      pkg-config: `cc embed.c $(pkg-config --cflags --libs kiln)` and the static line
#      `cc embed.c $(pkg-config --cflags kiln) -Wl,-Bstatic $(pkg-config --static --libs kiln)`;
#   3. run every binary's no-GPU paths: --help, --version (kiln_version() and the headers' macros
#      equal the project version), a missing artifact (IO_ERROR, exit 1), and, when
#      kiln-compile was installed, --info of a small compiled model (also `kiln-run --info`).
#      Shared binaries must load TMP's libkiln_runtime.so; static ones must not need it.
# Runs in seconds; ctest runs it as `install-check` (label install). Exit 0 = all checks passed,
# 77 = skipped (a KILN_SANITIZE or KILN_FUZZ build, whose libraries need the sanitizer runtime).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-${KILN_BUILD_DIR:-$ROOT/build}}" && pwd)"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/kiln-install-check.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
PREFIX="$TMP/prefix"

log() { printf '[check-install] %s\n' "$*"; }
die() { printf '[check-install] FAIL: %s\n' "$*" >&2; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }

[[ -f "$BUILD/CMakeCache.txt" ]] || die "$BUILD is not a configured kiln build tree"
# A sanitized or fuzzing build's libraries are instrumented: an application would need the same
# -fsanitize flags and compiler, so the outside-application check does not apply (exit 77: skip).
if [[ -n "$(cache KILN_SANITIZE)" || "$(cache KILN_FUZZ)" == ON ]]; then
  log "SKIP: $BUILD is a sanitized or fuzzing build (KILN_SANITIZE / KILN_FUZZ)"
  exit 77
fi
for tool in pkg-config cc readelf; do
  command -v "$tool" >/dev/null || die "$tool not found"
done

# --- 1. install and check the layout. ---
cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1 ||
  { cat "$TMP/install.log" >&2; die "cmake --install $BUILD failed (is the tree built?)"; }
LIBDIR="$PREFIX/$(cache CMAKE_INSTALL_LIBDIR)"
VERSION="$(sed -n 's/^project(kiln VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")"
expect=(include/kiln/runtime.h include/kiln/runtime.hpp include/kiln/version.h bin/kiln-run)
if [[ "$(cache KILN_BUILD_COMPILER)" != OFF ]]; then
  expect+=(bin/kiln-compile bin/kiln-opt)
fi
for f in "${expect[@]}"; do
  [[ -e "$PREFIX/$f" ]] || die "not installed: $f"
done
for f in libkiln_runtime.so libkiln_runtime.a cmake/kiln/kilnConfig.cmake \
         cmake/kiln/kilnConfigVersion.cmake cmake/kiln/kilnTargets.cmake pkgconfig/kiln.pc; do
  [[ -e "$LIBDIR/$f" ]] || die "not installed: ${LIBDIR#"$PREFIX"/}/$f"
done
soname="$(readelf -d "$LIBDIR/libkiln_runtime.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
[[ "$soname" == libkiln_runtime.so.* && -e "$LIBDIR/$soname" ]] ||
  die "libkiln_runtime.so has SONAME '$soname', which is not installed next to it"
log "installed into a temporary prefix: $(cd "$PREFIX" && find . -type f -o -type l | wc -l) files, SONAME $soname"

# --- 2. build examples/embed against the installed tree alone. ---
SRC="$TMP/embed-src"
mkdir -p "$SRC"
cp "$ROOT/examples/embed/CMakeLists.txt" "$ROOT/examples/embed/embed.c" \
  "$ROOT/examples/embed/generate.c" "$SRC/"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
declare -A BINARIES
for variant in shared static; do
  dir="$TMP/cmake-$variant"
  static=OFF
  [[ $variant == static ]] && static=ON
  { cmake -S "$SRC" -B "$dir" "${GEN[@]}" -DCMAKE_PREFIX_PATH="$PREFIX" -DKILN_EMBED_STATIC=$static &&
    cmake --build "$dir"; } >"$TMP/cmake-$variant.log" 2>&1 ||
    { cat "$TMP/cmake-$variant.log" >&2; die "CMake build of examples/embed ($variant) failed"; }
  BINARIES[cmake-$variant]="$dir/kiln-embed-example"
done

export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
[[ "$(pkg-config --modversion kiln)" == "$VERSION" ]] ||
  die "pkg-config --modversion kiln is '$(pkg-config --modversion kiln)', expected '$VERSION'"
# shellcheck disable=SC2046
cc -o "$TMP/embed-pc-shared" "$SRC/embed.c" $(pkg-config --cflags --libs kiln) ||
  die "cc embed.c \$(pkg-config --cflags --libs kiln) failed"
# shellcheck disable=SC2046
cc -o "$TMP/embed-pc-static" "$SRC/embed.c" $(pkg-config --cflags kiln) \
  -Wl,-Bstatic $(pkg-config --static --libs kiln) ||
  die "cc embed.c \$(pkg-config --cflags kiln) -Wl,-Bstatic \$(pkg-config --static --libs kiln) failed"
BINARIES[pc-shared]="$TMP/embed-pc-shared"
BINARIES[pc-static]="$TMP/embed-pc-static"
log "built examples/embed 4 ways: CMake find_package(kiln) shared and static, cc + pkg-config shared and static"

# --- 3. run the no-GPU paths. ---
MODEL=""
if [[ -x "$PREFIX/bin/kiln-compile" ]]; then
  MODEL="$TMP/chain.kiln"
  "$PREFIX/bin/kiln-compile" "$ROOT/test/codegen/Inputs/chain.onnx" --shape x=2x8 -o "$MODEL" \
    >"$TMP/compile.log" 2>&1 || { cat "$TMP/compile.log" >&2; die "installed kiln-compile failed"; }
  "$PREFIX/bin/kiln-opt" --version >/dev/null || die "installed kiln-opt does not start"
  "$PREFIX/bin/kiln-run" "$MODEL" --info >"$TMP/run-info.txt" 2>&1 ||
    { cat "$TMP/run-info.txt" >&2; die "installed kiln-run --info failed"; }
else
  "$PREFIX/bin/kiln-run" --help >/dev/null || die "installed kiln-run --help failed"
  log "no kiln-compile installed (runtime-only build): skipping the --info checks"
fi

for name in "${!BINARIES[@]}"; do
  bin="${BINARIES[$name]}"
  runenv=(env)
  needed="$(readelf -d "$bin" | grep -c 'NEEDED.*libkiln_runtime' || true)"
  if [[ $name == *shared ]]; then
    ((needed == 1)) || die "$name does not link libkiln_runtime.so"
    [[ $name == pc-shared ]] && runenv=(env LD_LIBRARY_PATH="$(pkg-config --variable=libdir kiln)")
    loaded="$("${runenv[@]}" ldd "$bin" | sed -n 's/.*libkiln_runtime[^ ]* => \([^ ]*\).*/\1/p')"
    [[ "$(realpath "$loaded")" == "$(realpath "$LIBDIR")"/* ]] ||
      die "$name loads libkiln_runtime from '$loaded', not from the installed tree"
  else
    ((needed == 0)) || die "$name links libkiln_runtime.so although it was linked statically"
  fi
  "${runenv[@]}" "$bin" --help | grep -q "usage: embed" || die "$name --help failed"
  version="$("${runenv[@]}" "$bin" --version)" || die "$name --version: $version"
  [[ "$version" == "kiln runtime $VERSION (headers $VERSION)" ]] ||
    die "$name --version printed '$version', expected version $VERSION"
  set +e
  out="$("${runenv[@]}" "$bin" "$TMP/missing.kiln" 2>&1)"
  rc=$?
  set -e
  [[ $rc == 1 && "$out" == *"[IO_ERROR] cannot open artifact"* ]] ||
    die "$name on a missing artifact: exit $rc, '$out' (expected exit 1 and IO_ERROR)"
  if [[ -n "$MODEL" ]]; then
    info="$("${runenv[@]}" "$bin" --info "$MODEL")" || die "$name --info failed"
    [[ "$info" == *"input x f32[2x8]"* ]] || die "$name --info printed '$info'"
  fi
done
# The generation example of the same CMake builds: its usage and a missing artifact.
for variant in shared static; do
  gen="$TMP/cmake-$variant/kiln-generate-example"
  "$gen" --help | grep -q "usage: generate" || die "kiln-generate-example ($variant) --help failed"
  "$gen" -h | grep -q "usage: generate" || die "kiln-generate-example ($variant) -h failed"
  set +e
  out="$("$gen" "$TMP/missing.kiln" 1 2 3 2>&1)"
  rc=$?
  set -e
  [[ $rc == 1 && "$out" == *"[IO_ERROR] cannot open artifact"* ]] ||
    die "kiln-generate-example ($variant) on a missing artifact: exit $rc, '$out' (expected exit 1 and IO_ERROR)"
done
log "ran the no-GPU paths of all 4 binaries${MODEL:+ (with --info of a compiled model)}: OK"
