// gemm_wgmma.cuh - Hopper (sm_90a) tensor-core GEMM building block on wgmma.mma_async.
//
// Same contract as gemmTileTC in gemm_tc.cuh (operand descriptors StridedOperand / FnOperand,
// f16 or bf16 storage, fp32 accumulation, per-element epilogue functor), but the multiply is
// `wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}` with both operands read by
// the tensor cores straight from shared memory: the only instruction that reaches Hopper's full
// tensor-core rate (mma.sync runs at roughly half of it on sm_90).
//
// A block is CONSUMER_WARPGROUPS warpgroups of 128 threads. Each warpgroup owns
// BM / CONSUMER_WARPGROUPS rows (a multiple of 64: one m64 wgmma per 64 rows) by all BN columns
// (one wgmma of N = BN), accumulators in registers in the wgmma D fragment layout. Every thread
// also loads operands: the K loop runs over BK = 64 slices through a STAGES-deep shared-memory
// ring filled by 16-byte cp.async copies (no TMA: the kiln runtime has no tensor-map plumbing).
// One wgmma group stays in flight while the copies for a later slice are issued, so a stage is
// refilled only after the wgmma group two slices back has retired: STAGES - 2 slices are in
// flight ahead of the one being multiplied. This is the structure of CUTLASS's sm90
// `MainloopSm90CpAsyncGmma*` collectives (cutlass/gemm/collective/sm90_mma_multistage_gmma_ss*.hpp)
// without the producer/consumer warp specialization, rewritten here on raw PTX.
//
// Shared-memory layouts are the canonical 128-byte-swizzle layouts of the PTX ISA
// ("Asynchronous Warpgroup Level Matrix Shared Memory Layout"; CuTe's Layout_K_SW128_Atom and
// Layout_MN_SW128_Atom in cute/atom/mma_traits_sm90_gmma.hpp), with 1024-byte-aligned atoms of
// 8 lines x 128 bytes in which 16-byte chunk c of line l sits at chunk position c ^ l:
//   K-major (line = operand row, 64 k per line): row r at byte 128 r. This is exactly the tile
//     gemm_tc.cuh's stage loaders write for BK = 64, so K-major StridedOperand and FnOperand
//     reuse tc::StageLoader unchanged. Descriptor: SBO = 1024 (next 8 rows), LBO unused (1).
//   MN-major (line = k, 64 operand rows per line): the atom of k group g (8 k) and row block j
//     (64 rows) at byte 1024 (8 j + g). Descriptor: SBO = 1024 (next 8 k), LBO = 8192 (next 64
//     rows), transpose bit set (imm-trans-a / imm-trans-b = 1, valid for 16-bit types). The
//     MN-major StridedOperand is copied with cp.async straight into this layout (no register
//     staging).
// cp.async and FnOperand's st.shared write through the generic proxy while wgmma reads through
// the async proxy, so every thread issues `fence.proxy.async.shared::cta` after its writes have
// completed and before the barrier that publishes them (PTX ISA, "Memory Consistency Model:
// Proxies" and "membar/fence").
//
// Everything is inline PTX; the header needs nothing but kiln/common.cuh and kiln/gemm_tc.cuh,
// so NVRTC can compile it as an embedded named header. The wgmma code exists only when compiling
// for sm_90a (`__CUDA_ARCH_FEAT_SM90_ALL`); for any other target gemmTileWgmma compiles to a trap,
// so the header can be included by modules for every architecture.
#pragma once
#include "kiln/common.cuh"
#include "kiln/gemm_tc.cuh"
#include "kiln/smem_sizes.h"

/// KILN_WGMMA_CPASYNC_PROXY_FENCE (default 1): issue fence.proxy.async.shared::cta after the
/// cp.async copies of a slice have landed, as the PTX memory model asks for generic-proxy writes
/// that wgmma (async proxy) reads. Defining it to 0 drops the fence for cp.async-only operand
/// pairs (FnOperand stores are always fenced) -- a benchmarking switch to measure its cost
/// (CUTLASS's cp.async GMMA mainloops issue no such fence), not a supported configuration.
#ifndef KILN_WGMMA_CPASYNC_PROXY_FENCE
#define KILN_WGMMA_CPASYNC_PROXY_FENCE 1
#endif

namespace kiln {

/// Bytes of dynamic shared memory gemmTileWgmma needs: STAGES slices of the BM x BK A tile and
/// the BN x BK B tile (16-bit elements, no padding; the layout does not depend on the operand
/// majorness) plus 1024 bytes of slack, because the swizzled atoms must start at 1024-byte
/// aligned shared addresses and the kernel rounds `smem` up to one; at least the fp32 epilogue
/// tile of BM x (BN + 8) floats, which reuses the same memory after the main loop.
template <typename T, int BM, int BN, int BK, int STAGES>
__host__ __device__ constexpr int gemmWgmmaSmemBytes() {
  return int(smem_bytes::gemmWgmma(sizeof(T), BM, BN, BK, STAGES));
}

namespace wg {

/// Two floats stored with one 8-byte shared-memory store.
struct alignas(8) Float2 {
  float x, y;
};

//===----------------------------------------------------------------------===//
// PTX wrappers (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions": wgmma.fence, wgmma.mma_async, wgmma.commit_group, wgmma.wait_group). The
// non-template ones are empty unless compiling for sm_90a, so that a module built with
// relocatable device code for another target (where unused device functions are still emitted)
// never hands wgmma to ptxas.
//===----------------------------------------------------------------------===//

/// Orders this warpgroup's earlier register accesses before the following wgmma.mma_async.
__device__ __forceinline__ void wgmmaFence() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
/// Closes the group of wgmma.mma_async issued by this warpgroup since the last commit.
__device__ __forceinline__ void wgmmaCommit() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
/// Waits until at most N of this warpgroup's committed wgmma groups are pending.
template <int N> __device__ __forceinline__ void wgmmaWait() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
/// Makes this thread's completed generic-proxy shared-memory writes (st.shared, cp.async)
/// visible to later async-proxy reads (wgmma operands) once a barrier orders them.
__device__ __forceinline__ void fenceProxyAsync() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
/// Compiler-only fence on accumulator registers: keeps the compiler from moving their reads or
/// writes across the wgmma fence / wait that surround the asynchronous multiply (CuTe's
/// warpgroup_fence_operand).
template <int R> __device__ __forceinline__ void fenceOperands(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
    asm volatile("" : "+f"(d[i])::"memory");
}

/// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start
/// address >> 4, 16-29 leading dimension byte offset >> 4, 32-45 stride dimension byte offset
/// >> 4, 49-51 base offset (0: every atom is 1024-byte aligned), 62-63 swizzle mode (1 = 128B).
__device__ __forceinline__ unsigned long long makeDesc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFFu) >> 4) |
         ((unsigned long long)((lbo >> 4) & 0x3FFFu) << 16) |
         ((unsigned long long)((sbo >> 4) & 0x3FFFu) << 32) | (1ull << 62);
}

// Register lists of wgmma.mma_async m64nNk16 with fp32 accumulators: N / 2 registers d, then
// the A and B descriptors, scale-d (a predicate set from an operand), scale-a = scale-b = 1
// and the two transpose immediates. Thread t of warp w in the warpgroup holds, for j < N / 8,
// d[4j + {0, 1}] = D[16 w + t / 4][8 j + 2 (t % 4) + {0, 1}] and d[4j + {2, 3}] the same
// columns of row + 8 (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts": wgmma
// .m64nNk16 matrix D).
#define KILN_WGMMA_REGS64                                                                          \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define KILN_WGMMA_D64                                                                             \
  "{" KILN_WGMMA_REGS64 "}, %32, %33, p, 1, 1, %35, %36"
#define KILN_WGMMA_RS_D64                                                                          \
  "{" KILN_WGMMA_REGS64 "}, {%32, %33, %34, %35}, %36, p, 1, 1, %38"
#define KILN_WGMMA_RS_P64 "%37"
#define KILN_WGMMA_P64 "%34"
#define KILN_WGMMA_REGS128                                                                         \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "               \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "               \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define KILN_WGMMA_D128                                                                            \
  "{" KILN_WGMMA_REGS128 "}, %64, %65, p, 1, 1, %67, %68"
#define KILN_WGMMA_RS_D128                                                                         \
  "{" KILN_WGMMA_REGS128 "}, {%64, %65, %66, %67}, %68, p, 1, 1, %70"
#define KILN_WGMMA_RS_P128 "%69"
#define KILN_WGMMA_P128 "%66"
#define KILN_WGMMA_REGS192                                                                         \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "               \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "               \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "               \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "               \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define KILN_WGMMA_D192                                                                            \
  "{" KILN_WGMMA_REGS192 "}, %96, %97, p, 1, 1, %99, %100"
#define KILN_WGMMA_RS_D192                                                                         \
  "{" KILN_WGMMA_REGS192 "}, {%96, %97, %98, %99}, %100, p, 1, 1, %102"
#define KILN_WGMMA_RS_P192 "%101"
#define KILN_WGMMA_P192 "%98"
#define KILN_WGMMA_REGS256                                                                         \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "               \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "               \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "               \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "               \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "               \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "   \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define KILN_WGMMA_D256                                                                            \
  "{" KILN_WGMMA_REGS256 "}, %128, %129, p, 1, 1, %131, %132"
#define KILN_WGMMA_RS_D256                                                                         \
  "{" KILN_WGMMA_REGS256 "}, {%128, %129, %130, %131}, %132, p, 1, 1, %134"
#define KILN_WGMMA_RS_P256 "%133"
#define KILN_WGMMA_P256 "%130"
#define KILN_WGMMA_ACC8(i)                                                                         \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),      \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define KILN_WGMMA_ACC32(i)                                                                        \
  KILN_WGMMA_ACC8(i), KILN_WGMMA_ACC8(i + 8), KILN_WGMMA_ACC8(i + 16), KILN_WGMMA_ACC8(i + 24)
#define KILN_WGMMA_ACC64 KILN_WGMMA_ACC32(0)
#define KILN_WGMMA_ACC128 KILN_WGMMA_ACC32(0), KILN_WGMMA_ACC32(32)
#define KILN_WGMMA_ACC192 KILN_WGMMA_ACC32(0), KILN_WGMMA_ACC32(32), KILN_WGMMA_ACC32(64)
#define KILN_WGMMA_ACC256                                                                          \
  KILN_WGMMA_ACC32(0), KILN_WGMMA_ACC32(32), KILN_WGMMA_ACC32(64), KILN_WGMMA_ACC32(96)

/// d += A * B for one m64nNk16 step, A and B read from shared memory through descriptors;
/// TransA / TransB = 1 for an M-major A / N-major B (imm-trans-a / imm-trans-b). scaleD = 0
/// ignores d's old value (d = A * B: the first k step of a fresh accumulator, no zeroing).
template <typename T, int N> struct Wgmma;
/// d += A * B for one m64nNk16 step with A in registers (four 32-bit registers of two 16-bit
/// values each, the layout of mma.sync m16n8k16's A per warp: a[0] = (row g, k 2q..2q+1),
/// a[1] = (row g + 8, k 2q..), a[2] = (row g, k 8 + 2q..), a[3] = (row g + 8, k 8 + 2q..),
/// g = lane / 4, q = lane % 4, rows 16 w.. of warp w; PTX ISA, "Register Fragments and Shared
/// Memory Matrix Layouts": wgmma .m64nNk16 matrix A) and B through a descriptor. Two adjacent
/// 8-column blocks of an fp32 D fragment, packed to 16 bits, are exactly this A fragment, so
/// a product P V can read P from the accumulators of P = Q K^T (FlashAttention-3). The A
/// registers are read asynchronously: they must keep their values until wgmma.wait_group.
template <typename T, int N> struct WgmmaRS;
#define KILN_WGMMA_DEFINE(TYPE, PTXTYPE, N)                                                        \
  template <> struct Wgmma<TYPE, N> {                                                              \
    template <int TransA, int TransB>                                                              \
    static __device__ __forceinline__ void run(float (&d)[N / 2], unsigned long long descA,        \
                                               unsigned long long descB, int scaleD = 1) {         \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " KILN_WGMMA_P##N                             \
                   ", 0;\n"                                                                        \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTXTYPE "." PTXTYPE           \
                   " " KILN_WGMMA_D##N ";\n}\n"                                                    \
                   : KILN_WGMMA_ACC##N                                                             \
                   : "l"(descA), "l"(descB), "r"(scaleD), "n"(TransA), "n"(TransB)                 \
                   : "memory");                                                                    \
    }                                                                                              \
  };                                                                                               \
  template <> struct WgmmaRS<TYPE, N> {                                                            \
    template <int TransB>                                                                          \
    static __device__ __forceinline__ void run(float (&d)[N / 2], const unsigned (&a)[4],          \
                                               unsigned long long descB, int scaleD = 1) {         \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " KILN_WGMMA_RS_P##N                          \
                   ", 0;\n"                                                                        \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTXTYPE "." PTXTYPE           \
                   " " KILN_WGMMA_RS_D##N ";\n}\n"                                                 \
                   : KILN_WGMMA_ACC##N                                                             \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(scaleD),          \
                     "n"(TransB)                                                                   \
                   : "memory");                                                                    \
    }                                                                                              \
  };
KILN_WGMMA_DEFINE(f16, "f16", 64)
KILN_WGMMA_DEFINE(f16, "f16", 128)
KILN_WGMMA_DEFINE(f16, "f16", 192)
KILN_WGMMA_DEFINE(f16, "f16", 256)
KILN_WGMMA_DEFINE(bf16, "bf16", 64)
KILN_WGMMA_DEFINE(bf16, "bf16", 128)
KILN_WGMMA_DEFINE(bf16, "bf16", 192)
KILN_WGMMA_DEFINE(bf16, "bf16", 256)
#undef KILN_WGMMA_DEFINE
#undef KILN_WGMMA_ACC256
#undef KILN_WGMMA_ACC192
#undef KILN_WGMMA_ACC128
#undef KILN_WGMMA_ACC64
#undef KILN_WGMMA_ACC32
#undef KILN_WGMMA_ACC8
#undef KILN_WGMMA_D64
#undef KILN_WGMMA_D128
#undef KILN_WGMMA_D192
#undef KILN_WGMMA_D256
#undef KILN_WGMMA_P64
#undef KILN_WGMMA_P128
#undef KILN_WGMMA_P192
#undef KILN_WGMMA_P256
#undef KILN_WGMMA_RS_D64
#undef KILN_WGMMA_RS_D128
#undef KILN_WGMMA_RS_D192
#undef KILN_WGMMA_RS_D256
#undef KILN_WGMMA_RS_P64
#undef KILN_WGMMA_RS_P128
#undef KILN_WGMMA_RS_P192
#undef KILN_WGMMA_RS_P256
#undef KILN_WGMMA_REGS64
#undef KILN_WGMMA_REGS128
#undef KILN_WGMMA_REGS192
#undef KILN_WGMMA_REGS256

//===----------------------------------------------------------------------===//
// Operand tiles in shared memory (128-byte swizzle, BK = 64 16-bit elements)
//===----------------------------------------------------------------------===//

/// Descriptor arithmetic of one operand's stage tile (ROWS operand rows x BK k). K-major: row r
/// is the 128-byte line at 128 r; MN-major: the 1024-byte atom of rows 64 j.. and k 8 g.. is at
/// 1024 (j BK / 8 + g). offset(row0, ks) is the start of the m64 / nN block at row0 (a multiple
/// of 64) for k = 16 ks .. 16 ks + 15: 32 bytes per k step inside the K-major line (the hardware
/// applies the swizzle to the absolute address, as CuTe's DescriptorIterator relies on), two
/// whole atoms per k step in the MN-major tile.
template <bool KMajor, int BK> struct TileDesc {
  static constexpr unsigned kLbo = KMajor ? 16u : unsigned(BK / 8 * 1024);
  static constexpr unsigned kSbo = 1024u;
  static constexpr int kTrans = KMajor ? 0 : 1;
  static __device__ __forceinline__ unsigned offset(int row0, int ks) {
    return KMajor ? unsigned(row0 * BK * 2 + ks * 32)
                  : unsigned(row0 / 64 * (BK / 8) * 1024 + ks * 2048);
  }
  static __device__ __forceinline__ unsigned long long make(unsigned addr) {
    return makeDesc(addr, kLbo, kSbo);
  }
};

/// MN-major strided operand (element (r, k) at ptr[k * ld + r]) copied with 16-byte cp.async
/// into the MN-major 128-byte-swizzle tile. The tile is ROWS / 64 blocks of BK lines (one line:
/// the 64 rows of a block at one k, 8 chunks); line L = j BK + k of block j. Thread t copies chunk
/// t % 8 of lines t / 8, t / 8 + kLines, ... (kLines = THREADS / 8 divides BK), so 8 consecutive
/// threads read 128 contiguous global bytes and write the 8 chunk positions of one 128-byte
/// shared line, and every iteration's shared offset and global row step are compile-time
/// constants. Interface as tc::StageLoader: begin(stage) starts the next BK slice, finish(stage)
/// is a no-op.
template <typename T, int ROWS, int BK, int THREADS> struct MnMajorLoader {
  static constexpr int kLines = THREADS / 8; // lines per iteration
  static_assert(THREADS % 8 == 0 && BK % kLines == 0 && kLines % 8 == 0,
                "MN-major loader: THREADS / 8 must be a multiple of 8 dividing BK");
  static_assert(ROWS % 64 == 0, "MN-major loader: the tile extent must be a multiple of 64");
  static constexpr int kIters = ROWS / 64 * BK / kLines;
  const T *base, *src;       // operand base (address of skipped chunks); chunk of iteration 0
  long long ld, sliceStride; // elements between k lines; between K slices
  unsigned off0;             // byte offset of iteration 0's chunk
  int rowsLeft;              // operand rows from this thread's first row (block 0)
  int kLeft;                 // K - (k of iteration 0's line in this slice)
  __device__ __forceinline__ MnMajorLoader(const StridedOperand<T, false> &op, int K, int row0)
      : base(op.ptr), ld(op.ld), sliceStride(BK * op.ld) {
    const int line0 = int(threadIdx.x) / 8, ch = int(threadIdx.x) % 8;
    src = op.ptr + line0 * op.ld + row0 + ch * 8;
    rowsLeft = op.rows - row0 - ch * 8;
    kLeft = K - line0;
    off0 = unsigned(line0 / 8 * 1024 + (line0 % 8) * 128 + (ch ^ (line0 % 8)) * 16);
  }
  __device__ __forceinline__ void begin(unsigned stage) {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int j = it * kLines / BK, dk = it * kLines % BK; // block; k offset from line0
      const bool ok = j * 64 < rowsLeft && dk < kLeft;
      const unsigned off = off0 + unsigned((j * (BK / 8) + dk / 8) * 1024);
      tc::cpAsync16(stage + off, ok ? src + dk * ld + j * 64 : base, ok);
    }
    src += sliceStride;
    kLeft -= BK;
  }
  __device__ __forceinline__ void finish(unsigned) const {}
};

/// Whether an operand descriptor is a FnOperand (written to shared memory with st.shared).
template <typename Op> struct IsFnOperand { static constexpr bool value = false; };
template <typename T, typename F> struct IsFnOperand<FnOperand<T, F>> {
  static constexpr bool value = true;
};

/// The stage loader of an operand: gemm_tc.cuh's for K-major operands (its BK = 64 tile is the
/// K-major 128-byte-swizzle layout), MnMajorLoader for MN-major strided operands.
template <typename Op, int ROWS, int BK, int THREADS> struct LoaderOf {
  static_assert(BK == 64 && tc::swizzleMask<8>(0) == 0 && tc::swizzleMask<8>(3) == 3 &&
                    tc::swizzleMask<8>(7) == 7 && tc::swizzleMask<8>(9) == 1,
                "gemm_tc.cuh's K-major stage tile no longer is the 128-byte-swizzle layout "
                "(16-byte chunk c of row r at 128 r + 16 (c ^ r % 8)) that the wgmma descriptors "
                "describe");
  using type = tc::StageLoader<Op, ROWS, BK, THREADS>;
};
template <typename T, int ROWS, int BK, int THREADS>
struct LoaderOf<StridedOperand<T, false>, ROWS, BK, THREADS> {
  using type = MnMajorLoader<T, ROWS, BK, THREADS>;
};

} // namespace wg

//===----------------------------------------------------------------------===//
// The GEMM tile
//===----------------------------------------------------------------------===//

/// Computes the (tileM, tileN) BM x BN tile of C[M,N] = A[M,K] * B[K,N] with wgmma on sm_90a:
/// T is f16 or bf16 (both operands), accumulation is fp32, and every in-range result (m < M,
/// n < N) goes to `epilogue(int m, int n, float acc)` once, in row-major order across the block's
/// threads (consecutive threads take consecutive n, so the epilogue's memory accesses coalesce). OpA / OpB are
/// StridedOperand (either majorness) or FnOperand descriptors of A viewed as M x K and B viewed
/// as N x K, with gemm_tc.cuh's preconditions. Launch with blockDim.x == 128 * CONSUMER_WARPGROUPS;
/// warpgroup w owns rows w BM / CONSUMER_WARPGROUPS .. of the tile (a multiple of 64) and all BN
/// columns. Rules (static_asserts): BK == 64; BM / CONSUMER_WARPGROUPS % 64 == 0; BN % 64 == 0
/// and BN <= 256; at most 128 accumulator registers per thread; STAGES >= 3. `smem` is dynamic
/// shared memory of gemmWgmmaSmemBytes<T, BM, BN, BK, STAGES>() bytes, 16-byte aligned (the
/// function aligns it to 1024 itself); it may be reused once the call returns. Any M, N, K >= 0
/// works. Requires sm_90a; compiled for any other target the call traps.
template <typename T, int BM, int BN, int BK, int CONSUMER_WARPGROUPS, int STAGES, typename OpA,
          typename OpB, typename Epilogue>
__device__ __forceinline__ void gemmTileWgmma(int M, int N, int K, int tileM, int tileN,
                                              const OpA &a, const OpB &b, Epilogue epilogue,
                                              char *smem) {
  static_assert(tc::IsSame<T, f16>::value || tc::IsSame<T, bf16>::value,
                "gemmTileWgmma: T must be kiln::f16 or kiln::bf16");
  static_assert(tc::IsSame<typename OpA::Elem, T>::value &&
                    tc::IsSame<typename OpB::Elem, T>::value,
                "gemmTileWgmma: both operands must have element type T");
  static_assert(BK == 64, "gemmTileWgmma: BK must be 64 (one 128-byte swizzle line of 16-bit k)");
  static_assert(CONSUMER_WARPGROUPS >= 1 && BM % CONSUMER_WARPGROUPS == 0 &&
                    (BM / CONSUMER_WARPGROUPS) % 64 == 0,
                "gemmTileWgmma: BM / CONSUMER_WARPGROUPS must be a multiple of 64 (wgmma m64)");
  static_assert(BN % 64 == 0 && BN <= 256,
                "gemmTileWgmma: BN must be 64, 128, 192 or 256 (one wgmma n per warpgroup)");
  static_assert(BM / CONSUMER_WARPGROUPS / 64 * BN / 2 <= 128,
                "gemmTileWgmma: more than 128 fp32 accumulator registers per thread");
  static_assert(STAGES >= 3, "gemmTileWgmma: STAGES must be >= 3 (one stage is read by the "
                             "wgmma group in flight, one by the group being issued)");
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kThreads = 128 * CONSUMER_WARPGROUPS;
  constexpr int kWgRows = BM / CONSUMER_WARPGROUPS; // rows per warpgroup
  constexpr int kMI = kWgRows / 64;                 // m64 blocks per warpgroup
  constexpr int kStageA = BM * BK * int(sizeof(T)), kStageB = BN * BK * int(sizeof(T));
  using DescA = wg::TileDesc<OpA::kKMajor, BK>;
  using DescB = wg::TileDesc<OpB::kKMajor, BK>;

  const int wgIdx = int(threadIdx.x) >> 7;
  const unsigned smemA = (tc::smemAddr(smem) + 1023u) & ~1023u;
  const unsigned smemB = smemA + STAGES * kStageA;
  typename wg::LoaderOf<OpA, BM, BK, kThreads>::type loadA(a, K, tileM * BM);
  typename wg::LoaderOf<OpB, BN, BK, kThreads>::type loadB(b, K, tileN * BN);

  float acc[kMI][BN / 2];
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int e = 0; e < BN / 2; ++e)
      acc[mi][e] = 0.0f;

  // Main loop (slice kt lives in stage kt % STAGES; kAhead = STAGES - 2 slices are loading
  // while one is multiplied and the previous one may still be in the tensor cores):
  //  1. Prologue: start slices 0 .. kAhead - 1, one cp.async group each (empty past the end).
  //  2. Wait for this thread's copies of slice kt (at most kAhead - 1 newer groups pending),
  //     fence.proxy.async, __syncthreads: slice kt is visible to the async proxy of every
  //     warpgroup, and every warpgroup has retired its wgmma group of slice kt - 2.
  //  3. wgmma.fence, then per 16-wide k step and m64 block one wgmma.mma_async; commit.
  //  4. Start slice kt + kAhead into the stage slice kt - 2 used; commit its cp.async group.
  //     Functor operands evaluate into registers and store to shared memory here.
  //  5. wgmma.wait_group 1: slice kt - 1's group has retired, slice kt's stays in flight.
  //  6. Drain: wait for all wgmma groups and the (empty) cp.async groups, __syncthreads so smem
  //     may be reused, then hand the accumulators to the epilogue.
  constexpr int kAhead = STAGES - 2;
  const int kTiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < kAhead; ++s) { // step 1
    if (s < kTiles) {
      loadA.begin(smemA + s * kStageA);
      loadB.begin(smemB + s * kStageB);
      loadA.finish(smemA + s * kStageA);
      loadB.finish(smemB + s * kStageB);
    }
    tc::cpAsyncCommit();
  }
  // Descriptors of stage 0, ks = 0; stage s and step ks add (s kStage + offset) >> 4 to the
  // start-address field (addresses stay below 2^18, so the 14-bit field never carries).
  unsigned long long descA[kMI];
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
    descA[mi] = DescA::make(smemA + DescA::offset(wgIdx * kWgRows + mi * 64, 0));
  const unsigned long long descB = DescB::make(smemB);

  int readStage = 0, writeStage = kAhead;
  for (int kt = 0; kt < kTiles; ++kt) {
    tc::cpAsyncWait<kAhead - 1>(); // step 2
    if constexpr (KILN_WGMMA_CPASYNC_PROXY_FENCE || wg::IsFnOperand<OpA>::value ||
                  wg::IsFnOperand<OpB>::value)
      wg::fenceProxyAsync();
    __syncthreads();

#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) // step 3
      wg::fenceOperands(acc[mi]);
    wg::wgmmaFence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks)
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
        wg::Wgmma<T, BN>::template run<DescA::kTrans, DescB::kTrans>(
            acc[mi], descA[mi] + ((readStage * kStageA + DescA::offset(0, ks)) >> 4),
            descB + ((readStage * kStageB + DescB::offset(0, ks)) >> 4));
    wg::wgmmaCommit();

    const bool more = kt + kAhead < kTiles; // step 4
    const unsigned wA = smemA + writeStage * kStageA, wB = smemB + writeStage * kStageB;
    if (more) {
      loadA.begin(wA);
      loadB.begin(wB);
    }
    tc::cpAsyncCommit();
    if (more) {
      loadA.finish(wA);
      loadB.finish(wB);
    }

    wg::wgmmaWait<1>(); // step 5
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
      wg::fenceOperands(acc[mi]);
    readStage = readStage == STAGES - 1 ? 0 : readStage + 1;
    writeStage = writeStage == STAGES - 1 ? 0 : writeStage + 1;
  }
  wg::wgmmaWait<0>(); // step 6
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
    wg::fenceOperands(acc[mi]);
  tc::cpAsyncWait<0>();
  __syncthreads();

  // 7. Epilogue through shared memory: the accumulators go to a float tile [BM][BN + kPad]
  //    (float2 stores, two wavefronts per warp), then every thread takes elements in row-major
  //    order, so a warp's epilogue loads (bias, residual, mask) and its stores touch 32
  //    consecutive elements of one row: coalesced, whatever the fused expression reads.
  constexpr int kPad = 8;
  float *tile = reinterpret_cast<float *>(smem);
  const int lane = int(threadIdx.x) & 31, warpInWg = (int(threadIdx.x) >> 5) & 3;
  const int rowInTile = wgIdx * kWgRows + warpInWg * 16 + (lane >> 2);
  const int colInTile = 2 * (lane & 3);
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
        *reinterpret_cast<wg::Float2 *>(tile + (rowInTile + mi * 64 + half * 8) * (BN + kPad) +
                                        colInTile + j * 8) =
            wg::Float2{acc[mi][4 * j + 2 * half], acc[mi][4 * j + 2 * half + 1]};
  __syncthreads();
  // Unrolled so that each thread has several independent epilogue loads in flight: with one
  // or two blocks per SM, a rolled loop would wait out one global-memory latency per element.
  static_assert(BM * BN % kThreads == 0, "gemmTileWgmma: the epilogue tile must split evenly");
#pragma unroll 8
  for (int i = 0; i < BM * BN / kThreads; ++i) {
    const int idx = i * kThreads + int(threadIdx.x);
    const int r = idx / BN, c = idx % BN;
    const int m = tileM * BM + r, n = tileN * BN + c;
    if (m < M && n < N)
      epilogue(m, n, tile[r * (BN + kPad) + c]);
  }
#elif defined(__CUDA_ARCH__)
  // Not sm_90a: wgmma does not exist. The code generator never selects this path there.
  (void)M, (void)N, (void)K, (void)tileM, (void)tileN, (void)a, (void)b, (void)epilogue, (void)smem;
  asm volatile("trap;");
#endif
}

} // namespace kiln
