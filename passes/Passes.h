//===- Passes.h - kiln pass entry points --------------------------*- C++ -*-===//
//
// Declares the kiln passes (generated from Passes.td) and the transformation
// libraries behind them, so that tools and tests can call them directly.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "dialects/kiln/KernelPlan.h"
#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/KilnTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <limits>

namespace kiln {

/// Converts every f32 tensor of `func` to the storage type of `precision`
/// (`kiln::Precision`, KilnAttrs.td; see AssignPrecision in Passes.td) and
/// records it as `#kiln.precision` on `func`. Fails with a diagnostic when
/// `func` already holds kernels.
mlir::LogicalResult assignPrecision(mlir::RewriterBase &rewriter, mlir::func::FuncOp func,
                                    Precision precision);

/// Replaces the decomposed RMS normalization whose mean of squares is `mean`
/// (see RaiseRmsNorm in Passes.td) by one `kiln.rms_norm` and erases the
/// chain. Fails without changing anything when the ops around `mean` are not
/// an exact match.
mlir::FailureOr<RmsNormOp> raiseRmsNorm(mlir::RewriterBase &rewriter, ReduceOp mean);

/// Largest concatenated weight fuseSiblingGemms creates, in bytes.
inline constexpr int64_t kMaxSiblingWeightBytes = int64_t(1) << 28;

/// Replaces `siblings` (>= 2 `kiln.matmul`s in one block, reading the same
/// lhs, each with a rank-2 `kiln.constant` rhs [K, N_i] of one element type,
/// N_i a multiple of 8, together at most kMaxSiblingWeightBytes) by one
/// `kiln.matmul` against the weights concatenated along N, followed by one
/// `kiln.slice` per sibling. When every sibling is read only by an add of a
/// constant bias [N_i], the biases are concatenated too and added once
/// before slicing. Returns the new matmul; fails without changing anything
/// when the group does not qualify (see FuseSiblingGemms in Passes.td).
mlir::FailureOr<MatMulOp> fuseSiblingGemms(mlir::RewriterBase &rewriter,
                                           llvm::ArrayRef<MatMulOp> siblings);

/// Rewrites `func` into the graph of rank `rank` of `tpSize` tensor-parallel
/// ranks (see ShardTensorParallel in Passes.td): column-parallel Q/K/V and
/// MLP up/gate GEMMs, row-parallel attention output and MLP down GEMMs each
/// followed by `kiln.all_reduce`. Fails with a diagnostic on the op for an
/// uneven split or an attention it cannot shard (the IR may then be partly
/// rewritten). Requires 0 <= rank < tpSize.
mlir::LogicalResult shardTensorParallel(mlir::RewriterBase &rewriter, mlir::func::FuncOp func,
                                        int64_t tpSize, int64_t rank);

/// Replaces the body of `func` by the loopback form of `tpSize`-way tensor
/// parallelism: the graphs of all ranks (shardTensorParallel for r = 0..N-1)
/// side by side in one function, each `kiln.all_reduce` replaced by the sum
/// (`kiln.add`) of the N ranks' inputs, returning rank 0's results. It runs
/// every rank's shard on one GPU, to check the sharding against the unsharded
/// model without N GPUs. Fails like shardTensorParallel (then `func` is
/// unchanged). tpSize == 1 changes nothing.
mlir::LogicalResult buildTensorParallelLoopback(mlir::RewriterBase &rewriter,
                                                mlir::func::FuncOp func, int64_t tpSize);

/// Where the few-row GEMM (kiln::gemmSkinny) does its multiply-adds (kiln-select-tiles
/// `skinny-tensor-cores`, kiln-compile --skinny-tensor-cores).
enum class SkinnyTensorCores {
  Off,  ///< the CUDA cores (fp32 FMAs) for every row count
  Auto, ///< the tensor cores from kMinSkinnyTensorCoreRows rows on, the CUDA cores below
  On,   ///< the tensor cores for every row count
};

/// How the Hopper attention kernel (kiln::attentionSm90) is launched (kiln-select-tiles
/// `sm90-attention-persistent`, kiln-compile --hopper-attention-persistent).
enum class Sm90AttentionLaunch {
  Grid,       ///< one block per query tile of one (batch, head)
  Auto,       ///< persistent up to kSm90AttentionPersistentWaves waves of query tiles, else grid
  Persistent, ///< at most one block per SM, walking the query tiles longest first
};

/// Sm90AttentionLaunch::Auto launches persistent blocks when the query tiles (128 rows of one
/// batch and head) number at most this many times the target's SMs. On the H200 (2026-12-03,
/// test/gpu/attention_test --bench) persistent blocks were 10-35% faster at 384 and 512 tiles
/// (GPT-2 and BERT 8x512, Llama 4x512 and 1x2048, head dim 64), and grid launch as fast or faster
/// from 1024 tiles on (b1 h32 s4096 non-causal, b4 h32 s2048, head dim 128).
inline constexpr int64_t kSm90AttentionPersistentWaves = 4;

/// The fewest rows for which SkinnyTensorCores::Auto picks the tensor cores. On the CUDA cores
/// each 8-byte load of the weight costs rows x 4 FMAs plus the reads of A, and from 5 rows on
/// ptxas gives the kernel 80-127 registers (2 blocks per SM instead of 3); the tensor-core
/// inner product costs the same per weight tile whatever the rows, but adds a shared-memory
/// round trip of the weight, which 1-4 rows do not need to hide their FMAs. To be confirmed by
/// test/gpu/gemm_skinny_test.cu --bench.
inline constexpr int64_t kMinSkinnyTensorCoreRows = 5;

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Decides whether `producer` may join the kernel group of its consumer
/// `consumer` (one of its consumers when it has several in one group).
using FusionControlFn = std::function<bool(mlir::Operation *producer, mlir::Operation *consumer)>;

/// Knobs of pointwise fusion (see FusePointwise in Passes.td).
struct FusionOptions {
  unsigned maxOpsPerKernel = 64;
  /// A group stops growing before it reads more than this many distinct
  /// values (kernel operands; each becomes a launch argument).
  unsigned maxInputsPerKernel = 128;
  bool fuseEpilogues = true;          ///< GEMM/softmax/layer-norm epilogues
  bool fuseReductionPrologues = true; ///< producers of a reduction's input
  bool fuseGemmPrologues = true;      ///< cheap producers of GEMM operands
  /// A kiln.rotary on attention's key joins the attention kernel (each block rotates the K
  /// tiles it reads); false: the rotary is its own pointwise kernel and attention reads the
  /// rotated K from memory (the query's rotary is fused either way: each block rotates its Q
  /// tile once). Default false: the 0.8B Llama at 4x512 ran 7.7% faster with the key rotary's
  /// own kernel on an H200 (docs/results.md, session 10).
  bool fuseKeyRotary = false;
  /// Each rotary that a KV-cache append or a paged attention reads computes cos and sin of its
  /// decode-sized table (at most 2048 elements) in the prologue instead of reading the table
  /// kernel's result (recomputeRotaryTables). Default false: the tables are one kernel; the
  /// recompute made the 0.8B Llama's batch-1 decode step 11% slower on the H200 (the attention
  /// 11.8 -> 18.7 us per layer; docs/results.md, session 29).
  bool recomputeRotaryTables = false;
};

/// Groups fusible ops of `func` into `kiln.kernel` regions, with GEMMs,
/// softmaxes and layer norms as epilogue anchors when enabled. Returns the number of kernels
/// created.
int64_t fusePointwiseChains(mlir::RewriterBase &rewriter, mlir::func::FuncOp func,
                            const FusionOptions &options, const FusionControlFn &control);

/// The value of a one-element float constant (`kiln.constant` of any rank),
/// if `v` is one.
std::optional<double> getScalarFloatConstant(mlir::Value v);

/// The dense value of `v` if it is a `kiln.constant` holding a
/// DenseElementsAttr of a float type, else null.
mlir::DenseElementsAttr denseFloatConstant(mlir::Value v);

/// Replaces `concat`, when it has more than `maxInputs` (>= 2) operands, by
/// a balanced tree of concats along the same axis with at most `maxInputs`
/// operands each (see SplitWideConcats in Passes.td). Returns the concat
/// that now produces the result, or failure (nothing changed) when `concat`
/// is already narrow enough.
mlir::FailureOr<ConcatOp> splitWideConcat(mlir::RewriterBase &rewriter, ConcatOp concat,
                                          unsigned maxInputs);

/// Wraps `ops` (in program order, each a use-def closed group) into one
/// `kiln.kernel` named `name`, inserted at the last op. Values defined in
/// the group and used outside become kernel results.
mlir::FailureOr<KernelOp> outlineIntoKernel(mlir::RewriterBase &rewriter,
                                            llvm::ArrayRef<mlir::Operation *> ops,
                                            llvm::StringRef name);

/// Chooses the CUDA-core tile of an fp32 GEMM with `batch` x [M, N] outputs
/// on `target` (see SelectTiles in Passes.td).
GemmTileAttr selectGemmTile(int64_t m, int64_t n, int64_t batch, TargetAttr target);

/// Chooses the mma.sync tile of a 16-bit GEMM (or, with `tf32`, an fp32 GEMM
/// on TF32 tensor cores) with `batch` x [M, N, K] on `target` by the
/// estimated time of its waves; `reason` receives a one-line explanation
/// (blocks, waves, estimate).
MmaTileAttr selectMmaTile(int64_t m, int64_t n, int64_t k, int64_t batch, TargetAttr target,
                          std::string &reason, bool tf32 = false);

/// Chooses the wgmma tile of a 16-bit GEMM like selectMmaTile; `target` must
/// have wgmma tensor cores. With `mmaFallback` (the artifact also targets GPUs
/// without wgmma, so each wgmma kernel's mma.sync path is compiled too) only
/// tiles whose mma.sync path the cp.async loaders support are considered.
WgmmaTileAttr selectWgmmaTile(int64_t m, int64_t n, int64_t k, int64_t batch, TargetAttr target,
                              std::string &reason, bool mmaFallback = false);

/// Chooses the tile of the Hopper TMA GEMM (cuda/gemm_sm90.cuh) of a 16-bit
/// GEMM with `batch` x [M, N, K] by the cost model of its candidate table
/// (constants fit to an H200); `target` must have wgmma tensor cores.
/// `reason` gets blocks, waves and the estimate. Null when no candidate fits
/// the target's shared memory per block. With `rowStats` (a norm folded into
/// the GEMM) only tiles without split-K, with the statistics' shared memory.
Sm90GemmTileAttr selectSm90GemmTile(int64_t m, int64_t n, int64_t k, int64_t batch,
                                    TargetAttr target, std::string &reason,
                                    bool rowStats = false);

/// Chooses the plan of kiln::gemmSkinny (cuda/gemm_skinny.cuh) for `rows` x [K] x [K, N]: the
/// inner product (tensor cores per `tensorCores`, when the tensor-core path's shared memory,
/// with the row statistics of an RMS norm in the A loader when `rowStats`, fits the target's
/// block) and the split-K, the least number of cluster blocks sharing 64 columns that gives
/// every SM of `target` two blocks, at most 8, keeping at least 128 K rows per block and the
/// blocks in one wave. With `preload` on a target with wgmma (sm_90), when three blocks of the
/// tensor-core path fit an SM (by shared memory, and by registers at 80 per thread: 1-2 rows on
/// sm_90) and `tensorCores` is not Off: the tensor cores with `preload = true`, and the split-K
/// rule above for one block fewer per SM (2), so that the next GEMM's block fits in the slot
/// left. With `occupancy` (2..4) a tensor-core plan without the preload counts that many blocks
/// per SM: `a_chunk` the longest of 2048, 1024, ..., 128 K rows (at most the default chunk) with
/// which that many blocks' shared memory fits the target's SM, `min_blocks_per_sm` the same
/// count; when no chunk fits, the default plan. With `preload` and up to `preloadRows` rows
/// (2..16), where the default A chunk leaves no third block slot (3-16 rows on sm_90), the
/// preload plan takes the longest shorter chunk (`a_chunk`, at least 128 K rows) that leaves it.
/// `reason` gets the choice and the block count.
SkinnyGemmTileAttr selectSkinnyGemmTile(int64_t rows, int64_t n, int64_t k, TargetAttr target,
                                        std::string &reason,
                                        SkinnyTensorCores tensorCores = SkinnyTensorCores::Auto,
                                        bool rowStats = false, bool preload = false,
                                        int64_t occupancy = 0, int64_t preloadRows = 2);

/// Chooses the tile of the tensor-core attention kernel for `batch` x
/// `heads` x `queries` query rows of head dim `headDim` on `target`: the
/// largest query tile that still gives every SM a block; `reason` receives a
/// one-line explanation.
AttentionTileAttr selectAttentionTile(int64_t batch, int64_t heads, int64_t queries,
                                      int64_t headDim, TargetAttr target, std::string &reason);

/// Chooses the tile of the Hopper attention kernel (kiln::attentionSm90, cuda/attention_sm90.cuh)
/// for `batch` x `heads` x `queries` query rows of head dim `headDim` (`masked`: an additive mask
/// is read per score) on `target`, or std::nullopt when it should not run there: a head dim
/// whose O, S and P accumulators or tiles exceed the consumers' registers or the target's shared
/// memory, or fewer 128-row query tiles than the target has SMs (short batch-1 prompts: the
/// mma.sync kernel's smaller tiles spread over more SMs). `reason` receives a one-line
/// explanation either way.
/// `launch`: grid or persistent (at most one block per SM walking the query tiles), or Auto:
/// persistent up to kSm90AttentionPersistentWaves waves of query tiles. `paged`: for
/// kiln::prefillAttentionSm90Paged, whose producer keeps more registers (attn90::Regs: 232 per
/// consumer thread instead of 240).
std::optional<Sm90AttentionTileAttr> selectSm90AttentionTile(int64_t batch, int64_t heads,
                                                             int64_t queries, int64_t headDim,
                                                             bool masked,
                                                             Sm90AttentionLaunch launch,
                                                             TargetAttr target,
                                                             std::string &reason,
                                                             bool paged = false);

/// Parses an MMA tile override "BMxBNxBKxWMxWNxSTAGES" (e.g. 128x128x32x2x4x4)
/// for 16-bit GEMMs on `target`: the six numbers, the rules of
/// `#kiln.mma_tile` and the target's shared memory per block. Fails with the
/// reason in `error`.
mlir::FailureOr<MmaTileAttr> parseMmaTile(llvm::StringRef spec, TargetAttr target,
                                          std::string &error);

/// Result of memory planning for one function.
struct MemoryPlan {
  int64_t arenaBytes = 0;        ///< size of the activation arena, bytes
  int64_t intermediateBytes = 0; ///< sum of all kernel result sizes, bytes
};

/// `lastUse` of a buffer that reaches the function's return: it lives to the
/// end of the schedule.
inline constexpr int64_t kLiveToEnd = std::numeric_limits<int64_t>::max();

/// One activation buffer of a function after kiln-outline-kernels: result
/// `resultIndex` of `kernel`, live from the kernel that defines it to the last
/// kernel reading it or a view of it (a `kiln.reshape`, an in-place
/// `kiln.all_reduce`). Schedule indices count `kiln.kernel` ops in program
/// order (= launch indices of the artifact), inclusive.
struct BufferLiveness {
  KernelOp kernel;
  unsigned resultIndex = 0;
  int64_t bytes = 0;      ///< tensor bytes (elements x element size)
  int64_t arenaBytes = 0; ///< bytes rounded up to the arena alignment (at least one alignment)
  int64_t firstUse = 0;   ///< schedule index of the defining kernel
  int64_t lastUse = 0;    ///< schedule index of the last reader, or kLiveToEnd
  int64_t offset = -1;    ///< arena offset; set by planMemory only
};

/// Steps 1-2 of planMemory: the buffers of `func` in definition order with
/// their liveness (offsets not set). Errors (diagnostic on the op): an
/// alignment that is not a power of two or above 64 KiB, dynamic shapes, an
/// op other than kernels, constants, reshape views, all-reduces and the return
/// (outlining did not run), an all-reduce whose operand has other readers.
mlir::FailureOr<llvm::SmallVector<BufferLiveness>> analyzeBufferLiveness(mlir::func::FuncOp func,
                                                                         int64_t alignment);

/// Plans the arena of `func`: liveness over kernel order, best-fit offsets
/// aligned to `alignment` bytes; writes `arena_offsets` on each kernel.
/// Fails (with a diagnostic) if an op is neither a kernel, constant, view
/// nor return, i.e. outlining did not run.
mlir::FailureOr<MemoryPlan> planMemory(mlir::func::FuncOp func, int64_t alignment);

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
