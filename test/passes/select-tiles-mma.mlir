// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=sm90-gemm=false | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles | FileCheck %s --check-prefix=SM90
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=wgmma=true | FileCheck %s --check-prefix=WGMMA
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=64x64x32x2x2x3 | FileCheck %s --check-prefix=FORCED
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=128x128 2>&1 | FileCheck %s --check-prefix=BAD-FORMAT
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=128x128x512x2x4x4 2>&1 | FileCheck %s --check-prefix=BAD-SMEM
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=256x256x16x1x1x2 2>&1 | FileCheck %s --check-prefix=BAD-ACC
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=16x8x16x1x1x2 2>&1 | FileCheck %s --check-prefix=BAD-LINE-N
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=64x64x48x2x2x3 2>&1 | FileCheck %s --check-prefix=BAD-LINE-K
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=mma-tile=16x8x16x1152921504606846976x1x2 2>&1 | FileCheck %s --check-prefix=BAD-WARPS

// The override is checked against the rules of #kiln.mma_tile (its verifier's
// message) and the target's shared memory per block (sm_90 without a target).
// BAD-FORMAT: invalid mma-tile '128x128': expected BMxBNxBKxWMxWNxSTAGES, six integers, e.g. 128x128x32x2x4x4
// BAD-SMEM: invalid mma-tile '128x128x512x2x4x4': its 1048576 bytes of shared memory (STAGES*(BM+BN)*BK*2) exceed sm_90's 232448 bytes per block
// BAD-ACC: invalid mma-tile '256x256x16x1x1x2': mma_tile needs 2048 fp32 accumulators per thread, more than 128
// BAD-LINE-N: invalid mma-tile '16x8x16x1x1x2': mma_tile bm, bn and bk must each be 16, 32 or a multiple of 64, got 16, 8, 16
// BAD-LINE-K: invalid mma-tile '64x64x48x2x2x3': mma_tile bm, bn and bk must each be 16, 32 or a multiple of 64, got 64, 64, 48
// BAD-WARPS: invalid mma-tile '16x8x16x1152921504606846976x1x2': mma_tile needs 1 to 32 warps (wm x wn), got 1152921504606846976 x 1

// A large 16-bit GEMM runs on the tensor cores; the reason says how the tile
// fills the GPU. 4096x3072: 128x128 tiles give 768 blocks, 3 waves of 264.
// CHECK-LABEL: func.func @large_f16
// CHECK: kiln.mma_tile = #kiln.mma_tile<bm = 128, bn = 128, bk = 32, wm = 2, wn = 4, stages = 4>, kiln.tile_reason = "768 blocks on 132 SMs, 3 wave(s), est. {{[0-9]+}} units (K=768)"
// CHECK-NOT: kiln.gemm_tile
// By default on sm_90 the Hopper TMA GEMM's tile, with the mma.sync tile beside it.
// SM90-LABEL: func.func @large_f16
// SM90: kiln.mma_tile = #kiln.mma_tile<bm = 128, bn = 128, bk = 32, wm = 2, wn = 4, stages = 4>, kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 64, bn = 256, consumers = 2, stages = 5, split_k = 1, pingpong = true>, kiln.tile_reason = "sm90: 768 blocks (persistent) on 132 SMs, 6 wave(s), est. {{[0-9.]+}} us (K=768); mma.sync if TMA cannot read an operand: 768 blocks on 132 SMs, 3 wave(s), est. {{[0-9]+}} units (K=768)"
// WGMMA-LABEL: func.func @large_f16
// WGMMA: kiln.tile_reason = "{{.+}}", kiln.wgmma_tile = #kiln.wgmma_tile<bm = 128, bn = {{192|256}}, bk = 64, warpgroups = 2, stages = 4>
// FORCED-LABEL: func.func @large_f16
// FORCED: kiln.mma_tile = #kiln.mma_tile<bm = 64, bn = 64, bk = 32, wm = 2, wn = 2, stages = 3>, kiln.tile_reason = "set by mma-tile"
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
// CHECK: kiln.mma_tile = #kiln.mma_tile<{{.+}}>, kiln.tile_reason = "{{.+}} (K=64, short K: >= 2 blocks per SM)"
// WGMMA-LABEL: func.func @short_k_bf16
// WGMMA: kiln.wgmma_tile = #kiln.wgmma_tile<bm = {{128, bn = 64|64, bn = 128|64, bn = 64}}, bk = 64, warpgroups = {{[12]}}, stages = 4>
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
// CHECK: kiln.gemm_tile = #kiln.gemm_tile<
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
// CHECK: kiln.mma_tile = #kiln.mma_tile<bm = 128, bn = 128, bk = 32, wm = 2, wn = 4, stages = 3>, kiln.tile_reason = "tf32: {{.+}}"
func.func @tf32(%a: tensor<4096x768xf32>, %b: tensor<768x3072xf32>) -> tensor<4096x3072xf32> attributes {kiln.precision = #kiln.precision<tf32>} {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<4096x768xf32>, tensor<768x3072xf32>) -> tensor<4096x3072xf32> {
  ^bb0(%x: tensor<4096x768xf32>, %y: tensor<768x3072xf32>):
    %m = kiln.matmul %x, %y : tensor<4096x768xf32>, tensor<768x3072xf32> -> tensor<4096x3072xf32>
    kiln.yield %m : tensor<4096x3072xf32>
  }
  return %r : tensor<4096x3072xf32>
}
