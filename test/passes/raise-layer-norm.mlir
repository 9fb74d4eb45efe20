// RUN: kiln-opt %s --split-input-file --kiln-raise-layer-norm | FileCheck %s

// torch.nn.LayerNorm as exported at opset < 17: the whole chain, with gamma
// and beta, becomes one kiln.layer_norm.
// CHECK-LABEL: func.func @affine
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x128xf32>, %[[G:.+]]: tensor<128xf32>, %[[B:.+]]: tensor<128xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @affine(%x: tensor<2x16x128xf32>, %g: tensor<128xf32>, %b: tensor<128xf32>) -> tensor<2x16x128xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %m = kiln.reduce <mean> %x {axes = array<i64: 2>, keep_dims = true} : tensor<2x16x128xf32> -> tensor<2x16x1xf32>
  %d = kiln.sub %x, %m : tensor<2x16x128xf32>, tensor<2x16x1xf32> -> tensor<2x16x128xf32>
  %p = kiln.pow %d, %two : tensor<2x16x128xf32>, tensor<f32> -> tensor<2x16x128xf32>
  %v = kiln.reduce <mean> %p {axes = array<i64: 2>, keep_dims = true} : tensor<2x16x128xf32> -> tensor<2x16x1xf32>
  %ve = kiln.add %v, %eps : tensor<2x16x1xf32>, tensor<f32> -> tensor<2x16x1xf32>
  %s = kiln.sqrt %ve : tensor<2x16x1xf32>
  %n = kiln.div %d, %s : tensor<2x16x128xf32>, tensor<2x16x1xf32> -> tensor<2x16x128xf32>
  %y = kiln.mul %n, %g : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
  %z = kiln.add %y, %b : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
  return %z : tensor<2x16x128xf32>
}

// -----

// Without gamma/beta the scale is a ones constant; d*d for the square, eps
// on the left of the add, normalization over the last two dims.
// CHECK-LABEL: func.func @plain_two_axes
// CHECK: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.layer_norm %arg0, %[[ONES]] {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : tensor<3x4x8xf32>, tensor<4x8xf32> -> tensor<3x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @plain_two_axes(%x: tensor<3x4x8xf32>) -> tensor<3x4x8xf32> {
  %eps = kiln.constant dense<1.0e-03> : tensor<1xf32>
  %m = kiln.reduce <mean> %x {axes = array<i64: 1, 2>, keep_dims = true} : tensor<3x4x8xf32> -> tensor<3x1x1xf32>
  %d = kiln.sub %x, %m : tensor<3x4x8xf32>, tensor<3x1x1xf32> -> tensor<3x4x8xf32>
  %p = kiln.mul %d, %d : tensor<3x4x8xf32>, tensor<3x4x8xf32> -> tensor<3x4x8xf32>
  %v = kiln.reduce <mean> %p {axes = array<i64: 1, 2>, keep_dims = true} : tensor<3x4x8xf32> -> tensor<3x1x1xf32>
  %ve = kiln.add %eps, %v : tensor<1xf32>, tensor<3x1x1xf32> -> tensor<3x1x1xf32>
  %s = kiln.sqrt %ve : tensor<3x1x1xf32>
  %n = kiln.div %d, %s : tensor<3x4x8xf32>, tensor<3x1x1xf32> -> tensor<3x4x8xf32>
  return %n : tensor<3x4x8xf32>
}

// -----

// A gamma that is not of the normalized shape stays a separate mul.
// CHECK-LABEL: func.func @gamma_not_normalized_shape
// CHECK: %[[Y:.+]] = kiln.layer_norm %arg0, %{{.+}} {axis = 1 : i64
// CHECK-NEXT: kiln.mul %[[Y]], %arg1
func.func @gamma_not_normalized_shape(%x: tensor<4x8xf32>, %g: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %m = kiln.reduce <mean> %x {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = kiln.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p = kiln.pow %d, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %v = kiln.reduce <mean> %p {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %ve = kiln.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s = kiln.sqrt %ve : tensor<4x1xf32>
  %n = kiln.div %d, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = kiln.mul %n, %g : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not layer norm: each of these differs from the pattern in one place and
// is left alone.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: kiln.layer_norm
// CHECK: return
func.func @near_misses(%x: tensor<4x8xf32>, %e: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %three = kiln.constant dense<3.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  // Exponent 3.
  %m0 = kiln.reduce <mean> %x {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d0 = kiln.sub %x, %m0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p0 = kiln.pow %d0, %three : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %v0 = kiln.reduce <mean> %p0 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a0 = kiln.add %v0, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s0 = kiln.sqrt %a0 : tensor<4x1xf32>
  %n0 = kiln.div %d0, %s0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  // Epsilon not a constant.
  %m1 = kiln.reduce <mean> %x {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d1 = kiln.sub %x, %m1 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p1 = kiln.pow %d1, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %v1 = kiln.reduce <mean> %p1 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a1 = kiln.add %v1, %e : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s1 = kiln.sqrt %a1 : tensor<4x1xf32>
  %n1 = kiln.div %d1, %s1 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  // Statistics over a leading axis.
  %m2 = kiln.reduce <mean> %x {axes = array<i64: 0>, keep_dims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %d2 = kiln.sub %x, %m2 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %p2 = kiln.pow %d2, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %v2 = kiln.reduce <mean> %p2 {axes = array<i64: 0>, keep_dims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %a2 = kiln.add %v2, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %s2 = kiln.sqrt %a2 : tensor<1x8xf32>
  %n2 = kiln.div %d2, %s2 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  // The variance is also a function result (used outside the chain).
  %m3 = kiln.reduce <mean> %x {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d3 = kiln.sub %x, %m3 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p3 = kiln.pow %d3, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %v3 = kiln.reduce <mean> %p3 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a3 = kiln.add %v3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s3 = kiln.sqrt %a3 : tensor<4x1xf32>
  %n3 = kiln.div %d3, %s3 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %n0, %n1, %n2, %n3, %v3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>
}
