//===- FuseSiblingGemms.cpp - one GEMM for GEMMs sharing their input ------===//
//
// Transformer layers multiply one activation by several weights in a row:
// the Q, K and V projections, Llama's gate and up projections. Each is a
// small GEMM at batch 1 (a few blocks on a 132-SM GPU), and each re-reads
// the activation. This file merges such siblings into one GEMM against the
// weights concatenated along N, followed by one kiln.slice per sibling; the
// slices are data movement that fusion folds into their consumers (GEMM and
// attention operand views, pointwise kernels), so no copy is added.
//
// Steps:
//   1. Group kiln.matmul ops by (block, lhs) in program order, keeping those
//      whose rhs is a rank-2 kiln.constant [K, N_i] with N_i % 8 == 0 and
//      whose result (or its bias add's) is not a function result (its slice
//      would be a copy kernel).
//   2. For each group of two or more (whose concatenated weight fits in
//      kMaxSiblingWeightBytes), build the weight [K, sum N_i] at compile
//      time and create the GEMM where the earliest sibling was: its lhs
//      dominates every sibling, and every user of a sibling comes after that
//      sibling, so the new ops dominate all former users.
//   3. When every sibling is read only by an add of a constant bias [N_i]
//      (BERT's projections), the biases are concatenated as well and added
//      once, so the bias stays in the GEMM's epilogue.
//   4. Each sibling's result (or its bias add's) is replaced by a slice of
//      the fused result on the last dim; the old ops and the constants only
//      they read are erased.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/kiln/ConstantCache.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>
#include <functional>

#define DEBUG_TYPE "kiln-fuse-sibling-gemms"

namespace kiln {
#define GEN_PASS_DEF_FUSESIBLINGGEMMS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

DenseElementsAttr kiln::denseFloatConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return nullptr;
  auto attr = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!attr || !isa<FloatType>(attr.getElementType()))
    return nullptr;
  return attr;
}

namespace {

/// Width in elements of the slices the fused GEMM is cut into must be a
/// multiple of this, so that each slice starts on a 16-byte boundary for
/// 16-bit types (tensor-core operand loads read 8 elements at a time).
constexpr int64_t kSliceMultiple = 8;


/// True when `matmul` may join a sibling group: its rhs is a rank-2 float
/// constant [K, N] with N a multiple of kSliceMultiple.
bool isSiblingCandidate(MatMulOp matmul) {
  DenseElementsAttr weight = denseFloatConstant(matmul.getRhs());
  if (!weight)
    return false;
  auto type = cast<RankedTensorType>(weight.getType());
  return type.getRank() == 2 && type.getDimSize(1) % kSliceMultiple == 0;
}

/// Concatenates `parts` (each [rows, N_i] of one element type, dense or
/// splat) along the last dim into a DenseElementsAttr of `type`
/// ([rows, sum N_i] or [sum N_i] for rows = 1), copying raw bytes.
DenseElementsAttr concatColumnsOnce(ArrayRef<DenseElementsAttr> parts, RankedTensorType type,
                                    int64_t rows) {
  size_t bytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  int64_t total = type.getShape().back();
  // Built in this thread's scratch buffer (no zeroing, no fresh pages per weight).
  llvm::MutableArrayRef<char> buffer = kiln::scratchBytes(size_t(rows * total) * bytes);
  int64_t offset = 0;
  for (DenseElementsAttr part : parts) {
    int64_t n = cast<RankedTensorType>(part.getType()).getShape().back();
    ArrayRef<char> raw = part.getRawData();
    for (int64_t r = 0; r < rows; ++r) {
      char *dst = buffer.data() + size_t(r * total + offset) * bytes;
      if (part.isSplat())
        for (int64_t c = 0; c < n; ++c)
          std::memcpy(dst + size_t(c) * bytes, raw.data(), bytes);
      else
        std::memcpy(dst, raw.data() + size_t(r * n) * bytes, size_t(n) * bytes);
    }
    offset += n;
  }
  return DenseElementsAttr::getFromRawBuffer(type, buffer);
}

/// concatColumnsOnce, once per set of weights for all programs of a --shape range
/// (ConstantCache).
DenseElementsAttr concatColumns(ArrayRef<DenseElementsAttr> parts, RankedTensorType type,
                                int64_t rows) {
  Builder b(type.getContext());
  SmallVector<Attribute> key(parts.begin(), parts.end());
  key.push_back(TypeAttr::get(type));
  key.push_back(b.getI64IntegerAttr(rows));
  return cast<DenseElementsAttr>(ConstantCache::get(type.getContext())
                                     .getOrCompute("fuse-sibling-gemms", key, [&]() -> Attribute {
                                       return concatColumnsOnce(parts, type, rows);
                                     }));
}

/// If every sibling's result is read only by an add of a constant bias of
/// shape [N_i] with the sibling's type, returns those adds (in sibling
/// order) and their biases; else empty.
SmallVector<AddOp> matchBiasAdds(ArrayRef<MatMulOp> siblings,
                                 SmallVectorImpl<DenseElementsAttr> &biases) {
  SmallVector<AddOp> adds;
  for (MatMulOp matmul : siblings) {
    Value result = matmul.getResult();
    if (!result.hasOneUse())
      return {};
    auto add = dyn_cast<AddOp>(*result.getUsers().begin());
    if (!add || add.getType() != result.getType() || add.getLhs() == add.getRhs())
      return {};
    Value other = add.getLhs() == result ? add.getRhs() : add.getLhs();
    DenseElementsAttr bias = denseFloatConstant(other);
    auto resultType = cast<RankedTensorType>(result.getType());
    if (!bias || bias.getElementType() != resultType.getElementType() ||
        cast<RankedTensorType>(bias.getType()).getShape() !=
            ArrayRef<int64_t>{resultType.getShape().back()})
      return {};
    adds.push_back(add);
    biases.push_back(bias);
  }
  return adds;
}

/// True when `matmul`'s result, or the result of an add that is its only user (a bias add the
/// fused GEMM would absorb), is returned by the function (directly or through reshapes and
/// casts): that sibling's slice of a fused GEMM would be a copy kernel of its own (20 GEMMs of one
/// activation returned as graph outputs became one GEMM and 20 copies).
bool feedsReturn(MatMulOp matmul) {
  // Returned directly or through reshapes (views that move no data: the slice would still be
  // copied into the output) and casts (kiln-assign-precision's cast of a narrowed result back to
  // the function's f32 result type, which would become the slice's copy kernel).
  std::function<bool(Value, int)> returned = [&](Value v, int depth) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      if (user->hasTrait<OpTrait::IsTerminator>())
        return true;
      return depth < 8 && isa<ReshapeOp, CastOp>(user) && returned(user->getResult(0), depth + 1);
    });
  };
  Value result = matmul.getResult();
  if (returned(result, 0))
    return true;
  if (result.hasOneUse())
    if (auto add = dyn_cast<AddOp>(*result.getUsers().begin()))
      return returned(add.getResult(), 0);
  return false;
}

} // namespace

FailureOr<MatMulOp> kiln::fuseSiblingGemms(RewriterBase &rewriter, ArrayRef<MatMulOp> siblings) {
  if (siblings.size() < 2)
    return failure();
  MatMulOp first = siblings.front();
  Value lhs = first.getLhs();
  auto resultType = cast<RankedTensorType>(first.getType());
  Type elementType = resultType.getElementType();
  int64_t k = cast<RankedTensorType>(lhs.getType()).getShape().back();

  // Check every sibling (each listed once) and find the earliest.
  SmallVector<DenseElementsAttr> weights;
  llvm::SmallPtrSet<Operation *, 4> seen;
  MatMulOp earliest = first;
  int64_t totalN = 0;
  for (MatMulOp matmul : siblings) {
    DenseElementsAttr weight = denseFloatConstant(matmul.getRhs());
    auto type = cast<RankedTensorType>(matmul.getType());
    if (!seen.insert(matmul).second || matmul.getLhs() != lhs ||
        matmul->getBlock() != first->getBlock() || !isSiblingCandidate(matmul) ||
        weight.getElementType() != elementType ||
        cast<RankedTensorType>(weight.getType()).getDimSize(0) != k ||
        type.getShape().drop_back() != resultType.getShape().drop_back() ||
        type.getElementType() != elementType)
      return failure();
    weights.push_back(weight);
    totalN += type.getShape().back();
    if (matmul->isBeforeInBlock(earliest))
      earliest = matmul;
  }
  int64_t weightBytes = k * totalN * int64_t(elementType.getIntOrFloatBitWidth() / 8);
  if (weightBytes > kMaxSiblingWeightBytes) {
    LLVM_DEBUG(llvm::dbgs() << "siblings of " << lhs << ": " << weightBytes
                            << " weight bytes exceed the limit\n");
    return failure();
  }
  SmallVector<DenseElementsAttr> biases;
  SmallVector<AddOp> adds = matchBiasAdds(siblings, biases);

  // Build the fused GEMM (and bias add) where the earliest sibling was.
  SmallVector<Location> locs;
  for (MatMulOp matmul : siblings)
    locs.push_back(matmul.getLoc());
  for (AddOp add : adds)
    locs.push_back(add.getLoc());
  Location loc = rewriter.getFusedLoc(locs);
  rewriter.setInsertionPoint(earliest);
  auto weightType = RankedTensorType::get({k, totalN}, elementType);
  Value weight =
      ConstantOp::create(rewriter, loc, weightType, concatColumns(weights, weightType, k));
  SmallVector<int64_t> fusedShape(resultType.getShape());
  fusedShape.back() = totalN;
  auto fusedType = RankedTensorType::get(fusedShape, elementType);
  auto fused = MatMulOp::create(rewriter, loc, fusedType, lhs, weight);
  Value fusedResult = fused.getResult();
  if (!adds.empty()) {
    auto biasType = RankedTensorType::get({totalN}, elementType);
    Value bias = ConstantOp::create(rewriter, loc, biasType, concatColumns(biases, biasType, 1));
    fusedResult = AddOp::create(rewriter, loc, fusedType, fusedResult, bias);
  }

  // One slice per sibling on the last dim, all created before the earliest
  // sibling (the insertion point) is erased; each replaces its sibling (or
  // the sibling's bias add).
  int64_t offset = 0;
  int64_t rank = resultType.getRank();
  SmallVector<int64_t> steps(rank, 1);
  SmallVector<Value> slices;
  for (MatMulOp matmul : siblings) {
    SmallVector<int64_t> starts(rank, 0);
    starts.back() = offset;
    offset += cast<RankedTensorType>(matmul.getType()).getShape().back();
    slices.push_back(
        SliceOp::create(rewriter, matmul.getLoc(), matmul.getType(), fusedResult, starts, steps));
  }
  llvm::SetVector<Operation *> constants;
  for (auto [i, sibling] : llvm::enumerate(siblings)) {
    Operation *matmul = MatMulOp(sibling).getOperation();
    Operation *replaced = adds.empty() ? matmul : adds[i].getOperation();
    rewriter.replaceAllUsesWith(replaced->getResult(0), slices[i]);
    for (Operation *op : {replaced, matmul})
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp(); def && isa<ConstantOp>(def))
          constants.insert(def);
    if (!adds.empty())
      rewriter.eraseOp(adds[i]);
    rewriter.eraseOp(matmul);
  }
  for (Operation *op : constants)
    if (op->use_empty())
      rewriter.eraseOp(op);
  LLVM_DEBUG(llvm::dbgs() << "fused " << siblings.size() << " GEMMs into " << fused << "\n");
  return fused;
}

namespace {
struct FuseSiblingGemmsPass : public kiln::impl::FuseSiblingGemmsBase<FuseSiblingGemmsPass> {
  void runOnOperation() override {
    // Step 1: candidate siblings by (block, lhs), in program order.
    llvm::MapVector<std::pair<Block *, Value>, SmallVector<MatMulOp>> groups;
    getOperation().walk([&](MatMulOp matmul) {
      if (isSiblingCandidate(matmul) && !feedsReturn(matmul))
        groups[{matmul->getBlock(), matmul.getLhs()}].push_back(matmul);
    });
    // Steps 2-4 for each group.
    IRRewriter rewriter(&getContext());
    for (auto &entry : groups)
      if (entry.second.size() >= 2)
        (void)fuseSiblingGemms(rewriter, entry.second);
  }
};
} // namespace
