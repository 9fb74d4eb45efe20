// RUN: rm -rf %t && kiln-compile %S/Inputs/nan_int_semantics.onnx --shape x=3x20,z=3x20 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// ONNX semantics in kernels (values checked on a GPU by
// test/e2e/small_models_test.py): Relu, Clip and Max keep NaN, and integer Pow
// is exact (kiln::ipow: repeated squaring in 64-bit; pow(double) is not);
// Softmax of a fully masked row is NaN (kiln::softmaxRow, cuda/norm.cuh).
// CHECK-DAG: (t0 < 0 ? 0 : t0)
// CHECK-DAG: kiln::maxNaN(t0, __int_as_float(0xbf800000))
// CHECK-DAG: kiln::minNaN(t1, __int_as_float(0x3f800000))
// CHECK-DAG: kiln::ipow((long long)t3, (long long)t4)
// CHECK-DAG: kiln::softmaxRow(
// CHECK-NOT: pow((double)
