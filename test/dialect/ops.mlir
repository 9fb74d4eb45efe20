// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// Round trip of every kiln op's custom assembly.

// CHECK-LABEL: func.func @graph_ops
func.func @graph_ops(%x: tensor<2x16x128xf32>, %ids: tensor<2x16xi64>, %table: tensor<1000x128xf32>,
                     %g: tensor<128xf32>, %w: tensor<128x384xf32>, %m: tensor<2x16xi1>) -> tensor<2x16x384xf32> {
  // CHECK: kiln.constant dense<2> : tensor<1xi64>
  %c = kiln.constant dense<2> : tensor<1xi64>
  // CHECK: kiln.shape %{{.*}} {end = 2 : i64, start = 0 : i64} : tensor<2x16x128xf32> -> tensor<2xi64>
  %s = kiln.shape %x {start = 0 : i64, end = 2 : i64} : tensor<2x16x128xf32> -> tensor<2xi64>
  // CHECK: kiln.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<1000x128xf32>, tensor<2x16xi64> -> tensor<2x16x128xf32>
  %e = kiln.gather %table, %ids {axis = 0 : i64} : tensor<1000x128xf32>, tensor<2x16xi64> -> tensor<2x16x128xf32>
  // CHECK: kiln.add %{{.*}}, %{{.*}} : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
  %a = kiln.add %e, %g : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
  // CHECK: kiln.tanh %{{.*}} : tensor<2x16x128xf32>
  %t = kiln.tanh %a : tensor<2x16x128xf32>
  // CHECK: kiln.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
  %ln = kiln.layer_norm %t, %g, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<2x16x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
  // CHECK: kiln.layer_norm %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
  %ln2 = kiln.layer_norm %ln, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<2x16x128xf32>, tensor<128xf32> -> tensor<2x16x128xf32>
  // CHECK: kiln.reduce <mean> %{{.*}} {axes = array<i64: 2>, keep_dims = true} : tensor<2x16x128xf32> -> tensor<2x16x1xf32>
  %r = kiln.reduce <mean> %ln2 {axes = array<i64: 2>, keep_dims = true} : tensor<2x16x128xf32> -> tensor<2x16x1xf32>
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : tensor<2x16x128xf32>, tensor<128x384xf32> -> tensor<2x16x384xf32>
  %mm = kiln.matmul %ln2, %w : tensor<2x16x128xf32>, tensor<128x384xf32> -> tensor<2x16x384xf32>
  // CHECK: kiln.reshape %{{.*}} : tensor<2x16x384xf32> -> tensor<2x16x12x32xf32>
  %rs = kiln.reshape %mm : tensor<2x16x384xf32> -> tensor<2x16x12x32xf32>
  // CHECK: kiln.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x12x32xf32> -> tensor<2x12x16x32xf32>
  %tr = kiln.transpose %rs {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x12x32xf32> -> tensor<2x12x16x32xf32>
  // CHECK: kiln.slice %{{.*}} {starts = array<i64: 0, 4, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x12x16x32xf32> -> tensor<2x4x16x32xf32>
  %sl = kiln.slice %tr {starts = array<i64: 0, 4, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x12x16x32xf32> -> tensor<2x4x16x32xf32>
  // CHECK: kiln.softmax %{{.*}} {axis = 3 : i64} : tensor<2x4x16x32xf32>
  %sm = kiln.softmax %sl {axis = 3 : i64} : tensor<2x4x16x32xf32>
  // CHECK: kiln.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<1xi64>, tensor<2xi64> -> tensor<3xi64>
  %cc = kiln.concat %c, %s {axis = 0 : i64} : tensor<1xi64>, tensor<2xi64> -> tensor<3xi64>
  // CHECK: kiln.cast %{{.*}} : tensor<2x16xi1> -> tensor<2x16xf32>
  %mf = kiln.cast %m : tensor<2x16xi1> -> tensor<2x16xf32>
  // CHECK: kiln.cast %{{.*}} {saturate_finite} : tensor<2x16xf32> -> tensor<2x16xf16>
  %mh = kiln.cast %mf {saturate_finite} : tensor<2x16xf32> -> tensor<2x16xf16>
  // CHECK: kiln.expand %{{.*}} : tensor<2x16xf32> -> tensor<2x4x2x16xf32>
  %ex = kiln.expand %mf : tensor<2x16xf32> -> tensor<2x4x2x16xf32>
  // CHECK: kiln.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x16xi1>, tensor<2x16xf32>, tensor<2x16xf32> -> tensor<2x16xf32>
  %wh = kiln.where %m, %mf, %mf : tensor<2x16xi1>, tensor<2x16xf32>, tensor<2x16xf32> -> tensor<2x16xf32>
  // CHECK: kiln.is_nan %{{.*}} : tensor<2x16xf32> -> tensor<2x16xi1>
  %nan = kiln.is_nan %wh : tensor<2x16xf32> -> tensor<2x16xi1>
  // CHECK: kiln.less_equal %{{.*}}, %{{.*}} : tensor<2x16xi64>, tensor<2x16xi64> -> tensor<2x16xi1>
  %le = kiln.less_equal %ids, %ids : tensor<2x16xi64>, tensor<2x16xi64> -> tensor<2x16xi1>
  // CHECK: kiln.cumsum %{{.*}} {axis = 1 : i64, exclusive = false, reverse = false} : tensor<2x16xi64>
  %cs = kiln.cumsum %ids {axis = 1 : i64, exclusive = false, reverse = false} : tensor<2x16xi64>
  // CHECK: kiln.gather_nd %{{.*}}, %{{.*}} {batch_dims = 0 : i64} : tensor<2x16xi64>, tensor<3x1xi64> -> tensor<3x16xi64>
  %i31 = kiln.constant dense<[[0], [1], [1]]> : tensor<3x1xi64>
  %gn = kiln.gather_nd %cs, %i31 {batch_dims = 0 : i64} : tensor<2x16xi64>, tensor<3x1xi64> -> tensor<3x16xi64>
  // CHECK: kiln.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<2x16xi64>, tensor<2x16xi64> -> tensor<2x16xi64>
  %ge = kiln.gather_elements %cs, %ids {axis = 1 : i64} : tensor<2x16xi64>, tensor<2x16xi64> -> tensor<2x16xi64>
  // CHECK: kiln.range %{{.*}}, %{{.*}}, %{{.*}} : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<4xi64>
  %z = kiln.constant dense<0> : tensor<i64>
  %f = kiln.constant dense<4> : tensor<i64>
  %o = kiln.constant dense<1> : tensor<i64>
  %rg = kiln.range %z, %f, %o : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<4xi64>
  return %mm : tensor<2x16x384xf32>
}

// CHECK-LABEL: func.func @kernel_op
func.func @kernel_op(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: kiln.kernel @fused_add_tanh(%{{.*}}, %{{.*}}) {arena_offsets = array<i64: 0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: ^bb0(%[[X:.+]]: tensor<8xf32>, %[[Y:.+]]: tensor<8xf32>):
  // CHECK: kiln.add %[[X]], %[[Y]]
  // CHECK: kiln.yield %{{.*}} : tensor<8xf32>
  %r = kiln.kernel @fused_add_tanh(%a, %b) {arena_offsets = array<i64: 0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>):
    %s = kiln.add %x, %y : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    %t = kiln.tanh %s : tensor<8xf32>
    kiln.yield %t : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @all_reduce
// CHECK: kiln.all_reduce %arg0 : tensor<2x16x8xf32> -> tensor<2x16x8xf32>
func.func @all_reduce(%x: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %y = kiln.all_reduce %x : tensor<2x16x8xf32> -> tensor<2x16x8xf32>
  return %y : tensor<2x16x8xf32>
}

// The kernel plan: the target on a module, the precision on a function, a
// typed tile per kernel family and the reason as a string.
// CHECK-LABEL: module @kernel_plan
// CHECK-SAME: attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, l2_bytes = 52428800, tensor_cores = wgmma>}
module @kernel_plan attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, l2_bytes = 52428800, tensor_cores = wgmma>} {
  // CHECK-LABEL: func.func @tiles
  // CHECK-SAME: attributes {kiln.precision = #kiln.precision<fp16>}
  func.func @tiles(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>, %q: tensor<1x2x64x32xf16>) -> (tensor<64x64xf16>, tensor<64x64xf16>, tensor<1x2x64x32xf16>) attributes {kiln.precision = #kiln.precision<fp16>} {
    // CHECK: kiln.kernel @k0_matmul(%{{.*}}, %{{.*}}) {kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>, kiln.tile_reason = "why"}
    %0 = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>, kiln.tile_reason = "why"} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
    ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
      %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
      kiln.yield %m : tensor<64x64xf16>
    }
    // CHECK: kiln.kernel @k1b_matmul(%{{.*}}, %{{.*}}) {kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>, kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 64, bn = 256, consumers = 2, stages = 5, split_k = 1, pingpong = true>}
    %sm90 = kiln.kernel @k1b_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>, kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 64, bn = 256, consumers = 2, stages = 5, split_k = 1, pingpong = true>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
    ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
      %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
      kiln.yield %m : tensor<64x64xf16>
    }
    // CHECK: kiln.kernel @k1_matmul(%{{.*}}, %{{.*}}) {kiln.wgmma_tile = #kiln.wgmma_tile<bm = 64, bn = 64, bk = 64, warpgroups = 1, stages = 4>}
    %1 = kiln.kernel @k1_matmul(%a, %b) {kiln.wgmma_tile = #kiln.wgmma_tile<bm = 64, bn = 64, bk = 64, warpgroups = 1, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
    ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
      %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
      kiln.yield %m : tensor<64x64xf16>
    }
    // CHECK: kiln.kernel @k2_attention(%{{.*}}) {kiln.attention_tile = #kiln.attention_tile<warps = 2, row_fragments = 1, key_tile = 64>}
    %2 = kiln.kernel @k2_attention(%q) {kiln.attention_tile = #kiln.attention_tile<warps = 2, row_fragments = 1, key_tile = 64>} : (tensor<1x2x64x32xf16>) -> tensor<1x2x64x32xf16> {
    ^bb0(%x: tensor<1x2x64x32xf16>):
      %r = kiln.attention %x, %x, %x {bshd_output = false, causal = true, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16> -> tensor<1x2x64x32xf16>
      kiln.yield %r : tensor<1x2x64x32xf16>
    }
    return %0, %1, %2 : tensor<64x64xf16>, tensor<64x64xf16>, tensor<1x2x64x32xf16>
  }
  // The few-row GEMM's plan: tensor_cores is printed only when true.
  // CHECK-LABEL: func.func @skinny_tiles
  // CHECK: kiln.kernel @k0_matmul(%{{.*}}, %{{.*}}) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 4, tensor_cores = true>}
  // CHECK: kiln.kernel @k1_matmul(%{{.*}}, %{{.*}}) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 2>}
  // CHECK: kiln.kernel @k2_matmul(%{{.*}}, %{{.*}}) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 1>}
  func.func @skinny_tiles(%a: tensor<8x64xf16>, %b: tensor<64x64xf16>) -> (tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>) attributes {kiln.precision = #kiln.precision<fp16>} {
    %0 = kiln.kernel @k0_matmul(%a, %b) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 4, tensor_cores = true>} : (tensor<8x64xf16>, tensor<64x64xf16>) -> tensor<8x64xf16> {
    ^bb0(%x: tensor<8x64xf16>, %y: tensor<64x64xf16>):
      %m = kiln.matmul %x, %y : tensor<8x64xf16>, tensor<64x64xf16> -> tensor<8x64xf16>
      kiln.yield %m : tensor<8x64xf16>
    }
    %1 = kiln.kernel @k1_matmul(%a, %b) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 2, tensor_cores = false>} : (tensor<8x64xf16>, tensor<64x64xf16>) -> tensor<8x64xf16> {
    ^bb0(%x: tensor<8x64xf16>, %y: tensor<64x64xf16>):
      %m = kiln.matmul %x, %y : tensor<8x64xf16>, tensor<64x64xf16> -> tensor<8x64xf16>
      kiln.yield %m : tensor<8x64xf16>
    }
    %2 = kiln.kernel @k2_matmul(%a, %b) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 1>} : (tensor<8x64xf16>, tensor<64x64xf16>) -> tensor<8x64xf16> {
    ^bb0(%x: tensor<8x64xf16>, %y: tensor<64x64xf16>):
      %m = kiln.matmul %x, %y : tensor<8x64xf16>, tensor<64x64xf16> -> tensor<8x64xf16>
      kiln.yield %m : tensor<8x64xf16>
    }
    return %0, %1, %2 : tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>
  }
  // CHECK-LABEL: func.func @simt_tile
  // CHECK: kiln.kernel @k0_matmul(%{{.*}}, %{{.*}}) {kiln.gemm_tile = #kiln.gemm_tile<bm = 16, bn = 16, bk = 32, tm = 2, tn = 2, ks = 4>}
  func.func @simt_tile(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {kiln.precision = #kiln.precision<fp32>} {
    %0 = kiln.kernel @k0_matmul(%a, %b) {kiln.gemm_tile = #kiln.gemm_tile<bm = 16, bn = 16, bk = 32, tm = 2, tn = 2, ks = 4>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
    ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
      %m = kiln.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      kiln.yield %m : tensor<64x64xf32>
    }
    return %0 : tensor<64x64xf32>
  }
}
