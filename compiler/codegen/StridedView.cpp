//===- StridedView.cpp - operands as strided views of kernel parameters ---===//
//
// Walks from a value down to a kernel-body argument through view ops, then
// replays the walk bottom-up on (offset, shape, strides), the way a tensor
// library composes views (cf. PyTorch's as_strided / numpy strides).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/StridedView.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

namespace {

/// The value of a one-element f32/f16/bf16 constant operand of the kernel
/// (a splat scalar), if `v` is one.
std::optional<double> scalarConstant(KernelOp kernel, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &kernel.getBodyBlock())
    return std::nullopt;
  DenseElementsAttr dense;
  if (!matchPattern(kernel.getInputs()[arg.getArgNumber()], m_Constant(&dense)) ||
      !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

void rowMajor(StridedView &view, ArrayRef<int64_t> shape) {
  view.shape.assign(shape.begin(), shape.end());
  view.strides.assign(shape.size(), 0);
  int64_t s = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    view.strides[d] = shape[d] == 1 ? 0 : s;
    s *= shape[d];
  }
}

/// Reshape of a strided view: dims are grouped so that each group has the
/// same element count in and out; a group is viewable when its non-unit
/// input dims are contiguous with one another.
LogicalResult reshapeView(StridedView &view, ArrayRef<int64_t> out) {
  SmallVector<int64_t> inShape, inStrides;
  for (auto [n, s] : llvm::zip(view.shape, view.strides))
    if (n != 1) {
      inShape.push_back(n);
      inStrides.push_back(s);
    }
  SmallVector<int64_t> outStrides(out.size(), 0);
  size_t i = 0, o = 0;
  while (o < out.size()) {
    if (out[o] == 1) {
      ++o;
      continue;
    }
    // One group: input dims [i, ie) and output dims [o, oe) of equal products.
    int64_t pin = 1, pout = 1;
    size_t ie = i, oe = o;
    do {
      if (pin <= pout) {
        if (ie == inShape.size())
          return failure();
        pin *= inShape[ie++];
      } else {
        if (oe == out.size())
          return failure();
        pout *= out[oe++];
      }
    } while (pin != pout);
    while (oe < out.size() && out[oe] == 1)
      ++oe;
    for (size_t d = i; d + 1 < ie; ++d)
      if (inStrides[d] != inStrides[d + 1] * inShape[d + 1])
        return failure();
    int64_t s = inStrides[ie - 1];
    for (size_t d = oe; d-- > o;) {
      outStrides[d] = out[d] == 1 ? 0 : s;
      s *= out[d];
    }
    i = ie;
    o = oe;
  }
  if (i != inShape.size())
    return failure();
  view.shape.assign(out.begin(), out.end());
  view.strides = std::move(outStrides);
  return success();
}

} // namespace

FailureOr<StridedView> kiln::codegen::analyzeStridedView(KernelOp kernel, Value v) {
  Type elementType = cast<RankedTensorType>(v.getType()).getElementType();
  // 1. Walk down to the parameter, remembering the ops.
  SmallVector<Operation *> chain;
  double scale = 1.0;
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &kernel.getBodyBlock() || scalarConstant(kernel, arg))
        return failure();
      break;
    }
    Operation *op = v.getDefiningOp();
    if (cast<RankedTensorType>(v.getType()).getElementType() != elementType)
      return failure();
    if (isa<TransposeOp, ReshapeOp, ExpandOp>(op)) {
      chain.push_back(op);
      v = op->getOperand(0);
    } else if (auto s = dyn_cast<SliceOp>(op)) {
      if (llvm::any_of(s.getSteps(), [](int64_t st) { return st != 1; }))
        return failure();
      chain.push_back(op);
      v = s.getInput();
    } else if (auto n = dyn_cast<NegOp>(op)) {
      scale = -scale;
      v = n.getInput();
    } else if (auto m = dyn_cast<MulOp>(op)) {
      // Only a scalar factor: the other operand keeps the full shape.
      if (auto c = scalarConstant(kernel, m.getRhs()); c && m.getLhs().getType() == m.getType()) {
        scale *= *c;
        v = m.getLhs();
      } else if (auto c = scalarConstant(kernel, m.getLhs());
                 c && m.getRhs().getType() == m.getType()) {
        scale *= *c;
        v = m.getRhs();
      } else {
        return failure();
      }
    } else if (auto d = dyn_cast<DivOp>(op)) {
      auto c = scalarConstant(kernel, d.getRhs());
      if (!c || *c == 0.0 || d.getLhs().getType() != d.getType())
        return failure();
      scale /= *c;
      v = d.getLhs();
    } else {
      return failure();
    }
  }
  // 2. Replay bottom-up.
  StridedView view;
  view.param = cast<BlockArgument>(v);
  view.scale = scale;
  rowMajor(view, cast<RankedTensorType>(v.getType()).getShape());
  for (Operation *op : llvm::reverse(chain)) {
    ArrayRef<int64_t> out = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    if (auto t = dyn_cast<TransposeOp>(op)) {
      StridedView next = view;
      for (auto [i, p] : llvm::enumerate(t.getPerm())) {
        next.shape[i] = view.shape[p];
        next.strides[i] = view.strides[p];
      }
      view = std::move(next);
    } else if (auto s = dyn_cast<SliceOp>(op)) {
      for (auto [d, start] : llvm::enumerate(s.getStarts()))
        view.offset += start * view.strides[d];
      view.shape.assign(out.begin(), out.end());
      for (auto [d, n] : llvm::enumerate(out))
        if (n == 1)
          view.strides[d] = 0;
    } else if (isa<ExpandOp>(op)) {
      // Numpy broadcast: leading new dims and size-1 dims get stride 0.
      SmallVector<int64_t> strides(out.size(), 0);
      size_t lead = out.size() - view.shape.size();
      for (size_t d = 0; d < view.shape.size(); ++d)
        strides[lead + d] = view.shape[d] == 1 ? 0 : view.strides[d];
      view.shape.assign(out.begin(), out.end());
      view.strides = std::move(strides);
    } else if (failed(reshapeView(view, out))) {
      return failure();
    }
  }
  return view;
}

FailureOr<GemmOperandLayout> kiln::codegen::gemmOperandLayout(const StridedView &view,
                                                              int64_t rowDim, int64_t kDim,
                                                              int64_t rows, int64_t kExtent) {
  const int64_t rowStride = rows == 1 ? 0 : view.strides[rowDim];
  const int64_t kStride = kExtent == 1 ? 0 : view.strides[kDim];
  if (kStride == 1 || kExtent == 1)
    return GemmOperandLayout{true, rowStride};
  if (rowStride == 1 || rows == 1)
    return GemmOperandLayout{false, kStride};
  return failure();
}

FailureOr<std::string> kiln::codegen::attnTensorView(KernelOp kernel, Value operand,
                                                     ArrayRef<unsigned> passed,
                                                     const std::string &type, double &scale) {
  FailureOr<StridedView> view = analyzeStridedView(kernel, operand);
  if (failed(view) || view->shape.size() != 4 ||
      !llvm::is_contained(passed, view->param.getArgNumber()))
    return failure();
  if (view->strides[3] != 1 || view->offset % 8)
    return failure();
  for (int d = 0; d < 3; ++d)
    if (view->strides[d] % 8)
      return failure();
  scale *= view->scale;
  std::string ptr = "in" + std::to_string(view->param.getArgNumber());
  if (view->offset)
    ptr += " + " + std::to_string(view->offset) + "LL";
  return llvm::formatv("kiln::AttnTensor<{0}>{{{1}, {2}LL, {3}LL, {4}LL}", type, ptr,
                       view->strides[0], view->strides[1], view->strides[2])
      .str();
}
