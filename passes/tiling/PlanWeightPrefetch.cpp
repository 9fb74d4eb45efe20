//===- PlanWeightPrefetch.cpp - decode GEMMs warm L2 with the next weight -===//
//
// kiln-plan-weight-prefetch (Passes.td): each few-row GEMM kernel of a decode step whose
// weight preload is planned (#kiln.skinny_gemm_tile<..., preload = true>) gets the constant
// weight of the next such kernel as an input and #kiln.l2_prefetch naming it.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnTarget.h"
#include "passes/Passes.h"

#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_PLANWEIGHTPREFETCH
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The kernel's weight: its largest constant input, with its index and size in bytes; none
/// when no input is a constant.
struct Weight {
  Value value;
  unsigned operand = 0;
  int64_t bytes = 0;
};
std::optional<Weight> findWeight(KernelOp kernel) {
  std::optional<Weight> best;
  for (auto [i, in] : llvm::enumerate(kernel.getInputs())) {
    if (!matchPattern(in, m_Constant()))
      continue;
    auto type = dyn_cast<RankedTensorType>(in.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      continue;
    const int64_t bytes =
        type.getNumElements() * int64_t((type.getElementTypeBitWidth() + 7) / 8);
    if (!best || bytes > best->bytes)
      best = Weight{in, unsigned(i), bytes};
  }
  return best;
}

struct PlanWeightPrefetchPass
    : public kiln::impl::PlanWeightPrefetchBase<PlanWeightPrefetchPass> {
  using PlanWeightPrefetchBase::PlanWeightPrefetchBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    int64_t cap = maxBytes;
    if (cap <= 0)
      cap = getTargetOrDefault(func).getL2Bytes() / 2;
    cap = cap / 16 * 16;
    if (cap <= 0)
      return;
    // The decode GEMMs with a preloaded constant weight, in program order.
    SmallVector<std::pair<KernelOp, Weight>> gemms;
    for (auto kernel : func.getBody().front().getOps<KernelOp>()) {
      auto tile = kernel->getAttrOfType<SkinnyGemmTileAttr>(kSkinnyGemmTileAttrName);
      if (!tile || !tile.getPreload())
        continue;
      if (std::optional<Weight> w = findWeight(kernel))
        gemms.push_back({kernel, *w});
    }
    for (size_t i = 0; i + 1 < gemms.size(); ++i) {
      KernelOp kernel = gemms[i].first;
      const Weight &next = gemms[i + 1].second;
      if (next.bytes < 16)
        continue;
      // The next weight as an input of this kernel (the same value when it already is one).
      unsigned operand = kernel.getInputs().size();
      for (auto [j, in] : llvm::enumerate(kernel.getInputs()))
        if (in == next.value)
          operand = unsigned(j);
      if (operand == kernel.getInputs().size()) {
        // The constant (no operands, no effects) moves up to the kernel that now reads it.
        Operation *def = next.value.getDefiningOp();
        if (def && def->getBlock() == kernel->getBlock() && kernel->isBeforeInBlock(def))
          def->moveBefore(kernel);
        kernel->insertOperands(operand, ValueRange{next.value});
        kernel.getBodyBlock().addArgument(next.value.getType(), next.value.getLoc());
      }
      const int64_t bytes = std::min(next.bytes / 16 * 16, cap);
      kernel->setAttr(kL2PrefetchAttrName,
                      L2PrefetchAttr::get(&getContext(), int64_t(operand), bytes));
    }
  }
};

} // namespace
