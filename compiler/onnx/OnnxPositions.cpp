//===- OnnxPositions.cpp - position_ids for a plain causal-LM export ------===//
//
// kiln-compile --kv-cache compiles a decoder's forward pass as one generation
// step whose token positions the runtime gives through the `position_ids`
// input (seq_lens[b] + i; docs/generation.md). An export with cache I/O has
// that input. A plain causal-LM export (input_ids -> logits) computes its
// positions inside the graph from Range(0, S, 1) (Hugging Face's
// `cache_position`), which folds into the constant 0..S-1 at a static shape,
// so every step would restart at position 0.
//
// StepPositionIds (declared in OnnxOpImport.h) follows that Range through the
// graph as it is imported. The uses that look positions up (a Gather from a
// position table, a Cast to float for rotary frequencies) read a new
// `position_ids` [B, S] argument instead; the uses that build the attention
// mask (integer ops ending in a comparison) keep the constant, since with an
// empty past the mask must still fold into `causal` on kiln.attention, which
// kiln-paged-kv-cache then turns into attention over the cache. The rewritten
// graph is the one an export with `position_ids` gives (form a), so the rest
// of the --kv-cache pipeline applies unchanged. docs/importer.md ("Plain
// causal-LM exports under --kv-cache") lists the rules and the errors.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// What a rewrite error tells the user to do instead.
constexpr const char *kExportHint =
    ". Export the model with a position_ids input instead (e.g. examples/export/export_hf.py "
    "--task causal-lm --with-past)";

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

/// An integer type that is not bool (i1).
bool isIndexType(Type t) { return isa<IntegerType>(t) && !t.isInteger(1); }

/// Ops whose result holds operand 0's values, rearranged or repeated along dims (integer
/// Casts keep the small non-negative positions): a position lookup may read positions through
/// them, and the rewrite can give it position_ids in their place.
bool isView(const onnx::NodeProto &node, ArrayRef<Value> results) {
  StringRef op = node.op_type();
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" ||
      op == "Expand" || op == "Identity")
    return true;
  return op == "Cast" && results.size() == 1 && results[0] &&
         isIndexType(elementTypeOf(results[0]));
}

/// The value of integer attribute `name` of `node`, or `dflt` when the node does not have it.
int64_t intAttr(const onnx::NodeProto &node, StringRef name, int64_t dflt) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return a.i();
  return dflt;
}

/// The element type a Cast node converts to; null without a (supported) `to` attribute.
Type castTarget(const onnx::NodeProto &node, MLIRContext *ctx) {
  int64_t to = intAttr(node, "to", onnx::TensorProto::UNDEFINED);
  return to == onnx::TensorProto::UNDEFINED ? Type() : getElementType(ctx, int32_t(to));
}

/// True when node `node` reads operand `i` of `inputs` as positions to look up: the indices of
/// a Gather from a constant float table (learned position embeddings), or the operand of a Cast
/// / CastLike to a float type (positions times inverse frequencies: rotary embeddings).
bool isPositionLookup(const onnx::NodeProto &node, unsigned i, ArrayRef<Value> inputs) {
  StringRef op = node.op_type();
  if (op == "Gather")
    return i == 1 && inputs.size() >= 2 && inputs[0] && isa<FloatType>(elementTypeOf(inputs[0])) &&
           matchPattern(inputs[0], m_Constant());
  if (op == "Cast")
    return i == 0 && isa_and_nonnull<FloatType>(castTarget(node, inputs[0].getContext()));
  if (op == "CastLike")
    return i == 0 && inputs.size() >= 2 && inputs[1] && isa<FloatType>(elementTypeOf(inputs[1]));
  return false;
}

/// The integer constant values of `v` when they are `rows` repetitions of 0..tokens-1 in
/// row-major order (`rows` = the first dim, or the whole tensor for rank 1); false otherwise.
bool holdsPositionRows(Value v, int64_t tokens) {
  DenseIntElementsAttr values;
  if (!matchPattern(v, m_Constant(&values)) || !isIndexType(elementTypeOf(v)) || tokens < 1)
    return false;
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rows = type.getRank() == 1 ? 1 : type.getDimSize(0);
  if (type.getRank() == 0 || type.getNumElements() != rows * tokens)
    return false;
  int64_t k = 0;
  for (const APInt &x : values.getValues<APInt>())
    if (x.getSExtValue() != k++ % tokens)
      return false;
  return true;
}

} // namespace

LogicalResult StepPositionIds::rewriteOperands(const onnx::NodeProto &node, int index,
                                               MutableArrayRef<Value> inputs, OpBuilder &builder,
                                               Location loc) {
  replacedNow.clear();
  for (auto [i, name] : llvm::enumerate(node.input())) {
    if (i >= inputs.size() || !inputs[i])
      continue;
    auto it = carriers.find(name);
    if (it == carriers.end() || !isPositionLookup(node, i, inputs))
      continue;
    const Carrier carrier = it->second;
    auto type = cast<RankedTensorType>(inputs[i].getType());
    // A table lookup along another axis would put the batch dim of position_ids inside the
    // result, not in front of it.
    if (node.op_type() == "Gather") {
      int64_t rank = cast<RankedTensorType>(inputs[0].getType()).getRank();
      int64_t axis = intAttr(node, "axis", 0);
      if (axis != 0 && axis != -rank) {
        callbacks.nodeError(index)
            << "unsupported: looks the token positions of node "
            << callbacks.describeNode(carrier.range) << " up along axis " << axis
            << " of its table; with --kv-cache kiln replaces them by the position_ids input ["
            << batch << ", " << tokens
            << "], whose batch dim leads the result only in a lookup along axis 0" << kExportHint;
        return failure();
      }
    }
    if (carrier.via >= 0) {
      callbacks.nodeError(index) << "unsupported: reads the token positions of node "
                                 << callbacks.describeNode(carrier.range) << " through node "
                                 << callbacks.describeNode(carrier.via)
                                 << "; with --kv-cache kiln turns the positions of a plain "
                                    "export into the position_ids input only where a position "
                                    "lookup reads them through Unsqueeze, Squeeze, Reshape, "
                                    "Flatten, Expand, Identity or an integer Cast"
                                 << kExportHint;
      return failure();
    }
    // [1 or B, ...] with the S positions in order after the batch dim: position_ids [B, S]
    // reshaped to it.
    int64_t rows = type.getRank() >= 2 ? type.getDimSize(0) : 0;
    if (!holdsPositionRows(inputs[i], tokens) || (rows != 1 && rows != batch)) {
      callbacks.nodeError(index)
          << "unsupported: reads the token positions of node "
          << callbacks.describeNode(carrier.range) << " as " << type
          << "; with --kv-cache kiln replaces them by the position_ids input [" << batch << ", "
          << tokens << "], which needs them shaped [1, ...] or [" << batch
          << ", ...] with the positions 0.." << tokens - 1
          << " in order after that batch dim (Hugging Face's position_ids = "
             "cache_position.unsqueeze(0))"
          << kExportHint;
      return failure();
    }
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = batch;
    Value positions = callbacks.argument();
    auto positionsType = cast<RankedTensorType>(positions.getType());
    if (positionsType.getShape() != ArrayRef<int64_t>(shape))
      positions = builder.createOrFold<ReshapeOp>(loc, positionsType.clone(shape), positions);
    if (type.getElementType() != positionsType.getElementType())
      positions = builder.createOrFold<CastOp>(loc, type.clone(shape), positions);
    inputs[i] = positions;
    ranges[carrier.range].replaced = true;
    replacedNow.push_back(i);
  }
  return success();
}

void StepPositionIds::noteResults(const onnx::NodeProto &node, int index, ArrayRef<Value> results) {
  StringRef op = node.op_type();
  if (op == "Shape" || op == "Size")
    return; // they read the shape only
  // 1. A positions Range: 0..S-1 once folded.
  if (op == "Range" && results.size() == 1 && results[0] &&
      cast<RankedTensorType>(results[0].getType()).getRank() == 1 &&
      holdsPositionRows(results[0], tokens)) {
    carriers[node.output(0)] = {index, -1};
    ranges.try_emplace(index);
    return;
  }
  // 2. The operands that carry positions, except those a lookup now reads from position_ids.
  std::optional<Carrier> from;
  bool dataOnly = true;
  for (auto [i, name] : llvm::enumerate(node.input())) {
    if (name.empty() || llvm::is_contained(replacedNow, unsigned(i)))
      continue;
    auto it = carriers.find(name);
    if (it == carriers.end())
      continue;
    if (!from)
      from = it->second;
    dataOnly &= i == 0;
  }
  if (!from)
    return;
  bool allBool = true, anyFloat = false;
  for (Value r : results) {
    if (!r)
      continue;
    Type t = elementTypeOf(r);
    allBool &= t.isInteger(1);
    anyFloat |= isa<FloatType>(t);
  }
  // 3. A comparison: the attention mask, which keeps the constant positions.
  if (allBool)
    return;
  // 4. A float value that is not a position lookup: finish() decides whether it matters.
  if (anyFloat) {
    RangeUses &uses = ranges[from->range];
    if (uses.otherUse < 0)
      uses.otherUse = index;
    return;
  }
  // 5. Integer results carry the positions on; through a view of a view they stay a view.
  const bool view = dataOnly && from->via < 0 && isView(node, results);
  const int via = view ? -1 : (from->via >= 0 ? from->via : index);
  for (auto [i, name] : llvm::enumerate(node.output()))
    if (!name.empty() && i < results.size() && results[i])
      carriers[name] = {from->range, via};
}

LogicalResult StepPositionIds::finish() {
  for (const auto &[range, uses] : ranges) {
    if (!uses.replaced || uses.otherUse < 0)
      continue;
    callbacks.nodeError(uses.otherUse)
        << "unsupported: computes a float value from the token positions of node "
        << callbacks.describeNode(range)
        << ", whose position lookups now read the position_ids input (--kv-cache on a plain "
           "export), but it is neither a position lookup (a Gather from a constant float "
           "table, a Cast to float) nor part of the attention mask (integer ops ending in a "
           "comparison), so kiln cannot tell whether it needs the step's positions or the "
           "constant 0.."
        << tokens - 1 << kExportHint;
    return failure();
  }
  return success();
}
