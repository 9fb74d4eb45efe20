//===- GemmEmitter.cpp - batched GEMM kernels -----------------------------===//
//
// `kiln.matmul` -> one launch of the tiled fp32 GEMM in cuda/gemm.cuh.
// blockIdx.z enumerates the broadcast batch. Operands are read through
// loader lambdas that evaluate fused producers per element (prologue:
// transposes, slices, scaling), and fused elementwise consumers are applied
// to each accumulator in the epilogue (bias, activation, residual) before the
// single store. A broadcast operand, such as a weight shared by every batch,
// reads index 0 along broadcast dims.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/KernelEmitter.h"
#include "passes/Passes.h"

#include "llvm/Support/FormatVariadic.h"

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

FailureOr<GeneratedKernel> emitMatMul(KernelOp kernel, Operation *anchor) {
  auto mm = cast<MatMulOp>(anchor);
  auto a = cast<RankedTensorType>(mm.getLhs().getType());
  auto b = cast<RankedTensorType>(mm.getRhs().getType());
  auto c = mm.getType();
  if (!c.getElementType().isF32())
    return kernel.emitError() << "unsupported: matmul on " << c.getElementType()
                              << " (the first GEMM is fp32 only)";
  if (kernel.getYield().getNumOperands() != 1)
    return kernel.emitError() << "unsupported: GEMM kernel @" << kernel.getSymName()
                              << " with " << kernel.getYield().getNumOperands() << " results";
  Value root = kernel.getYield().getValues()[0];
  if (cast<RankedTensorType>(root.getType()).getNumElements() != c.getNumElements())
    return kernel.emitError() << "unsupported: GEMM epilogue changes the element count in "
                                 "kernel @"
                              << kernel.getSymName();

  // The tile comes from kiln-select-tiles.
  auto tileAttr = kernel->getAttrOfType<DenseI64ArrayAttr>(kGemmTileAttrName);
  if (!tileAttr || tileAttr.size() != 6)
    return kernel.emitError() << "GEMM kernel @" << kernel.getSymName() << " has no valid '"
                              << kGemmTileAttrName << "' (run kiln-select-tiles)";
  int64_t kBM = tileAttr[0], kBN = tileAttr[1], kBK = tileAttr[2], kTM = tileAttr[3],
          kTN = tileAttr[4], kKS = tileAttr[5];
  if (kBM % kTM || kBN % kTN || kKS < 1 || kBK % kKS || (kBM / kTM) * (kBN / kTN) * kKS > 1024)
    return kernel.emitError() << "invalid GEMM tile in kernel @" << kernel.getSymName();
  unsigned kThreads = unsigned((kBM / kTM) * (kBN / kTN) * kKS);

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([](unsigned) { return true; });
  auto sig = buildSignature(kernel, passed, out.args, kThreads);
  if (failed(sig))
    return failure();
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

  // Batch coordinates of this block, shared by the loaders and the epilogue.
  expr.beginBody("  ");
  ExprEmitter::Coords batchCoords = expr.delinearize("bz", batch, "b");
  std::string prologue = expr.getBody();

  // Loaders: each operand element at (batch, row, col), through any fused
  // producers (a plain load when the operand is a kernel argument).
  auto loader = [&](Value operand, RankedTensorType type, const char *row,
                    const char *col) -> FailureOr<std::string> {
    expr.beginBody("    ");
    auto v = expr.emitValue(operand, operandCoords(batchCoords, type.getShape(),
                                                   std::string("(long long)") + row,
                                                   std::string("(long long)") + col));
    if (failed(v))
      return failure();
    return llvm::formatv("[&](int {0}, int {1}) -> float {{\n{2}    return {3};\n  }", row, col,
                         expr.getBody(), *v)
        .str();
  };
  auto loadA = loader(mm.getLhs(), a, "m", "k");
  auto loadB = loader(mm.getRhs(), b, "k", "n");
  if (failed(loadA) || failed(loadB))
    return failure();

  // Epilogue: the yielded value at the accumulator's linear index (fusion
  // guarantees the path from the matmul never broadcasts it), with the
  // matmul result replaced by the accumulator.
  expr.overrideValue(mm.getResult(), "acc");
  expr.beginBody("    ");
  expr.line(llvm::formatv("const long long e = bz * {0}LL + (long long)m * {1}LL + n;", M * N, N)
                .str());
  ExprEmitter::Coords coords =
      expr.delinearize("e", cast<RankedTensorType>(root.getType()).getShape(), "c");
  auto value = expr.emitValue(root, coords);
  if (failed(value))
    return failure();
  expr.line("out0[e] = " + *value + ";");

  out.source =
      "// " + llvm::formatv("[{0}x{1}] x [{1}x{2}], batch {3}\n", M, K, N, batchCount).str() +
      *sig + " {\n" + "  const long long bz = blockIdx.z;\n" + prologue +
      llvm::formatv("  kiln::gemmTileF32<{0}, {1}, {2}, {3}, {4}, {5}>({6}, {7}, {8},\n  {9},\n  "
                    "{10},\n  [&](int m, int n, float acc) {{\n{11}  });\n",
                    kBM, kBN, kBK, kTM, kTN, kKS, M, N, K, *loadA, *loadB, expr.getBody())
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
