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
