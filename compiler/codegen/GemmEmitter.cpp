//===- GemmEmitter.cpp - batched GEMM kernels -----------------------------===//
//
// `kiln.matmul` -> one launch of the tiled fp32 GEMM in cuda/gemm.cuh, with
// any fused elementwise consumers applied to each accumulator in the
// epilogue (bias, activation, residual) before the single store.
// blockIdx.z enumerates the broadcast batch; the generated code turns it into
// the batch offsets of both operands (a broadcast operand, such as a weight
// shared by every batch, gets offset 0 along broadcast dims).
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


/// Element offset of batch `b` (a C expression over `bz`) for an operand of
/// `shape` whose batch dims broadcast into `batch`.
std::string batchOffset(ArrayRef<int64_t> shape, ArrayRef<int64_t> batch) {
  ArrayRef<int64_t> opBatch = shape.drop_back(2);
  int64_t matrix = shape[shape.size() - 2] * shape.back();
  std::string s = "0LL";
  int64_t divisor = 1, stride = matrix;
  size_t off = batch.size() - opBatch.size();
  for (int64_t d = batch.size() - 1; d >= 0; --d) {
    if (d >= (int64_t)off && opBatch[d - off] != 1) {
      s += llvm::formatv(" + ((bz / {0}LL) % {1}LL) * {2}LL", divisor, batch[d], stride).str();
      stride *= opBatch[d - off];
    }
    divisor *= batch[d];
  }
  return s;
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
  if (!tileAttr || tileAttr.size() != 5)
    return kernel.emitError() << "GEMM kernel @" << kernel.getSymName() << " has no valid '"
                              << kGemmTileAttrName << "' (run kiln-select-tiles)";
  int64_t kBM = tileAttr[0], kBN = tileAttr[1], kBK = tileAttr[2], kTM = tileAttr[3],
          kTN = tileAttr[4];
  if (kBM % kTM || kBN % kTN || (kBM / kTM) * (kBN / kTN) > 1024)
    return kernel.emitError() << "invalid GEMM tile in kernel @" << kernel.getSymName();
  unsigned kThreads = unsigned((kBM / kTM) * (kBN / kTN));

  GeneratedKernel out;
  auto lhsArg = cast<BlockArgument>(mm.getLhs()), rhsArg = cast<BlockArgument>(mm.getRhs());
  // GEMM operands are always parameters; epilogue operands may be literals.
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([&](unsigned i) {
    return i != lhsArg.getArgNumber() && i != rhsArg.getArgNumber();
  });
  auto sig = buildSignature(kernel, passed, out.args, kThreads);
  if (failed(sig))
    return failure();
  int64_t M = a.getShape()[a.getRank() - 2], K = a.getShape().back(), N = b.getShape().back();
  ArrayRef<int64_t> batch = c.getShape().drop_back(2);
  int64_t batchCount = 1;
  for (int64_t d : batch)
    batchCount *= d;
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || batchCount > 65535)
    return kernel.emitError() << "unsupported: GEMM extents M=" << M << " N=" << N << " K=" << K
                              << " batch=" << batchCount << " exceed the launch limits";

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

  std::string lhsName = "in" + std::to_string(lhsArg.getArgNumber());
  std::string rhsName = "in" + std::to_string(rhsArg.getArgNumber());
  out.source =
      "// " + llvm::formatv("[{0}x{1}] x [{1}x{2}], batch {3}\n", M, K, N, batchCount).str() +
      *sig + " {\n" + "  const long long bz = blockIdx.z;\n" +
      llvm::formatv("  kiln::gemmTileF32<{0}, {1}, {2}, {3}, {4}>(\n"
                    "      {5} + ({6}), {7} + ({8}), {9}, {10}, {11}, {11}LL, {10}LL,\n"
                    "      [&](int m, int n, float acc) {{\n{12}      });\n",
                    kBM, kBN, kBK, kTM, kTN, lhsName, batchOffset(a.getShape(), batch), rhsName,
                    batchOffset(b.getShape(), batch), M, N, K, expr.getBody())
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
