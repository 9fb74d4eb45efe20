#!/usr/bin/env bash
# build_gemm_tc_test.sh - builds the standalone GPU test/benchmark of compiler/codegen/cuda/gemm_tc.cuh.
#
# Generated kernels include the device headers as "kiln/<name>.cuh"; this script gives nvcc that
# layout through a temporary directory with a symlink kiln -> compiler/codegen/cuda.
#
#   test/gpu/build_gemm_tc_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/gemm_tc_test)
#   OUT                 correctness (all configs, layouts, dtypes f16/bf16/tf32, shapes; exit 1 on failure)
#   OUT --quick         small shapes only (e.g. under compute-sanitizer)
#   OUT --bench [-v]    timing tables (f16, tf32) against cuBLAS (-v: every tile configuration)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/build/gemm_tc_test}
shift $(( $# > 0 ? 1 : 0 ))
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${ARCH:-90}
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
ln -s "$root/compiler/codegen/cuda" "$inc/kiln"
mkdir -p "$(dirname "$out")"
set -x
"$nvcc" -std=c++17 -O3 -lineinfo -gencode=arch=compute_${arch},code=sm_${arch} -I"$inc" \
  "$@" -o "$out" "$root/test/gpu/gemm_tc_test.cu" -lcublas
