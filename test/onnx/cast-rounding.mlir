// Casts to bfloat16 and float16 round as IEEE 754 (and ONNX, and onnxruntime)
// do: to nearest even, a finite value half an ulp past the largest finite one
// overflows to inf (f32 65520 -> f16 inf, 65519.99 -> 65504), inf and NaN
// stay. cast_rounding.onnx casts its input x (kernels) and an initializer c
// holding the special values of test/onnx/cast_values.py (folded at import).
// Values of the kernels on a GPU: test/e2e/small_models_test.py.
//
// RUN: kiln-compile %S/Inputs/cast_rounding.onnx --shape x=42 --emit=graph | FileCheck %s --check-prefix=GRAPH
// RUN: kiln-compile %S/Inputs/cast_rounding.onnx --shape x=42 --emit=graph --print-constants | kiln-opt --mlir-print-elementsattrs-with-hex-if-larger=0 | %python %S/check_cast_rounding.py | FileCheck %s --check-prefix=FOLDED
// RUN: rm -rf %t && kiln-compile %S/Inputs/cast_rounding.onnx --shape x=42 -o %t.kiln --dump-cuda %t > /dev/null
// RUN: cat %t/module*.cu | FileCheck %s --check-prefix=CUDA
// RUN: cat %t/module*.cu | not grep "kiln::ld(kiln::cvt<"
// RUN: rm -rf %t.fp16 && kiln-compile %S/Inputs/cast_rounding.onnx --shape x=42 --precision fp16 -o %t.fp16.kiln --dump-cuda %t.fp16 > /dev/null 2>&1
// RUN: cat %t.fp16/module*.cu | FileCheck %s --check-prefix=FP16
// RUN: rm -rf %t.int && kiln-compile %S/Inputs/cast_int_rounding.onnx --shape x=42,y=42 -o %t.int.kiln --dump-cuda %t.int > /dev/null
// RUN: cat %t.int/module*.cu | FileCheck %s --check-prefix=INT

// int64 and int32 inputs round once to bf16 / fp16 (castRnInt: to fp32 rounded to odd first).
// INT-DAG: kiln::castRnInt<kiln::bf16>((long long)(
// INT-DAG: kiln::castRnInt<kiln::f16>((long long)(
// INT-NOT: kiln::castRn<kiln::bf16>((float)(

// The pairs on the input are kept: a narrowing cast and the widening one
// after it are not an identity.
// GRAPH-LABEL: func.func @main
// GRAPH-NEXT: %[[B:.+]] = kiln.cast %arg0 : tensor<42xf32> -> tensor<42xbf16>
// GRAPH-NEXT: kiln.cast %[[B]] : tensor<42xbf16> -> tensor<42xf32>
// GRAPH-NEXT: %[[H:.+]] = kiln.cast %arg0 : tensor<42xf32> -> tensor<42xf16>
// GRAPH-NEXT: kiln.cast %[[H]] : tensor<42xf16> -> tensor<42xf32>
// GRAPH-NEXT: %[[HB:.+]] = kiln.cast %[[H]] : tensor<42xf16> -> tensor<42xbf16>
// GRAPH-NEXT: kiln.cast %[[HB]] : tensor<42xbf16> -> tensor<42xf32>

// The casts of the initializer fold to constants equal, bit for bit, to the
// numpy references (ties, limits, subnormals, signed zeros, inf, NaN).
// FOLDED: c_via_bf16: 39 values ok
// FOLDED-NEXT: c_via_f16: 39 values ok
// FOLDED-NEXT: c_f16: 39 values ok
// FOLDED-NEXT: c_via_f16_bf16: 39 values ok

// In kernels the model's casts round with kiln::castRn (cvt.rn without
// saturation), never with the saturating store conversion kiln::cvt.
// CUDA-DAG: kiln::ld(kiln::castRn<kiln::bf16>((float)(
// CUDA-DAG: kiln::ld(kiln::castRn<kiln::f16>((float)(

// With --precision fp16 the model's casts of x still read the f32 input and
// round as ONNX does; the casts back to f32, which now store f16, saturate
// like every 16-bit store.
// FP16-DAG: kiln::ld(kiln::castRn<kiln::bf16>((float)(
// FP16-DAG: kiln::ld(kiln::castRn<kiln::f16>((float)(
// FP16-DAG: kiln::ld(kiln::cvt<kiln::f16>((float)(
