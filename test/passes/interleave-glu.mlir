// RUN: kiln-opt %s --split-input-file --kiln-interleave-glu | FileCheck %s

// Llama's SwiGLU after kiln-fuse-sibling-gemms: one GEMM against [Wg | Wu]
// ([K, 2N], K = 2, N = 8), the gate Y[..., 0:8] through silu (g * sigmoid(g))
// times the up projection Y[..., 8:16]. The weight columns are interleaved
// (g0 u0 g1 u1 ...: row 0 becomes 0, 8, 1, 9, ...) and the slices become the
// step-2 slices Y[..., 0::2] (gate) and Y[..., 1::2] (up); the unit itself is
// unchanged.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x2xf32>)
// CHECK-NEXT: %[[W:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 8.000000e+00, 1.000000e+00, 9.000000e+00, 2.000000e+00, 1.000000e+01, 3.000000e+00, 1.100000e+01, 4.000000e+00, 1.200000e+01, 5.000000e+00, 1.300000e+01, 6.000000e+00, 1.400000e+01, 7.000000e+00, 1.500000e+01], [1.000000e+02, 1.080000e+02, 1.010000e+02, 1.090000e+02, 1.020000e+02, 1.100000e+02, 1.030000e+02, 1.110000e+02, 1.040000e+02, 1.120000e+02, 1.050000e+02, 1.130000e+02, 1.060000e+02, 1.140000e+02, 1.070000e+02, 1.150000e+02]]> : tensor<2x16xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.matmul %[[X]], %[[W]] : tensor<1x4x2xf32>, tensor<2x16xf32> -> tensor<1x4x16xf32>
// CHECK-NEXT: %[[G:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[U:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[S:.+]] = kiln.sigmoid %[[G]]
// CHECK-NEXT: %[[SILU:.+]] = kiln.mul %[[G]], %[[S]]
// CHECK-NEXT: %[[O:.+]] = kiln.mul %[[SILU]], %[[U]]
// CHECK-NEXT: return %[[O]]
func.func @swiglu(%x: tensor<1x4x2xf32>) -> tensor<1x4x8xf32> {
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                            [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]]> : tensor<2x16xf32>
  %y = kiln.matmul %x, %w : tensor<1x4x2xf32>, tensor<2x16xf32> -> tensor<1x4x16xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %s = kiln.sigmoid %g : tensor<1x4x8xf32>
  %silu = kiln.mul %g, %s : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %o = kiln.mul %silu, %u : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

// silu spelled sigmoid(g) * g, with a constant bias [2N] added to Y on the
// left (BERT-style sibling fusion concatenates the biases). The bias is
// interleaved like the weight columns (0, 8, 1, 9, ...); the add stays where it
// is, between the GEMM and the slices.
// CHECK-LABEL: func.func @swiglu_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x2xf32>)
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 8.000000e+00, 1.000000e+00, 9.000000e+00, {{.+}}, 7.000000e+00, 1.500000e+01], [1.000000e+02, 1.080000e+02, {{.+}}, 1.070000e+02, 1.150000e+02]]> : tensor<2x16xf32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<[5.000000e-01, 8.500000e+00, 1.500000e+00, 9.500000e+00, 2.500000e+00, 1.050000e+01, 3.500000e+00, 1.150000e+01, 4.500000e+00, 1.250000e+01, 5.500000e+00, 1.350000e+01, 6.500000e+00, 1.450000e+01, 7.500000e+00, 1.550000e+01]> : tensor<16xf32>
// CHECK: %[[Y:.+]] = kiln.matmul %[[X]], %[[W]]
// CHECK-NEXT: %[[YB:.+]] = kiln.add %[[B]], %[[Y]] : tensor<16xf32>, tensor<1x4x16xf32> -> tensor<1x4x16xf32>
// CHECK-NEXT: %[[G:.+]] = kiln.slice %[[YB]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: %[[U:.+]] = kiln.slice %[[YB]] {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: %[[S:.+]] = kiln.sigmoid %[[G]]
// CHECK-NEXT: %[[SILU:.+]] = kiln.mul %[[S]], %[[G]]
// CHECK-NEXT: %[[O:.+]] = kiln.mul %[[U]], %[[SILU]]
// CHECK-NEXT: return %[[O]]
func.func @swiglu_bias(%x: tensor<1x4x2xf32>) -> tensor<1x4x8xf32> {
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                            [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]]> : tensor<2x16xf32>
  %b = kiln.constant dense<[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5]> : tensor<16xf32>
  %y0 = kiln.matmul %x, %w : tensor<1x4x2xf32>, tensor<2x16xf32> -> tensor<1x4x16xf32>
  %y = kiln.add %b, %y0 : tensor<16xf32>, tensor<1x4x16xf32> -> tensor<1x4x16xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %s = kiln.sigmoid %g : tensor<1x4x8xf32>
  %silu = kiln.mul %s, %g : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %o = kiln.mul %u, %silu : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

// Regression: a one-element bias is the same for every column. It used to be
// "interleaved" into zeros (no column pairs in one element); it stays 5.0 and
// only the weight is reordered.
// CHECK-LABEL: func.func @scalar_bias_kept
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<5.000000e+00> : tensor<1xf32>
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 8.000000e+00, 1.000000e+00, 9.000000e+00,
// CHECK: %[[Y:.+]] = kiln.matmul %{{.+}}, %[[W]]
// CHECK-NEXT: %[[YB:.+]] = kiln.add %[[Y]], %[[B]] : tensor<1x4x16xf32>, tensor<1xf32> -> tensor<1x4x16xf32>
// CHECK-NEXT: kiln.slice %[[YB]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: kiln.slice %[[YB]] {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>}
func.func @scalar_bias_kept(%x: tensor<1x4x2xf32>) -> tensor<1x4x8xf32> {
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                            [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]]> : tensor<2x16xf32>
  %b = kiln.constant dense<5.0> : tensor<1xf32>
  %y0 = kiln.matmul %x, %w : tensor<1x4x2xf32>, tensor<2x16xf32> -> tensor<1x4x16xf32>
  %y = kiln.add %y0, %b : tensor<1x4x16xf32>, tensor<1xf32> -> tensor<1x4x16xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %s = kiln.sigmoid %g : tensor<1x4x8xf32>
  %silu = kiln.mul %g, %s : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %o = kiln.mul %silu, %u : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

// GeGLU with the exact gelu, 0.5 * g * (1 + erf(g / sqrt(2))): every op from
// the gate is elementwise with scalar constants.
// CHECK-LABEL: func.func @geglu_erf
// CHECK: %[[Y:.+]] = kiln.matmul
// CHECK-NEXT: %[[G:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: %[[U:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: kiln.div %[[G]]
// CHECK-NEXT: kiln.erf
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.mul %[[G]]
// CHECK-NEXT: %[[GELU:.+]] = kiln.mul
// CHECK-NEXT: %[[O:.+]] = kiln.mul %[[GELU]], %[[U]]
// CHECK-NEXT: return %[[O]]
func.func @geglu_erf(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w = kiln.constant dense<0.25> : tensor<16x32xf32>
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %y = kiln.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x32xf32> -> tensor<2x8x32xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x32xf32> -> tensor<2x8x16xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 16>, steps = array<i64: 1, 1, 1>} : tensor<2x8x32xf32> -> tensor<2x8x16xf32>
  %d = kiln.div %g, %sqrt2 : tensor<2x8x16xf32>, tensor<f32> -> tensor<2x8x16xf32>
  %e = kiln.erf %d : tensor<2x8x16xf32>
  %e1 = kiln.add %e, %one : tensor<2x8x16xf32>, tensor<f32> -> tensor<2x8x16xf32>
  %ge = kiln.mul %g, %e1 : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %gelu = kiln.mul %ge, %half : tensor<2x8x16xf32>, tensor<f32> -> tensor<2x8x16xf32>
  %o = kiln.mul %gelu, %u : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// GeGLU with the tanh approximation, 0.5 * g * (1 + tanh(c * (g + 0.044715 * g^3))),
// the cube as Pow(g, 3): g is read by three ops of the chain.
// CHECK-LABEL: func.func @geglu_tanh
// CHECK: %[[Y:.+]] = kiln.matmul
// CHECK-NEXT: %[[G:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: %[[U:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: kiln.pow %[[G]]
// CHECK: kiln.tanh
// CHECK: %[[GELU:.+]] = kiln.mul %{{.+}}, %{{.+}} : tensor<2x8x16xf32>, tensor<2x8x16xf32>
// CHECK-NEXT: %[[O:.+]] = kiln.mul %[[U]], %[[GELU]]
// CHECK-NEXT: return %[[O]]
func.func @geglu_tanh(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w = kiln.constant dense<0.25> : tensor<16x32xf32>
  %three = kiln.constant dense<3.0> : tensor<f32>
  %k = kiln.constant dense<0.044715> : tensor<f32>
  %c = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %y = kiln.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x32xf32> -> tensor<2x8x32xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x32xf32> -> tensor<2x8x16xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 16>, steps = array<i64: 1, 1, 1>} : tensor<2x8x32xf32> -> tensor<2x8x16xf32>
  %g3 = kiln.pow %g, %three : tensor<2x8x16xf32>, tensor<f32> -> tensor<2x8x16xf32>
  %kg3 = kiln.mul %g3, %k : tensor<2x8x16xf32>, tensor<f32> -> tensor<2x8x16xf32>
  %in = kiln.add %g, %kg3 : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %cin = kiln.mul %in, %c : tensor<2x8x16xf32>, tensor<f32> -> tensor<2x8x16xf32>
  %t = kiln.tanh %cin : tensor<2x8x16xf32>
  %t1 = kiln.add %t, %one : tensor<2x8x16xf32>, tensor<f32> -> tensor<2x8x16xf32>
  %hg = kiln.mul %g, %half : tensor<2x8x16xf32>, tensor<f32> -> tensor<2x8x16xf32>
  %gelu = kiln.mul %hg, %t1 : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %o = kiln.mul %u, %gelu : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// The roles swapped: the up projection is the first half and the gate the
// second (sibling fusion concatenates in program order). The gate still goes
// to the even columns: row 0 becomes 8, 0, 9, 1, ... and silu reads Y[..., 0::2].
// CHECK-LABEL: func.func @swiglu_up_first
// CHECK-NEXT: %[[W:.+]] = kiln.constant dense<{{\[\[}}8.000000e+00, 0.000000e+00, 9.000000e+00, 1.000000e+00, 1.000000e+01, 2.000000e+00, 1.100000e+01, 3.000000e+00, 1.200000e+01, 4.000000e+00, 1.300000e+01, 5.000000e+00, 1.400000e+01, 6.000000e+00, 1.500000e+01, 7.000000e+00], [1.080000e+02, 1.000000e+02, 1.090000e+02, 1.010000e+02, 1.100000e+02, 1.020000e+02, 1.110000e+02, 1.030000e+02, 1.120000e+02, 1.040000e+02, 1.130000e+02, 1.050000e+02, 1.140000e+02, 1.060000e+02, 1.150000e+02, 1.070000e+02]]> : tensor<2x16xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.matmul %{{.+}}, %[[W]]
// CHECK-NEXT: %[[U:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: %[[G:.+]] = kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>}
// CHECK-NEXT: %[[S:.+]] = kiln.sigmoid %[[G]]
// CHECK-NEXT: %[[SILU:.+]] = kiln.mul %[[G]], %[[S]]
// CHECK-NEXT: %[[O:.+]] = kiln.mul %[[SILU]], %[[U]]
// CHECK-NEXT: return %[[O]]
func.func @swiglu_up_first(%x: tensor<1x4x2xf32>) -> tensor<1x4x8xf32> {
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                            [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]]> : tensor<2x16xf32>
  %y = kiln.matmul %x, %w : tensor<1x4x2xf32>, tensor<2x16xf32> -> tensor<1x4x16xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %s = kiln.sigmoid %g : tensor<1x4x8xf32>
  %silu = kiln.mul %g, %s : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %o = kiln.mul %silu, %u : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

// Near miss: the gate slice is also returned, so both halves must be stored
// in their own layout. Nothing changes.
// CHECK-LABEL: func.func @near_miss_gate_returned
// CHECK-NEXT: %[[W:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00,
// CHECK-NEXT: %[[Y:.+]] = kiln.matmul %{{.+}}, %[[W]]
// CHECK-NEXT: kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>}
// CHECK-NEXT: kiln.slice %[[Y]] {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>}
// CHECK-NOT: steps = array<i64: 1, 1, 2>
func.func @near_miss_gate_returned(%x: tensor<1x4x2xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                            [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]]> : tensor<2x16xf32>
  %y = kiln.matmul %x, %w : tensor<1x4x2xf32>, tensor<2x16xf32> -> tensor<1x4x16xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %s = kiln.sigmoid %g : tensor<1x4x8xf32>
  %silu = kiln.mul %g, %s : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %o = kiln.mul %silu, %u : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %o, %g : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// Near miss: the up half is read twice (by the gating Mul and an Add).
// CHECK-LABEL: func.func @near_miss_up_used_twice
// CHECK-NEXT: %[[W:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00,
// CHECK-NEXT: %[[Y:.+]] = kiln.matmul %{{.+}}, %[[W]]
// CHECK-NEXT: kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>}
// CHECK-NEXT: kiln.slice %[[Y]] {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>}
// CHECK-NOT: steps = array<i64: 1, 1, 2>
func.func @near_miss_up_used_twice(%x: tensor<1x4x2xf32>) -> tensor<1x4x8xf32> {
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                            [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]]> : tensor<2x16xf32>
  %y = kiln.matmul %x, %w : tensor<1x4x2xf32>, tensor<2x16xf32> -> tensor<1x4x16xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %s = kiln.sigmoid %g : tensor<1x4x8xf32>
  %silu = kiln.mul %g, %s : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %o = kiln.mul %silu, %u : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %r = kiln.add %o, %u : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %r : tensor<1x4x8xf32>
}

// -----

// Near miss: the weight is a function argument, not a constant that can be
// reordered at compile time.
// CHECK-LABEL: func.func @near_miss_weight_argument
// CHECK-NEXT: %[[Y:.+]] = kiln.matmul %arg0, %arg1
// CHECK-NEXT: kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>}
// CHECK-NEXT: kiln.slice %[[Y]] {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>}
// CHECK-NOT: steps = array<i64: 1, 1, 2>
func.func @near_miss_weight_argument(%x: tensor<1x4x2xf32>, %w: tensor<2x16xf32>) -> tensor<1x4x8xf32> {
  %y = kiln.matmul %x, %w : tensor<1x4x2xf32>, tensor<2x16xf32> -> tensor<1x4x16xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %s = kiln.sigmoid %g : tensor<1x4x8xf32>
  %silu = kiln.mul %g, %s : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %o = kiln.mul %silu, %u : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

// Near miss: 2N = 24 columns, not a multiple of 16.
// CHECK-LABEL: func.func @near_miss_width_not_multiple_of_16
// CHECK-NEXT: %[[W:.+]] = kiln.constant dense<2.500000e-01> : tensor<2x24xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.matmul %{{.+}}, %[[W]]
// CHECK-NEXT: kiln.slice %[[Y]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>}
// CHECK-NEXT: kiln.slice %[[Y]] {starts = array<i64: 0, 0, 12>, steps = array<i64: 1, 1, 1>}
// CHECK-NOT: steps = array<i64: 1, 1, 2>
func.func @near_miss_width_not_multiple_of_16(%x: tensor<1x4x2xf32>) -> tensor<1x4x12xf32> {
  %w = kiln.constant dense<0.25> : tensor<2x24xf32>
  %y = kiln.matmul %x, %w : tensor<1x4x2xf32>, tensor<2x24xf32> -> tensor<1x4x24xf32>
  %g = kiln.slice %y {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x24xf32> -> tensor<1x4x12xf32>
  %u = kiln.slice %y {starts = array<i64: 0, 0, 12>, steps = array<i64: 1, 1, 1>} : tensor<1x4x24xf32> -> tensor<1x4x12xf32>
  %s = kiln.sigmoid %g : tensor<1x4x12xf32>
  %silu = kiln.mul %g, %s : tensor<1x4x12xf32>, tensor<1x4x12xf32> -> tensor<1x4x12xf32>
  %o = kiln.mul %silu, %u : tensor<1x4x12xf32>, tensor<1x4x12xf32> -> tensor<1x4x12xf32>
  return %o : tensor<1x4x12xf32>
}
