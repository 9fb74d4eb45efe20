// RUN: kiln-opt %s --split-input-file --kiln-fold-shape-subgraphs --verify-diagnostics | FileCheck %s

// A GPT-2 style reshape target built from Shape/Gather/Concat folds away.
// CHECK-LABEL: func.func @reshape_target_folds
func.func @reshape_target_folds(%x: tensor<2x16x128xf32>) -> tensor<3xi64> {
  // CHECK-NOT: kiln.shape
  // CHECK-NOT: kiln.gather
  // CHECK: %[[C:.+]] = kiln.constant dense<[2, 16, 128]> : tensor<3xi64>
  // CHECK: return %[[C]]
  %s = kiln.shape %x {start = 0 : i64, end = 2 : i64} : tensor<2x16x128xf32> -> tensor<2xi64>
  %h = kiln.constant dense<128> : tensor<1xi64>
  %c = kiln.concat %s, %h {axis = 0 : i64} : tensor<2xi64>, tensor<1xi64> -> tensor<3xi64>
  return %c : tensor<3xi64>
}

// -----

// Ops on runtime values stay.
// CHECK-LABEL: func.func @runtime_values_stay
func.func @runtime_values_stay(%m: tensor<2x16xi64>) -> tensor<2x16xf32> {
  // CHECK: kiln.cast
  // CHECK: kiln.sub
  %f = kiln.cast %m : tensor<2x16xi64> -> tensor<2x16xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s = kiln.sub %one, %f : tensor<f32>, tensor<2x16xf32> -> tensor<2x16xf32>
  return %s : tensor<2x16xf32>
}

// -----

// The padding mask path of a causal mask: IsNaN/Where on constants folds.
// CHECK-LABEL: func.func @mask_folds
func.func @mask_folds() -> tensor<1x1x2x2xf32> {
  // CHECK-NEXT: %[[C:.+]] = kiln.constant dense<{{\[\[\[\[}}0.000000e+00, -3.40282347E+38], [0.000000e+00, 0.000000e+00]]]]> : tensor<1x1x2x2xf32>
  // CHECK-NEXT: return %[[C]]
  %b = kiln.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %e = kiln.expand %b : tensor<2x2xi1> -> tensor<1x1x2x2xi1>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %min = kiln.constant dense<-3.40282347E+38> : tensor<f32>
  %w = kiln.where %e, %z, %min : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32> -> tensor<1x1x2x2xf32>
  %n = kiln.is_nan %w : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xi1>
  %w2 = kiln.where %n, %z, %w : tensor<1x1x2x2xi1>, tensor<f32>, tensor<1x1x2x2xf32> -> tensor<1x1x2x2xf32>
  return %w2 : tensor<1x1x2x2xf32>
}

// -----

// Position ids past the end of a 128-row table become constants after
// folding and are reported (ONNX leaves them undefined).
func.func @position_out_of_range(%table: tensor<128x8xf32>) -> tensor<200x8xf32> {
  %z = kiln.constant dense<0> : tensor<i64>
  %n = kiln.constant dense<200> : tensor<i64>
  %o = kiln.constant dense<1> : tensor<i64>
  %pos = kiln.range %z, %n, %o : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<200xi64>
  // expected-error @+1 {{index 128 is out of range for a dimension of size 128 (valid: [-128, 128)); the indices are constant at these input shapes, so an input dimension may be too large for the model (e.g. a sequence longer than a position table of 128 rows)}}
  %e = kiln.gather %table, %pos {axis = 0 : i64} : tensor<128x8xf32>, tensor<200xi64> -> tensor<200x8xf32>
  return %e : tensor<200x8xf32>
}

// -----

// GatherND index tuples are checked entry by entry against their data dims.
func.func @gather_nd_out_of_range(%data: tensor<2x4xf32>) -> tensor<2xf32> {
  %i = kiln.constant dense<[[0, 1], [1, 7]]> : tensor<2x2xi64>
  // expected-error @+1 {{index 7 (entry 1 of an index tuple) is out of range for data dimension 1 of size 4 (valid: [-4, 4))}}
  %g = kiln.gather_nd %data, %i {batch_dims = 0 : i64} : tensor<2x4xf32>, tensor<2x2xi64> -> tensor<2xf32>
  return %g : tensor<2xf32>
}

// -----

// Integer division by a constant zero is an error; by a float zero it is
// IEEE (inf/nan) and fine.
func.func @integer_division_by_zero(%x: tensor<4xi64>, %f: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>) {
  %z = kiln.constant dense<[1, 2, 0, 4]> : tensor<4xi64>
  // expected-error @+1 {{integer division by zero (the divisor is a constant holding 0)}}
  %d = kiln.div %x, %z : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %fz = kiln.constant dense<0.0> : tensor<f32>
  %q = kiln.div %f, %fz : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %d, %q : tensor<4xi64>, tensor<4xf32>
}
