// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=skinny-tensor-cores=off | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles="skinny-tensor-cores=auto skinny-weight-preload=false" | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=skinny-weight-preload=false | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles="skinny-tensor-cores=on skinny-weight-preload=false" | FileCheck %s --check-prefix=ON
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles | FileCheck %s --check-prefix=PRE
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=skinny-tensor-cores=maybe 2>&1 | FileCheck %s --check-prefix=BAD

// Where kiln-select-tiles puts the few-row GEMM's multiply-adds (`skinny-tensor-cores`): off
// (the default) the CUDA cores; auto the tensor cores from kiln::kMinSkinnyTensorCoreRows (5)
// rows on; on the tensor cores for any rows. The reason says which and why; the split-K counts
// blocks per SM by the tensor-core path's registers and shared memory (2 on sm_90).
// `skinny-weight-preload` (the default; PRE): where an SM holds 3 blocks of the tensor-core path
// (1-4 rows), the tensor cores with the weight preloaded before the grid-dependency wait and one
// block slot per SM left for the next kernel; 8 rows (2 blocks per SM) keep the plan above.

// BAD: skinny-tensor-cores{{.*}}maybe

// 8 rows: the 0.8B Llama's QKV GEMM of a batch-8 decode step (48 column tiles at 2 blocks per SM:
// split-K 5 would fit the slots, 240 of 264, but not the clusters, 48 of at least 46 resident
// clusters of 5 in 8 GPCs; split-K 4: 48 of at least 60).
// OFF-LABEL: func.func @eight_rows
// OFF: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 4>,{{.*}} kiln.tile_reason = "skinny: 8 rows, 48 column tiles x split-K 4 = 192 blocks on 132 SMs (2 per SM), the weight read once (K=2048); CUDA cores (skinny-tensor-cores=off); sm90:
// AUTO-LABEL: func.func @eight_rows
// AUTO: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 4, tensor_cores = true>,{{.*}} kiln.tile_reason = "skinny: 8 rows, 48 column tiles x split-K 4 = 192 blocks on 132 SMs (2 per SM), the weight read once (K=2048); tensor cores (8 rows >= 5: the CUDA cores' FMAs would bound it); sm90:
// ON-LABEL: func.func @eight_rows
// ON: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 4, tensor_cores = true>,{{.*}} kiln.tile_reason = "{{.*}}; tensor cores (skinny-tensor-cores=on); sm90:
// PRE-LABEL: func.func @eight_rows
// PRE: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 4, tensor_cores = true>,{{.*}} kiln.tile_reason = "skinny: 8 rows, 48 column tiles x split-K 4 = 192 blocks on 132 SMs (2 per SM), the weight read once (K=2048); tensor cores (8 rows >= 5
func.func @eight_rows(%a: tensor<8x2048xf16>, %b: tensor<2048x3072xf16>) -> tensor<8x3072xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<8x2048xf16>, tensor<2048x3072xf16>) -> tensor<8x3072xf16> {
  ^bb0(%x: tensor<8x2048xf16>, %y: tensor<2048x3072xf16>):
    %m = kiln.matmul %x, %y : tensor<8x2048xf16>, tensor<2048x3072xf16> -> tensor<8x3072xf16>
    kiln.yield %m : tensor<8x3072xf16>
  }
  return %r : tensor<8x3072xf16>
}

// -----

// 2 rows (a batch of 2 single-token rows against a shared weight): auto keeps the CUDA cores,
// on takes the tensor cores with 2 blocks per SM instead of 3 (here split-K 8 fits either).
// OFF-LABEL: func.func @two_rows
// OFF: #kiln.skinny_gemm_tile<rows = 2, split_k = 8>,{{.*}} kiln.tile_reason = "skinny: 2 rows, 32 column tiles x split-K 8 = 256 blocks on 132 SMs (3 per SM), the weight read once (K=2048); CUDA cores (skinny-tensor-cores=off)
// AUTO-LABEL: func.func @two_rows
// AUTO: #kiln.skinny_gemm_tile<rows = 2, split_k = 8>,{{.*}} kiln.tile_reason = "{{.*}}; CUDA cores (2 rows < 5: bound by the weight's bandwidth); sm90:
// ON-LABEL: func.func @two_rows
// ON: #kiln.skinny_gemm_tile<rows = 2, split_k = 6, tensor_cores = true>,{{.*}} kiln.tile_reason = "skinny: 2 rows, 32 column tiles x split-K 6 = 192 blocks on 132 SMs (2 per SM), the weight read once (K=2048); tensor cores (skinny-tensor-cores=on); sm90:
// 3 blocks of 73760 bytes fit an SM: split-K 8 would fill 256 of the 264 slots the preload
// leaves, but at least 26 clusters of 8 (30 of 7) are resident, fewer than the 32 column tiles.
// PRE-LABEL: func.func @two_rows
// PRE: #kiln.skinny_gemm_tile<rows = 2, split_k = 6, tensor_cores = true, preload = true>,{{.*}} kiln.tile_reason = "skinny: 2 rows, 32 column tiles x split-K 6 = 192 blocks on 132 SMs (2 per SM, one slot left for the next kernel), the weight read once (K=2048); tensor cores, a constant weight's first stages preloaded before the grid-dependency wait (skinny-weight-preload);
func.func @two_rows(%a: tensor<2x1x2048xf16>, %b: tensor<2048x2048xf16>) -> tensor<2x1x2048xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<2x1x2048xf16>, tensor<2048x2048xf16>) -> tensor<2x1x2048xf16> {
  ^bb0(%x: tensor<2x1x2048xf16>, %y: tensor<2048x2048xf16>):
    %m = kiln.matmul %x, %y : tensor<2x1x2048xf16>, tensor<2048x2048xf16> -> tensor<2x1x2048xf16>
    kiln.yield %m : tensor<2x1x2048xf16>
  }
  return %r : tensor<2x1x2048xf16>
}

// -----

// A target whose blocks cannot hold the tensor-core path's 98432 bytes of shared memory
// (smem_bytes::gemmSkinnyTc(8)): the CUDA cores, whatever the option says.
// ON-LABEL: func.func @small_smem
// ON: #kiln.skinny_gemm_tile<rows = 8, split_k = {{[0-9]}}>,{{.*}} kiln.tile_reason = "{{.*}}; CUDA cores (the tensor-core path's 98432 bytes of shared memory do not fit the target's block);
module attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 65536, smem_per_sm = 66560, regs_per_sm = 65536, tensor_cores = wgmma>} {
func.func @small_smem(%a: tensor<8x2048xf16>, %b: tensor<2048x3072xf16>) -> tensor<8x3072xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<8x2048xf16>, tensor<2048x3072xf16>) -> tensor<8x3072xf16> {
  ^bb0(%x: tensor<8x2048xf16>, %y: tensor<2048x3072xf16>):
    %m = kiln.matmul %x, %y : tensor<8x2048xf16>, tensor<2048x3072xf16> -> tensor<8x3072xf16>
    kiln.yield %m : tensor<8x3072xf16>
  }
  return %r : tensor<8x3072xf16>
}
}
