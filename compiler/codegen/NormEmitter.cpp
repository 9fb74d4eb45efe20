//===- NormEmitter.cpp - softmax, layer-norm and RMS-norm kernels ---------===//
//
// Row-wise ops, using the device functions in cuda/norm.cuh: softmax and
// short normalized rows take one warp per row, four rows per 128-thread
// block. Layer norm and RMS norm over f16/bf16/f32 rows that are a multiple
// of 16 bytes and fit kVecMaxPerLane vectors per lane take one warp per row
// with the row in registers, read and written with 16-byte vectors; other
// rows of kBlockRowMin elements or more take one 256-thread block per row
// with the row in registers (a warp per 2048-element row with scalar loads
// made 10 us kernels of only 32 blocks at Llama 1x128). Fused elementwise
// consumers run on each normalized value before the single store.
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

/// Rows of f16/bf16/f32 whose length is a multiple of a 16-byte vector and at most this many
/// vectors per lane take one warp per row with 16-byte loads and stores (the row in registers):
/// GPT-2 124M's 768-wide fp16 layer norm at 8x512 took 16 us as a block per row with 2-byte
/// loads, 5x its memory time (H200).
constexpr int64_t kVecMaxPerLane = 8;

/// Common body: computes `row`, returns early past the last row.
std::string rowPrologue(int64_t rows) {
  return llvm::formatv("  const long long row = (long long)blockIdx.x * {0} + (threadIdx.x >> 5);\n"
                       "  if (row >= {1}LL)\n    return;\n",
                       kRowsPerBlock, rows)
      .str();
}

/// Blocks of kRowsPerBlock rows covering `rows`.
unsigned rowBlocks(int64_t rows) { return unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock); }

/// How a row kernel's epilogue lambda ends: it stores the kernel's result (`out0[e] = ...`), or
/// returns it as stored (the vectorized norms, which store N values at once).
enum class RowEnd { Store, Return };

/// Builds the epilogue lambda `[&](long long c, float v) {...}` of a row kernel: `anchor`'s
/// result replaced by `v`, the kernel's result at linear index `index` (a C expression over
/// `row` and `c`) computed, then stored to out0 (RowEnd::Store) or returned in its storage type
/// (RowEnd::Return, `-> OutT`). Fusion guarantees the path to the yielded value never
/// broadcasts the anchor's result.
FailureOr<std::string> epilogueLambda(KernelOp kernel, ExprEmitter &expr, Operation *anchor,
                                      const std::string &index, RowEnd end = RowEnd::Store) {
  if (kernel.getYield().getNumOperands() != 1)
    return kernel.emitError() << "unsupported: row kernel @" << kernel.getSymName() << " with "
                              << kernel.getYield().getNumOperands() << " results";
  Value root = kernel.getYield().getValues()[0];
  auto rootType = cast<RankedTensorType>(root.getType());
  if (rootType.getNumElements() != cast<RankedTensorType>(anchor->getResult(0).getType()).getNumElements())
    return kernel.emitError() << "unsupported: epilogue changes the element count in kernel @"
                              << kernel.getSymName();
  std::string signature = "[&](long long c, float v)";
  if (end == RowEnd::Return) {
    auto storage = cudaStorageType(rootType.getElementType());
    if (failed(storage))
      return kernel.emitError() << "unsupported: row kernel @" << kernel.getSymName()
                                << " stores " << rootType.getElementType();
    signature += " -> " + *storage;
  }
  expr.overrideValue(anchor->getResult(0), "v");
  expr.beginBody("    ");
  expr.line("const long long e = " + index + ";");
  ExprEmitter::Coords coords = expr.delinearize("e", rootType.getShape(), "c");
  auto value = expr.emitValue(root, coords);
  if (failed(value))
    return failure();
  std::string stored = storeValue(rootType.getElementType(), *value);
  expr.line(end == RowEnd::Store ? "out0[e] = " + stored + ";" : "return " + stored + ";");
  return signature + " {\n" + expr.getBody() + "  }";
}

/// Vectors of 16 bytes per lane when a row of D elements of `inType` fits one warp's registers
/// (D a multiple of the vector, at most kVecMaxPerLane vectors per lane); 0 otherwise.
int64_t vectorsPerLane(Type inType, int64_t D) {
  if (!inType.isF16() && !inType.isBF16() && !inType.isF32())
    return 0;
  int64_t n = 16 / (inType.getIntOrFloatBitWidth() / 8);
  if (D % n != 0)
    return 0;
  int64_t vpl = (D / n + 31) / 32;
  return vpl <= kVecMaxPerLane ? vpl : 0;
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

/// How a normalization kernel walks a row: one warp with scalar loads, one block with the row in
/// registers, or one warp with 16-byte vectors in registers.
struct RowNormPath {
  enum Kind { Warp, Block, Vector } kind;
  int64_t count; ///< Block: elements per thread; Vector: vectors per lane
};

/// Formats the device call of a normalization kernel from the pointer names
/// of its parameters (`in<i>`, empty for an absent optional operand), the
/// row length D, the epilogue lambda (a value lambda for the Vector path, which also passes
/// `out0 + row * D`) and the path.
using RowNormCall = llvm::function_ref<std::string(
    ArrayRef<std::string> params, int64_t D, const std::string &epilogue, RowNormPath path)>;

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
  // Rows that fit a warp's registers as 16-byte vectors: a warp per row. Other long rows: a
  // block per row, PER elements per thread in registers. Else a warp per row, scalar loads.
  auto inType = cast<RankedTensorType>(params[0].getType()).getElementType();
  int64_t vpl = vectorsPerLane(inType, D);
  int64_t per = (D + kBlockRowThreads - 1) / kBlockRowThreads;
  RowNormPath path{RowNormPath::Warp, 0};
  if (vpl > 0)
    path = {RowNormPath::Vector, vpl};
  else if (D >= kBlockRowMin && per <= kBlockRowMaxPer)
    path = {RowNormPath::Block, per};
  bool blockPerRow = path.kind == RowNormPath::Block;
  unsigned threads = blockPerRow ? unsigned(kBlockRowThreads) : kThreads;
  auto sig = buildSignature(kernel, passed, out.args, threads);
  if (failed(sig))
    return failure();
  std::string index = llvm::formatv("row * {0}LL + c", D).str();
  auto epilogue = epilogueLambda(kernel, expr, anchor, index,
                                 path.kind == RowNormPath::Vector ? RowEnd::Return : RowEnd::Store);
  if (failed(epilogue))
    return failure();
  std::string prologue =
      blockPerRow ? llvm::formatv("  const long long row = (long long)blockIdx.x;\n").str()
                  : rowPrologue(rows);
  out.source = *sig + " {\n" + prologue + call(names, D, *epilogue, path) + "}\n";
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
      [&](ArrayRef<std::string> p, int64_t D, const std::string &epilogue, RowNormPath path) {
        std::string bias = p[2].empty() ? "(const float *)nullptr" : p[2];
        if (path.kind == RowNormPath::Vector)
          return llvm::formatv("  kiln::layerNormRowVec<{6}>({0} + row * {1}LL, {2}, {3}, {1}LL, "
                               "{4}, out0 + row * {1}LL, {5});\n",
                               p[0], D, p[1], bias, eps, epilogue, path.count)
              .str();
        std::string fn = path.kind == RowNormPath::Block
                             ? llvm::formatv("layerNormRowBlock<{0}>", path.count).str()
                             : "layerNormRow";
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
                         RowNormPath path) {
                       if (path.kind == RowNormPath::Vector)
                         return llvm::formatv("  kiln::rmsNormRowVec<{5}>({0} + row * {1}LL, {2}, "
                                              "{1}LL, {3}, out0 + row * {1}LL, {4});\n",
                                              p[0], D, p[1], eps, epilogue, path.count)
                             .str();
                       std::string fn = path.kind == RowNormPath::Block
                                            ? llvm::formatv("rmsNormRowBlock<{0}>", path.count).str()
                                            : "rmsNormRow";
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
