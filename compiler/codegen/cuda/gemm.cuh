// gemm.cuh - fp32 tiled GEMM building block (C = A * B, row-major).
//
// Shared-memory tiling: a block computes a BM x BN tile of C, each thread a
// TM x TN register micro-tile, stepping over K in BK slices staged through
// shared memory. With KS > 1 the block has KS groups of (BM/TM)*(BN/TN)
// threads that split each slice's k range (intra-block split-K: a K loop KS
// times shorter for the small GEMMs of batch-1 inference); the groups' partial
// sums are added in shared memory before the epilogue. The next slice is loaded from global
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
template <int BM, int BN, int BK, int TM, int TN, int KS, typename LoadA, typename LoadB,
          typename Epilogue>
__device__ __forceinline__ void gemmTileF32(int M, int N, int K, LoadA loadA, LoadB loadB,
                                            Epilogue epilogue) {
  static_assert(BK % KS == 0, "the K slice must split evenly over the K groups");
  constexpr int kGroupThreads = (BM / TM) * (BN / TN);
  constexpr int kThreads = kGroupThreads * KS;
  constexpr int kSliceK = BK / KS;
  constexpr int kAPerThread = (BM * BK + kThreads - 1) / kThreads;
  constexpr int kBPerThread = (BK * BN + kThreads - 1) / kThreads;
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int tid = threadIdx.x;
  const int group = tid / kGroupThreads, local = tid % kGroupThreads;
  const int tRow = local / (BN / TN), tCol = local % (BN / TN);
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
    for (int kk = 0; kk < kSliceK; ++kk) {
      const int k = group * kSliceK + kk;
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
  if constexpr (KS > 1) {
    // Groups 1..KS-1 hand their partial sums to group 0, which finishes.
    __shared__ float partial[KS - 1][BM][BN];
    if (group > 0) {
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          partial[group - 1][tRow * TM + i][tCol * TN + j] = acc[i][j];
    }
    __syncthreads();
    if (group > 0)
      return;
#pragma unroll
    for (int g = 0; g < KS - 1; ++g)
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] += partial[g][tRow * TM + i][tCol * TN + j];
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
