// RUN: rm -rf %t && kiln-compile %S/Inputs/decomposed_layer_norm.onnx --shape x=3x8x16 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: FileCheck %s --check-prefix=SUMMARY --input-file=%t.summary
// RUN: kiln-compile %S/Inputs/decomposed_layer_norm.onnx --shape x=3x8x16 --emit=kernels -o - | FileCheck %s --check-prefix=IR
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// An opset-13 layer norm spelled out as ReduceMean/Sub/Pow/ReduceMean/Add/
// Sqrt/Div/Mul/Add, followed by Relu, compiles to one layer-norm kernel with
// the ReLU as its epilogue (kiln-raise-layer-norm, then epilogue fusion).
// IR-LABEL: func.func @main
// IR-NOT: kiln.reduce
// IR-NOT: kiln.sqrt
// IR: kiln.kernel @k0_fused_layer_norm_relu
// IR: kiln.layer_norm %{{.+}}, %{{.+}}, %{{.+}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// IR-NOT: kiln.reduce
// IR-NOT: kiln.sqrt

// CHECK: kiln::layerNormRowVec<1>(in0 + row * 16LL, in1, in2, 16LL, __int_as_float(0x3727c5ac), out0 + row * 16LL, [&](long long c, float v) -> float {

// SUMMARY: kernels: 1 (1 distinct, in 1 CUDA module)
