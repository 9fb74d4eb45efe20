// gemm_skinny.cuh - GEMMs of a few rows (decode steps) that stream the weight once.
//
// kiln::gemmSkinny computes C[R, N] = A[R, K] x B[K, N] for R <= 16 rows (the tokens of a decode
// step, batch x 1, flattened when B is shared by the batch) with B row-major (N contiguous: the
// layout of exported Linear weights). Such a GEMM moves R x K + K x N elements and does R x N x K
// multiply-adds: it is bound by reading B, so the kernel is built to read every element of B
// exactly once, in full 128-byte lines, with many loads in flight per SM. The multiply-adds run
// on the CUDA cores in fp32 (TC = false) or on the tensor cores (TC = true, below). On the CUDA
// cores each 8-byte load of B costs R x 4 FMAs plus R reads of A from shared memory, so from a
// few rows on the issue rate, not the bandwidth, bounds the kernel (H200, 0.8B Llama decode: at
// R = 8 every GEMM took about twice its R = 1 time).
//
// Work split on the CUDA cores (256 threads, 64 columns per block):
//  - blockIdx.x / SPLITK picks 64 columns n0..n0+63; the SPLITK blocks of one thread-block cluster
//    (__cluster_dims__(SPLITK, 1, 1), set by the code generator) share them and split K;
//  - thread t owns columns n0 + 4 (t % 16) .. +3 and every 16th K row from t / 16: a warp reads
//    two whole 128-byte lines of B per 8-byte load; each thread issues its loads in batches of
//    skinny::kUnroll and keeps two batches in flight (a software pipeline in registers);
//  - A is staged in shared memory as fp32, smem_bytes::skinnyChunk(R) K rows at a time (the
//    first batch of B already in flight, skinny::kStageLoads loads of A in flight per thread),
//    transposed ([k][r]) so one thread reads the R values of its row k in a row;
//  - the 16 row groups' partial sums are reduced by a warp shuffle and through shared memory into
//    one R x 64 partial per block; with SPLITK > 1 the cluster's blocks then sum each other's
//    partials over distributed shared memory (ld.shared::cluster) in rank order (the result does
//    not depend on which block sums), each block finishing a share of the column pairs.
// On the tensor cores (TC = true; f16/bf16, fp32 accumulation, A rounded to T once as it is
// staged) the block, its 64 columns, the K slice of the cluster and everything after the main
// loop are the same; the inner product is mma.sync.m16n8k16 with A (R rows, padded to 16 by
// zero fragments) as the A operand and the weight as the B operand:
//  - the K slice is cut into steps of 16 rows; warp w multiplies steps w, w + 8, ... (a round of
//    the 8 warps reads 128 consecutive K rows), each a 16 x 64 tile of B: 8 mma per step, 32
//    fp32 accumulators per thread;
//  - each warp streams its own steps with 16-byte cp.async.cg (a quarter warp copies one
//    128-byte line) into a ring of smem_bytes::kSkinnyTcStages slots of 2 KiB (XOR-swizzled 16-
//    byte chunks), S - 1 steps in flight while one is multiplied, synchronized by
//    cp.async.wait_group and __syncwarp only (no block barrier in the stream); the first S - 1
//    steps go out before A is staged; fragments come from ldmatrix.x4.trans;
//  - A is staged as T, [r][k] rows of smem_bytes::skinnyTcChunk(R) K rows padded by 16 bytes
//    (the fragment loads hit distinct banks), zero past the slice, so rows R..15 are never
//    stored: their fragment registers are zero;
//  - the 8 warps' partials are summed through the rings' space into the block's R x 64 partial.
// Per 16 x 64 tile of B a warp issues 4 cp.async, 4 ldmatrix, 2-4 shared loads of A and 8 mma
// per thread, whatever R: the R = 16 GEMM costs about what R = 1 costs.
//
// The fused epilogue gets every accumulator once: epilogue(r, n, acc), or with a PairEpilogue
// f(r, n, acc[r][n], acc[r][n + 1]) for even n (gated units with interleaved gate/up columns).
//
// kiln::gemmSkinnyRms also gives the epilogue each row's RMS-norm factor rstd = 1 / sqrt(mean(x^2)
// + eps) of a second per-element source x (an RMS norm folded into the GEMM's A loader by
// kiln-fuse-norm-into-gemm: A = x * scale, C = rstd (A x B)). The sums of squares come from the
// same staging loop (each block sums its K slice as it stages A; the cluster's blocks add their
// slices over distributed shared memory), so x is read once more from L1, never from memory.
//
// Preconditions, checked by the code generator: 1 <= R <= 16, 1 <= SPLITK <= 8, N % 4 == 0, B
// and ldb such that every row's 4-column group is 8-byte aligned (B 8-byte aligned, ldb % 4 == 0);
// the block has kThreads threads and smem_bytes::gemmSkinny(R) bytes of dynamic shared memory.
// TC additionally: T is f16 or bf16, B 16-byte aligned and ldb % 8 == 0 (cp.async copies 16
// aligned bytes; a chunk straddling N reads its in-range half only), and
// smem_bytes::gemmSkinnyTc(R) bytes of dynamic shared memory.
#pragma once
#include "kiln/common.cuh"
#include "kiln/gemm_sm90.cuh" // sm90::clusterRank, clusterSync
#include "kiln/gemm_tc.cuh"   // tc::smemAddr, Mma, ldsmX4, cp.async; IsPairEpilogue
#include "kiln/smem_sizes.h"

namespace kiln {

namespace skinny {

constexpr int kThreads = 256;
/// Columns per block: 16 threads x 4 columns (one 128-byte line of a 16-bit B row).
constexpr int kCols = 64;
/// K rows one pass of the block reads (256 threads / 16 per row).
constexpr int kRowGroups = 16;
/// B loads (8 bytes each) a thread issues as one batch; two batches are in flight while one is
/// used (64 KiB per SM at two blocks; 16 per batch gave 1 row about 94 registers, 2 blocks per
/// SM, against 61 and 4 at 8).
constexpr int kUnroll = 8;
/// Elements of A a thread loads before it stores them to shared memory (the staging's loads in
/// flight).
constexpr int kStageLoads = 8;
/// Threads that stage A for `rows` rows: the most that `rows` divides (256 for 1, 2, 4, 8, 16;
/// 255 for 3, ...), so that each thread's elements, at that stride, are all in row tid % rows and
/// its sum of squares belongs to one row. (A function, not a variable template, which NVRTC would
/// emit as a global.)
__host__ __device__ constexpr int stageLanes(int rows) { return (kThreads / rows) * rows; }

/// 8 bytes of B (4 columns), read once: no L1 allocation.
__device__ __forceinline__ uint2 ldStream8(const void *p) {
  uint2 v;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];"
               : "=r"(v.x), "=r"(v.y)
               : "l"(p));
  return v;
}

/// The 4 values of an 8-byte group of f16 / bf16 as floats.
__device__ __forceinline__ void widen4(uint2 v, f16, float (&b)[4]) {
  b[0] = ld(f16{static_cast<unsigned short>(v.x & 0xffffu)});
  b[1] = ld(f16{static_cast<unsigned short>(v.x >> 16)});
  b[2] = ld(f16{static_cast<unsigned short>(v.y & 0xffffu)});
  b[3] = ld(f16{static_cast<unsigned short>(v.y >> 16)});
}
__device__ __forceinline__ void widen4(uint2 v, bf16, float (&b)[4]) {
  b[0] = __uint_as_float(v.x << 16);
  b[1] = __uint_as_float(v.x & 0xffff0000u);
  b[2] = __uint_as_float(v.y << 16);
  b[3] = __uint_as_float(v.y & 0xffff0000u);
}

/// One float of cluster block `rank`'s shared memory at the shared::cta address `addr` there.
__device__ __forceinline__ float ldClusterF(unsigned addr, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

/// The row statistics' floats of gemmSkinnyRms with R rows, after the rest of its shared memory
/// (smem_bytes::gemmSkinny(R, true), or smem_bytes::gemmSkinnyTc(R, true) with TC): the block's
/// sums of squares [R], the rows' rstd [R] the epilogue reads, and the 8 warps' partial sums
/// [8][R]. CHUNK: the tensor-core path's A chunk (0: smem_bytes::skinnyTcChunk(R)).
template <int R, bool TC = false, int CHUNK = 0>
__device__ __forceinline__ float *rowStats(char *smem) {
  if constexpr (TC)
    return reinterpret_cast<float *>(smem + smem_bytes::gemmSkinnyTc(R, false, CHUNK));
  constexpr int kChunk = int(smem_bytes::skinnyChunk(R));
  return reinterpret_cast<float *>(smem) + (kChunk + kCols) * R;
}
/// The rstd of row r (0 <= r < R) is rowRstd<R, TC, CHUNK>(smem)[r] in gemmSkinnyRms's epilogue.
template <int R, bool TC = false, int CHUNK = 0>
__device__ __forceinline__ const float *rowRstd(char *smem) {
  return rowStats<R, TC, CHUNK>(smem) + R;
}

/// Two floats of cluster block `rank`'s shared memory at the shared::cta address `addr` there.
__device__ __forceinline__ float2 ldClusterF2(unsigned addr, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  float2 v;
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];\n"
               : "=f"(v.x), "=f"(v.y)
               : "r"(remote)
               : "memory");
  return v;
}

/// The K rows [first, second) cluster block `split` of SPLITK reads: a multiple of 16 rows per
/// block, the last block takes the rest (empty when K is short).
template <int SPLITK> __device__ __forceinline__ int2 kSlice(int K, int split) {
  const int kPer = ((K + SPLITK - 1) / SPLITK + kRowGroups - 1) / kRowGroups * kRowGroups;
  const int begin = split * kPer;
  return make_int2(begin, min(K, begin + kPer));
}

/// prefetch.global.L2 of the line holding `p` when `pred`, as one predicated instruction (no
/// branch: it runs before griddepcontrol.wait, where the ptxas check allows no control flow).
__device__ __forceinline__ void prefetchL2If(const void *p, bool pred) {
  asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %1, 0;\n @p prefetch.global.L2 [%0];\n}\n"
               :
               : "l"(p), "r"(unsigned(pred)));
}

} // namespace skinny

/// Warms L2 with `rows` K rows of this block's share of B (its 64 columns of the K rows
/// gemmSkinny will read, in the order it reads them) after the first `skip` rows of the share
/// (those gemmSkinnyTcPreloadB copies to shared memory), PER_THREAD rows per thread: thread t
/// takes rows skip + t, skip + t + 256, ... of the slice. Meant to run before
/// griddepcontrol.wait: a decode step's weights do not depend on the previous kernel, so with
/// programmatic dependent launch the prefetch overlaps the previous kernel and the GEMM's own
/// loads then hit L2. A prefetch moves
/// nothing into registers and L2 is the point of coherence, so it is safe even when B is written
/// by the previous kernel. ALIGNED: the 64 columns of a row lie in one 128-byte line (B, ldb
/// and the view offset 128-byte aligned); otherwise the line of the last column is fetched too.
/// The code generator sizes `rows` so the whole grid's prefetch stays within half of the
/// target's L2 (KilnTarget.cpp), so the lines are still there when the loads come.
template <typename T, int SPLITK, int PER_THREAD, bool ALIGNED>
__device__ __forceinline__ void gemmSkinnyPrefetchB(int N, int K, const T *__restrict__ B,
                                                    long long ldb, int rows, int skip = 0) {
  using namespace skinny;
  int split = 0;
  if constexpr (SPLITK > 1)
    split = int(sm90::clusterRank());
  const int n0 = int(blockIdx.x / SPLITK) * kCols;
  const int nLast = min(n0 + kCols, N) - 1;
  const int2 slice = kSlice<SPLITK>(K, split);
  const int end = min(slice.y, slice.x + skip + rows);
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) {
    const int k = slice.x + skip + int(threadIdx.x) + kThreads * i;
    const bool in = k < end;
    const T *row = B + (long long)(in ? k : slice.x) * ldb;
    prefetchL2If(row + n0, in);
    if constexpr (!ALIGNED)
      prefetchL2If(row + nLast, in);
  }
}

/// Warms L2 with the first `bytes` bytes at `p` (16-byte aligned; `bytes` a multiple of 16),
/// PIECE bytes (a multiple of 16) per thread of the grid's THREADS-thread blocks along x: thread
/// t of block b issues one bulk L2 prefetch of bytes [(b THREADS + t) PIECE, + PIECE) clipped
/// to the range (PTX ISA, "cp.async.bulk.prefetch": the bytes go to L2, nothing into the SM; a
/// thread past the range issues none). The code generator picks PIECE so the grid covers the
/// range. Meant to run before griddepcontrol.wait with a later kernel's constant weight
/// (kiln-plan-weight-prefetch, #kiln.l2_prefetch): no control flow, no load, and L2 is the point
/// of coherence, so it is safe whatever the previous kernel writes.
template <int THREADS, long long PIECE>
__device__ __forceinline__ void l2PrefetchShare(const void *p, long long bytes) {
  static_assert(PIECE > 0 && PIECE % 16 == 0, "bulk prefetches move multiples of 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const long long piece = PIECE;
  const long long off = ((long long)blockIdx.x * THREADS + threadIdx.x) * piece;
  const long long size = max(0LL, min(piece, bytes - off));
  asm volatile("{\n .reg .pred p;\n setp.gt.s64 p, %1, 0;\n"
               " @p cp.async.bulk.prefetch.L2.global [%0], %2;\n}\n"
               :
               : "l"(static_cast<const char *>(p) + (size > 0 ? off : 0)), "l"(size),
                 "r"(unsigned(size))
               : "memory");
#endif
}

namespace skinny {

/// Stages K rows [c0, c0 + padded) of A (the block's R rows) in shared memory for one chunk:
/// element i of the chunk is row i % R at k = c0 + i / R (rows at or past c0 + `rows` are zero
/// and load nothing). CUDA cores (TC = false): fp32 at As[i] ([k][r]). Tensor cores: the value
/// rounded to T (cvt.rn, as the prefill tensor-core GEMM rounds a functor operand) at
/// As[r * skinnyTcALd(R, CHUNK) + k - c0] ([r][k], T's 16-bit pattern). The elements go to the
/// first stageLanes(R) threads (the most that R divides) with that stride, so every element a
/// thread stages is in row tid % R. RMS: also sums loadX(r, k)^2 in the thread's `sumSq`, which
/// gemmSkinnyFinish folds per row in a fixed order (the same bits in every run; shared-memory
/// float atomics, used until session 33 where R does not divide kThreads, were not).
template <typename T, int R, bool RMS, bool TC, int CHUNK, typename LoadA, typename LoadX>
__device__ __forceinline__ void stageA(int c0, int rows, int padded, const LoadA &loadA,
                                       const LoadX &loadX, void *As, float &sumSq) {
  const int tid = threadIdx.x;
  constexpr int kLanes = stageLanes(R);
  // kStageLoads loads of A in flight per thread: all are issued before any is stored (As and
  // loadA's pointers are generic, so the compiler would not move a load past a store, and one
  // element per round trip to L2 took most of the 8-row GEMMs' time, session 16's ncu).
  for (int i0 = tid; (kLanes == kThreads || tid < kLanes) && i0 < padded * R;
       i0 += kLanes * kStageLoads) {
    float a[kStageLoads], q[kStageLoads];
#pragma unroll
    for (int s = 0; s < kStageLoads; ++s) {
      const int i = i0 + s * kLanes;
      a[s] = i < rows * R ? loadA(i % R, c0 + i / R) : 0.f;
      if constexpr (RMS) {
        // The same element as loadA's: its load of x is common to both.
        const float x = i < rows * R ? loadX(i % R, c0 + i / R) : 0.f;
        q[s] = x * x;
      }
    }
#pragma unroll
    for (int s = 0; s < kStageLoads; ++s) {
      const int i = i0 + s * kLanes;
      if (i < padded * R) {
        if constexpr (TC)
          static_cast<unsigned short *>(As)[(i % R) * int(smem_bytes::skinnyTcALd(R, CHUNK)) +
                                            i / R] =
              cvt<T>(a[s]).bits;
        else
          static_cast<float *>(As)[i] = a[s];
      }
    }
    if constexpr (RMS) {
#pragma unroll
      for (int s = 0; s < kStageLoads; ++s)
        sumSq += q[s]; // every element this thread stages is in row tid % R (zero past rows)
    }
  }
}

/// The end both inner products share, after the main loop: `part` holds the block's R x 64
/// partial sums (fp32, [r][c]) and, with RMS, each thread's `sumSq` of row tid % R (threads from
/// stageLanes(R) on: 0). Folds the row statistics in a fixed order, sums the cluster's partials
/// in rank order over distributed shared memory and runs the epilogue.
template <int R, int SPLITK, bool RMS, typename Epilogue>
__device__ __forceinline__ void gemmSkinnyFinish(int N, int K, float eps, int n0, int split,
                                                 const float *part, float *stats, float sumSq,
                                                 const Epilogue &epilogue) {
  const int tid = threadIdx.x;
  if constexpr (RMS) {
    // Each warp's sums per row into warpSums, then the 8 warps in order: the same bits in every
    // run.
    float *warpSums = stats + 2 * R; // [8][R]
    if constexpr (kThreads % R == 0) {
      // Lanes l and l ^ m (m >= R, R divides 32) stage the same row: fold them.
#pragma unroll
      for (int m = 16; m >= R; m >>= 1)
        sumSq += __shfl_xor_sync(0xffffffffu, sumSq, m);
      if ((tid & 31) < R)
        warpSums[(tid >> 5) * R + (tid & 31)] = sumSq;
    } else {
      // A warp's lanes stage different rows: per row, the lanes of that row (the others add 0)
      // folded by the same butterfly.
      const int row = tid < stageLanes(R) ? tid % R : -1;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float v = row == r ? sumSq : 0.f;
#pragma unroll
        for (int m = 16; m >= 1; m >>= 1)
          v += __shfl_xor_sync(0xffffffffu, v, m);
        if ((tid & 31) == 0)
          warpSums[(tid >> 5) * R + r] = v;
      }
    }
    __syncthreads();
    if (tid < R) {
      float s = 0.f;
#pragma unroll
      for (int w = 0; w < 8; ++w)
        s += warpSums[w * R + tid];
      stats[tid] = s;
    }
  }
  if constexpr (SPLITK > 1)
    sm90::clusterSync(); // every block's partial is written and visible to the cluster
  else
    __syncthreads();
  if constexpr (RMS) {
    // The rows' sums over the whole K (the cluster's blocks in rank order), then rstd.
    if (tid < R) {
      float s = 0.f;
      if constexpr (SPLITK > 1) {
        const unsigned addr = tc::smemAddr(stats + tid);
#pragma unroll
        for (int q = 0; q < SPLITK; ++q)
          s += ldClusterF(addr, unsigned(q));
      } else {
        s = stats[tid];
      }
      stats[R + tid] = rsqrtf(s / float(K) + eps);
    }
    __syncthreads();
  }

  // Column pairs: block `split` finishes pairs split, split + SPLITK, ... (over its threads).
  constexpr int kPairs = R * kCols / 2;
  for (int p = split + SPLITK * tid; p < kPairs; p += SPLITK * kThreads) {
    const int r = p / (kCols / 2), c = 2 * (p % (kCols / 2));
    const int col = n0 + c;
    if (col >= N)
      continue;
    float2 s = make_float2(0.f, 0.f);
    if constexpr (SPLITK > 1) {
      const unsigned addr = tc::smemAddr(part + r * kCols + c);
#pragma unroll
      for (int q = 0; q < SPLITK; ++q) {
        const float2 v = ldClusterF2(addr, unsigned(q));
        s.x += v.x;
        s.y += v.y;
      }
    } else {
      s = *reinterpret_cast<const float2 *>(part + r * kCols + c);
    }
    if constexpr (IsPairEpilogue<Epilogue>::value) {
      epilogue.f(r, col, s.x, s.y);
    } else {
      epilogue(r, col, s.x);
      epilogue(r, col + 1, s.y);
    }
  }
  if constexpr (SPLITK > 1)
    sm90::clusterSync(); // no block leaves while another reads its shared memory
}

/// gemmSkinny and gemmSkinnyRms (below) on the CUDA cores. RMS: also sum loadX(r, k)^2 over each
/// row and leave the rows' rstd in rowRstd<R>(smem) for the epilogue.
template <typename T, int R, int SPLITK, bool RMS, typename LoadA, typename LoadX,
          typename Epilogue>
__device__ __forceinline__ void gemmSkinnyImpl(int N, int K, const LoadA &loadA,
                                               const LoadX &loadX, float eps,
                                               const T *__restrict__ B, long long ldb,
                                               const Epilogue &epilogue, char *smem) {
  static_assert(R >= 1 && R <= 16, "gemmSkinny: 1..16 rows");
  static_assert(SPLITK >= 1 && SPLITK <= 8, "gemmSkinny: SPLITK in 1..8 (a portable cluster)");
  constexpr int kChunk = int(smem_bytes::skinnyChunk(R));
  constexpr int U = kUnroll, kStep = kRowGroups * U;
  const int tid = threadIdx.x;
  int split = 0;
  if constexpr (SPLITK > 1)
    split = int(sm90::clusterRank());
  const int n0 = int(blockIdx.x / SPLITK) * kCols;
  const int cg = tid & 15, rg = tid >> 4;
  const int n = n0 + 4 * cg;
  const bool colIn = n < N; // N % 4 == 0: the whole group is in or out
  const int2 slice = kSlice<SPLITK>(K, split);
  const int kBegin = slice.x, kEnd = slice.y;

  float *As = reinterpret_cast<float *>(smem); // [kChunk][R]
  // RMS: sums of squares, per thread (a thread stages one row only: stageA).
  float *stats = rowStats<R>(smem);
  float sumSq = 0.f;
  float acc[R][4];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c)
      acc[r][c] = 0.f;
  T tag{};
  // The batch of rows j0, j0 + 16, ... (U of them) of this thread's 4 columns; rows at or past
  // `rows` load nothing.
  auto loadBatch = [&](uint2 (&v)[U], const T *bRow, int j0, int rows) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int kk = j0 + kRowGroups * u;
      v[u] = colIn && kk < rows ? ldStream8(bRow + (long long)kk * ldb) : make_uint2(0u, 0u);
    }
  };
  for (int c0 = kBegin; c0 < kEnd; c0 += kChunk) {
    const int rows = min(kChunk, kEnd - c0);
    const T *bRow = B + (long long)c0 * ldb + n;
    // The first batch of B is issued before A is staged: B does not depend on A, and the
    // staging's round trip to L2 then overlaps the first loads from memory.
    uint2 v[U];
    loadBatch(v, bRow, rg, rows);
    __syncthreads(); // the previous chunk is consumed
    stageA<T, R, RMS, false, 0>(c0, rows, rows, loadA, loadX, As, sumSq);
    __syncthreads();
    for (int j0 = rg; j0 < rows; j0 += kStep) {
      // Software pipeline: the next batch is in flight while this one is used.
      uint2 w[U];
      loadBatch(w, bRow, j0 + kStep, rows);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int kk = j0 + kRowGroups * u;
        if (kk >= rows)
          break;
        float b[4];
        widen4(v[u], tag, b);
        const float *a = As + kk * R;
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const float ar = a[r];
#pragma unroll
          for (int c = 0; c < 4; ++c)
            acc[r][c] = fmaf(ar, b[c], acc[r][c]);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
        v[u] = w[u];
    }
  }

  // Row groups 2w and 2w + 1 share warp w: fold them, then the 8 warps through shared memory.
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c)
      acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], 16);
  __syncthreads(); // As is no longer read
  static_assert(kChunk >= 8 * kCols, "the A chunk's space holds the 8 warps' partials");
  float *red = reinterpret_cast<float *>(smem); // [8][R][kCols]
  float *part = red + kChunk * R;               // [R][kCols]: this block's partial
  if ((tid & 16) == 0) {
    const int w = tid >> 5;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c)
        red[(w * R + r) * kCols + 4 * cg + c] = acc[r][c];
  }
  __syncthreads();
  for (int i = tid; i < R * kCols; i += kThreads) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < 8; ++w)
      s += red[w * R * kCols + i];
    part[i] = s;
  }
  gemmSkinnyFinish<R, SPLITK, RMS>(N, K, eps, n0, split, part, stats, sumSq, epilogue);
}

/// 16-byte global -> shared copy (cp.async.cg) of which the first `bytes` (0..16) are read and
/// the rest zero-filled (PTX ISA, "cp.async": src-size below cp-size). Both addresses 16-byte
/// aligned.
__device__ __forceinline__ void cpAsync16Part(unsigned dst, const void *src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(bytes));
}

/// The tensor-core path's stream of B through the 8 warps' cp.async rings (see
/// gemmSkinnyTcImpl): this thread's share of the copies of its warp's steps. Step j of warp w
/// is K rows kBegin + 16 (w + 8 j) .. + 15 of the block's 64 columns, stored in slot j % S as 16
/// lines of 8 16-byte chunks (chunk c of line l at position c ^ (l % 8)); lane l copies chunk
/// l % 8 of lines l / 8, l / 8 + 4, ... (a quarter warp reads one 128-byte line of B). Columns
/// past N and rows past the slice are zero-filled.
template <typename T, int SPLITK> struct TcStreamB {
  static constexpr int S = int(smem_bytes::kSkinnyTcStages);
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kSlotBytes = 16 * kCols * 2; // 16 K rows x 64 columns of T
  const T *B;
  long long ldb;
  unsigned ring; // this warp's ring (shared::cta address)
  int kBegin, kEnd, warpSteps, warp, cpChunk, cpLine, cpCol, cpBytes;

  __device__ __forceinline__ TcStreamB(int N, int K, const T *b, long long ld, char *smem)
      : B(b), ldb(ld) {
    const int lane = threadIdx.x & 31;
    warp = threadIdx.x >> 5;
    int split = 0;
    if constexpr (SPLITK > 1)
      split = int(sm90::clusterRank());
    const int n0 = int(blockIdx.x / SPLITK) * kCols;
    const int2 slice = kSlice<SPLITK>(K, split);
    kBegin = slice.x;
    kEnd = slice.y;
    const int steps = (kEnd - kBegin + 15) / 16;
    warpSteps = max(steps - warp + kWarps - 1, 0) / kWarps; // 0 when steps <= warp; no branch
    ring = tc::smemAddr(smem) + unsigned(warp * S * kSlotBytes);
    cpChunk = lane & 7;
    cpLine = lane >> 3;
    cpCol = n0 + 8 * cpChunk;
    cpBytes = max(0, min(16, 2 * (N - cpCol)));
  }
  /// This thread's copies of step j into slot j % S. PRELOAD: the form gemmSkinnyTcPreloadB
  /// issues before griddepcontrol.wait (no branch: a step past the warp's last copies zeros into
  /// a slot nobody reads; cp.async .L2::128B, the form check_ptx.py allows there); otherwise the
  /// caller skips steps past the warp's last.
  template <bool PRELOAD> __device__ __forceinline__ void copyStep(int j) const {
    const unsigned slot = ring + unsigned((j % S) * kSlotBytes);
    const int k0 = kBegin + (warp + kWarps * j) * 16;
#pragma unroll
    for (int it = 0; it < 4; ++it) {
      const int line = cpLine + 4 * it, k = k0 + line;
      const int bytes = ((!PRELOAD || j < warpSteps) && k < kEnd) ? cpBytes : 0;
      // (Before the wait the address is arithmetic, never a select of two pointers.)
      const T *src = PRELOAD ? B + (long long)(bytes ? k : 0) * ldb + (bytes ? cpCol : 0)
                     : bytes ? B + (long long)k * ldb + cpCol
                             : B;
      const unsigned dst = slot + unsigned(line * 128 + ((cpChunk ^ (line & 7)) * 16));
      if constexpr (PRELOAD)
        asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst),
                     "l"(src), "r"(bytes));
      else
        cpAsync16Part(dst, src, bytes);
    }
  }
  /// Issues this thread's copies of step j (nothing past the warp's last step) and commits a
  /// cp.async group (an empty one past the last step, so waits always count S - 1 groups).
  __device__ __forceinline__ void issue(int j) const {
    if (j < warpSteps)
      copyStep<false>(j);
    tc::cpAsyncCommit();
  }
  /// issue(j) for the first S - 1 steps, in the preload form (copyStep<true>).
  __device__ __forceinline__ void preload() const {
#pragma unroll
    for (int j = 0; j < S - 1; ++j) {
      copyStep<true>(j);
      tc::cpAsyncCommit();
    }
  }
};

/// gemmSkinny and gemmSkinnyRms (below) on the tensor cores (TC = true; the top of this file
/// says how the work is split). PRELOADED: the first S - 1 steps of B were issued by
/// gemmSkinnyTcPreloadB (before the grid-dependency wait), not here.
template <typename T, int R, int SPLITK, bool RMS, bool PRELOADED, int CHUNK, typename LoadA,
          typename LoadX, typename Epilogue>
__device__ __forceinline__ void gemmSkinnyTcImpl(int N, int K, const LoadA &loadA,
                                                 const LoadX &loadX, float eps,
                                                 const T *__restrict__ B, long long ldb,
                                                 const Epilogue &epilogue, char *smem) {
  static_assert(R >= 1 && R <= 16, "gemmSkinny: 1..16 rows");
  static_assert(SPLITK >= 1 && SPLITK <= 8, "gemmSkinny: SPLITK in 1..8 (a portable cluster)");
  static_assert(tc::IsSame<T, f16>::value || tc::IsSame<T, bf16>::value,
                "gemmSkinny with tensor cores: f16 or bf16 operands (mma.sync m16n8k16)");
  constexpr int S = int(smem_bytes::kSkinnyTcStages);
  constexpr int kChunk = int(smem_bytes::skinnyTcChunk(R, CHUNK));
  constexpr int kLdA = int(smem_bytes::skinnyTcALd(R, CHUNK));
  constexpr int kRing = int(smem_bytes::skinnyTcRing());
  constexpr int kWarps = kThreads / 32;
  constexpr int kSlotBytes = 16 * kCols * 2; // 16 K rows x 64 columns of T
  static_assert(kChunk % (kWarps * 16) == 0, "an A chunk is whole rounds of the 8 warps' steps");
  static_assert(kRing == kWarps * S * kSlotBytes, "smem_sizes.h's ring is the kernel's");
  static_assert(kRing >= kWarps * R * kCols * 4, "the B rings hold the 8 warps' partials");
  static_assert(kLdA * 2 * R >= R * kCols * 4, "the A chunk holds the block's partial");
  static_assert(S >= 2, "at least one B slot in flight while one is used");
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  int split = 0;
  if constexpr (SPLITK > 1)
    split = int(sm90::clusterRank());
  const int n0 = int(blockIdx.x / SPLITK) * kCols;
  // B's stream: the slice's 16-row steps; warp w multiplies steps w, w + 8, ... (its j-th is
  // w + 8 j), so one round of the block reads 128 consecutive K rows.
  const TcStreamB<T, SPLITK> stream(N, K, B, ldb, smem);
  const int kBegin = stream.kBegin, kEnd = stream.kEnd, warpSteps = stream.warpSteps;
  const unsigned ring = stream.ring;
  unsigned short *As = reinterpret_cast<unsigned short *>(smem + kRing); // [R][kLdA]
  float *stats = rowStats<R, true, CHUNK>(smem);
  float sumSq = 0.f;
  // The first S - 1 steps of B are in flight before A is staged (B does not depend on A).
  if constexpr (!PRELOADED) {
#pragma unroll
    for (int j = 0; j < S - 1; ++j)
      stream.issue(j);
  }

  // Fragment addresses (PTX ISA, "Matrix fragments for mma.m16n8k16", "ldmatrix"; g = lane / 4,
  // q = lane % 4). B: ldmatrix.x4.trans, lane l addressing line (k) 8 (m & 1) + l % 8 of
  // column chunk 2p + (m >> 1), m = l / 8: registers {0, 1} are the k16 x n8 fragment of
  // columns 16p .. 16p + 7, {2, 3} of 16p + 8 .. 16p + 15. A: 32-bit loads of rows g and g + 8
  // (zero past R: only R rows are staged), k pairs 2q and 2q + 8 of the step.
  const int ldm = lane >> 3, li = lane & 7;
  const unsigned bLane = unsigned((8 * (ldm & 1) + li) * 128);
  const int bChunk = (ldm >> 1) ^ li; // chunk 2p + (m >> 1) stored at (2p + (m >> 1)) ^ li
  const int g = lane >> 2, q = lane & 3;
  float acc[kCols / 8][4];
#pragma unroll
  for (int t = 0; t < kCols / 8; ++t)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc[t][e] = 0.f;

  int j = 0; // this warp's next step
  for (int c0 = kBegin; c0 < kEnd; c0 += kChunk) {
    const int rows = min(kChunk, kEnd - c0);
    __syncthreads(); // the previous chunk is consumed
    stageA<T, R, RMS, true, CHUNK>(c0, rows, (rows + 15) / 16 * 16, loadA, loadX, As, sumSq);
    __syncthreads();
    // This chunk's steps of this warp: K rows kBegin + 16 (warp + 8 j) below c0 + rows.
    const int jEnd = min(warpSteps, (c0 - kBegin + kChunk) / (16 * kWarps));
    for (; j < jEnd; ++j) {
      tc::cpAsyncWait<S - 2>(); // step j's group is complete (this lane's copies) ...
      __syncwarp();             // ... and every lane's; every lane is done with step j - 1
      stream.issue(j + S - 1);  // into step j - 1's slot
      const unsigned slot = ring + unsigned((j % S) * kSlotBytes) + bLane;
      const int kk = (warp + kWarps * j) * 16 - (c0 - kBegin); // the step's k in the chunk
      unsigned a[4];
      const unsigned *a0 = reinterpret_cast<const unsigned *>(As + g * kLdA + kk + 2 * q);
      const unsigned *a1 = reinterpret_cast<const unsigned *>(As + (g + 8) * kLdA + kk + 2 * q);
      a[0] = g < R ? a0[0] : 0u;
      a[1] = g + 8 < R ? a1[0] : 0u;
      a[2] = g < R ? a0[4] : 0u;
      a[3] = g + 8 < R ? a1[4] : 0u;
#pragma unroll
      for (int p = 0; p < kCols / 16; ++p) {
        unsigned b[4];
        tc::ldsmX4<true>(slot + unsigned((bChunk ^ (2 * p)) * 16), b);
        const unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
        tc::Mma<T>::run(acc[2 * p], a, b0);
        tc::Mma<T>::run(acc[2 * p + 1], a, b1);
      }
    }
  }
  tc::cpAsyncWait<0>(); // only empty groups are left; the rings are reused below
  __syncthreads();      // As and the rings are no longer read

  // The 8 warps' R x 64 partials (accumulator rows g and g + 8, columns 8t + 2q, + 1) through
  // the rings' space, then the block's partial in the A chunk's space.
  float *red = reinterpret_cast<float *>(smem);       // [8][R][kCols]
  float *part = reinterpret_cast<float *>(smem + kRing); // [R][kCols]
#pragma unroll
  for (int t = 0; t < kCols / 8; ++t) {
    if (g < R)
      *reinterpret_cast<float2 *>(red + (warp * R + g) * kCols + 8 * t + 2 * q) =
          make_float2(acc[t][0], acc[t][1]);
    if (g + 8 < R)
      *reinterpret_cast<float2 *>(red + (warp * R + g + 8) * kCols + 8 * t + 2 * q) =
          make_float2(acc[t][2], acc[t][3]);
  }
  __syncthreads();
  for (int i = tid; i < R * kCols; i += kThreads) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      s += red[w * R * kCols + i];
    part[i] = s;
  }
  gemmSkinnyFinish<R, SPLITK, RMS>(N, K, eps, n0, split, part, stats, sumSq, epilogue);
}
} // namespace skinny

/// Issues the first kSkinnyTcStages - 1 steps of this block's share of B into the tensor-core
/// path's cp.async rings (8 x 16 x 128 K rows: the whole share when it is no longer), so that
/// gemmSkinny<..., TC = true, PRELOADED = true> (or gemmSkinnyRms), called by the same kernel
/// with the same N, K, B, ldb and smem, finds them in flight. Meant to run before
/// griddepcontrol.wait in decode programs (programmatic dependent launch): a decode step's
/// weights do not depend on the previous kernel, so a block that is resident beside the previous
/// kernel's blocks streams its weight into shared memory while that kernel runs. The code
/// generator calls it only when B is a constant of the program (never written by a kernel) and
/// sizes the grid so the blocks of two consecutive GEMMs fit on an SM together
/// (kiln-select-tiles, `#kiln.skinny_gemm_tile<..., preload = true>`). No control flow and no
/// global access but the weight-preload form of cp.async (check_ptx.py's rule).
template <typename T, int SPLITK>
__device__ __forceinline__ void gemmSkinnyTcPreloadB(int N, int K, const T *__restrict__ B,
                                                     long long ldb, char *smem) {
  skinny::TcStreamB<T, SPLITK>(N, K, B, ldb, smem).preload();
}

/// C = A x B for R rows (see the top of this file). `loadA(r, k)` returns A[r, k] as a float
/// (any fused producer; called once per element per block), `B` points at B[0, 0] of a row-major
/// [K, N] weight with row stride `ldb` elements, `epilogue` consumes the accumulators, `smem` is
/// the block's dynamic shared memory (smem_bytes::gemmSkinny(R) bytes, or with TC
/// smem_bytes::gemmSkinnyTc(R, false, CHUNK)). TC: the inner product on the tensor cores (A
/// rounded to T; needs B 16-byte aligned and ldb % 8 == 0); CHUNK: its A chunk in K rows (0:
/// smem_bytes::skinnyTcChunk(R); else a multiple of 128 of at least 128: less shared memory,
/// more blocks per SM, one more block barrier per chunk). The grid is ceil(N / 64) x SPLITK
/// blocks along x.
template <typename T, int R, int SPLITK, bool TC = false, bool PRELOADED = false, int CHUNK = 0,
          typename LoadA, typename Epilogue>
__device__ __forceinline__ void gemmSkinny(int N, int K, const LoadA &loadA,
                                           const T *__restrict__ B, long long ldb,
                                           const Epilogue &epilogue, char *smem) {
  static_assert(TC || !PRELOADED, "gemmSkinnyTcPreloadB feeds the tensor-core path only");
  static_assert(TC || CHUNK == 0, "CHUNK is the tensor-core path's A chunk");
  if constexpr (TC)
    skinny::gemmSkinnyTcImpl<T, R, SPLITK, false, PRELOADED, CHUNK>(N, K, loadA, loadA, 0.f, B,
                                                                    ldb, epilogue, smem);
  else
    skinny::gemmSkinnyImpl<T, R, SPLITK, false>(N, K, loadA, loadA, 0.f, B, ldb, epilogue, smem);
}

/// gemmSkinny with an RMS norm folded into A (kiln-fuse-norm-into-gemm): `loadA(r, k)` returns
/// x[r, k] * scale[k], `loadX(r, k)` x[r, k] (the same element: the compiler shares its load);
/// before the epilogue runs, skinny::rowRstd<R, TC, CHUNK>(smem)[r] holds 1 / sqrt(sum_k x[r, k]^2
/// / K + eps) (fp32) for each row r, which the epilogue multiplies into its accumulator. `smem`
/// is smem_bytes::gemmSkinny(R, true) bytes (smem_bytes::gemmSkinnyTc(R, true, CHUNK) with TC);
/// eps >= 0.
template <typename T, int R, int SPLITK, bool TC = false, bool PRELOADED = false, int CHUNK = 0,
          typename LoadA, typename LoadX, typename Epilogue>
__device__ __forceinline__ void gemmSkinnyRms(int N, int K, const LoadA &loadA, const LoadX &loadX,
                                              float eps, const T *__restrict__ B, long long ldb,
                                              const Epilogue &epilogue, char *smem) {
  static_assert(TC || !PRELOADED, "gemmSkinnyTcPreloadB feeds the tensor-core path only");
  static_assert(TC || CHUNK == 0, "CHUNK is the tensor-core path's A chunk");
  if constexpr (TC)
    skinny::gemmSkinnyTcImpl<T, R, SPLITK, true, PRELOADED, CHUNK>(N, K, loadA, loadX, eps, B,
                                                                   ldb, epilogue, smem);
  else
    skinny::gemmSkinnyImpl<T, R, SPLITK, true>(N, K, loadA, loadX, eps, B, ldb, epilogue, smem);
}

} // namespace kiln
