//===- GemmEmitter.cpp - batched GEMM kernels -----------------------------===//
//
// `kiln.matmul` -> one launch of the tiled fp32 GEMM in cuda/gemm.cuh.
// blockIdx.z enumerates the broadcast batch. Operands are read through
// loader lambdas that evaluate fused producers per element (prologue:
// transposes, slices, scaling), and fused elementwise consumers are applied
// to each accumulator in the epilogue (bias, activation, residual) before the
// single store. A broadcast operand, such as a weight shared by every batch,
// reads index 0 along broadcast dims. The tile is kiln-select-tiles' typed
// attribute (`#kiln.gemm_tile`, `#kiln.mma_tile`, `#kiln.wgmma_tile`, whose
// verifiers hold the templates' rules); shared-memory sizes come from
// cuda/smem_sizes.h, the header the templates use.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/GemmEpilogue.h"
#include "compiler/codegen/GemmSm90Emitter.h"
#include "compiler/codegen/KernelEmitter.h"
#include "compiler/codegen/StridedView.h"
#include "compiler/codegen/cuda/smem_sizes.h"
#include "dialects/kiln/KernelPlan.h"
#include "dialects/kiln/KilnTarget.h"

#include "llvm/Support/FormatVariadic.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

/// Coordinates of a GEMM operand of `shape` ([..., rows, cols]) whose batch
/// dims broadcast into the output batch `batchCoords`, at (row, col).
ExprEmitter::Coords operandCoords(ArrayRef<std::string> batchCoords, ArrayRef<int64_t> shape,
                                  const std::string &row, const std::string &col) {
  ExprEmitter::Coords coords = broadcastCoords(batchCoords, shape.drop_back(2));
  coords.push_back(row);
  coords.push_back(col);
  return coords;
}

/// A loader lambda `[&](int first, int second) -> float` evaluating `operand`
/// (of `type`, [..., rows, cols], its batch broadcast into `batchCoords`)
/// through any fused producers. Its arguments are the operand's (row, col)
/// coordinates, or (col, row) with `swap` (the tensor-core B loader is called
/// as (n, k) for a [k, n] operand).
FailureOr<std::string> operandLoader(ExprEmitter &expr, ArrayRef<std::string> batchCoords,
                                     Value operand, RankedTensorType type, const char *first,
                                     const char *second, bool swap) {
  expr.beginBody("    ");
  std::string f = std::string("(long long)") + first, g = std::string("(long long)") + second;
  auto v = expr.emitValue(operand,
                          operandCoords(batchCoords, type.getShape(), swap ? g : f, swap ? f : g));
  if (failed(v))
    return failure();
  return llvm::formatv("[&](int {0}, int {1}) -> float {{\n{2}    return {3};\n  }", first, second,
                       expr.getBody(), *v)
      .str();
}

/// The CUDA initializer of one tensor-core GEMM operand `name` ("opA" or
/// "opB"): a StridedOperand read with 16-byte cp.async when `operand` is a
/// suitably aligned strided view of a parameter of the MMA type, else an
/// FnOperand evaluating the fused producers per element through `loader`
/// (a lambda `(int row, int k) -> float`). `rowDim`/`kDim` index the
/// operand's view dims that run along the tile rows (M for A, N for B) and
/// along K. Multiplies `scale` by the view's scalar factor.
std::string tcOperand(KernelOp kernel, ExprEmitter &expr, Value operand, StringRef mmaType,
                      ArrayRef<std::string> batchCoords, int64_t rowDim, int64_t kDim, int64_t rows,
                      int64_t kExtent, StringRef name, const std::string &loader, double &scale) {
  auto fallback = [&] {
    return llvm::formatv("  auto {0}Fn = {1};\n  const kiln::FnOperand<{2}, decltype({0}Fn)> "
                         "{0}{{{0}Fn, {3}};\n",
                         name, loader, mmaType, rows)
        .str();
  };
  FailureOr<StridedView> view = analyzeStridedView(kernel, operand);
  if (failed(view))
    return fallback();
  auto paramType = cast<RankedTensorType>(view->param.getType()).getElementType();
  auto storage = cudaStorageType(paramType);
  if (failed(storage) || *storage != mmaType)
    return fallback();
  int64_t rank = view->shape.size();
  FailureOr<GemmOperandLayout> layout = gemmOperandLayout(*view, rowDim, kDim, rows, kExtent);
  if (failed(layout))
    return fallback();
  const bool kMajor = layout->kMajor;
  const int64_t ld = layout->ld;
  // 16-byte copies: 8 elements of 2 bytes (4 of fp32). Every address a copy
  // starts at must be 16-byte aligned (buffers are 256-byte aligned).
  const int64_t vec = 16 / getElementByteSize(paramType);
  int64_t contiguous = kMajor ? kExtent : rows;
  bool aligned = ld % vec == 0 && view->offset % vec == 0 && contiguous % vec == 0;
  std::string offset = view->offset ? std::to_string(view->offset) + "LL" : "";
  ExprEmitter::Coords opBatch =
      broadcastCoords(batchCoords, ArrayRef<int64_t>(view->shape).drop_back(2));
  for (int64_t d = 0; d + 2 < rank; ++d) {
    int64_t stride = view->strides[d];
    if (stride == 0 || opBatch[d] == "0")
      continue;
    aligned &= stride % vec == 0;
    offset += (offset.empty() ? "" : " + ") + opBatch[d] + " * " + std::to_string(stride) + "LL";
  }
  if (!aligned)
    return fallback();
  std::string param = "in" + std::to_string(view->param.getArgNumber());
  scale *= view->scale;
  return llvm::formatv("  const kiln::StridedOperand<{0}, {1}> {2}{{{3}{4}, {5}LL, {6}};\n",
                       mmaType, kMajor ? "true" : "false", name, param,
                       offset.empty() ? "" : " + (" + offset + ")", ld, rows)
      .str();
}

/// `kiln.matmul` on 16-bit operands -> kiln::gemmTileTC (cuda/gemm_tc.cuh):
/// mma.sync tensor cores, cp.async pipeline, fp32 accumulation; the same
/// epilogue fusion as the SIMT GEMM.
///
/// With a `kiln.wgmma_tile` the kernel calls kiln::gemmTileWgmma
/// (cuda/gemm_wgmma.cuh) when compiled for sm_90a and an mma.sync tile of the
/// same block shape and thread count on every other target.
FailureOr<GeneratedKernel> emitMatMulTC(KernelOp kernel, MatMulOp mm) {
  auto a = cast<RankedTensorType>(mm.getLhs().getType());
  auto b = cast<RankedTensorType>(mm.getRhs().getType());
  auto c = mm.getType();
  int64_t bm, bn, bk, wm, wn, stages;
  auto wgmma = kernel->getAttrOfType<WgmmaTileAttr>(kWgmmaTileAttrName);
  if (wgmma) {
    // The mma.sync path for other targets: same block shape and threads, BK 32.
    bm = wgmma.getBm(), bn = wgmma.getBn(), bk = 32, wm = 2, wn = 2 * wgmma.getWarpgroups(),
    stages = 3;
  } else {
    auto tile = kernel->getAttrOfType<MmaTileAttr>(kMmaTileAttrName);
    bm = tile.getBm(), bn = tile.getBn(), bk = tile.getBk(), wm = tile.getWm(), wn = tile.getWn(),
    stages = tile.getStages();
  }
  Type et = a.getElementType();
  // f32 operands reach here only with --precision tf32 (kiln-select-tiles).
  if (et != b.getElementType() || !(isNarrowFloat(et) || et.isF32()))
    return kernel.emitError() << "unsupported: tensor-core GEMM on " << a.getElementType() << " x "
                              << b.getElementType() << " in kernel @" << kernel.getSymName();
  std::string mmaType = *cudaStorageType(et);
  unsigned threads = unsigned(32 * wm * wn);

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([](unsigned) { return true; });
  auto sig = buildSignature(kernel, passed, out.args, threads);
  if (failed(sig))
    return failure();
  int64_t M = a.getShape()[a.getRank() - 2], K = a.getShape().back(), N = b.getShape().back();
  ArrayRef<int64_t> batch = c.getShape().drop_back(2);
  int64_t batchCount = c.getNumElements() / (M * N);
  if (M / bm >= 65535)
    return kernel.emitError() << "unsupported: GEMM M=" << M << " needs more than 65535 row tiles "
                              << "of " << bm << " (the CUDA grid's y limit); use a smaller --shape";
  Value root = kernel.getYield().getValues()[0];

  expr.beginBody("  ");
  ExprEmitter::Coords batchCoords = expr.delinearize("bz", batch, "b");
  std::string prologue = expr.getBody();

  // Operands: strided views read by cp.async, else per-element loaders.
  auto loadA = operandLoader(expr, batchCoords, mm.getLhs(), a, "m", "k", /*swap=*/false);
  auto loadB = operandLoader(expr, batchCoords, mm.getRhs(), b, "n", "k", /*swap=*/true);
  if (failed(loadA) || failed(loadB))
    return failure();
  double scale = 1.0;
  std::string opA = tcOperand(kernel, expr, mm.getLhs(), mmaType, batchCoords, a.getRank() - 2,
                              a.getRank() - 1, M, K, "opA", *loadA, scale);
  std::string opB = tcOperand(kernel, expr, mm.getRhs(), mmaType, batchCoords, b.getRank() - 1,
                              b.getRank() - 2, N, K, "opB", *loadB, scale);

  // Epilogue, as in the SIMT GEMM; a scalar factor taken off an operand view
  // scales the accumulator instead.
  std::string acc = "acc";
  std::string scaleLiteral =
      scale == 1.0 ? "" : cudaLiteral(Float32Type::get(kernel.getContext()), scale, 0);
  if (scale != 1.0)
    acc = "(acc * " + scaleLiteral + ")";
  std::optional<GluHalves> pair = getGluHalves(mm);
  std::string epilogueDecl;
  if (pair) {
    expr.beginBody("    ");
    auto body = pairEpilogueBody(expr, mm, *pair, root, batchCoords, scaleLiteral, M, N,
                                 GemmEpilogueEnd::Store);
    if (failed(body))
      return failure();
    epilogueDecl = "  auto epilogue = kiln::makePairEpilogue([&](int m, int n, float acc0, float "
                   "acc1) {\n" +
                   *body + "  });\n";
    wgmma = {}; // the wgmma template has no pair epilogue: mma.sync
  } else {
    expr.beginBody("    ");
    auto body = epilogueBody(expr, mm, root, acc, M, N, GemmEpilogueEnd::Store);
    if (failed(body))
      return failure();
    epilogueDecl = "  auto epilogue = [&](int m, int n, float acc) {\n" + *body + "  };\n";
  }

  std::string mmaCall =
      llvm::formatv("  kiln::gemmTileTC<{0}, {1}, {2}, {3}, {4}, {5}, {6}>({7}, {8}, {9}, "
                    "blockIdx.y, blockIdx.x, opA, opB, epilogue, kiln_smem);\n",
                    mmaType, bm, bn, bk, wm, wn, stages, M, N, K)
          .str();
  std::string call = mmaCall;
  if (wgmma)
    call = "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n" +
           llvm::formatv("  kiln::gemmTileWgmma<{0}, {1}, {2}, {3}, {4}, {5}>({6}, {7}, {8}, "
                         "blockIdx.y, blockIdx.x, opA, opB, epilogue, kiln_smem);\n",
                         mmaType, wgmma.getBm(), wgmma.getBn(), wgmma.getBk(),
                         wgmma.getWarpgroups(), wgmma.getStages(), M, N, K)
               .str() +
           "#else\n" + mmaCall + "#endif\n";
  out.source = "// " +
               llvm::formatv("[{0}x{1}] x [{1}x{2}], batch {3}, tensor cores ({4})\n", M, K, N,
                             batchCount, wgmma ? "wgmma on sm_90a, else mma.sync" : "mma.sync")
                   .str() +
               *sig + " {\n  extern __shared__ __align__(128) char kiln_smem[];\n" +
               "  const long long bz = blockIdx.z;\n" + prologue + opA + opB + epilogueDecl + call +
               "}\n";
  out.block = {threads, 1, 1};
  out.grid = {unsigned((N + bn - 1) / bn), unsigned((M + bm - 1) / bm), unsigned(batchCount)};
  // The sizes of both paths a wgmma kernel holds: the templates' own.
  int64_t elemBytes = getElementByteSize(et);
  int64_t smem = smem_bytes::gemmTc(elemBytes, bm, bn, bk, stages);
  if (wgmma)
    smem = std::max<int64_t>(smem, smem_bytes::gemmWgmma(elemBytes, wgmma.getBm(), wgmma.getBn(),
                                                         wgmma.getBk(), wgmma.getStages()));
  out.sharedMemBytes = unsigned(smem);
  return out;
}

/// The error for a kernel with a folded norm (kiln.row_stats) that cannot run on the Hopper
/// GEMM, the only one that computes row statistics; `why` says what is missing.
LogicalResult rowStatsNeedHopperGemm(KernelOp kernel, const char *why) {
  return kernel.emitError() << "unsupported: kernel @" << kernel.getSymName()
                            << " holds kiln.row_stats (a norm folded into its GEMM), but " << why
                            << ", and only the Hopper GEMM computes row statistics";
}

/// `kiln.matmul` of at most 16 rows in all with a `#kiln.skinny_gemm_tile` -> one launch of
/// kiln::gemmSkinny (cuda/gemm_skinny.cuh): R = batch x M rows (the batch folds into the rows, as
/// the weight is shared by it), 64 columns per block of 256 threads, split_k blocks per cluster.
/// A is read through a per-element loader (any fused producer); B must be a row-major view of a
/// 16-bit parameter of the operand type, shared by every batch, with 8-byte aligned rows and
/// N % 4 == 0. With the tile's tensor_cores, the inner product runs on the tensor cores when
/// B's rows are also 16-byte aligned (the view's row stride and offset multiples of 8 elements:
/// cp.async copies aligned 16-byte chunks), on the CUDA cores otherwise (the source says why).
/// Returns std::nullopt, without a diagnostic, when B is not such a view (the caller then uses
/// the kernel's other tiles); failure (with a diagnostic) for errors.
FailureOr<std::optional<GeneratedKernel>> emitMatMulSkinny(KernelOp kernel, MatMulOp mm,
                                                           SkinnyGemmTileAttr tile) {
  auto a = cast<RankedTensorType>(mm.getLhs().getType());
  auto b = cast<RankedTensorType>(mm.getRhs().getType());
  auto c = mm.getType();
  Type et = a.getElementType();
  if (et != b.getElementType() || !isNarrowFloat(et))
    return std::optional<GeneratedKernel>();
  const int64_t M = a.getShape()[a.getRank() - 2], K = a.getShape().back(), N = b.getShape().back();
  ArrayRef<int64_t> batch = c.getShape().drop_back(2);
  int64_t batchCount = 1;
  for (int64_t d : batch)
    batchCount *= d;
  const int64_t rows = tile.getRows(), splitK = tile.getSplitK();
  // An RMS norm in the A loader (kiln-fuse-norm-into-gemm few-row): its row statistics are of
  // x, the lhs is x * scale. The Hopper form (statistics of the lhs) is not this kernel's.
  RowStatsOp rowStats = getRowStats(kernel);
  if (rowStats && (rowStats.getInput() == mm.getLhs() || !rowStats.getRms()))
    return std::optional<GeneratedKernel>();
  // Without row statistics another tile takes a GEMM this kernel cannot; with them none can.
  auto decline = [&](const char *why) -> FailureOr<std::optional<GeneratedKernel>> {
    if (!rowStats)
      return std::optional<GeneratedKernel>();
    return kernel.emitError() << "unsupported: kernel @" << kernel.getSymName()
                              << " has an RMS norm folded into its A loader, which only the "
                                 "few-row GEMM computes, but "
                              << why;
  };
  if (batchCount * M != rows || N % 4 || K < 1)
    return decline("its rows or N do not fit the few-row tile");
  std::optional<GluHalves> pair = getGluHalves(mm);

  // B: a row-major (N contiguous) view of a parameter of the operand type, every batch dim
  // broadcast, 8-byte aligned rows (4 elements of 2 bytes).
  FailureOr<StridedView> view = analyzeStridedView(kernel, mm.getRhs());
  if (failed(view) ||
      cast<RankedTensorType>(view->param.getType()).getElementType() != et)
    return decline("its weight is not a view of a parameter of the operand type");
  const int64_t rank = int64_t(view->shape.size());
  FailureOr<GemmOperandLayout> layout = gemmOperandLayout(*view, rank - 1, rank - 2, N, K);
  if (failed(layout) || layout->kMajor)
    return decline("its weight is not row-major");
  int64_t ld = layout->ld;
  if (K == 1)
    ld = N; // a single row: the stride is never stepped over
  if (ld % 4 || view->offset % 4)
    return decline("its weight's rows are not 8-byte aligned");
  // The tensor cores as planned, when cp.async can copy B's rows in aligned 16-byte chunks.
  const bool tc = tile.getTensorCores() && ld % 8 == 0 && view->offset % 8 == 0;
  // The tensor-core path's A chunk (0: its default) and the blocks per SM the plan counted on.
  const int64_t aChunk = tc ? tile.getAChunk() : 0;
  const char *tcNote = !tile.getTensorCores() ? ""
                       : tc                    ? ", tensor cores"
                                               : ", CUDA cores (tensor cores planned, but the "
                                                 "weight's rows are not 16-byte aligned)";
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (view->shape[d] != 1 && view->strides[d] != 0)
      return decline("its weight is not shared by the batch");

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([](unsigned) { return true; });
  if (!llvm::is_contained(passed, view->param.getArgNumber()))
    return decline("its weight is a literal"); // inlined as a literal: no pointer to stream
  constexpr unsigned kThreads = 256;
  auto sig = buildSignature(kernel, passed, out.args, kThreads);
  if (failed(sig))
    return failure();
  Value root = kernel.getYield().getValues()[0];
  const std::string rowSplit =
      llvm::formatv("    const long long bz = skinnyRow / {0};\n    const int m = int(skinnyRow % {0});\n",
                    M)
          .str();

  // A: row r of the R rows is row m of batch bz.
  expr.beginBody("    ");
  ExprEmitter::Coords aBatch = expr.delinearize("bz", batch, "b");
  FailureOr<std::string> aValue =
      expr.emitValue(mm.getLhs(), operandCoords(aBatch, a.getShape(), "(long long)m",
                                                "(long long)k"));
  if (failed(aValue))
    return failure();
  std::string loaderDecl = "  auto loadA = [&](int skinnyRow, int k) -> float {\n" + rowSplit +
                           expr.getBody() + "    return " + *aValue + ";\n  };\n";
  // The folded RMS norm: x per element for the sums of squares (the same coordinates as A), and
  // the rows' rstd, which gemmSkinnyRms leaves in shared memory, for the epilogue.
  if (rowStats) {
    expr.beginBody("    ");
    ExprEmitter::Coords xBatch = expr.delinearize("bz", batch, "b");
    FailureOr<std::string> xValue =
        expr.emitValue(rowStats.getInput(), operandCoords(xBatch, a.getShape(), "(long long)m",
                                                          "(long long)k"));
    if (failed(xValue))
      return failure();
    loaderDecl += llvm::formatv("  const float *kiln_row_rstd = kiln::skinny::rowRstd<{0}{1}>("
                                "kiln_smem);\n",
                                rows,
                                tc ? (aChunk ? ", true, " + std::to_string(aChunk) : ", true")
                                   : "")
                      .str() +
                  "  auto loadX = [&](int skinnyRow, int k) -> float {\n" + rowSplit +
                  expr.getBody() + "    return " + *xValue + ";\n  };\n";
    expr.overrideValue(rowStats.getRstd(), "kiln_row_rstd[skinnyRow]");
  }

  // Epilogue: stores the kernel's root at (bz, m, n); a scalar factor of B's view scales the
  // accumulator.
  expr.beginBody("    ");
  FailureOr<std::string> body = batchedEpilogueBody(expr, mm, pair, root, batch, view->scale, M,
                                                    N, GemmEpilogueEnd::Store);
  if (failed(body))
    return failure();
  std::string epilogueDecl =
      pair ? "  auto epilogue = kiln::makePairEpilogue([&](int skinnyRow, int n, float acc0, "
             "float acc1) "
             "{\n" + rowSplit + *body + "  });\n"
           : "  auto epilogue = [&](int skinnyRow, int n, float acc) {\n" + rowSplit + *body + "  };\n";

  std::string signature = *sig;
  if (splitK > 1)
    addClusterDims(signature, kThreads, std::to_string(splitK) + ", 1, 1");
  const std::string param = "in" + std::to_string(view->param.getArgNumber());
  const std::string bPtr =
      view->offset ? param + " + " + std::to_string(view->offset) + "LL" : param;
  const std::string mmaType = *cudaStorageType(et);
  const int64_t blocks = (N + 63) / 64 * splitK;
  // Before the grid-dependency wait, two things only a constant weight allows (no kernel of the
  // program writes it): with `preload`, the first stages of each block's share of B into the
  // tensor-core rings (gemmSkinnyTcPreloadB: 8 warps x (stages - 1) x 16 K rows); then, with
  // the tile's `l2_prefetch`, warm L2 with the next rows of the share (gemmSkinnyPrefetchB; a
  // prefetch moves nothing into registers, so it is safe for any B), the whole grid within half
  // of the target's L2.
  const bool preload = tc && tile.getPreload() &&
                       matchPattern(kernel.getInputs()[view->param.getArgNumber()], m_Constant());
  constexpr int64_t kLineBytes = 128, kSkinnyRowGroups = 16;
  const int64_t kPer =
      ((K + splitK - 1) / splitK + kSkinnyRowGroups - 1) / kSkinnyRowGroups * kSkinnyRowGroups;
  const int64_t preloadRows = preload ? 8 * (smem_bytes::kSkinnyTcStages - 1) * 16 : 0;
  const int64_t l2Bytes = getTargetOrDefault(kernel).getL2Bytes();
  const int64_t prefetchRows =
      tile.getL2Prefetch()
          ? std::min<int64_t>(
                {kPer - preloadRows, l2Bytes / 2 / (blocks * kLineBytes), 8 * int64_t(kThreads)})
          : 0;
  // The plan leaves one block slot per SM for the next kernel (3 blocks fit by shared memory
  // and by 80 registers per thread): pin the registers so that a heavier epilogue cannot take
  // the slot away (ptxas caps them at 65536 / (3 x 256), 80 after its granularity).
  if (preload)
    setMinBlocksPerSm(signature, kThreads, 3);
  else if (tc && tile.getMinBlocksPerSm() > 1)
    setMinBlocksPerSm(signature, kThreads, unsigned(tile.getMinBlocksPerSm()));
  std::string prefetch;
  if (preload)
    prefetch = llvm::formatv("  kiln::gemmSkinnyTcPreloadB<{0}, {1}>({2}, {3}, {4}, {5}LL, "
                             "kiln_smem);\n",
                             mmaType, splitK, N, K, bPtr, ld)
                   .str();
  if (prefetchRows > 0) {
    const bool aligned = (ld * 2) % kLineBytes == 0 && (view->offset * 2) % kLineBytes == 0;
    prefetch += llvm::formatv("  kiln::gemmSkinnyPrefetchB<{0}, {1}, {2}, {3}>({4}, {5}, {6}, "
                              "{7}LL, {8}{9});\n",
                              mmaType, splitK, (prefetchRows + kThreads - 1) / kThreads,
                              aligned ? "true" : "false", N, K, bPtr, ld, prefetchRows,
                              preloadRows ? ", " + std::to_string(preloadRows) : "")
                    .str();
  }
  // Before the wait, also the next decode GEMM's weight into L2 (kiln-plan-weight-prefetch).
  std::string nextWeightNote;
  if (auto next = kernel->getAttrOfType<L2PrefetchAttr>(kL2PrefetchAttrName);
      next && preload && llvm::is_contained(passed, unsigned(next.getOperand()))) {
    const int64_t threads = blocks * kThreads;
    const int64_t piece = ((next.getBytes() + threads - 1) / threads + 15) / 16 * 16;
    prefetch += llvm::formatv("  kiln::l2PrefetchShare<{0}, {1}LL>(in{2}, {3}LL);\n", kThreads,
                              piece, next.getOperand(), next.getBytes())
                    .str();
    nextWeightNote = llvm::formatv(", {0} bytes of the next weight into L2", next.getBytes());
  }
  const std::string tcArgs = std::string(preload ? ", true, true" : tc ? ", true" : "") +
                             (aChunk ? (preload ? ", " : ", false, ") + std::to_string(aChunk)
                                     : std::string());
  out.source =
      "// " +
      llvm::formatv("[{0}x{1}] x [{1}x{2}], batch {3}: {4} rows, few-row GEMM "
                    "(gemm_skinny.cuh), split-K {5}{6}{7}{8}{9}\n",
                    M, K, N, batchCount, rows, splitK, rowStats ? ", RMS norm in the A loader" : "",
                    tcNote,
                    preload ? ", weight preloaded before the wait" +
                                  (aChunk ? llvm::formatv(", A in chunks of {0} K rows", aChunk)
                                                .str()
                                          : std::string())
                            : std::string(),
                    tc && tile.getMinBlocksPerSm() > 1 && !preload
                        ? llvm::formatv(", A in chunks of {0} K rows, {1} blocks per SM",
                                        smem_bytes::skinnyTcChunk(rows, aChunk),
                                        tile.getMinBlocksPerSm())
                              .str()
                        : std::string())
          .str() +
      (nextWeightNote.empty() ? "" : "// " + nextWeightNote.substr(2) + "\n") +
      signature + " {\n  extern __shared__ __align__(16) char kiln_smem[];\n" + prefetch + "  " +
      kGridDependencyPlaceholder + "\n" + loaderDecl + epilogueDecl +
      (rowStats
           ? llvm::formatv("  kiln::gemmSkinnyRms<{0}, {1}, {2}{8}>({3}, {4}, loadA, loadX, {7}, "
                           "{5}, {6}LL, epilogue, kiln_smem);\n",
                           mmaType, rows, splitK, N, K, bPtr, ld,
                           cudaLiteral(Float32Type::get(kernel.getContext()),
                                       rowStats.getEpsilon().convertToDouble(), 0),
                           tcArgs)
                 .str()
           : llvm::formatv("  kiln::gemmSkinny<{0}, {1}, {2}{7}>({3}, {4}, loadA, {5}, {6}LL, "
                           "epilogue, kiln_smem);\n",
                           mmaType, rows, splitK, N, K, bPtr, ld, tcArgs)
                 .str()) +
      "}\n";
  if (blocks > INT32_MAX)
    return kernel.emitError() << "unsupported: few-row GEMM of N=" << N
                              << " exceeds the CUDA grid's x limit";
  out.grid = {unsigned(blocks), 1, 1};
  out.block = {kThreads, 1, 1};
  out.sharedMemBytes = unsigned(tc ? smem_bytes::gemmSkinnyTc(rows, bool(rowStats), aChunk)
                                   : smem_bytes::gemmSkinny(rows, bool(rowStats)));
  return std::optional<GeneratedKernel>(std::move(out));
}

FailureOr<GeneratedKernel> emitMatMul(KernelOp kernel, Operation *anchor) {
  auto mm = cast<MatMulOp>(anchor);
  auto a = cast<RankedTensorType>(mm.getLhs().getType());
  auto b = cast<RankedTensorType>(mm.getRhs().getType());
  auto c = mm.getType();
  if (!isa<FloatType>(c.getElementType()))
    return kernel.emitError() << "unsupported: matmul on " << c.getElementType();
  if (kernel.getYield().getNumOperands() != 1)
    return kernel.emitError() << "unsupported: GEMM kernel @" << kernel.getSymName() << " with "
                              << kernel.getYield().getNumOperands() << " results";
  Value root = kernel.getYield().getValues()[0];
  bool pair = getGluHalves(mm).has_value();
  bool tensorCores = kernel->hasAttr(kMmaTileAttrName) || kernel->hasAttr(kWgmmaTileAttrName);
  if (pair && !tensorCores)
    return kernel.emitError() << "unsupported: gated-unit pair epilogue without a tensor-core tile "
                                 "in kernel @"
                              << kernel.getSymName();
  if (cast<RankedTensorType>(root.getType()).getNumElements() * (pair ? 2 : 1) !=
      c.getNumElements())
    return kernel.emitError() << "unsupported: GEMM epilogue changes the element count in "
                                 "kernel @"
                              << kernel.getSymName();

  int64_t M = a.getShape()[a.getRank() - 2], K = a.getShape().back(), N = b.getShape().back();
  ArrayRef<int64_t> batch = c.getShape().drop_back(2);
  int64_t batchCount = 1;
  for (int64_t d : batch)
    batchCount *= d;
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
    return kernel.emitError() << "unsupported: GEMM extents M=" << M << " N=" << N << " K=" << K
                              << " exceed 2^31 - 1 (32-bit tile indexing)";
  if (batchCount > 65535)
    return kernel.emitError() << "unsupported: GEMM batch count " << batchCount << " (M=" << M
                              << " N=" << N << " K=" << K
                              << ") exceeds 65535, the CUDA grid's z limit (one block row per "
                              << "batch); use a smaller --shape";

  // A decode step's GEMM: the few-row kernel when the weight is a row-major parameter.
  if (auto skinny = kernel->getAttrOfType<SkinnyGemmTileAttr>(kSkinnyGemmTileAttrName)) {
    FailureOr<std::optional<GeneratedKernel>> generated = emitMatMulSkinny(kernel, mm, skinny);
    if (failed(generated))
      return failure();
    if (*generated)
      return std::move(**generated);
  }
  // Tensor cores when kiln-select-tiles chose an MMA or wgmma tile (16-bit operands, or TF32).
  // The Hopper TMA GEMM when kiln-select-tiles chose it and TMA can read both
  // operands; the kernel's mma.sync tile otherwise.
  if (auto sm90 = kernel->getAttrOfType<Sm90GemmTileAttr>(kSm90GemmTileAttrName)) {
    FailureOr<std::optional<GeneratedKernel>> generated = emitMatMulSm90(kernel, mm, sm90);
    if (failed(generated))
      return failure();
    if (*generated)
      return std::move(**generated);
    if (getRowStats(kernel))
      return rowStatsNeedHopperGemm(kernel, "TMA cannot read its operands");
    // Say in the source why the Hopper tile of the plan is not used.
    FailureOr<GeneratedKernel> mma = emitMatMulTC(kernel, mm);
    if (succeeded(mma))
      mma->source = "// the Hopper GEMM tile is not used: TMA cannot read an operand (not a "
                    "16-byte aligned strided view of a parameter of the MMA type), or the result "
                    "is not a float tensor\n" +
                    mma->source;
    return mma;
  }
  if (getRowStats(kernel))
    return rowStatsNeedHopperGemm(kernel, "it has no Hopper GEMM tile");
  if (tensorCores)
    return emitMatMulTC(kernel, mm);

  // The tile comes from kiln-select-tiles.
  auto tile = kernel->getAttrOfType<GemmTileAttr>(kGemmTileAttrName);
  if (!tile)
    return kernel.emitError() << "GEMM kernel @" << kernel.getSymName() << " has no '"
                              << kGemmTileAttrName << "' (run kiln-select-tiles)";
  int64_t kBM = tile.getBm(), kBN = tile.getBn(), kBK = tile.getBk(), kTM = tile.getTm(),
          kTN = tile.getTn(), kKS = tile.getKs();
  unsigned kThreads = unsigned(tile.getThreads());

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([](unsigned) { return true; });
  auto sig = buildSignature(kernel, passed, out.args, kThreads);
  if (failed(sig))
    return failure();

  // Batch coordinates of this block, shared by the loaders and the epilogue.
  expr.beginBody("  ");
  ExprEmitter::Coords batchCoords = expr.delinearize("bz", batch, "b");
  std::string prologue = expr.getBody();

  // Loaders: each operand element at (batch, row, col), through any fused
  // producers (a plain load when the operand is a kernel argument).
  auto loadA = operandLoader(expr, batchCoords, mm.getLhs(), a, "m", "k", /*swap=*/false);
  auto loadB = operandLoader(expr, batchCoords, mm.getRhs(), b, "k", "n", /*swap=*/false);
  if (failed(loadA) || failed(loadB))
    return failure();

  expr.beginBody("    ");
  auto epilogue = epilogueBody(expr, mm, root, "acc", M, N, GemmEpilogueEnd::Store);
  if (failed(epilogue))
    return failure();

  out.source =
      "// " + llvm::formatv("[{0}x{1}] x [{1}x{2}], batch {3}\n", M, K, N, batchCount).str() +
      *sig + " {\n" + "  const long long bz = blockIdx.z;\n" + prologue +
      llvm::formatv("  kiln::gemmTileF32<{0}, {1}, {2}, {3}, {4}, {5}>({6}, {7}, {8},\n  {9},\n  "
                    "{10},\n  [&](int m, int n, float acc) {{\n{11}  });\n",
                    kBM, kBN, kBK, kTM, kTN, kKS, M, N, K, *loadA, *loadB, *epilogue)
          .str() +
      "}\n";
  out.block = {kThreads, 1, 1};
  out.grid = {unsigned((N + kBN - 1) / kBN), unsigned((M + kBM - 1) / kBM), unsigned(batchCount)};
  return out;
}

} // namespace

void kiln::codegen::populateGemmEmitters(EmitterRegistry &registry) {
  registry.addAnchor<MatMulOp>(emitMatMul, /*acceptsFusedOps=*/true);
}
