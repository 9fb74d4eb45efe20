// RUN: rm -rf %t && kiln-compile %S/Inputs/softmax_axis.onnx --shape x=3x6x5 -o %t.kiln --dump-cuda %t | FileCheck %s --check-prefix=SUMMARY
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// Softmax over axis 1 of [3, 6, 5]: 15 rows of 6 elements, 5 apart; the Mul
// is its epilogue, reading x at the same element.
// SUMMARY: kernels: 1 (1 distinct
// CHECK: if (row >= 15LL)
// CHECK: kiln::softmaxRow(in0 + (row / 5LL) * 30LL + row % 5LL, 6LL, 5LL, [&](long long c, float v) {
// CHECK: const long long e = (row / 5LL) * 30LL + row % 5LL + c * 5LL;
// CHECK: out0[e] =
