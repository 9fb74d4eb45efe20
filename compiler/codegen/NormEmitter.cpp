//===- NormEmitter.cpp - softmax, layer-norm and RMS-norm kernels ---------===//
//
// Row-wise ops, using the device functions in cuda/norm.cuh: softmax and
// short normalized rows take one warp per row, four rows per 128-thread
// block; layer norm and RMS norm over rows of kBlockRowMin elements or more
// take one 256-thread block per row with the row in registers (a warp per
// 2048-element row made 10 us kernels of only 32 blocks at Llama 1x128). Fused elementwise consumers run in the
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

/// Normalized rows at least this long get a block per row; threads per block
/// then, and the most row elements a thread holds in registers.
constexpr int64_t kBlockRowMin = 512, kBlockRowThreads = 256, kBlockRowMaxPer = 32;

/// Common body: computes `row`, returns early past the last row.
std::string rowPrologue(int64_t rows) {
  return llvm::formatv("  const long long row = (long long)blockIdx.x * {0} + (threadIdx.x >> 5);\n"
                       "  if (row >= {1}LL)\n    return;\n",
                       kRowsPerBlock, rows)
      .str();
}

/// Blocks of kRowsPerBlock rows covering `rows`.
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

/// `kiln.softmax` (+ epilogue) along any axis: kiln::softmaxRow per row.
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

/// Formats the device call of a normalization kernel from the pointer names
/// of its parameters (`in<i>`, empty for an absent optional operand), the
/// row length D, the epilogue lambda and `per`: 0 for the warp-per-row
/// function, else the elements per thread of the block-per-row one.
using RowNormCall = llvm::function_ref<std::string(
    ArrayRef<std::string> params, int64_t D, const std::string &epilogue, int64_t per)>;

/// Shared by layer norm and RMS norm: one warp per row of the dims from
/// `axis` on. `params` (input first, then scale, optional bias; null for an
/// absent one) are passed as pointers, never inlined; the row's result
/// leaves through the epilogue at `row * D + c`.
FailureOr<GeneratedKernel> emitRowNorm(KernelOp kernel, Operation *anchor, ArrayRef<Value> params,
                                       int64_t axis, RowNormCall call) {
  auto type = cast<RankedTensorType>(anchor->getResult(0).getType());
  if (!isa<FloatType>(type.getElementType()))
    return kernel.emitError() << "unsupported: " << anchor->getName() << " on "
                              << type.getElementType();
  GeneratedKernel out;
  SmallVector<unsigned> operands;
  SmallVector<std::string> names;
  for (Value v : params) {
    if (!v) {
      names.emplace_back();
      continue;
    }
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg)
      return kernel.emitError() << "unsupported: " << anchor->getName() << " in kernel @"
                                << kernel.getSymName()
                                << " reads an operand computed inside the kernel";
    operands.push_back(arg.getArgNumber());
    names.push_back("in" + std::to_string(arg.getArgNumber()));
  }
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed =
      expr.bindOperands([&](unsigned i) { return !llvm::is_contained(operands, i); });
  int64_t D = 1;
  for (int64_t d = axis; d < type.getRank(); ++d)
    D *= type.getDimSize(d);
  int64_t rows = type.getNumElements() / D;
  // Long rows: a block per row, PER elements per thread in registers.
  int64_t per = (D + kBlockRowThreads - 1) / kBlockRowThreads;
  bool blockPerRow = D >= kBlockRowMin && per <= kBlockRowMaxPer;
  unsigned threads = blockPerRow ? unsigned(kBlockRowThreads) : kThreads;
  auto sig = buildSignature(kernel, passed, out.args, threads);
  if (failed(sig))
    return failure();
  auto epilogue = epilogueLambda(kernel, expr, anchor, llvm::formatv("row * {0}LL + c", D).str());
  if (failed(epilogue))
    return failure();
  std::string prologue =
      blockPerRow ? llvm::formatv("  const long long row = (long long)blockIdx.x;\n").str()
                  : rowPrologue(rows);
  out.source =
      *sig + " {\n" + prologue + call(names, D, *epilogue, blockPerRow ? per : 0) + "}\n";
  out.block = {threads, 1, 1};
  out.grid = {blockPerRow ? unsigned(rows) : rowBlocks(rows), 1, 1};
  return out;
}

/// `kiln.layer_norm` (+ epilogue): kiln::layerNormRow per row.
FailureOr<GeneratedKernel> emitLayerNorm(KernelOp kernel, Operation *anchor) {
  auto ln = cast<LayerNormOp>(anchor);
  std::string eps =
      cudaLiteral(Float32Type::get(kernel.getContext()), ln.getEpsilon().convertToDouble(), 0);
  return emitRowNorm(
      kernel, anchor, {ln.getInput(), ln.getScale(), ln.getBias()}, ln.getAxis(),
      [&](ArrayRef<std::string> p, int64_t D, const std::string &epilogue, int64_t per) {
        std::string bias = p[2].empty() ? "(const float *)nullptr" : p[2];
        std::string fn = per ? llvm::formatv("layerNormRowBlock<{0}>", per).str() : "layerNormRow";
        return llvm::formatv("  kiln::{6}({0} + row * {1}LL, {2}, {3}, {1}LL, {4}, {5});\n",
                             p[0], D, p[1], bias, eps, epilogue, fn)
            .str();
      });
}

/// `kiln.rms_norm` (+ epilogue): kiln::rmsNormRow per row.
FailureOr<GeneratedKernel> emitRmsNorm(KernelOp kernel, Operation *anchor) {
  auto rms = cast<RmsNormOp>(anchor);
  std::string eps =
      cudaLiteral(Float32Type::get(kernel.getContext()), rms.getEpsilon().convertToDouble(), 0);
  return emitRowNorm(kernel, anchor, {rms.getInput(), rms.getScale()}, rms.getAxis(),
                     [&](ArrayRef<std::string> p, int64_t D, const std::string &epilogue,
                         int64_t per) {
                       std::string fn =
                           per ? llvm::formatv("rmsNormRowBlock<{0}>", per).str() : "rmsNormRow";
                       return llvm::formatv(
                                  "  kiln::{5}({0} + row * {1}LL, {2}, {1}LL, {3}, {4});\n", p[0],
                                  D, p[1], eps, epilogue, fn)
                           .str();
                     });
}

} // namespace

void kiln::codegen::populateNormEmitters(EmitterRegistry &registry) {
  registry.addAnchor<SoftmaxOp>(emitSoftmax, /*acceptsFusedOps=*/true);
  registry.addAnchor<LayerNormOp>(emitLayerNorm, /*acceptsFusedOps=*/true);
  registry.addAnchor<RmsNormOp>(emitRmsNorm, /*acceptsFusedOps=*/true);
}
