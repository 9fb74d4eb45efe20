// RUN: rm -rf %t && kiln-compile %S/Inputs/decomposed_rms_norm.onnx --shape x=3x8x64 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: FileCheck %s --check-prefix=SUMMARY --input-file=%t.summary
// RUN: kiln-compile %S/Inputs/decomposed_rms_norm.onnx --shape x=3x8x64 --emit=kernels -o - | FileCheck %s --check-prefix=IR
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// RMSNorm spelled as LlamaRMSNorm exports it (Pow/ReduceMean/Add/Sqrt/
// Reciprocal/Mul/Mul(weight)), followed by Relu, compiles to one RMS-norm
// kernel with the ReLU as its epilogue (kiln-raise-rms-norm, then epilogue
// fusion).
// IR-LABEL: func.func @main
// IR-NOT: kiln.reduce
// IR-NOT: kiln.sqrt
// IR: kiln.kernel @k0_fused_rms_norm_relu
// IR: kiln.rms_norm %{{.+}}, %{{.+}} {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<3x8x64xf32>, tensor<64xf32> -> tensor<3x8x64xf32>
// IR-NEXT: kiln.relu
// IR-NOT: kiln.reduce
// IR-NOT: kiln.sqrt

// CHECK: const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out0
// CHECK: if (row >= 24LL)
// CHECK: kiln::rmsNormRowVec<1>(in0 + row * 64LL, in1, 64LL, __int_as_float(0x358637bd), out0 + row * 64LL, [&](long long c, float v) -> float {
// CHECK: (v < 0 ? 0 : v)
// CHECK: return t0;

// SUMMARY: kernels: 1 (1 distinct, in 1 CUDA module)

// --precision fp16: the weight and the row are stored in fp16 (the f32 graph
// input is converted by its own kernel, since a norm reads its input from
// memory); statistics stay fp32 in rmsNormRowVec, the f32 output is written
// from the epilogue.
// RUN: rm -rf %t.fp16 && kiln-compile %S/Inputs/decomposed_rms_norm.onnx --shape x=3x8x64 --precision fp16 -o %t.fp16.kiln --dump-cuda %t.fp16 | FileCheck %s --check-prefix=FP16-SUMMARY
// RUN: cat %t.fp16/module*.cu | FileCheck %s --check-prefix=FP16
// RUN: %if ptxas %{ for f in %t.fp16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.fp16.cubin || exit 1; done %}
// FP16-SUMMARY: kernels: 2 (2 distinct
// FP16: @k1_fused_rms_norm_relu_cast
// FP16-NEXT: (const kiln::f16 *__restrict__ in0, const kiln::f16 *__restrict__ in1, float *__restrict__ out0)
// FP16: kiln::rmsNormRowVec<1>(in0 + row * 64LL, in1, 64LL, __int_as_float(0x358637bd), out0 + row * 64LL, [&](long long c, float v) -> float {

// An fp16 export (Cast to f32 around the statistics, Cast back before the
// f16 weight): the casts cancel, one kernel reads and writes f16.
// RUN: rm -rf %t.f16 && kiln-compile %S/Inputs/decomposed_rms_norm_f16.onnx --shape x=3x8x64 -o %t.f16.kiln --dump-cuda %t.f16 | FileCheck %s --check-prefix=F16-SUMMARY
// RUN: cat %t.f16/module*.cu | FileCheck %s --check-prefix=F16
// RUN: %if ptxas %{ for f in %t.f16/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.f16.cubin || exit 1; done %}
// F16-SUMMARY: kernels: 1 (1 distinct
// F16: @k0_rms_norm
// F16-NEXT: (const kiln::f16 *__restrict__ in0, const kiln::f16 *__restrict__ in1, kiln::f16 *__restrict__ out0)
// F16: kiln::rmsNormRowVec<1>(in0 + row * 64LL, in1, 64LL, __int_as_float(0x358637bd), out0 + row * 64LL, [&](long long c, float v) -> kiln::f16 {
// F16: return kiln::cvt<kiln::f16>(v);
