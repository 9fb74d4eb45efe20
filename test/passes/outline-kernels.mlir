// RUN: kiln-opt %s --split-input-file --kiln-outline-kernels | FileCheck %s

// Each remaining compute op becomes its own kernel; names follow program order.
// CHECK-LABEL: func.func @outline
func.func @outline(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // CHECK: %[[M:.+]] = kiln.kernel @k0_matmul(%{{.*}}, %{{.*}})
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: kiln.matmul
  // CHECK: %[[L:.+]] = kiln.kernel @k1_layer_norm(%[[M]], %{{.*}})
  // CHECK: %[[S:.+]] = kiln.kernel @k2_softmax(%[[L]])
  // CHECK: %[[V:.+]] = kiln.reshape %[[S]]
  // CHECK: %[[R:.+]] = kiln.kernel @k3_reduce(%[[V]])
  %m = kiln.matmul %x, %w : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %l = kiln.layer_norm %m, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %s = kiln.softmax %l {axis = 1 : i64} : tensor<2x8xf32>
  %v = kiln.reshape %s : tensor<2x8xf32> -> tensor<2x8x1xf32>
  %r = kiln.reduce <max> %v {axes = array<i64: 2>, keep_dims = false} : tensor<2x8x1xf32> -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// Existing kernels are renamed in order, keeping their description.
// CHECK-LABEL: func.func @rename
func.func @rename(%a: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: kiln.kernel @k0_fused_tanh(
  %r = kiln.kernel @fused_tanh(%a) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    %t = kiln.tanh %x : tensor<8xf32>
    kiln.yield %t : tensor<8xf32>
  }
  // CHECK: kiln.kernel @k1_softmax(
  %s = kiln.softmax %r {axis = 0 : i64} : tensor<8xf32>
  return %s : tensor<8xf32>
}
