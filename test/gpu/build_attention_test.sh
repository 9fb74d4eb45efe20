#!/usr/bin/env bash
# build_attention_test.sh - builds the standalone GPU test/benchmark of compiler/codegen/cuda/attention.cuh.
#
# Generated kernels include the device headers as "kiln/<name>.cuh"; this script gives nvcc that
# layout through a temporary directory with a symlink kiln -> compiler/codegen/cuda.
#
#   test/gpu/build_attention_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/attention_test)
#   OUT                 correctness (f16/bf16 tensor-core kernel, fp32 CUDA-core kernel; exit 1 on failure)
#   OUT --bench         f16 timings (us, TFLOP/s) at model and FlashAttention benchmark shapes
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/build/attention_test}
shift $(( $# > 0 ? 1 : 0 ))
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${ARCH:-90}
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
ln -s "$root/compiler/codegen/cuda" "$inc/kiln"
mkdir -p "$(dirname "$out")"
set -x
"$nvcc" -std=c++17 -O3 -lineinfo -gencode=arch=compute_${arch},code=sm_${arch} -I"$inc" \
  "$@" -o "$out" "$root/test/gpu/attention_test.cu"
