// RUN: rm -rf %t && kiln-compile %S/Inputs/long_row_norms.onnx --shape x=2x4x768,z=2x4x2048 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// RUN: kiln-run %t.kiln --info | FileCheck %s --check-prefix=LAUNCH

// Rows of 512 elements or more (GPT-2/BERT LayerNorm over 768, Llama RMSNorm
// over 2048) take one 256-thread block per row, the row in registers
// (3 and 8 elements per thread); shorter rows keep a warp per row
// (anchors.mlir, decomposed-rms-norm.mlir).
// CHECK-DAG: kiln::layerNormRowBlock<3>(in0 + row * 768LL, in1, in2, 768LL, __int_as_float(0x3727c5ac), [&](long long c, float v) {
// CHECK-DAG: kiln::rmsNormRowBlock<8>(in0 + row * 2048LL, in1, 2048LL, __int_as_float(0x358637bd), [&](long long c, float v) {
// CHECK-DAG: const long long row = (long long)blockIdx.x;
// LAUNCH: grid=(8,1,1) block=(256,1,1)
// LAUNCH: grid=(8,1,1) block=(256,1,1)
