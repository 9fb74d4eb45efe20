// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=sm90-attention=false | FileCheck %s

// (The Hopper tile beside it, on by default, is select-tiles-sm90-attention.mlir's subject.)
// kiln-select-tiles chooses the tile of the tensor-core attention kernel
// (#kiln.attention_tile): the largest query tile that still gives every SM
// a block. Batch 8, 32 heads, 512 queries, D = 128: 128-row tiles (4 warps x
// 2 row fragments, 32 keys) give 4 x 32 x 8 = 1024 blocks >= 132.
// CHECK-LABEL: func.func @large_d128
// CHECK: kiln.attention_tile = #kiln.attention_tile<warps = 4, row_fragments = 2, key_tile = 32>, kiln.tile_reason = "1024 blocks on 132 SMs, 128 query rows x 32 keys per tile"
func.func @large_d128(%q: tensor<8x32x512x128xf16>, %k: tensor<8x32x512x128xf16>, %v: tensor<8x32x512x128xf16>) -> tensor<8x32x512x128xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<8x32x512x128xf16>, tensor<8x32x512x128xf16>, tensor<8x32x512x128xf16>) -> tensor<8x32x512x128xf16> {
  ^bb0(%x: tensor<8x32x512x128xf16>, %y: tensor<8x32x512x128xf16>, %z: tensor<8x32x512x128xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = true, scale = 0.08838834764831845 : f64, zero_masked_rows = false} : tensor<8x32x512x128xf16>, tensor<8x32x512x128xf16>, tensor<8x32x512x128xf16> -> tensor<8x32x512x128xf16>
    kiln.yield %a : tensor<8x32x512x128xf16>
  }
  return %r : tensor<8x32x512x128xf16>
}

// -----

// Batch 1, 4 heads, 16 queries, D = 32 (GPT-2 tiny): no tile gives every SM a
// block, so the smallest, 32 rows (2 warps), 64 keys.
// CHECK-LABEL: func.func @small_d32
// CHECK: kiln.attention_tile = #kiln.attention_tile<warps = 2, row_fragments = 1, key_tile = 64>, kiln.tile_reason = "4 blocks on 132 SMs, 32 query rows x 64 keys per tile (fewer blocks than SMs: the smallest query tile)"
func.func @small_d32(%q: tensor<1x4x16x32xbf16>, %k: tensor<1x4x16x32xbf16>, %v: tensor<1x4x16x32xbf16>) -> tensor<1x4x16x32xbf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<1x4x16x32xbf16>, tensor<1x4x16x32xbf16>, tensor<1x4x16x32xbf16>) -> tensor<1x4x16x32xbf16> {
  ^bb0(%x: tensor<1x4x16x32xbf16>, %y: tensor<1x4x16x32xbf16>, %z: tensor<1x4x16x32xbf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = false, scale = 0.17677669529663687 : f64, zero_masked_rows = false} : tensor<1x4x16x32xbf16>, tensor<1x4x16x32xbf16>, tensor<1x4x16x32xbf16> -> tensor<1x4x16x32xbf16>
    kiln.yield %a : tensor<1x4x16x32xbf16>
  }
  return %r : tensor<1x4x16x32xbf16>
}

// -----

// Head dims above 128: one row fragment and 32 keys (registers); 64 rows give
// 2 x 16 x 8 = 256 blocks.
// CHECK-LABEL: func.func @d256
// CHECK: kiln.attention_tile = #kiln.attention_tile<warps = 4, row_fragments = 1, key_tile = 32>
func.func @d256(%q: tensor<8x16x128x256xf16>, %k: tensor<8x16x128x256xf16>, %v: tensor<8x16x128x256xf16>) -> tensor<8x16x128x256xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<8x16x128x256xf16>, tensor<8x16x128x256xf16>, tensor<8x16x128x256xf16>) -> tensor<8x16x128x256xf16> {
  ^bb0(%x: tensor<8x16x128x256xf16>, %y: tensor<8x16x128x256xf16>, %z: tensor<8x16x128x256xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = false, scale = 0.0625 : f64, zero_masked_rows = false} : tensor<8x16x128x256xf16>, tensor<8x16x128x256xf16>, tensor<8x16x128x256xf16> -> tensor<8x16x128x256xf16>
    kiln.yield %a : tensor<8x16x128x256xf16>
  }
  return %r : tensor<8x16x128x256xf16>
}

// -----

// The SM count is the module's target's: 16 heads of 448 queries at D = 64
// give 7 x 16 = 112 blocks of 64 rows, enough for sm_80's 108 SMs (not for
// sm_90's 132, which would take 32-row tiles).
// CHECK-LABEL: func.func @sm_80
// CHECK: kiln.attention_tile = #kiln.attention_tile<warps = 4, row_fragments = 1, key_tile = 64>, kiln.tile_reason = "112 blocks on 108 SMs, 64 query rows x 64 keys per tile"
module attributes {kiln.target = #kiln.target<name = "sm_80", arch = 80, sm_count = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, tensor_cores = mma_sync>} {
func.func @sm_80(%q: tensor<1x16x448x64xf16>, %k: tensor<1x16x448x64xf16>, %v: tensor<1x16x448x64xf16>) -> tensor<1x16x448x64xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<1x16x448x64xf16>, tensor<1x16x448x64xf16>, tensor<1x16x448x64xf16>) -> tensor<1x16x448x64xf16> {
  ^bb0(%x: tensor<1x16x448x64xf16>, %y: tensor<1x16x448x64xf16>, %z: tensor<1x16x448x64xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x16x448x64xf16>, tensor<1x16x448x64xf16>, tensor<1x16x448x64xf16> -> tensor<1x16x448x64xf16>
    kiln.yield %a : tensor<1x16x448x64xf16>
  }
  return %r : tensor<1x16x448x64xf16>
}
}

// -----

// The same attention without a target (sm_90, 132 SMs): 32-row tiles.
// CHECK-LABEL: func.func @default_target
// CHECK: kiln.attention_tile = #kiln.attention_tile<warps = 2, row_fragments = 1, key_tile = 64>, kiln.tile_reason = "224 blocks on 132 SMs, 32 query rows x 64 keys per tile"
func.func @default_target(%q: tensor<1x16x448x64xf16>, %k: tensor<1x16x448x64xf16>, %v: tensor<1x16x448x64xf16>) -> tensor<1x16x448x64xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<1x16x448x64xf16>, tensor<1x16x448x64xf16>, tensor<1x16x448x64xf16>) -> tensor<1x16x448x64xf16> {
  ^bb0(%x: tensor<1x16x448x64xf16>, %y: tensor<1x16x448x64xf16>, %z: tensor<1x16x448x64xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<1x16x448x64xf16>, tensor<1x16x448x64xf16>, tensor<1x16x448x64xf16> -> tensor<1x16x448x64xf16>
    kiln.yield %a : tensor<1x16x448x64xf16>
  }
  return %r : tensor<1x16x448x64xf16>
}

// -----

// fp32 attention runs on the CUDA-core kernel, whose shape is fixed: no tile.
// CHECK-LABEL: func.func @f32_no_tile
// CHECK-NOT: kiln.attention_tile
func.func @f32_no_tile(%q: tensor<1x4x16x32xf32>, %k: tensor<1x4x16x32xf32>, %v: tensor<1x4x16x32xf32>) -> tensor<1x4x16x32xf32> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>) -> tensor<1x4x16x32xf32> {
  ^bb0(%x: tensor<1x4x16x32xf32>, %y: tensor<1x4x16x32xf32>, %z: tensor<1x4x16x32xf32>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = false, scale = 0.17677669529663687 : f64, zero_masked_rows = false} : tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32> -> tensor<1x4x16x32xf32>
    kiln.yield %a : tensor<1x4x16x32xf32>
  }
  return %r : tensor<1x4x16x32xf32>
}

// -----

// A head dim that is not a multiple of 16 cannot use the tensor cores: no tile.
// CHECK-LABEL: func.func @d40_no_tile
// CHECK-NOT: kiln.attention_tile
func.func @d40_no_tile(%q: tensor<1x4x16x40xf16>, %k: tensor<1x4x16x40xf16>, %v: tensor<1x4x16x40xf16>) -> tensor<1x4x16x40xf16> {
  %r = kiln.kernel @k0_attention(%q, %k, %v) : (tensor<1x4x16x40xf16>, tensor<1x4x16x40xf16>, tensor<1x4x16x40xf16>) -> tensor<1x4x16x40xf16> {
  ^bb0(%x: tensor<1x4x16x40xf16>, %y: tensor<1x4x16x40xf16>, %z: tensor<1x4x16x40xf16>):
    %a = kiln.attention %x, %y, %z {bshd_output = false, causal = false, scale = 0.15811388300841897 : f64, zero_masked_rows = false} : tensor<1x4x16x40xf16>, tensor<1x4x16x40xf16>, tensor<1x4x16x40xf16> -> tensor<1x4x16x40xf16>
    kiln.yield %a : tensor<1x4x16x40xf16>
  }
  return %r : tensor<1x4x16x40xf16>
}
