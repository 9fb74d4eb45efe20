// RUN: kiln-opt %s --split-input-file --kiln-select-tiles --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles --kiln-select-tiles=sm90-gemm=false --verify-diagnostics | FileCheck %s --check-prefix=AGAIN

// The Hopper TMA GEMM's tile on sm_90 (the default target), split-K over a
// cluster for a batch-1 GEMM with few output tiles ([128x768]x[768x768]:
// 2 x 12 tiles of 64x64 on 132 SMs), with the mma.sync tile beside it.
// CHECK-LABEL: func.func @batch1_split_k
// CHECK: kiln.mma_tile = #kiln.mma_tile<{{.+}}>, kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 64, bn = 64, consumers = 1, stages = 4, split_k = {{[48]}}, pingpong = false>, kiln.tile_reason = "sm90: {{[0-9]+}} blocks in clusters of {{[48]}} on 132 SMs, 1 wave(s), est. {{[0-9.]+}} us (K=768); mma.sync if TMA cannot read an operand: {{.+}}"
// A second kiln-select-tiles plans the kernel again from scratch: with
// sm90-gemm=false no Hopper tile survives from the first.
// AGAIN-LABEL: func.func @batch1_split_k
// AGAIN-NOT: sm90_gemm_tile
// AGAIN: kiln.mma_tile
// AGAIN-NOT: sm90_gemm_tile
func.func @batch1_split_k(%a: tensor<128x768xf16>, %b: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16> {
  ^bb0(%x: tensor<128x768xf16>, %y: tensor<768x768xf16>):
    %m = kiln.matmul %x, %y : tensor<128x768xf16>, tensor<768x768xf16> -> tensor<128x768xf16>
    kiln.yield %m : tensor<128x768xf16>
  }
  return %r : tensor<128x768xf16>
}

// -----

// A hand-written plan does not survive kiln-select-tiles either.
// CHECK-LABEL: func.func @stale_plan
// CHECK-NOT: bm = 128, bn = 128, consumers = 2, stages = 2
// CHECK: kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<
// AGAIN-LABEL: func.func @stale_plan
// AGAIN-NOT: sm90_gemm_tile
func.func @stale_plan(%a: tensor<4096x768xf16>, %b: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) {kiln.sm90_gemm_tile = #kiln.sm90_gemm_tile<bm = 128, bn = 128, consumers = 2, stages = 2, split_k = 1, pingpong = false>} : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%x: tensor<4096x768xf16>, %y: tensor<768x3072xf16>):
    %m = kiln.matmul %x, %y : tensor<4096x768xf16>, tensor<768x3072xf16> -> tensor<4096x3072xf16>
    kiln.yield %m : tensor<4096x3072xf16>
  }
  return %r : tensor<4096x3072xf16>
}

// -----

// A target whose shared memory per block fits no Hopper candidate (the
// smallest needs 76864 bytes) keeps the mma.sync tile alone.
// CHECK-LABEL: func.func @small_smem
// CHECK-NOT: sm90_gemm_tile
// CHECK: kiln.mma_tile = #kiln.mma_tile<
// CHECK-NOT: sm90_gemm_tile
module attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 60000, smem_per_sm = 61024, regs_per_sm = 65536, tensor_cores = wgmma>} {
func.func @small_smem(%a: tensor<4096x768xf16>, %b: tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<4096x768xf16>, tensor<768x3072xf16>) -> tensor<4096x3072xf16> {
  ^bb0(%x: tensor<4096x768xf16>, %y: tensor<768x3072xf16>):
    %m = kiln.matmul %x, %y : tensor<4096x768xf16>, tensor<768x3072xf16> -> tensor<4096x3072xf16>
    kiln.yield %m : tensor<4096x3072xf16>
  }
  return %r : tensor<4096x3072xf16>
}
}

// -----

// No tensor-core tile at all fits 1000 bytes of shared memory: a clear
// error, not a tile read from past the candidate table.
module attributes {kiln.target = #kiln.target<name = "sm_90", arch = 90, sm_count = 132, smem_per_block = 1000, smem_per_sm = 2024, regs_per_sm = 65536, tensor_cores = wgmma>} {
func.func @tiny_smem(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  // expected-error @+1 {{unsupported: no tensor-core GEMM tile of kernel @k0_matmul fits the 1000 bytes of shared memory per block of target sm_90}}
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kiln.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    kiln.yield %m : tensor<64x64xf16>
  }
  return %r : tensor<64x64xf16>
}
}
