//===- KernelPlan.cpp - kernel-plan queries shared by passes and codegen --===//
//
// The precision of a function and the gated-unit (GLU) halves of a GEMM:
// questions kiln-fuse-pointwise and kiln-select-tiles ask when they plan a
// kernel and the GEMM code generator asks again when it emits it.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KernelPlan.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace kiln;

Precision kiln::getPrecision(Operation *op) {
  Operation *func = isa<FunctionOpInterface>(op) ? op : op->getParentOfType<FunctionOpInterface>();
  if (func)
    if (auto p = func->getAttrOfType<PrecisionAttr>(kPrecisionAttrName))
      return p.getValue();
  return Precision::FP32;
}

RowStatsOp kiln::getRowStats(KernelOp kernel) {
  for (Operation &op : kernel.getBodyBlock())
    if (auto r = dyn_cast<RowStatsOp>(op))
      return r;
  return nullptr;
}

int64_t kiln::fewRowGemmRows(MatMulOp matmul) {
  ArrayRef<int64_t> shape = matmul.getType().getShape();
  int64_t batch = 1;
  for (int64_t d : shape.drop_back(2))
    batch *= d;
  const int64_t m = shape[shape.size() - 2];
  int64_t rhsBatch = 1;
  for (int64_t d : cast<RankedTensorType>(matmul.getRhs().getType()).getShape().drop_back(2))
    rhsBatch *= d;
  return rhsBatch == 1 ? batch * m : (batch == 1 ? m : 0);
}

bool kiln::isFewRowGemm(MatMulOp matmul) {
  const int64_t rows = fewRowGemmRows(matmul);
  const int64_t n = matmul.getType().getShape().back();
  const int64_t k = cast<RankedTensorType>(matmul.getLhs().getType()).getShape().back();
  return rows >= 1 && rows <= 16 && n % 4 == 0 && k >= 64;
}

std::optional<GluHalves> kiln::getGluHalves(Operation *gemm) {
  auto type = cast<RankedTensorType>(gemm->getResult(0).getType());
  if (type.getShape().back() % 2)
    return std::nullopt;
  GluHalves halves;
  halves.y = gemm->getResult(0);
  while (halves.y.hasOneUse()) {
    Operation *u = *halves.y.getUsers().begin();
    // Same shape; the element type may change (a folded norm computes in f32 and casts back).
    if (!isElementwise(u) || u->getNumResults() != 1 ||
        cast<RankedTensorType>(u->getResult(0).getType()).getShape() != type.getShape())
      break;
    halves.y = u->getResult(0);
    halves.chain.push_back(u);
  }
  int64_t rank = type.getRank();
  for (Operation *u : halves.y.getUsers()) {
    auto s = dyn_cast<SliceOp>(u);
    if (!s)
      return std::nullopt;
    int64_t start = s.getStarts().back();
    Value &half = start == 0 ? halves.even : halves.odd;
    if (s.getSteps().back() != 2 || start > 1 || half ||
        cast<RankedTensorType>(s.getType()).getShape().back() != type.getShape().back() / 2)
      return std::nullopt;
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (s.getStarts()[d] != 0 || s.getSteps()[d] != 1 ||
          cast<RankedTensorType>(s.getType()).getDimSize(d) != type.getDimSize(d))
        return std::nullopt;
    half = s.getResult();
  }
  if (!halves.even || !halves.odd)
    return std::nullopt;
  return halves;
}

std::optional<unsigned> kiln::getInPlaceInput(KernelOp kernel, unsigned resultIndex) {
  auto yield = dyn_cast<YieldOp>(kernel.getBody().front().getTerminator());
  if (!yield || resultIndex >= yield.getNumOperands())
    return std::nullopt;
  auto result = dyn_cast<OpResult>(yield.getOperand(resultIndex));
  auto append = result ? dyn_cast<KvCacheAppendOp>(result.getOwner()) : KvCacheAppendOp();
  if (!append)
    return std::nullopt;
  Value cache = result.getResultNumber() == 0 ? append.getKeyCache() : append.getValueCache();
  auto arg = dyn_cast<BlockArgument>(cache);
  if (!arg || arg.getOwner() != &kernel.getBody().front())
    return std::nullopt;
  return arg.getArgNumber();
}
