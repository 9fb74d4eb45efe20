//===- NormEmitter.cpp - softmax and layer-norm kernels -------------------===//
//
// Row-wise ops: one warp per row, four rows per 128-thread block, using the
// device functions in cuda/norm.cuh. Fused elementwise consumers run in the
// epilogue on each normalized value before the single store.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/KernelEmitter.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

constexpr unsigned kRowsPerBlock = 4, kThreads = 32 * kRowsPerBlock;

/// Common body: computes `row`, returns early past the last row.
std::string rowPrologue(int64_t rows) {
  return llvm::formatv("  const long long row = (long long)blockIdx.x * {0} + (threadIdx.x >> 5);\n"
                       "  if (row >= {1}LL)\n    return;\n",
                       kRowsPerBlock, rows)
      .str();
}

unsigned rowBlocks(int64_t rows) { return unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock); }

/// Builds the epilogue lambda `[&](long long c, float v) {...}` storing the
/// kernel's result at linear index `index` (a C expression over `row` and
/// `c`), with `anchor`'s result
/// replaced by `v`. Fusion guarantees the path to the yielded value never
/// broadcasts the anchor's result.
FailureOr<std::string> epilogueLambda(KernelOp kernel, ExprEmitter &expr, Operation *anchor,
                                      const std::string &index) {
  if (kernel.getYield().getNumOperands() != 1)
    return kernel.emitError() << "unsupported: row kernel @" << kernel.getSymName() << " with "
                              << kernel.getYield().getNumOperands() << " results";
  Value root = kernel.getYield().getValues()[0];
  auto rootType = cast<RankedTensorType>(root.getType());
  if (rootType.getNumElements() != cast<RankedTensorType>(anchor->getResult(0).getType()).getNumElements())
    return kernel.emitError() << "unsupported: epilogue changes the element count in kernel @"
                              << kernel.getSymName();
  expr.overrideValue(anchor->getResult(0), "v");
  expr.beginBody("    ");
  expr.line("const long long e = " + index + ";");
  ExprEmitter::Coords coords = expr.delinearize("e", rootType.getShape(), "c");
  auto value = expr.emitValue(root, coords);
  if (failed(value))
    return failure();
  expr.line("out0[e] = " + storeValue(rootType.getElementType(), *value) + ";");
  return "[&](long long c, float v) {\n" + expr.getBody() + "  }";
}


FailureOr<GeneratedKernel> emitSoftmax(KernelOp kernel, Operation *anchor) {
  auto sm = cast<SoftmaxOp>(anchor);
  auto type = sm.getType();
  if (!isa<FloatType>(type.getElementType()))
    return kernel.emitError() << "unsupported: softmax on " << type.getElementType();
  GeneratedKernel out;
  auto in = cast<BlockArgument>(sm.getInput());
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed =
      expr.bindOperands([&](unsigned i) { return i != in.getArgNumber(); });
  auto sig = buildSignature(kernel, passed, out.args, kThreads);
  if (failed(sig))
    return failure();
  // Rows run along `axis`: L elements `stride` apart; row r starts at
  // (r / stride) * L * stride + r % stride (stride 1 for the last axis).
  int64_t axis = sm.getAxis(), L = type.getDimSize(axis), stride = 1;
  for (int64_t d = axis + 1; d < type.getRank(); ++d)
    stride *= type.getDimSize(d);
  int64_t rows = type.getNumElements() / L;
  std::string base = stride == 1 ? llvm::formatv("row * {0}LL", L).str()
                                 : llvm::formatv("(row / {0}LL) * {1}LL + row % {0}LL", stride,
                                                 L * stride)
                                       .str();
  std::string index = stride == 1 ? base + " + c" : base + " + c * " + std::to_string(stride) + "LL";
  auto epilogue = epilogueLambda(kernel, expr, anchor, index);
  if (failed(epilogue))
    return failure();
  out.source = *sig + " {\n" + rowPrologue(rows) +
               llvm::formatv("  kiln::softmaxRow(in{0} + {1}, {2}LL, {3}LL, {4});\n",
                             in.getArgNumber(), base, L, stride, *epilogue)
                   .str() +
               "}\n";
  out.block = {kThreads, 1, 1};
  out.grid = {rowBlocks(rows), 1, 1};
  return out;
}

FailureOr<GeneratedKernel> emitLayerNorm(KernelOp kernel, Operation *anchor) {
  auto ln = cast<LayerNormOp>(anchor);
  auto type = ln.getType();
  if (!isa<FloatType>(type.getElementType()))
    return kernel.emitError() << "unsupported: layer_norm on " << type.getElementType();
  GeneratedKernel out;
  SmallVector<unsigned> operands;
  for (Value v : {ln.getInput(), ln.getScale(), ln.getBias()})
    if (v)
      operands.push_back(cast<BlockArgument>(v).getArgNumber());
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed =
      expr.bindOperands([&](unsigned i) { return !llvm::is_contained(operands, i); });
  auto sig = buildSignature(kernel, passed, out.args, kThreads);
  if (failed(sig))
    return failure();
  int64_t D = 1;
  for (int64_t d = ln.getAxis(); d < type.getRank(); ++d)
    D *= type.getDimSize(d);
  int64_t rows = type.getNumElements() / D;
  auto epilogue =
      epilogueLambda(kernel, expr, anchor, llvm::formatv("row * {0}LL + c", D).str());
  if (failed(epilogue))
    return failure();
  std::string bias = ln.getBias() ? "in" + std::to_string(operands[2]) : "(const float *)nullptr";
  out.source =
      *sig + " {\n" + rowPrologue(rows) +
      llvm::formatv("  kiln::layerNormRow(in{0} + row * {1}LL, in{2}, {3}, {1}LL, {4}, {5});\n",
                    operands[0], D, operands[1], bias,
                    cudaLiteral(Float32Type::get(kernel.getContext()),
                                ln.getEpsilon().convertToDouble(), 0),
                    *epilogue)
          .str() +
      "}\n";
  out.block = {kThreads, 1, 1};
  out.grid = {rowBlocks(rows), 1, 1};
  return out;
}

} // namespace

void kiln::codegen::populateNormEmitters(EmitterRegistry &registry) {
  registry.addAnchor<SoftmaxOp>(emitSoftmax, /*acceptsFusedOps=*/true);
  registry.addAnchor<LayerNormOp>(emitLayerNorm, /*acceptsFusedOps=*/true);
}
