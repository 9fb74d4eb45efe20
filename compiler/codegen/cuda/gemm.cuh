// gemm.cuh - fp32 tiled GEMM building block (C = A * B, row-major).
//
// Classic shared-memory tiling: a 256-thread block computes a BM x BN tile
// of C, each thread a TM x TN register micro-tile, stepping over K in BK
// slices staged through shared memory. Accumulates in fp32 (FFMA). Bounds
// are checked, so any M, N, K works. Results leave through an epilogue
// functor, so pointwise consumers fuse into the GEMM. This is the simple GEMM of the first
// vertical slice; tensor-core (mma.sync / wgmma) variants come later.
#pragma once

namespace kiln {

/// Computes the (blockIdx.y, blockIdx.x) tile of A[M,K] * B[K,N] (row-major,
/// leading dims lda, ldb in elements) and hands every element to the
/// epilogue as `epilogue(m, n, acc)`, which stores it (plain GEMM) or first
/// applies fused pointwise ops (bias, activation, residual). Launch with
/// blockDim.x == (BM/TM)*(BN/TN) and blockIdx.x/y over N/BN and M/BM tiles.
template <int BM, int BN, int BK, int TM, int TN, typename Epilogue>
__device__ __forceinline__ void gemmTileF32(const float *__restrict__ A,
                                            const float *__restrict__ B, int M, int N, int K,
                                            long long lda, long long ldb, Epilogue epilogue) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
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

  for (int k0 = 0; k0 < K; k0 += BK) {
    // Stage A[rowBase:+BM, k0:+BK] transposed into As[k][m], B into Bs[k][n].
    for (int e = tid; e < BM * BK; e += kThreads) {
      int m = e / BK, k = e % BK;
      int gm = rowBase + m, gk = k0 + k;
      As[k][m] = (gm < M && gk < K) ? A[gm * lda + gk] : 0.0f;
    }
    for (int e = tid; e < BK * BN; e += kThreads) {
      int k = e / BN, n = e % BN;
      int gk = k0 + k, gn = colBase + n;
      Bs[k][n] = (gk < K && gn < N) ? B[gk * ldb + gn] : 0.0f;
    }
    __syncthreads();
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
