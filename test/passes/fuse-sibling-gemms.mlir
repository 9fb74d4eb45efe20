// RUN: kiln-opt %s --split-input-file --kiln-fuse-sibling-gemms | FileCheck %s

// BERT's Q, K and V projections: three GEMMs of one activation, each followed
// by its bias add (either operand order). One GEMM against [128, 384], one
// add of the concatenated bias, and a slice per projection on the last dim.
// CHECK-LABEL: func.func @bert_qkv_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x128xf32>)
// CHECK: %[[W:.+]] = kiln.constant dense<{{.+}}> : tensor<128x384xf32>
// CHECK-NEXT: %[[M:.+]] = kiln.matmul %[[X]], %[[W]] : tensor<1x16x128xf32>, tensor<128x384xf32> -> tensor<1x16x384xf32>
// CHECK-NEXT: %[[B:.+]] = kiln.constant dense<{{.+}}> : tensor<384xf32>
// CHECK-NEXT: %[[A:.+]] = kiln.add %[[M]], %[[B]] : tensor<1x16x384xf32>, tensor<384xf32> -> tensor<1x16x384xf32>
// CHECK-NEXT: %[[Q:.+]] = kiln.slice %[[A]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x16x384xf32> -> tensor<1x16x128xf32>
// CHECK-NEXT: %[[K:.+]] = kiln.slice %[[A]] {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<1x16x384xf32> -> tensor<1x16x128xf32>
// CHECK-NEXT: %[[V:.+]] = kiln.slice %[[A]] {starts = array<i64: 0, 0, 256>, steps = array<i64: 1, 1, 1>} : tensor<1x16x384xf32> -> tensor<1x16x128xf32>
// CHECK-NEXT: kiln.reshape %[[Q]]
// CHECK-NEXT: kiln.reshape %[[K]]
// CHECK-NEXT: kiln.reshape %[[V]]
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.add
// (The head transposes after the reshapes stand for attention, which reads them: a projection
// returned as it is, or through reshapes only, would not be merged, @returned_siblings.)
func.func @bert_qkv_bias(%x: tensor<1x16x128xf32>) -> (tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>) {
  %wq = kiln.constant dense<0.1> : tensor<128x128xf32>
  %wk = kiln.constant dense<0.2> : tensor<128x128xf32>
  %wv = kiln.constant dense<0.3> : tensor<128x128xf32>
  %bq = kiln.constant dense<1.0> : tensor<128xf32>
  %bk = kiln.constant dense<2.0> : tensor<128xf32>
  %bv = kiln.constant dense<3.0> : tensor<128xf32>
  %q = kiln.matmul %x, %wq : tensor<1x16x128xf32>, tensor<128x128xf32> -> tensor<1x16x128xf32>
  %qb = kiln.add %q, %bq : tensor<1x16x128xf32>, tensor<128xf32> -> tensor<1x16x128xf32>
  %qr = kiln.reshape %qb : tensor<1x16x128xf32> -> tensor<1x16x4x32xf32>
  %k = kiln.matmul %x, %wk : tensor<1x16x128xf32>, tensor<128x128xf32> -> tensor<1x16x128xf32>
  %kb = kiln.add %bk, %k : tensor<128xf32>, tensor<1x16x128xf32> -> tensor<1x16x128xf32>
  %kr = kiln.reshape %kb : tensor<1x16x128xf32> -> tensor<1x16x4x32xf32>
  %v = kiln.matmul %x, %wv : tensor<1x16x128xf32>, tensor<128x128xf32> -> tensor<1x16x128xf32>
  %vb = kiln.add %v, %bv : tensor<1x16x128xf32>, tensor<128xf32> -> tensor<1x16x128xf32>
  %vr = kiln.reshape %vb : tensor<1x16x128xf32> -> tensor<1x16x4x32xf32>
  %qt = kiln.transpose %qr {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x32xf32> -> tensor<1x4x16x32xf32>
  %kt = kiln.transpose %kr {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x32xf32> -> tensor<1x4x16x32xf32>
  %vt = kiln.transpose %vr {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x32xf32> -> tensor<1x4x16x32xf32>
  return %qt, %kt, %vt : tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>
}

// -----

// Llama's projections with grouped-query attention: q [128, 128], k and v
// [128, 64], no bias. The fused GEMM is created where the first projection
// was, so it dominates the users of all three (the first one's user comes
// before the second projection).
// CHECK-LABEL: func.func @llama_gqa_qkv
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x128xf32>)
// CHECK: %[[W:.+]] = kiln.constant dense<{{.+}}> : tensor<128x256xf32>
// CHECK-NEXT: %[[M:.+]] = kiln.matmul %[[X]], %[[W]] : tensor<1x16x128xf32>, tensor<128x256xf32> -> tensor<1x16x256xf32>
// CHECK-NEXT: %[[Q:.+]] = kiln.slice %[[M]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x16x256xf32> -> tensor<1x16x128xf32>
// CHECK-NEXT: %[[K:.+]] = kiln.slice %[[M]] {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<1x16x256xf32> -> tensor<1x16x64xf32>
// CHECK-NEXT: %[[V:.+]] = kiln.slice %[[M]] {starts = array<i64: 0, 0, 192>, steps = array<i64: 1, 1, 1>} : tensor<1x16x256xf32> -> tensor<1x16x64xf32>
// CHECK-NEXT: %[[QN:.+]] = kiln.neg %[[Q]]
// CHECK-NEXT: %[[KN:.+]] = kiln.neg %[[K]]
// CHECK-NEXT: %[[VN:.+]] = kiln.neg %[[V]]
// CHECK-NEXT: return %[[QN]], %[[KN]], %[[VN]]
func.func @llama_gqa_qkv(%x: tensor<1x16x128xf32>) -> (tensor<1x16x128xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>) {
  %wq = kiln.constant dense<0.1> : tensor<128x128xf32>
  %wk = kiln.constant dense<0.2> : tensor<128x64xf32>
  %wv = kiln.constant dense<0.3> : tensor<128x64xf32>
  %q = kiln.matmul %x, %wq : tensor<1x16x128xf32>, tensor<128x128xf32> -> tensor<1x16x128xf32>
  %qn = kiln.neg %q : tensor<1x16x128xf32>
  %k = kiln.matmul %x, %wk : tensor<1x16x128xf32>, tensor<128x64xf32> -> tensor<1x16x64xf32>
  %kn = kiln.neg %k : tensor<1x16x64xf32>
  %v = kiln.matmul %x, %wv : tensor<1x16x128xf32>, tensor<128x64xf32> -> tensor<1x16x64xf32>
  %vn = kiln.neg %v : tensor<1x16x64xf32>
  return %qn, %kn, %vn : tensor<1x16x128xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>
}

// -----

// The concatenated weight holds each sibling's columns side by side, row by
// row.
// CHECK-LABEL: func.func @weight_values
// CHECK: %[[W:.+]] = kiln.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 1.000000e+02, 1.010000e+02, 1.020000e+02, 1.030000e+02, 1.040000e+02, 1.050000e+02, 1.060000e+02, 1.070000e+02, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01], [8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01, 1.080000e+02, 1.090000e+02, 1.100000e+02, 1.110000e+02, 1.120000e+02, 1.130000e+02, 1.140000e+02, 1.150000e+02, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01]]> : tensor<2x24xf16>
// CHECK-NEXT: kiln.matmul %arg0, %[[W]] : tensor<4x2xf16>, tensor<2x24xf16> -> tensor<4x24xf16>
func.func @weight_values(%x: tensor<4x2xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) {
  %w1 = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]]> : tensor<2x8xf16>
  %w2 = kiln.constant dense<[[100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0], [108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]]> : tensor<2x8xf16>
  %w3 = kiln.constant dense<0.5> : tensor<2x8xf16>
  %a = kiln.matmul %x, %w1 : tensor<4x2xf16>, tensor<2x8xf16> -> tensor<4x8xf16>
  %b = kiln.matmul %x, %w2 : tensor<4x2xf16>, tensor<2x8xf16> -> tensor<4x8xf16>
  %c = kiln.matmul %x, %w3 : tensor<4x2xf16>, tensor<2x8xf16> -> tensor<4x8xf16>
  %an = kiln.neg %a : tensor<4x8xf16>
  %bn = kiln.neg %b : tensor<4x8xf16>
  %cn = kiln.neg %c : tensor<4x8xf16>
  return %an, %bn, %cn : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}

// -----

// Llama's gate and up projections (N = 344 = 8 * 43) are siblings too; only
// some siblings have a bias add, so the adds stay, each on its slice.
// CHECK-LABEL: func.func @gate_up_partial_bias
// CHECK: %[[M:.+]] = kiln.matmul %arg0, %{{.+}} : tensor<16x128xf32>, tensor<128x688xf32> -> tensor<16x688xf32>
// CHECK-NEXT: %[[G:.+]] = kiln.slice %[[M]] {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<16x688xf32> -> tensor<16x344xf32>
// CHECK-NEXT: %[[U:.+]] = kiln.slice %[[M]] {starts = array<i64: 0, 344>, steps = array<i64: 1, 1>} : tensor<16x688xf32> -> tensor<16x344xf32>
// CHECK-NEXT: %[[S:.+]] = kiln.sigmoid %[[G]]
// CHECK-NEXT: %[[GA:.+]] = kiln.add %[[G]], %{{.+}} : tensor<16x344xf32>, tensor<344xf32>
// CHECK: kiln.mul %{{.+}}, %[[U]]
func.func @gate_up_partial_bias(%x: tensor<16x128xf32>) -> tensor<16x344xf32> {
  %b = kiln.constant dense<0.5> : tensor<344xf32>
  %wg = kiln.constant dense<0.1> : tensor<128x344xf32>
  %wu = kiln.constant dense<0.2> : tensor<128x344xf32>
  %g = kiln.matmul %x, %wg : tensor<16x128xf32>, tensor<128x344xf32> -> tensor<16x344xf32>
  %s = kiln.sigmoid %g : tensor<16x344xf32>
  %ga = kiln.add %g, %b : tensor<16x344xf32>, tensor<344xf32> -> tensor<16x344xf32>
  %gs = kiln.mul %ga, %s : tensor<16x344xf32>, tensor<16x344xf32> -> tensor<16x344xf32>
  %u = kiln.matmul %x, %wu : tensor<16x128xf32>, tensor<128x344xf32> -> tensor<16x344xf32>
  %y = kiln.mul %gs, %u : tensor<16x344xf32>, tensor<16x344xf32> -> tensor<16x344xf32>
  return %y : tensor<16x344xf32>
}

// -----

// Different activations: not siblings.
// CHECK-LABEL: func.func @different_lhs
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
// CHECK: kiln.matmul %arg1, %{{.+}} : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
// CHECK-NOT: kiln.slice
func.func @different_lhs(%x: tensor<16x128xf32>, %y: tensor<16x128xf32>) -> (tensor<16x128xf32>, tensor<16x128xf32>) {
  %w1 = kiln.constant dense<0.1> : tensor<128x128xf32>
  %w2 = kiln.constant dense<0.2> : tensor<128x128xf32>
  %a = kiln.matmul %x, %w1 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %b = kiln.matmul %y, %w2 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %an = kiln.neg %a : tensor<16x128xf32>
  %bn = kiln.neg %b : tensor<16x128xf32>
  return %an, %bn : tensor<16x128xf32>, tensor<16x128xf32>
}

// -----

// One weight is not a constant (a function argument): only one candidate
// remains, nothing is fused.
// CHECK-LABEL: func.func @non_constant_rhs
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
// CHECK: kiln.matmul %arg0, %arg1 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
// CHECK-NOT: kiln.slice
func.func @non_constant_rhs(%x: tensor<16x128xf32>, %w2: tensor<128x128xf32>) -> (tensor<16x128xf32>, tensor<16x128xf32>) {
  %w1 = kiln.constant dense<0.1> : tensor<128x128xf32>
  %a = kiln.matmul %x, %w1 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %b = kiln.matmul %x, %w2 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %an = kiln.neg %a : tensor<16x128xf32>
  %bn = kiln.neg %b : tensor<16x128xf32>
  return %an, %bn : tensor<16x128xf32>, tensor<16x128xf32>
}

// -----

// N = 12 is not a multiple of 8 (a slice would start off a 16-byte boundary
// for 16-bit types): not fused.
// CHECK-LABEL: func.func @n_not_multiple_of_8
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<16x128xf32>, tensor<128x12xf32> -> tensor<16x12xf32>
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<16x128xf32>, tensor<128x12xf32> -> tensor<16x12xf32>
// CHECK-NOT: kiln.slice
func.func @n_not_multiple_of_8(%x: tensor<16x128xf32>) -> (tensor<16x12xf32>, tensor<16x12xf32>) {
  %w1 = kiln.constant dense<0.1> : tensor<128x12xf32>
  %w2 = kiln.constant dense<0.2> : tensor<128x12xf32>
  %a = kiln.matmul %x, %w1 : tensor<16x128xf32>, tensor<128x12xf32> -> tensor<16x12xf32>
  %b = kiln.matmul %x, %w2 : tensor<16x128xf32>, tensor<128x12xf32> -> tensor<16x12xf32>
  %an = kiln.neg %a : tensor<16x12xf32>
  %bn = kiln.neg %b : tensor<16x12xf32>
  return %an, %bn : tensor<16x12xf32>, tensor<16x12xf32>
}

// -----

// Two [8192, 8192] f32 weights (splats, 256 MiB each) would make a 512 MiB
// weight, over the 2^28-byte limit: not fused.
// CHECK-LABEL: func.func @weight_over_limit
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<1x8192xf32>, tensor<8192x8192xf32> -> tensor<1x8192xf32>
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<1x8192xf32>, tensor<8192x8192xf32> -> tensor<1x8192xf32>
// CHECK-NOT: kiln.slice
func.func @weight_over_limit(%x: tensor<1x8192xf32>) -> (tensor<1x8192xf32>, tensor<1x8192xf32>) {
  %w1 = kiln.constant dense<0.1> : tensor<8192x8192xf32>
  %w2 = kiln.constant dense<0.2> : tensor<8192x8192xf32>
  %a = kiln.matmul %x, %w1 : tensor<1x8192xf32>, tensor<8192x8192xf32> -> tensor<1x8192xf32>
  %b = kiln.matmul %x, %w2 : tensor<1x8192xf32>, tensor<8192x8192xf32> -> tensor<1x8192xf32>
  %an = kiln.neg %a : tensor<1x8192xf32>
  %bn = kiln.neg %b : tensor<1x8192xf32>
  return %an, %bn : tensor<1x8192xf32>, tensor<1x8192xf32>
}

// -----

// Siblings returned by the function (directly, or through the bias add the fused GEMM would
// absorb) are not fused: their slices of a fused result would each be a copy kernel. The two
// that feed other ops are.
// CHECK-LABEL: func.func @returned_siblings
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<16x128xf32>, tensor<128x64xf32> -> tensor<16x64xf32>
// CHECK: kiln.matmul %arg0, %{{.+}} : tensor<16x128xf32>, tensor<128x256xf32> -> tensor<16x256xf32>
// CHECK-NOT: kiln.matmul
func.func @returned_siblings(%x: tensor<16x128xf32>) -> (tensor<16x128xf32>, tensor<16x64xf32>, tensor<16x128xf32>, tensor<16x128xf32>) {
  %w1 = kiln.constant dense<0.1> : tensor<128x128xf32>
  %w2 = kiln.constant dense<0.2> : tensor<128x64xf32>
  %w3 = kiln.constant dense<0.3> : tensor<128x128xf32>
  %w4 = kiln.constant dense<0.4> : tensor<128x128xf32>
  %b2 = kiln.constant dense<0.5> : tensor<64xf32>
  %a = kiln.matmul %x, %w1 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %b = kiln.matmul %x, %w2 : tensor<16x128xf32>, tensor<128x64xf32> -> tensor<16x64xf32>
  %bb = kiln.add %b, %b2 : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %c = kiln.matmul %x, %w3 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %d = kiln.matmul %x, %w4 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %cn = kiln.neg %c : tensor<16x128xf32>
  %dn = kiln.neg %d : tensor<16x128xf32>
  return %a, %bb, %cn, %dn : tensor<16x128xf32>, tensor<16x64xf32>, tensor<16x128xf32>, tensor<16x128xf32>
}

// -----

// A sibling returned through a reshape (a view) stays apart as well.
// CHECK-LABEL: func.func @returned_through_reshape
// CHECK-NOT: kiln.slice
// CHECK: return
func.func @returned_through_reshape(%x: tensor<16x128xf32>) -> (tensor<4x4x128xf32>, tensor<16x128xf32>) {
  %w1 = kiln.constant dense<0.1> : tensor<128x128xf32>
  %w2 = kiln.constant dense<0.2> : tensor<128x128xf32>
  %a = kiln.matmul %x, %w1 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %ar = kiln.reshape %a : tensor<16x128xf32> -> tensor<4x4x128xf32>
  %b = kiln.matmul %x, %w2 : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
  %bn = kiln.neg %b : tensor<16x128xf32>
  return %ar, %bn : tensor<4x4x128xf32>, tensor<16x128xf32>
}

// -----

// A sibling returned through a cast stays apart too: kiln-assign-precision, which runs before
// this pass, casts a narrowed result back to the function's f32 result type, and the slice
// would be that cast's copy kernel.
// CHECK-LABEL: func.func @returned_through_cast
// CHECK-NOT: kiln.slice
// CHECK: return
func.func @returned_through_cast(%x: tensor<16x128xf16>) -> (tensor<16x128xf32>, tensor<16x128xf16>) {
  %w1 = kiln.constant dense<0.1> : tensor<128x128xf16>
  %w2 = kiln.constant dense<0.2> : tensor<128x128xf16>
  %a = kiln.matmul %x, %w1 : tensor<16x128xf16>, tensor<128x128xf16> -> tensor<16x128xf16>
  %ac = kiln.cast %a : tensor<16x128xf16> -> tensor<16x128xf32>
  %b = kiln.matmul %x, %w2 : tensor<16x128xf16>, tensor<128x128xf16> -> tensor<16x128xf16>
  %bn = kiln.neg %b : tensor<16x128xf16>
  return %ac, %bn : tensor<16x128xf32>, tensor<16x128xf16>
}
