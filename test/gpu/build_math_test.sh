#!/usr/bin/env bash
# build_math_test.sh - builds the standalone GPU test of the scalar helpers of
# compiler/codegen/cuda/common.cuh (kiln::onePlusErf, kiln::onePlusTanh) against fp64 references.
#
# Generated kernels include the device headers as "kiln/<name>.cuh"; this script gives nvcc that
# layout through a temporary directory with a symlink kiln -> compiler/codegen/cuda.
#
#   test/gpu/build_math_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/math_test)
#   OUT                 exit 0 when every bound holds, 1 otherwise (prints the worst errors)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/build/math_test}
shift $(( $# > 0 ? 1 : 0 ))
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${ARCH:-90}
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
ln -s "$root/compiler/codegen/cuda" "$inc/kiln"
mkdir -p "$(dirname "$out")"
set -x
"$nvcc" -std=c++17 -O3 -lineinfo -gencode=arch=compute_${arch},code=sm_${arch} -I"$inc" \
  "$@" -o "$out" "$root/test/gpu/math_test.cu"
