//===- GemmEpilogue.cpp - the fused epilogue of GEMM kernels --------------===//
//
// Implements GemmEpilogue.h: the fused epilogue of a GEMM kernel as the body
// of the lambda every GEMM template calls per accumulator.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/GemmEpilogue.h"

#include "compiler/codegen/KernelEmitter.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

/// Ends an epilogue body: the kernel's root at the linear index `e` (declared
/// before) computed once, then stored to out0 or returned. When the root's last dim is the
/// row width `rowWidth` (> 0), its coordinates are those of the row `row` (a C expression:
/// delinearized over the leading dims) and the column `col`: no division by the row width
/// per element (a bias read at n, a residual at m * N + n).
static FailureOr<std::string> finishRoot(ExprEmitter &expr, Value root, GemmEpilogueEnd end,
                                         int64_t rowWidth = 0, const std::string &row = "",
                                         const std::string &col = "") {
  auto rootType = cast<RankedTensorType>(root.getType());
  ExprEmitter::Coords coords;
  if (rowWidth > 0 && rootType.getRank() >= 1 && rootType.getShape().back() == rowWidth) {
    expr.line("const long long r = " + row + ";");
    coords = expr.delinearize("r", rootType.getShape().drop_back(), "c");
    coords.push_back(col);
  } else {
    coords = expr.delinearize("e", rootType.getShape(), "c");
  }
  auto value = expr.emitValue(root, coords);
  if (failed(value))
    return failure();
  if (end == GemmEpilogueEnd::Store)
    expr.line("out0[e] = " + storeValue(rootType.getElementType(), *value) + ";");
  else
    expr.line("return " + *value + ";");
  return expr.getBody();
}

FailureOr<std::string> kiln::codegen::epilogueBody(ExprEmitter &expr, MatMulOp mm, Value root,
                                                   const std::string &acc, int64_t M, int64_t N,
                                                   GemmEpilogueEnd end) {
  expr.overrideValue(mm.getResult(), acc);
  expr.line(
      llvm::formatv("const long long e = bz * {0}LL + (long long)m * {1}LL + n;", M * N, N).str());
  return finishRoot(expr, root, end, N, llvm::formatv("bz * {0}LL + (long long)m", M).str(),
                    "(long long)n");
}

FailureOr<std::string> kiln::codegen::pairEpilogueBody(ExprEmitter &expr, MatMulOp mm,
                                                       const GluHalves &pair, Value root,
                                                       ArrayRef<std::string> batchCoords,
                                                       const std::string &scale, int64_t M,
                                                       int64_t N, GemmEpilogueEnd end) {
  auto at = [&](const char *acc, const std::string &col) -> FailureOr<std::string> {
    expr.overrideValue(mm.getResult(), scale.empty()
                                           ? std::string(acc)
                                           : "(" + std::string(acc) + " * " + scale + ")");
    ExprEmitter::Coords coords(batchCoords.begin(), batchCoords.end());
    coords.push_back("(long long)m");
    coords.push_back(col);
    return expr.emitValue(pair.y, coords);
  };
  auto v0 = at("acc0", "(long long)n");
  auto v1 = at("acc1", "((long long)n + 1)");
  if (failed(v0) || failed(v1))
    return failure();
  expr.overrideValue(pair.even, *v0);
  expr.overrideValue(pair.odd, *v1);
  expr.line(llvm::formatv("const long long e = bz * {0}LL + (long long)m * {1}LL + (n >> 1);",
                          M * (N / 2), N / 2)
                .str());
  return finishRoot(expr, root, end);
}

FailureOr<std::string> kiln::codegen::batchedEpilogueBody(ExprEmitter &expr, MatMulOp mm,
                                                          const std::optional<GluHalves> &pair,
                                                          Value root, ArrayRef<int64_t> batch,
                                                          double scale, int64_t M, int64_t N,
                                                          GemmEpilogueEnd end) {
  const std::string scaleLiteral =
      scale == 1.0 ? "" : cudaLiteral(Float32Type::get(mm.getContext()), scale, 0);
  if (pair)
    return pairEpilogueBody(expr, mm, *pair, root, expr.delinearize("bz", batch, "b"),
                            scaleLiteral, M, N, end);
  return epilogueBody(expr, mm, root, scaleLiteral.empty() ? "acc" : "(acc * " + scaleLiteral + ")",
                      M, N, end);
}
