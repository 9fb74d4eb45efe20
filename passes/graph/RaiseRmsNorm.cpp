//===- RaiseRmsNorm.cpp - kiln-raise-rms-norm (in progress) ---------------------------===//
//
// Stub: the pass is declared in Passes.td; the implementation follows.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_RAISERMSNORM
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct RaiseRmsNormPass : public kiln::impl::RaiseRmsNormBase<RaiseRmsNormPass> {
  void runOnOperation() override {}
};
} // namespace
