//===- ReduceEmitter.cpp - reduction and scan kernels ---------------------===//
//
// `kiln.reduce` (sum, mean, max over any axes), with fusible producers of its
// input computed in the kernel (prologue fusion: RMSNorm's x*x never reaches
// memory). Accumulation is fp32 for floats, int64 for integers (uint64 for
// ui64), in element order per thread.
//
//   - Reductions over the trailing axes of a float tensor: one warp per output
//     row; lanes stride over the row (coalesced) and combine with shuffles.
//   - Anything else: one thread per output element, looping over the reduced
//     index space.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/KernelEmitter.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

/// Integer element types reductions and scans accept: every width and
/// signedness but bool.
bool isNumericInteger(Type t) { return isa<IntegerType>(t) && !t.isInteger(1); }

/// C type of a reduction or scan accumulator: fp32 for every float type,
/// `unsigned long long` for ui64, `long long` for every other integer (wide
/// enough for each; the store truncates to the element type, which wraps
/// as the element type's own arithmetic would).
std::string accumulatorType(Type t) {
  if (isa<FloatType>(t))
    return "float";
  return t.isUnsignedInteger(64) ? "unsigned long long" : "long long";
}

/// Input coordinates: kept dims from `kept`, reduced dims from `reduced`, in
/// dimension order.
ExprEmitter::Coords inputCoords(ArrayRef<int64_t> axes, int64_t rank,
                                ArrayRef<std::string> kept, ArrayRef<std::string> reduced) {
  ExprEmitter::Coords coords;
  size_t k = 0, r = 0;
  for (int64_t d = 0; d < rank; ++d)
    coords.push_back(llvm::is_contained(axes, d) ? reduced[r++] : kept[k++]);
  return coords;
}

FailureOr<GeneratedKernel> emitReduce(KernelOp kernel, Operation *anchor) {
  auto red = cast<ReduceOp>(anchor);
  if (kernel.getYield().getNumOperands() != 1 || kernel.getYield().getValues()[0] != red.getResult())
    return kernel.emitError() << "unsupported: reduce kernel @" << kernel.getSymName()
                              << " with ops after the reduction";
  auto inType = cast<RankedTensorType>(red.getInput().getType());
  Type et = inType.getElementType();
  if (!isa<FloatType>(et) && !isNumericInteger(et))
    return kernel.emitError() << "unsupported: reduce on " << et;
  // Floats accumulate in fp32 whatever their storage type.
  bool isFloat = isa<FloatType>(et);
  Type resultType = red.getType().getElementType();
  ArrayRef<int64_t> shape = inType.getShape(), axes = red.getAxes();
  int64_t rank = shape.size();
  SmallVector<int64_t> keptShape, reducedShape;
  for (int64_t d = 0; d < rank; ++d)
    (llvm::is_contained(axes, d) ? reducedShape : keptShape).push_back(shape[d]);
  int64_t rows = 1, length = 1;
  for (int64_t d : keptShape)
    rows *= d;
  for (int64_t d : reducedShape)
    length *= d;
  bool trailing = true;
  for (auto [i, a] : llvm::enumerate(axes))
    trailing &= a == rank - (int64_t)axes.size() + (int64_t)i;
  bool warpPerRow = isFloat && trailing;

  GeneratedKernel out;
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([](unsigned) { return true; });
  unsigned threads = warpPerRow ? 128 : 256;
  auto sig = buildSignature(kernel, passed, out.args, threads);
  if (failed(sig))
    return failure();

  std::string acc = accumulatorType(et);
  bool u64 = et.isUnsignedInteger(64);
  std::string init, combine;
  switch (red.getKind()) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    init = "0";
    combine = "acc += v;";
    break;
  case ReduceKind::Max:
    init = isFloat ? "-__int_as_float(0x7f800000)" : u64 ? "0ULL" : "(-9223372036854775807LL - 1)";
    combine = isFloat ? "acc = kiln::maxNaN(acc, v);" : "acc = v > acc ? v : acc;";
    break;
  case ReduceKind::Min:
    init = isFloat ? "__int_as_float(0x7f800000)"
                   : u64 ? "18446744073709551615ULL" : "9223372036854775807LL";
    combine = isFloat ? "acc = kiln::minNaN(acc, v);" : "acc = v < acc ? v : acc;";
    break;
  }
  std::string finish = red.getKind() == ReduceKind::Mean
                           ? (isFloat ? "acc / " + std::to_string(length) + ".0f"
                                      : "acc / " + std::to_string(length) + "LL")
                           : "acc";

  // Kept coordinates of the output row `o`, computed once per row.
  expr.beginBody(warpPerRow ? "  " : "    ");
  ExprEmitter::Coords kept = expr.delinearize("o", keptShape, "k");
  std::string rowPrologue = expr.getBody();
  // Loop body: reduced coordinates of element `r`, the (fused) input value.
  expr.beginBody(warpPerRow ? "    " : "      ");
  ExprEmitter::Coords reduced = expr.delinearize("r", reducedShape, "q");
  auto value = expr.emitValue(red.getInput(), inputCoords(axes, rank, kept, reduced));
  if (failed(value))
    return failure();
  std::string loopBody = expr.getBody() + (warpPerRow ? "    " : "      ") + "const " + acc +
                         " v = " + *value + ";\n" + (warpPerRow ? "    " : "      ") + combine +
                         "\n";

  if (warpPerRow) {
    std::string warpCombine = red.getKind() == ReduceKind::Max   ? "kiln::warpMax"
                              : red.getKind() == ReduceKind::Min ? "kiln::warpMin"
                                                                 : "kiln::warpSum";
    out.source =
        *sig + " {\n" +
        llvm::formatv("  const long long o = (long long)blockIdx.x * 4 + (threadIdx.x >> 5);\n"
                      "  if (o >= {0}LL)\n    return;\n",
                      rows)
            .str() +
        rowPrologue + "  " + acc + " acc = " + init + ";\n" +
        llvm::formatv("  for (long long r = threadIdx.x & 31; r < {0}LL; r += 32) {{\n", length)
            .str() +
        loopBody + "  }\n  acc = " + warpCombine + "(acc);\n  if ((threadIdx.x & 31) == 0)\n    out0[o] = " +
        storeValue(resultType, finish) + ";\n}\n";
    out.block = {threads, 1, 1};
    out.grid = {unsigned((rows + 3) / 4), 1, 1};
    return out;
  }
  out.source =
      *sig + " {\n" +
      llvm::formatv("  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < "
                    "{0}LL; o += (long long)gridDim.x * blockDim.x) {{\n",
                    rows)
          .str() +
      rowPrologue + "    " + acc + " acc = " + init + ";\n" +
      llvm::formatv("    for (long long r = 0; r < {0}LL; ++r) {{\n", length).str() + loopBody +
      "    }\n    out0[o] = " + storeValue(resultType, finish) + ";\n  }\n}\n";
  out.block = {threads, 1, 1};
  out.grid = {gridFor(kernel, rows, threads), 1, 1};
  return out;
}

/// A tensor seen as lines along `axis`: `outer` lines before it times
/// `inner` after it, each `length` long with stride `inner` (element k of
/// line o is at (o / inner) * length * inner + o % inner + k * inner).
struct AxisLines {
  int64_t outer, length, inner;
};

AxisLines axisLines(RankedTensorType type, int64_t axis) {
  AxisLines lines{1, type.getDimSize(axis), 1};
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d < axis)
      lines.outer *= type.getDimSize(d);
    else if (d > axis)
      lines.inner *= type.getDimSize(d);
  return lines;
}

/// `kiln.cumsum` (ONNX CumSum-11/14, `exclusive`, `reverse`) on a run-time
/// input: one thread per line along `axis`, scanning it in order (reversed
/// with `reverse`; with `exclusive` each output is the sum before its own
/// element). Accumulation in fp32 for floats, int64 for integers (exact;
/// wrapping like the constant folder). Position ids from CumSum(attention
/// mask) (OPT, RoBERTa) are a few short lines, so a sequential scan per line
/// is enough.
FailureOr<GeneratedKernel> emitCumSum(KernelOp kernel, Operation *anchor) {
  auto scan = cast<CumSumOp>(anchor);
  if (kernel.getYield().getNumOperands() != 1 ||
      kernel.getYield().getValues()[0] != scan.getResult() ||
      !isa<BlockArgument>(scan.getInput()))
    return kernel.emitError() << "unsupported: cumsum kernel @" << kernel.getSymName()
                              << " fused with other ops";
  auto type = cast<RankedTensorType>(scan.getType());
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  if (!isFloat && !isNumericInteger(et))
    return kernel.emitError() << "unsupported: cumsum on " << et;
  auto [outer, length, inner] = axisLines(type, scan.getAxis());
  GeneratedKernel out;
  constexpr unsigned kThreads = 128;
  auto sig = buildSignature(kernel, {0}, out.args, kThreads);
  if (failed(sig))
    return failure();
  std::string acc = accumulatorType(et);
  std::string load = isFloat ? "kiln::ld(in0[e])" : "(" + acc + ")in0[e]";
  std::string step = scan.getExclusive()
                         ? "      out0[e] = " + storeValue(et, "acc") + ";\n      acc += v;\n"
                         : "      acc += v;\n      out0[e] = " + storeValue(et, "acc") + ";\n";
  out.source =
      *sig + " {\n" +
      llvm::formatv("  for (long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                    "line < {0}LL; line += (long long)gridDim.x * blockDim.x) {{\n"
                    "    const long long base = (line / {1}LL) * {2}LL + line % {1}LL;\n"
                    "    {3} acc = 0;\n"
                    "    for (long long k = 0; k < {4}LL; ++k) {{\n"
                    "      const long long e = base + ({5}) * {1}LL;\n"
                    "      const {3} v = {6};\n",
                    outer * inner, inner, length * inner, acc, length,
                    scan.getReverse() ? llvm::formatv("{0}LL - 1 - k", length).str() : "k", load)
          .str() +
      step + "    }\n  }\n}\n";
  out.block = {kThreads, 1, 1};
  out.grid = {gridFor(kernel, outer * inner, kThreads), 1, 1};
  return out;
}

/// `kiln.arg_reduce` (ONNX ArgMax/ArgMin): one thread per output element
/// scanning the axis; a NaN beats every number and the first NaN wins
/// (numpy); ties keep the first index, or the last with select_last_index.
FailureOr<GeneratedKernel> emitArgReduce(KernelOp kernel, Operation *anchor) {
  auto arg = cast<ArgReduceOp>(anchor);
  if (kernel.getYield().getNumOperands() != 1 ||
      kernel.getYield().getValues()[0] != arg.getResult() || !isa<BlockArgument>(arg.getInput()))
    return kernel.emitError() << "unsupported: arg_reduce kernel @" << kernel.getSymName()
                              << " fused with other ops";
  auto type = cast<RankedTensorType>(arg.getInput().getType());
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  if (!isFloat && !isNumericInteger(et))
    return kernel.emitError() << "unsupported: arg_reduce on " << et;
  auto [outer, length, inner] = axisLines(type, arg.getAxis());
  GeneratedKernel out;
  constexpr unsigned kThreads = 128;
  // Long contiguous rows (a decode step's greedy token over a vocabulary): a block per row
  // (kiln::argReduceRow, norm.cuh), with the same result as the scan below; about 32 elements
  // per thread (8 loads in flight each), 128 to 1024 threads.
  constexpr int64_t kBlockRowLength = 256;
  const bool blockPerRow = inner == 1 && length >= kBlockRowLength;
  const unsigned rowThreads = unsigned(std::clamp<uint64_t>(
      llvm::PowerOf2Ceil(uint64_t(std::max<int64_t>(length, 1)) / 32), kThreads, 1024));
  auto sig = buildSignature(kernel, {0}, out.args, blockPerRow ? rowThreads : kThreads);
  if (failed(sig))
    return failure();
  bool isMax = arg.getKind() == ReduceKind::Max;
  std::string acc = accumulatorType(et);
  std::string load = isFloat ? "kiln::ld(in0[base + k * " + std::to_string(inner) + "LL])"
                             : "(" + acc + ")in0[base + k * " + std::to_string(inner) + "LL]";
  std::string beats = std::string("v ") + (isMax ? ">" : "<") +
                      (arg.getSelectLastIndex() ? "= " : " ") + "best";
  if (isFloat) // a NaN wins once and then stays
    beats = "(best == best) && (v != v || " + beats + ")";
  if (blockPerRow) {
    if (outer > INT32_MAX)
      return kernel.emitError() << "unsupported: arg_reduce over " << outer
                                << " rows exceeds the CUDA grid's x limit";
    std::string rowLoad = isFloat ? "kiln::ld(in0[base + k])" : "(" + acc + ")in0[base + k]";
    out.source =
        *sig + " {\n" +
        llvm::formatv("  const long long base = (long long)blockIdx.x * {0}LL;\n"
                      "  kiln::argReduceRow<{1}, {2}, {3}, {4}>([&](long long k) {{ return {5}; }, "
                      "{0}LL, out0 + blockIdx.x);\n}\n",
                      length, acc, isMax ? "true" : "false",
                      arg.getSelectLastIndex() ? "true" : "false", isFloat ? "true" : "false",
                      rowLoad)
            .str();
    out.block = {rowThreads, 1, 1};
    out.grid = {unsigned(std::max<int64_t>(1, outer)), 1, 1};
    return out;
  }
  out.source =
      *sig + " {\n" +
      llvm::formatv("  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < "
                    "{0}LL; o += (long long)gridDim.x * blockDim.x) {{\n"
                    "    const long long base = (o / {1}LL) * {2}LL + o % {1}LL;\n"
                    "    {3} best = {4};\n    long long index = 0;\n"
                    "    for (long long k = 1; k < {5}LL; ++k) {{\n"
                    "      const {3} v = {6};\n"
                    "      if ({7}) {{\n        best = v;\n        index = k;\n      }\n"
                    "    }\n    out0[o] = index;\n  }\n}\n",
                    outer * inner, inner, length * inner, acc,
                    isFloat ? "kiln::ld(in0[base])" : "(" + acc + ")in0[base]", length, load, beats)
          .str();
  out.block = {kThreads, 1, 1};
  out.grid = {gridFor(kernel, outer * inner, kThreads), 1, 1};
  return out;
}

} // namespace

void kiln::codegen::populateReduceEmitters(EmitterRegistry &registry) {
  registry.addAnchor<ArgReduceOp>(emitArgReduce, /*acceptsFusedOps=*/false);
  registry.addAnchor<ReduceOp>(emitReduce, /*acceptsFusedOps=*/true);
  registry.addAnchor<CumSumOp>(emitCumSum, /*acceptsFusedOps=*/false);
}
