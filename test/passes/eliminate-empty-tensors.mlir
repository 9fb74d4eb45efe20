// RUN: kiln-opt %s --kiln-eliminate-empty-tensors --split-input-file --verify-diagnostics | FileCheck %s
// End to end from ONNX: test/onnx/empty-tensors.mlir.

// An empty Concat operand drops out (one left: the operand itself); a sum over
// an empty axis is 0, a max -inf (floats) or the type's minimum (integers).
// CHECK-LABEL: func.func @concat_and_reduce
// CHECK-DAG: %[[Z:.+]] = kiln.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-DAG: %[[M:.+]] = kiln.constant dense<0> : tensor<2xui8>
// CHECK-DAG: %[[C:.+]] = kiln.concat %arg0, %arg0 {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
// CHECK: return %arg0, %[[C]], %[[Z]], %[[M]]
func.func @concat_and_reduce(%x: tensor<2x3xf32>, %e: tensor<2x0xf32>, %u: tensor<2x0xui8>)
    -> (tensor<2x3xf32>, tensor<2x6xf32>, tensor<2xf32>, tensor<2xui8>) {
  %0 = kiln.concat %x, %e {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x0xf32> -> tensor<2x3xf32>
  %1 = kiln.concat %x, %e, %x {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  %2 = kiln.reduce <sum> %e {axes = array<i64: 1>, keep_dims = false} : tensor<2x0xf32> -> tensor<2xf32>
  %3 = kiln.reduce <max> %u {axes = array<i64: 1>, keep_dims = false} : tensor<2x0xui8> -> tensor<2xui8>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x6xf32>, tensor<2xf32>, tensor<2xui8>
}

// -----

// Empty results become empty constants; a GEMM with K = 0 is 0.
// CHECK-LABEL: func.func @empty_results_and_k0
// CHECK-DAG: kiln.constant dense<> : tensor<0x4xf32>
// CHECK-DAG: kiln.constant dense<0.000000e+00> : tensor<3x5xf32>
// CHECK-NOT: kiln.exp
// CHECK-NOT: kiln.matmul
func.func @empty_results_and_k0(%e: tensor<0x4xf32>, %a: tensor<3x0xf32>, %b: tensor<0x5xf32>)
    -> (tensor<0x4xf32>, tensor<3x5xf32>) {
  %0 = kiln.exp %e : tensor<0x4xf32>
  %1 = kiln.matmul %a, %b : tensor<3x0xf32>, tensor<0x5xf32> -> tensor<3x5xf32>
  return %0, %1 : tensor<0x4xf32>, tensor<3x5xf32>
}

// -----

// Reading an empty operand into a non-empty result is an error.
func.func @gather_from_empty(%t: tensor<0x8xf32>, %i: tensor<2xi64>) -> tensor<2x8xf32> {
  // expected-error @+1 {{unsupported: operand 0 of kiln.gather is empty ('tensor<0x8xf32>') but its result is not: there is nothing to read}}
  %0 = kiln.gather %t, %i {axis = 0 : i64} : tensor<0x8xf32>, tensor<2xi64> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
