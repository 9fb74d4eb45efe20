// The decode kernels (cuda/decode_attention.cuh) take head dims that are multiples of 16 up to
// 256 with D == Dv; anything else is refused at code generation, naming the kernel.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not kiln-compile %s --kv-cache --max-seq-len 40 --precision fp16 -o %t/m.kiln 2>&1 | FileCheck %s
// CHECK: error: unsupported: KV cache head dims D=8, Dv=8 in kernel @k{{[0-9]+}}_{{[a-z_]*}}kv_cache_append{{[a-z_]*}} (the decode kernels take D == Dv, a multiple of 16 up to 256)
// CHECK: kiln-compile: error: CUDA code generation failed for
// RUN: test ! -e %t/m.kiln
func.func @step(%ids: tensor<2x3xi64> {kiln.name = "input_ids"},
                %pos: tensor<2x3xi64> {kiln.name = "position_ids"},
                %q: tensor<2x4x3x8xf32> {kiln.name = "q"},
                %k: tensor<2x2x3x8xf32> {kiln.name = "k"},
                %v: tensor<2x2x3x8xf32> {kiln.name = "v"})
    -> (tensor<2x3x4x8xf32> {kiln.name = "out"}) {
  %o = kiln.attention %q, %k, %v {scale = 0.35355339059327373 : f64, causal = true, zero_masked_rows = true, bshd_output = true} : tensor<2x4x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32> -> tensor<2x3x4x8xf32>
  return %o : tensor<2x3x4x8xf32>
}
