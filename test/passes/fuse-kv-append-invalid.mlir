// RUN: kiln-opt %s --kiln-fuse-kv-append --verify-diagnostics

// A function already planned (kernels with arena_offsets): a merged kernel would lose the plan,
// so the pass refuses it (it runs between kiln-outline-kernels and kiln-plan-memory).
// expected-error @+1 {{kernel @k0 already has arena_offsets: kiln-fuse-kv-append runs after kiln-outline-kernels and before kiln-plan-memory}}
func.func @planned(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.kernel @k0(%x) {arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %t = kiln.tanh %v : tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
