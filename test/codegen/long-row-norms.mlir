// RUN: rm -rf %t && kiln-compile %S/Inputs/long_row_norms.onnx --shape x=2x4x768,z=2x4x2048 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// RUN: kiln-run %t.kiln --info | FileCheck %s --check-prefix=LAUNCH

// The three row paths of layer norm and RMS norm (NormEmitter.cpp). Rows that are a whole
// number of 16-byte vectors and fit 8 vectors per lane take a warp per row with the row in
// registers (GPT-2/BERT LayerNorm over 768: 6 fp32 or 3 fp16 vectors per lane, Llama's
// RMSNorm over 2048 in fp16: 8); four rows per 128-thread block.
// CHECK-DAG: kiln::layerNormRowVec<6>(in0 + row * 768LL, in1, in2, 768LL, __int_as_float(0x3727c5ac), out0 + row * 768LL, [&](long long c, float v) -> float {
// Longer rows (2048 in fp32: 16 vectors per lane) take a 256-thread block per row (8 elements
// per thread).
// CHECK-DAG: kiln::rmsNormRowBlock<8>(in0 + row * 2048LL, in1, 2048LL, __int_as_float(0x358637bd), [&](long long c, float v) {
// CHECK-DAG: const long long row = (long long)blockIdx.x;
// LAUNCH: grid=(2,1,1) block=(128,1,1)
// LAUNCH: grid=(8,1,1) block=(256,1,1)

// RUN: rm -rf %t.fp16 && kiln-compile %S/Inputs/long_row_norms.onnx --shape x=2x4x768,z=2x4x2048 --precision fp16 -o %t.fp16.kiln --dump-cuda %t.fp16 > %t.fp16.summary
// RUN: cat %t.fp16/module*.cu | FileCheck %s --check-prefix=FP16
// RUN: %if ptxas %{ for f in %t.fp16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.fp16.cubin || exit 1; done %}
// FP16-DAG: kiln::layerNormRowVec<3>(in0 + row * 768LL, in1, in2, 768LL,
// FP16-DAG: kiln::rmsNormRowVec<8>(in0 + row * 2048LL, in1, 2048LL,

// Rows that are not whole vectors: a block per row from 512 elements (770: 4 per thread),
// else a warp per row with element loads (30).
// RUN: rm -rf %t.odd && kiln-compile %S/Inputs/odd_row_norms.onnx --shape x=2x4x770,z=2x4x30 -o %t.odd.kiln --dump-cuda %t.odd > %t.odd.summary
// RUN: cat %t.odd/module*.cu | FileCheck %s --check-prefix=ODD
// RUN: %if ptxas %{ for f in %t.odd/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.odd.cubin || exit 1; done %}
// ODD-DAG: kiln::layerNormRowBlock<4>(in0 + row * 770LL, in1, in2, 770LL,
// ODD-DAG: kiln::rmsNormRow(in0 + row * 30LL, in1, 30LL,
