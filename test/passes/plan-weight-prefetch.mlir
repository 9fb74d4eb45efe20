// RUN: kiln-opt %s --split-input-file --kiln-plan-weight-prefetch | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-plan-weight-prefetch=max-bytes=4096 | FileCheck %s --check-prefix=CAP
// RUN: kiln-opt %s --split-input-file --kiln-plan-weight-prefetch | kiln-opt --split-input-file | FileCheck %s --check-prefix=ROUND

// kiln-plan-weight-prefetch: each few-row GEMM kernel whose weight preload is planned
// (#kiln.skinny_gemm_tile<..., preload = true>) gets the next such kernel's constant weight as a
// new input (its constant moved up to the kernel) and #kiln.l2_prefetch naming that input and its
// bytes (all of them, at most max-bytes, by default half the target's l2_bytes). A kernel
// between them (here an add) changes nothing; the last GEMM and kernels without the preload get
// nothing. The result still parses and verifies (ROUND).

// CHECK-LABEL: func.func @chain
// CHECK: %[[W1:.+]] = kiln.constant dense<2.000000e+00> : tensor<64x128xf16>
// CHECK: kiln.kernel @k0_matmul(%{{.+}}, %{{.+}}, %[[W1]]) {kiln.l2_prefetch = #kiln.l2_prefetch<operand = 2, bytes = 16384>
// CHECK-NEXT: ^bb0(%{{.+}}: tensor<1x64xf16>, %{{.+}}: tensor<64x64xf16>, %{{.+}}: tensor<64x128xf16>):
// CHECK: kiln.kernel @k1_add
// CHECK-NOT: l2_prefetch
// CHECK: %[[W2:.+]] = kiln.constant dense<3.000000e+00> : tensor<128x64xf16>
// CHECK: kiln.kernel @k2_matmul(%{{.+}}, %{{.+}}, %[[W2]]) {kiln.l2_prefetch = #kiln.l2_prefetch<operand = 2, bytes = 16384>
// CHECK: kiln.kernel @k3_matmul(%{{.+}}, %{{.+}}) {kiln.skinny_gemm_tile
// CHECK: kiln.kernel @k4_matmul(%{{.+}}, %{{.+}}) {kiln.skinny_gemm_tile
// CAP-LABEL: func.func @chain
// CAP: kiln.kernel @k0_matmul({{.+}}) {kiln.l2_prefetch = #kiln.l2_prefetch<operand = 2, bytes = 4096>
// CAP: kiln.kernel @k2_matmul({{.+}}) {kiln.l2_prefetch = #kiln.l2_prefetch<operand = 2, bytes = 4096>
// ROUND-LABEL: func.func @chain
// ROUND: kiln.l2_prefetch = #kiln.l2_prefetch<operand = 2, bytes = 16384>
module attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, l2_bytes = 52428800, tensor_cores = wgmma>} {
func.func @chain(%x: tensor<1x64xf16>) -> tensor<1x64xf16> {
  %w0 = kiln.constant dense<1.0> : tensor<64x64xf16>
  %a = kiln.kernel @k0_matmul(%x, %w0) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 1, split_k = 1, tensor_cores = true, preload = true>} : (tensor<1x64xf16>, tensor<64x64xf16>) -> tensor<1x64xf16> {
  ^bb0(%p: tensor<1x64xf16>, %q: tensor<64x64xf16>):
    %m = kiln.matmul %p, %q : tensor<1x64xf16>, tensor<64x64xf16> -> tensor<1x64xf16>
    kiln.yield %m : tensor<1x64xf16>
  }
  %b = kiln.kernel @k1_add(%a, %x) : (tensor<1x64xf16>, tensor<1x64xf16>) -> tensor<1x64xf16> {
  ^bb0(%p: tensor<1x64xf16>, %q: tensor<1x64xf16>):
    %s = kiln.add %p, %q : tensor<1x64xf16>, tensor<1x64xf16> -> tensor<1x64xf16>
    kiln.yield %s : tensor<1x64xf16>
  }
  %w1 = kiln.constant dense<2.0> : tensor<64x128xf16>
  %c = kiln.kernel @k2_matmul(%b, %w1) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 1, split_k = 1, tensor_cores = true, preload = true>} : (tensor<1x64xf16>, tensor<64x128xf16>) -> tensor<1x128xf16> {
  ^bb0(%p: tensor<1x64xf16>, %q: tensor<64x128xf16>):
    %m = kiln.matmul %p, %q : tensor<1x64xf16>, tensor<64x128xf16> -> tensor<1x128xf16>
    kiln.yield %m : tensor<1x128xf16>
  }
  %w2 = kiln.constant dense<3.0> : tensor<128x64xf16>
  %d = kiln.kernel @k3_matmul(%c, %w2) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 1, split_k = 1, tensor_cores = true, preload = true>} : (tensor<1x128xf16>, tensor<128x64xf16>) -> tensor<1x64xf16> {
  ^bb0(%p: tensor<1x128xf16>, %q: tensor<128x64xf16>):
    %m = kiln.matmul %p, %q : tensor<1x128xf16>, tensor<128x64xf16> -> tensor<1x64xf16>
    kiln.yield %m : tensor<1x64xf16>
  }
  // No preload: neither prefetches nor is prefetched.
  %w3 = kiln.constant dense<4.0> : tensor<64x64xf16>
  %e = kiln.kernel @k4_matmul(%d, %w3) {kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 1, split_k = 1, tensor_cores = true>} : (tensor<1x64xf16>, tensor<64x64xf16>) -> tensor<1x64xf16> {
  ^bb0(%p: tensor<1x64xf16>, %q: tensor<64x64xf16>):
    %m = kiln.matmul %p, %q : tensor<1x64xf16>, tensor<64x64xf16> -> tensor<1x64xf16>
    kiln.yield %m : tensor<1x64xf16>
  }
  return %e : tensor<1x64xf16>
}
}

