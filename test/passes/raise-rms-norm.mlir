// RUN: kiln-opt %s --split-input-file --kiln-raise-rms-norm | FileCheck %s

// LlamaRMSNorm as torch's dynamo exporter spells it: Pow(x, 2), ReduceMean,
// Add(eps), Sqrt, Reciprocal, Mul(x, r), then Mul(weight, .) with the weight
// on the left. The whole chain becomes one kiln.rms_norm.
// CHECK-LABEL: func.func @pow_sqrt_reciprocal
// CHECK-SAME: (%[[X:.+]]: tensor<2x16x128xf32>, %[[W:.+]]: tensor<128xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @pow_sqrt_reciprocal(%x: tensor<2x16x128xf32>, %w: tensor<128xf32>) -> tensor<2x16x128xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %p = kiln.pow %x, %two : tensor<2x16x128xf32>, tensor<f32> -> tensor<2x16x128xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 2>, keep_dims = true} : tensor<2x16x128xf32> -> tensor<2x16x1xf32>
  %a = kiln.add %m, %eps : tensor<2x16x1xf32>, tensor<f32> -> tensor<2x16x1xf32>
  %s = kiln.sqrt %a : tensor<2x16x1xf32>
  %r = kiln.reciprocal %s : tensor<2x16x1xf32>
  %n = kiln.mul %x, %r : tensor<2x16x128xf32>, tensor<2x16x1xf32> -> tensor<2x16x128xf32>
  %y = kiln.mul %w, %n : tensor<128xf32>, tensor<2x16x128xf32> -> tensor<2x16x128xf32>
  return %y : tensor<2x16x128xf32>
}

// -----

// Mul(x, x) for the square, eps on the left of the add, Div(1, sqrt), the
// inverse on the left of the mul and a constant weight on the right.
// CHECK-LABEL: func.func @mul_square_div_one
// CHECK: %[[W:.+]] = kiln.constant dense<5.000000e-01> : tensor<64xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.rms_norm %arg0, %[[W]] {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @mul_square_div_one(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-05> : tensor<1xf32>
  %w = kiln.constant dense<0.5> : tensor<64xf32>
  %p = kiln.mul %x, %x : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 1>, keep_dims = true} : tensor<8x64xf32> -> tensor<8x1xf32>
  %a = kiln.add %eps, %m : tensor<1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
  %s = kiln.sqrt %a : tensor<8x1xf32>
  %r = kiln.div %one, %s : tensor<f32>, tensor<8x1xf32> -> tensor<8x1xf32>
  %n = kiln.mul %r, %x : tensor<8x1xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %y = kiln.mul %n, %w : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Div(x, sqrt) without a weight, normalizing the last two dims: the scale is
// a ones constant of the normalized shape.
// CHECK-LABEL: func.func @div_sqrt_no_weight
// CHECK: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.rms_norm %arg0, %[[ONES]] {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : tensor<3x4x8xf32>, tensor<4x8xf32> -> tensor<3x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @div_sqrt_no_weight(%x: tensor<3x4x8xf32>) -> tensor<3x4x8xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-03> : tensor<f32>
  %p = kiln.pow %x, %two : tensor<3x4x8xf32>, tensor<f32> -> tensor<3x4x8xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 1, 2>, keep_dims = true} : tensor<3x4x8xf32> -> tensor<3x1x1xf32>
  %a = kiln.add %m, %eps : tensor<3x1x1xf32>, tensor<f32> -> tensor<3x1x1xf32>
  %s = kiln.sqrt %a : tensor<3x1x1xf32>
  %n = kiln.div %x, %s : tensor<3x4x8xf32>, tensor<3x1x1xf32> -> tensor<3x4x8xf32>
  return %n : tensor<3x4x8xf32>
}

// -----

// A weight that is not of the normalized shape stays a separate mul after an
// rms_norm with a ones scale.
// CHECK-LABEL: func.func @weight_not_normalized_shape
// CHECK: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.rms_norm %arg0, %[[ONES]] {axis = 1 : i64
// CHECK-NEXT: %[[Z:.+]] = kiln.mul %[[Y]], %arg1 : tensor<4x8xf32>, tensor<4x1xf32>
// CHECK-NEXT: return %[[Z]]
func.func @weight_not_normalized_shape(%x: tensor<4x8xf32>, %w: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %p = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a = kiln.add %m, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s = kiln.sqrt %a : tensor<4x1xf32>
  %r = kiln.reciprocal %s : tensor<4x1xf32>
  %n = kiln.mul %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = kiln.mul %n, %w : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// An fp16 export: x is cast to f32 for the statistics and the normalized
// value cast back to f16 before the f16 weight. The casts undo each other,
// and kiln.rms_norm computes in fp32 anyway: both go, the op reads f16.
// CHECK-LABEL: func.func @cast_sandwich
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x64xf16>, %[[W:.+]]: tensor<64xf16>)
// CHECK-NEXT: %[[Y:.+]] = kiln.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x8x64xf16>, tensor<64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT: return %[[Y]]
func.func @cast_sandwich(%x: tensor<2x8x64xf16>, %w: tensor<64xf16>) -> tensor<2x8x64xf16> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %xf = kiln.cast %x : tensor<2x8x64xf16> -> tensor<2x8x64xf32>
  %p = kiln.pow %xf, %two : tensor<2x8x64xf32>, tensor<f32> -> tensor<2x8x64xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 2>, keep_dims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  %a = kiln.add %m, %eps : tensor<2x8x1xf32>, tensor<f32> -> tensor<2x8x1xf32>
  %s = kiln.sqrt %a : tensor<2x8x1xf32>
  %r = kiln.reciprocal %s : tensor<2x8x1xf32>
  %n = kiln.mul %xf, %r : tensor<2x8x64xf32>, tensor<2x8x1xf32> -> tensor<2x8x64xf32>
  %h = kiln.cast %n : tensor<2x8x64xf32> -> tensor<2x8x64xf16>
  %y = kiln.mul %w, %h : tensor<64xf16>, tensor<2x8x64xf16> -> tensor<2x8x64xf16>
  return %y : tensor<2x8x64xf16>
}

// -----

// Cast in without a cast back (the f32 result is used as f32): the cast
// stays, and the rms_norm reads its f32 result.
// CHECK-LABEL: func.func @cast_in_only
// CHECK-SAME: (%[[X:.+]]: tensor<8x64xf16>, %[[W:.+]]: tensor<64xf32>)
// CHECK-NEXT: %[[XF:.+]] = kiln.cast %[[X]] : tensor<8x64xf16> -> tensor<8x64xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.rms_norm %[[XF]], %[[W]] {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @cast_in_only(%x: tensor<8x64xf16>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %xf = kiln.cast %x : tensor<8x64xf16> -> tensor<8x64xf32>
  %p = kiln.pow %xf, %two : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 1>, keep_dims = true} : tensor<8x64xf32> -> tensor<8x1xf32>
  %a = kiln.add %m, %eps : tensor<8x1xf32>, tensor<f32> -> tensor<8x1xf32>
  %s = kiln.sqrt %a : tensor<8x1xf32>
  %r = kiln.reciprocal %s : tensor<8x1xf32>
  %n = kiln.mul %xf, %r : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
  %y = kiln.mul %n, %w : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// bf16 in, f16 out: the casts do not undo each other, so both stay. The
// rms_norm works on the f32 value with a ones scale; the cast to f16 and the
// f16 weight follow it unchanged.
// CHECK-LABEL: func.func @cast_to_other_type
// CHECK: %[[XF:.+]] = kiln.cast %arg0 : tensor<8x64xbf16> -> tensor<8x64xf32>
// CHECK: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<64xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.rms_norm %[[XF]], %[[ONES]] {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: %[[H:.+]] = kiln.cast %[[Y]] : tensor<8x64xf32> -> tensor<8x64xf16>
// CHECK-NEXT: %[[Z:.+]] = kiln.mul %arg1, %[[H]]
// CHECK-NEXT: return %[[Z]]
func.func @cast_to_other_type(%x: tensor<8x64xbf16>, %w: tensor<64xf16>) -> tensor<8x64xf16> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %xf = kiln.cast %x : tensor<8x64xbf16> -> tensor<8x64xf32>
  %p = kiln.pow %xf, %two : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 1>, keep_dims = true} : tensor<8x64xf32> -> tensor<8x1xf32>
  %a = kiln.add %m, %eps : tensor<8x1xf32>, tensor<f32> -> tensor<8x1xf32>
  %s = kiln.sqrt %a : tensor<8x1xf32>
  %r = kiln.reciprocal %s : tensor<8x1xf32>
  %n = kiln.mul %xf, %r : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
  %h = kiln.cast %n : tensor<8x64xf32> -> tensor<8x64xf16>
  %y = kiln.mul %w, %h : tensor<64xf16>, tensor<8x64xf16> -> tensor<8x64xf16>
  return %y : tensor<8x64xf16>
}

// -----

// The f32 copy of x is also read outside the chain: the cast in stays (the
// other reader needs it), so the cast back stays too.
// CHECK-LABEL: func.func @cast_in_shared
// CHECK: %[[XF:.+]] = kiln.cast %arg0 : tensor<8x64xf16> -> tensor<8x64xf32>
// CHECK: %[[Y:.+]] = kiln.rms_norm %[[XF]], %{{.+}} {axis = 1 : i64
// CHECK-NEXT: %[[H:.+]] = kiln.cast %[[Y]] : tensor<8x64xf32> -> tensor<8x64xf16>
// CHECK-NEXT: return %[[H]], %[[XF]]
func.func @cast_in_shared(%x: tensor<8x64xf16>) -> (tensor<8x64xf16>, tensor<8x64xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %xf = kiln.cast %x : tensor<8x64xf16> -> tensor<8x64xf32>
  %p = kiln.pow %xf, %two : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 1>, keep_dims = true} : tensor<8x64xf32> -> tensor<8x1xf32>
  %a = kiln.add %m, %eps : tensor<8x1xf32>, tensor<f32> -> tensor<8x1xf32>
  %s = kiln.sqrt %a : tensor<8x1xf32>
  %r = kiln.reciprocal %s : tensor<8x1xf32>
  %n = kiln.mul %xf, %r : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
  %h = kiln.cast %n : tensor<8x64xf32> -> tensor<8x64xf16>
  return %h, %xf : tensor<8x64xf16>, tensor<8x64xf32>
}

// -----

// Not RMS norm: each chain differs from the pattern in one place and is left
// alone.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: kiln.rms_norm
// CHECK: return
func.func @near_misses(%x: tensor<4x8xf32>, %e: tensor<f32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %three = kiln.constant dense<3.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %epsrow = kiln.constant dense<1.0e-06> : tensor<4x1xf32>
  // Epsilon is a constant with one value per row, not a scalar.
  %p0 = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m0 = kiln.reduce <mean> %p0 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a0 = kiln.add %m0, %epsrow : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %s0 = kiln.sqrt %a0 : tensor<4x1xf32>
  %r0 = kiln.reciprocal %s0 : tensor<4x1xf32>
  %n0 = kiln.mul %x, %r0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  // Epsilon not a constant.
  %p1 = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m1 = kiln.reduce <mean> %p1 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a1 = kiln.add %m1, %e : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s1 = kiln.sqrt %a1 : tensor<4x1xf32>
  %r1 = kiln.reciprocal %s1 : tensor<4x1xf32>
  %n1 = kiln.mul %x, %r1 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  // Statistics over a leading axis.
  %p2 = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m2 = kiln.reduce <mean> %p2 {axes = array<i64: 0>, keep_dims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %a2 = kiln.add %m2, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %s2 = kiln.sqrt %a2 : tensor<1x8xf32>
  %r2 = kiln.reciprocal %s2 : tensor<1x8xf32>
  %n2 = kiln.mul %x, %r2 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  // The mean square is also a function result (used outside the chain).
  %p3 = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m3 = kiln.reduce <mean> %p3 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a3 = kiln.add %m3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s3 = kiln.sqrt %a3 : tensor<4x1xf32>
  %r3 = kiln.reciprocal %s3 : tensor<4x1xf32>
  %n3 = kiln.mul %x, %r3 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  // Exponent 3.
  %p4 = kiln.pow %x, %three : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m4 = kiln.reduce <mean> %p4 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a4 = kiln.add %m4, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s4 = kiln.sqrt %a4 : tensor<4x1xf32>
  %r4 = kiln.reciprocal %s4 : tensor<4x1xf32>
  %n4 = kiln.mul %x, %r4 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  // The square is of x, the scaled value is y.
  %p5 = kiln.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %m5 = kiln.reduce <mean> %p5 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a5 = kiln.add %m5, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s5 = kiln.sqrt %a5 : tensor<4x1xf32>
  %r5 = kiln.reciprocal %s5 : tensor<4x1xf32>
  %n5 = kiln.mul %y, %r5 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  // A sum instead of a mean.
  %p6 = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m6 = kiln.reduce <sum> %p6 {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a6 = kiln.add %m6, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s6 = kiln.sqrt %a6 : tensor<4x1xf32>
  %r6 = kiln.reciprocal %s6 : tensor<4x1xf32>
  %n6 = kiln.mul %x, %r6 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %n0, %n1, %n2, %n3, %m3, %n4, %n5, %n6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The square is also read outside the chain.
// CHECK-LABEL: func.func @square_used_twice
// CHECK-NOT: kiln.rms_norm
// CHECK: return
func.func @square_used_twice(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-06> : tensor<f32>
  %p = kiln.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m = kiln.reduce <mean> %p {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %a = kiln.add %m, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s = kiln.sqrt %a : tensor<4x1xf32>
  %r = kiln.reciprocal %s : tensor<4x1xf32>
  %n = kiln.mul %x, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %n, %p : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A narrowing sandwich (f32 -> f16 for the statistics -> f32): the cast in
// rounds x, which the op would not do, so both casts stay and the op works
// on the f16 value.
// CHECK-LABEL: func.func @narrowing_sandwich
// CHECK: %[[XH:.+]] = kiln.cast %arg0 : tensor<8x64xf32> -> tensor<8x64xf16>
// CHECK: %[[Y:.+]] = kiln.rms_norm %[[XH]], %{{.+}} {axis = 1 : i64
// CHECK-SAME: tensor<8x64xf16>, tensor<64xf16> -> tensor<8x64xf16>
// CHECK-NEXT: %[[F:.+]] = kiln.cast %[[Y]] : tensor<8x64xf16> -> tensor<8x64xf32>
// CHECK-NEXT: return %[[F]]
func.func @narrowing_sandwich(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %two = kiln.constant dense<2.0> : tensor<f16>
  %eps = kiln.constant dense<1.0e-03> : tensor<f16>
  %xh = kiln.cast %x : tensor<8x64xf32> -> tensor<8x64xf16>
  %p = kiln.pow %xh, %two : tensor<8x64xf16>, tensor<f16> -> tensor<8x64xf16>
  %m = kiln.reduce <mean> %p {axes = array<i64: 1>, keep_dims = true} : tensor<8x64xf16> -> tensor<8x1xf16>
  %a = kiln.add %m, %eps : tensor<8x1xf16>, tensor<f16> -> tensor<8x1xf16>
  %s = kiln.sqrt %a : tensor<8x1xf16>
  %r = kiln.reciprocal %s : tensor<8x1xf16>
  %n = kiln.mul %xh, %r : tensor<8x64xf16>, tensor<8x1xf16> -> tensor<8x64xf16>
  %f = kiln.cast %n : tensor<8x64xf16> -> tensor<8x64xf32>
  return %f : tensor<8x64xf32>
}
