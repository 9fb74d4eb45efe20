//===- OutlineKernels.cpp - one kernel per remaining compute op -----------===//
//
// Wraps every compute op left outside `kiln.kernel` (GEMM, softmax,
// normalization, reduction, fusible ops fusion skipped) into a single-op
// kernel, then names all kernels `k<index>_<what>` in program order.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-outline-kernels"

namespace kiln {
#define GEN_PASS_DEF_OUTLINEKERNELS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
/// True for ops that stay at function level: constants, reshape views of a
/// materialized value, kernels, collectives (the runtime runs them between
/// kernels) and the terminator.
bool staysOutside(Operation *op) {
  return isa<ConstantOp, KernelOp, ReshapeOp, AllReduceOp, func::ReturnOp>(op);
}

struct OutlineKernelsPass : public kiln::impl::OutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> todo;
    for (Operation &op : func.getBody().front())
      if (!staysOutside(&op))
        todo.push_back(&op);
    for (Operation *op : todo) {
      std::string name = op->getName().stripDialect().str();
      if (failed(outlineIntoKernel(rewriter, {op}, name))) {
        // Results unused: the op is dead.
        rewriter.eraseOp(op);
      }
    }
    // Deterministic names in program order.
    unsigned index = 0;
    func.walk([&](KernelOp kernel) {
      StringRef base = kernel.getSymName();
      if (base.starts_with("k") && base.contains('_')) {
        StringRef digits = base.drop_front().take_while([](char c) { return c >= '0' && c <= '9'; });
        if (!digits.empty() && base.drop_front(1 + digits.size()).starts_with("_"))
          base = base.drop_front(2 + digits.size());
      }
      kernel.setSymName(("k" + llvm::Twine(index++) + "_" + base).str());
    });
    // kiln launches kernels over non-empty tensors only: a zero-element
    // result (e.g. a Slice whose range is empty) is an error, not a launch.
    WalkResult empty = func.walk([&](KernelOp kernel) -> WalkResult {
      for (auto [i, v] : llvm::enumerate(kernel->getResults())) {
        auto type = cast<RankedTensorType>(v.getType());
        if (type.getNumElements() != 0)
          continue;
        kernel->emitError() << "unsupported: result " << i << " of kernel @"
                            << kernel.getSymName() << " is empty (" << type
                            << "); kiln compiles non-empty tensors only";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (empty.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
