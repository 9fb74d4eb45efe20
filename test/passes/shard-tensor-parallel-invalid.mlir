// RUN: kiln-opt %s --split-input-file --kiln-shard-tensor-parallel="tp-size=2 rank=0" --verify-diagnostics

func.func @heads_not_divisible(%q: tensor<1x3x4x4xf32>, %k: tensor<1x3x4x4xf32>, %v: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+1 {{unsupported: tensor-parallel sharding over tp-size 2: 3 query heads are not divisible by 2}}
  %o = kiln.attention %q, %k, %v {bshd_output = false, causal = true, scale = 5.000000e-01 : f64, zero_masked_rows = false} : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32> -> tensor<1x3x4x4xf32>
  return %o : tensor<1x3x4x4xf32>
}

// -----

func.func @kv_heads_not_divisible(%q: tensor<1x6x4x4xf32>, %k: tensor<1x3x4x4xf32>, %v: tensor<1x3x4x4xf32>) -> tensor<1x6x4x4xf32> {
  // expected-error @+1 {{unsupported: tensor-parallel sharding over tp-size 2: 3 KV heads are not divisible by 2}}
  %o = kiln.attention %q, %k, %v {bshd_output = false, causal = true, scale = 5.000000e-01 : f64, zero_masked_rows = false} : tensor<1x6x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32> -> tensor<1x6x4x4xf32>
  return %o : tensor<1x6x4x4xf32>
}

// -----

func.func @attention_without_projections(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{unsupported: tensor-parallel sharding: query/key/value do not come from constant-weight projections: a block argument is reached instead of a projection}}
  %o = kiln.attention %q, %k, %v {bshd_output = false, causal = true, scale = 5.000000e-01 : f64, zero_masked_rows = false} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return %o : tensor<1x2x4x4xf32>
}

// -----

func.func @mlp_width_not_divisible(%x: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %wu = kiln.constant dense<1.0> : tensor<4x5xf32>
  %wd = kiln.constant dense<2.0> : tensor<5x4xf32>
  %u = kiln.matmul %x, %wu : tensor<1x4x4xf32>, tensor<4x5xf32> -> tensor<1x4x5xf32>
  %a = kiln.relu %u : tensor<1x4x5xf32>
  // expected-error @+1 {{unsupported: tensor-parallel sharding over tp-size 2: MLP width 5 is not divisible by 2}}
  %d = kiln.matmul %a, %wd : tensor<1x4x5xf32>, tensor<5x4xf32> -> tensor<1x4x4xf32>
  return %d : tensor<1x4x4xf32>
}
