// A tp-size below 1 is named as such (not as rank 0 being outside [0, tp-size)).
// RUN: kiln-opt %s --kiln-shard-tensor-parallel="tp-size=0" --verify-diagnostics
// RUN: kiln-opt %s --kiln-shard-tensor-parallel="tp-size=-3 rank=1" --verify-diagnostics

// expected-error @+1 {{kiln-shard-tensor-parallel: tp-size must be at least 1, got}}
func.func @tp_size_below_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
