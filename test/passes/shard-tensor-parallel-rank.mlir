// RUN: kiln-opt %s --kiln-shard-tensor-parallel="tp-size=2 rank=2" --verify-diagnostics

// expected-error @+1 {{kiln-shard-tensor-parallel: rank 2 is not in [0, tp-size 2)}}
func.func @rank_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
