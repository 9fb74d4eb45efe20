#!/usr/bin/env bash
# build_gemm_tc_test.sh - builds the standalone GPU test/benchmark of compiler/codegen/cuda/gemm_tc.cuh.
# Builds through test/gpu/build_gpu_test.sh (the include layout, the architecture, cuBLAS).
#
#   test/gpu/build_gemm_tc_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/gemm_tc_test)
#   OUT                 correctness (all configs, layouts, dtypes f16/bf16/tf32, shapes; exit 1 on failure)
#   OUT --quick         small shapes only (e.g. under compute-sanitizer)
#   OUT --bench [-v]    timing tables (f16, tf32) against cuBLAS (-v: every tile configuration)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90).
exec "$(dirname "${BASH_SOURCE[0]}")/build_gpu_test.sh" gemm_tc_test "$@"
