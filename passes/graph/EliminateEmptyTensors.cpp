//===- EliminateEmptyTensors.cpp - zero-element tensors become constants --===//
//
// Decides every zero-size tensor at compile time (static shapes): results
// with no elements become empty constants, empty Concat operands are
// dropped, reductions over an empty extent and GEMMs with K = 0 become the
// constant ONNX defines, and anything else that would read an empty operand
// into a non-empty result is an error naming the op. After this pass no
// kernel has a zero-element operand or result.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Builders.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_ELIMINATEEMPTYTENSORS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isEmpty(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getNumElements() == 0;
}

/// A constant of `type` with every element `value` (floats), or the integer
/// `intValue` (integers; bools take intValue != 0).
Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value, APInt intValue) {
  Type elem = type.getElementType();
  Attribute element;
  if (auto ft = dyn_cast<FloatType>(elem)) {
    APFloat f(value);
    bool loses;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &loses);
    element = b.getFloatAttr(elem, f);
  } else {
    element = b.getIntegerAttr(elem, intValue.zextOrTrunc(elem.getIntOrFloatBitWidth()));
  }
  return ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, element));
}

/// The value of an empty reduction (ONNX Reduce*, opset 18: "the reduction
/// over an empty set of values yields" 0 for sums, -inf / the minimum of the
/// type for max, +inf / the maximum for min; mean is 0 / 0).
Value emptyReduction(OpBuilder &b, ReduceOp red) {
  auto type = cast<RankedTensorType>(red.getType());
  Type elem = type.getElementType();
  unsigned width = elem.getIntOrFloatBitWidth();
  bool isUnsigned = elem.isUnsignedInteger();
  double inf = std::numeric_limits<double>::infinity();
  switch (red.getKind()) {
  case ReduceKind::Sum:
    return splat(b, red.getLoc(), type, 0.0, APInt(width, 0));
  case ReduceKind::Mean:
    return splat(b, red.getLoc(), type, std::numeric_limits<double>::quiet_NaN(),
                 APInt(width, 0));
  case ReduceKind::Max:
    return splat(b, red.getLoc(), type, -inf,
                 isUnsigned ? APInt::getMinValue(width) : APInt::getSignedMinValue(width));
  case ReduceKind::Min:
    return splat(b, red.getLoc(), type, inf,
                 isUnsigned ? APInt::getMaxValue(width) : APInt::getSignedMaxValue(width));
  }
  llvm_unreachable("unknown reduce kind");
}

struct EliminateEmptyTensorsPass
    : public kiln::impl::EliminateEmptyTensorsBase<EliminateEmptyTensorsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    OpBuilder b(func.getContext());
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (op->getParentOp() == func.getOperation() && !isa<ConstantOp>(op) &&
          !op->hasTrait<OpTrait::IsTerminator>())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (failed(rewrite(b, op)))
        return signalPassFailure();
    }
    // Drop what the rewrites left unused (empty operands' producers).
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && op->getNumResults() > 0 && isMemoryEffectFree(op))
        op->erase();
  }

  LogicalResult rewrite(OpBuilder &b, Operation *op) {
    if (op->getNumResults() == 0)
      return success();
    b.setInsertionPoint(op);
    // 1. Nothing to compute: every result is empty.
    if (llvm::all_of(op->getResults(), isEmpty)) {
      for (Value r : op->getResults()) {
        auto type = cast<RankedTensorType>(r.getType());
        r.replaceAllUsesWith(
            ConstantOp::create(b, op->getLoc(), type,
                               DenseElementsAttr::get(type, ArrayRef<Attribute>())));
      }
      return success();
    }
    if (!llvm::any_of(op->getOperands(), isEmpty))
      return success();
    // 2. Concat: the empty operands add nothing.
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      SmallVector<Value> kept;
      for (Value in : concat.getInputs())
        if (!isEmpty(in))
          kept.push_back(in);
      Value result = kept.size() == 1
                         ? kept.front()
                         : ConcatOp::create(b, concat.getLoc(), concat.getType(), kept,
                                            concat.getAxisAttr())
                               .getResult();
      concat.getResult().replaceAllUsesWith(result);
      return success();
    }
    // 3. Reductions over nothing.
    if (auto red = dyn_cast<ReduceOp>(op)) {
      red.getResult().replaceAllUsesWith(emptyReduction(b, red));
      return success();
    }
    // 4. A GEMM with K = 0 sums nothing.
    if (auto mm = dyn_cast<MatMulOp>(op)) {
      auto type = cast<RankedTensorType>(mm.getType());
      mm.getResult().replaceAllUsesWith(
          splat(b, mm.getLoc(), type, 0.0, APInt(type.getElementTypeBitWidth(), 0)));
      return success();
    }
    // 5. Anything else would read elements that do not exist.
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      if (isEmpty(v))
        return op->emitError() << "unsupported: operand " << i << " of " << op->getName()
                               << " is empty (" << v.getType()
                               << ") but its result is not: there is nothing to read";
    return success();
  }
};

} // namespace
