#!/usr/bin/env bash
# build_gemm_sm90_test.sh - builds the standalone GPU test/benchmark of
# compiler/codegen/cuda/gemm_sm90.cuh (Hopper TMA + warp-specialized wgmma GEMM; sm_90a only).
#
# Generated kernels include the device headers as "kiln/<name>.cuh"; this script gives nvcc that
# layout through a temporary directory with a symlink kiln -> compiler/codegen/cuda.
#
#   test/gpu/build_gemm_sm90_test.sh [OUT] [extra nvcc flags...]  (OUT defaults to build/gemm_sm90_test)
#   OUT                 correctness (all configs, layouts, dtypes, shapes; exit status 1 on failure)
#   OUT --bench [-v]    timing table against cuBLAS, B [K, N] and B [N, K] (-v: every config)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc).
# Extra flags, e.g. -Xptxas -v, pass through to nvcc.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/build/gemm_sm90_test}
shift $(( $# > 0 ? 1 : 0 ))
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
ln -s "$root/compiler/codegen/cuda" "$inc/kiln"
mkdir -p "$(dirname "$out")"
set -x
"$nvcc" -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -I"$inc" \
  "$@" -o "$out" "$root/test/gpu/gemm_sm90_test.cu" -lcublas
