#!/usr/bin/env bash
# build_sample_test.sh - builds the standalone GPU test of the next-token sampler
# (compiler/codegen/cuda/sample.cuh, kiln::sampleRow; kiln.sample's kernel).
# Builds through test/gpu/build_gpu_test.sh (the include layout, the architecture).
#
#   test/gpu/build_sample_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/sample_test)
#   OUT    exit 0 when every check holds, 1 otherwise, 77 without a GPU
# Checks: Philox4x32-10's known answer; greedy rows (temperature <= 0 or NaN, top_k 1, a
# non-finite maximum) against the host's first maximum with ties and NaNs, V up to 128k; the
# chi-square of 200000 draws against the exact top-k / top-p distribution (fp64 on the host) on
# small vocabularies with ties, and tokens outside the kept set never drawn; the same tokens for
# the same seed and counter at 128 and 512 threads and in any row; other seeds, other streams.
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90).
exec "$(dirname "${BASH_SOURCE[0]}")/build_gpu_test.sh" sample_test "$@"
