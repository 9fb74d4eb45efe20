// gemm.cuh - fp32 tiled GEMM building block (C = A * B, row-major).
//
// Shared-memory tiling: a block of (BM/TM)*(BN/TN) threads computes a BM x BN
// tile of C, each thread a TM x TN register micro-tile, stepping over K in BK
// slices staged through shared memory. The next slice is loaded from global
// memory into registers while the current one is multiplied (register
// double buffering), so global latency overlaps the FMAs. Accumulates in fp32
// (FFMA) in k order, so results do not depend on the tile shape. Bounds are
// checked: any M, N, K works. Operands arrive through loader functors and
// results leave through an epilogue functor, so producers (prologue) and
// pointwise consumers (epilogue) fuse into the GEMM. Tile shapes are chosen per GEMM by
// the kiln-select-tiles pass.
#pragma once

namespace kiln {

/// Computes the (blockIdx.y, blockIdx.x) tile of A[M,K] * B[K,N]. Operands
/// are read through loaders, `loadA(m, k)` and `loadB(k, n)` (a plain load,
/// or fused producers: transposes, slices, scaling, computed per element), and
/// every result goes to `epilogue(m, n, acc)`, which stores it (plain GEMM) or
/// first applies fused pointwise ops (bias, activation, residual). Loaders
/// are called only for in-range indices. Launch with blockDim.x ==
/// (BM/TM)*(BN/TN) and blockIdx.x/y over N/BN and M/BM tiles.
template <int BM, int BN, int BK, int TM, int TN, typename LoadA, typename LoadB,
          typename Epilogue>
__device__ __forceinline__ void gemmTileF32(int M, int N, int K, LoadA loadA, LoadB loadB,
                                            Epilogue epilogue) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
  constexpr int kAPerThread = (BM * BK + kThreads - 1) / kThreads;
  constexpr int kBPerThread = (BK * BN + kThreads - 1) / kThreads;
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int tid = threadIdx.x;
  const int tRow = tid / (BN / TN), tCol = tid % (BN / TN);
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      acc[i][j] = 0.0f;

  // Global -> registers for the K slice starting at k0 (zero outside A, B).
  float aReg[kAPerThread], bReg[kBPerThread];
  auto loadSlice = [&](int k0) {
#pragma unroll
    for (int r = 0; r < kAPerThread; ++r) {
      int e = tid + r * kThreads, m = e / BK, k = e % BK;
      int gm = rowBase + m, gk = k0 + k;
      aReg[r] = (e < BM * BK && gm < M && gk < K) ? loadA(gm, gk) : 0.0f;
    }
#pragma unroll
    for (int r = 0; r < kBPerThread; ++r) {
      int e = tid + r * kThreads, k = e / BN, n = e % BN;
      int gk = k0 + k, gn = colBase + n;
      bReg[r] = (e < BK * BN && gk < K && gn < N) ? loadB(gk, gn) : 0.0f;
    }
  };
  loadSlice(0);
  for (int k0 = 0; k0 < K; k0 += BK) {
    // Registers -> shared memory (A transposed to As[k][m]).
#pragma unroll
    for (int r = 0; r < kAPerThread; ++r) {
      int e = tid + r * kThreads;
      if (e < BM * BK)
        As[e % BK][e / BK] = aReg[r];
    }
#pragma unroll
    for (int r = 0; r < kBPerThread; ++r) {
      int e = tid + r * kThreads;
      if (e < BK * BN)
        Bs[e / BN][e % BN] = bReg[r];
    }
    __syncthreads();
    if (k0 + BK < K)
      loadSlice(k0 + BK); // in flight while this slice is multiplied
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        a[i] = As[k][tRow * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j)
        b[j] = Bs[k][tCol * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int gm = rowBase + tRow * TM + i;
    if (gm >= M)
      continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      int gn = colBase + tCol * TN + j;
      if (gn < N)
        epilogue(gm, gn, acc[i][j]);
    }
  }
}

} // namespace kiln
