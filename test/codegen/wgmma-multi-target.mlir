// RUN: rm -rf %t && kiln-compile %s --wgmma --target sm_90,sm_80 -o %t.kiln --dump-cuda %t
// RUN: kiln-compile %s --wgmma --target sm_90,sm_80 --emit=kernels -o - | FileCheck %s --check-prefix=MULTI
// RUN: kiln-compile %s --wgmma --emit=kernels -o - | FileCheck %s --check-prefix=SM90
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// A wgmma kernel compiled for sm_90 and another target keeps an mma.sync path of the same block
// (128 x warpgroups threads) for the other one; its cp.async loaders need the threads to cover
// whole lines of the MN-major weight (BN / 8 chunks). 128x192 with 256 threads (24 chunks) made
// NVRTC fail (`THREADS % chunks`), so with a second target kiln-select-tiles
// (wgmma-mma-fallback) leaves such tiles out; sm_90 alone still gets 128x192 here.
// MULTI: kiln.wgmma_tile = #kiln.wgmma_tile<
// MULTI-NOT: bn = 192
// SM90: kiln.wgmma_tile = #kiln.wgmma_tile<bm = 128, bn = 192, bk = 64, warpgroups = 2, stages = 4>
module {
  func.func @main(%a: tensor<4096x768xf16> {kiln.name = "a"}, %b: tensor<768x2304xf16> {kiln.name = "b"}) -> (tensor<4096x2304xf16> {kiln.name = "y"}) {
    %m = kiln.matmul %a, %b : tensor<4096x768xf16>, tensor<768x2304xf16> -> tensor<4096x2304xf16>
    return %m : tensor<4096x2304xf16>
  }
}
