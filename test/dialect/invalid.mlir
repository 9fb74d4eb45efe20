// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.add' op operand shapes [2, 3] and [4] are not broadcast-compatible}}
  %0 = kiln.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @add_wrong_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.add' op result shape [3, 3] is not the broadcast shape [2, 3]}}
  %0 = kiln.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @add_mixed_types(%a: tensor<3xf32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{'kiln.add' op operand element types 'f32' and 'i64' differ}}
  %0 = kiln.add %a, %b : tensor<3xf32>, tensor<3xi64> -> tensor<3xf32>
  return
}

// -----

func.func @compare_not_i1(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.equal' op result element type must be i1}}
  %0 = kiln.equal %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @and_not_i1(%a: tensor<3xi64>, %b: tensor<3xi64>) {
  // expected-error @+1 {{'kiln.and' op operands must be i1}}
  %0 = kiln.and %a, %b : tensor<3xi64>, tensor<3xi64> -> tensor<3xi1>
  return
}

// -----

func.func @reshape_size(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'kiln.reshape' op cannot reshape [2, 3] (6 elements) to [4] (4 elements)}}
  %0 = kiln.reshape %a : tensor<2x3xf32> -> tensor<4xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'kiln.transpose' op perm [0, 0] is not a permutation}}
  %0 = kiln.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @transpose_dims(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'kiln.transpose' op result dim 0 is 2, expected 3}}
  %0 = kiln.transpose %a {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kiln.slice' op dim 0 reads [4, 10] outside [0, 8)}}
  %0 = kiln.slice %a {starts = array<i64: 4>, steps = array<i64: 2>} : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @concat_sum(%a: tensor<2xi64>, %b: tensor<3xi64>) {
  // expected-error @+1 {{'kiln.concat' op operands sum to 5 along axis 0 but result has 6}}
  %0 = kiln.concat %a, %b {axis = 0 : i64} : tensor<2xi64>, tensor<3xi64> -> tensor<6xi64>
  return
}

// -----

func.func @expand_bad(%a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.expand' op cannot broadcast [3] to [2, 4]}}
  %0 = kiln.expand %a : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @gather_shape(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'kiln.gather' op result shape [3, 5] should be [3, 4]}}
  %0 = kiln.gather %t, %i {axis = 0 : i64} : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x5xf32>
  return
}

// -----

func.func @gather_axis(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'kiln.gather' op axis 2 is out of range for rank 2}}
  %0 = kiln.gather %t, %i {axis = 2 : i64} : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x5xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'kiln.matmul' op contraction dims differ: lhs [2, 3], rhs [4, 5]}}
  %0 = kiln.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'kiln.matmul' op result shape [2, 4] should be [2, 5]}}
  %0 = kiln.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op scale/bias shape [4] must be the normalized shape [8]}}
  %0 = kiln.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<2x8xf32>, tensor<4xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'kiln.softmax' op axis 2 is out of range for rank 2}}
  %0 = kiln.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @reduce_axes(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'kiln.reduce' op axes [1, 0] must be sorted, unique and < rank 2}}
  %0 = kiln.reduce <sum> %x {axes = array<i64: 1, 0>, keep_dims = false} : tensor<2x8xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_shape(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'kiln.reduce' op result shape [2] should be [2, 1]}}
  %0 = kiln.reduce <sum> %x {axes = array<i64: 1>, keep_dims = true} : tensor<2x8xf32> -> tensor<2xf32>
  return
}

// -----

func.func @shape_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'kiln.shape' op dims [1, 3) are not a range of the operand rank 2}}
  %0 = kiln.shape %x {start = 1 : i64, end = 3 : i64} : tensor<2x8xf32> -> tensor<2xi64>
  return
}

// -----

func.func @gather_nd_rank(%d: tensor<4x4xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{'kiln.gather_nd' op index tuples of length 3 exceed data rank 2}}
  %0 = kiln.gather_nd %d, %i {batch_dims = 0 : i64} : tensor<4x4xf32>, tensor<2x3xi64> -> tensor<2xf32>
  return
}

// -----

func.func @cast_saturate_integer(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kiln.cast' op 'saturate_finite' needs a floating-point result, got 'i32'}}
  %0 = kiln.cast %a {saturate_finite} : tensor<8xf32> -> tensor<8xi32>
  return
}

// -----

func.func @kernel_yield_types(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'kiln.kernel' op yielded types do not match the result types}}
  %r = kiln.kernel @k(%a) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    %c = kiln.cast %x : tensor<8xf32> -> tensor<8xi64>
    kiln.yield %c : tensor<8xi64>
  }
  return %r : tensor<8xf32>
}

// -----

func.func @kernel_offsets(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'kiln.kernel' op arena_offsets has 2 entries for 1 results}}
  %r = kiln.kernel @k(%a) {arena_offsets = array<i64: 0, 256>} : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    kiln.yield %x : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

func.func @kernel_args(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'kiln.kernel' op body argument type 'tensor<4xf32>' differs from operand type 'tensor<8xf32>'}}
  %r = kiln.kernel @k(%a) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<4xf32>):
    %y = kiln.expand %x : tensor<4xf32> -> tensor<2x4xf32>
    %z = kiln.reshape %y : tensor<2x4xf32> -> tensor<8xf32>
    kiln.yield %z : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

func.func @attention_rank(%q: tensor<2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'kiln.attention' op query, key and value must be rank 4 ([B, H, S, D]), got ranks 3, 4, 4}}
  %0 = kiln.attention %q, %k, %v {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_element_types(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'kiln.attention' op query, key, value and result must share one element type}}
  %0 = kiln.attention %q, %k, %v {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf16>
  return
}

// -----

func.func @attention_key_value(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'kiln.attention' op key [1, 2, 6, 8] and value [1, 2, 4, 8] do not match query [1, 2, 4, 8] (expected key [B, Hkv, Sk, D], value [B, Hkv, Sk, Dv])}}
  %0 = kiln.attention %q, %k, %v {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_gqa_heads(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'kiln.attention' op query heads (3) must be a multiple of key/value heads (2)}}
  %0 = kiln.attention %q, %k, %v {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x3x4x8xf32>
  return
}

// -----

func.func @attention_mask_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xf16>) {
  // expected-error @+1 {{'kiln.attention' op mask element type must be the query's}}
  %0 = kiln.attention %q, %k, %v, %m {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x4xf16> -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x1x4x4xf32>) {
  // expected-error @+1 {{'kiln.attention' op mask rank 5 exceeds 4}}
  %0 = kiln.attention %q, %k, %v, %m {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x1x4x4xf32> -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_mask_broadcast(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %m: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'kiln.attention' op mask [1, 1, 4, 4] does not broadcast to [B, Hq, Sq, Sk] = [1, 2, 4, 6]}}
  %0 = kiln.attention %q, %k, %v, %m {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_bshd_result(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'kiln.attention' op result shape [1, 2, 4, 8] must be [1, 4, 2, 8]}}
  %0 = kiln.attention %q, %k, %v {bshd_output = true, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_zero_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'kiln.attention' op scale must be finite and non-zero}}
  %0 = kiln.attention %q, %k, %v {bshd_output = false, causal = false, scale = 0.0 : f64, zero_masked_rows = false} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @all_reduce_type_changed(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'kiln.all_reduce' op result type 'tensor<2x8xf16>' differs from input type 'tensor<2x8xf32>'}}
  %0 = kiln.all_reduce %x : tensor<2x8xf32> -> tensor<2x8xf16>
  return
}

// -----

// The kernel plan: #kiln.target, the tiles, and the dialect's check of the kiln.* plan attributes.

// expected-error @+1 {{target name must not be empty}}
module @target_empty_name attributes {kiln.target = #kiln.target<name = "", arch = 90, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, tensor_cores = wgmma>} {}

// -----

// expected-error @+1 {{target arch must be an SM version such as 90, got 9}}
module @target_bad_arch attributes {kiln.target = #kiln.target<name = "sm_90", arch = 9, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, tensor_cores = wgmma>} {}

// -----

// expected-error @+1 {{target sm_count must be positive, got 0}}
module @target_no_sms attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 0, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, tensor_cores = wgmma>} {}

// -----

// expected-error @+1 {{target smem_per_block (300000) must be positive and at most smem_per_sm (233472)}}
module @target_smem_per_block_over_sm attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 300000, smem_per_sm = 233472, regs_per_sm = 65536, tensor_cores = wgmma>} {}

// -----

// expected-error @+1 {{target regs_per_sm must be positive, got 0}}
module @target_no_regs attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 0, tensor_cores = wgmma>} {}

// -----

// expected-error @+1 {{target l2_bytes must not be negative, got -1}}
module @target_negative_l2 attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, l2_bytes = -1, tensor_cores = wgmma>} {}

// -----

// expected-error @+1 {{target tensor_cores = wgmma needs arch 90 (wgmma is sm_90a only), got 80}}
module @target_wgmma_not_sm_90 attributes {kiln.target = #kiln.target<name = "sm_80", arch = 80, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, tensor_cores = wgmma>} {}

// -----

// expected-error @+1 {{target tensor_cores = mma_sync needs arch 80 or newer (cp.async, bf16 mma), got 75}}
module @target_mma_sync_before_sm_80 attributes {kiln.target = #kiln.target<name = "sm_75", arch = 75, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, tensor_cores = mma_sync>} {}

// -----

func.func @gemm_tile_zero(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{gemm_tile extents must be positive, got bm = 64, bn = 64, bk = 32, tm = 0, tn = 4, ks = 1}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.gemm_tile = #kiln.gemm_tile<bm = 64, bn = 64, bk = 32, tm = 0, tn = 4, ks = 1>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %m = kiln.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    kiln.yield %m : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

func.func @gemm_tile_micro_tile(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{gemm_tile micro-tile 3x4 must divide the block tile 64x64}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.gemm_tile = #kiln.gemm_tile<bm = 64, bn = 64, bk = 32, tm = 3, tn = 4, ks = 1>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %m = kiln.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    kiln.yield %m : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

func.func @gemm_tile_split_k(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{gemm_tile bk (32) must split evenly over ks (3) thread groups}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.gemm_tile = #kiln.gemm_tile<bm = 16, bn = 16, bk = 32, tm = 2, tn = 2, ks = 3>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %m = kiln.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    kiln.yield %m : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

func.func @gemm_tile_threads(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{gemm_tile needs 4096 threads per block, more than CUDA's 1024}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.gemm_tile = #kiln.gemm_tile<bm = 64, bn = 64, bk = 32, tm = 1, tn = 1, ks = 1>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %m = kiln.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    kiln.yield %m : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

func.func @mma_tile_extent(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{mma_tile bm, bn and bk must be in 1..1024, got 2048, 64, 32}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 2048, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @mma_tile_warps(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{mma_tile needs 1 to 32 warps (wm x wn), got 8 x 8}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 128, bn = 128, bk = 32, wm = 8, wn = 8, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @mma_tile_stages(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{mma_tile stages must be in 2..64, got 1}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 1>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @mma_tile_warp_tile(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{mma_tile bm (64) must be a multiple of 16 x wm (128) and bn (64) of 8 x wn (16)}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 8, wn = 2, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @mma_tile_swizzle_line(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{mma_tile bm, bn and bk must each be 16, 32 or a multiple of 64, got 96, 64, 32}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 96, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @mma_tile_copy_lines(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{mma_tile's 32 threads must be a multiple of bm/8 (128), bn/8 (8) and bk/8 (4)}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 1024, bn = 64, bk = 32, wm = 1, wn = 1, stages = 2>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @mma_tile_accumulators(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{mma_tile needs 2048 fp32 accumulators per thread, more than 128}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = #kiln.mma_tile<bm = 256, bn = 256, bk = 16, wm = 1, wn = 1, stages = 2>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @wgmma_tile_bk(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{wgmma_tile bk must be 64 (one 128-byte swizzle line), got 32}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.wgmma_tile = #kiln.wgmma_tile<bm = 128, bn = 128, bk = 32, warpgroups = 2, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @wgmma_tile_bm(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{wgmma_tile bm (64) must be a multiple of 64 x warpgroups (2, 1..8)}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.wgmma_tile = #kiln.wgmma_tile<bm = 64, bn = 128, bk = 64, warpgroups = 2, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @wgmma_tile_bn(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{wgmma_tile bn must be 64, 128, 192 or 256, got 96}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.wgmma_tile = #kiln.wgmma_tile<bm = 128, bn = 96, bk = 64, warpgroups = 2, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @wgmma_tile_accumulators(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{wgmma_tile needs 512 fp32 accumulators per thread, more than 128}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.wgmma_tile = #kiln.wgmma_tile<bm = 256, bn = 256, bk = 64, warpgroups = 1, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @wgmma_tile_stages(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{wgmma_tile stages must be in 3..64, got 2}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.wgmma_tile = #kiln.wgmma_tile<bm = 128, bn = 128, bk = 64, warpgroups = 2, stages = 2>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @attention_tile_warps(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{attention_tile warps must be in 1..32, got 0}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.attention_tile = #kiln.attention_tile<warps = 0, row_fragments = 1, key_tile = 64>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @attention_tile_row_fragments(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{attention_tile row_fragments must be in 1..8, got 9}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.attention_tile = #kiln.attention_tile<warps = 4, row_fragments = 9, key_tile = 64>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @attention_tile_key_tile(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{attention_tile key_tile must be a multiple of 16 up to 256, got 40}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.attention_tile = #kiln.attention_tile<warps = 4, row_fragments = 1, key_tile = 40>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

// expected-error @+1 {{'kiln.target' must be a #kiln.target, got "sm_90"}}
module @target_as_string attributes {kiln.target = "sm_90"} {}

// -----

// expected-error @+1 {{'kiln.precision' must be a #kiln.precision, got "tf32"}}
func.func @precision_as_string() attributes {kiln.precision = "tf32"} {
  return
}

// -----

// expected-error @+1 {{'kiln.tile_reason' must be a string, got 3 : i64}}
func.func @tile_reason_not_string() attributes {kiln.tile_reason = 3} {
  return
}

// -----

func.func @gemm_tile_as_array(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kiln.gemm_tile' must be a #kiln.gemm_tile, got array<i64: 64, 64, 32, 4, 4, 1>}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.gemm_tile = array<i64: 64, 64, 32, 4, 4, 1>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %m = kiln.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    kiln.yield %m : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

func.func @mma_tile_as_array(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{'kiln.mma_tile' must be a #kiln.mma_tile, got array<i64: 128, 128, 32, 2, 4, 4>}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.mma_tile = array<i64: 128, 128, 32, 2, 4, 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @wgmma_tile_is_mma_tile(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{'kiln.wgmma_tile' must be a #kiln.wgmma_tile, got #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.wgmma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @attention_tile_as_array(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{'kiln.attention_tile' must be a #kiln.attention_tile, got array<i64: 4, 2, 32>}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.attention_tile = array<i64: 4, 2, 32>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

// expected-error @+1 {{'kiln.mma_tile' belongs on a kiln.kernel, not on func.func}}
func.func @tile_not_on_kernel() attributes {kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>} {
  return
}

// -----

func.func @sm90_bn(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile bn must be 64, 128, 192 or 256, got 96}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 128, bn = 96, consumers = 2, stages = 4, split_k = 1, pingpong = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_consumers(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile consumers must be 1 or 2, got 3}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 128, bn = 128, consumers = 3, stages = 4, split_k = 1, pingpong = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_bm(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile bm (64) must be a multiple of 128 (64 x consumers), at most 256}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 64, bn = 128, consumers = 2, stages = 4, split_k = 1, pingpong = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_bm_pingpong(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile bm (96) must be a multiple of 64 (64 x 1 with pingpong), at most 256}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 96, bn = 128, consumers = 2, stages = 4, split_k = 1, pingpong = true>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_accumulators(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile needs 256 fp32 accumulators per consumer thread, more than 128}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 128, bn = 256, consumers = 1, stages = 4, split_k = 1, pingpong = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_stages(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile stages must be in 2..32, got 1}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 128, bn = 128, consumers = 2, stages = 1, split_k = 1, pingpong = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_split_k(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile split_k (16) must be in 1..8 (a portable cluster) and divide bm / 8 (8)}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 64, bn = 64, consumers = 1, stages = 4, split_k = 16, pingpong = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_split_k_smem(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile split-K partial tile of 135168 bytes does not fit in the 98304-byte pipeline}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 128, bn = 256, consumers = 2, stages = 2, split_k = 2, pingpong = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_pingpong_split(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_gemm_tile pingpong needs consumers = 2 and split_k = 1}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 64, bn = 128, consumers = 2, stages = 4, split_k = 2, pingpong = true>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_gemm_tile_as_array(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{'kiln.sm90_gemm_tile' must be a #kiln.sm90_gemm_tile, got array<i64: 128, 128>}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = array<i64: 128, 128>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @kv_cache_append_heads(%k: tensor<2x2x1x8xf16>, %c: tensor<6x4x16x8xf16>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.kv_cache_append' op key cache [6, 4, 16, 8] must be [blocks, 2, block size, 8]}}
  %0:2 = kiln.kv_cache_append %k, %k, %c, %c, %t, %l : tensor<2x2x1x8xf16>, tensor<2x2x1x8xf16>, tensor<6x4x16x8xf16>, tensor<6x4x16x8xf16>, tensor<2x3xi32>, tensor<2xi32> -> tensor<6x4x16x8xf16>, tensor<6x4x16x8xf16>
  return
}

// -----

func.func @kv_cache_append_table(%k: tensor<2x2x1x8xf16>, %c: tensor<6x2x16x8xf16>, %t: tensor<1x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.kv_cache_append' op block table [1, 3] must be [2, blocks per sequence]}}
  %0:2 = kiln.kv_cache_append %k, %k, %c, %c, %t, %l : tensor<2x2x1x8xf16>, tensor<2x2x1x8xf16>, tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>, tensor<1x3xi32>, tensor<2xi32> -> tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>
  return
}

// -----

func.func @kv_cache_append_type(%k: tensor<2x2x1x8xf32>, %c: tensor<6x2x16x8xf16>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.kv_cache_append' op caches and new keys/values must share one element type}}
  %0:2 = kiln.kv_cache_append %k, %k, %c, %c, %t, %l : tensor<2x2x1x8xf32>, tensor<2x2x1x8xf32>, tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>, tensor<2x3xi32>, tensor<2xi32> -> tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>
  return
}

// -----

func.func @kv_cache_append_values(%k: tensor<2x2x1x8xf16>, %v: tensor<2x2x3x8xf16>, %c: tensor<6x2x16x8xf16>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.kv_cache_append' op new values [2, 2, 3, 8] do not match new keys [2, 2, 1, 8]}}
  %0:2 = kiln.kv_cache_append %k, %v, %c, %c, %t, %l : tensor<2x2x1x8xf16>, tensor<2x2x3x8xf16>, tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>, tensor<2x3xi32>, tensor<2xi32> -> tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>
  return
}

// -----

func.func @paged_attention_lens(%q: tensor<2x4x1x8xf16>, %c: tensor<6x2x16x8xf16>, %t: tensor<2x3xi32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{'kiln.paged_attention' op sequence lengths [3] must be [2]}}
  %0 = kiln.paged_attention %q, %c, %c, %t, %l {scale = 1.0 : f64, bshd_output = false} : tensor<2x4x1x8xf16>, tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>, tensor<2x3xi32>, tensor<3xi32> -> tensor<2x4x1x8xf16>
  return
}

// -----

func.func @paged_attention_groups(%q: tensor<2x3x1x8xf16>, %c: tensor<6x2x16x8xf16>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.paged_attention' op query heads (3) must be a multiple of key/value heads (2)}}
  %0 = kiln.paged_attention %q, %c, %c, %t, %l {scale = 1.0 : f64, bshd_output = false} : tensor<2x3x1x8xf16>, tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x3x1x8xf16>
  return
}

// -----

func.func @paged_attention_result(%q: tensor<2x4x1x8xf16>, %c: tensor<6x2x16x8xf16>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.paged_attention' op result shape [2, 4, 1, 8] must be [2, 1, 4, 8]}}
  %0 = kiln.paged_attention %q, %c, %c, %t, %l {scale = 1.0 : f64, bshd_output = true} : tensor<2x4x1x8xf16>, tensor<6x2x16x8xf16>, tensor<6x2x16x8xf16>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x1x8xf16>
  return
}

// -----

// expected-error @+1 {{'kiln.role' of argument 0 must be a #kiln.input_role, got "seq_lens"}}
func.func @bad_role(%l: tensor<2xi32> {kiln.role = "seq_lens"}) {
  return
}

// -----

// expected-error @+1 {{target memory_bytes must not be negative, got -1}}
module @target_negative_memory attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, memory_bytes = -1, tensor_cores = wgmma>} {}

// -----

func.func @sm90_attention_tile_query_tile(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_attention_tile query_tile must be 128 or 192 (64 rows per consumer warpgroup), got 64}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 64, key_tile = 128, stages = 2, pingpong = false, persistent = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_attention_tile_key_tile(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_attention_tile key_tile must be 64, 128 or 192, got 96}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 128, key_tile = 96, stages = 2, pingpong = true, persistent = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_attention_tile_stages(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_attention_tile stages must be in 2..8, got 1}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 128, key_tile = 128, stages = 1, pingpong = true, persistent = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}

// -----

func.func @sm90_attention_tile_pingpong(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{sm90_attention_tile pingpong needs query_tile = 128 (two consumers), got 192}}
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 192, key_tile = 128, stages = 2, pingpong = true, persistent = false>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}
