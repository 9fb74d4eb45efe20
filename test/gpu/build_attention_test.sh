#!/usr/bin/env bash
# build_attention_test.sh - builds the standalone GPU test/benchmark of compiler/codegen/cuda/attention.cuh.
# Builds through test/gpu/build_gpu_test.sh (the include layout, the architecture, cuBLAS).
#
#   test/gpu/build_attention_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/attention_test)
#   OUT                 correctness (f16/bf16 tensor-core kernel, fp32 CUDA-core kernel; exit 1 on failure)
#   OUT --bench         f16 timings (us, TFLOP/s) at model and FlashAttention benchmark shapes
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90).
exec "$(dirname "${BASH_SOURCE[0]}")/build_gpu_test.sh" attention_test "$@"
