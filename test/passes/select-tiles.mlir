// RUN: kiln-opt %s --split-input-file --kiln-select-tiles | FileCheck %s

// Without a kiln.target the module is planned for the sm_90 entry of the
// target table (132 SMs).

// A large GEMM keeps the largest tile: 1024x1024 / (64x64) = 256 blocks >= 132.
// CHECK-LABEL: func.func @large
// CHECK: kiln.kernel @k0_matmul({{.*}}) {kiln.gemm_tile = #kiln.gemm_tile<bm = 64, bn = 64, bk = 32, tm = 4, tn = 4, ks = 1>}
func.func @large(%a: tensor<1024x64xf32>, %b: tensor<64x1024xf32>) -> tensor<1024x1024xf32> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<1024x64xf32>, tensor<64x1024xf32>) -> tensor<1024x1024xf32> {
  ^bb0(%x: tensor<1024x64xf32>, %y: tensor<64x1024xf32>):
    %m = kiln.matmul %x, %y : tensor<1024x64xf32>, tensor<64x1024xf32> -> tensor<1024x1024xf32>
    kiln.yield %m : tensor<1024x1024xf32>
  }
  return %r : tensor<1024x1024xf32>
}

// -----

// Batch-1 transformer GEMMs are small: 128x384 gives 48 blocks at 32x32 and
// 96 at 16x32, both < 132; 16x16 gives 192 -> 16x16.
// CHECK-LABEL: func.func @small_with_epilogue
// CHECK: kiln.gemm_tile = #kiln.gemm_tile<bm = 16, bn = 16, bk = 32, tm = 2, tn = 2, ks = 4>
func.func @small_with_epilogue(%a: tensor<128x128xf32>, %b: tensor<128x384xf32>, %c: tensor<384xf32>) -> tensor<128x384xf32> {
  %r = kiln.kernel @k0_fused_matmul_add(%a, %b, %c) : (tensor<128x128xf32>, tensor<128x384xf32>, tensor<384xf32>) -> tensor<128x384xf32> {
  ^bb0(%x: tensor<128x128xf32>, %y: tensor<128x384xf32>, %z: tensor<384xf32>):
    %m = kiln.matmul %x, %y : tensor<128x128xf32>, tensor<128x384xf32> -> tensor<128x384xf32>
    %s = kiln.add %m, %z : tensor<128x384xf32>, tensor<384xf32> -> tensor<128x384xf32>
    kiln.yield %s : tensor<128x384xf32>
  }
  return %r : tensor<128x384xf32>
}

// -----

// The tile follows the module's target: with 8 SMs, 64x64 (2x6 = 12 blocks)
// already fills the GPU.
// CHECK-LABEL: func.func @small_on_8_sms
// CHECK: kiln.gemm_tile = #kiln.gemm_tile<bm = 64, bn = 64, bk = 32, tm = 4, tn = 4, ks = 1>
module attributes {kiln.target = #kiln.target<name = "test_8_sms", arch = 90, sm_count = 8, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, tensor_cores = wgmma>} {
func.func @small_on_8_sms(%a: tensor<128x128xf32>, %b: tensor<128x384xf32>) -> tensor<128x384xf32> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<128x128xf32>, tensor<128x384xf32>) -> tensor<128x384xf32> {
  ^bb0(%x: tensor<128x128xf32>, %y: tensor<128x384xf32>):
    %m = kiln.matmul %x, %y : tensor<128x128xf32>, tensor<128x384xf32> -> tensor<128x384xf32>
    kiln.yield %m : tensor<128x384xf32>
  }
  return %r : tensor<128x384xf32>
}
}

// -----

// sm_80 (A100, 108 SMs): 128x448 gives 112 blocks at 16x32, >= 108 -> 16x32
// (on sm_90's 132 SMs it takes 16x16).
// CHECK-LABEL: func.func @small_on_sm_80
// CHECK: kiln.gemm_tile = #kiln.gemm_tile<bm = 16, bn = 32, bk = 32, tm = 1, tn = 2, ks = 1>
module attributes {kiln.target = #kiln.target<name = "sm_80", arch = 80, sm_count = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, tensor_cores = mma_sync>} {
func.func @small_on_sm_80(%a: tensor<128x128xf32>, %b: tensor<128x448xf32>) -> tensor<128x448xf32> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<128x128xf32>, tensor<128x448xf32>) -> tensor<128x448xf32> {
  ^bb0(%x: tensor<128x128xf32>, %y: tensor<128x448xf32>):
    %m = kiln.matmul %x, %y : tensor<128x128xf32>, tensor<128x448xf32> -> tensor<128x448xf32>
    kiln.yield %m : tensor<128x448xf32>
  }
  return %r : tensor<128x448xf32>
}
}

// -----

// The same GEMM without a target: sm_90's 132 SMs.
// CHECK-LABEL: func.func @small_on_default_target
// CHECK: kiln.gemm_tile = #kiln.gemm_tile<bm = 16, bn = 16, bk = 32, tm = 2, tn = 2, ks = 4>
func.func @small_on_default_target(%a: tensor<128x128xf32>, %b: tensor<128x448xf32>) -> tensor<128x448xf32> {
  %r = kiln.kernel @k0_matmul(%a, %b) : (tensor<128x128xf32>, tensor<128x448xf32>) -> tensor<128x448xf32> {
  ^bb0(%x: tensor<128x128xf32>, %y: tensor<128x448xf32>):
    %m = kiln.matmul %x, %y : tensor<128x128xf32>, tensor<128x448xf32> -> tensor<128x448xf32>
    kiln.yield %m : tensor<128x448xf32>
  }
  return %r : tensor<128x448xf32>
}

// -----

// Kernels without a GEMM get no tile.
// CHECK-LABEL: func.func @no_gemm
// CHECK-NOT: kiln.gemm_tile
func.func @no_gemm(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = kiln.kernel @k0_softmax(%a) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    %s = kiln.softmax %x {axis = 0 : i64} : tensor<8xf32>
    kiln.yield %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
