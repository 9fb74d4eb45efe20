// RUN: kiln-opt %s --split-input-file --kiln-shard-tensor-parallel="tp-size=4 rank=1" --verify-diagnostics

// Fewer KV heads than ranks are replicated only when they divide the rank
// count (each replicated KV head then serves whole ranks): 3 KV heads, 4 ranks.
func.func @kv_heads_do_not_divide_ranks(%q: tensor<1x12x4x4xf32>, %k: tensor<1x3x4x4xf32>, %v: tensor<1x3x4x4xf32>) -> tensor<1x12x4x4xf32> {
  // expected-error @+1 {{unsupported: tensor-parallel sharding over tp-size 4: 3 KV heads are fewer than 4 ranks and do not divide 4 (a replicated KV head must serve whole ranks)}}
  %o = kiln.attention %q, %k, %v {bshd_output = false, causal = true, scale = 5.000000e-01 : f64, zero_masked_rows = false} : tensor<1x12x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32> -> tensor<1x12x4x4xf32>
  return %o : tensor<1x12x4x4xf32>
}
