#!/usr/bin/env bash
# build_decode_attention_test.sh - builds the standalone GPU test/benchmark of
# compiler/codegen/cuda/decode_attention.cuh (paged KV cache append, split-KV decode attention).
# Builds through test/gpu/build_gpu_test.sh (the include layout, the architecture).
#
#   test/gpu/build_decode_attention_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/decode_attention_test)
#   OUT                 correctness (f16/bf16/fp32, paged and contiguous caches, GQA, q_len 1..16;
#                       exit 1 on failure, 77 without a GPU), then timings (us, GB/s; not asserted)
#   OUT --no-timing     correctness only
#   OUT --timing        timings only
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90a: the
# Hopper prefill path's cases and timings are compiled only for sm_90a).
exec "$(dirname "${BASH_SOURCE[0]}")/build_gpu_test.sh" decode_attention_test "$@"
