#!/usr/bin/env bash
# build_persistent_decode_bench.sh - builds the persistent decode-step experiment
# (test/gpu/persistent_decode_bench.cu): how close one cooperative launch that streams a batch-1
# decode step's weights through a shared-memory ring, loading the next stage's tiles before each
# grid barrier, gets to the copy bandwidth (the 0.8B Llama's shapes; docs/generation.md "Not done"
# item 0). Builds through test/gpu/build_gpu_test.sh (sm_90: bulk copies, mbarriers).
#
#   test/gpu/build_persistent_decode_bench.sh [OUT] [extra nvcc flags...]
#   OUT [--layers N] [--iters N]   exit 0 when its logits match the per-GEMV reference (1e-3),
#                                  1 otherwise, 77 without a GPU
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc).
exec "$(dirname "${BASH_SOURCE[0]}")/build_gpu_test.sh" persistent_decode_bench "$@"
