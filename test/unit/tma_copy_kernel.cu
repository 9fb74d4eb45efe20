// tma_copy_kernel.cu - the TMA kernel of the runtime's tensor-map GPU test, compiled to sm_90 PTX.
//
// kiln_tma_copy(x, y, xMap, yMap): block b copies the 64x64 f16 tile at rows [64b, 64b + 64) of
// x into the same tile of y, reading and writing only through the two tensor maps that follow
// the pointer parameters (the parameter order the artifact format fixes; the pointers themselves
// are unused). Load: cp.async.bulk.tensor global -> shared, completion counted on an mbarrier
// (expect_tx of the tile's 8192 bytes). Store: cp.async.bulk.tensor shared -> global, waited for
// with a bulk group. Both maps use the 128-byte swizzle, so the tile lands swizzled in shared
// memory and is un-swizzled on the way out. Built with nvcc -ptx -arch=sm_90 when nvcc is
// available and embedded into kiln_runtime_gpu_tests (TensorMapGpuTest.cpp). PTX ISA references:
// "Data Movement and Conversion Instructions: cp.async.bulk.tensor" and "mbarrier".

/// The device-side tensor map parameter (compiler/codegen/cuda/common.cuh's kiln::TensorMap).
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

constexpr int kTile = 64; // rows and f16 columns of one tile
constexpr unsigned kTileBytes = kTile * kTile * sizeof(unsigned short);

extern "C" __global__ void __launch_bounds__(128)
    kiln_tma_copy(const void *x, void *y, const __grid_constant__ TensorMap xMap,
                  const __grid_constant__ TensorMap yMap) {
  // The 128-byte swizzle repeats every 1024 bytes; the tile must start on such a boundary.
  __shared__ alignas(1024) unsigned char tile[kTileBytes];
  __shared__ alignas(8) unsigned long long barrier;
  const unsigned tileAddress = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const unsigned barrierAddress = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  const int row = blockIdx.x * kTile;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrierAddress));
    // Make the initialized barrier visible to the async proxy that completes it.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrierAddress),
                 "r"(kTileBytes)
                 : "memory");
    // Coordinates innermost first: column 0, row `row`.
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(tileAddress),
                 "l"(reinterpret_cast<unsigned long long>(&xMap)), "r"(0), "r"(row),
                 "r"(barrierAddress)
                 : "memory");
  }
  // Every thread waits for phase 0 of the barrier: the tile has arrived.
  unsigned done = 0;
  while (!done)
    asm volatile("{\n"
                 "  .reg .pred p;\n"
                 "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "  selp.u32 %0, 1, 0, p;\n"
                 "}"
                 : "=r"(done)
                 : "r"(barrierAddress), "r"(0)
                 : "memory");
  if (threadIdx.x == 0) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
            reinterpret_cast<unsigned long long>(&yMap)),
        "r"(0), "r"(row), "r"(tileAddress)
        : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    // The store must have finished (reading shared memory and writing global memory) before the
    // block exits.
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
  (void)x;
  (void)y;
}
