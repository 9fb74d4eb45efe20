// RUN: rm -rf %t && kiln-compile %S/Inputs/reductions.onnx --shape x=3x8x16 -o %t.kiln --dump-cuda %t | FileCheck %s --check-prefix=SUMMARY
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// Each reduction computes its input on the fly (Mul, Exp fused as prologue).
// SUMMARY: kernels: 2 (2 distinct

// Mean of squares over the last axis: one warp per row, shuffle reduction.
// CHECK-DAG: for (long long r = threadIdx.x & 31; r < 16LL; r += 32) {
// CHECK-DAG: acc = kiln::warpSum(acc);
// CHECK-DAG: out0[o] = acc / 16.0f;
// Max over the leading axis: one thread per output.
// CHECK-DAG: for (long long r = 0; r < 3LL; ++r) {
// CHECK-DAG: expf(
// CHECK-DAG: acc = kiln::maxNaN(acc, v);
