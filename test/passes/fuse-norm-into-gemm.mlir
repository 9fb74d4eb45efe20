// RUN: kiln-opt %s --split-input-file --kiln-fuse-norm-into-gemm | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fuse-norm-into-gemm --kiln-select-tiles | FileCheck %s --check-prefix=TILES
// RUN: not kiln-opt %s --split-input-file --kiln-fuse-norm-into-gemm --kiln-select-tiles=sm90-gemm=false 2>&1 | FileCheck %s --check-prefix=NO-SM90
// RUN: kiln-opt %s --split-input-file --kiln-fuse-norm-into-gemm=few-row=false | FileCheck %s --check-prefix=FEW-ROW-OFF
// RUN: not kiln-opt %s --split-input-file --kiln-fuse-norm-into-gemm --kiln-select-tiles=skinny-gemm=false 2>&1 | FileCheck %s --check-prefix=NO-SKINNY

// A layer norm kernel read only by a GEMM kernel (as its matmul's lhs, with a
// constant weight) is folded into it: the GEMM reads x, its weight is
// diag(scale) W = [[2, 4], [-3, 0]] ... rounded to f16, c holds the column
// sums of that weight and b' = bias W.
// W = [[1, 2, 0, 0, 0, 0, 0, 0], [1, 0, ...], then zeros]; scale k0 = 2, k1 = -3,
// others 1; bias k0 = 0.5, k1 = 1, others 0:
//   W' row 0 = [2, 4, 0...], row 1 = [-3, 0, ...]; c = [-1, 4, 0, ...];
//   b' = 0.5 * row0 + 1 * row1 = [1.5, 1, 0, ...].
// CHECK-LABEL: func.func @layer_norm
// CHECK-NOT: kiln.layer_norm
// CHECK-DAG: %[[W:.*]] = kiln.constant dense<{{\[\[}}2.000000e+00, 4.000000e+00, 0.000000e+00{{.*}}[-3.000000e+00, -0.000000e+00{{.*}}> : tensor<8x8xf16>
// CHECK-DAG: %[[C:.*]] = kiln.constant dense<[-1.000000e+00, 4.000000e+00, 0.000000e+00{{.*}}]> : tensor<8xf32>
// CHECK-DAG: %[[B:.*]] = kiln.constant dense<[1.500000e+00, 1.000000e+00, 0.000000e+00{{.*}}]> : tensor<8xf32>
// CHECK-DAG: %[[XV:.*]] = kiln.reshape %arg0 : tensor<2x4x8xf16> -> tensor<8x8xf16>
// CHECK: kiln.kernel @k1_fused_layer_norm_matmul_gelu(%[[XV]], %{{.*}}, %[[W]], %[[C]], %[[B]])
// CHECK: ^bb0(%[[A:.*]]: tensor<8x8xf16>, %{{.*}}: tensor<8xf16>, %[[WA:.*]]: tensor<8x8xf16>, %[[CA:.*]]: tensor<8xf32>, %[[BA:.*]]: tensor<8xf32>):
// CHECK: %[[MEAN:.*]], %[[RSTD:.*]] = kiln.row_stats %[[A]] {epsilon = 9.99999974E-6 : f32, rms = false} : tensor<8x8xf16> -> tensor<8x1xf32>, tensor<8x1xf32>
// CHECK: %[[Y:.*]] = kiln.matmul %[[A]], %[[WA]]
// CHECK: %[[Y32:.*]] = kiln.cast %[[Y]] : tensor<8x8xf16> -> tensor<8x8xf32>
// CHECK: %[[T:.*]] = kiln.mul %[[MEAN]], %[[CA]]
// CHECK: %[[Z:.*]] = kiln.sub %[[Y32]], %[[T]]
// CHECK: %[[Z2:.*]] = kiln.mul %[[Z]], %[[RSTD]]
// CHECK: %[[Z3:.*]] = kiln.add %[[Z2]], %[[BA]]
// CHECK: %[[N:.*]] = kiln.cast %[[Z3]] {saturate_finite} : tensor<8x8xf32> -> tensor<8x8xf16>
// CHECK: kiln.add %[[N]], %{{.*}} : tensor<8x8xf16>, tensor<8xf16>
// TILES-LABEL: func.func @layer_norm
// TILES: kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = {{(64|128)}}, bn = {{[0-9]+}}, consumers = {{[12]}}, stages = {{[0-9]+}}, split_k = 1,
// NO-SM90: error: unsupported: kernel @k1_fused_layer_norm_matmul_gelu holds kiln.row_stats (a norm folded into its GEMM), which only the Hopper TMA GEMM and the few-row GEMM compute
func.func @layer_norm(%x: tensor<2x4x8xf16>) -> tensor<8x8xf16> {
  %g = kiln.constant dense<[2.0, -3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf16>
  %b = kiln.constant dense<[0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]> : tensor<8xf16>
  %w = kiln.constant dense<[[1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<8x8xf16>
  %bias = kiln.constant dense<0.25> : tensor<8xf16>
  %n = kiln.kernel @k0_fused_layer_norm(%x, %g, %b) : (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<2x4x8xf16>, %a1: tensor<8xf16>, %a2: tensor<8xf16>):
    %0 = kiln.layer_norm %a0, %a1, %a2 {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16> -> tensor<2x4x8xf16>
    %1 = kiln.reshape %0 : tensor<2x4x8xf16> -> tensor<8x8xf16>
    kiln.yield %1 : tensor<8x8xf16>
  }
  %r = kiln.kernel @k1_fused_matmul_gelu(%n, %bias, %w) : (tensor<8x8xf16>, tensor<8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8xf16>, %a2: tensor<8x8xf16>):
    %0 = kiln.matmul %a0, %a2 : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
    %1 = kiln.add %0, %a1 : tensor<8x8xf16>, tensor<8xf16> -> tensor<8x8xf16>
    kiln.yield %1 : tensor<8x8xf16>
  }
  return %r : tensor<8x8xf16>
}

// -----

// RMS norm into two GEMM kernels (Q and K/V of a Llama layer): both read x and
// a scaled weight; no column sums or bias; the norm kernel is gone.
// CHECK-LABEL: func.func @rms_norm_two_gemms
// CHECK-NOT: kiln.rms_norm
// CHECK: kiln.kernel @k1_fused_rms_norm_matmul(%arg0, %{{.*}}) :
// CHECK: %{{.*}}, %[[R1:.*]] = kiln.row_stats %{{.*}} {epsilon = 9.99999997E-7 : f32, rms = true}
// CHECK: kiln.matmul
// CHECK: %[[Y:.*]] = kiln.cast
// CHECK: kiln.mul %[[Y]], %[[R1]] : tensor<16x8xf32>, tensor<16x1xf32> -> tensor<16x8xf32>
// CHECK: kiln.kernel @k2_fused_rms_norm_matmul(%arg0, %{{.*}}) :
// CHECK: kiln.row_stats %{{.*}} {epsilon = 9.99999997E-7 : f32, rms = true}
func.func @rms_norm_two_gemms(%x: tensor<16x16xbf16>) -> (tensor<16x8xbf16>, tensor<16x16xbf16>) {
  %g = kiln.constant dense<0.5> : tensor<16xbf16>
  %wq = kiln.constant dense<[[1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5], [3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5], [2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5], [3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5], [2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5], [3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5], [2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0]]> : tensor<16x8xbf16>
  %wkv = kiln.constant dense<[[2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0], [2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5], [3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0], [3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5], [4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0], [2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0], [2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5], [3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0], [3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5], [4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0], [2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0], [2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5], [3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0], [3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5], [4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0], [2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0, 2.5, 3.0, 3.5, 4.0, 2.0]]> : tensor<16x16xbf16>
  %n = kiln.kernel @k0_rms_norm(%x, %g) : (tensor<16x16xbf16>, tensor<16xbf16>) -> tensor<16x16xbf16> {
  ^bb0(%a0: tensor<16x16xbf16>, %a1: tensor<16xbf16>):
    %0 = kiln.rms_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-06 : f32} : tensor<16x16xbf16>, tensor<16xbf16> -> tensor<16x16xbf16>
    kiln.yield %0 : tensor<16x16xbf16>
  }
  %q = kiln.kernel @k1_fused_matmul(%n, %wq) : (tensor<16x16xbf16>, tensor<16x8xbf16>) -> tensor<16x8xbf16> {
  ^bb0(%a0: tensor<16x16xbf16>, %a1: tensor<16x8xbf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<16x16xbf16>, tensor<16x8xbf16> -> tensor<16x8xbf16>
    kiln.yield %0 : tensor<16x8xbf16>
  }
  %kv = kiln.kernel @k2_fused_matmul(%n, %wkv) : (tensor<16x16xbf16>, tensor<16x16xbf16>) -> tensor<16x16xbf16> {
  ^bb0(%a0: tensor<16x16xbf16>, %a1: tensor<16x16xbf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
    kiln.yield %0 : tensor<16x16xbf16>
  }
  return %q, %kv : tensor<16x8xbf16>, tensor<16x16xbf16>
}

// -----

// Not folded: the norm's result is also read by a residual add (BERT's
// post-LN layers), so the normalized tensor must exist anyway.
// CHECK-LABEL: func.func @also_residual
// CHECK: kiln.layer_norm
// CHECK-NOT: kiln.row_stats
func.func @also_residual(%x: tensor<8x8xf16>) -> (tensor<8x8xf16>, tensor<8x8xf16>) {
  %g = kiln.constant dense<1.0> : tensor<8xf16>
  %w = kiln.constant dense<[[1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5], [3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5], [2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5]]> : tensor<8x8xf16>
  %n = kiln.kernel @k0_layer_norm(%x, %g) : (tensor<8x8xf16>, tensor<8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8xf16>):
    %0 = kiln.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<8x8xf16>, tensor<8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %y = kiln.kernel @k1_fused_matmul(%n, %w) : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %z = kiln.kernel @k2_add(%y, %n) : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8x8xf16>):
    %0 = kiln.add %a0, %a1 : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  return %y, %z : tensor<8x8xf16>, tensor<8x8xf16>
}

// -----

// Not folded: the weight is not a constant, K is not a multiple of 8 (TMA's
// 16-byte strides), and the scaled weight would overflow f16.
// CHECK-LABEL: func.func @not_eligible
// CHECK-COUNT-3: kiln.layer_norm
// CHECK-NOT: kiln.row_stats
func.func @not_eligible(%x: tensor<8x8xf16>, %wv: tensor<8x8xf16>, %x12: tensor<8x12xf16>) -> (tensor<8x8xf16>, tensor<8x8xf16>, tensor<8x8xf16>) {
  %g = kiln.constant dense<1.0> : tensor<8xf16>
  %g12 = kiln.constant dense<1.0> : tensor<12xf16>
  %big = kiln.constant dense<1000.0> : tensor<8xf16>
  %w12 = kiln.constant dense<[[1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5], [3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5], [2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5], [3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5], [2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0]]> : tensor<12x8xf16>
  %w = kiln.constant dense<[[100.0, 100.5, 101.0, 101.5, 102.0, 100.0, 100.5, 101.0], [101.5, 102.0, 100.0, 100.5, 101.0, 101.5, 102.0, 100.0], [100.5, 101.0, 101.5, 102.0, 100.0, 100.5, 101.0, 101.5], [102.0, 100.0, 100.5, 101.0, 101.5, 102.0, 100.0, 100.5], [101.0, 101.5, 102.0, 100.0, 100.5, 101.0, 101.5, 102.0], [100.0, 100.5, 101.0, 101.5, 102.0, 100.0, 100.5, 101.0], [101.5, 102.0, 100.0, 100.5, 101.0, 101.5, 102.0, 100.0], [100.5, 101.0, 101.5, 102.0, 100.0, 100.5, 101.0, 101.5]]> : tensor<8x8xf16>
  %n = kiln.kernel @k0_layer_norm(%x, %g) : (tensor<8x8xf16>, tensor<8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8xf16>):
    %0 = kiln.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<8x8xf16>, tensor<8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %y = kiln.kernel @k1_fused_matmul(%n, %wv) : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %n12 = kiln.kernel @k2_layer_norm(%x12, %g12) : (tensor<8x12xf16>, tensor<12xf16>) -> tensor<8x12xf16> {
  ^bb0(%a0: tensor<8x12xf16>, %a1: tensor<12xf16>):
    %0 = kiln.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<8x12xf16>, tensor<12xf16> -> tensor<8x12xf16>
    kiln.yield %0 : tensor<8x12xf16>
  }
  %y12 = kiln.kernel @k3_fused_matmul(%n12, %w12) : (tensor<8x12xf16>, tensor<12x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x12xf16>, %a1: tensor<12x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<8x12xf16>, tensor<12x8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %nb = kiln.kernel @k4_layer_norm(%x, %big) : (tensor<8x8xf16>, tensor<8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8xf16>):
    %0 = kiln.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<8x8xf16>, tensor<8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %yb = kiln.kernel @k5_fused_matmul(%nb, %w) : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  return %y, %y12, %yb : tensor<8x8xf16>, tensor<8x8xf16>, tensor<8x8xf16>
}

// -----

// Not folded for a target without wgmma (only the Hopper GEMM computes row
// statistics).
// CHECK-LABEL: func.func @sm_80
// CHECK: kiln.layer_norm
// CHECK-NOT: kiln.row_stats
module attributes {kiln.target = #kiln.target<name = "sm_80", arch = 80, sm_count = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, tensor_cores = mma_sync>} {
func.func @sm_80(%x: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %g = kiln.constant dense<1.0> : tensor<8xf16>
  %w = kiln.constant dense<[[1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5], [3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5], [2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5]]> : tensor<8x8xf16>
  %n = kiln.kernel @k0_layer_norm(%x, %g) : (tensor<8x8xf16>, tensor<8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8xf16>):
    %0 = kiln.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<8x8xf16>, tensor<8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %y = kiln.kernel @k1_fused_matmul(%n, %w) : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  return %y : tensor<8x8xf16>
}
}

// -----

// Not folded: a uniform weight (kernels read a uniform constant as a literal, which TMA cannot
// read), and a negative epsilon (kiln.row_stats needs epsilon >= 0).
// CHECK-LABEL: func.func @uniform_weight_negative_epsilon
// CHECK-COUNT-2: kiln.layer_norm
// CHECK-NOT: kiln.row_stats
func.func @uniform_weight_negative_epsilon(%x: tensor<8x8xf16>) -> (tensor<8x8xf16>, tensor<8x8xf16>) {
  %g = kiln.constant dense<1.0> : tensor<8xf16>
  %wu = kiln.constant dense<0.25> : tensor<8x8xf16>
  %w = kiln.constant dense<[[1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5], [3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5], [2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0], [2.5, 3.0, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0], [1.5, 2.0, 2.5, 3.0, 1.0, 1.5, 2.0, 2.5]]> : tensor<8x8xf16>
  %n = kiln.kernel @k0_layer_norm(%x, %g) : (tensor<8x8xf16>, tensor<8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8xf16>):
    %0 = kiln.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<8x8xf16>, tensor<8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %y = kiln.kernel @k1_fused_matmul(%n, %wu) : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %ne = kiln.kernel @k2_layer_norm(%x, %g) : (tensor<8x8xf16>, tensor<8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8xf16>):
    %0 = kiln.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = -1.0e-05 : f32} : tensor<8x8xf16>, tensor<8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  %z = kiln.kernel @k3_fused_matmul(%ne, %w) : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16> {
  ^bb0(%a0: tensor<8x8xf16>, %a1: tensor<8x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
    kiln.yield %0 : tensor<8x8xf16>
  }
  return %y, %z : tensor<8x8xf16>, tensor<8x8xf16>
}

// -----

// An RMS norm read only by few-row GEMMs (2 rows, K = 64) goes into their A
// loader: each GEMM reads x, its lhs becomes x * scale, kiln.row_stats (rms)
// of x gives rstd, and the weights are unchanged (no rescaled copy).
// CHECK-LABEL: func.func @rms_norm_few_row
// CHECK-NOT: kiln.rms_norm
// CHECK: kiln.kernel @k1_fused_rms_norm_matmul(%arg0, %[[W1:.*]], %[[G1:.*]]) :
// CHECK: ^bb0(%[[X:.*]]: tensor<2x64xf16>, %[[WA:.*]]: tensor<64x8xf16>, %[[GA:.*]]: tensor<64xf16>):
// CHECK: %{{.*}}, %[[RSTD:.*]] = kiln.row_stats %[[X]] {epsilon = 9.99999997E-7 : f32, rms = true} : tensor<2x64xf16> -> tensor<2x1xf32>, tensor<2x1xf32>
// CHECK-NEXT: %[[A:.*]] = kiln.mul %[[X]], %[[GA]] : tensor<2x64xf16>, tensor<64xf16> -> tensor<2x64xf16>
// CHECK-NEXT: %[[Y:.*]] = kiln.matmul %[[A]], %[[WA]] : tensor<2x64xf16>, tensor<64x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT: %[[Y32:.*]] = kiln.cast %[[Y]] : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK-NEXT: %[[Z:.*]] = kiln.mul %[[Y32]], %[[RSTD]] : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT: %[[N:.*]] = kiln.cast %[[Z]] {saturate_finite} : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK-NEXT: kiln.yield %[[N]]
// CHECK: kiln.kernel @k2_fused_rms_norm_matmul(%arg0, %{{.*}}, %{{.*}}) :
// CHECK: kiln.row_stats
// TILES-LABEL: func.func @rms_norm_few_row
// TILES: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 2, split_k = {{[0-9]}}, tensor_cores = true, preload = true>, kiln.tile_reason = "skinny: 2 rows, {{.*}}; the RMS norm in the A loader (no other GEMM computes it)"
// FEW-ROW-OFF-LABEL: func.func @rms_norm_few_row
// FEW-ROW-OFF: kiln.kernel @k0_rms_norm
// FEW-ROW-OFF-NOT: kiln.row_stats
// NO-SKINNY: error: unsupported: kernel @k1_fused_rms_norm_matmul holds the kiln.row_stats of an RMS norm folded into its A loader, which only the few-row GEMM computes (skinny-gemm on, an RMS norm, 1..16 rows, N % 4 == 0, K >= 64)
func.func @rms_norm_few_row(%x: tensor<2x64xf16>) -> (tensor<2x8xf16>, tensor<2x16xf16>) {
  %g = kiln.constant dense<"0x003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C"> : tensor<64xf16>
  %w1 = kiln.constant dense<"0x00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA"> : tensor<64x8xf16>
  %w2 = kiln.constant dense<"0x00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038003C00BC00B800000038"> : tensor<64x16xf16>
  %n = kiln.kernel @k0_rms_norm(%x, %g) : (tensor<2x64xf16>, tensor<64xf16>) -> tensor<2x64xf16> {
  ^bb0(%a0: tensor<2x64xf16>, %a1: tensor<64xf16>):
    %0 = kiln.rms_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-06 : f32} : tensor<2x64xf16>, tensor<64xf16> -> tensor<2x64xf16>
    kiln.yield %0 : tensor<2x64xf16>
  }
  %y1 = kiln.kernel @k1_fused_matmul(%n, %w1) : (tensor<2x64xf16>, tensor<64x8xf16>) -> tensor<2x8xf16> {
  ^bb0(%a0: tensor<2x64xf16>, %a1: tensor<64x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<2x64xf16>, tensor<64x8xf16> -> tensor<2x8xf16>
    kiln.yield %0 : tensor<2x8xf16>
  }
  %y2 = kiln.kernel @k2_fused_matmul(%n, %w2) : (tensor<2x64xf16>, tensor<64x16xf16>) -> tensor<2x16xf16> {
  ^bb0(%a0: tensor<2x64xf16>, %a1: tensor<64x16xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<2x64xf16>, tensor<64x16xf16> -> tensor<2x16xf16>
    kiln.yield %0 : tensor<2x16xf16>
  }
  return %y1, %y2 : tensor<2x8xf16>, tensor<2x16xf16>
}

// -----

// A layer norm read by a few-row GEMM keeps its kernel: the Hopper form would
// force the Hopper GEMM on a 2-row GEMM (slower than the norm kernel plus the
// few-row GEMM), and the A loader takes RMS norms only.
// CHECK-LABEL: func.func @layer_norm_few_row
// CHECK: kiln.kernel @k0_layer_norm
// CHECK-NOT: kiln.row_stats
func.func @layer_norm_few_row(%x: tensor<2x64xf16>) -> tensor<2x8xf16> {
  %g = kiln.constant dense<"0x003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C003E0040003C"> : tensor<64xf16>
  %b = kiln.constant dense<0.5> : tensor<64xf16>
  %w1 = kiln.constant dense<"0x00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA00B800B4000000340038003A00BA"> : tensor<64x8xf16>
  %n = kiln.kernel @k0_layer_norm(%x, %g, %b) : (tensor<2x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<2x64xf16> {
  ^bb0(%a0: tensor<2x64xf16>, %a1: tensor<64xf16>, %a2: tensor<64xf16>):
    %0 = kiln.layer_norm %a0, %a1, %a2 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<2x64xf16>, tensor<64xf16>, tensor<64xf16> -> tensor<2x64xf16>
    kiln.yield %0 : tensor<2x64xf16>
  }
  %y1 = kiln.kernel @k1_fused_matmul(%n, %w1) : (tensor<2x64xf16>, tensor<64x8xf16>) -> tensor<2x8xf16> {
  ^bb0(%a0: tensor<2x64xf16>, %a1: tensor<64x8xf16>):
    %0 = kiln.matmul %a0, %a1 : tensor<2x64xf16>, tensor<64x8xf16> -> tensor<2x8xf16>
    kiln.yield %0 : tensor<2x8xf16>
  }
  return %y1 : tensor<2x8xf16>
}
