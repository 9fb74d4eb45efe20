// kiln-paged-kv-cache's option and size checks (block indices and positions are int32; a pool is
// a tensor like any other, at most 2^40 elements; the pool must hold one step).
// RUN: kiln-opt %s --verify-diagnostics --kiln-paged-kv-cache="max-seq-len=64 block-size=128"
// RUN: not kiln-opt %s --kiln-paged-kv-cache="max-seq-len=4294967296" 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not kiln-opt %s --kiln-paged-kv-cache="max-seq-len=64 num-blocks=1" 2>&1 | FileCheck %s --check-prefix=POOL
// RUN: not kiln-opt %s --kiln-paged-kv-cache="max-seq-len=2147483647 block-size=1" 2>&1 | FileCheck %s --check-prefix=HUGE
// POOL: error: kv-cache: num-blocks 1 cannot hold one step (2 sequences of 1 token in blocks of 16 need 2)
// HUGE: error: kv-cache: batch 2 x 2147483647 blocks per sequence exceeds the int32 block table
// BIG: error: kv-cache: max-seq-len (4294967296) must be in [1, 2147483647]{{$}}

// expected-error @+1 {{kv-cache: block-size (128) must be in [1, max-seq-len (64)] (kiln-pipeline's kv-block-size; kiln-compile shrinks its default to max-seq-len, a pipeline text does not)}}
func.func @sizes(%pos: tensor<2x1xi64> {kiln.name = "position_ids"}, %q: tensor<2x2x1x16xf32>) -> tensor<2x2x1x16xf32> attributes {kiln.causal_checked} {
  %o = kiln.attention %q, %q, %q {scale = 1.0 : f64, causal = true, zero_masked_rows = false, bshd_output = false} : tensor<2x2x1x16xf32>, tensor<2x2x1x16xf32>, tensor<2x2x1x16xf32> -> tensor<2x2x1x16xf32>
  return %o : tensor<2x2x1x16xf32>
}
