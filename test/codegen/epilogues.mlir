// RUN: rm -rf %t && kiln-compile %S/Inputs/epilogues.onnx --shape x=2x8x16 -o %t.kiln --dump-cuda %t | FileCheck %s --check-prefix=SUMMARY
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// MatMul+Add+Tanh+Add, Softmax+IsNaN+Where and LayerNorm+Mul: three kernels,
// each anchor applying its consumers in the epilogue.
// SUMMARY: kernels: 3 (3 distinct, in 3 CUDA modules)

// CHECK-DAG: kiln::gemmTileF32<16, 16, 32, 2, 2, 4>(
// CHECK-DAG: tanhf(
// CHECK-DAG: kiln::softmaxRow(
// CHECK-DAG: (v != v)
// CHECK-DAG: kiln::layerNormRowVec<1>(
// CHECK-DAG: (v * __int_as_float(0x3f000000))
