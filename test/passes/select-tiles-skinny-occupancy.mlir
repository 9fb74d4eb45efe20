// RUN: kiln-opt %s --split-input-file --kiln-select-tiles="skinny-tc-occupancy=3" | FileCheck %s --check-prefix=OCC3
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles="skinny-tc-occupancy=4" | FileCheck %s --check-prefix=OCC4
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles | FileCheck %s --check-prefix=DEFAULT
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles="skinny-tc-occupancy=5" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles="skinny-preload-rows=16" | FileCheck %s --check-prefix=PRE16
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles="skinny-preload-rows=8" | FileCheck %s --check-prefix=PRE8
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles="skinny-preload-rows=17" 2>&1 | FileCheck %s --check-prefix=BAD-ROWS

// kiln-select-tiles `skinny-tc-occupancy` (kiln-compile --skinny-tc-occupancy): a few-row GEMM on
// the tensor cores without the weight preload (here 8 and 16 rows: a batch-8 or -16 decode
// step) is planned for that many blocks per SM. The default plan's shared memory
// (smem_bytes::gemmSkinnyTc: 64 KiB of rings and A chunks of 2048 K rows, 1024 at 16 rows)
// holds 2 blocks on an sm_90 SM; the longest chunk with which 3 fit is 512 K rows at 8 rows and
// 256 at 16 (`a_chunk`), registers capped by `min_blocks_per_sm`. The split-K then counts 3
// blocks per SM: the 0.8B Llama's gate/up GEMM at batch 8 goes from 176 blocks (split-K 1) to
// 352. 4 blocks per SM do not fit (the rings alone are 64 KiB): the default plan, and the
// reason says why. The 2-row GEMM keeps the preload's plan.

// BAD: error: skinny-tc-occupancy must be 0 (the default plan) or 2..4 blocks per SM, got 5

// `skinny-preload-rows` (kiln-compile --skinny-preload-rows): the weight preload, which the
// default plan gives only where 3 blocks of the tensor-core path fit an SM (1-2 rows), up to
// that many rows: A in the longest chunk with which 3 fit (512 K rows at 8 rows, 256 at 16),
// planned for 2 blocks per SM (the split-K as the default plan's), one slot left for the next
// kernel. At 8, the 16-row GEMM keeps the default plan.
// BAD-ROWS: error: skinny-preload-rows must be 2..16 rows, got 17

// OCC3-LABEL: func.func @gate_up_8
// OCC3: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 2, tensor_cores = true, a_chunk = 512, min_blocks_per_sm = 3>,{{.*}} kiln.tile_reason = "skinny: 8 rows, 176 column tiles x split-K 2 = 352 blocks on 132 SMs (3 per SM), the weight read once (K=2048); tensor cores (8 rows >= 5: the CUDA cores' FMAs would bound it); A in chunks of at most 512 K rows for 3 blocks per SM (skinny-tc-occupancy); sm90:
// OCC4-LABEL: func.func @gate_up_8
// OCC4: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 1, tensor_cores = true>,{{.*}} kiln.tile_reason = "skinny: 8 rows, 176 column tiles x split-K 1 = 176 blocks on 132 SMs (2 per SM), the weight read once (K=2048); tensor cores (8 rows >= 5: the CUDA cores' FMAs would bound it); not 4 blocks per SM: no A chunk of at least 128 K rows fits their shared memory; sm90:
// DEFAULT-LABEL: func.func @gate_up_8
// DEFAULT: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 1, tensor_cores = true>,
// PRE16-LABEL: func.func @gate_up_8
// PRE16: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 1, tensor_cores = true, preload = true, a_chunk = 512>,{{.*}} kiln.tile_reason = "skinny: 8 rows, 176 column tiles x split-K 1 = 176 blocks on 132 SMs (2 per SM, one slot left for the next kernel), the weight read once (K=2048); tensor cores, a constant weight's first stages preloaded before the grid-dependency wait (skinny-weight-preload; A in chunks of 512 K rows so that 3 blocks fit an SM, skinny-preload-rows=16); sm90:
// PRE8-LABEL: func.func @gate_up_8
// PRE8: #kiln.skinny_gemm_tile<rows = 8, split_k = 1, tensor_cores = true, preload = true, a_chunk = 512>
func.func @gate_up_8(%a: tensor<8x2048xf16>, %b: tensor<2048x11264xf16>) -> tensor<8x11264xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<8x2048xf16>, tensor<2048x11264xf16>) -> tensor<8x11264xf16> {
  ^bb0(%x: tensor<8x2048xf16>, %y: tensor<2048x11264xf16>):
    %m = kiln.matmul %x, %y : tensor<8x2048xf16>, tensor<2048x11264xf16> -> tensor<8x11264xf16>
    kiln.yield %m : tensor<8x11264xf16>
  }
  return %r : tensor<8x11264xf16>
}

// -----

// OCC3-LABEL: func.func @qkv_16
// OCC3: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 16, split_k = 6, tensor_cores = true, a_chunk = 256, min_blocks_per_sm = 3>,{{.*}} kiln.tile_reason = "skinny: 16 rows, 48 column tiles x split-K 6 = 288 blocks on 132 SMs (3 per SM)
// DEFAULT-LABEL: func.func @qkv_16
// DEFAULT: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 16, split_k = 4, tensor_cores = true>,
// PRE16-LABEL: func.func @qkv_16
// PRE16: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 16, split_k = 4, tensor_cores = true, preload = true, a_chunk = 256>,
// PRE8-LABEL: func.func @qkv_16
// PRE8: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 16, split_k = 4, tensor_cores = true>,
func.func @qkv_16(%a: tensor<16x2048xf16>, %b: tensor<2048x3072xf16>) -> tensor<16x3072xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<16x2048xf16>, tensor<2048x3072xf16>) -> tensor<16x3072xf16> {
  ^bb0(%x: tensor<16x2048xf16>, %y: tensor<2048x3072xf16>):
    %m = kiln.matmul %x, %y : tensor<16x2048xf16>, tensor<2048x3072xf16> -> tensor<16x3072xf16>
    kiln.yield %m : tensor<16x3072xf16>
  }
  return %r : tensor<16x3072xf16>
}

// -----

// OCC3-LABEL: func.func @two_rows
// OCC3: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 2, split_k = 6, tensor_cores = true, preload = true>,
// PRE16-LABEL: func.func @two_rows
// PRE16: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 2, split_k = 6, tensor_cores = true, preload = true>,
func.func @two_rows(%a: tensor<2x1x2048xf16>, %b: tensor<2048x2048xf16>) -> tensor<2x1x2048xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<2x1x2048xf16>, tensor<2048x2048xf16>) -> tensor<2x1x2048xf16> {
  ^bb0(%x: tensor<2x1x2048xf16>, %y: tensor<2048x2048xf16>):
    %m = kiln.matmul %x, %y : tensor<2x1x2048xf16>, tensor<2048x2048xf16> -> tensor<2x1x2048xf16>
    kiln.yield %m : tensor<2x1x2048xf16>
  }
  return %r : tensor<2x1x2048xf16>
}
