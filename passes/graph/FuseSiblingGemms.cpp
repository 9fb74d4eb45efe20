//===- FuseSiblingGemms.cpp - kiln-fuse-sibling-gemms (in progress) ---------------------------===//
//
// Stub: the pass is declared in Passes.td; the implementation follows.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_FUSESIBLINGGEMMS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct FuseSiblingGemmsPass : public kiln::impl::FuseSiblingGemmsBase<FuseSiblingGemmsPass> {
  void runOnOperation() override {}
};
} // namespace
