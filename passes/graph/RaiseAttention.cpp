//===- RaiseAttention.cpp - kiln-raise-attention (in progress) ---------------------------===//
//
// Stub: the pass is declared in Passes.td; the implementation follows.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_RAISEATTENTION
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct RaiseAttentionPass : public kiln::impl::RaiseAttentionBase<RaiseAttentionPass> {
  void runOnOperation() override {}
};
} // namespace
