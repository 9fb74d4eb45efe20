// gemm_tc.cuh - tensor-core GEMM building block (f16/bf16 or fp32-as-TF32 inputs, fp32
// accumulation, sm_80+).
//
// A block computes a BM x BN tile of C = A * B with WARPS_M x WARPS_N warps. Each warp owns a
// (BM/WARPS_M) x (BN/WARPS_N) sub-tile and multiplies fragments with
// `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}` (16-bit storage) or
// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (fp32 storage, rounded to TF32 with
// `cvt.rna.tf32.f32` on the way into the fragments), keeping fp32 accumulators in registers.
// Fragments are read from shared memory with `ldmatrix` (`.trans` for 16-bit operands stored
// with the M/N dimension contiguous; an 8x8 b16 matrix is an 8 x 4 fp32 block, so K-major fp32
// fragments use plain ldmatrix too) or, for MN-major fp32 tiles, which ldmatrix.trans cannot
// transpose, with 32-bit scalar shared loads. The K loop runs over BK slices through a
// STAGES-deep shared-memory pipeline filled by 16-byte `cp.async` copies (`commit_group` /
// `wait_group`), so up to STAGES - 1 slices are in flight while one is multiplied: the
// multistage scheme of CUTLASS (`cutlass/gemm/threadblock/mma_multistage.h`), rewritten here.
// Fragment layouts follow the PTX ISA, "Matrix fragments for mma.m16n8k16 with floating point
// type", "Matrix fragments for mma.m16n8k8" (.tf32) and "ldmatrix".
//
// Both operands are viewed as `rows x K` tiles (A: rows = M; B: rows = N) and reach the GEMM
// through operand descriptors: a strided tensor read with cp.async (StridedOperand), or a functor
// evaluated per element (FnOperand: fused transposes, slices, scaling). Results leave through an
// epilogue functor, as in gemm.cuh. Shared-memory tiles are XOR-swizzled in 16-byte chunks (no
// padding) so that both the cp.async stores and the fragment reads (ldmatrix or 32-bit loads)
// are free of bank conflicts.
//
// Everything is inline PTX; the header needs nothing but kiln/common.cuh, so NVRTC can compile
// it as an embedded named header.
#pragma once
#include "kiln/common.cuh"
#include "kiln/smem_sizes.h"

namespace kiln {

//===----------------------------------------------------------------------===//
// Operand descriptors
//===----------------------------------------------------------------------===//

/// Strided operand in global memory, viewed as `rows x K` (A: rows = M; B: rows = N) and read with
/// 16-byte cp.async. KMajor = true: element (r, k) at ptr[r * ld + k] (k contiguous; A row-major,
/// or B stored [N, K]); KMajor = false: element (r, k) at ptr[k * ld + r] (r contiguous; A stored
/// [K, M], or B row-major [K, N]), read from shared memory with ldmatrix.trans (f16/bf16) or
/// 32-bit loads (float). Elements outside [0, rows) x [0, K) read as zero. Preconditions, checked
/// by the code generator and not at run time, with V = 16 / sizeof(T) elements per 16-byte chunk
/// (8 for f16/bf16, 4 for float): ptr 16-byte aligned, ld % V == 0, and the contiguous extent
/// (K when KMajor, rows otherwise) % V == 0, so every 16-byte chunk is entirely in or out of
/// range.
template <typename T, bool KMajor> struct StridedOperand {
  using Elem = T;
  static constexpr bool kKMajor = KMajor;
  const T *ptr;
  long long ld;
  int rows;
};

/// An epilogue over column pairs: f(m, n, acc[m][n], acc[m][n + 1]) for even n (N must be
/// even). Gated linear units use it: with the gate and up projections' weight columns
/// interleaved, one thread holds gate and up of the same output element (SwiGLU, GeGLU).
template <typename F> struct PairEpilogue {
  F f;
};
template <typename F> __device__ PairEpilogue<F> makePairEpilogue(F f) { return {f}; }
template <typename E> struct IsPairEpilogue {
  static constexpr bool value = false;
};
template <typename F> struct IsPairEpilogue<PairEpilogue<F>> {
  static constexpr bool value = true;
};

/// Operand computed per element by a functor `float f(int r, int k)` over `rows x K` (fused
/// transposes, slices, scaling...). f is called only for in-range (r, k); its result is rounded
/// with cvt<T> (f16/bf16, saturating) or to TF32 with cvt.rna.tf32.f32 (float) and stored to a
/// K-major shared-memory tile. The next slice is computed
/// into registers before the current slice is multiplied and stored to shared memory after it,
/// so f's global loads overlap the tensor-core work only as far as the compiler schedules them:
/// slower than StridedOperand, but any operand works (no alignment or extent preconditions).
template <typename T, typename F> struct FnOperand {
  using Elem = T;
  static constexpr bool kKMajor = true;
  F f;
  int rows;
};

/// Bytes of dynamic shared memory gemmTileTC needs: STAGES slices of the BM x BK A tile and the
/// BN x BK B tile, sizeof(T)-byte elements, no padding (the swizzle is layout-independent, so
/// AKMajor and BKMajor do not change the size; they are part of the signature so a padded layout
/// could).
template <typename T, int BM, int BN, int BK, int STAGES, bool AKMajor, bool BKMajor>
__host__ __device__ constexpr int gemmTcSmemBytes() {
  return int(smem_bytes::gemmTc(sizeof(T), BM, BN, BK, STAGES));
}

namespace tc {

//===----------------------------------------------------------------------===//
// PTX wrappers
//===----------------------------------------------------------------------===//

template <typename A, typename B> struct IsSame { static constexpr bool value = false; };
template <typename A> struct IsSame<A, A> { static constexpr bool value = true; };

/// D += A * B for one m16n8kK tile (K = kK: 16 for f16/bf16, 8 for TF32): `a` is the 16xK
/// row-major A fragment (4 registers of two 16-bit elements or one TF32 each), `b` the Kx8
/// column-major B fragment (2 registers), `d` the 16x8 fp32 accumulator fragment (PTX ISA
/// layouts: thread t holds rows t/4 and t/4 + 8, columns 2(t%4) and 2(t%4)+1).
template <typename T> struct Mma;
template <> struct Mma<f16> {
  static constexpr int kK = 16;
  static __device__ __forceinline__ void run(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct Mma<bf16> {
  static constexpr int kK = 16;
  static __device__ __forceinline__ void run(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
/// fp32 storage: m16n8k8 on TF32 operands (bit patterns already rounded with toTf32).
/// Fragments (PTX ISA, g = t/4, q = t%4): a = {(g, q), (g+8, q), (g, q+4), (g+8, q+4)} as
/// (row, k); b = {(k q, n g), (k q+4, n g)}.
template <> struct Mma<float> {
  static constexpr int kK = 8;
  static __device__ __forceinline__ void run(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

/// Rounds an fp32 value to TF32 (nearest, ties away from zero; inf and NaN stay), returned as
/// the 32-bit pattern the tf32 mma reads (low 13 mantissa bits zero).
__device__ __forceinline__ unsigned toTf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

/// 32-bit shared-state-space address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smemAddr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// 16-byte global -> shared copy that bypasses L1 (cp.async.cg); `valid == false` writes 16
/// zero bytes and reads nothing (src-size 0).
__device__ __forceinline__ void cpAsync16(unsigned dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0));
}
/// Closes the group of cp.async issued by this thread since the last commit.
__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/// Waits until at most N of this thread's committed groups are still pending.
template <int N> __device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// ldmatrix of four 8x8 b16 matrices; lane l gives the address of row l%8 of matrix l/8.
template <bool Trans> __device__ __forceinline__ void ldsmX4(unsigned addr, unsigned (&d)[4]) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(addr));
}
/// ldmatrix of two 8x8 b16 matrices (addresses from lanes 0-15).
template <bool Trans> __device__ __forceinline__ void ldsmX2(unsigned addr, unsigned (&d)[2]) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(addr));
}

/// 32-bit shared-memory load.
__device__ __forceinline__ unsigned ldShared32(unsigned addr) {
  unsigned v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}

/// 16-byte shared-memory store of four registers.
__device__ __forceinline__ void stShared16(unsigned addr, const unsigned (&v)[4]) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v[0]), "r"(v[1]),
               "r"(v[2]), "r"(v[3])
               : "memory");
}

//===----------------------------------------------------------------------===//
// Swizzled shared-memory tiles
//
// A stage tile is `lines` lines of C 16-byte chunks (V = 16 / sizeof(T) elements: 8 for
// f16/bf16, 4 for float): K-major tiles have one line per operand row (C = BK/V), MN-major tiles
// one line per k (C = ROWS/V). Chunk `c` of line `l` is stored at chunk position c ^ mask(l) of
// its line. Shared memory has 32 four-byte banks, i.e. 8 chunk positions per 128 bytes. Tiles
// read with ldmatrix (every 16-bit tile, K-major fp32 tiles): mask(l) spreads the 8 consecutive
// lines read by one ldmatrix phase (same logical chunk) over 8 distinct positions, and keeps the
// 8 chunks written by 8 consecutive threads' cp.async (128 contiguous logical bytes) on distinct
// positions as well:
//   C >= 8: mask = l % 8          (one line spans >= 128 bytes)
//   C == 4: mask = (l / 2) % 4    (two lines per 128 bytes)
//   C == 2: mask = (l / 4) % 2    (four lines per 128 bytes)
// MN-major fp32 tiles, read with 32-bit loads (Scalar): one load of a warp reads 4 lines
// (k = q, q = lane % 4, plus a multiple of 4) x 8 consecutive rows (2 chunks, 2c and 2c+1), so
// the mask moves whole chunk pairs: even masks that differ across the 4 lines of one load,
//   C >= 8: mask = 2 (l % 4)
//   C == 4: mask = 2 ((l / 2) % 2)  (lines l and l+1 already share 128 bytes, halves apart)
//   C == 2: mask = 0                (lines 0-3 fill 128 bytes)
// and the 8 cp.async chunks of a quarter warp stay distinct (the mask permutes within each
// aligned group of 8, or of 4 for C == 4). Either mask depends on l % 8 only, and every chunk
// and ldmatrix row address is 16-byte aligned.
//===----------------------------------------------------------------------===//

/// Swizzle mask of line `l` in a tile of C chunks per line, read with ldmatrix (Scalar = false)
/// or with 32-bit loads of MN-major fp32 fragments (Scalar = true).
template <int C, bool Scalar = false> __host__ __device__ constexpr int swizzleMask(int l) {
  static_assert(C == 2 || C == 4 || C % 8 == 0,
                "swizzled tile lines must be 2, 4 or a multiple of 8 16-byte chunks");
  if constexpr (Scalar)
    return (l / (C >= 8 ? 1 : 8 / C)) % (C >= 8 ? 4 : C / 2) * 2;
  else
    return (l / (C >= 8 ? 1 : 8 / C)) % (C >= 8 ? 8 : C);
}
/// Byte offset of logical chunk `c` of line `l` in a swizzled tile of C chunks per line.
template <int C, bool Scalar = false> __device__ __forceinline__ int chunkOffset(int l, int c) {
  return (l * C + (c ^ swizzleMask<C, Scalar>(l))) * 16;
}

//===----------------------------------------------------------------------===//
// Stage loaders. Each thread copies the chunks line0, line0 + kStep, ... (kStep = THREADS / C
// lines apart, all at chunk `ch` of their line), so a thread's global addresses differ by a
// loop-invariant stride and its shared-memory offsets by compile-time constants. begin(stage)
// starts filling `stage` with the next K slice (slices are visited in order 0, BK, 2 BK, ...);
// finish(stage) completes it (a no-op for cp.async, whose completion is awaited with
// cpAsyncWait).
//===----------------------------------------------------------------------===//

/// Chunk assignment of one thread in a swizzled tile of LINES lines of C chunks (Scalar: the
/// swizzle of MN-major fp32 tiles).
template <int LINES, int C, int THREADS, bool Scalar = false> struct ChunkMap {
  static_assert(THREADS % C == 0, "the block must cover whole tile lines (THREADS % chunks)");
  static constexpr int kStep = THREADS / C;                  // lines between iterations
  static constexpr int kIters = (LINES + kStep - 1) / kStep; // chunks per thread
  static constexpr bool kExact = LINES % kStep == 0;         // every iteration in the tile
  int line0, ch;
  __device__ __forceinline__ ChunkMap() : line0(int(threadIdx.x) / C), ch(int(threadIdx.x) % C) {}
  __device__ __forceinline__ bool inTile(int it) const {
    return kExact || line0 + it * kStep < LINES;
  }
  /// Shared-memory byte offset of iteration `it`'s chunk.
  __device__ __forceinline__ unsigned offset(int it) const {
    // The mask repeats every 8 lines (every 4 lines for the Scalar swizzle).
    if constexpr (kStep % (Scalar ? 4 : 8) == 0) // same swizzle mask on every iteration
      return unsigned(chunkOffset<C, Scalar>(line0, ch) + it * kStep * C * 16);
    else
      return unsigned(chunkOffset<C, Scalar>(line0 + it * kStep, ch));
  }
};

template <typename Op, int ROWS, int BK, int THREADS> struct StageLoader;

/// Elements of T per 16-byte chunk (one cp.async): 8 for f16/bf16, 4 for float.
template <typename T> constexpr int kChunkElems = 16 / int(sizeof(T));

/// K-major strided operand: line = operand row, C = BK/V chunks along k.
template <typename T, int ROWS, int BK, int THREADS>
struct StageLoader<StridedOperand<T, true>, ROWS, BK, THREADS> {
  static constexpr int kVec = kChunkElems<T>;
  static constexpr bool kRounded = false; // fp32 elements are stored as read, not yet TF32
  using Map = ChunkMap<ROWS, BK / kVec, THREADS>;
  Map map;
  const T *base, *src; // operand base (address of skipped chunks); chunk of iteration 0
  long long stride;    // elements between a thread's successive chunks (kStep rows)
  int rowsLeft, kLeft; // operand rows from iteration 0's row; K - (this slice's k of the chunk)
  __device__ __forceinline__ StageLoader(const StridedOperand<T, true> &op, int K, int row0)
      : base(op.ptr), stride(Map::kStep * op.ld) {
    src = op.ptr + (row0 + map.line0) * op.ld + map.ch * kVec;
    rowsLeft = op.rows - row0 - map.line0;
    kLeft = K - map.ch * kVec;
  }
  __device__ __forceinline__ void begin(unsigned stage) {
#pragma unroll
    for (int it = 0; it < Map::kIters; ++it)
      if (map.inTile(it)) {
        const bool ok = it * Map::kStep < rowsLeft && kLeft > 0;
        cpAsync16(stage + map.offset(it), ok ? src + it * stride : base, ok);
      }
    src += BK;
    kLeft -= BK;
  }
  __device__ __forceinline__ void finish(unsigned) const {}
};

/// MN-major strided operand: line = k, C = ROWS/V chunks along the operand rows (fp32 tiles use
/// the Scalar swizzle of their 32-bit fragment loads).
template <typename T, int ROWS, int BK, int THREADS>
struct StageLoader<StridedOperand<T, false>, ROWS, BK, THREADS> {
  static constexpr int kVec = kChunkElems<T>;
  static constexpr bool kRounded = false;
  using Map = ChunkMap<BK, ROWS / kVec, THREADS, sizeof(T) == 4>;
  Map map;
  const T *base, *src;
  long long stride, sliceStride; // elements between a thread's chunks; between K slices
  bool colOk;                    // this thread's V operand rows are in range
  int kLeft;                     // K - (k of iteration 0's line in this slice)
  __device__ __forceinline__ StageLoader(const StridedOperand<T, false> &op, int K, int row0)
      : base(op.ptr), stride(Map::kStep * op.ld), sliceStride(BK * op.ld) {
    src = op.ptr + map.line0 * op.ld + row0 + map.ch * kVec;
    colOk = row0 + map.ch * kVec < op.rows;
    kLeft = K - map.line0;
  }
  __device__ __forceinline__ void begin(unsigned stage) {
#pragma unroll
    for (int it = 0; it < Map::kIters; ++it)
      if (map.inTile(it)) {
        const bool ok = colOk && it * Map::kStep < kLeft;
        cpAsync16(stage + map.offset(it), ok ? src + it * stride : base, ok);
      }
    src += sliceStride;
    kLeft -= BK;
  }
  __device__ __forceinline__ void finish(unsigned) const {}
};

/// Functor operand: begin() evaluates this thread's chunks (V consecutive k of one row) into
/// packed registers, finish() stores them to the K-major stage tile. fp32 elements are rounded to
/// TF32 here, once per element, so their fragments need no rounding (kRounded).
template <typename T, typename F, int ROWS, int BK, int THREADS>
struct StageLoader<FnOperand<T, F>, ROWS, BK, THREADS> {
  static constexpr int kVec = kChunkElems<T>;
  static constexpr bool kRounded = true;
  using Map = ChunkMap<ROWS, BK / kVec, THREADS>;
  Map map;
  const FnOperand<T, F> &op;
  int K, r0, k0;              // row of iteration 0's chunk; k of the next slice
  unsigned v[Map::kIters][4]; // V elements per chunk: two 16-bit (lower k in low half) or one
                              // TF32 per register
  __device__ __forceinline__ StageLoader(const FnOperand<T, F> &op, int K, int row0)
      : op(op), K(K), r0(row0 + map.line0), k0(0) {}
  __device__ __forceinline__ unsigned element(int r, int k) const {
    if constexpr (sizeof(T) == 4)
      return (r < op.rows && k < K) ? toTf32(op.f(r, k)) : 0u;
    else
      return (r < op.rows && k < K) ? unsigned(cvt<T>(op.f(r, k)).bits) : 0u;
  }
  __device__ __forceinline__ void begin(unsigned) {
    const int k = k0 + map.ch * kVec;
#pragma unroll
    for (int it = 0; it < Map::kIters; ++it)
      if (map.inTile(it)) {
        const int r = r0 + it * Map::kStep;
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if constexpr (kVec == 8)
            v[it][e] = element(r, k + 2 * e) | (element(r, k + 2 * e + 1) << 16);
          else
            v[it][e] = element(r, k + e);
      }
    k0 += BK;
  }
  __device__ __forceinline__ void finish(unsigned stage) const {
#pragma unroll
    for (int it = 0; it < Map::kIters; ++it)
      if (map.inTile(it))
        stShared16(stage + map.offset(it), v[it]);
  }
};

//===----------------------------------------------------------------------===//
// Fragment reader: ldmatrix addresses of one operand's stage tile for one lane.
//
// x4(stage, p, ks) loads the 16-row block of warp rows 16p .. 16p+15 (rows relative to the
// warp's first row) and the ks-th mma k step, two 16-byte chunks per row (k = 16 ks .. 16 ks + 15
// for 16-bit T, k = 8 ks .. 8 ks + 7 for fp32), as four 8x8 b16 matrices (8 rows x one chunk; for
// fp32 each lane receives one element, (row lane/4, k lane%4 of the chunk), which is exactly the
// element the m16n8k8 TF32 fragments want where the 16-bit ones hold a pair); matrix
// j = lane / 8 covers one row half and one k half (chunk):
//   A order (BOrder = false): j -> (row half j & 1, k half j >> 1), the registers of the mma A
//     fragment {a0, a1, a2, a3};
//   B order (BOrder = true):  j -> (row half j >> 1, k half j & 1), two n8 B fragments
//     {b0, b1} of rows 0-7 and {b0, b1} of rows 8-15.
// x2 (B order) loads rows 16p .. 16p+7 only: lanes 0-15 give the same addresses as for x4.
// K-major tiles hold each 8x8 matrix as 8 lines (rows) of one chunk; MN-major tiles as 8 lines
// (k) of one chunk, which ldmatrix.trans transposes into the same fragment. Every line a lane
// addresses is = lane % 8 (mod 8), so its swizzle mask is swizzleMask(lane % 8): the lane's
// offsets are computed once, and the block index p (K-major) or ks (MN-major) only adds a
// constant. Round (fp32 strided operands) rounds every loaded register to TF32.
// MN-major fp32 tiles are read by the specialization below, with 32-bit loads.
//===----------------------------------------------------------------------===//

template <typename T, bool KMajor, int ROWS, int BK, bool BOrder, bool Round> struct FragReader {
  static_assert(KMajor || sizeof(T) == 2, "ldmatrix.trans transposes 16-bit elements only");
  static constexpr int kC = (KMajor ? BK : ROWS) / kChunkElems<T>;
  static constexpr unsigned kLineBytes = kC * 16;
  unsigned lineOff; // K-major: the lane's row line; MN-major: the lane's k line (ks = 0)
  int chunk, mask;  // K-major: the lane's k chunk (ks = 0); MN-major: row chunk (p = 0)
  __device__ __forceinline__ FragReader(int lane, int warpRow) {
    const int i = lane & 7, j = lane >> 3;
    const int rHalf = BOrder ? j >> 1 : j & 1, kHalf = BOrder ? j & 1 : j >> 1;
    mask = swizzleMask<kC>(i);
    if constexpr (KMajor) {
      lineOff = unsigned((warpRow + rHalf * 8 + i) * kLineBytes);
      chunk = kHalf;
    } else {
      lineOff = unsigned((kHalf * 8 + i) * kLineBytes);
      chunk = warpRow / 8 + rHalf;
    }
  }
  __device__ __forceinline__ unsigned addr(unsigned stage, int p, int ks) const {
    if constexpr (KMajor) // chunk 2 ks + kHalf == kHalf ^ 2 ks
      return stage + lineOff + unsigned(((chunk ^ mask) ^ (2 * ks)) * 16) + p * 16 * kLineBytes;
    else
      return stage + lineOff + unsigned(((chunk + 2 * p) ^ mask) * 16) + ks * 16 * kLineBytes;
  }
  __device__ __forceinline__ void x4(unsigned stage, int p, int ks, unsigned (&d)[4]) const {
    ldsmX4<!KMajor>(addr(stage, p, ks), d);
    if constexpr (Round)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        d[e] = toTf32(__uint_as_float(d[e]));
  }
  __device__ __forceinline__ void x2(unsigned stage, int p, int ks, unsigned (&d)[2]) const {
    ldsmX2<!KMajor>(addr(stage, p, ks), d);
    if constexpr (Round)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        d[e] = toTf32(__uint_as_float(d[e]));
  }
};

/// MN-major fp32 tile (line = k, C = ROWS/4 chunks, Scalar swizzle), read with 32-bit loads into
/// the m16n8k8 TF32 fragments. Lane (g = lane/4, q = lane%4) reads rows 16p + 8h + g and
/// k = 8 ks + 4 kh + q; every such line is = q (mod 4), so the lane's swizzle mask is
/// swizzleMask<C, true>(q) for all of them, and one load of a warp (fixed h, kh) touches 4 lines
/// x 8 rows = 4 lines x chunk pair (2c, 2c+1) on 8 distinct chunk positions: no bank conflict.
/// x4 / x2 return the registers in the order of the ldmatrix reader (A order: a0..a3; B order:
/// {b0, b1} of rows 16p..16p+7, then of rows 16p+8..16p+15).
template <int ROWS, int BK, bool BOrder, bool Round>
struct FragReader<float, false, ROWS, BK, BOrder, Round> {
  static constexpr int kC = ROWS / 4;
  static constexpr unsigned kLineBytes = kC * 16;
  unsigned laneOff; // line q and the word of row g within its chunk
  int chunk, mask;  // chunk of row warpRow + g; swizzle mask of the lane's lines
  __device__ __forceinline__ FragReader(int lane, int warpRow) {
    const int g = lane >> 2, q = lane & 3;
    mask = swizzleMask<kC, true>(q);
    laneOff = unsigned(q * kLineBytes + (g & 3) * 4);
    chunk = (warpRow + g) >> 2; // warpRow % 8 == 0: rows + 8h + 16p are chunks + 2h + 4p
  }
  /// Loads (row 16p + 8h + g, k 8 ks + 4 kh + q), rounded to TF32 when Round.
  __device__ __forceinline__ unsigned ld(unsigned stage, int p, int h, int ks, int kh) const {
    const unsigned v =
        ldShared32(stage + laneOff + unsigned(((chunk + 4 * p + 2 * h) ^ mask) * 16) +
                   unsigned(8 * ks + 4 * kh) * kLineBytes);
    if constexpr (Round)
      return toTf32(__uint_as_float(v));
    else
      return v;
  }
  __device__ __forceinline__ void x4(unsigned stage, int p, int ks, unsigned (&d)[4]) const {
    d[0] = ld(stage, p, 0, ks, 0);
    d[1] = BOrder ? ld(stage, p, 0, ks, 1) : ld(stage, p, 1, ks, 0);
    d[2] = BOrder ? ld(stage, p, 1, ks, 0) : ld(stage, p, 0, ks, 1);
    d[3] = ld(stage, p, 1, ks, 1);
  }
  __device__ __forceinline__ void x2(unsigned stage, int p, int ks, unsigned (&d)[2]) const {
    d[0] = ld(stage, p, 0, ks, 0);
    d[1] = ld(stage, p, 0, ks, 1);
  }
};

} // namespace tc

//===----------------------------------------------------------------------===//
// The GEMM tile
//===----------------------------------------------------------------------===//

/// Computes the (tileM, tileN) BM x BN tile of C[M,N] = A[M,K] * B[K,N] on tensor cores: T is
/// f16 or bf16, or float (both operands), accumulation is fp32, and every in-range result
/// (m < M, n < N) goes to `epilogue(int m, int n, float acc)` once, in no particular order (each
/// thread holds pairs of adjacent columns). float operands are fp32 in memory and multiplied as
/// TF32 (10-bit mantissa: each element rounded with cvt.rna.tf32.f32, the products and sums in
/// fp32), like cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32. OpA / OpB are StridedOperand or FnOperand
/// descriptors of A viewed as M x K and B viewed as N x K. Launch with blockDim.x ==
/// 32 * WARPS_M * WARPS_N; each warp owns a (BM/WARPS_M) x (BN/WARPS_N) sub-tile, a multiple of
/// 16 x 8. A tile line must be 2, 4 or a multiple of 8 16-byte chunks (the swizzle), so BK is 16,
/// 32 or a multiple of 64 for f16/bf16 and 8, 16 or a multiple of 32 for float, and so is the
/// tile extent (BM or BN) of an MN-major StridedOperand; STAGES >= 2. `smem` is dynamic shared
/// memory of gemmTcSmemBytes<T, BM, BN, BK, STAGES, OpA::kKMajor, OpB::kKMajor>() bytes, 16-byte
/// aligned (the caller checks it against the device's limit: float doubles it); it may be reused
/// once the call returns. Any M, N, K >= 0 works (out-of-range elements read as zero), subject to
/// the StridedOperand alignment preconditions. Requires sm_80 or newer.
template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, typename OpA,
          typename OpB, typename Epilogue>
__device__ __forceinline__ void gemmTileTC(int M, int N, int K, int tileM, int tileN, const OpA &a,
                                           const OpB &b, Epilogue epilogue, char *smem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  static_assert(sizeof(T) == 0, "gemmTileTC needs sm_80 or newer (cp.async, bf16 mma)");
#endif
  static_assert(tc::IsSame<T, f16>::value || tc::IsSame<T, bf16>::value ||
                    tc::IsSame<T, float>::value,
                "gemmTileTC: T must be kiln::f16, kiln::bf16 or float (TF32)");
  static_assert(tc::IsSame<typename OpA::Elem, T>::value &&
                    tc::IsSame<typename OpB::Elem, T>::value,
                "gemmTileTC: both operands must have element type T");
  constexpr int kWarpM = BM / WARPS_M, kWarpN = BN / WARPS_N;
  static_assert(BM % WARPS_M == 0 && kWarpM % 16 == 0, "BM / WARPS_M must be a multiple of 16");
  static_assert(BN % WARPS_N == 0 && kWarpN % 8 == 0, "BN / WARPS_N must be a multiple of 8");
  constexpr int kV = tc::kChunkElems<T>; // elements per 16-byte chunk: 8 (16-bit), 4 (float)
  constexpr int kMmaK = tc::Mma<T>::kK;  // 16 (f16/bf16), 8 (TF32)
  static_assert(BK % kMmaK == 0, "BK must be a multiple of the mma k (16 f16/bf16, 8 float)");
  static_assert(BK / kV == 2 || BK / kV == 4 || BK % (8 * kV) == 0,
                "BK must be 16, 32 or a multiple of 64 (f16/bf16); 8, 16 or a multiple of 32 "
                "(float): 2, 4 or a multiple of 8 16-byte chunks");
  static_assert(OpA::kKMajor || BM / kV == 2 || BM / kV == 4 || BM % (8 * kV) == 0,
                "an MN-major A tile needs BM = 16, 32 or a multiple of 64 (f16/bf16); 16 or a "
                "multiple of 32 (float)");
  static_assert(OpB::kKMajor || BN / kV == 2 || BN / kV == 4 || BN % (8 * kV) == 0,
                "an MN-major B tile needs BN = 16, 32 or a multiple of 64 (f16/bf16); 8, 16 or a "
                "multiple of 32 (float)");
  static_assert(STAGES >= 2, "the pipeline needs at least two stages");
  constexpr int kThreads = 32 * WARPS_M * WARPS_N;
  constexpr int kMI = kWarpM / 16; // m16 fragments per warp
  constexpr int kNI = kWarpN / 8;  // n8 fragments per warp
  constexpr int kStageA = BM * BK * int(sizeof(T)), kStageB = BN * BK * int(sizeof(T));

  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int warpRow = (warp / WARPS_N) * kWarpM, warpCol = (warp % WARPS_N) * kWarpN;
  const unsigned smemA = tc::smemAddr(smem), smemB = smemA + STAGES * kStageA;
  tc::StageLoader<OpA, BM, BK, kThreads> loadA(a, K, tileM * BM);
  tc::StageLoader<OpB, BN, BK, kThreads> loadB(b, K, tileN * BN);
  // fp32 operands not rounded by their loader are rounded to TF32 as fragments.
  constexpr bool kRoundA = sizeof(T) == 4 && !tc::StageLoader<OpA, BM, BK, kThreads>::kRounded;
  constexpr bool kRoundB = sizeof(T) == 4 && !tc::StageLoader<OpB, BN, BK, kThreads>::kRounded;
  const tc::FragReader<T, OpA::kKMajor, BM, BK, false, kRoundA> readA(lane, warpRow);
  const tc::FragReader<T, OpB::kKMajor, BN, BK, true, kRoundB> readB(lane, warpCol);

  float acc[kMI][kNI][4];
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        acc[mi][ni][e] = 0.0f;

  // Main loop (tile kt lives in stage kt % STAGES):
  //  1. Prologue: start slices 0 .. STAGES-2, one cp.async group each (empty groups past the
  //     end keep the group count uniform); functor slices are computed and stored at once.
  //  2. Wait until slice kt's group has landed (at most STAGES-2 newer groups pending), then
  //     __syncthreads: slice kt is visible to all warps, and every warp is done with slice kt-1.
  //  3. Start slice kt + STAGES - 1 into the stage slice kt-1 used; commit its group.
  //  4. Multiply slice kt: per mma k step (16 wide, 8 for TF32), load the A and B fragments
  //     (ldmatrix, or 32-bit loads for MN-major fp32; rounded to TF32 where needed), then
  //     kMI x kNI mma.sync.
  //  5. Store functor operands' registers for slice kt + STAGES - 1 (loaded in step 3 while
  //     step 4 ran); the __syncthreads of the next step 2 publishes them.
  //  6. Drain the (empty) outstanding groups and sync, so smem may be reused; run the epilogue.
  const int kTiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) { // step 1
    if (s < kTiles) {
      loadA.begin(smemA + s * kStageA);
      loadB.begin(smemB + s * kStageB);
      loadA.finish(smemA + s * kStageA);
      loadB.finish(smemB + s * kStageB);
    }
    tc::cpAsyncCommit();
  }
  int readStage = 0, writeStage = STAGES - 1;
  for (int kt = 0; kt < kTiles; ++kt) {
    tc::cpAsyncWait<STAGES - 2>(); // step 2
    __syncthreads();
    const bool more = kt + STAGES - 1 < kTiles; // step 3
    const unsigned wA = smemA + writeStage * kStageA, wB = smemB + writeStage * kStageB;
    if (more) {
      loadA.begin(wA);
      loadB.begin(wB);
    }
    tc::cpAsyncCommit();

    const unsigned rA = smemA + readStage * kStageA, rB = smemB + readStage * kStageB; // step 4
#pragma unroll
    for (int ks = 0; ks < BK / kMmaK; ++ks) {
      unsigned af[kMI][4], bfrag[kNI][2];
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
        readA.x4(rA, mi, ks, af[mi]);
#pragma unroll
      for (int ni = 0; ni + 1 < kNI; ni += 2) {
        unsigned d[4];
        readB.x4(rB, ni / 2, ks, d);
        bfrag[ni][0] = d[0];
        bfrag[ni][1] = d[1];
        bfrag[ni + 1][0] = d[2];
        bfrag[ni + 1][1] = d[3];
      }
      if constexpr (kNI % 2 == 1)
        readB.x2(rB, kNI / 2, ks, bfrag[kNI - 1]);
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni)
          tc::Mma<T>::run(acc[mi][ni], af[mi], bfrag[ni]);
    }

    if (more) { // step 5
      loadA.finish(wA);
      loadB.finish(wB);
    }
    readStage = readStage == STAGES - 1 ? 0 : readStage + 1;
    writeStage = writeStage == STAGES - 1 ? 0 : writeStage + 1;
  }
  tc::cpAsyncWait<0>(); // step 6
  __syncthreads();

  const int rowBase = tileM * BM + warpRow + (lane >> 2);
  const int colBase = tileN * BN + warpCol + 2 * (lane & 3);
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int m = rowBase + mi * 16 + half * 8;
      if (m >= M)
        continue;
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni) {
        const int n = colBase + ni * 8;
        if constexpr (IsPairEpilogue<Epilogue>::value) {
          if (n < N) // N is even: columns n and n + 1 arrive together
            epilogue.f(m, n, acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
        } else {
          if (n < N)
            epilogue(m, n, acc[mi][ni][2 * half]);
          if (n + 1 < N)
            epilogue(m, n + 1, acc[mi][ni][2 * half + 1]);
        }
      }
    }
}

} // namespace kiln
