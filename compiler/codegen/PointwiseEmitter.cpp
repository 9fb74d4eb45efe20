//===- PointwiseEmitter.cpp - fused pointwise kernels ---------------------===//
//
// Emits a kernel whose body holds only `KilnFusible` ops. Each result is
// computed one element per thread (grid-stride loop): the thread turns its
// linear index into result coordinates and evaluates the yielded value with
// ExprEmitter, so the fused chain touches device memory only for its true
// inputs and its results.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/KernelEmitter.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

FailureOr<GeneratedKernel> emitPointwise(KernelOp kernel, Operation *) {
  GeneratedKernel out;
  ExprEmitter expr(kernel);
  SmallVector<unsigned> passed = expr.bindOperands([](unsigned) { return true; });
  constexpr unsigned kThreads = 256;
  auto sig = buildSignature(kernel, passed, out.args, kThreads);
  if (failed(sig))
    return failure();

  int64_t maxElements = 1;
  std::string loops;
  for (auto [j, v] : llvm::enumerate(kernel.getYield().getValues())) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t n = type.getNumElements();
    maxElements = std::max(maxElements, n);
    expr.beginBody("    ");
    ExprEmitter::Coords coords = expr.delinearize("i", type.getShape());
    auto result = expr.emitValue(v, coords);
    if (failed(result))
      return failure();
    expr.line("out" + std::to_string(j) + "[i] = " + storeValue(type.getElementType(), *result) +
              ";");
    loops += llvm::formatv("  for (long long i = (long long)blockIdx.x * blockDim.x + "
                           "threadIdx.x; i < {0}LL; i += (long long)gridDim.x * blockDim.x) {{\n"
                           "{1}  }\n",
                           n, expr.getBody())
                 .str();
  }
  out.source = *sig + " {\n" + loops + "}\n";
  out.block = {kThreads, 1, 1};
  out.grid = {gridFor(kernel, maxElements, kThreads), 1, 1};
  return out;
}

} // namespace

void kiln::codegen::populatePointwiseEmitter(EmitterRegistry &registry) {
  registry.setPointwise(emitPointwise);
}
