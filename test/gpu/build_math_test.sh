#!/usr/bin/env bash
# build_math_test.sh - builds the standalone GPU test of the scalar helpers of
# compiler/codegen/cuda/common.cuh (kiln::onePlusErf, kiln::onePlusTanh) against fp64 references.
# Builds through test/gpu/build_gpu_test.sh (the include layout, the architecture, cuBLAS).
#
#   test/gpu/build_math_test.sh [OUT] [extra nvcc flags...]   (OUT defaults to build/math_test)
#   OUT                 exit 0 when every bound holds, 1 otherwise (prints the worst errors)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90).
exec "$(dirname "${BASH_SOURCE[0]}")/build_gpu_test.sh" math_test "$@"
