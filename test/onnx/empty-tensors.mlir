// Zero-size dims (kiln-eliminate-empty-tensors; models: empty_tensors() in
// gen_onnx_tests.py; values on a GPU: test/e2e/small_models_test.py).
// RUN: kiln-compile %S/Inputs/empty_tensors.onnx --shape past=1x2x0x4,e=2x0 --emit=kernels | FileCheck %s
// RUN: kiln-compile %S/Inputs/attention_empty_past.onnx --shape pk=1x2x0x4,pv=1x2x0x4 --emit=kernels | FileCheck %s --check-prefix=ATTN
// RUN: kiln-compile %S/Inputs/empty_tensors.onnx --shape past=1x2x0x4,e=2x0 -o %t.kiln | FileCheck %s --check-prefix=SUMMARY
// RUN: kiln-run %t.kiln --info | FileCheck %s --check-prefix=INFO
// At fp16 and bf16 the empty outputs' casts are empty constants too (no kernel has an empty result).
// RUN: kiln-compile %S/Inputs/empty_tensors.onnx --shape past=1x2x0x4,e=2x0 --precision fp16 -o %t.f16.kiln | FileCheck %s --check-prefix=WROTE
// RUN: kiln-run %t.f16.kiln --info | FileCheck %s --check-prefix=INFO
// RUN: kiln-compile %S/Inputs/empty_tensors.onnx --shape past=1x2x0x4,e=2x0 --precision bf16 -o %t.bf16.kiln | FileCheck %s --check-prefix=WROTE
// RUN: not kiln-compile %S/Inputs/error_gather_empty_axis.onnx -o %t.kiln 2>&1 | FileCheck %s --check-prefix=GATHER

// The empty past drops out of the KV Concat (2 * k), the empty middle operand
// out of Concat(x, e, x); reductions over the empty axis are the ONNX constants
// (sum 0, max -inf or INT32_MIN, min +inf; mean, undefined in ONNX, is NaN as in
// numpy); MatMul with K = 0 is 0 (+ bias); empty results are empty constants.
// CHECK-DAG: kiln.constant dense<> : tensor<2x0xf32>
// CHECK-DAG: kiln.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-DAG: kiln.constant dense<0x7FC00000> : tensor<2xf32>
// CHECK-DAG: kiln.constant dense<0xFF800000> : tensor<2xf32>
// CHECK-DAG: kiln.constant dense<0x7F800000> : tensor<2xf32>
// CHECK-DAG: kiln.constant dense<-2147483648> : tensor<2xi32>
// CHECK-DAG: kiln.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<2x5xf32>
// CHECK-DAG: kiln.mul %{{.+}}, %{{.+}} : tensor<1x2x1x4xf32>, tensor<f32> -> tensor<1x2x1x4xf32>
// CHECK-DAG: kiln.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
// CHECK-NOT: x0x
// CHECK: return

// Attention-23 at the first decode step: attention over the new keys only;
// present_k/present_v are the inputs k/v.
// ATTN: kiln.attention %arg5, %arg6, %arg7 {{.*}} : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
// ATTN: return %{{.+}}, %arg1, %arg2

// SUMMARY: kernels: 2
// WROTE: wrote {{.*}}.kiln
// INFO: past: f32[1x2x0x4] (0 bytes)
// INFO: e: f32[2x0] (0 bytes)
// INFO: slice_empty: f32[2x0] (0 bytes)
// INFO: relu_e: f32[2x0] (0 bytes)

// GATHER: error: node 'gather' (Gather): unsupported: operand 0 of kiln.gather is empty ('tensor<0x8xf32>') but its result is not: there is nothing to read
