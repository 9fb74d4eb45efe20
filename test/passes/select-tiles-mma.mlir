// RUN: kiln-opt %s --split-input-file --kiln-select-tiles | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=wgmma=true | FileCheck %s --check-prefix=WGMMA
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=64x64x32x2x2x3 | FileCheck %s --check-prefix=FORCED
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=128x128 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=128x128x512x2x4x4 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=256x256x16x1x1x2 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=16x8x16x1x1x2 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=64x64x48x2x2x3 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=16x8x16x1152921504606846976x1x2 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: invalid mma-tile '{{.+}}': expected BMxBNxBKxWMxWNxSTAGES with BM % (16*WM) == 0, BN % (8*WN) == 0, BM, BN and BK each 16, 32 or a multiple of 64 (at most 1024), 32*WM*WN threads a multiple of BM/8, BN/8 and BK/8, 2 <= STAGES <= 64, WM*WN <= 32, STAGES*(BM+BN)*BK*2 <= 227 KiB and at most 128 accumulators per thread ((BM/WM)*(BN/WN)/32)

// A large 16-bit GEMM runs on the tensor cores; the reason says how the tile
// fills the GPU. 4096x3072: 128x128 tiles give 768 blocks, 3 waves of 264.
// CHECK-LABEL: func.func @large_f16
// CHECK: kiln.mma_tile = array<i64: 128, 128, 32, 2, 4, 4>, kiln.tile_reason = "768 blocks on 132 SMs, 3 wave(s), est. {{[0-9]+}} units (K=768)"
// CHECK-NOT: kiln.gemm_tile
// WGMMA-LABEL: func.func @large_f16
// WGMMA: kiln.tile_reason = "{{.+}}", kiln.wgmma_tile = array<i64: 128, {{192|256}}, 64, 2, 4>
// FORCED-LABEL: func.func @large_f16
// FORCED: kiln.mma_tile = array<i64: 64, 64, 32, 2, 2, 3>, kiln.tile_reason = "set by mma-tile"
func.func @large_f16(%a: tensor<4096x768xf16>, %b: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%x: tensor<4096x768xf16>, %y: tensor<768x3072xf16>):
    %m = kiln.matmul %x, %y : tensor<4096x768xf16>, tensor<768x3072xf16> -> tensor<4096x3072xf16>
    kiln.yield %m : tensor<4096x3072xf16>
  }
  return %r : tensor<4096x3072xf16>
}

// -----

// Attention scores (K = 64): only tiles with two or more blocks per SM, so
// the fused epilogue's memory latency overlaps across blocks.
// CHECK-LABEL: func.func @short_k_bf16
// CHECK: kiln.mma_tile = array<i64: {{[0-9, ]+}}>, kiln.tile_reason = "{{.+}} (K=64, short K: >= 2 blocks per SM)"
// WGMMA-LABEL: func.func @short_k_bf16
// WGMMA: kiln.wgmma_tile = array<i64: {{128, 64|64, 128|64, 64}}, 64, {{[12]}}, 4>
func.func @short_k_bf16(%a: tensor<96x512x64xbf16>, %b: tensor<96x64x512xbf16>) -> tensor<96x512x512xbf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<96x512x64xbf16>, tensor<96x64x512xbf16>) -> tensor<96x512x512xbf16> {
  ^bb0(%x: tensor<96x512x64xbf16>, %y: tensor<96x64x512xbf16>):
    %m = kiln.matmul %x, %y : tensor<96x512x64xbf16>, tensor<96x64x512xbf16> -> tensor<96x512x512xbf16>
    kiln.yield %m : tensor<96x512x512xbf16>
  }
  return %r : tensor<96x512x512xbf16>
}

// -----

// fp32 GEMMs stay on the SIMT tile unless the function asks for tf32, which
// takes a TF32 tensor-core tile (3 stages at 128x128: 4-byte elements).
// CHECK-LABEL: func.func @fp32_stays_simt
// CHECK: kiln.gemm_tile = array<i64:
// CHECK-NOT: kiln.mma_tile
func.func @fp32_stays_simt(%a: tensor<4096x768xf32>, %b: tensor<768x3072xf32>) -> tensor<4096x3072xf32> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<4096x768xf32>, tensor<768x3072xf32>) -> tensor<4096x3072xf32> {
  ^bb0(%x: tensor<4096x768xf32>, %y: tensor<768x3072xf32>):
    %m = kiln.matmul %x, %y : tensor<4096x768xf32>, tensor<768x3072xf32> -> tensor<4096x3072xf32>
    kiln.yield %m : tensor<4096x3072xf32>
  }
  return %r : tensor<4096x3072xf32>
}

// -----

// CHECK-LABEL: func.func @tf32
// CHECK: kiln.mma_tile = array<i64: 128, 128, 32, 2, 4, 3>, kiln.tile_reason = "tf32: {{.+}}"
func.func @tf32(%a: tensor<4096x768xf32>, %b: tensor<768x3072xf32>) -> tensor<4096x3072xf32> attributes {kiln.precision = "tf32"} {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<4096x768xf32>, tensor<768x3072xf32>) -> tensor<4096x3072xf32> {
  ^bb0(%x: tensor<4096x768xf32>, %y: tensor<768x3072xf32>):
    %m = kiln.matmul %x, %y : tensor<4096x768xf32>, tensor<768x3072xf32> -> tensor<4096x3072xf32>
    kiln.yield %m : tensor<4096x3072xf32>
  }
  return %r : tensor<4096x3072xf32>
}
