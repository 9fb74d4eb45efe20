// RUN: rm -rf %t && kiln-compile %S/Inputs/anchors.onnx --shape x=2x4x16 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: FileCheck %s --check-prefix=SUMMARY --input-file=%t.summary
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// One kernel per anchor op, each calling its device building block; the
// result leaves through an epilogue lambda (here a plain store).
// CHECK-DAG: // [4x16] x [16x32], batch 2
// CHECK-DAG: kiln::gemmTileF32<16, 16, 32, 2, 2, 4>(
// CHECK-DAG: kiln::layerNormRowVec<1>(in0 + row * 32LL, in1, in2, 32LL, __int_as_float(0x3727c5ac), out0 + row * 32LL, [&](long long c, float v) -> float {
// CHECK-DAG: kiln::softmaxRow(in0 + row * 32LL, 32LL, 1LL, [&](long long c, float v) {
// CHECK-DAG: out0[e] = v;
// CHECK-DAG: for (long long r = threadIdx.x & 31; r < 32LL; r += 32) {

// SUMMARY: kernels: 4 (4 distinct, in 4 CUDA modules)
// SUMMARY: arena bytes: 2048 (sum of intermediate tensor bytes: 3328)
