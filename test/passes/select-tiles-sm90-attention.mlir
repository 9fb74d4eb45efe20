// RUN: kiln-opt %s --split-input-file --kiln-select-tiles | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=sm90-attention=false | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=sm90-attention-persistent=off | FileCheck %s --check-prefix=GRID
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=sm90-attention-persistent=on | FileCheck %s --check-prefix=PERS

// With sm90-attention (the default), kiln-select-tiles sets the Hopper attention tile
// (#kiln.sm90_attention_tile, cuda/attention_sm90.cuh) beside the mma.sync
// #kiln.attention_tile, and the reason names both. Batch 4, 32 heads, 2048
// queries, D = 128: 16 x 32 x 4 = 2048 blocks of 128 rows, 128 keys per tile; over 4 waves of
// query tiles, so sm90-attention-persistent=auto (the default) launches a block per tile.
// CHECK-LABEL: func.func @long_d128
// CHECK: kiln.attention_tile = #kiln.attention_tile<warps = 4, row_fragments = 2, key_tile = 32>, kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 128, key_tile = 128, stages = 2, pingpong = true, persistent = false>, kiln.tile_reason = "Hopper TMA + wgmma: 2048 query tiles as blocks (over 4 waves) on 132 SMs, 128 query rows x 128 keys per tile, 2 stages, ping-pong; else mma.sync: 2048 blocks on 132 SMs, 128 query rows x 32 keys per tile"
// PERS-LABEL: func.func @long_d128
// PERS: persistent = true>, kiln.tile_reason = "Hopper TMA + wgmma: 2048 query tiles walked by persistent blocks on 132 SMs
// sm90-attention=false: the mma.sync tile alone.
// OFF-LABEL: func.func @long_d128
// OFF-NOT: sm90_attention_tile
// OFF: kiln.attention_tile = #kiln.attention_tile<warps = 4, row_fragments = 2, key_tile = 32>, kiln.tile_reason = "2048 blocks on 132 SMs, 128 query rows x 32 keys per tile"
func.func @long_d128(%q: tensor<4x32x2048x128xf16>, %k: tensor<4x32x2048x128xf16>, %v: tensor<4x32x2048x128xf16>) -> tensor<4x32x2048x128xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<4x32x2048x128xf16>, tensor<4x32x2048x128xf16>, tensor<4x32x2048x128xf16>) -> tensor<4x32x2048x128xf16> {
  ^bb0(%x: tensor<4x32x2048x128xf16>, %y: tensor<4x32x2048x128xf16>, %z: tensor<4x32x2048x128xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = true, scale = 0.08838834764831845 : f64, zero_masked_rows = false} : tensor<4x32x2048x128xf16>, tensor<4x32x2048x128xf16>, tensor<4x32x2048x128xf16> -> tensor<4x32x2048x128xf16>
    kiln.yield %a : tensor<4x32x2048x128xf16>
  }
  return %r : tensor<4x32x2048x128xf16>
}

// -----

// A mask read per score needs S / 2 more registers: D = 128 with a mask takes 64 keys per
// tile and a third stage. 4 x 16 x 8 = 512 query tiles: at most 4 waves, so persistent blocks
// by default (auto), one per tile with sm90-attention-persistent=off.
// CHECK-LABEL: func.func @masked_d128
// CHECK: kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 128, key_tile = 64, stages = 3, pingpong = true, persistent = true>, kiln.tile_reason = "Hopper TMA + wgmma: 512 query tiles walked by persistent blocks (at most 4 waves) on 132 SMs
// GRID-LABEL: func.func @masked_d128
// GRID: kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 128, key_tile = 64, stages = 3, pingpong = true, persistent = false>, kiln.tile_reason = "Hopper TMA + wgmma: 512 query tiles as blocks on 132 SMs
func.func @masked_d128(%q: tensor<8x16x512x128xbf16>, %k: tensor<8x16x512x128xbf16>, %v: tensor<8x16x512x128xbf16>, %m: tensor<8x1x1x512xbf16>) -> tensor<8x16x512x128xbf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v, %m) : (tensor<8x16x512x128xbf16>, tensor<8x16x512x128xbf16>, tensor<8x16x512x128xbf16>, tensor<8x1x1x512xbf16>) -> tensor<8x16x512x128xbf16> {
  ^bb0(%x: tensor<8x16x512x128xbf16>, %y: tensor<8x16x512x128xbf16>, %z: tensor<8x16x512x128xbf16>, %w: tensor<8x1x1x512xbf16>):
    %a = kiln.attention %x, %y, %z, %w {bshd_output = false, causal = false, scale = 0.08838834764831845 : f64, zero_masked_rows = false} : tensor<8x16x512x128xbf16>, tensor<8x16x512x128xbf16>, tensor<8x16x512x128xbf16>, tensor<8x1x1x512xbf16> -> tensor<8x16x512x128xbf16>
    kiln.yield %a : tensor<8x16x512x128xbf16>
  }
  return %r : tensor<8x16x512x128xbf16>
}

// -----

// Batch 1, 12 heads, 128 queries (GPT-2 at 1x128): 12 query tiles of 128 rows for 132 SMs,
// so the mma.sync kernel's smaller tiles stay, and the reason says why.
// CHECK-LABEL: func.func @short_batch1
// CHECK-NOT: sm90_attention_tile
// CHECK: kiln.tile_reason = "mma.sync (12 query tiles of 128 rows on 132 SMs: fewer than one per SM): 
func.func @short_batch1(%q: tensor<1x12x128x64xf16>, %k: tensor<1x12x128x64xf16>, %v: tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>) -> tensor<1x12x128x64xf16> {
  ^bb0(%x: tensor<1x12x128x64xf16>, %y: tensor<1x12x128x64xf16>, %z: tensor<1x12x128x64xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = true, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16>, tensor<1x12x128x64xf16> -> tensor<1x12x128x64xf16>
    kiln.yield %a : tensor<1x12x128x64xf16>
  }
  return %r : tensor<1x12x128x64xf16>
}

// -----

// Head dim 256: 64 keys per tile (O alone is 128 registers).
// CHECK-LABEL: func.func @d256
// CHECK: kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 128, key_tile = 64, stages = 2, pingpong = true, persistent = false>
func.func @d256(%q: tensor<8x16x1024x256xf16>, %k: tensor<8x16x1024x256xf16>, %v: tensor<8x16x1024x256xf16>) -> tensor<8x16x1024x256xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<8x16x1024x256xf16>, tensor<8x16x1024x256xf16>, tensor<8x16x1024x256xf16>) -> tensor<8x16x1024x256xf16> {
  ^bb0(%x: tensor<8x16x1024x256xf16>, %y: tensor<8x16x1024x256xf16>, %z: tensor<8x16x1024x256xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = false, scale = 0.0625 : f64, zero_masked_rows = false} : tensor<8x16x1024x256xf16>, tensor<8x16x1024x256xf16>, tensor<8x16x1024x256xf16> -> tensor<8x16x1024x256xf16>
    kiln.yield %a : tensor<8x16x1024x256xf16>
  }
  return %r : tensor<8x16x1024x256xf16>
}

// -----

// A target without wgmma (sm_80): no Hopper tile, whatever the option says.
// CHECK-LABEL: func.func @sm_80
// CHECK-NOT: sm90_attention_tile
module attributes {kiln.target = #kiln.target<name = "sm_80", arch = 80, sm_count = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, tensor_cores = mma_sync>} {
func.func @sm_80(%q: tensor<4x32x2048x128xf16>, %k: tensor<4x32x2048x128xf16>, %v: tensor<4x32x2048x128xf16>) -> tensor<4x32x2048x128xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<4x32x2048x128xf16>, tensor<4x32x2048x128xf16>, tensor<4x32x2048x128xf16>) -> tensor<4x32x2048x128xf16> {
  ^bb0(%x: tensor<4x32x2048x128xf16>, %y: tensor<4x32x2048x128xf16>, %z: tensor<4x32x2048x128xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = true, scale = 0.08838834764831845 : f64, zero_masked_rows = false} : tensor<4x32x2048x128xf16>, tensor<4x32x2048x128xf16>, tensor<4x32x2048x128xf16> -> tensor<4x32x2048x128xf16>
    kiln.yield %a : tensor<4x32x2048x128xf16>
  }
  return %r : tensor<4x32x2048x128xf16>
}
}
