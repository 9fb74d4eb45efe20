// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s
// Folders of the shape-subgraph ops.

// CHECK-LABEL: func.func @shape_gather_concat
func.func @shape_gather_concat(%x: tensor<2x16x128xf32>) -> tensor<3xi64> {
  // CHECK: %[[C:.+]] = kiln.constant dense<[2, 16, -1]> : tensor<3xi64>
  // CHECK-NEXT: return %[[C]]
  %s = kiln.shape %x {start = 0 : i64, end = 3 : i64} : tensor<2x16x128xf32> -> tensor<3xi64>
  %i = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %g = kiln.gather %s, %i {axis = 0 : i64} : tensor<3xi64>, tensor<2xi64> -> tensor<2xi64>
  %m = kiln.constant dense<-1> : tensor<1xi64>
  %c = kiln.concat %g, %m {axis = 0 : i64} : tensor<2xi64>, tensor<1xi64> -> tensor<3xi64>
  return %c : tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @causal_mask
func.func @causal_mask() -> tensor<4x4xi1> {
  // CHECK: kiln.constant dense<{{\[}}[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %z = kiln.constant dense<0> : tensor<i64>
  %n = kiln.constant dense<4> : tensor<i64>
  %o = kiln.constant dense<1> : tensor<i64>
  %r = kiln.range %z, %n, %o : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<4xi64>
  %row = kiln.reshape %r : tensor<4xi64> -> tensor<4x1xi64>
  %le = kiln.less_equal %r, %row : tensor<4xi64>, tensor<4x1xi64> -> tensor<4x4xi1>
  return %le : tensor<4x4xi1>
}

// -----

// CHECK-LABEL: func.func @cumsum_where_isnan
func.func @cumsum_where_isnan() -> (tensor<4xi64>, tensor<3xf32>) {
  // CHECK-DAG: kiln.constant dense<[0, 1, 3, 6]> : tensor<4xi64>
  // CHECK-DAG: kiln.constant dense<[0.000000e+00, 2.000000e+00, 0.000000e+00]> : tensor<3xf32>
  %a = kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %c = kiln.cumsum %a {axis = 0 : i64, exclusive = true, reverse = false} : tensor<4xi64>
  %f = kiln.constant dense<[0x7FC00000, 2.0, 0x7FC00000]> : tensor<3xf32>
  %n = kiln.is_nan %f : tensor<3xf32> -> tensor<3xi1>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %w = kiln.where %n, %zero, %f : tensor<3xi1>, tensor<f32>, tensor<3xf32> -> tensor<3xf32>
  return %c, %w : tensor<4xi64>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @gather_nd_expand_transpose
func.func @gather_nd_expand_transpose() -> (tensor<2x3xi64>, tensor<2x2xi64>) {
  // CHECK-DAG: kiln.constant dense<{{\[}}[7, 8, 9], [7, 8, 9]]> : tensor<2x3xi64>
  // CHECK-DAG: kiln.constant dense<{{\[}}[1, 3], [2, 4]]> : tensor<2x2xi64>
  %d = kiln.constant dense<[[1, 2, 3], [7, 8, 9]]> : tensor<2x3xi64>
  %i = kiln.constant dense<[[1], [1]]> : tensor<2x1xi64>
  %g = kiln.gather_nd %d, %i {batch_dims = 0 : i64} : tensor<2x3xi64>, tensor<2x1xi64> -> tensor<2x3xi64>
  %m = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %t = kiln.transpose %m {perm = array<i64: 1, 0>} : tensor<2x2xi64> -> tensor<2x2xi64>
  return %g, %t : tensor<2x3xi64>, tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func.func @identity_folds
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
func.func @identity_folds(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: return %[[X]]
  %r = kiln.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %t = kiln.transpose %r {perm = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %s = kiln.slice %t {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %e = kiln.expand %s : tensor<2x3xf32> -> tensor<2x3xf32>
  return %e : tensor<2x3xf32>
}

// -----

// A matmul of constants folds (Llama's rotary frequencies x positions), with
// batch dims broadcast: [2,2,3] x [3,2] -> [2,2,2].
// CHECK-LABEL: func.func @matmul_constants
func.func @matmul_constants() -> tensor<2x2x2xf32> {
  // CHECK: %[[C:.+]] = kiln.constant dense<{{\[}}{{\[}}[3.000000e+00, 5.000000e+00], [1.050000e+01, 1.400000e+01]], {{\[}}[1.800000e+01, 2.300000e+01], [2.550000e+01, 3.200000e+01]]]> : tensor<2x2x2xf32>
  // CHECK-NEXT: return %[[C]]
  %a = kiln.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xf32>
  %b = kiln.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.5, 2.0]]> : tensor<3x2xf32>
  %m = kiln.matmul %a, %b : tensor<2x2x3xf32>, tensor<3x2xf32> -> tensor<2x2x2xf32>
  return %m : tensor<2x2x2xf32>
}

// -----

// A matmul with a non-constant operand stays.
// CHECK-LABEL: func.func @matmul_not_constant
// CHECK: kiln.matmul
func.func @matmul_not_constant(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %b = kiln.constant dense<1.0> : tensor<3x2xf32>
  %m = kiln.matmul %x, %b : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}

// -----

// Integer arithmetic folds with two's-complement wrap-around (no undefined
// behaviour, no trap): INT64_MIN / -1 = INT64_MIN, INT64_MAX + 1 = INT64_MIN,
// 3^40 wraps, 2^-1 truncates to 0.
// CHECK-LABEL: func.func @integer_overflow
// CHECK: kiln.constant dense<[-9223372036854775808, -9223372036854775808, -6289078614652622815, 0]> : tensor<4xi64>
func.func @integer_overflow() -> tensor<4xi64> {
  %min = kiln.constant dense<-9223372036854775808> : tensor<1xi64>
  %m1 = kiln.constant dense<-1> : tensor<1xi64>
  %d = kiln.div %min, %m1 : tensor<1xi64>, tensor<1xi64> -> tensor<1xi64>
  %max = kiln.constant dense<9223372036854775807> : tensor<1xi64>
  %one = kiln.constant dense<1> : tensor<1xi64>
  %s = kiln.add %max, %one : tensor<1xi64>, tensor<1xi64> -> tensor<1xi64>
  %three = kiln.constant dense<3> : tensor<1xi64>
  %forty = kiln.constant dense<40> : tensor<1xi64>
  %p = kiln.pow %three, %forty : tensor<1xi64>, tensor<1xi64> -> tensor<1xi64>
  %two = kiln.constant dense<2> : tensor<1xi64>
  %n = kiln.pow %two, %m1 : tensor<1xi64>, tensor<1xi64> -> tensor<1xi64>
  %c = kiln.concat %d, %s, %p, %n {axis = 0 : i64} : tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64> -> tensor<4xi64>
  return %c : tensor<4xi64>
}

// -----

// Relu keeps NaN (max(NaN, 0) is NaN in ONNX and numpy); negatives give 0.
// CHECK-LABEL: func.func @relu_nan
func.func @relu_nan() -> tensor<3xf32> {
  // CHECK: kiln.constant dense<[0x7FC00000, 0.000000e+00, 2.000000e+00]> : tensor<3xf32>
  %c = kiln.constant dense<[0x7FC00000, -1.0, 2.0]> : tensor<3xf32>
  %r = kiln.relu %c : tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Mod folds with the divisor's sign, FMod with the dividend's (C); a zero
// divisor gives 0 instead of trapping.
// CHECK-LABEL: func.func @mod_fmod
func.func @mod_fmod() -> (tensor<4xi64>, tensor<4xi64>) {
  // CHECK-DAG: kiln.constant dense<[1, -2, 0, 0]> : tensor<4xi64>
  // CHECK-DAG: kiln.constant dense<[1, 1, 0, 0]> : tensor<4xi64>
  %a = kiln.constant dense<[7, 7, 6, 5]> : tensor<4xi64>
  %b = kiln.constant dense<[3, -3, 3, 0]> : tensor<4xi64>
  %m = kiln.mod %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %f = kiln.fmod %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %m, %f : tensor<4xi64>, tensor<4xi64>
}

// -----

// A cast that narrows and one that widens again round the value: the pair is
// never folded into an identity (only a cast between equal types is one).
// CHECK-LABEL: func.func @cast_pair_kept
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[B:.+]] = kiln.cast %[[X]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT: %[[Y:.+]] = kiln.cast %[[B]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-NEXT: %[[H:.+]] = kiln.cast %[[X]] : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT: %[[Z:.+]] = kiln.cast %[[H]] : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT: return %[[Y]], %[[Z]], %[[X]]
func.func @cast_pair_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %b = kiln.cast %x : tensor<4xf32> -> tensor<4xbf16>
  %y = kiln.cast %b : tensor<4xbf16> -> tensor<4xf32>
  %h = kiln.cast %x : tensor<4xf32> -> tensor<4xf16>
  %z = kiln.cast %h : tensor<4xf16> -> tensor<4xf32>
  %same = kiln.cast %x : tensor<4xf32> -> tensor<4xf32>
  return %y, %z, %same : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Casts of constants to f16 round to nearest even (1 + 2^-11 is a tie and
// stays 1, 1 + 3 * 2^-11 goes up to 1 + 2^-9) and overflow to inf from half
// an ulp past 65504 on (65519.99 -> 65504, 65520 -> inf); inf and NaN stay.
// With saturate_finite a finite value becomes +-65504 instead.
// CHECK-LABEL: func.func @cast_constant_to_f16
// CHECK-DAG: kiln.constant dense<[1.000000e+00, 1.001950e+00, 6.550400e+04, 0x7C00, 0xFC00, 0x7C00, 0x7E00]> : tensor<7xf16>
// CHECK-DAG: kiln.constant dense<[1.000000e+00, 1.001950e+00, 6.550400e+04, 6.550400e+04, -6.550400e+04, 0x7C00, 0x7E00]> : tensor<7xf16>
func.func @cast_constant_to_f16() -> (tensor<7xf16>, tensor<7xf16>) {
  %c = kiln.constant dense<[1.00048828125, 1.00146484375, 65519.99, 65520.0, -65520.0, 0x7F800000, 0x7FC00000]> : tensor<7xf32>
  %h = kiln.cast %c : tensor<7xf32> -> tensor<7xf16>
  %s = kiln.cast %c {saturate_finite} : tensor<7xf32> -> tensor<7xf16>
  return %h, %s : tensor<7xf16>, tensor<7xf16>
}

// -----

// To bf16: ties to even (1 + 2^-8 stays 1, 1 + 3 * 2^-8 goes up to
// 1 + 2^-6); half an ulp past the largest finite bf16 (0x7F7F8000) is inf,
// just below it (0x7F7F7FFF) the largest finite value (3.389530e+38); a
// subnormal rounds like any other value (0x00018000 is a tie between bf16
// 0x0001 and 0x0002 and goes to the even 0x0002 = 2^-132).
// CHECK-LABEL: func.func @cast_constant_to_bf16
// CHECK: kiln.constant dense<[1.000000e+00, 1.015630e+00, 0x7F80, 3.389530e+38, 0xFF80, 1.836710e-40]> : tensor<6xbf16>
func.func @cast_constant_to_bf16() -> tensor<6xbf16> {
  %c = kiln.constant dense<[1.00390625, 1.01171875, 0x7F7F8000, 0x7F7F7FFF, 0xFF7F8000, 0x00018000]> : tensor<6xf32>
  %b = kiln.cast %c : tensor<6xf32> -> tensor<6xbf16>
  return %b : tensor<6xbf16>
}

// -----

// An int64 converts to f32 with one rounding: 2^60 + 2^36 + 1 is just above
// the midpoint of two f32 neighbours and rounds up to 2^60 + 2^37 (through
// double it would first become the midpoint, then round to even: 2^60).
// CHECK-LABEL: func.func @cast_constant_int_to_f32
// CHECK: kiln.constant dense<1.15292164E+18> : tensor<1xf32>
func.func @cast_constant_int_to_f32() -> tensor<1xf32> {
  %c = kiln.constant dense<1152921573326323713> : tensor<1xi64>
  %f = kiln.cast %c : tensor<1xi64> -> tensor<1xf32>
  return %f : tensor<1xf32>
}
