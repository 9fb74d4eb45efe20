#!/usr/bin/env bash
# build_gpu_test.sh - builds one standalone GPU test of the device headers (test/gpu/<NAME>.cu).
#
# Generated kernels include the device headers as "kiln/<name>.cuh"; this script gives nvcc that
# layout through a temporary directory with a symlink kiln -> compiler/codegen/cuda.
#
#   test/gpu/build_gpu_test.sh NAME [OUT] [extra nvcc flags...]   (OUT defaults to build/NAME)
# NAME: gemm_tc_test, math_test (SASS for sm_${ARCH:-90}), attention_test and decode_attention_test
# (sm_${ARCH:-90a}; built for sm_90a they also run the Hopper kernels, -DKILN_TEST_SM90A),
# gemm_wgmma_test, gemm_sm90_test
# (sm_90a: wgmma, TMA), gemm_skinny_test; the GEMM tests link cuBLAS (their reference and peer).
# The build_<NAME>.sh scripts beside it call it and say what each test does and how to run it.
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), ARCH (default 90;
# 90a for attention_test).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
names=$(cd "$root/test/gpu" && ls *.cu | sed 's/\.cu$//' | tr '\n' ' ')
if [[ $# -lt 1 || -z "$1" || ! -f "$root/test/gpu/${1:-}.cu" ]]; then
  echo "usage: test/gpu/build_gpu_test.sh NAME [OUT] [nvcc flags...]; NAME: one of ${names% }" >&2
  [[ $# -ge 1 && -n "$1" ]] && echo "build_gpu_test.sh: no test/gpu/$1.cu" >&2
  exit 2
fi
name=$1
shift
out=${1:-$root/build/$name}
shift $(( $# > 0 ? 1 : 0 ))
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
case "$name" in
  gemm_sm90_test | gemm_wgmma_test) arch=90a ;;
  attention_test | decode_attention_test) arch=${ARCH:-90a} ;; # the Hopper kernels' cases need sm_90a
  *) arch=${ARCH:-90} ;;
esac
extra=()
[[ "$arch" == 90a ]] && extra=(-DKILN_TEST_SM90A)
libs=()
[[ "$name" == gemm_* ]] && libs=(-lcublas)
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
ln -s "$root/compiler/codegen/cuda" "$inc/kiln"
mkdir -p "$(dirname "$out")"
set -x
"$nvcc" -std=c++17 -O3 -lineinfo -gencode=arch=compute_${arch},code=sm_${arch} -I"$inc" \
  "${extra[@]}" "$@" -o "$out" "$root/test/gpu/$name.cu" "${libs[@]}"
{ set +x; } 2>/dev/null
