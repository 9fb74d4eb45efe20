// RUN: not kiln-opt %s 2>&1 | FileCheck %s --check-prefix=BAD

// A bad attribute: bytes must be a positive multiple of 16.
// BAD: l2_prefetch bytes must be a positive multiple of 16, got 10
func.func @bad(%x: tensor<1x64xf16>) -> tensor<1x64xf16> {
  %r = kiln.kernel @k0_add(%x, %x) {kiln.l2_prefetch = #kiln.l2_prefetch<operand = 0, bytes = 10>} : (tensor<1x64xf16>, tensor<1x64xf16>) -> tensor<1x64xf16> {
  ^bb0(%p: tensor<1x64xf16>, %q: tensor<1x64xf16>):
    %s = kiln.add %p, %q : tensor<1x64xf16>, tensor<1x64xf16> -> tensor<1x64xf16>
    kiln.yield %s : tensor<1x64xf16>
  }
  return %r : tensor<1x64xf16>
}
