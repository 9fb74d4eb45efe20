//===- LaunchMetadata.cpp - names, ONNX nodes and costs of launches -------===//
//
// Reads the importer's node locations back out of the ops of each kiln.kernel, derives the
// model layer from their module scopes, names the launch after its layer and fused ops, and
// estimates FLOPs and compulsory bytes per kernel (LaunchMetadata.h gives the rules). Also finds
// the value range of graph inputs that index embedding tables.
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/LaunchMetadata.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;

namespace {

/// Adds the node a location names, recursing through fused and call-site locations.
void visitLocation(Location loc, SmallVectorImpl<OnnxNodeRef> &out) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      visitLocation(part, out);
    return;
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc)) {
    visitLocation(callSite.getCallee(), out);
    visitLocation(callSite.getCaller(), out);
    return;
  }
  auto name = dyn_cast<NameLoc>(loc);
  if (!name)
    return;
  auto opType = dyn_cast<NameLoc>(name.getChildLoc());
  if (!opType) {
    // Not a node location (an initializer or input: NameLoc(name, file)).
    visitLocation(name.getChildLoc(), out);
    return;
  }
  OnnxNodeRef ref;
  ref.node = name.getName().str();
  ref.opType = opType.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(opType.getChildLoc()))
    if (auto scope = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      ref.scope = scope.str();
  if (llvm::none_of(out, [&](const OnnxNodeRef &seen) { return seen.node == ref.node; }))
    out.push_back(std::move(ref));
}

/// True for "0", "12": a scope component that indexes a ModuleList.
bool isIndex(StringRef component) {
  return !component.empty() && llvm::all_of(component, llvm::isDigit);
}

/// The ops whose kernel emitter is chosen by them and whose layer names the kernel.
bool isMainOp(Operation *op) {
  return isa<MatMulOp, AttentionOp, LayerNormOp, RmsNormOp, SoftmaxOp, ReduceOp, ArgReduceOp,
             SampleOp>(op);
}

uint64_t numElements(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return static_cast<uint64_t>(shaped.getNumElements());
}

uint64_t byteSize(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return 0;
  return llvm::SaturatingMultiply(
      numElements(type), static_cast<uint64_t>(getElementByteSize(shaped.getElementType())));
}

uint64_t mul(uint64_t a, uint64_t b) { return llvm::SaturatingMultiply(a, b); }
uint64_t add(uint64_t a, uint64_t b) { return llvm::SaturatingAdd(a, b); }

/// FLOPs of one op of a kernel body (LaunchMetadata.h, KernelCost).
uint64_t opFlops(Operation *op) {
  if (isa<ReshapeOp, TransposeOp, SliceOp, ConcatOp, ExpandOp, GatherOp, GatherElementsOp,
          GatherNDOp, CastOp, ConstantOp, ShapeOp, RangeOp, YieldOp>(op))
    return 0;
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    uint64_t k = lhs.getRank() ? static_cast<uint64_t>(lhs.getShape().back()) : 1;
    return mul(mul(2, numElements(matmul.getType())), k);
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    auto query = cast<RankedTensorType>(attention.getQuery().getType());
    auto key = cast<RankedTensorType>(attention.getKey().getType());
    if (query.getRank() < 2 || key.getRank() < 2)
      return 0;
    int64_t sq = query.getShape()[query.getRank() - 2];
    int64_t sk = key.getShape()[key.getRank() - 2];
    uint64_t dense = mul(mul(2, static_cast<uint64_t>(sk)),
                         add(numElements(query), numElements(attention.getType())));
    if (!attention.getCausal() || sq <= 0 || sk <= 0)
      return dense;
    // Bottom-right causal: query i sees keys [0, i + sk - sq], clamped to [0, sk].
    uint64_t visible = 0;
    for (int64_t i = 0; i < sq; ++i)
      visible += static_cast<uint64_t>(std::clamp<int64_t>(i + 1 + sk - sq, 0, sk));
    double fraction = static_cast<double>(visible) / (static_cast<double>(sq) * sk);
    return static_cast<uint64_t>(static_cast<double>(dense) * fraction);
  }
  uint64_t inputElements = op->getNumOperands() ? numElements(op->getOperand(0).getType()) : 0;
  if (isa<LayerNormOp>(op))
    return mul(8, inputElements);
  if (isa<RmsNormOp>(op))
    return mul(4, inputElements);
  if (isa<SoftmaxOp>(op))
    return mul(5, inputElements);
  if (isa<ReduceOp, ArgReduceOp>(op))
    return inputElements;
  if (isa<SampleOp>(op)) // the greedy pass; a sampled row makes several
    return inputElements;
  uint64_t resultElements = op->getNumResults() ? numElements(op->getResult(0).getType()) : 0;
  if (isa<RotaryOp>(op))
    return mul(3, resultElements);
  return resultElements;
}

} // namespace

void kiln::collectOnnxNodes(Location loc, SmallVectorImpl<OnnxNodeRef> &out) {
  visitLocation(loc, out);
}

KernelCost kiln::estimateKernelCost(KernelOp kernel) {
  KernelCost cost;
  Block &body = kernel.getBody().front();
  for (Operation &op : body)
    cost.flops = add(cost.flops, opFlops(&op));
  // Each distinct operand once; a table read only through gathers counts the gathered rows.
  llvm::SmallDenseSet<Value> seen;
  for (auto [i, operand] : llvm::enumerate(kernel.getInputs())) {
    if (!seen.insert(operand).second)
      continue;
    BlockArgument arg = body.getArgument(i);
    uint64_t full = byteSize(operand.getType());
    bool onlyGathered = !arg.use_empty();
    uint64_t gathered = 0;
    for (OpOperand &use : arg.getUses()) {
      auto gather = dyn_cast<GatherOp>(use.getOwner());
      if (!gather || gather.getData() != arg) {
        onlyGathered = false;
        break;
      }
      gathered = add(gathered, byteSize(gather.getType()));
    }
    cost.bytesRead = add(cost.bytesRead, onlyGathered ? std::min(full, gathered) : full);
  }
  for (Value result : kernel.getResults())
    cost.bytesWritten = add(cost.bytesWritten, byteSize(result.getType()));
  return cost;
}

LaunchNamer::LaunchNamer(func::FuncOp func) {
  func.walk([&](Operation *op) {
    SmallVector<OnnxNodeRef> refs;
    collectOnnxNodes(op->getLoc(), refs);
    for (const OnnxNodeRef &ref : refs) {
      SmallVector<StringRef> parts;
      StringRef(ref.scope).split(parts, '.');
      // Every prefix above the first index component contains numbered blocks.
      for (size_t i = 1; i < parts.size(); ++i) {
        if (!isIndex(parts[i]))
          continue;
        for (size_t j = 1; j < i; ++j)
          containers.insert(llvm::join(ArrayRef(parts).take_front(j), "."));
        break;
      }
    }
  });
}

std::string LaunchNamer::layerOf(StringRef scope) const {
  if (scope.empty())
    return std::string();
  SmallVector<StringRef> parts;
  scope.split(parts, '.');
  // 1. A numbered block: "<list>.<index>.<child>".
  for (size_t i = 1; i < parts.size(); ++i)
    if (isIndex(parts[i]))
      return llvm::join(ArrayRef(parts).slice(i - 1, std::min<size_t>(3, parts.size() - i + 1)),
                        ".");
  // 2. Drop the longest container prefix; keep two components.
  size_t drop = 0;
  for (size_t j = parts.size(); j > 0; --j)
    if (containers.contains(llvm::join(ArrayRef(parts).take_front(j), "."))) {
      drop = j;
      break;
    }
  if (drop == parts.size())
    return std::string();
  ArrayRef<StringRef> rest = ArrayRef(parts).drop_front(drop);
  return llvm::join(rest.take_front(2), ".");
}

LaunchMetadata LaunchNamer::describe(KernelOp kernel) const {
  LaunchMetadata meta;
  Block &body = kernel.getBody().front();
  SmallVector<OnnxNodeRef> nodes;
  Operation *mainOp = nullptr;
  for (Operation &op : body) {
    if (isa<YieldOp>(op))
      continue;
    meta.ops.push_back(op.getName().stripDialect().str());
    if (!mainOp && isMainOp(&op))
      mainOp = &op;
    collectOnnxNodes(op.getLoc(), nodes);
  }
  meta.nodeCount = static_cast<uint32_t>(nodes.size());
  for (const OnnxNodeRef &ref : ArrayRef(nodes).take_front(kMaxLaunchNodeNames))
    meta.nodes.push_back(ref.node);

  // Layer: the main op's, else the first op's that has one.
  auto layerOfOp = [&](Operation *op) {
    SmallVector<OnnxNodeRef> refs;
    collectOnnxNodes(op->getLoc(), refs);
    for (const OnnxNodeRef &ref : refs)
      if (std::string layer = layerOf(ref.scope); !layer.empty())
        return layer;
    return std::string();
  };
  if (mainOp)
    meta.layer = layerOfOp(mainOp);
  for (Operation &op : body) {
    if (!meta.layer.empty())
      break;
    meta.layer = layerOfOp(&op);
  }

  // Name: the layer and the distinct ops, main op first, views left out.
  SmallVector<std::string> shown;
  if (mainOp)
    shown.push_back(mainOp->getName().stripDialect().str());
  for (const std::string &op : meta.ops)
    if (op != "reshape" && !llvm::is_contained(shown, op))
      shown.push_back(op);
  if (shown.empty())
    shown.push_back("reshape");
  constexpr size_t kShownOps = 4;
  std::string ops = llvm::join(ArrayRef(shown).take_front(kShownOps), "+");
  if (shown.size() > kShownOps)
    ops += "+...";
  meta.name = meta.layer.empty() ? ops : meta.layer + ": " + ops;
  meta.cost = estimateKernelCost(kernel);
  return meta;
}

std::optional<InputValueRange> kiln::indexInputRange(func::FuncOp func, unsigned argNumber) {
  std::optional<int64_t> rows;
  SmallVector<Value> worklist = {func.getArgument(argNumber)};
  llvm::SmallDenseSet<Value> visited;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!visited.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto reshape = dyn_cast<ReshapeOp>(user)) {
        worklist.push_back(reshape.getResult());
      } else if (auto castOp = dyn_cast<CastOp>(user)) {
        // Integer-to-integer casts keep every value a valid index had.
        if (isa<IntegerType>(getElementTypeOrSelf(castOp.getType())))
          worklist.push_back(castOp.getResult());
      } else if (auto kernel = dyn_cast<KernelOp>(user)) {
        worklist.push_back(kernel.getBody().front().getArgument(use.getOperandNumber()));
      } else if (auto gather = dyn_cast<GatherOp>(user)) {
        if (gather.getIndices() != value)
          continue;
        auto table = cast<RankedTensorType>(gather.getData().getType());
        int64_t axis = gather.getAxis();
        if (axis < 0)
          axis += table.getRank();
        if (axis < 0 || axis >= table.getRank() || ShapedType::isDynamic(table.getDimSize(axis)))
          continue;
        int64_t count = table.getDimSize(axis);
        rows = rows ? std::min(*rows, count) : count;
      }
    }
  }
  if (!rows || *rows <= 0)
    return std::nullopt;
  return InputValueRange{0, *rows - 1};
}
