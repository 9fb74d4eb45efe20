//===- ReduceEmitter.cpp - reduction kernels ------------------------------===//
//
// `kiln.reduce` (sum, mean, max over any axes): one thread per output
// element looping over the reduced index space, accumulating in fp32 for
// floats and int64 for integers. Simple and correct for every axis set; the
// row-reduction fast path (warp per row) belongs to the fusion work.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/KernelEmitter.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

FailureOr<GeneratedKernel> emitReduce(KernelOp kernel, Operation *anchor) {
  auto red = cast<ReduceOp>(anchor);
  auto inType = cast<RankedTensorType>(red.getInput().getType());
  Type et = inType.getElementType();
  if (!et.isF32() && !et.isInteger(64) && !et.isInteger(32))
    return kernel.emitError() << "unsupported: reduce on " << et;
  GeneratedKernel out;
  auto in = cast<BlockArgument>(red.getInput());
  constexpr unsigned kThreads = 256;
  auto sig = buildSignature(kernel, {in.getArgNumber()}, out.args, kThreads);
  if (failed(sig))
    return failure();
  ArrayRef<int64_t> shape = inType.getShape();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  ArrayRef<int64_t> axes = red.getAxes();
  // Base offset from the kept coordinates; inner offset from the reduced ones.
  std::string base = "0LL", inner = "0LL", rem = "o";
  int64_t reduced = 1;
  std::string decode;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (llvm::is_contained(axes, d))
      continue;
    decode += llvm::formatv("    const long long k{0} = ({1}) % {2}LL;\n", d, rem, shape[d]).str();
    rem = "(" + rem + ") / " + std::to_string(shape[d]) + "LL";
    base += llvm::formatv(" + k{0} * {1}LL", d, strides[d]).str();
  }
  std::string rrem = "r";
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (!llvm::is_contained(axes, d))
      continue;
    inner += llvm::formatv(" + (({0}) % {1}LL) * {2}LL", rrem, shape[d], strides[d]).str();
    rrem = "(" + rrem + ") / " + std::to_string(shape[d]) + "LL";
    reduced *= shape[d];
  }
  bool isFloat = et.isF32();
  std::string acc = isFloat ? "float" : "long long";
  std::string init, combine;
  switch (red.getKind()) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    init = "0";
    combine = "acc += v;";
    break;
  case ReduceKind::Max:
    init = isFloat ? "-__int_as_float(0x7f800000)" : "(-9223372036854775807LL - 1)";
    combine = isFloat ? "acc = kiln::maxNaN(acc, v);" : "acc = v > acc ? v : acc;";
    break;
  }
  std::string finish = red.getKind() == ReduceKind::Mean
                           ? (isFloat ? "acc / " + std::to_string(reduced) + ".0f"
                                      : "acc / " + std::to_string(reduced) + "LL")
                           : "acc";
  int64_t outputs = red.getType().getNumElements();
  out.source =
      *sig + " {\n" +
      llvm::formatv("  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < "
                    "{0}LL; o += (long long)gridDim.x * blockDim.x) {{\n",
                    outputs)
          .str() +
      decode + "    const long long base = " + base + ";\n" + "    " + acc + " acc = " + init +
      ";\n" +
      llvm::formatv("    for (long long r = 0; r < {0}LL; ++r) {{\n", reduced).str() +
      "      const " + acc + " v = in" + std::to_string(in.getArgNumber()) + "[base + " + inner +
      "];\n      " + combine + "\n    }\n    out0[o] = " + finish + ";\n  }\n}\n";
  out.block = {kThreads, 1, 1};
  out.grid = {gridFor(outputs, kThreads), 1, 1};
  return out;
}

} // namespace

void kiln::codegen::populateReduceEmitters(EmitterRegistry &registry) {
  registry.addAnchor<ReduceOp>(emitReduce);
}
