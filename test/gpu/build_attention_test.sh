#!/usr/bin/env bash
# build_attention_test.sh - builds the standalone GPU test/benchmark of compiler/codegen/cuda/attention.cuh.
# Builds through test/gpu/build_gpu_test.sh (the include layout, the architecture, cuBLAS).
#
#   test/gpu/build_attention_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/attention_test)
#   OUT                 correctness (f16/bf16 tensor-core kernels: mma.sync attentionTC and, on an
#                       sm_90 device, the Hopper attentionSm90; fp32 CUDA-core kernel; exit 1 on failure)
#   OUT --bench         f16 timings (us, TFLOP/s) at model and FlashAttention benchmark shapes
#   OUT --bench-long    b1/b4/b8 x 4k/8k/16k tokens, h32 d128
#   --filter K          only the kernels whose tag contains K (tc, simt, sm90)
#   --shape S           with --bench / --bench-long: only the shapes whose name contains S (for ncu)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90a:
# sm_90a code, which runs on sm_90 only; ARCH=80 etc. builds without the Hopper kernel's cases).
exec "$(dirname "${BASH_SOURCE[0]}")/build_gpu_test.sh" attention_test "$@"
