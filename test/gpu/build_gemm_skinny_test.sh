#!/usr/bin/env bash
# build_gemm_skinny_test.sh - builds the standalone GPU test/benchmark of
# compiler/codegen/cuda/gemm_skinny.cuh (the few-row GEMM of decode steps, CUDA-core and
# tensor-core inner products). Builds through test/gpu/build_gpu_test.sh (the include layout, the
# architecture, cuBLAS); the test instantiates a few hundred kernels, so nvcc splits the device
# compilation over the host's cores (--split-compile=0).
#
#   test/gpu/build_gemm_skinny_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/gemm_skinny_test)
#   OUT                      correctness: PASS/FAIL per case, exit 1 on a failure, 77 without a GPU
#   OUT --bench [--bf16]     then µs per launch and GB/s of B, both inner products and cuBLAS
#   OUT --bench-only [--bf16] the benchmark alone
#   OUT -v                   every case's errors
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90).
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
out=${1:-$(cd "$here/../.." && pwd)/build/gemm_skinny_test}
shift $(( $# > 0 ? 1 : 0 ))
exec "$here/build_gpu_test.sh" gemm_skinny_test "$out" --split-compile=0 "$@"
