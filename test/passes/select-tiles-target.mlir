// RUN: kiln-opt %s --split-input-file --kiln-select-tiles --verify-diagnostics | FileCheck %s
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=wgmma=true 2>&1 | FileCheck %s --check-prefix=WGMMA

// wgmma tiles need a target with wgmma tensor cores (sm_90).
// WGMMA: error: wgmma=true needs a target with wgmma tensor cores (sm_90), but the target is sm_80

// Tensor-core tiles follow the module's #kiln.target (KilnTarget.cpp's
// table; kiln-compile sets the first --target's entry). sm_80 (A100): 108
// SMs, so 4096x3072 in 128x128 tiles is 768 blocks in 4 waves of 216.
// CHECK-LABEL: func.func @mma_sm_80
// CHECK: kiln.mma_tile = #kiln.mma_tile<bm = 128, bn = 128, bk = 32, wm = 2, wn = 4, stages = 4>, kiln.tile_reason = "768 blocks on 108 SMs, 4 wave(s), est. {{[0-9]+}} units (K=768)"
module attributes {kiln.target = #kiln.target<name = "sm_80", arch = 80, sm_count = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, tensor_cores = mma_sync>} {
func.func @mma_sm_80(%a: tensor<4096x768xf16>, %b: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%x: tensor<4096x768xf16>, %y: tensor<768x3072xf16>):
    %m = kiln.matmul %x, %y : tensor<4096x768xf16>, tensor<768x3072xf16> -> tensor<4096x3072xf16>
    kiln.yield %m : tensor<4096x3072xf16>
  }
  return %r : tensor<4096x3072xf16>
}
}

// -----

// Co-resident blocks are capped by the target's shared memory per SM. On
// sm_86 (100 KiB per SM) every TF32 tile but 32x32x64 (3 stages, 48 KiB)
// keeps one block per SM, so a short-K GEMM, which needs two, takes it (on
// sm_90 a larger tile qualifies).
// CHECK-LABEL: func.func @tf32_short_k_sm_86
// CHECK: kiln.mma_tile = #kiln.mma_tile<bm = 32, bn = 32, bk = 64, wm = 1, wn = 2, stages = 3>, kiln.tile_reason = "tf32: {{.+}} on 72 SMs, {{.+}} (K=64, short K: >= 2 blocks per SM)"
module attributes {kiln.target = #kiln.target<name = "sm_86", arch = 86, sm_count = 72, smem_per_block = 101376, smem_per_sm = 102400, regs_per_sm = 65536, tensor_cores = mma_sync>} {
func.func @tf32_short_k_sm_86(%a: tensor<1024x64xf32>, %b: tensor<64x1024xf32>) -> tensor<1024x1024xf32> attributes {kiln.precision = #kiln.precision<tf32>} {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<1024x64xf32>, tensor<64x1024xf32>) -> tensor<1024x1024xf32> {
  ^bb0(%x: tensor<1024x64xf32>, %y: tensor<64x1024xf32>):
    %m = kiln.matmul %x, %y : tensor<1024x64xf32>, tensor<64x1024xf32> -> tensor<1024x1024xf32>
    kiln.yield %m : tensor<1024x1024xf32>
  }
  return %r : tensor<1024x1024xf32>
}
}

// -----

// The same GEMM without a target (sm_90: 228 KiB per SM).
// CHECK-LABEL: func.func @tf32_short_k_default
// CHECK: kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 4>, kiln.tile_reason = "tf32: {{.+}} on 132 SMs
func.func @tf32_short_k_default(%a: tensor<1024x64xf32>, %b: tensor<64x1024xf32>) -> tensor<1024x1024xf32> attributes {kiln.precision = #kiln.precision<tf32>} {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<1024x64xf32>, tensor<64x1024xf32>) -> tensor<1024x1024xf32> {
  ^bb0(%x: tensor<1024x64xf32>, %y: tensor<64x1024xf32>):
    %m = kiln.matmul %x, %y : tensor<1024x64xf32>, tensor<64x1024xf32> -> tensor<1024x1024xf32>
    kiln.yield %m : tensor<1024x1024xf32>
  }
  return %r : tensor<1024x1024xf32>
}

// -----

// A 16-bit GEMM needs tensor cores; sm_75's are not the ones kiln's templates use.
module attributes {kiln.target = #kiln.target<name = "sm_75", arch = 75, sm_count = 40, smem_per_block = 65536, smem_per_sm = 65536, regs_per_sm = 65536, tensor_cores = none>} {
func.func @f16_on_sm_75(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{unsupported: the 'f16' GEMM of kernel @k0_matmul needs tensor cores (sm_80 or newer); the target is sm_75}}
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}
}
