// smem_sizes.h - dynamic shared memory of kiln's device templates, in bytes.
//
// One definition of each size, included by the device templates (gemm_tc.cuh, gemm_wgmma.cuh,
// attention.cuh, through NVRTC as "kiln/smem_sizes.h") and by host C++ (the tile selection in
// passes/tiling and the emitters in compiler/codegen), so the bytes a launch asks for are the
// bytes the kernel uses -- as CUTLASS derives sizeof(SharedStorage) from the kernel itself.
// Plain constexpr functions of integers in kiln::smem_bytes: no CUDA types, no includes;
// element sizes are passed in bytes. The templates' own kiln::gemmTcSmemBytes<T, ...>() and the
// like (used by test/gpu) call these.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KILN_SMEM_HD __host__ __device__
#else
#define KILN_SMEM_HD
#endif

namespace kiln {
namespace smem_bytes {

/// kiln::gemmTileTC (gemm_tc.cuh): STAGES slices of the BM x BK A tile and the BN x BK B tile,
/// `elemBytes`-byte elements (2 for f16/bf16, 4 for TF32), no padding (the swizzle does not
/// depend on the operands' majorness).
KILN_SMEM_HD constexpr long long gemmTc(long long elemBytes, long long bm, long long bn,
                                        long long bk, long long stages) {
  return stages * (bm + bn) * bk * elemBytes;
}

/// kiln::gemmTileWgmma (gemm_wgmma.cuh): the STAGES-deep pipeline as in gemmTc plus
/// 1024 bytes of slack (the swizzled atoms start at 1024-byte aligned shared addresses and the
/// kernel rounds its pointer up to one), or the fp32 epilogue tile BM x (BN + 8) that reuses the
/// same memory after the main loop, whichever is larger.
KILN_SMEM_HD constexpr long long gemmWgmma(long long elemBytes, long long bm, long long bn,
                                           long long bk, long long stages) {
  return gemmTc(elemBytes, bm, bn, bk, stages) + 1024 > bm * (bn + 8) * 4
             ? gemmTc(elemBytes, bm, bn, bk, stages) + 1024
             : bm * (bn + 8) * 4;
}

/// kiln::attentionTC (attention.cuh): the BM-row Q tile, two K stages and one V stage of BN keys,
/// 16-bit elements, rows of D padded by 8 elements (16 bytes: conflict-free ldmatrix for D = 64,
/// 80, 96, 128).
KILN_SMEM_HD constexpr long long attentionTc(long long d, long long bm, long long bn) {
  return (bm + 3 * bn) * (d + 8) * 2;
}

/// kiln::attentionSimt (attention.cuh): K and V tiles of 32 keys (fp32, rows padded by one
/// element) and one query row of D per warp.
KILN_SMEM_HD constexpr long long attentionSimt(long long d, long long dv, long long warps) {
  return (32 * (d + 1) + 32 * (dv + 1) + warps * d) * 4;
}

/// kiln::attentionSm90 (attention_sm90.cuh): 1024 bytes of alignment slack, the BM-row Q tile
/// and STAGES K and V tiles of BN keys, each row D rounded up to 64 16-bit elements (whole
/// 128-byte swizzle lines), then 2 + 4 x STAGES 8-byte mbarriers.
KILN_SMEM_HD constexpr long long attentionSm90(long long d, long long bm, long long bn,
                                               long long stages) {
  return 1024 + (bm + 2 * stages * bn) * ((d + 63) / 64 * 64) * 2 + 8 * (2 + 4 * stages);
}

/// kiln::gemmSm90 (gemm_sm90.cuh): 1024 bytes of alignment slack, STAGES stages of the BM x 64
/// A tile and the BN x 64 B tile (16-bit, 128 bytes per row), an fp32 staging tile of 64 x 40
/// floats per consumer warpgroup for the epilogue, 2 x STAGES 8-byte mbarriers and, with row
/// statistics (a norm folded into the GEMM), 4 more mbarriers and two buffers of BM (mean,
/// rstd) float pairs.
KILN_SMEM_HD constexpr long long gemmSm90(long long bm, long long bn, long long stages,
                                          long long consumers, bool rowStats = false) {
  return 1024 + stages * (bm + bn) * 128 + consumers * 64 * 40 * 4 + 2 * stages * 8 +
         (rowStats ? 32 + 2 * bm * 8 : 0);
}

/// kiln::gemmSkinny (gemm_skinny.cuh) with `rows` rows: K rows of A staged per pass, as fp32.
/// Few rows take long chunks (the whole K slice of a decode GEMM in one pass: each pass ends the
/// stream of B loads at a barrier), at most 16 KiB for 1..4 rows and 32 KiB above; never below
/// the 8 x 64 floats per row of the warps' partial sums, which reuse the chunk's space.
KILN_SMEM_HD constexpr long long skinnyChunk(long long rows) {
  return rows <= 2 ? 2048 : rows <= 4 ? 1024 : 512;
}
/// kiln::gemmSkinny with `rows` rows: the A chunk (skinnyChunk(rows) x rows floats), reused for
/// the 8 warps' partial sums (8 x rows x 64 floats), then the block's rows x 64 partial; with
/// `rowStats` (kiln::gemmSkinnyRms) 10 floats per row more (skinny::rowStats).
KILN_SMEM_HD constexpr long long gemmSkinny(long long rows, bool rowStats = false) {
  return ((skinnyChunk(rows) > 8 * 64 ? skinnyChunk(rows) : 8 * 64) + 64) * rows * 4 +
         (rowStats ? 10 * rows * 4 : 0);
}

/// kiln::gemmSkinny's tensor-core inner product (TC = true): B slots (16 K rows x 64 columns,
/// 2048 bytes) in each of the 8 warps' cp.async ring; STAGES - 1 of them are in flight while one
/// is multiplied.
constexpr long long kSkinnyTcStages = 4;
/// The tensor-core path's A chunk: K rows of A staged per pass as 16-bit values (a multiple of
/// the 8 warps x 16 rows one round of the block multiplies): 2048 for up to 8 rows, 1024 above;
/// or `chunk` when it is not 0 (`#kiln.skinny_gemm_tile<..., a_chunk = N>`: a plan that fits
/// more blocks per SM).
KILN_SMEM_HD constexpr long long skinnyTcChunk(long long rows, long long chunk = 0) {
  return chunk != 0 ? chunk : rows <= 8 ? 2048 : 1024;
}
/// Elements per staged A row of the tensor-core path: the chunk plus 8 (16 bytes), so the 8 rows
/// one fragment load reads start on distinct banks.
KILN_SMEM_HD constexpr long long skinnyTcALd(long long rows, long long chunk = 0) {
  return skinnyTcChunk(rows, chunk) + 8;
}
/// The tensor-core path's B rings: 8 warps x kSkinnyTcStages slots of 16 x 64 16-bit elements;
/// reused for the 8 warps' partial sums (8 x rows x 64 floats) after the main loop.
KILN_SMEM_HD constexpr long long skinnyTcRing() { return 8 * kSkinnyTcStages * 16 * 64 * 2; }
/// kiln::gemmSkinny<..., TC = true> with `rows` rows: the B rings, then the A chunk (rows x
/// skinnyTcALd(rows, chunk) 16-bit values; reused for the block's rows x 64 fp32 partial), then
/// with `rowStats` (kiln::gemmSkinnyRms) the 10 floats per row of skinny::rowStats.
KILN_SMEM_HD constexpr long long gemmSkinnyTc(long long rows, bool rowStats = false,
                                              long long chunk = 0) {
  return skinnyTcRing() + rows * skinnyTcALd(rows, chunk) * 2 + (rowStats ? 10 * rows * 4 : 0);
}

} // namespace smem_bytes
} // namespace kiln

#undef KILN_SMEM_HD
