// RUN: kiln-opt %s --split-input-file --kiln-select-tiles | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-select-tiles=num-sms=8 | FileCheck %s --check-prefix=SMALL
// RUN: not kiln-opt %s --split-input-file --kiln-select-tiles=num-sms=0 2>&1 | FileCheck %s --check-prefix=BAD

// A large GEMM keeps the largest tile: 1024x1024 / (64x64) = 256 blocks >= 132.
// CHECK-LABEL: func.func @large
// CHECK: kiln.kernel @k0_matmul({{.*}}) {kiln.gemm_tile = array<i64: 64, 64, 32, 4, 4, 1>}
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
// With 8 SMs, 64x64 (2x6 = 12 blocks) already fills the GPU.
// CHECK-LABEL: func.func @small_with_epilogue
// CHECK: kiln.gemm_tile = array<i64: 16, 16, 32, 2, 2, 4>
// SMALL-LABEL: func.func @small_with_epilogue
// SMALL: kiln.gemm_tile = array<i64: 64, 64, 32, 4, 4, 1>
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

// BAD: error: num-sms must be positive, got 0
