//===- NormEmitter.cpp - softmax and layer-norm kernels -------------------===//
//
// Row-wise ops: one warp per row, four rows per 128-thread block, using the
// device functions in cuda/norm.cuh.
//
//===----------------------------------------------------------------------===//

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

FailureOr<GeneratedKernel> emitSoftmax(KernelOp kernel, Operation *anchor) {
  auto sm = cast<SoftmaxOp>(anchor);
  auto type = sm.getType();
  if (!type.getElementType().isF32())
    return kernel.emitError() << "unsupported: softmax on " << type.getElementType();
  if (sm.getAxis() != type.getRank() - 1)
    return kernel.emitError() << "unsupported: softmax over axis " << sm.getAxis()
                              << " of rank " << type.getRank() << " (only the last axis)";
  GeneratedKernel out;
  auto in = cast<BlockArgument>(sm.getInput());
  auto sig = buildSignature(kernel, {in.getArgNumber()}, out.args, kThreads);
  if (failed(sig))
    return failure();
  int64_t L = type.getShape().back(), rows = type.getNumElements() / L;
  out.source = *sig +
               " {\n" + rowPrologue(rows) +
               llvm::formatv("  kiln::softmaxRowF32(in{0} + row * {1}LL, out0 + row * {1}LL, {1}LL);\n",
                             in.getArgNumber(), L)
                   .str() +
               "}\n";
  out.block = {kThreads, 1, 1};
  out.grid = {rowBlocks(rows), 1, 1};
  return out;
}

FailureOr<GeneratedKernel> emitLayerNorm(KernelOp kernel, Operation *anchor) {
  auto ln = cast<LayerNormOp>(anchor);
  auto type = ln.getType();
  if (!type.getElementType().isF32())
    return kernel.emitError() << "unsupported: layer_norm on " << type.getElementType();
  GeneratedKernel out;
  SmallVector<unsigned> operands;
  for (Value v : {ln.getInput(), ln.getScale(), ln.getBias()})
    if (v)
      operands.push_back(cast<BlockArgument>(v).getArgNumber());
  auto sig = buildSignature(kernel, operands, out.args, kThreads);
  if (failed(sig))
    return failure();
  int64_t D = 1;
  for (int64_t d = ln.getAxis(); d < type.getRank(); ++d)
    D *= type.getDimSize(d);
  int64_t rows = type.getNumElements() / D;
  std::string bias = ln.getBias() ? "in" + std::to_string(operands[2]) : "nullptr";
  out.source =
      *sig + " {\n" +
      rowPrologue(rows) +
      llvm::formatv("  kiln::layerNormRowF32(in{0} + row * {1}LL, in{2}, {3}, out0 + row * {1}LL, "
                    "{1}LL, {4});\n",
                    operands[0], D, operands[1], bias,
                    cudaLiteral(Float32Type::get(kernel.getContext()),
                                ln.getEpsilon().convertToDouble(), 0))
          .str() +
      "}\n";
  out.block = {kThreads, 1, 1};
  out.grid = {rowBlocks(rows), 1, 1};
  return out;
}

} // namespace

void kiln::codegen::populateNormEmitters(EmitterRegistry &registry) {
  registry.addAnchor<SoftmaxOp>(emitSoftmax);
  registry.addAnchor<LayerNormOp>(emitLayerNorm);
}
