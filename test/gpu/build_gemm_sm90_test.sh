#!/usr/bin/env bash
# build_gemm_sm90_test.sh - builds the standalone GPU test/benchmark of
# compiler/codegen/cuda/gemm_sm90.cuh (Hopper TMA + warp-specialized wgmma GEMM; sm_90a only).
# Builds through test/gpu/build_gpu_test.sh (the include layout, the architecture, cuBLAS).
#
#   test/gpu/build_gemm_sm90_test.sh [OUT] [extra nvcc flags...]  (OUT defaults to build/gemm_sm90_test)
#   OUT                 correctness (all configs, layouts, dtypes, shapes; exit status 1 on failure)
#   OUT --bench [-v]    timing table against cuBLAS, B [K, N] and B [N, K] (-v: every config)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc).
# Extra flags, e.g. -Xptxas -v, pass through to nvcc.
exec "$(dirname "${BASH_SOURCE[0]}")/build_gpu_test.sh" gemm_sm90_test "$@"
