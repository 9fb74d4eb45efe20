//===- GemmSm90Emitter.cpp - Hopper TMA GEMM kernels ----------------------===//
//
// `kiln.matmul` with a `#kiln.sm90_gemm_tile` -> one launch of
// kiln::gemmSm90 (cuda/gemm_sm90.cuh): operands loaded by TMA through two
// tensor maps (kernel parameters the runtime encodes, docs/artifact.md), a
// producer warpgroup and wgmma consumer warpgroups, persistent tiles or
// split-K over a cluster, the fused epilogue applied per element and stored
// with vector stores.
//
// The TMA reads an operand straight from a kernel parameter, so each operand
// must be a strided view of one (StridedView.h) whose element type is the MMA
// type, with 16-byte aligned start and row stride, unit stride along K
// (K-major) or along the rows (MN-major), and batch dims that are either all
// broadcast (one rank-2 map shared by every batch) or collapse into one
// uniform batch stride (a rank-3 map). Anything else returns std::nullopt and
// the caller uses the mma.sync tile kiln-select-tiles recorded beside it.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/GemmSm90Emitter.h"

#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/GemmEpilogue.h"
#include "compiler/codegen/StridedView.h"
#include "compiler/codegen/cuda/smem_sizes.h"
#include "dialects/kiln/KernelPlan.h"
#include "dialects/kiln/KilnTarget.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

/// How one GEMM operand reaches the tensor cores: its tensor map and layout.
struct TmaOperandPlan {
  bool kMajor = true;
  int rank = 2; ///< 2: shared by every batch; 3: indexed by the flat batch
  GeneratedKernel::TensorMapArg map;
};

/// Plans the tensor map of `operand` (A viewed as [batch..., rows, K] with
/// rows = M, or B viewed as [batch..., K, rows] with rows = N): `rowDim` /
/// `kDim` index the view's dims along the rows and along K; `boxRows` is the
/// K-major box height (BM or BN). `passed` lists the kernel
/// operands that are parameters (their order is the args order). Multiplies
/// `scale` by the view's scalar factor. std::nullopt when TMA cannot read it.
std::optional<TmaOperandPlan> planOperand(KernelOp kernel, Value operand, Type mmaType,
                                          ArrayRef<int64_t> outBatch, int64_t rowDim, int64_t kDim,
                                          int64_t rows, int64_t kExtent, int64_t boxRows,
                                          ArrayRef<unsigned> passed, double &scale) {
  FailureOr<StridedView> view = analyzeStridedView(kernel, operand);
  if (failed(view) || rows < 1 || kExtent < 1)
    return std::nullopt;
  auto paramType = cast<RankedTensorType>(view->param.getType()).getElementType();
  if (paramType != mmaType)
    return std::nullopt;
  const unsigned argNumber = view->param.getArgNumber();
  auto it = llvm::find(passed, argNumber);
  if (it == passed.end()) // inlined as a literal: nothing to map
    return std::nullopt;
  constexpr int64_t kElem = 2; // f16 / bf16
  const int64_t rank = int64_t(view->shape.size());
  FailureOr<GemmOperandLayout> layout = gemmOperandLayout(*view, rowDim, kDim, rows, kExtent);
  if (failed(layout))
    return std::nullopt;
  TmaOperandPlan plan;
  plan.kMajor = layout->kMajor;
  int64_t ld = layout->ld;
  const int64_t inner = plan.kMajor ? kExtent : rows, outer = plan.kMajor ? rows : kExtent;
  // A size-1 outer dim has stride 0 in the view; the map needs a positive
  // 16-byte multiple (never stepped over).
  if (outer == 1)
    ld = (inner + 7) / 8 * 8;
  if (ld <= 0 || (ld * kElem) % 16 || (view->offset * kElem) % 16)
    return std::nullopt;

  // Batch dims, right-aligned to the output batch (the operand may have fewer).
  const int64_t nb = int64_t(outBatch.size()), opBatch = rank - 2;
  SmallVector<int64_t> strides(nb, 0);
  for (int64_t d = 0; d < nb; ++d) {
    int64_t od = d - (nb - opBatch);
    if (od >= 0 && view->shape[od] != 1)
      strides[d] = view->strides[od];
  }
  // Flat batch stride S: every batch dim d of size > 1 steps by
  // S * prod(outBatch[d+1..]) so that the flat batch index addresses it, or
  // every one of them is broadcast (stride 0: one map for all batches).
  int64_t batchCount = 1;
  bool allBroadcast = true;
  for (int64_t d = 0; d < nb; ++d) {
    batchCount *= outBatch[d];
    allBroadcast &= outBatch[d] == 1 || strides[d] == 0;
  }
  int64_t flatStride = 0;
  if (!allBroadcast) {
    int64_t below = 1; // product of the batch dims right of d
    for (int64_t d = nb - 1; d >= 0; --d) {
      if (outBatch[d] == 1)
        continue;
      if (flatStride == 0)
        flatStride = strides[d];
      if (strides[d] == 0 || strides[d] != flatStride * below)
        return std::nullopt; // broadcast along some batch dims only, or not collapsible
      below *= outBatch[d];
    }
    if (flatStride <= 0 || (flatStride * kElem) % 16)
      return std::nullopt;
  }
  plan.rank = allBroadcast ? 2 : 3;
  plan.map.arg = unsigned(it - passed.begin());
  plan.map.offsetBytes = uint64_t(view->offset * kElem);
  plan.map.elementType = mmaType;
  plan.map.dims = {uint64_t(inner), uint64_t(outer)};
  plan.map.strides = {uint64_t(ld * kElem)};
  plan.map.box = {64u, uint32_t(plan.kMajor ? boxRows : 64)};
  if (plan.rank == 3) {
    plan.map.dims.push_back(uint64_t(batchCount));
    plan.map.strides.push_back(uint64_t(flatStride * kElem));
    plan.map.box.push_back(1u);
  }
  plan.map.swizzle = GeneratedKernel::TensorMapArg::Swizzle::B128;
  scale *= view->scale;
  return plan;
}

} // namespace

FailureOr<std::optional<GeneratedKernel>>
kiln::codegen::emitMatMulSm90(KernelOp kernel, MatMulOp mm, Sm90GemmTileAttr tile) {
  auto a = cast<RankedTensorType>(mm.getLhs().getType());
  auto b = cast<RankedTensorType>(mm.getRhs().getType());
  auto c = mm.getType();
  Type et = a.getElementType();
  if (et != b.getElementType() || !isNarrowFloat(et) || kernel.getResults().size() != 1)
    return std::optional<GeneratedKernel>();
  Value root = kernel.getYield().getValues()[0];
  auto rootType = cast<RankedTensorType>(root.getType());
  Type outType = rootType.getElementType();
  if (!(isNarrowFloat(outType) || outType.isF32()))
    return std::optional<GeneratedKernel>();
  const std::string mmaType = *cudaStorageType(et), outCuda = *cudaStorageType(outType);

  const int64_t M = a.getShape()[a.getRank() - 2], K = a.getShape().back(), N = b.getShape().back();
  ArrayRef<int64_t> batch = c.getShape().drop_back(2);
  int64_t batchCount = 1;
  for (int64_t d : batch)
    batchCount *= d;
  if (K < 1 || M < 1 || N < 1 || batchCount < 1)
    return std::optional<GeneratedKernel>();
  const int64_t bm = tile.getBm(), bn = tile.getBn(), consumers = tile.getConsumers(),
                stages = tile.getStages(), splitK = tile.getSplitK();
  const bool pingpong = tile.getPingpong();

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([](unsigned) { return true; });
  double scale = 1.0;
  auto planA = planOperand(kernel, mm.getLhs(), et, batch, a.getRank() - 2, a.getRank() - 1, M, K,
                           bm, passed, scale);
  auto planB = planOperand(kernel, mm.getRhs(), et, batch, b.getRank() - 1, b.getRank() - 2, N, K,
                           bn, passed, scale);
  if (!planA || !planB)
    return std::optional<GeneratedKernel>();
  // A norm folded into this GEMM: the template computes the statistics of A's rows; the
  // epilogue reads them as `rowMean` / `rowRstd` (every read is at the row being written:
  // kiln-fuse-norm-into-gemm broadcasts the [..., M, 1] results along the columns only).
  RowStatsOp rowStats = getRowStats(kernel);
  if (rowStats) {
    if (rowStats.getInput() != mm.getLhs() || !planA->kMajor || splitK != 1)
      return kernel.emitError() << "unsupported: kiln.row_stats in kernel @"
                                << kernel.getSymName()
                                << " must read the GEMM's K-major lhs, without split-K";
    expr.overrideValue(rowStats.getMean(), "rowMean");
    expr.overrideValue(rowStats.getRstd(), "rowRstd");
  }
  const std::string statsParams = rowStats ? ", float rowMean, float rowRstd" : "";
  std::optional<GluHalves> pair = getGluHalves(mm);
  if (pair && N % 2)
    return std::optional<GeneratedKernel>();

  const unsigned threads = unsigned(128 * (consumers + 1));
  auto sig = buildSignature(kernel, passed, out.args, threads);
  if (failed(sig))
    return failure();

  // Epilogue: a lambda of (flat batch, m, n, accumulator) returning the
  // kernel's root value at that element (kiln::gemmSm90 stores it); a pair
  // epilogue delinearizes its batch coordinates inside, since a persistent
  // block visits several batches.
  expr.beginBody("    ");
  FailureOr<std::string> body = batchedEpilogueBody(expr, mm, pair, root, batch, scale, M, N,
                                                    GemmEpilogueEnd::Return);
  if (failed(body))
    return failure();
  std::string epilogueDecl =
      pair ? "  auto epilogue = kiln::makePairEpilogue([&](long long bz, int m, int n, float acc0, "
             "float acc1" +
                 statsParams + ") -> float {\n" + *body + "  });\n"
           : "  auto epilogue = [&](long long bz, int m, int n, float acc" + statsParams +
                 ") -> float {\n" + *body + "  };\n";

  // Signature: __launch_bounds__(threads, 1) (setmaxnreg needs the register
  // cap of one block per SM), a cluster for split-K, the two tensor maps last.
  std::string signature = *sig;
  std::string bounds = "__launch_bounds__(" + std::to_string(threads) + ")";
  size_t pos = signature.find(bounds);
  assert(pos != std::string::npos && "buildSignature writes __launch_bounds__(threads)");
  std::string newBounds = "__launch_bounds__(" + std::to_string(threads) + ", 1)";
  if (splitK > 1)
    newBounds += " __cluster_dims__(" + std::to_string(splitK) + ", 1, 1)";
  signature.replace(pos, bounds.size(), newBounds);
  assert(!signature.empty() && signature.back() == ')');
  signature.pop_back();
  signature += ", const __grid_constant__ kiln::TensorMap tmap0, const __grid_constant__ "
               "kiln::TensorMap tmap1)";
  out.tensorMaps.push_back(planA->map);
  out.tensorMaps.push_back(planB->map);

  out.source =
      "// " +
      llvm::formatv("[{0}x{1}] x [{1}x{2}], batch {3}, Hopper TMA + wgmma (gemm_sm90.cuh)\n", M, K,
                    N, batchCount)
          .str() +
      signature + " {\n  extern __shared__ __align__(1024) char kiln_smem[];\n" +
      llvm::formatv("  const kiln::sm90::TmaOperand<{0}, {1}> opA{{&tmap0};\n"
                    "  const kiln::sm90::TmaOperand<{2}, {3}> opB{{&tmap1};\n",
                    planA->kMajor ? "true" : "false", planA->rank, planB->kMajor ? "true" : "false",
                    planB->rank)
          .str() +
      epilogueDecl +
      llvm::formatv("  kiln::gemmSm90<{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}{12}>({8}, {9}, {10}, "
                    "{11}, opA, opB, out0, epilogue, kiln_smem{13});\n",
                    mmaType, outCuda, bm, bn, consumers, stages, splitK,
                    pingpong ? "true" : "false", M, N, K, batchCount,
                    rowStats ? (rowStats.getRms() ? ", 2" : ", 1") : "",
                    rowStats ? ", " + cudaLiteral(Float32Type::get(kernel.getContext()),
                                                  rowStats.getEpsilon().convertToDouble(), 0)
                             : std::string())
          .str() +
      "}\n";

  // Launch: persistent (at most one block per SM) or every tile x split.
  const int64_t tiles = ((M + bm - 1) / bm) * ((N + bn - 1) / bn) * batchCount;
  const int64_t sms = getTargetOrDefault(kernel).getSmCount();
  const int64_t blocks = splitK > 1 ? tiles * splitK : std::min(tiles, sms);
  if (blocks > INT32_MAX)
    return kernel.emitError() << "unsupported: GEMM of " << tiles << " tiles of " << bm << "x" << bn
                              << " (M=" << M << " N=" << N << " batch " << batchCount
                              << ") exceeds the CUDA grid's x limit; use a smaller --shape";
  out.grid = {unsigned(blocks), 1, 1};
  out.block = {threads, 1, 1};
  out.sharedMemBytes =
      unsigned(smem_bytes::gemmSm90(bm, bn, stages, consumers, bool(rowStats)));
  return std::optional<GeneratedKernel>(std::move(out));
}
