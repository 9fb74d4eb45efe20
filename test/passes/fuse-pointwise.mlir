// RUN: kiln-opt %s --split-input-file --kiln-fuse-pointwise | FileCheck %s

// A chain of single-use pointwise ops becomes one kernel.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>)
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[K:.+]] = kiln.kernel @fused_add_mul_tanh(%[[A]], %[[B]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: kiln.add
  // CHECK: kiln.mul
  // CHECK: kiln.tanh
  // CHECK: kiln.yield
  // CHECK: return %[[K]]
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = kiln.mul %0, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.tanh %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A value with two uses is materialized: it ends its own kernel.
// CHECK-LABEL: func.func @multi_use_splits
func.func @multi_use_splits(%a: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: %[[K0:.+]] = kiln.kernel @fused_exp(
  // CHECK: %[[K1:.+]] = kiln.kernel @fused_tanh_neg_add(%[[K0]])
  %0 = kiln.exp %a : tensor<8xf32>
  %1 = kiln.tanh %0 : tensor<8xf32>
  %2 = kiln.neg %0 : tensor<8xf32>
  %3 = kiln.add %1, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %3 : tensor<8xf32>
}

// -----

// GEMMs are not fusible; pointwise producers and consumers form kernels
// around them. A reshape between a kernel and a GEMM is absorbed by the
// kernel (it writes the reshaped layout, which is the same bytes).
// CHECK-LABEL: func.func @around_matmul
func.func @around_matmul(%x: tensor<2x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  // CHECK: kiln.kernel @fused_sigmoid(
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: kiln.sigmoid
  // CHECK-NEXT: kiln.reshape
  // CHECK-NEXT: kiln.yield
  // CHECK: kiln.matmul
  // CHECK: kiln.kernel @fused_relu(
  %s = kiln.sigmoid %x : tensor<2x4x8xf32>
  %r = kiln.reshape %s : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %m = kiln.matmul %r, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %r2 = kiln.reshape %m : tensor<8x8xf32> -> tensor<2x4x8xf32>
  %o = kiln.relu %r2 : tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Data movement fuses too: split + transpose of a QKV projection.
// CHECK-LABEL: func.func @movement
func.func @movement(%qkv: tensor<16x96xf32>) -> tensor<4x16x8xf32> {
  // CHECK: kiln.kernel @fused_slice_transpose(
  // CHECK-NOT: kiln.kernel
  %q = kiln.slice %qkv {starts = array<i64: 0, 32>, steps = array<i64: 1, 1>} : tensor<16x96xf32> -> tensor<16x32xf32>
  %r = kiln.reshape %q : tensor<16x32xf32> -> tensor<16x4x8xf32>
  %t = kiln.transpose %r {perm = array<i64: 1, 0, 2>} : tensor<16x4x8xf32> -> tensor<4x16x8xf32>
  return %t : tensor<4x16x8xf32>
}
