// decode_attention.cuh - attention of a generation step over a paged KV cache, split-KV.
//
// The building block of KV-cached text generation: kvCacheAppend writes the step's new keys and
// values into the cache, then decodeAttentionPartial and decodeAttentionReduce compute
//
//   out[b, h, i, :] = sum_j softmax_j(scale * dot(q[b, h, i, :], K[b, g, j, :])) * V[b, g, j, :]
//   over the cache tokens j < seqLens[b] + i + 1,   g = h / (Hq / Hkv)   (grouped-query attention)
//
// for the q_len new tokens i of each sequence (q_len = 1 in plain decoding; a few with
// speculative decoding or chunked prefill): token seqLens[b] + i sees the whole history and the
// new tokens up to itself (causal).
//
// Cache layout (one layer; the vLLM PagedAttention layout, Kwon et al., "Efficient Memory
// Management for Large Language Model Serving with PagedAttention", SOSP 2023, arXiv:2309.06180):
//  - a K pool and a V pool, each [numBlocks, Hkv, blockSize, D] of T (float, f16, bf16), unit
//    stride along D: token slot s of pool block p, kv head g, is row ((p * Hkv + g) * blockSize
//    + s) of D elements;
//  - a block table, int32 [B, maxBlocksPerSeq]: logical block n of sequence b (its tokens
//    n * blockSize .. (n + 1) * blockSize - 1) lives in pool block blockTable[b, n];
//  - seqLens, int32 [B]: the tokens of each sequence already in the cache BEFORE this step.
// Token t of sequence b is slot t % blockSize of pool block blockTable[b, t / blockSize]. The
// capacity of a sequence is maxBlocksPerSeq * blockSize tokens. blockSize is a run-time value,
// any integer >= 1 (powers of two take a shift instead of a division); a contiguous cache is
// one block per sequence with blockSize = capacity.
//
// Split-KV (Flash-Decoding: Dao, Haziza, Massa, Sizov, "Flash-Decoding for long-context
// inference", 2023, https://crfm.stanford.edu/2023/10/12/flashdecoding.html). With one query row
// per head there is too little work per (sequence, head) to fill the GPU, so the keys of each
// (b, g) are cut into `splits` chunks handled by different blocks. Each block runs the online
// softmax of FlashAttention-2 (Dao 2023, arXiv:2307.08691) over its chunk and leaves a partial
// (row maximum m, row sum l, unnormalized accumulator acc) in an fp32 workspace; the reduce
// kernel rescales and sums the partials: M = max_s m_s, out = sum_s 2^(m_s - M) acc_s /
// sum_s 2^(m_s - M) l_s (scores in log2 units). When a sequence needs one split, its block
// writes the normalized output itself and the reducer skips it.
//
// The launch is fixed when a CUDA graph is captured, the valid length is not: the grid holds
// `maxSplits` split slots per (b, g) (sized on the host for the capacity), and each block derives
// the partition from seqLens[b] at run time (decode::partition): chunks of whole 64-key (f16 /
// bf16) or 32-key (fp32) tiles, at least kMinSplitKeys keys each, as many as needed to stay
// within maxSplits. Blocks whose slot lies past the valid length return at once, so the time
// follows the valid length, not the capacity; the reducer recomputes the same partition to know
// how many slots hold data.
//
// One block handles all query rows of one KV group (the Hq / Hkv heads x q_len new tokens: GQA
// reads each K/V tile once per group, as FlashInfer's tensor-core decode does; Ye et al. 2025,
// arXiv:2501.01005). K and V tiles stream through a multi-stage cp.async pipeline (16-byte
// copies, each key row D contiguous elements, so a warp reads whole rows); the 4 warps split the
// keys of each tile (and the rows, when the group has more than 16 (8) rows) and are merged
// through shared memory at the end. f16/bf16: scores and P V on tensor cores (mma.sync
// m16n8k16, rows padded to 16, fp32 accumulation, P rounded to T for the P V product as in
// FlashAttention-2); fp32: CUDA cores in fp32. Scores, statistics and sums are fp32 throughout.
//
// Measured on the H200 (test/gpu/decode_attention_test.cu; f16, D = 128, Hq / Hkv = 32 / 8,
// block size 16, q_len 1, partial + reduce in a CUDA graph, K/V working set past the L2): B = 8
// at 4096 tokens 43.8 us (3.06 TB/s of K and V read), at 16384 tokens 3.75 TB/s; B = 1 at 4096
// tokens 15.2 us, at 32768 2.9 TB/s; B = 1 at 1024 tokens 9.3 us with a capacity of 2048 and
// 9.6 us with 8192. Short steps are latency-bound: the chain seqLens -> block table -> first
// tiles, and the second launch, cost about 9 us.
//
// This header has two parts. The first, kiln::decode's constexpr sizing (tiles, shared memory,
// workspace, grids, the split partition) has no CUDA types, so host C++ (the memory planner and
// the launcher) includes this file and computes exactly what the kernels use. The second, the
// device code, is compiled only by nvcc and NVRTC (__CUDACC__ / __CUDACC_RTC__) and needs
// nothing but kiln/attention.cuh (and through it kiln/common.cuh, kiln/gemm_tc.cuh).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KILN_DECODE_HD __host__ __device__
#else
#define KILN_DECODE_HD
#endif

namespace kiln {
namespace decode {

//===----------------------------------------------------------------------===//
// Sizing shared by host and device (plain constexpr integer functions)
//===----------------------------------------------------------------------===//

/// Warps (and threads) of a decodeAttentionPartial or decodeAttentionReduce block.
constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
/// Threads of a kvCacheAppend block.
constexpr int kAppendThreads = 256;
/// The smallest chunk of keys a split gets (a block's fixed costs, loading Q and writing a
/// partial, then stay small against its K/V traffic). 256 was measured slower at 1024 tokens
/// (B = 1: 12.1 us against 9.3) and faster at 4096 (14.1 us against 15.2).
constexpr int kMinSplitKeys = 128;

/// Query rows one warp owns: 16 (one m16 MMA tile, f16/bf16, `elemBytes` = 2) or 8 (fp32).
KILN_DECODE_HD constexpr int rowsPerWarp(int elemBytes) { return elemBytes == 2 ? 16 : 8; }
/// Keys a warp handles per step: 16 (two n8 MMA tiles) or 8 (fp32: 4 lanes per key).
KILN_DECODE_HD constexpr int keysPerStep(int elemBytes) { return elemBytes == 2 ? 16 : 8; }
/// Keys per pipeline tile (one tile = one K and one V stage).
KILN_DECODE_HD constexpr int tileKeys(int elemBytes) { return elemBytes == 2 ? 64 : 32; }
/// Pipeline stages (tiles in shared memory at once): 3, or 2 for head dims above 128 (the Q
/// tile of 64 rows and three stages would pass the 227 KiB a block may have).
KILN_DECODE_HD constexpr int stages(int /*elemBytes*/, int d) { return d > 128 ? 2 : 3; }
/// Row pitch of the K and V tiles in elements: D + 8 for 16-bit types (16 bytes of padding:
/// conflict-free ldmatrix), for fp32 D rounded to 16 mod 32 words (a quarter warp reads two
/// keys x four 16-byte columns, eight distinct bank groups).
KILN_DECODE_HD constexpr int kvPitch(int elemBytes, int d) {
  return elemBytes == 2 ? d + 8 : d + (48 - d % 32) % 32;
}
/// Row pitch of the Q tile in elements (fp32 rows are read as broadcasts: no padding).
KILN_DECODE_HD constexpr int qPitch(int elemBytes, int d) { return elemBytes == 2 ? d + 8 : d; }
/// Query rows of one (b, g) group a block handles at most: 64 (f16/bf16) or 32 (fp32).
KILN_DECODE_HD constexpr int rowsPerBlock(int elemBytes) { return kWarps * rowsPerWarp(elemBytes); }
/// Blocks per (b, g, split) along the rows: ceil(groupRows / rowsPerBlock), groupRows =
/// (Hq / Hkv) * qLen. More than one only for large groups times q_len; they read the same chunk
/// at the same time (adjacent blockIdx.x), mostly from L2.
KILN_DECODE_HD constexpr int rowBlocks(int elemBytes, int groupRows) {
  return (groupRows + rowsPerBlock(elemBytes) - 1) / rowsPerBlock(elemBytes);
}
/// Rows of the block's Q tile: min(groupRows, rowsPerBlock) rounded up to whole warps' rows.
KILN_DECODE_HD constexpr int qTileRows(int elemBytes, int groupRows) {
  return ((groupRows < rowsPerBlock(elemBytes) ? groupRows : rowsPerBlock(elemBytes)) +
          rowsPerWarp(elemBytes) - 1) /
         rowsPerWarp(elemBytes) * rowsPerWarp(elemBytes);
}
/// Bytes of the K/V pipeline: stages x (K tile + V tile).
KILN_DECODE_HD constexpr long long pipelineBytes(int elemBytes, int d) {
  return (long long)stages(elemBytes, d) * 2 * tileKeys(elemBytes) * kvPitch(elemBytes, d) *
         elemBytes;
}
/// Bytes of the end-of-chunk merge of the warps (fp32 m, l and acc of every warp's rows); it
/// reuses the pipeline's memory.
KILN_DECODE_HD constexpr long long mergeBytes(int elemBytes, int d) {
  return (long long)kWarps * rowsPerWarp(elemBytes) * (d + 2) * 4;
}
/// Bytes of a cluster block's partial (decodeAttentionPartial with CLUSTER > 1): fp32 acc
/// [qTileRows][d], then (m, l, 0, 0) [qTileRows] as float4. It lies in the pipeline's memory after
/// the merge buffers (both are written after the last tile), so it costs shared memory only
/// where the pipeline is shorter than the two.
KILN_DECODE_HD constexpr long long clusterPartialBytes(int elemBytes, int d, int groupRows) {
  return (long long)qTileRows(elemBytes, groupRows) * (d + 4) * 4;
}
/// Dynamic shared memory of decodeAttentionPartial in bytes: the Q tile, the pipeline (or the
/// merge buffers, with `cluster` (CLUSTER > 1) followed by the block's partial, whichever is
/// larger) and, for fp32, one 8 x 8 probability tile per warp. Above 48 KiB the launcher raises
/// cudaFuncAttributeMaxDynamicSharedMemorySize.
KILN_DECODE_HD constexpr long long smemBytes(int elemBytes, int d, int groupRows,
                                             bool cluster = false) {
  const long long after = mergeBytes(elemBytes, d) +
                          (cluster ? clusterPartialBytes(elemBytes, d, groupRows) : 0);
  return (long long)qTileRows(elemBytes, groupRows) * qPitch(elemBytes, d) * elemBytes +
         (pipelineBytes(elemBytes, d) > after ? pipelineBytes(elemBytes, d) : after) +
         (elemBytes == 2 ? 0 : kWarps * 8 * 8 * 4);
}

/// Bytes of the fp32 workspace between the two kernels: for each output row (b, h, i) and split
/// slot, D accumulator values and the pair (m, l). Layout: acc [B * Hq * qLen, maxSplits, D],
/// then ml [B * Hq * qLen, maxSplits, 2]. Only the slots a sequence uses are written and read;
/// nothing needs zeroing.
KILN_DECODE_HD constexpr long long workspaceBytes(int batch, int qHeads, int qLen, int maxSplits,
                                                  int d) {
  return (long long)batch * qHeads * qLen * maxSplits * (d + 2) * 4;
}

/// Keys the last new token of a sequence sees: seqLen + qLen (seqLen clamped to [0, capacity]),
/// at most the capacity (rows past it are not in the cache; the runtime refuses that case).
KILN_DECODE_HD constexpr int validKeys(int seqLen, int qLen, int capacity) {
  const long long s = seqLen < 0 ? 0 : seqLen > capacity ? capacity : seqLen;
  return s + qLen < capacity ? int(s + qLen) : capacity;
}

/// A sequence's split partition: chunks of `chunk` keys (whole tiles), `splits` of them.
struct Partition {
  int chunk, splits;
};
/// The partition of `keys` valid keys into at most `maxSplits` chunks of whole tiles of at
/// least kMinSplitKeys keys: the fewest tiles per chunk that fit in maxSplits chunks. Computed
/// the same way by each partial block (which split slots have work) and by the reducer (how many
/// slots hold data).
KILN_DECODE_HD constexpr Partition partition(int keys, int maxSplits, int elemBytes) {
  const int tk = tileKeys(elemBytes), minTiles = kMinSplitKeys / tileKeys(elemBytes);
  const int tiles = (keys + tk - 1) / tk, slots = maxSplits < 1 ? 1 : maxSplits;
  int perSplit = (tiles + slots - 1) / slots;
  perSplit = perSplit < minTiles ? minTiles : perSplit;
  const int chunk = perSplit * tk;
  return {chunk, keys <= chunk ? 1 : (keys + chunk - 1) / chunk};
}

/// Blocks of decodeAttentionPartial one SM holds at once as its shared memory allows
/// (`smemPerSm` bytes, 1 KiB of it reserved per block by the driver), at most 3 (the register
/// limit: 128 threads of up to 160 registers). Registers are not known before the kernel is
/// compiled; for D > 128 (about 240 registers) and fp32 the shared memory allows one block
/// anyway.
KILN_DECODE_HD constexpr int residentBlocks(int elemBytes, int d, int groupRows,
                                            long long smemPerSm, bool cluster = false) {
  const long long n = smemPerSm / (smemBytes(elemBytes, d, groupRows, cluster) + 1024);
  return n < 1 ? 1 : n > 3 ? 3 : int(n);
}

/// The split slots to size the grid and the workspace with, for a cache of `capacity` tokens
/// per sequence on `smCount` SMs: as many as fill one wave of resident blocks (residentBlocks
/// per SM; a second wave would pay each block's start-up latency chain -- seqLens, block table,
/// first tiles -- twice), and no more than the capacity can use (ceil(capacity /
/// kMinSplitKeys)); at least 1, at most 65535 (the grid's z limit). Measured on the H200 (f16,
/// D = 128, Hq/Hkv = 32/8, B = 8, 4096 tokens; test/gpu/decode_attention_test.cu): 4 slots (one
/// wave of 2 blocks per SM) 43.8 us, 8 slots 48.7 us, 16 slots 57.5 us, 2 slots 60.9 us.
KILN_DECODE_HD constexpr int recommendedMaxSplits(int batch, int kvHeads, int groupRows,
                                                  int capacity, int smCount, int elemBytes,
                                                  int d, long long smemPerSm,
                                                  bool cluster = false) {
  const long long groups = (long long)batch * kvHeads * rowBlocks(elemBytes, groupRows);
  const long long wave =
      (long long)residentBlocks(elemBytes, d, groupRows, smemPerSm, cluster) * smCount;
  long long s = wave / groups;
  const long long most = ((long long)capacity + kMinSplitKeys - 1) / kMinSplitKeys;
  s = s < most ? s : most;
  s = s < 65535 ? s : 65535;
  return s < 1 ? 1 : int(s);
}

/// Grid dimensions (no CUDA types): launch as dim3(x, y, z).
struct Grid {
  int x, y, z;
};
/// Grid of decodeAttentionPartial: x = Hkv * rowBlocks (row block fastest), y = B, z =
/// maxSplits (so the slots that have work come first and the empty ones at the tail).
KILN_DECODE_HD constexpr Grid partialGrid(int batch, int qHeads, int kvHeads, int qLen,
                                          int maxSplits, int elemBytes) {
  return {kvHeads * rowBlocks(elemBytes, qHeads / kvHeads * qLen), batch, maxSplits};
}
/// Grid of decodeAttentionReduce: one warp per output row (b, h, i), kWarps rows per block.
KILN_DECODE_HD constexpr Grid reduceGrid(int batch, int qHeads, int qLen) {
  return {int(((long long)batch * qHeads * qLen + kWarps - 1) / kWarps), 1, 1};
}
/// Grid of kvCacheAppend (kAppendThreads per block, one thread per 16 bytes of a new K and V
/// row; the kernel loops when the grid is smaller).
KILN_DECODE_HD constexpr Grid appendGrid(int batch, int kvHeads, int qLen, int d, int elemBytes) {
  const long long n = (long long)batch * kvHeads * qLen * (d * elemBytes / 16);
  const long long blocks = (n + kAppendThreads - 1) / kAppendThreads;
  return {int(blocks < 1 ? 1 : blocks > 65536 ? 65536 : blocks), 1, 1};
}

} // namespace decode
} // namespace kiln

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#include "kiln/attention.cuh"
#include "kiln/attention_sm90.cuh" // prefillAttentionSm90Paged
#include "kiln/gemm_sm90.cuh" // sm90::clusterSync, clusterRank, ldClusterF4 (CLUSTER > 1)

namespace kiln {

/// One layer's paged KV cache (layout in the file comment). Pointers are device pointers; the
/// pools are written only by kvCacheAppend.
template <typename T> struct PagedKvCache {
  T *k;                  ///< K pool [numBlocks, Hkv, blockSize, D], 16-byte aligned
  T *v;                  ///< V pool [numBlocks, Hkv, blockSize, D], 16-byte aligned
  const int *blockTable; ///< int32 [B, maxBlocksPerSeq]: pool block of each logical block
  const int *seqLens;    ///< int32 [B]: tokens cached before this step's new ones
  int blockSize;         ///< tokens per block, >= 1
  int maxBlocksPerSeq;   ///< row length of blockTable; capacity = maxBlocksPerSeq * blockSize
};

/// Shapes and scalars of one decode step (the same values for the three functions).
struct DecodeShape {
  int batch;     ///< B, sequences in the step
  int qHeads;    ///< Hq, a multiple of kvHeads
  int kvHeads;   ///< Hkv
  int qLen;      ///< new tokens per sequence (1 in plain decoding), >= 1
  int maxSplits; ///< split slots per (b, g): the grid's z and the workspace's sizing
  float scale;   ///< multiplies dot(q, k) (usually 1 / sqrt(D))
};

/// A [B, H, S, D] operand of the decode kernels computed element by element by fused producers
/// (the rotary of a slice of the QKV GEMM's output, kiln-fuse-pointwise): f(b, h, i, d) -> float,
/// rounded to the storage type where it is stored. The kernels take it wherever they take an
/// AttnTensor view.
template <typename F> struct ElemFn {
  F f;
  /// The 16 bytes (16 / sizeof(T) elements from d0) of row (b, h, i), each evaluated and
  /// rounded to T (decode::loadChunk16, attentionTC's Q tile).
  template <typename T>
  __device__ __forceinline__ void load16(long long b, long long h, long long i, int d0,
                                         unsigned (&x)[4]) const {
    constexpr int CE = 16 / int(sizeof(T));
    union {
      T e[CE];
      unsigned u[4];
    } v;
#pragma unroll
    for (int j = 0; j < CE; ++j)
      v.e[j] = cvt<T>(f(b, h, i, (long long)(d0 + j)));
#pragma unroll
    for (int j = 0; j < 4; ++j)
      x[j] = v.u[j];
  }
};
template <typename F> __device__ __forceinline__ ElemFn<F> makeElemFn(F f) { return ElemFn<F>{f}; }

namespace decode {

/// decodeAttentionPartial's default fused-append operands: none (kvCacheAppend wrote the step's
/// keys and values before the launch).
struct NoAppend {};
template <typename X> struct IsNoAppend {
  static constexpr bool value = false;
};
template <> struct IsNoAppend<NoAppend> {
  static constexpr bool value = true;
};

/// decodeAttentionPartial's default grid-dependency wait: none, the kernel waited before the
/// call. Any other functor is the kernel's wait, which the function calls itself once it has
/// read what no kernel of the step writes (see decodeAttentionPartial).
struct WaitedBefore {
  __device__ __forceinline__ void operator()() const {}
};
template <typename X> struct IsWaitedBefore {
  static constexpr bool value = false;
};
template <> struct IsWaitedBefore<WaitedBefore> {
  static constexpr bool value = true;
};

template <typename X> struct IsAttnTensor {
  static constexpr bool value = false;
};
template <typename T> struct IsAttnTensor<AttnTensor<T>> {
  static constexpr bool value = true;
};

template <bool B, typename X, typename Y> struct Conditional {
  using type = X;
};
template <typename X, typename Y> struct Conditional<false, X, Y> {
  using type = Y;
};

/// Compile-time configuration of the decode kernels for storage type T and head dim D.
template <typename T, int D> struct Config {
  static constexpr int kElem = int(sizeof(T));
  static constexpr bool kTensorCores = kElem == 2;
  static constexpr int kRowsPerWarp = rowsPerWarp(kElem);
  static constexpr int kKeysPerStep = keysPerStep(kElem);
  static constexpr int kTileKeys = tileKeys(kElem);
  static constexpr int kStages = stages(kElem, D);
  static constexpr int kPitch = kvPitch(kElem, D);
  static constexpr int kQPitch = qPitch(kElem, D);
  static constexpr int kChunkElems = 16 / kElem;  ///< elements per 16-byte copy
  static constexpr int kChunksPerRow = D / kChunkElems;
  static_assert(kElem == 2 || kElem == 4, "T is f16, bf16 or float");
  static_assert(D % 16 == 0 && D >= 16 && D <= 256, "head dim: a multiple of 16, at most 256");
  static_assert(mergeBytes(kElem, D) <= pipelineBytes(kElem, D),
                "the warps' merge buffers reuse the pipeline's shared memory");
  static_assert(smemBytes(kElem, D, rowsPerBlock(kElem)) <= 227 * 1024,
                "shared memory past the 227 KiB of one block on sm_90");
};

/// Where a sequence's tokens live: the element offset of token j's row of kv head g in a pool
/// (the PagedAttention address ((blockTable[b, j / bs] * Hkv + g) * bs + j % bs) * D).
struct TokenAddr {
  const int *table; ///< the sequence's block-table row
  int blockSize;
  int shift; ///< log2(blockSize) when it is a power of two, else -1
  int kvHeads;

  /// The element offset of token j's row of kv head g (head dim d elements per row).
  __device__ __forceinline__ long long offset(int j, int g, int d) const {
    int n, slot;
    if (shift >= 0) {
      n = j >> shift;
      slot = j & (blockSize - 1);
    } else {
      n = j / blockSize;
      slot = j - n * blockSize;
    }
    const long long block = ldg(table + n);
    return ((block * kvHeads + g) * blockSize + slot) * d;
  }
};
template <typename T>
__device__ __forceinline__ TokenAddr makeTokenAddr(const PagedKvCache<T> &cache, int b,
                                                   int kvHeads) {
  const int bs = cache.blockSize;
  return {cache.blockTable + (long long)b * cache.maxBlocksPerSeq, bs,
          (bs & (bs - 1)) == 0 ? __ffs(bs) - 1 : -1, kvHeads};
}

/// 16-byte read-only global load and global store (ld.global.nc.v4 / st.global.v4).
__device__ __forceinline__ void ldg16(const void *p, unsigned (&v)[4]) {
  asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
      : "l"(p));
}
__device__ __forceinline__ void stg16(void *p, const unsigned (&v)[4]) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v[0]), "r"(v[1]),
               "r"(v[2]), "r"(v[3])
               : "memory");
}

/// The 16 bytes (16 / sizeof(T) elements from d0) of row (b, h, i) of a decode operand: a view,
/// read with one 16-byte load, or an ElemFn, evaluated per element and rounded to T.
template <typename T>
__device__ __forceinline__ void loadChunk16(const AttnTensor<T> &t, long long b, long long h,
                                            long long i, int d0, unsigned (&x)[4]) {
  ldg16(t.ptr + b * t.sb + h * t.sh + i * t.ss + d0, x);
}
template <typename T, typename F>
__device__ __forceinline__ void loadChunk16(const ElemFn<F> &t, long long b, long long h,
                                            long long i, int d0, unsigned (&x)[4]) {
  t.template load16<T>(b, h, i, d0, x);
}

/// Stores four consecutive fp32 values as T (8 or 16 bytes; p aligned to that).
template <typename T> __device__ __forceinline__ void store4(T *p, float4 v);
template <> __device__ __forceinline__ void store4<float>(float *p, float4 v) {
  *reinterpret_cast<float4 *>(p) = v;
}
template <> __device__ __forceinline__ void store4<f16>(f16 *p, float4 v) {
  *reinterpret_cast<uint2 *>(p) = make_uint2(attn::pack2<f16>(v.x, v.y), attn::pack2<f16>(v.z, v.w));
}
template <> __device__ __forceinline__ void store4<bf16>(bf16 *p, float4 v) {
  *reinterpret_cast<uint2 *>(p) =
      make_uint2(attn::pack2<bf16>(v.x, v.y), attn::pack2<bf16>(v.z, v.w));
}

__device__ __forceinline__ float4 fma4(float w, float4 x, float4 acc) {
  return make_float4(fmaf(w, x.x, acc.x), fmaf(w, x.y, acc.y), fmaf(w, x.z, acc.z),
                     fmaf(w, x.w, acc.w));
}

/// One warp's share of a chunk on tensor cores (f16/bf16): 16 query rows (one m16 tile) against
/// steps of 16 keys. S = Q K^T with mma.m16n8k16 (Q and K fragments by ldmatrix), the online
/// softmax in log2 units on the m16n8 accumulator layout (thread t holds rows t/4 and t/4 + 8),
/// then O += P V with P taken straight from the score registers as the A fragment (FlashAttention-2;
/// PTX ISA, "Matrix fragments for mma.m16n8k16").
template <typename T, int D> struct TcWarp {
  static constexpr int kQPitchBytes = Config<T, D>::kQPitch * 2;
  static constexpr int kPitchBytes = Config<T, D>::kPitch * 2;
  float m[2], l[2], o[D / 8][4];
  int limit[2]; ///< keys [0, limit) visible to this thread's two rows within the chunk

  __device__ __forceinline__ void init(int limit0, int limit1) {
    limit[0] = limit0, limit[1] = limit1;
#pragma unroll
    for (int i = 0; i < 2; ++i)
      m[i] = attn::negInf(), l[i] = 0.0f;
#pragma unroll
    for (int d = 0; d < D / 8; ++d)
      o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  }

  /// Keys [key0, key0 + 16): `q` is the warp's first Q row, `k` and `v` the first K and V rows
  /// of the step in shared memory; sScale = scale * log2(e).
  __device__ __forceinline__ void step(const char *q, const char *k, const char *v, float *,
                                       int key0, float sScale, int) {
    const int lane = threadIdx.x & 31, qd = lane & 3;
    const unsigned sQ = tc::smemAddr(q), sK = tc::smemAddr(k), sV = tc::smemAddr(v);
    float s[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      unsigned a[4], bf[4];
      tc::ldsmX4<false>(sQ + (lane & 15) * kQPitchBytes + (kk * 16 + (lane >> 4) * 8) * 2, a);
      tc::ldsmX4<false>(sK + ((lane & 7) + (lane >> 4) * 8) * kPitchBytes +
                            (kk * 16 + ((lane >> 3) & 1) * 8) * 2,
                        bf);
      const unsigned b0[2] = {bf[0], bf[1]}, b1[2] = {bf[2], bf[3]};
      tc::Mma<T>::run(s[0], a, b0);
      tc::Mma<T>::run(s[1], a, b1);
    }
    // Scale into log2 units, mask keys past each row's limit, online softmax.
    float tileMax[2] = {attn::negInf(), attn::negInf()};
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = key0 + j * 8 + qd * 2 + (e & 1);
        const float x = c < limit[e >> 1] ? s[j][e] * sScale : attn::negInf();
        s[j][e] = x;
        tileMax[e >> 1] = fmaxf(tileMax[e >> 1], x);
      }
    float mUse[2], alpha[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      tileMax[i] = fmaxf(tileMax[i], __shfl_xor_sync(0xffffffffu, tileMax[i], 1));
      tileMax[i] = fmaxf(tileMax[i], __shfl_xor_sync(0xffffffffu, tileMax[i], 2));
      const float mNew = fmaxf(m[i], tileMax[i]);
      mUse[i] = mNew == attn::negInf() ? 0.0f : mNew; // nothing visible yet: p = 0, not NaN
      alpha[i] = exp2f(m[i] - mUse[i]);
      m[i] = mNew;
    }
    float p[2][4];
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        p[j][e] = exp2f(s[j][e] - mUse[e >> 1]);
    l[0] = l[0] * alpha[0] + (p[0][0] + p[0][1] + p[1][0] + p[1][1]);
    l[1] = l[1] * alpha[1] + (p[0][2] + p[0][3] + p[1][2] + p[1][3]);
    // The m16n8 accumulators of keys 0-7 and 8-15 form the m16k16 A fragment of P.
    const unsigned a[4] = {attn::pack2<T>(p[0][0], p[0][1]), attn::pack2<T>(p[0][2], p[0][3]),
                           attn::pack2<T>(p[1][0], p[1][1]), attn::pack2<T>(p[1][2], p[1][3])};
#pragma unroll
    for (int d = 0; d < D / 8; d += 2) {
      unsigned bf[4];
      tc::ldsmX4<true>(sV + (lane & 15) * kPitchBytes + (d * 8 + (lane >> 4) * 8) * 2, bf);
      const unsigned b0[2] = {bf[0], bf[1]}, b1[2] = {bf[2], bf[3]};
      o[d][0] *= alpha[0], o[d][1] *= alpha[0], o[d][2] *= alpha[1], o[d][3] *= alpha[1];
      o[d + 1][0] *= alpha[0], o[d + 1][1] *= alpha[0];
      o[d + 1][2] *= alpha[1], o[d + 1][3] *= alpha[1];
      tc::Mma<T>::run(o[d], a, b0);
      tc::Mma<T>::run(o[d + 1], a, b1);
    }
  }

  /// Leaves the warp's 16 rows in the merge buffers: m[16], l[16] and acc[16][D] (fp32).
  __device__ __forceinline__ void store(float *mOut, float *lOut, float *acc) {
    const int lane = threadIdx.x & 31, g = lane >> 2, qd = lane & 3;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
      l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
    }
    if (qd == 0) {
      mOut[g] = m[0], mOut[g + 8] = m[1];
      lOut[g] = l[0], lOut[g + 8] = l[1];
    }
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      *reinterpret_cast<float2 *>(acc + g * D + d * 8 + qd * 2) = make_float2(o[d][0], o[d][1]);
      *reinterpret_cast<float2 *>(acc + (g + 8) * D + d * 8 + qd * 2) =
          make_float2(o[d][2], o[d][3]);
    }
  }
};

/// One warp's share of a chunk on CUDA cores (fp32): 8 query rows against steps of 8 keys. For
/// the scores lane t takes key t/4 and every fourth 16-byte column from t%4 (K held in
/// registers, Q rows read as shared-memory broadcasts, two shuffles finish each dot product);
/// for P V lane t owns output columns 4t.. (+128), with the step's 8 V rows in registers and P
/// read back from a per-warp 8 x 8 shared tile.
template <int D> struct SimtWarp {
  static constexpr int R = 8;                   ///< rows
  static constexpr int KC = D / 16;             ///< 16-byte K columns per lane in the scores
  static constexpr int OC = (D / 4 + 31) / 32;  ///< 16-byte output columns per lane
  static constexpr int kPitch = Config<float, D>::kPitch;
  float m[R], l[R];
  float4 o[R][OC];
  int limit[R];

  __device__ __forceinline__ void init(const int (&limits)[R]) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      limit[r] = limits[r], m[r] = attn::negInf(), l[r] = 0.0f;
#pragma unroll
      for (int x = 0; x < OC; ++x)
        o[r][x] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
  }

  /// Keys [key0, key0 + 8) for the warp's first `rows` rows; `pTile` is the warp's 8 x 8 scratch.
  __device__ __forceinline__ void step(const char *qc, const char *kc, const char *vc,
                                       float *pTile, int key0, float sScale, int rows) {
    const float *q = reinterpret_cast<const float *>(qc);
    const float *k = reinterpret_cast<const float *>(kc);
    const float *v = reinterpret_cast<const float *>(vc);
    const int lane = threadIdx.x & 31, key = lane >> 2, part = lane & 3;
    float4 kr[KC];
#pragma unroll
    for (int u = 0; u < KC; ++u)
      kr[u] = *reinterpret_cast<const float4 *>(k + key * kPitch + (part + 4 * u) * 4);
    float s[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      s[r] = attn::negInf();
      if (r >= rows) // warp-uniform
        continue;
      float acc = 0.0f;
#pragma unroll
      for (int u = 0; u < KC; ++u) {
        const float4 x = *reinterpret_cast<const float4 *>(q + r * D + (part + 4 * u) * 4);
        acc = fmaf(x.x, kr[u].x, acc);
        acc = fmaf(x.y, kr[u].y, acc);
        acc = fmaf(x.z, kr[u].z, acc);
        acc = fmaf(x.w, kr[u].w, acc);
      }
      acc += __shfl_xor_sync(0xffffffffu, acc, 1);
      acc += __shfl_xor_sync(0xffffffffu, acc, 2);
      if (key0 + key < limit[r])
        s[r] = acc * sScale;
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r >= rows)
        continue;
      float tileMax = s[r];
      tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 4));
      tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 8));
      tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 16));
      const float mNew = fmaxf(m[r], tileMax);
      const float mUse = mNew == attn::negInf() ? 0.0f : mNew;
      const float alpha = exp2f(m[r] - mUse);
      const float p = exp2f(s[r] - mUse);
      m[r] = mNew;
      l[r] = l[r] * alpha + p; // this lane's key only; summed over the 8 keys in store()
#pragma unroll
      for (int x = 0; x < OC; ++x)
        o[r][x] = make_float4(o[r][x].x * alpha, o[r][x].y * alpha, o[r][x].z * alpha,
                              o[r][x].w * alpha);
      if (part == 0)
        pTile[r * 8 + key] = p;
    }
    __syncwarp();
    float4 vr[8][OC];
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int x = 0; x < OC; ++x) {
        const int col = (lane + 32 * x) * 4;
        vr[j][x] = col < D ? *reinterpret_cast<const float4 *>(v + j * kPitch + col)
                           : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r >= rows)
        continue;
      const float4 p0 = *reinterpret_cast<const float4 *>(pTile + r * 8);
      const float4 p1 = *reinterpret_cast<const float4 *>(pTile + r * 8 + 4);
      const float pr[8] = {p0.x, p0.y, p0.z, p0.w, p1.x, p1.y, p1.z, p1.w};
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int x = 0; x < OC; ++x)
          o[r][x] = fma4(pr[j], vr[j][x], o[r][x]);
    }
    __syncwarp(); // pTile is rewritten by the next step
  }

  /// Leaves the warp's 8 rows in the merge buffers: m[8], l[8] and acc[8][D] (fp32).
  __device__ __forceinline__ void store(float *mOut, float *lOut, float *acc) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float sum = l[r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 4);
      sum += __shfl_xor_sync(0xffffffffu, sum, 8);
      sum += __shfl_xor_sync(0xffffffffu, sum, 16);
      if (lane == 0)
        mOut[r] = m[r], lOut[r] = sum;
#pragma unroll
      for (int x = 0; x < OC; ++x) {
        const int col = (lane + 32 * x) * 4;
        if (col < D)
          *reinterpret_cast<float4 *>(acc + r * D + col) = o[r][x];
      }
    }
  }
};

} // namespace decode

/// Writes this step's new keys and values into the paged cache (vLLM PagedAttention layout, see
/// the file comment): for b < B, g < Hkv, i < qLen, the rows kNew[b, g, i, :] and
/// vNew[b, g, i, :] go to token position seqLens[b] + i of sequence b, i.e. slot
/// (seqLens[b] + i) % blockSize of pool block blockTable[b, (seqLens[b] + i) / blockSize].
/// Rows whose position is at or past the capacity (maxBlocksPerSeq * blockSize) are not written.
/// kNew, vNew: [B, Hkv, qLen, D] views of T (any strides in elements: bshd or bhsd), unit stride
/// along D. Copies are 16 bytes: pointers 16-byte aligned, strides multiples of 16 / sizeof(T)
/// elements (the code generator checks it). seqLens is read, not advanced (the runtime adds
/// qLen after the step). Launch: decode::appendGrid blocks of decode::kAppendThreads threads
/// (any 1-D grid works: the kernel strides over the rows), before decodeAttentionPartial.
template <typename T, int D, typename KSrc, typename VSrc>
__device__ __forceinline__ void kvCacheAppend(const KSrc &kNew, const VSrc &vNew,
                                              const PagedKvCache<T> &cache,
                                              const DecodeShape &shape) {
  using C = decode::Config<T, D>;
  constexpr int CPR = C::kChunksPerRow, CE = C::kChunkElems;
  const int qLen = shape.qLen, Hkv = shape.kvHeads;
  const long long capacity = (long long)cache.maxBlocksPerSeq * cache.blockSize;
  const long long total = (long long)shape.batch * Hkv * qLen * CPR;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int ch = int(e % CPR);
    long long row = e / CPR;
    const int i = int(row % qLen);
    row /= qLen;
    const int g = int(row % Hkv), b = int(row / Hkv);
    const long long pos = (long long)ldg(cache.seqLens + b) + i;
    if (pos < 0 || pos >= capacity)
      continue;
    const decode::TokenAddr addr = decode::makeTokenAddr(cache, b, Hkv);
    const long long dst = addr.offset(int(pos), g, D) + ch * CE;
    unsigned kx[4], vx[4];
    decode::loadChunk16<T>(kNew, b, g, i, ch * CE, kx);
    decode::loadChunk16<T>(vNew, b, g, i, ch * CE, vx);
    decode::stg16(cache.k + dst, kx);
    decode::stg16(cache.v + dst, vx);
  }
}

/// Split-KV decode attention, first kernel (Flash-Decoding's partial pass): block (x, y, z) =
/// (kv head g * rowBlocks + row block, batch b, split slot) computes, for the query rows of KV
/// group g (heads g * Hq/Hkv .. (g + 1) * Hq/Hkv - 1 times the qLen new tokens; row r = head-in-
/// group * qLen + i), the online-softmax partial over its chunk of cache tokens, with each row
/// seeing tokens j < seqLens[b] + i + 1 only (the new tokens, already appended by kvCacheAppend,
/// are causal). Slots past the sequence's partition (decode::partition of its valid length)
/// return at once. The partial goes to `workspace` (fp32, decode::workspaceBytes, layout there;
/// m and l in log2 units), or, when the sequence has a single split, the normalized row goes
/// straight to `out`.
///  q:   [B, Hq, qLen, D] view of T (bshd or bhsd strides, unit stride along D); pointer and
///       strides multiples of 16 / sizeof(T) elements (16-byte cp.async).
///  out: [B, Hq, qLen, D] of T, same constraints (written here or by decodeAttentionReduce).
///  T: f16, bf16 (tensor cores) or float (CUDA cores); D a multiple of 16 up to 256 (64, 80,
///  96, 128, 256 ...); Hq / Hkv and qLen at run time.
/// Launch: grid decode::partialGrid, decode::kThreads threads (__launch_bounds__ with it),
/// decode::smemBytes(sizeof(T), D, Hq / Hkv * qLen) bytes of dynamic shared memory (`smem`,
/// 16-byte aligned). Then decodeAttentionReduce with the same shape.
///
/// CLUSTER > 1 (sm_90; Flash-Decoding in one launch, no workspace): shape.maxSplits ==
/// CLUSTER, the grid's z is CLUSTER and the kernel is compiled with __cluster_dims__(1, 1,
/// CLUSTER), so the split slots of one (b, g, row block) are one thread-block cluster. Each
/// block leaves its partial in its own shared memory (decode::smemBytes(..., true) bytes); after
/// a cluster barrier the blocks combine the partials over distributed shared memory (block s
/// finishes every CLUSTER-th element of the rows) and write `out`; `workspace` is not used.
///
/// kNew, vNew (optional; kiln-fuse-kv-append): this step's new keys and values as kvCacheAppend
/// takes them ([B, Hkv, qLen, D] views or ElemFns). The kernel then appends them itself instead
/// of a kvCacheAppend launch before it: every block writes the new rows of its KV head whose
/// positions fall in its split slot's chunk (decode::partition of the valid length; each
/// position in exactly one chunk, rows at or past the capacity not written, as kvCacheAppend),
/// then a block barrier orders those stores before its own cp.async reads of them. Only the
/// block that reads a position writes it, so no other block waits. The row blocks of one slot
/// write the same rows with the same values.
///
/// wait (optional; #kiln.split_kv<..., preload = true>): the kernel's grid-dependency wait
/// (kiln::gridDependencySync / Wait), which the kernel then must not have called. The blocks
/// first read what no kernel of the step writes -- seqLens, the block table, and the cached
/// rows below seqLens[b] of the first STAGES - 1 tiles of their chunk (cp.async) -- so those
/// loads overlap the previous kernel (the QKV GEMM), then wait, then load Q and the new rows
/// (with kNew/vNew: stored to the pools and straight into the preloaded stages; without: read
/// from the pools, which the previous launch appended). This needs every kernel that may run
/// beside this one before its wait (the previous launch of the stream) to write neither the
/// lengths, the table nor pool rows below seqLens[b]; kvCacheAppend and this kernel write rows
/// at seqLens[b] and above only.
template <typename T, int D, int CLUSTER = 1, typename QSrc, typename KNew = decode::NoAppend,
          typename VNew = decode::NoAppend, typename Wait = decode::WaitedBefore>
__device__ __forceinline__ void decodeAttentionPartial(const QSrc &q,
                                                       const PagedKvCache<T> &cache,
                                                       const AttnOut<T> &out, float *workspace,
                                                       const DecodeShape &shape, char *smem,
                                                       const KNew &kNew = KNew(),
                                                       const VNew &vNew = VNew(),
                                                       const Wait &wait = Wait()) {
  static_assert(CLUSTER >= 1 && CLUSTER <= 8, "CLUSTER: 1 (no cluster) to 8 (portable)");
  using C = decode::Config<T, D>;
  constexpr int W = decode::kWarps, THREADS = decode::kThreads, RPW = C::kRowsPerWarp;
  constexpr int BN = C::kTileKeys, KS = C::kKeysPerStep, STAGES = C::kStages;
  constexpr int CPR = C::kChunksPerRow, CE = C::kChunkElems, E = C::kElem;
  constexpr int kPitchBytes = C::kPitch * E, kTileBytes = BN * kPitchBytes;
  static_assert(W == 4, "the warp layout below assumes 4 warps");
  constexpr bool PRE = !decode::IsWaitedBefore<Wait>::value; // loads before the wait
  constexpr bool APPEND = !decode::IsNoAppend<KNew>::value;
  // The PTX marker by which the ptxas check (test/codegen/check_ptx.py) lets this kernel do
  // 32-bit integer loads and cp.async row copies before its griddepcontrol.wait (nothing else).
  if constexpr (PRE)
    asm volatile("// kiln: reads before the grid-dependency wait (decodeAttentionPartial)");
  static_assert(BN % (KS * W) == 0, "a tile gives every warp whole steps");
  using Warp = typename decode::Conditional<C::kTensorCores, decode::TcWarp<T, D>,
                                        decode::SimtWarp<D>>::type;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int qLen = shape.qLen, Hq = shape.qHeads, G = Hq / shape.kvHeads, R = G * qLen;
  const int nRowBlocks = decode::rowBlocks(E, R);
  const int rb = int(blockIdx.x) % nRowBlocks, g = int(blockIdx.x) / nRowBlocks;
  const int b = blockIdx.y, split = blockIdx.z;

  // 1. The sequence's partition; slots past it have no work.
  const int capacity = cache.maxBlocksPerSeq * cache.blockSize;
  const int seqRaw = ldg(cache.seqLens + b);
  const int seqLen = seqRaw < 0 ? 0 : seqRaw > capacity ? capacity : seqRaw;
  const int keys = decode::validKeys(seqLen, qLen, capacity);
  const decode::Partition part = decode::partition(keys, shape.maxSplits, E);
  // Slots past the partition have no work; in a cluster they still meet the cluster barriers
  // (their chunk is empty: no tiles, an empty partial that the combine does not read).
  if (CLUSTER == 1 && split >= part.splits)
    return;
  const int row0 = rb * decode::rowsPerBlock(E), rows = min(R - row0, decode::rowsPerBlock(E));
  // Causal at block level (a prefill chunk, qLen in the hundreds: row r is token r % qLen of
  // head r / qLen): the block's rows see keys below seqLen + (their largest token) + 1 only, so
  // the tiles past that are not loaded (half the work of a chunk that starts an empty cache).
  // Rows that cross into the next head hold token qLen - 1.
  const int firstToken = row0 % qLen;
  const int lastToken = firstToken + rows - 1 < qLen ? firstToken + rows - 1 : qLen - 1;
  const int blockKeys = min(keys, seqLen + lastToken + 1);
  const int k0 = split * part.chunk, k1 = min(min(k0 + part.chunk, keys), blockKeys);
  const int nTiles = k1 > k0 ? (k1 - k0 + BN - 1) / BN : 0;
  const int qRows = decode::qTileRows(E, R);
  const decode::TokenAddr addr = decode::makeTokenAddr(cache, b, shape.kvHeads);

  // 1b. The fused append: this slot's share of the step's new K and V rows of head g.
  if constexpr (APPEND && !PRE) {
    const int c0 = split * part.chunk, c1 = min(c0 + part.chunk, keys);
    for (int e = tid; e < qLen * CPR; e += THREADS) {
      const int i = e / CPR, ch = e % CPR;
      const long long pos = (long long)seqRaw + i;
      if (pos < c0 || pos >= c1)
        continue; // another slot's chunk, or past the capacity (keys <= capacity)
      const long long dst = addr.offset(int(pos), g, D) + ch * CE;
      unsigned kx[4], vx[4];
      decode::loadChunk16<T>(kNew, b, g, i, ch * CE, kx);
      decode::loadChunk16<T>(vNew, b, g, i, ch * CE, vx);
      decode::stg16(cache.k + dst, kx);
      decode::stg16(cache.v + dst, vx);
    }
    __syncthreads(); // the stores before any thread's cp.async of those rows
  }

  char *sQ = smem;
  char *sPipe = smem + qRows * C::kQPitch * E; // K stage s at s * tile, V stage s after the Ks
  // fp32: the probability tiles after the pipeline, or after the merge buffers and the cluster
  // partial when those are longer (decode::smemBytes).
  float *sP = reinterpret_cast<float *>(
      sPipe + (decode::smemBytes(E, D, R, CLUSTER > 1) - qRows * C::kQPitch * E -
               (C::kTensorCores ? 0 : decode::kWarps * 8 * 8 * 4)));
  // CLUSTER > 1: the block's partial, after the merge buffers in the pipeline's memory.
  float *sAcc = reinterpret_cast<float *>(sPipe + decode::mergeBytes(E, D));
  float4 *sML = reinterpret_cast<float4 *>(sAcc + qRows * D);

  // 2. The Q rows (zero-filled past `rows`): chunk c of the Q tile.
  auto loadQ = [&](int c) {
    const int rr = c / CPR, ch = c % CPR, r = row0 + rr;
    const bool valid = rr < rows;
    if constexpr (decode::IsAttnTensor<QSrc>::value) {
      const T *src = valid ? q.ptr + b * q.sb + (long long)(g * G + r / qLen) * q.sh +
                                 (long long)(r % qLen) * q.ss + ch * CE
                           : q.ptr;
      tc::cpAsync16(tc::smemAddr(sQ + rr * C::kQPitch * E + ch * 16), src, valid);
    } else { // computed here (a fused rotary): plain stores, visible after the loop's barrier
      unsigned x[4] = {0u, 0u, 0u, 0u};
      if (valid)
        decode::loadChunk16<T>(q, b, g * G + r / qLen, r % qLen, ch * CE, x);
      *reinterpret_cast<uint4 *>(sQ + rr * C::kQPitch * E + ch * 16) =
          make_uint4(x[0], x[1], x[2], x[3]);
    }
  };
  // K and V rows [n0, n0 + BN) of the chunk into pipeline stage `st` (zero past k1: neither
  // the block table nor the pools are read there). Each copy reads its row's block-table entry
  // itself (mostly L1 hits); prefetching the entries a tile ahead into registers was measured
  // slower on the H200 (3.04 -> 2.88 TB/s at B = 8, L = 4096).
  // Rows from `validEnd` up to k1 are skipped (not copied, not zeroed): before the wait those
  // are the step's new rows, which go into the stage after it.
  auto loadTileRows = [&](int t, int st, int validEnd) {
    const int n0 = k0 + t * BN;
    const unsigned dK = tc::smemAddr(sPipe + st * kTileBytes);
    const unsigned dV = tc::smemAddr(sPipe + (STAGES + st) * kTileBytes);
#pragma unroll
    for (int it = 0; it < (BN * CPR + THREADS - 1) / THREADS; ++it) {
      const int c = tid + it * THREADS;
      if (BN * CPR % THREADS != 0 && c >= BN * CPR)
        break;
      const int r = c / CPR, ch = c % CPR, j = n0 + r;
      const bool valid = j < validEnd;
      if (!valid && j < k1)
        continue;
      const long long off = valid ? addr.offset(j, g, D) + ch * CE : 0;
      tc::cpAsync16(dK + r * kPitchBytes + ch * 16, cache.k + off, valid);
      tc::cpAsync16(dV + r * kPitchBytes + ch * 16, cache.v + off, valid);
    }
  };
  auto loadTile = [&](int t, int st) { loadTileRows(t, st, k1); };
  // Tiles before the wait (PRE): the first STAGES - 1, one cp.async group each.
  constexpr int kPreTiles = STAGES - 1;
  if constexpr (PRE) {
    // 2a. Before the wait: the cached rows (below seqLen) of the first tiles.
#pragma unroll
    for (int t = 0; t < kPreTiles; ++t) {
      if (t < nTiles)
        loadTileRows(t, t, min(k1, seqLen));
      tc::cpAsyncCommit();
    }
    wait();
    // 2b. After it: Q, and the new rows [seqLen, k1) of the preloaded tiles -- with the fused
    //     append from kNew/vNew (also stored to the pools, for later steps and later tiles),
    //     else from the pools. One loop so that Q's and the new rows' loads are in flight
    //     together.
    const int c0 = split * part.chunk, c1 = min(c0 + part.chunk, keys);
    const int preEnd = min(k1, k0 + kPreTiles * BN);
    // Rows [fillStart, preEnd) come from the pools: without the fused append every new row
    // (the previous launch appended them); with it, rows the append does not write (a length
    // below zero: the plain path reads them from the pools too).
    const long long fillFrom =
        APPEND ? max((long long)max(seqLen, k0), (long long)seqRaw + qLen) : max(seqLen, k0);
    const int fillStart = int(fillFrom < preEnd ? fillFrom : preEnd); // no wrap near INT_MAX
    const int nQ = qRows * CPR, nAppend = APPEND ? qLen * CPR : 0;
    const int nFill = max(0, preEnd - fillStart) * CPR;
    auto stageRow = [&](int j, int ch, int kv) { // stage address of chunk ch of tile row j
      const int t = (j - k0) / BN, r = (j - k0) % BN;
      return sPipe + (kv * STAGES + t) * kTileBytes + r * kPitchBytes + ch * 16;
    };
    for (int e = tid; e < max(max(nQ, nAppend), nFill); e += THREADS) {
      unsigned kx[4], vx[4];
      const int i = e / CPR, ch = e % CPR;
      const long long pos = (long long)seqRaw + i;
      bool store = false;
      if constexpr (APPEND) {
        store = e < nAppend && pos >= c0 && pos < c1;
        if (store) {
          decode::loadChunk16<T>(kNew, b, g, i, ch * CE, kx);
          decode::loadChunk16<T>(vNew, b, g, i, ch * CE, vx);
        }
      }
      if (e < nFill) {
        const int j = fillStart + i;
        const long long off = addr.offset(j, g, D) + ch * CE;
        tc::cpAsync16(tc::smemAddr(stageRow(j, ch, 0)), cache.k + off, true);
        tc::cpAsync16(tc::smemAddr(stageRow(j, ch, 1)), cache.v + off, true);
      }
      if (e < nQ)
        loadQ(e);
      if (store) {
        const long long dst = addr.offset(int(pos), g, D) + ch * CE;
        decode::stg16(cache.k + dst, kx);
        decode::stg16(cache.v + dst, vx);
        if (pos >= k0 && pos < preEnd) { // a preloaded tile's row: into its stage as well
          *reinterpret_cast<uint4 *>(stageRow(int(pos), ch, 0)) = make_uint4(kx[0], kx[1], kx[2], kx[3]);
          *reinterpret_cast<uint4 *>(stageRow(int(pos), ch, 1)) = make_uint4(vx[0], vx[1], vx[2], vx[3]);
        }
      }
    }
    tc::cpAsyncCommit(); // Q (and copied new rows): waited for with the first tile
    if constexpr (APPEND)
      __syncthreads(); // the pool stores before any thread's cp.async of those rows (later tiles)
  } else {
    for (int c = tid; c < qRows * CPR; c += THREADS)
      loadQ(c);
  }

  // 3. Warp layout: WR row tiles of RPW rows x WK key groups (warp = wk * WR + wr); a row tile's
  //    WK warps take every WK-th step of each tile.
  const int rowTiles = (rows + RPW - 1) / RPW;
  const int WR = rowTiles <= 1 ? 1 : rowTiles <= 2 ? 2 : 4, WK = W / WR;
  const int wr = warp % WR, wk = warp / WR;
  const int warpRows = max(0, min(RPW, rows - wr * RPW));
  // Keys visible to block row rr within the chunk: [k0, min(k1, seqLen + i + 1)).
  auto rowLimit = [&](int rr) {
    return rr < rows ? min(k1, min(seqLen + (row0 + rr) % qLen + 1, capacity)) : k1;
  };
  Warp acc;
  if constexpr (C::kTensorCores) {
    const int g8 = lane >> 2;
    acc.init(rowLimit(wr * RPW + g8), rowLimit(wr * RPW + g8 + 8));
  } else {
    int limits[RPW];
#pragma unroll
    for (int r = 0; r < RPW; ++r)
      limits[r] = rowLimit(wr * RPW + r);
    acc.init(limits);
  }
  const float sScale = shape.scale * attn::kLog2e;

  // 4. The multistage pipeline (as gemm_tc.cuh): STAGES - 1 tiles in flight while one is used.
  //    With PRE the first tiles were issued before the wait and Q's group after them.
  if constexpr (!PRE) {
#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) {
      if (t < nTiles)
        loadTile(t, t);
      tc::cpAsyncCommit();
    }
  }
  for (int t = 0; t < nTiles; ++t) {
    if (PRE && t == 0)
      tc::cpAsyncWait<0>(); // the preloaded tiles and Q's group (committed last)
    else
      tc::cpAsyncWait<STAGES - 2>(); // tile t (and Q) landed for this thread
    __syncthreads();               // ... for all threads; tile t - 1's stage is free
    if (t + STAGES - 1 < nTiles)
      loadTile(t + STAGES - 1, (t + STAGES - 1) % STAGES);
    tc::cpAsyncCommit();
    if (warpRows > 0) {
      const int st = t % STAGES, n0 = k0 + t * BN;
      const char *kTile = sPipe + st * kTileBytes, *vTile = sPipe + (STAGES + st) * kTileBytes;
      for (int s = wk; s < BN / KS && n0 + s * KS < k1; s += WK)
        acc.step(sQ + wr * RPW * C::kQPitch * E, kTile + s * KS * kPitchBytes,
                 vTile + s * KS * kPitchBytes, sP + warp * 64, n0 + s * KS, sScale, warpRows);
    }
  }
  tc::cpAsyncWait<0>();
  __syncthreads(); // the pipeline's memory becomes the merge buffers

  // 5. Merge the WK warps of each row tile, then write the partial (or the final row).
  float *mBuf = reinterpret_cast<float *>(sPipe), *lBuf = mBuf + W * RPW, *accBuf = lBuf + W * RPW;
  acc.store(mBuf + warp * RPW, lBuf + warp * RPW, accBuf + warp * RPW * D);
  __syncthreads();
  const long long rowsTotal = (long long)shape.batch * Hq * qLen;
  float2 *ml = reinterpret_cast<float2 *>(workspace + rowsTotal * shape.maxSplits * D);
  for (int e = tid; e < rows * (D / 4); e += THREADS) {
    const int rr = e / (D / 4), col = e % (D / 4) * 4;
    const int tr = rr / RPW, lr = rr % RPW;
    float mMax = attn::negInf();
    for (int w = tr; w < W; w += WR)
      mMax = fmaxf(mMax, mBuf[w * RPW + lr]);
    const float mUse = mMax == attn::negInf() ? 0.0f : mMax; // no key visible in this chunk
    float lSum = 0.0f;
    float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int w = tr; w < W; w += WR) {
      const float f = exp2f(mBuf[w * RPW + lr] - mUse);
      lSum = fmaf(f, lBuf[w * RPW + lr], lSum);
      a = decode::fma4(f, *reinterpret_cast<const float4 *>(accBuf + (w * RPW + lr) * D + col), a);
    }
    const int r = row0 + rr, h = g * G + r / qLen, i = r % qLen;
    if (part.splits == 1) {
      if (split != 0)
        continue; // CLUSTER > 1: slot 0 alone has work
      const float inv = 1.0f / lSum;
      decode::store4(out.ptr + b * out.sb + h * out.sh + i * out.ss + col,
                     make_float4(a.x * inv, a.y * inv, a.z * inv, a.w * inv));
    } else if constexpr (CLUSTER > 1) {
      *reinterpret_cast<float4 *>(sAcc + rr * D + col) = a;
      if (col == 0)
        sML[rr] = make_float4(mMax, lSum, 0.0f, 0.0f);
    } else {
      const long long slot = (((long long)b * Hq + h) * qLen + i) * shape.maxSplits + split;
      *reinterpret_cast<float4 *>(workspace + slot * D + col) = a;
      if (col == 0)
        ml[slot] = make_float2(mMax, lSum);
    }
  }
  if constexpr (CLUSTER > 1) {
    // 6. The cluster's partials combined over distributed shared memory (Flash-Decoding's
    //    reduction): M = max_s m_s, out = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s.
    sm90::clusterSync(); // every block's partial is written and visible to the cluster
    if (part.splits > 1) {
      for (int e = split * THREADS + tid; e < rows * (D / 4); e += CLUSTER * THREADS) {
        const int rr = e / (D / 4), col = e % (D / 4) * 4;
        const unsigned mlAddr = tc::smemAddr(sML + rr), accAddr = tc::smemAddr(sAcc + rr * D + col);
        float mMax = attn::negInf();
        for (int s2 = 0; s2 < part.splits; ++s2)
          mMax = fmaxf(mMax, sm90::ldClusterF4(mlAddr, unsigned(s2)).x);
        // Split 0 holds key 0, which every row sees: mMax is finite.
        float lSum = 0.0f;
        float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int s2 = 0; s2 < part.splits; ++s2) {
          const float4 ml = sm90::ldClusterF4(mlAddr, unsigned(s2));
          const float f = exp2f(ml.x - mMax); // 0 for a slot that saw no key of this row
          lSum = fmaf(f, ml.y, lSum);
          a = decode::fma4(f, sm90::ldClusterF4(accAddr, unsigned(s2)), a);
        }
        const float inv = 1.0f / lSum;
        const int r = row0 + rr, h = g * G + r / qLen, i = r % qLen;
        decode::store4(out.ptr + b * out.sb + h * out.sh + i * out.ss + col,
                       make_float4(a.x * inv, a.y * inv, a.z * inv, a.w * inv));
      }
    }
    sm90::clusterSync(); // no block leaves while another reads its shared memory
  }
}

/// Split-KV decode attention, second kernel (Flash-Decoding's reduction): one warp per output
/// row (b, h, i) combines the partials of the split slots its sequence used (decode::partition
/// of seqLens[b], as in decodeAttentionPartial): M = max_s m_s, out = sum_s 2^(m_s - M) acc_s /
/// sum_s 2^(m_s - M) l_s, stored as T to out [B, Hq, qLen, D] (strides as for the partial
/// kernel). Sequences with a single split were finished by the partial kernel and are skipped.
/// Launch: grid decode::reduceGrid, decode::kThreads threads, no shared memory, after
/// decodeAttentionPartial with the same cache, workspace and shape.
template <typename T, int D>
__device__ __forceinline__ void decodeAttentionReduce(const PagedKvCache<T> &cache,
                                                      const float *workspace,
                                                      const AttnOut<T> &out,
                                                      const DecodeShape &shape) {
  constexpr int C4 = D / 4, PER = (C4 + 31) / 32;
  const int lane = threadIdx.x & 31;
  const long long row = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const long long rowsTotal = (long long)shape.batch * shape.qHeads * shape.qLen;
  if (row >= rowsTotal)
    return;
  const int i = int(row % shape.qLen), h = int(row / shape.qLen % shape.qHeads);
  const int b = int(row / ((long long)shape.qLen * shape.qHeads));
  const int capacity = cache.maxBlocksPerSeq * cache.blockSize;
  const int keys = decode::validKeys(ldg(cache.seqLens + b), shape.qLen, capacity);
  const int n = decode::partition(keys, shape.maxSplits, int(sizeof(T))).splits;
  if (n <= 1)
    return;
  const float2 *ml =
      reinterpret_cast<const float2 *>(workspace + rowsTotal * shape.maxSplits * D) +
      row * shape.maxSplits;
  const float *acc = workspace + row * shape.maxSplits * D;
  float mMax = attn::negInf();
  for (int s = lane; s < n; s += 32)
    mMax = fmaxf(mMax, ml[s].x);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    mMax = fmaxf(mMax, __shfl_xor_sync(0xffffffffu, mMax, o));
  // Split 0 holds key 0, which every row sees: mMax is finite.
  float lSum = 0.0f;
  for (int s = lane; s < n; s += 32)
    lSum += ml[s].y * exp2f(ml[s].x - mMax);
  lSum = warpSum(lSum);
  float4 a[PER];
#pragma unroll
  for (int x = 0; x < PER; ++x)
    a[x] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
  for (int s = 0; s < n; ++s) {
    const float f = exp2f(ml[s].x - mMax);
#pragma unroll
    for (int x = 0; x < PER; ++x)
      if (lane + 32 * x < C4)
        a[x] = decode::fma4(f, reinterpret_cast<const float4 *>(acc + (long long)s * D)[lane + 32 * x],
                            a[x]);
  }
  const float inv = 1.0f / lSum;
#pragma unroll
  for (int x = 0; x < PER; ++x)
    if (lane + 32 * x < C4)
      decode::store4(out.ptr + b * out.sb + h * out.sh + i * out.ss + (lane + 32 * x) * 4,
                     make_float4(a[x].x * inv, a[x].y * inv, a[x].z * inv, a[x].w * inv));
}

/// One pool of a paged KV cache as an attentionTC K or V source (rows(b, g): the tokens of
/// sequence b, kv head g, each row found through the block table).
template <typename T, int D> struct PagedKvRows {
  const T *base; ///< the pool
  decode::TokenAddr addr;
  int g;
  __device__ __forceinline__ const T *ptr(int j) const { return base + addr.offset(j, g, D); }
};
template <typename T, int D> struct PagedKvSource {
  const PagedKvCache<T> *cache;
  const T *pool;
  int kvHeads;
  __device__ __forceinline__ PagedKvRows<T, D> rows(long long b, long long g) const {
    return {pool, decode::makeTokenAddr(*cache, int(b), kvHeads), int(g)};
  }
};

/// Attention of a prefill chunk (shape.qLen new tokens per sequence, tens to thousands) over a
/// paged KV cache, on tensor cores: attentionTC (FlashAttention-2 online softmax on mma.sync;
/// Dao 2023, arXiv:2307.08691) with the K and V tiles read through the block table. The same
/// result as decodeAttentionPartial + decodeAttentionReduce: token seqLens[b] + i sees the keys
/// j <= seqLens[b] + i, j < decode::validKeys. Measured on the H200 (0.8B Llama, a 2048-token
/// chunk, session 16): 181 us per layer against the decode kernel's 184 (with its block-level
/// causal limit), so the gain is the route, not yet the time: a faster attentionTC (the
/// FlashAttention-3 issue) speeds prefill up directly.
///  q: [B, Hq, qLen, D] view or fused producer (ElemFn), as for decodeAttentionPartial; out
///  likewise. T: f16 or bf16; D a multiple of 16 up to 256.
/// Launch: grid (ceil(qLen / BM), Hq, B) with BM = 16 MF WARPS, 32 WARPS threads,
/// attentionTcSmemBytes<D, BM, BN>() bytes of dynamic shared memory; after kvCacheAppend wrote
/// the chunk's keys and values.
template <typename T, int D, int BN, int WARPS, int MF, typename QSrc>
__device__ __forceinline__ void prefillAttentionPaged(const QSrc &q, const PagedKvCache<T> &cache,
                                                      const AttnOut<T> &out,
                                                      const DecodeShape &shape, char *smem) {
  static_assert(sizeof(T) == 2, "prefillAttentionPaged: f16 or bf16 (tensor cores)");
  const int b = blockIdx.z;
  const int capacity = cache.maxBlocksPerSeq * cache.blockSize;
  const int seqRaw = ldg(cache.seqLens + b);
  const int seqLen = seqRaw < 0 ? 0 : seqRaw > capacity ? capacity : seqRaw;
  AttnShape as{shape.qHeads, shape.kvHeads, shape.qLen,
               decode::validKeys(seqLen, shape.qLen, capacity), shape.scale, false, seqLen};
  const PagedKvSource<T, D> k{&cache, cache.k, shape.kvHeads}, v{&cache, cache.v, shape.kvHeads};
  attentionTC<T, D, BN, WARPS, MF, true, NoMask, NoRope, NoRope, QSrc, PagedKvSource<T, D>>(
      q, k, v, NoMask{}, out, as, smem);
}

/// A paged KV cache as the K / V source of attn90::attentionSm90Body: the pools through rank-4
/// tensor maps {D, blockSize, Hkv, numBlocks} (box {64, min(blockSize, BN), 1, 1}, swizzle
/// 128B), so a tile of BN keys is one box inside a page (blockSize a multiple of BN) or BN /
/// blockSize pages of one box each (BN a multiple of blockSize, blockSize a multiple of 8: every
/// box starts on a 1024-byte swizzle atom), found through the block table. Sequence b has
/// decode::validKeys(seqLens[b], qLen, capacity) keys and sees them causally from its cached
/// length. Pages of a tail tile past the sequence's last key read its last page again (never a
/// table entry past the row); their V rows are zeroed by the consumers (kZeroTail).
struct PagedKvTma {
  const TensorMap *k, *v;
  const int *blockTable; ///< int32 [B, maxBlocksPerSeq]
  const int *seqLens;    ///< int32 [B]
  int blockSize, maxBlocksPerSeq, qLen;
  static constexpr bool kZeroTail = true;
  static constexpr bool kWarpLoads = true;
  __device__ __forceinline__ int cached(int b) const {
    const int capacity = maxBlocksPerSeq * blockSize, s = ldg(seqLens + b);
    return s < 0 ? 0 : s > capacity ? capacity : s;
  }
  __device__ __forceinline__ int keys(int b) const {
    return decode::validKeys(cached(b), qLen, maxBlocksPerSeq * blockSize);
  }
  __device__ __forceinline__ int offset(int b) const { return cached(b); }
  __device__ __forceinline__ void prefetch() const {
    sm90::prefetchTensorMap(k);
    sm90::prefetchTensorMap(v);
  }
  /// The pool block `lane` of the producer warp loads for the tile of keys n0.. of sequence b
  /// (sk keys): the block of the page holding key n0 (blockSize >= BN, lane 0), or of page
  /// n0 / blockSize + lane (lanes below BN / blockSize), pages past key sk - 1 replaced by its
  /// page. -1 for lanes that load nothing.
  template <int BN>
  __device__ __forceinline__ int tileSource(int n0, int b, int sk, int lane) const {
    const int *row = blockTable + (long long)b * maxBlocksPerSeq;
    if (blockSize >= BN)
      return lane == 0 ? ldg(row + n0 / blockSize) : -1;
    if (lane >= BN / blockSize)
      return -1;
    return ldg(row + min(n0 / blockSize + lane, (sk - 1) / blockSize));
  }
  /// Called by the 32 lanes of the producer warp: lane p issues page p of the tile (block
  /// `source`, from tileSource).
  template <int BN, int DB>
  __device__ __forceinline__ void load(bool value, unsigned dst, unsigned bar, int n0, int hk,
                                       int source, int lane) const {
    const TensorMap *map = value ? v : k;
    if (blockSize >= BN) {
      if (lane == 0) {
#pragma unroll
        for (int j = 0; j < DB; ++j)
          sm90::tmaLoad(dst + unsigned(j * BN * 128), map, bar, 64 * j, n0 % blockSize, hk,
                        source);
      }
    } else if (lane < BN / blockSize) {
#pragma unroll
      for (int j = 0; j < DB; ++j)
        sm90::tmaLoad(dst + unsigned(j * BN * 128 + lane * blockSize * 128), map, bar, 64 * j, 0,
                      hk, source);
    }
  }
};

/// The attention of a prefill chunk over a paged KV cache on Hopper (sm_90a): attentionSm90's
/// kernel (FlashAttention-3 structure: TMA, wgmma, warp specialization, ping-pong; Shah et al.
/// 2024, arXiv:2407.08608) with K and V tiles read from the pools through the block table
/// (PagedKvTma). The same result as prefillAttentionPaged: token seqLens[b] + i sees the keys
/// j <= seqLens[b] + i, j < decode::validKeys. qMap: rank-4 map {D, qLen, Hq, B} of the query
/// (or of the input of its rotary, ropeQ; box {64, BM, 1, 1}); kMap / vMap: the pools
/// {D, blockSize, Hkv, numBlocks}, box {64, min(blockSize, BN), 1, 1}, where blockSize is a
/// multiple of BN or BN a multiple of blockSize and of 8. out [B, Hq, qLen, D] (AttnOut). T, D,
/// BM, BN, STAGES, PINGPONG as for attentionSm90 (causal). persistent: grid (n, 1, 1), else
/// (ceil(qLen / BM), Hq, B). __launch_bounds__(128 * (BM / 64 + 1), 1), dynamic shared memory
/// attentionSm90SmemBytes<D, BM, BN, STAGES>(); after kvCacheAppend wrote the chunk's keys
/// and values. Requires sm_90a; compiled for any other target the call traps.
template <typename T, int D, int BM, int BN, int STAGES, bool PINGPONG, typename RQ = NoRope>
__device__ __forceinline__ void prefillAttentionSm90Paged(const TensorMap *qMap,
                                                          const TensorMap *kMap,
                                                          const TensorMap *vMap,
                                                          const PagedKvCache<T> &cache,
                                                          const AttnOut<T> &out,
                                                          const DecodeShape &shape, char *smem,
                                                          const RQ &ropeQ = RQ{},
                                                          bool persistent = false) {
  static_assert(sizeof(T) == 2, "prefillAttentionSm90Paged: f16 or bf16 (tensor cores)");
  // The page / tile contract the code generator checks (kiln-select-tiles): otherwise a tile's
  // boxes would not deliver the bytes its barrier expects (a hang) or would cross a block.
  if (!(cache.blockSize % BN == 0 || (BN % cache.blockSize == 0 && cache.blockSize % 8 == 0)))
    asm volatile("trap;");
  const AttnShape as{shape.qHeads, shape.kvHeads, shape.qLen, 0, shape.scale, false, 0};
  const PagedKvTma kv{kMap,           vMap,           cache.blockTable, cache.seqLens,
                      cache.blockSize, cache.maxBlocksPerSeq, shape.qLen};
  attn90::attentionSm90Body<T, D, BM, BN, STAGES, true, PINGPONG>(
      qMap, kv, NoMask{}, out, as, smem, ropeQ, persistent ? shape.batch : 0);
}

} // namespace kiln
#endif // __CUDACC__ || __CUDACC_RTC__

#undef KILN_DECODE_HD
