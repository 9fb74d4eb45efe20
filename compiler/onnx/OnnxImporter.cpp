//===- OnnxImporter.cpp - ONNX model -> kiln dialect ----------------------===//
//
// The graph importer: loads the model file, checks the opset, specializes
// graph input types with --shape, orders the nodes topologically (file order
// where it already is one), imports them through the op table filled by the
// per-family files, and returns the graph outputs from `func.func @main`.
//
// Steps of importOnnxFile:
//   1. read and parse the file (OnnxProto.cpp), reject what is not a model;
//   2. find the default-domain opset (kMinOpset..kMaxOpset accepted);
//   3. give each graph input a static type (dims from the file, `dim_param`s
//      from InputShapes) and create the function;
//   4. order the nodes so that each comes after the producers of its
//      operands (sortNodes: stable, a cycle is an error naming its nodes);
//      then import each node: resolve operands (initializers become
//      `kiln.constant` on first use), find the handler by domain (default or
//      com.microsoft) and op type, check attributes, run the handler, record
//      its results;
//   5. return the graph outputs, checking them against their declared types;
//   6. erase constants left unused by folding, verify the module.
//
// Only the main graph is imported: subgraphs (If/Loop/Scan bodies) belong to
// control-flow ops, which kiln does not import (unsupported operators).
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxImporter.h"
#include "compiler/onnx/OnnxOpImport.h"
#include "compiler/onnx/OnnxProto.h"

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Path.h"

#include <functional>
#include <queue>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;
using llvm::Expected;

/// Default-domain opsets the importer accepts. Within the range each handler
/// follows the version of its op that the model's opset selects. 28 is the
/// newest opset of the ONNX 1.23 spec; of the ops kiln imports, versions 25
/// to 28 only add element types (int2/uint2, float6: rejected as data types)
/// except Attention-25 (sliding-window attributes), Range-27 (stash_type)
/// and Mod-28 (fmod = 0 on floats); their handlers check those.
static constexpr int64_t kMinOpset = 7, kMaxOpset = 28;

/// The opset in which a supported op first appeared in the default domain
/// (ONNX operator changelog); 1 for the ops older than opset 7.
static int64_t firstOpsetOf(llvm::StringRef opType) {
  return llvm::StringSwitch<int64_t>(opType)
      .Cases({"Erf", "IsNaN", "Where", "ConstantOfShape"}, 9)
      .Case("Expand", 8)
      .Cases({"ThresholdedRelu", "Sign", "Mod"}, 10)
      .Cases({"Range", "CumSum", "GatherElements", "GatherND"}, 11)
      .Cases({"LessOrEqual", "GreaterOrEqual", "Celu", "Einsum"}, 12)
      .Cases({"HardSwish", "Trilu"}, 14)
      .Case("CastLike", 15)
      .Case("LayerNormalization", 17)
      .Case("Mish", 18)
      .Case("Gelu", 20)
      .Cases({"RMSNormalization", "RotaryEmbedding", "Attention"}, 23)
      .Case("TensorScatter", 24)
      .Default(1);
}

//===----------------------------------------------------------------------===//
// --shape parsing
//===----------------------------------------------------------------------===//

/// Newest ONNX IR version kiln reads: 14 (onnx 1.23). A model claiming a
/// newer one is refused like onnx.checker and onnxruntime refuse it; IR
/// versions before 3 predate opset_import, which kiln needs.
static constexpr int64_t kMinIrVersion = 3, kMaxIrVersion = 14;

/// Largest number of outputs a node of `opType` may list (its ONNX schema),
/// std::nullopt for a variadic output list (Split). Ops not named here have
/// one output.
static std::optional<int> maxOutputsOf(StringRef opType) {
  if (opType == "Split")
    return std::nullopt;
  return llvm::StringSwitch<int>(opType)
      .Case("Dropout", 2)
      .Case("SimplifiedLayerNormalization", 2)
      .Case("LayerNormalization", 3)
      .Cases({"Attention", "GroupQueryAttention", "SkipLayerNormalization",
              "SkipSimplifiedLayerNormalization"},
             4)
      .Default(1);
}

/// Name of the AttributeProto field that holds a value of `type`.
static StringRef attributeFieldName(onnx::AttributeProto::AttributeType type) {
  switch (type) {
  case onnx::AttributeProto::FLOAT: return "f";
  case onnx::AttributeProto::INT: return "i";
  case onnx::AttributeProto::STRING: return "s";
  case onnx::AttributeProto::TENSOR: return "t";
  case onnx::AttributeProto::GRAPH: return "g";
  case onnx::AttributeProto::SPARSE_TENSOR: return "sparse_tensor";
  case onnx::AttributeProto::TYPE_PROTO: return "tp";
  case onnx::AttributeProto::FLOATS: return "floats";
  case onnx::AttributeProto::INTS: return "ints";
  case onnx::AttributeProto::STRINGS: return "strings";
  case onnx::AttributeProto::TENSORS: return "tensors";
  case onnx::AttributeProto::GRAPHS: return "graphs";
  case onnx::AttributeProto::SPARSE_TENSORS: return "sparse_tensors";
  case onnx::AttributeProto::TYPE_PROTOS: return "type_protos";
  default: return "";
  }
}

/// The value fields `a` sets, by their AttributeProto names.
static SmallVector<StringRef> setAttributeFields(const onnx::AttributeProto &a) {
  SmallVector<StringRef> fields;
  if (a.has_f()) fields.push_back("f");
  if (a.has_i()) fields.push_back("i");
  if (a.has_s()) fields.push_back("s");
  if (a.has_t()) fields.push_back("t");
  if (a.has_g()) fields.push_back("g");
  if (a.has_sparse_tensor()) fields.push_back("sparse_tensor");
  if (a.has_tp()) fields.push_back("tp");
  if (a.floats_size()) fields.push_back("floats");
  if (a.ints_size()) fields.push_back("ints");
  if (a.strings_size()) fields.push_back("strings");
  if (a.tensors_size()) fields.push_back("tensors");
  if (a.graphs_size()) fields.push_back("graphs");
  if (a.sparse_tensors_size()) fields.push_back("sparse_tensors");
  if (a.type_protos_size()) fields.push_back("type_protos");
  return fields;
}

/// The onnx.checker rule for one attribute: a declared type, whose value
/// field is the only one set (a list type may be empty). Returns the reason
/// it is malformed, or an empty string.
static std::string checkAttributeFields(const onnx::AttributeProto &a) {
  StringRef expected = attributeFieldName(a.type());
  if (expected.empty())
    return "has no valid type (AttributeProto.type is " + std::to_string(int(a.type())) + ")";
  SmallVector<StringRef> fields = setAttributeFields(a);
  bool isList = a.type() == onnx::AttributeProto::FLOATS ||
                a.type() == onnx::AttributeProto::INTS ||
                a.type() == onnx::AttributeProto::STRINGS ||
                a.type() == onnx::AttributeProto::TENSORS ||
                a.type() == onnx::AttributeProto::GRAPHS ||
                a.type() == onnx::AttributeProto::SPARSE_TENSORS ||
                a.type() == onnx::AttributeProto::TYPE_PROTOS;
  for (StringRef f : fields)
    if (f != expected)
      return ("is declared " + onnx::AttributeProto::AttributeType_Name(a.type()) +
              " but sets the field '" + f + "' (expected '" + expected + "' only)")
          .str();
  if (fields.empty() && !isList)
    return ("is declared " + onnx::AttributeProto::AttributeType_Name(a.type()) +
            " but has no value in its field '" + expected + "'")
        .str();
  return "";
}

Expected<InputShapes> kiln::parseShapeSpec(StringRef spec) {
  InputShapes shapes;
  llvm::StringMap<StringRef> entryOf; // input name -> its entry, for "given twice"
  StringRef entry;
  // Quotes only the entry at fault, not the whole (joined) spec.
  auto error = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid --shape '" + entry + "': " + msg);
  };
  SmallVector<StringRef> entries;
  spec.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef e : entries) {
    entry = e.trim();
    auto [name, dims] = entry.split('=');
    name = name.trim();
    if (!entry.contains('='))
      return error("'" + entry + "' is not NAME=DIMxDIM...");
    if (name.empty())
      return error("'" + entry + "' has no input name");
    SmallVector<int64_t> shape;
    dims = dims.trim();
    if (!dims.empty()) {
      SmallVector<StringRef> parts;
      dims.split(parts, 'x');
      uint64_t elements = 1;
      for (auto [i, part] : llvm::enumerate(parts)) {
        uint64_t d;
        if (part.empty())
          return error("dim " + Twine(i) + " of '" + name + "' is empty (expected DIMxDIM..., " +
                       "e.g. 1x128)");
        if (!llvm::all_of(part, llvm::isDigit))
          return error("dim '" + part + "' of '" + name + "' is not a non-negative integer");
        if (part.getAsInteger(10, d))
          return error("dim '" + part + "' of '" + name + "' is too large");
        std::optional<uint64_t> product = llvm::checkedMulUnsigned(elements, d);
        if (!product || *product > uint64_t(kMaxImportElements))
          return error("'" + name + "' has more than 2^40 elements");
        elements = *product;
        shape.push_back(int64_t(d));
      }
    }
    if (!shapes.try_emplace(name, std::move(shape)).second)
      return error("input '" + name + "' is given twice (first as '" + entryOf[name] + "')");
    entryOf[name] = entry;
  }
  return shapes;
}

//===----------------------------------------------------------------------===//
// OpRegistry
//===----------------------------------------------------------------------===//

void OpRegistry::add(StringRef opType, OpImportFn fn,
                     std::initializer_list<const char *> attributes) {
  OpImporter importer{fn, {}};
  for (const char *a : attributes)
    importer.attributes.push_back(a);
  bool inserted = table.try_emplace(opType, std::move(importer)).second;
  assert(inserted && "op type registered twice");
  (void)inserted;
}

const OpImporter *OpRegistry::lookup(StringRef opType) const {
  auto it = table.find(opType);
  return it == table.end() ? nullptr : &it->second;
}

/// The domain of onnxruntime's contrib ops.
static constexpr llvm::StringLiteral kMicrosoftDomain = "com.microsoft";

/// The tables of all supported ops, built once: the default domain and
/// com.microsoft.
struct OpRegistries {
  OpRegistry onnx, microsoft;
};
static const OpRegistries &getOpRegistries() {
  static const OpRegistries registries = [] {
    OpRegistries r;
    registerElementwiseOps(r.onnx);
    registerShapeOps(r.onnx);
    registerMovementOps(r.onnx);
    registerMathOps(r.onnx);
    registerEinsumOps(r.onnx);
    registerContribOps(r.onnx, r.microsoft);
    registerMatMulNBits(r.microsoft);
    registerGroupQueryAttention(r.microsoft);
    return r;
  }();
  return registries;
}

/// The reason given for an unsupported com.microsoft op: onnxruntime's fused
/// attention ops get a hint to export the standard form instead.
static std::string unsupportedMicrosoftOpReason(StringRef opType) {
  static constexpr llvm::StringLiteral kAttentionOps[] = {
      "Attention",       "MultiHeadAttention",       "PackedAttention",
      "PackedMultiHeadAttention", "DecoderMaskedSelfAttention",
      "SparseAttention", "DecoderMaskedMultiHeadAttention"};
  if (!llvm::is_contained(kAttentionOps, opType))
    return "";
  return ": kiln does not import onnxruntime's fused attention contrib ops; export the model "
         "without the onnxruntime transformer optimizer (the standard ONNX MatMul/Softmax or "
         "Attention-23 form, which kiln fuses itself)";
}

//===----------------------------------------------------------------------===//
// NodeImporter
//===----------------------------------------------------------------------===//

/// "node '<name>' (<op>, opset <n>): ", with "<domain>::" before the op
/// outside the default domain.
static InFlightDiagnostic emitNodeError(Location loc, StringRef displayName,
                                        const onnx::NodeProto &node, int64_t version) {
  bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
  InFlightDiagnostic diag = mlir::emitError(loc);
  diag << "node '" << displayName << "' ("
       << (defaultDomain ? "" : node.domain() + "::") << node.op_type() << ", opset " << version
       << "): ";
  return diag;
}

InFlightDiagnostic NodeImporter::emitError() {
  return emitNodeError(loc, displayName, node, domainVersion);
}

LogicalResult NodeImporter::emitUnsupported(const Twine &reason) {
  return emitError() << "unsupported: " << reason;
}

LogicalResult NodeImporter::checkNumInputs(unsigned minCount, unsigned maxCount) {
  unsigned n = inputs.size();
  if (n >= minCount && n <= maxCount) {
    for (unsigned i = 0; i < minCount; ++i)
      if (!inputs[i])
        return emitError() << "operand " << i << " is empty but required";
    return success();
  }
  InFlightDiagnostic diag = emitError() << "expects ";
  if (minCount == maxCount)
    diag << minCount;
  else
    diag << minCount << " to " << maxCount;
  return diag << " operands, got " << n;
}

const onnx::AttributeProto *NodeImporter::findAttr(StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

FailureOr<int64_t> NodeImporter::getIntAttr(StringRef name, int64_t dflt) {
  const onnx::AttributeProto *a = findAttr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::INT)
    return emitError() << "attribute '" << name << "' must be an INT";
  return a->i();
}

FailureOr<float> NodeImporter::getFloatAttr(StringRef name, float dflt) {
  const onnx::AttributeProto *a = findAttr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT)
    return emitError() << "attribute '" << name << "' must be a FLOAT";
  return a->f();
}

FailureOr<std::string> NodeImporter::getStringAttr(StringRef name, StringRef dflt) {
  const onnx::AttributeProto *a = findAttr(name);
  if (!a)
    return dflt.str();
  if (a->type() != onnx::AttributeProto::STRING)
    return emitError() << "attribute '" << name << "' must be a STRING";
  return a->s();
}

FailureOr<std::optional<SmallVector<int64_t>>> NodeImporter::getIntsAttr(StringRef name) {
  const onnx::AttributeProto *a = findAttr(name);
  if (!a)
    return std::optional<SmallVector<int64_t>>();
  if (a->type() != onnx::AttributeProto::INTS)
    return emitError() << "attribute '" << name << "' must be INTS";
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(a->ints().begin(), a->ints().end()));
}

FailureOr<DenseElementsAttr> NodeImporter::getTensorAttr(StringRef name) {
  const onnx::AttributeProto *a = findAttr(name);
  if (!a)
    return DenseElementsAttr();
  if (a->type() != onnx::AttributeProto::TENSOR)
    return emitError() << "attribute '" << name << "' must be a TENSOR";
  Expected<DenseElementsAttr> value = tensors.load(a->t());
  if (!value)
    return emitError() << "attribute '" << name << "': " << llvm::toString(value.takeError());
  return *value;
}

FailureOr<DenseElementsAttr> NodeImporter::getConstantInput(unsigned i, StringRef what) {
  DenseElementsAttr attr;
  if (!hasInput(i) || !matchPattern(inputs[i], m_Constant(&attr)))
    return emitUnsupported(Twine(what) + " of " + node.op_type() +
                           " must be a constant after shape specialization");
  return attr;
}

FailureOr<SmallVector<int64_t>> NodeImporter::getConstantInts(unsigned i, StringRef what) {
  FailureOr<DenseElementsAttr> attr = getConstantInput(i, what);
  if (failed(attr))
    return failure();
  Type elem = attr->getElementType();
  if (!elem.isInteger(64) && !elem.isInteger(32))
    return emitError() << what << " must be an integer tensor, got " << attr->getType();
  SmallVector<int64_t> values;
  for (const APInt &v : attr->getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

Value NodeImporter::createConstant(DenseElementsAttr value) {
  return ConstantOp::create(builder, loc, value.getType(), value);
}

Value NodeImporter::createScalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  if (auto ft = dyn_cast<FloatType>(elementType)) {
    APFloat v(value);
    bool loses;
    v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &loses);
    return createConstant(DenseElementsAttr::get(type, v));
  }
  if (elementType.isInteger(1))
    return createConstant(DenseElementsAttr::get(type, value != 0.0));
  return createConstant(DenseElementsAttr::get(
      type, APInt(elementType.getIntOrFloatBitWidth(), uint64_t(int64_t(value)),
                  /*isSigned=*/true, /*implicitTrunc=*/true)));
}

Value NodeImporter::createReshape(Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  return create<ReshapeOp>(type.clone(shape), v);
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank, StringRef what) {
  if (axis < -rank || axis >= rank)
    return emitError() << what << " " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

FailureOr<int64_t> NodeImporter::getAxisAttr(StringRef name, int64_t dflt, int64_t rank) {
  FailureOr<int64_t> axis = getIntAttr(name, dflt);
  if (failed(axis))
    return failure();
  return normalizeAxis(*axis, rank, name);
}

FailureOr<SmallVector<int64_t>> NodeImporter::broadcast(ArrayRef<int64_t> a,
                                                        ArrayRef<int64_t> b) {
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(a, b);
  if (failed(shape))
    return emitError() << "operand shapes " << formatShape(a) << " and " << formatShape(b)
                       << " are not broadcast-compatible";
  if (!checkedElementCount(*shape))
    return emitError() << "broadcasting " << formatShape(a) << " and " << formatShape(b)
                       << " gives " << formatShape(*shape) << ", more than 2^40 elements";
  return shape;
}

LogicalResult NodeImporter::checkSameElementType(unsigned i, unsigned j) {
  Type a = getInputType(i).getElementType(), b = getInputType(j).getElementType();
  if (a == b)
    return success();
  return emitError() << "operand element types differ: " << a << " (operand " << i
                     << ") and " << b << " (operand " << j
                     << "); ONNX requires equal types";
}

LogicalResult NodeImporter::checkFloat(unsigned i, StringRef what) {
  if (isa<FloatType>(getInputType(i).getElementType()))
    return success();
  return emitError() << "unsupported: " << what << " of type " << getInputType(i)
                     << " (a floating-point tensor is required)";
}

//===----------------------------------------------------------------------===//
// Graph import
//===----------------------------------------------------------------------===//

namespace {

/// True for the names of a generation step's past cache inputs (Hugging Face's
/// `past_key_values.{i}.key/.value`, older exports' `past.{i}...`).
bool isPastCacheName(StringRef name) {
  return name.starts_with("past_key_values.") || name.starts_with("past.");
}

/// True for com.microsoft GroupQueryAttention.
bool isGroupQueryAttention(const onnx::NodeProto &node) {
  return node.op_type() == "GroupQueryAttention" && node.domain() == "com.microsoft";
}

/// The past cache inputs of `graph` that only com.microsoft GroupQueryAttention nodes read, as
/// their past_key and past_value (onnxruntime-genai's exports). Under ImportOptions::emptyPast
/// the step leaves them out: each such node's past is absent (empty), and the runtime owns the
/// cache (their head size is often symbolic, so an empty past could not even be shaped). A
/// node's key and value leave together or stay together (a past also read by another node, or
/// a pair of which one is not a past cache input, stays an input: kiln gives it an empty past
/// when it can shape one, and the node checks the pair).
llvm::StringSet<> groupQueryAttentionPasts(const onnx::GraphProto &graph) {
  llvm::StringSet<> gqaUse, otherUse;
  for (const onnx::NodeProto &node : graph.node()) {
    const bool gqa = isGroupQueryAttention(node);
    for (auto [slot, name] : llvm::enumerate(node.input()))
      if (isPastCacheName(name))
        (gqa && (slot == 3 || slot == 4) ? gqaUse : otherUse).insert(name);
  }
  for (const onnx::ValueInfoProto &out : graph.output())
    otherUse.insert(out.name());
  llvm::StringSet<> only;
  for (const auto &entry : gqaUse)
    if (!otherUse.contains(entry.getKey()))
      only.insert(entry.getKey());
  // Pairs: keep both halves of a node's past when either stays (until nothing changes: a past
  // may be shared by nodes).
  for (bool changed = true; changed;) {
    changed = false;
    for (const onnx::NodeProto &node : graph.node()) {
      if (!isGroupQueryAttention(node))
        continue;
      std::string key = node.input_size() > 3 ? node.input(3) : "",
                  value = node.input_size() > 4 ? node.input(4) : "";
      if (only.contains(key) != only.contains(value)) {
        only.erase(key);
        only.erase(value);
        changed = true;
      }
    }
  }
  return only;
}

/// The graph input name of a function argument (its `kiln.name`), or "".
StringRef nameOfArgument(BlockArgument arg) {
  auto func = dyn_cast_or_null<func::FuncOp>(arg.getOwner()->getParentOp());
  if (auto name =
          func ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name") : StringAttr())
    return name.getValue();
  return "";
}

/// Imports one ModelProto's main graph into a new module.
class GraphImporter {
public:
  GraphImporter(MLIRContext &ctx, StringRef path, const onnx::ModelProto &model,
                const InputShapes &shapes, const ImportOptions &options)
      : ctx(ctx), builder(&ctx), path(path), model(model), graph(model.graph()), shapes(shapes),
        options(options), fileLoc(FileLineColLoc::get(&ctx, path, 0, 0)),
        tensors(&ctx, llvm::sys::path::parent_path(path)) {}

  OwningOpRef<ModuleOp> run();

private:
  LogicalResult checkOpsets();
  FailureOr<RankedTensorType> getInputType(const onnx::ValueInfoProto &input);
  /// The indices of the graph's nodes in an order where every node follows
  /// the nodes that produce its operands: the file order where that already
  /// holds (ONNX requires it, but exporters and graph editors do not always
  /// keep it, and onnxruntime sorts too). Among the nodes whose operands are
  /// all available, the one that comes first in the file is taken next, so a
  /// sorted graph keeps its order exactly. Also rejects a tensor defined by
  /// two nodes. Fails, after an error naming the nodes of one cycle, when the
  /// nodes depend on each other in a cycle.
  FailureOr<SmallVector<int>> sortNodes();
  /// The name diagnostics use for node `index`: its own, or `<OpType>_<index>`
  /// (`index` is its position in the file).
  std::string displayNameOf(int index) const;
  /// The location of node `index`: NameLoc(display name, NameLoc(op type,
  /// file or fused module scope)).
  Location nodeLocation(int index);
  /// The version of the node's domain the model imports (the default
  /// domain's opset; 0 when the model does not import the node's domain).
  int64_t domainVersionOf(const onnx::NodeProto &node) const;
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  LogicalResult checkOutputType(const onnx::ValueInfoProto &output, Value value);
  /// The value named `name`: a node result, graph input or initializer
  /// (materialized as `kiln.constant` on first use); null if undefined.
  FailureOr<Value> lookup(StringRef name);

  MLIRContext &ctx;
  OpBuilder builder;
  StringRef path;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  const InputShapes &shapes;
  const ImportOptions &options;
  Location fileLoc;
  TensorLoader tensors;
  int64_t opset = 0;
  llvm::StringMap<Value> values;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  /// Graph inputs that are not initializers (the function's arguments).
  llvm::StringSet<> argumentNames;
  /// Under emptyPast, the past cache inputs only GroupQueryAttention nodes read
  /// (groupQueryAttentionPasts): not arguments; the nodes see an absent past.
  llvm::StringSet<> leftOutPasts;
  llvm::StringSet<> usedNames;
  /// ImportOptions::derivePositionIds on a model without a position_ids input: the rewrite of
  /// its positions, while run() imports the nodes.
  std::optional<StepPositionIds> positions;
  /// ImportOptions::emptyPast: a TensorScatter-24 cache write into an empty past cache input
  /// (the cache the runtime owns) is its update, as Concat(empty past, new) is the new keys.
  /// Sets the node's result and returns true for such a node; false for any other node;
  /// failure (after an error naming the node) for a cache write kiln's cache cannot replace.
  FailureOr<bool> importCacheWrite(const onnx::NodeProto &node, ArrayRef<Value> inputs,
                                   const std::function<InFlightDiagnostic()> &nodeError);
  /// Under emptyPast, drops the arguments only importCacheWrite's writes read (their
  /// write_indices: each sequence's past length, which the runtime owns) once nothing else
  /// reads them; an error names the node that still does.
  LogicalResult dropPastLengthArguments(func::FuncOp func, SmallVectorImpl<Type> &argTypes);
  /// Under emptyPast: whether `v` (an attention's K or V operand) is, through views (transposes,
  /// reshapes), a cache write importCacheWrite replaced by its update or a concatenation after
  /// an empty past cache input (a torch export's Concat(past, new)).
  bool readsCache(Value v) const;
  /// Under emptyPast: the step's positions [B, S] int64 for an attention node that rotates by
  /// them itself (GroupQueryAttention): the model's `position_ids` input (cast to int64), else
  /// the argument ImportOptions::derivePositionIds appends. Fails after `nodeError` when the
  /// model has neither (no `input_ids` [B, S] to shape one from).
  FailureOr<Value> stepPositionIds(const std::function<InFlightDiagnostic()> &nodeError);
  /// The updates importCacheWrite made a cache write's result, and the arguments read as the
  /// writes' write_indices (and nonpad_kv_seqlen inputs the attentions over them no longer read).
  llvm::DenseSet<Value> grownCaches;
  SmallVector<BlockArgument> pastLengthArgs;
  /// Under emptyPast: GroupQueryAttention nodes were imported as generation steps (their
  /// lengths the runtime's), and the seqlens_k / total_sequence_length inputs they read.
  bool gqaSteps = false;
  SmallVector<BlockArgument> gqaLengthArgs;
};

} // namespace

LogicalResult GraphImporter::checkOpsets() {
  bool found = false;
  for (const onnx::OperatorSetIdProto &id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") {
      found = true;
      opset = id.version();
    }
  }
  if (!found)
    return emitError(fileLoc) << "ONNX model '" << path
                              << "' does not import the default ONNX opset";
  if (opset < kMinOpset || opset > kMaxOpset)
    return emitError(fileLoc) << "ONNX model '" << path << "': unsupported: opset " << opset
                              << " of the default domain (kiln imports opsets " << kMinOpset
                              << " to " << kMaxOpset << ")";
  return success();
}

FailureOr<RankedTensorType> GraphImporter::getInputType(const onnx::ValueInfoProto &input) {
  const std::string &name = input.name();
  auto error = [&]() {
    return emitError(NameLoc::get(StringAttr::get(&ctx, name), fileLoc))
           << "graph input '" << name << "': ";
  };
  if (!input.type().has_tensor_type())
    return error() << "unsupported: only tensor inputs are supported";
  const onnx::TypeProto::Tensor &tt = input.type().tensor_type();
  Type elem = getElementType(&ctx, tt.elem_type());
  if (!elem)
    return error() << unsupportedDataTypeMessage(tt.elem_type());

  auto given = shapes.find(name);
  SmallVector<int64_t> shape;
  SmallVector<std::string> symbols;
  if (tt.has_shape()) {
    for (const onnx::TensorShapeProto::Dimension &d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        shape.push_back(d.dim_value());
      } else {
        shape.push_back(ShapedType::kDynamic);
        symbols.push_back(d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
      }
    }
  }
  if (given == shapes.end()) {
    if (!tt.has_shape())
      return error() << "has unknown rank; give its shape with --shape " << name << "=...";
    if (!symbols.empty()) {
      InFlightDiagnostic diag = error() << "symbolic dims ";
      llvm::interleaveComma(symbols, diag, [&](const std::string &s) { diag << "'" << s << "'"; });
      return diag << " need a value; give its shape with --shape " << name << "=...";
    }
    if (!checkedElementCount(shape))
      return error() << "shape " << formatShape(shape) << " has more than 2^40 elements";
    return RankedTensorType::get(shape, elem);
  }
  ArrayRef<int64_t> want = given->second;
  if (!checkedElementCount(want))
    return error() << "--shape " << formatShape(want) << " has more than 2^40 elements";
  if (tt.has_shape() && want.size() != shape.size())
    return error() << "--shape gives rank " << want.size() << " " << formatShape(want)
                   << " but the input has rank " << shape.size();
  for (auto [i, d] : llvm::enumerate(shape)) {
    // A past cache of a fixed length (a static cache for TensorScatter) is empty in a generation
    // step whose cache the runtime owns (ImportOptions::emptyPast).
    if (options.emptyPast && isPastCacheName(name) && want[i] == 0)
      continue;
    if (d != ShapedType::kDynamic && d != want[i])
      return error() << "--shape gives dim " << i << " = " << want[i]
                     << " but the model fixes it to " << d;
  }
  return RankedTensorType::get(want, elem);
}

FailureOr<Value> GraphImporter::lookup(StringRef name) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = initializers.find(name);
  if (init == initializers.end())
    return Value();
  Location loc = NameLoc::get(StringAttr::get(&ctx, name), fileLoc);
  DenseElementsAttr value =
      options.initializers ? options.initializers->lookup(name) : DenseElementsAttr();
  if (!value) {
    Expected<DenseElementsAttr> attr = tensors.load(*init->second);
    if (!attr) {
      return emitError(loc) << "initializer '" << name
                            << "': " << llvm::toString(attr.takeError());
    }
    value = *attr;
    if (options.initializers)
      options.initializers->insert(name, value);
  }
  Value v = ConstantOp::create(builder, loc, value.getType(), value);
  values[name] = v;
  return v;
}

std::string kiln::onnxNodeScope(StringRef nodeName,
                                ArrayRef<std::pair<std::string, std::string>> metadata) {
  // 1. Dynamo exports: the innermost module of the name-scope list.
  for (const auto &[key, value] : metadata) {
    if (key != "pkg.torch.onnx.name_scopes")
      continue;
    // A Python list of quoted strings; module paths hold no quotes.
    SmallVector<StringRef> entries;
    StringRef rest = StringRef(value).trim();
    if (!rest.consume_front("[") || !rest.consume_back("]"))
      return std::string();
    while (!(rest = rest.ltrim(" ,")).empty()) {
      char quote = rest.front();
      if (quote != '\'' && quote != '"')
        return std::string();
      size_t end = rest.find(quote, 1);
      if (end == StringRef::npos)
        return std::string();
      entries.push_back(rest.slice(1, end));
      rest = rest.drop_front(end + 1);
    }
    if (entries.size() < 3 || !entries.front().empty())
      return std::string();
    return entries[entries.size() - 2].str();
  }
  // 2. Legacy exports: "/a/b.0/c/Node" -> "a.b.0.c".
  if (!nodeName.starts_with("/"))
    return std::string();
  SmallVector<StringRef> parts;
  nodeName.drop_front().split(parts, '/', -1, /*KeepEmpty=*/false);
  if (parts.size() < 2)
    return std::string();
  parts.pop_back();
  return llvm::join(parts, ".");
}

std::string GraphImporter::displayNameOf(int index) const {
  const onnx::NodeProto &node = graph.node(index);
  return node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
}

Location GraphImporter::nodeLocation(int index) {
  const onnx::NodeProto &node = graph.node(index);
  // NameLoc(node name, NameLoc(op type, file)): later diagnostics (folding,
  // size checks, memory planning) name both the node and its op type. The
  // node's module scope, when it shows one, rides along as the metadata of a
  // fused location around the file, so that kernels can be named after the
  // model's layers (compiler/artifact/LaunchMetadata.h).
  Location inner = fileLoc;
  std::string scope = onnxNodeScope(node.name(), nodeMetadataProps(node));
  if (!scope.empty())
    inner = FusedLoc::get(&ctx, {fileLoc}, StringAttr::get(&ctx, scope));
  return NameLoc::get(StringAttr::get(&ctx, displayNameOf(index)),
                      NameLoc::get(StringAttr::get(&ctx, node.op_type()), inner));
}

int64_t GraphImporter::domainVersionOf(const onnx::NodeProto &node) const {
  if (node.domain().empty() || node.domain() == "ai.onnx")
    return opset;
  int64_t version = 0;
  for (const onnx::OperatorSetIdProto &id : model.opset_import())
    if (id.domain() == node.domain())
      version = id.version();
  return version;
}

FailureOr<SmallVector<int>> GraphImporter::sortNodes() {
  int n = graph.node_size();
  // 1. The node that defines each tensor, in file order; a second definition
  // is an error (ONNX graphs are in SSA form).
  llvm::StringMap<int> producerOf;
  for (int i = 0; i < n; ++i) {
    for (const std::string &name : graph.node(i).output()) {
      if (name.empty())
        continue;
      auto [it, inserted] = producerOf.try_emplace(name, i);
      if (!inserted)
        return emitNodeError(nodeLocation(i), displayNameOf(i), graph.node(i),
                             domainVersionOf(graph.node(i)))
               << "output '" << name << "' is already produced by node '"
               << displayNameOf(it->second) << "' (a tensor name must be defined once)";
    }
  }

  // 2. Node i waits for the producers of its operands. Graph inputs and
  // initializers are available from the start; a node output of the same name
  // is an error importNode reports, as is an operand that nothing defines.
  auto producerOfOperand = [&](StringRef name) -> int {
    if (name.empty() || argumentNames.contains(name) || initializers.contains(name))
      return -1;
    auto it = producerOf.find(name);
    return it == producerOf.end() ? -1 : it->second;
  };
  SmallVector<SmallVector<int>> users(n);
  SmallVector<int> waiting(n, 0);
  for (int i = 0; i < n; ++i) {
    SmallVector<int> producers;
    for (const std::string &name : graph.node(i).input())
      if (int p = producerOfOperand(name); p >= 0)
        producers.push_back(p);
    llvm::sort(producers);
    producers.erase(llvm::unique(producers), producers.end());
    for (int p : producers)
      users[p].push_back(i);
    waiting[i] = int(producers.size());
  }

  // 3. Kahn's algorithm, always taking the ready node that comes first in the
  // file: a graph that is already sorted keeps its order exactly.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (waiting[i] == 0)
      ready.push(i);
  SmallVector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--waiting[u] == 0)
        ready.push(u);
  }
  if (int(order.size()) == n)
    return order;

  // 4. The nodes left wait on each other. Each has an operand produced by
  // another node left: following those operands from the first node left
  // comes back to a node already on the walk, which closes a cycle.
  SmallVector<int> walk;
  SmallVector<StringRef> walkReads; // walkReads[k]: the tensor walk[k] reads of walk[k + 1]
  llvm::DenseMap<int, int> positionOnWalk;
  int cur = int(llvm::find_if(waiting, [](int w) { return w > 0; }) - waiting.begin());
  while (!positionOnWalk.count(cur)) {
    positionOnWalk[cur] = int(walk.size());
    walk.push_back(cur);
    for (const std::string &name : graph.node(cur).input()) {
      int p = producerOfOperand(name);
      if (p >= 0 && waiting[p] > 0) {
        walkReads.push_back(name);
        cur = p;
        break;
      }
    }
    assert(walkReads.size() == walk.size() && "a node left by Kahn's algorithm waits on another");
  }
  // The cycle in data-flow order.
  int start = positionOnWalk[cur];
  SmallVector<int> flow(llvm::reverse(ArrayRef<int>(walk).drop_front(start)));
  SmallVector<StringRef> reads(ArrayRef<StringRef>(walkReads).drop_front(start));
  size_t m = flow.size();
  auto describe = [&](int i) {
    return "'" + displayNameOf(i) + "' (" + graph.node(i).op_type() + ")";
  };
  InFlightDiagnostic diag = emitError(fileLoc);
  diag << "the graph of '" << path << "' has a cycle (ONNX graphs are acyclic): ";
  if (m == 1)
    return diag << "node " << describe(flow[0]) << " reads its own output '" << reads[0] << "'";
  // Starting at the node that comes first in the file, at most kMaxCycleNodes
  // edges; flow[k] feeds flow[k + 1] the tensor reads[m - 1 - (k + 1) % m].
  constexpr size_t kMaxCycleNodes = 8;
  size_t first = llvm::min_element(flow) - flow.begin();
  diag << "node " << describe(flow[first]);
  for (size_t j = 0; j < m && j < kMaxCycleNodes; ++j) {
    size_t k = (first + j) % m;
    diag << (j ? ", which" : "") << " feeds '" << reads[m - 1 - (k + 1) % m] << "' to "
         << describe(flow[(k + 1) % m]);
  }
  if (m > kMaxCycleNodes)
    diag << ", ... (" << m << " nodes in the cycle)";
  return diag;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node, int index) {
  std::string displayName = displayNameOf(index);
  Location loc = nodeLocation(index);

  // 1. Domain and op type: the default domain (its version is `opset`) or
  // com.microsoft (version 1, the only one onnxruntime defines).
  bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
  int64_t version = domainVersionOf(node);
  auto nodeError = [&]() { return emitNodeError(loc, displayName, node, version); };
  const OpImporter *importer = nullptr;
  if (defaultDomain)
    importer = getOpRegistries().onnx.lookup(node.op_type());
  else if (node.domain() == kMicrosoftDomain)
    importer = getOpRegistries().microsoft.lookup(node.op_type());
  if (!importer) {
    if (defaultDomain)
      return nodeError() << "unsupported operator";
    return nodeError() << "unsupported operator '" << node.domain() << "." << node.op_type()
                       << "'"
                       << (node.domain() == kMicrosoftDomain
                               ? unsupportedMicrosoftOpReason(node.op_type())
                               : std::string());
  }
  if (!defaultDomain && version == 0)
    return nodeError() << "the model does not import the " << node.domain()
                       << " domain (opset_import has no entry for it)";
  if (!defaultDomain && version != 1)
    return nodeError() << "unsupported: version " << version << " of the " << node.domain()
                       << " domain (kiln imports version 1)";
  if (int64_t first = firstOpsetOf(node.op_type()); defaultDomain && opset < first)
    return nodeError() << "unsupported: " << node.op_type() << " is not in opset " << opset
                       << " of the default domain (it first appears in opset " << first << ")";

  // 2. Structure (onnx.checker's rules; docs/importer.md): at most as many
  // outputs as the op's schema has, each attribute once, its value in the
  // field its type names. Then each attribute must be one the handler
  // understands.
  std::optional<int> maxOutputs = maxOutputsOf(node.op_type());
  if (node.output_size() == 0)
    return nodeError() << "has no outputs; every ONNX operator has at least one";
  if (maxOutputs && node.output_size() > *maxOutputs)
    return nodeError() << "has " << node.output_size() << " outputs; " << node.op_type()
                       << " has at most " << *maxOutputs;
  llvm::StringSet<> attributeNames;
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (!attributeNames.insert(a.name()).second)
      return nodeError() << "attribute '" << a.name() << "' is given twice";
    if (std::string reason = checkAttributeFields(a); !reason.empty())
      return nodeError() << "attribute '" << a.name() << "' " << reason;
  }
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (!llvm::is_contained(importer->attributes, a.name()))
      return nodeError() << "unsupported: attribute '" << a.name() << "'";
    if (!a.ref_attr_name().empty())
      return nodeError() << "unsupported: attribute '" << a.name()
                         << "' refers to a function attribute";
  }

  // 3. Operands (trailing empty names are absent optional operands).
  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty() || leftOutPasts.contains(name)) {
      inputs.push_back(Value());
      continue;
    }
    FailureOr<Value> v = lookup(name);
    if (failed(v))
      return failure();
    if (!*v)
      return nodeError() << "operand '" << name
                         << "' is not defined: no graph input, initializer or node output has "
                            "that name";
    inputs.push_back(*v);
  }
  // A position lookup of a plain export reads position_ids instead (ImportOptions).
  if (positions && failed(positions->rewriteOperands(node, index, inputs, builder, loc)))
    return failure();
  SmallVector<bool> outputUsed;
  for (const std::string &name : node.output())
    outputUsed.push_back(!name.empty() && usedNames.contains(name));
  // ONNX graphs are in SSA form: every tensor name is defined once (a second
  // node output of the same name was rejected by sortNodes).
  for (const std::string &name : node.output()) {
    if (name.empty())
      continue;
    if (argumentNames.contains(name))
      return nodeError() << "output '" << name << "' is also a graph input";
    if (initializers.count(name))
      return nodeError() << "output '" << name << "' is also an initializer";
  }

  // A generation step's cache write and the attention that reads it (ImportOptions::emptyPast).
  if (options.emptyPast && defaultDomain) {
    FailureOr<bool> written = importCacheWrite(node, inputs, nodeError);
    if (failed(written))
      return failure();
    if (*written)
      return success();
    if (node.op_type() == "Attention" && inputs.size() >= 3 &&
        ((inputs.size() > 4 && inputs[4]) || readsCache(inputs[1]) || readsCache(inputs[2]))) {
      // What kiln's paged attention does not compute: refused here, where the step's few tokens
      // cannot hide it (a window of W keys looks causal over at most W + 1 new tokens).
      for (const onnx::AttributeProto &a : node.attribute()) {
        // A window of L keys before the query sees every cached position when a sequence holds
        // at most L + 1 tokens.
        if (a.name() == "left_window_size" && a.i() >= 0 &&
            (options.maxSeqLen <= 0 || options.maxSeqLen > a.i() + 1))
          return nodeError() << "--kv-cache: a sliding window (left_window_size " << a.i()
                             << ") over the KV cache: kiln's paged attention attends to every "
                                "cached position of a sequence; with --max-seq-len "
                             << a.i() + 1 << " or less the window holds them all";
        if (a.name() == "softcap" && a.f() != 0.0f)
          return nodeError() << "--kv-cache: softcap " << a.f()
                             << " on attention over the KV cache: kiln's paged attention has no "
                                "softcap";
      }
      if (outputUsed.size() > 3 && outputUsed[3])
        return nodeError() << "--kv-cache: output 3 (qk_matmul_output) is used: kiln's paged "
                              "attention does not keep the scores";
      // Attention over this step's keys only: every key is valid, and the runtime masks by its
      // own sequence lengths, as for an attention_mask of ones.
      if (inputs.size() > 6 && inputs[6] && readsCache(inputs[1]) && readsCache(inputs[2])) {
        // A nonpad_kv_seqlen given as an input of its own leaves the step with it.
        if (auto arg = dyn_cast<BlockArgument>(inputs[6]);
            arg && arg.getOwner() == builder.getBlock() && !llvm::is_contained(pastLengthArgs, arg))
          pastLengthArgs.push_back(arg);
        inputs[6] = Value();
      }
    }
  }

  // onnxruntime-genai's GroupQueryAttention keeps its own cache and computes its positions and
  // lengths from the attention mask: in a generation step it reads the step's positions
  // (ImportOptions::emptyPast, docs/importer.md "GroupQueryAttention under --kv-cache").
  std::optional<NodeImporter::GenerationStep> generationStep;
  if (options.emptyPast && node.domain() == kMicrosoftDomain &&
      node.op_type() == "GroupQueryAttention") {
    generationStep.emplace();
    generationStep->maxSeqLen = options.maxSeqLen;
    bool rotary = false;
    for (const onnx::AttributeProto &a : node.attribute())
      rotary |= a.name() == "do_rotary" && a.i() != 0;
    if (rotary) {
      FailureOr<Value> p = stepPositionIds(nodeError);
      if (failed(p))
        return failure();
      generationStep->positions = *p;
    }
    // Lengths given as inputs of their own leave the step with the mask (nothing else may read
    // them: dropPastLengthArguments).
    for (unsigned slot : {5u, 6u})
      if (auto arg = slot < inputs.size() ? dyn_cast_or_null<BlockArgument>(inputs[slot])
                                          : BlockArgument();
          arg && arg.getOwner() == builder.getBlock() && !llvm::is_contained(gqaLengthArgs, arg))
        gqaLengthArgs.push_back(arg);
    gqaSteps = true;
  }

  // 4. The handler.
  NodeImporter importerState(builder, loc, node, displayName, opset, version, std::move(inputs),
                             std::move(outputUsed), tensors);
  if (generationStep)
    importerState.setGenerationStep(*generationStep);
  if (failed(importer->fn(importerState)))
    return failure();

  // 5. Results. Every shape a handler computes from model data is bounded
  // (checkedElementCount), so later element counts cannot overflow.
  for (auto [i, name] : llvm::enumerate(node.output())) {
    if (name.empty())
      continue;
    Value v = importerState.getResults()[i];
    if (v && !checkedElementCount(cast<RankedTensorType>(v.getType()).getShape()))
      return nodeError() << "output " << i << " ('" << name << "') is " << v.getType()
                         << ", more than 2^40 elements; use smaller --shape values";
    if (!v) {
      if (importerState.isOutputUsed(i))
        return nodeError() << "unsupported: output " << i << " ('" << name << "') is used";
      continue;
    }
    values[name] = v;
  }
  if (positions)
    positions->noteResults(node, index, importerState.getResults());
  return success();
}

FailureOr<bool>
GraphImporter::importCacheWrite(const onnx::NodeProto &node, ArrayRef<Value> inputs,
                                const std::function<InFlightDiagnostic()> &nodeError) {
  if (node.op_type() != "TensorScatter" || inputs.size() < 2 || !inputs[0] || !inputs[1])
    return false;
  auto past = dyn_cast<BlockArgument>(inputs[0]);
  if (!past || past.getOwner() != builder.getBlock() || !isPastCacheName(nameOfArgument(past)))
    return false;
  auto pastType = cast<RankedTensorType>(inputs[0].getType()),
       update = cast<RankedTensorType>(inputs[1].getType());
  int64_t axis = -2;
  std::string mode = "linear";
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (a.name() == "axis")
      axis = a.i();
    else if (a.name() == "mode")
      mode = a.s();
  }
  const int64_t rank = pastType.getRank();
  if (rank < 2 || update.getRank() != rank || axis < -rank || axis >= rank)
    return false; // the handler's errors
  axis = axis < 0 ? axis + rank : axis;
  if (pastType.getDimSize(axis) != 0)
    return false;
  if (inputs.size() > 2 && inputs[2]) {
    auto w = cast<RankedTensorType>(inputs[2].getType());
    if (!w.getElementType().isInteger(64) || w.getRank() != 1 ||
        w.getDimSize(0) != pastType.getDimSize(0)) {
      nodeError() << "write_indices " << w << " must be int64 [batch_size] = ["
                  << pastType.getDimSize(0) << "]";
      return failure();
    }
  }
  if (mode != "linear") {
    nodeError() << "--kv-cache: cache '" << nameOfArgument(past) << "' is written with mode '"
                << mode
                << "' (a ring buffer); kiln's paged KV cache keeps every position of a sequence, "
                   "so only mode 'linear' can use it";
    return failure();
  }
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && pastType.getDimSize(d) != update.getDimSize(d)) {
      nodeError() << "update " << update << " does not match the cache '" << nameOfArgument(past)
                  << "' " << pastType << " outside dim " << axis;
      return failure();
    }
  values[node.output(0)] = inputs[1];
  grownCaches.insert(inputs[1]);
  if (inputs.size() > 2 && inputs[2])
    if (auto w = dyn_cast<BlockArgument>(inputs[2]);
        w && w.getOwner() == builder.getBlock() && !llvm::is_contained(pastLengthArgs, w))
      pastLengthArgs.push_back(w);
  return true;
}

FailureOr<Value>
GraphImporter::stepPositionIds(const std::function<InFlightDiagnostic()> &nodeError) {
  if (auto it = values.find("position_ids");
      it != values.end() && argumentNames.contains("position_ids")) {
    Value ids = it->second;
    auto type = cast<RankedTensorType>(ids.getType());
    if (type.getRank() != 2 || !isa<IntegerType>(type.getElementType()) ||
        type.getElementType().isInteger(1))
      return nodeError() << "--kv-cache: the step's positions are the 'position_ids' input, "
                            "which must be an integer [batch, sequence] tensor, got "
                         << type;
    if (!type.getElementType().isInteger(64))
      ids = builder.createOrFold<CastOp>(ids.getLoc(), type.clone(builder.getI64Type()), ids);
    return ids;
  }
  if (!positions)
    return nodeError() << "--kv-cache: the step's positions need an 'input_ids' input [batch, "
                          "sequence] (kiln adds a 'position_ids' input of that shape, which the "
                          "runtime fills)";
  return positions->argument();
}

bool GraphImporter::readsCache(Value v) const {
  for (int depth = 0; v && depth < 8; ++depth) {
    if (grownCaches.contains(v))
      return true;
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (isa<TransposeOp, ReshapeOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    if (auto cat = dyn_cast<ConcatOp>(def); cat && cat->getNumOperands() == 2) {
      auto past = dyn_cast<BlockArgument>(cat->getOperand(0));
      return past && isPastCacheName(nameOfArgument(past));
    }
    return false;
  }
  return false;
}

LogicalResult GraphImporter::dropPastLengthArguments(func::FuncOp func,
                                                     SmallVectorImpl<Type> &argTypes) {
  if (pastLengthArgs.empty() && !gqaSteps)
    return success();
  // What only computed nonpad_kv_seqlen for the attentions that no longer read it, or the
  // lengths of GroupQueryAttention steps.
  IRRewriter rewriter(&ctx);
  (void)runRegionDCE(rewriter, func.getBody());
  llvm::BitVector drop(func.getNumArguments());
  if (gqaSteps) {
    // onnxruntime-genai's models read the attention mask only for GroupQueryAttention's
    // lengths, which are now the runtime's; anything else computed from the mask (positions from
    // its cumulative sum, a mask over the past) would see the ones kiln-bind-generation-inputs
    // makes of it, every step.
    for (BlockArgument arg : func.getArguments()) {
      if (nameOfArgument(arg) != "attention_mask" || arg.use_empty())
        continue;
      Operation *user = *arg.getUsers().begin();
      return emitError(user->getLoc())
             << "--kv-cache: this op reads 'attention_mask' for something other than the "
                "seqlens_k and total_sequence_length of the GroupQueryAttention nodes that keep "
                "the KV cache; kiln's runtime owns the sequence lengths and gives the step no "
                "mask (it would be all ones in every step), so positions or masks computed from "
                "it would be wrong. Export the model with its positions in a position_ids input";
    }
    for (BlockArgument arg : gqaLengthArgs) {
      if (!arg.use_empty())
        return emitError((*arg.getUsers().begin())->getLoc())
               << "--kv-cache: input '" << nameOfArgument(arg)
               << "' is a GroupQueryAttention node's seqlens_k or total_sequence_length, which "
                  "kiln's runtime owns; this op reads it for something else";
      drop.set(arg.getArgNumber());
    }
  }
  for (BlockArgument arg : pastLengthArgs) {
    if (!arg.use_empty()) {
      Operation *user = *arg.getUsers().begin();
      return emitError(user->getLoc())
             << "--kv-cache: input '" << nameOfArgument(arg)
             << "' holds each sequence's past length (TensorScatter's write_indices into a KV "
                "cache), which kiln's runtime owns; this op reads it for something other than "
                "the cache writes and the nonpad_kv_seqlen of an Attention whose keys and values "
                "are both such writes (through transposes and reshapes). kiln masks by its own "
                "sequence lengths and reads positions from a position_ids input: export the "
                "model without such uses";
    }
    drop.set(arg.getArgNumber());
  }
  for (int i = int(drop.size()) - 1; i >= 0; --i)
    if (drop.test(i))
      argTypes.erase(argTypes.begin() + i);
  return func.eraseArguments(drop);
}

LogicalResult GraphImporter::checkOutputType(const onnx::ValueInfoProto &output, Value value) {
  auto error = [&]() {
    return emitError(NameLoc::get(StringAttr::get(&ctx, output.name()), fileLoc))
           << "graph output '" << output.name() << "': ";
  };
  auto type = cast<RankedTensorType>(value.getType());
  // A generation step's present caches go (kiln-bind-generation-inputs): a static cache's fixed
  // length M is not the step's.
  if (options.emptyPast && StringRef(output.name()).starts_with("present"))
    return success();
  if (!output.type().has_tensor_type())
    return success();
  const onnx::TypeProto::Tensor &tt = output.type().tensor_type();
  if (tt.elem_type() != onnx::TensorProto::UNDEFINED) {
    Type elem = getElementType(&ctx, tt.elem_type());
    if (elem != type.getElementType())
      return error() << "declared as " << getDataTypeName(tt.elem_type())
                     << " but kiln computed " << type;
  }
  if (!tt.has_shape())
    return success();
  if (tt.shape().dim_size() != type.getRank())
    return error() << "declared with rank " << tt.shape().dim_size() << " but kiln computed "
                   << type;
  for (auto [i, d] : llvm::enumerate(tt.shape().dim()))
    if (d.has_dim_value() && d.dim_value() != type.getDimSize(i))
      return error() << "declared dim " << i << " = " << d.dim_value() << " but kiln computed "
                     << type;
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  if (failed(checkOpsets()))
    return nullptr;

  // Initializers and the names consumed by nodes or graph outputs. Names
  // are unique (ONNX graphs are in SSA form; the runtime binds inputs and
  // outputs by name and refuses duplicates).
  for (const onnx::TensorProto &t : graph.initializer())
    if (!initializers.try_emplace(t.name(), &t).second) {
      emitError(fileLoc) << "initializer '" << t.name() << "' is listed twice in '" << path
                         << "' (a tensor name must be defined once)";
      return nullptr;
    }
  llvm::StringSet<> graphInputNames, graphOutputNames;
  for (auto [i, in] : llvm::enumerate(graph.input())) {
    if (in.name().empty()) {
      emitError(fileLoc) << "graph input " << i << " of '" << path << "' has an empty name";
      return nullptr;
    }
    if (!graphInputNames.insert(in.name()).second) {
      emitError(fileLoc) << "graph input '" << in.name() << "' is listed twice in '" << path
                         << "' (a tensor name must be defined once)";
      return nullptr;
    }
  }
  for (auto [i, out] : llvm::enumerate(graph.output())) {
    if (out.name().empty()) {
      emitError(fileLoc) << "graph output " << i << " of '" << path << "' has an empty name";
      return nullptr;
    }
    if (!graphOutputNames.insert(out.name()).second) {
      emitError(fileLoc) << "graph output '" << out.name() << "' is listed twice in '" << path
                         << "'; kiln binds outputs by name, so each may be listed once";
      return nullptr;
    }
  }
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &name : node.input())
      usedNames.insert(name);
  for (const onnx::ValueInfoProto &out : graph.output())
    usedNames.insert(out.name());

  // Graph inputs (initializers are constants, not arguments). A --shape
  // naming no input is reported first: it is usually a misspelling, and the
  // real input then lacks its shape.
  SmallVector<const onnx::ValueInfoProto *> inputs;
  if (options.emptyPast)
    leftOutPasts = groupQueryAttentionPasts(graph);
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initializers.contains(in.name()) || leftOutPasts.contains(in.name()))
      continue;
    argumentNames.insert(in.name());
    inputs.push_back(&in);
  }
  for (const auto &entry : shapes) {
    if (argumentNames.contains(entry.getKey()) || leftOutPasts.contains(entry.getKey()))
      continue;
    InFlightDiagnostic diag = emitError(fileLoc)
                              << "--shape names '" << entry.getKey()
                              << "', which is not a graph input of '" << path << "' (inputs: ";
    llvm::interleaveComma(inputs, diag,
                          [&](const onnx::ValueInfoProto *in) { diag << in->name(); });
    diag << ")";
    return nullptr;
  }

  SmallVector<Type> argTypes;
  llvm::StringMap<std::pair<int64_t, std::string>> symbolValues; // dim_param -> (value, input)
  // Every input's type is checked before giving up, so that all missing
  // --shape values are reported at once.
  bool inputsFailed = false;
  for (const onnx::ValueInfoProto *in : inputs) {
    FailureOr<RankedTensorType> type = getInputType(*in);
    if (failed(type)) {
      inputsFailed = true;
      continue;
    }
    // The same symbolic dim (e.g. 'batch', 'seq') must get one value.
    if (in->type().tensor_type().has_shape()) {
      for (auto [i, d] : llvm::enumerate(in->type().tensor_type().shape().dim())) {
        if (!d.has_dim_param() || d.dim_param().empty())
          continue;
        auto [it, inserted] =
            symbolValues.try_emplace(d.dim_param(), type->getDimSize(i), in->name());
        if (!inserted && it->second.first != type->getDimSize(i)) {
          emitError(fileLoc) << "--shape gives the symbolic dim '" << d.dim_param()
                             << "' the value " << type->getDimSize(i) << " for '" << in->name()
                             << "' but " << it->second.first << " for '" << it->second.second
                             << "'";
          return nullptr;
        }
      }
    }
    argTypes.push_back(*type);
  }
  if (inputsFailed)
    return nullptr;
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, "main",
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  for (auto [i, in] : llvm::enumerate(inputs)) {
    func.setArgAttr(i, "kiln.name", builder.getStringAttr(in->name()));
    values[in->name()] = body->getArgument(i);
  }
  builder.setInsertionPointToEnd(body);

  // A plain causal-LM export under --kv-cache: its position lookups read a position_ids
  // argument [B, S] (the shape of input_ids), appended after the graph inputs when the first
  // lookup needs it (OnnxPositions.cpp).
  BlockArgument positionIds;
  auto ids = values.find("input_ids");
  if (options.derivePositionIds && !argumentNames.contains("position_ids") && ids != values.end() &&
      cast<RankedTensorType>(ids->second.getType()).getRank() == 2) {
    auto idsType = cast<RankedTensorType>(ids->second.getType());
    auto positionsType = RankedTensorType::get(idsType.getShape(), builder.getI64Type());
    StepPositionIds::Callbacks callbacks;
    callbacks.nodeError = [this](int i) {
      return emitNodeError(nodeLocation(i), displayNameOf(i), graph.node(i),
                           domainVersionOf(graph.node(i)));
    };
    callbacks.describeNode = [this](int i) {
      return "'" + displayNameOf(i) + "' (" + graph.node(i).op_type() + ")";
    };
    callbacks.argument = [&, positionsType]() -> Value {
      if (!positionIds) {
        unsigned index = func.getNumArguments();
        NamedAttribute name =
            builder.getNamedAttr("kiln.name", builder.getStringAttr("position_ids"));
        if (failed(func.insertArgument(index, positionsType, builder.getDictionaryAttr(name),
                                       fileLoc)))
          llvm_unreachable("appending an argument to the function being built cannot fail");
        positionIds = body->getArgument(index);
        argTypes.push_back(positionsType);
      }
      return positionIds;
    };
    positions.emplace(idsType.getDimSize(0), idsType.getDimSize(1), std::move(callbacks));
  }

  // Nodes, each after the producers of its operands (file order where it
  // already is such an order).
  FailureOr<SmallVector<int>> order = sortNodes();
  if (failed(order))
    return nullptr;
  for (int i : *order)
    if (failed(importNode(graph.node(i), i)))
      return nullptr;
  if (positions && failed(positions->finish()))
    return nullptr;

  // Outputs.
  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    FailureOr<Value> v = lookup(out.name());
    if (failed(v))
      return nullptr;
    if (!*v) {
      emitError(fileLoc) << "graph output '" << out.name() << "' of '" << path
                         << "' is not produced by any node";
      return nullptr;
    }
    if (failed(checkOutputType(out, *v)))
      return nullptr;
    results.push_back(*v);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setFunctionType(builder.getFunctionType(argTypes, TypeRange(ValueRange(results))));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "kiln.name", builder.getStringAttr(out.name()));

  // Constants whose only users folded away (e.g. a Reshape's shape operand).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isa<ConstantOp>(op) && op.use_empty())
      op.erase();
  if (failed(dropPastLengthArguments(func, argTypes)))
    return nullptr;

  if (failed(verify(*module)))
    return nullptr;
  return module;
}

/// The past-cache inputs of `model` that a TensorScatter-24 writes in place (a KV cache in ONNX
/// ops), each with the TensorScatter's axis attribute (default -2), and, in `writeIndices` when
/// given, the names of those TensorScatters' write_indices inputs.
static llvm::StringMap<int64_t> tensorScatterCaches(const onnx::ModelProto &model,
                                                    llvm::StringSet<> *writeIndices = nullptr) {
  llvm::StringMap<int64_t> scatterAxis;
  for (const onnx::NodeProto &node : model.graph().node()) {
    if (node.op_type() != "TensorScatter" ||
        !(node.domain().empty() || node.domain() == "ai.onnx") || node.input_size() < 2 ||
        !isPastCacheName(node.input(0)))
      continue;
    int64_t axis = -2;
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.name() == "axis")
        axis = a.i();
    scatterAxis[node.input(0)] = axis;
    if (writeIndices && node.input_size() > 2 && !node.input(2).empty())
      writeIndices->insert(node.input(2));
  }
  return scatterAxis;
}

/// The shapes of a generation step's cache inputs that --shape leaves out
/// (ImportOptions::emptyPast): `past_key_values.*` / `past.*` rank-4 inputs
/// [B, Hkv, 0, D] (Hkv and D from the file), or, for a past cache that a
/// TensorScatter writes, the file's shape with B first and 0 along the
/// TensorScatter's axis; the TensorScatters' write_indices inputs [B];
/// `attention_mask` and `position_ids` [B, S], with [B, S] the given shape of
/// `input_ids`.
static FailureOr<InputShapes> withEmptyPast(const onnx::ModelProto &model,
                                            const InputShapes &shapes, Location fileLoc) {
  InputShapes out = shapes;
  for (const auto &entry : shapes) {
    StringRef name = entry.getKey();
    if ((name.starts_with("past_key_values.") || name.starts_with("past.")) &&
        entry.getValue().size() == 4 && entry.getValue()[2] != 0)
      return emitError(fileLoc) << "--kv-cache compiles '" << name
                                << "' with an empty past (the runtime owns the cache), but --shape "
                                   "gives it past length "
                                << entry.getValue()[2] << "; leave its --shape out";
  }
  auto ids = shapes.find("input_ids");
  if (ids == shapes.end() || ids->second.size() != 2)
    return out; // the importer's own errors name what is missing
  int64_t B = ids->second[0], S = ids->second[1];
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &t : model.graph().initializer())
    initializers.insert(t.name());
  // TensorScatter-24 caches: the sequence axis of each past cache written in place, and the
  // inputs read as write indices (or as an Attention's nonpad_kv_seqlen).
  llvm::StringSet<> writeIndices;
  llvm::StringMap<int64_t> scatterAxis = tensorScatterCaches(model, &writeIndices);
  // Past caches only GroupQueryAttention reads leave the step (GraphImporter::leftOutPasts); its
  // seqlens_k [B] and total_sequence_length (a scalar), when inputs, are the runtime's and leave
  // it too.
  llvm::StringSet<> gqaPasts = groupQueryAttentionPasts(model.graph());
  llvm::StringSet<> gqaSeqlens, gqaTotals;
  for (const onnx::NodeProto &node : model.graph().node())
    if (isGroupQueryAttention(node)) {
      if (node.input_size() > 5 && !node.input(5).empty())
        gqaSeqlens.insert(node.input(5));
      if (node.input_size() > 6 && !node.input(6).empty())
        gqaTotals.insert(node.input(6));
    }
  // An Attention's nonpad_kv_seqlen given as an input: [B] as well (the importer drops it with
  // the cache writes it reads).
  for (const onnx::NodeProto &node : model.graph().node())
    if (node.op_type() == "Attention" && (node.domain().empty() || node.domain() == "ai.onnx") &&
        node.input_size() > 6 && !node.input(6).empty())
      writeIndices.insert(node.input(6));
  for (const onnx::ValueInfoProto &in : model.graph().input()) {
    StringRef name = in.name();
    if (out.count(name) || initializers.contains(name) || gqaPasts.contains(name) ||
        !in.type().has_tensor_type() || !in.type().tensor_type().has_shape())
      continue;
    const auto &dims = in.type().tensor_type().shape().dim();
    const int64_t rank = dims.size();
    if (auto it = scatterAxis.find(name); it != scatterAxis.end()) {
      // [B, ..., 0 (the axis), ...]: the other dims from the file.
      int64_t axis = it->second < 0 ? it->second + rank : it->second;
      if (rank < 2 || axis <= 0 || axis >= rank)
        continue; // the TensorScatter's own error
      SmallVector<int64_t> shape(rank, -1);
      shape[0] = B;
      shape[axis] = 0;
      bool known = true;
      for (int64_t d = 1; d < rank; ++d)
        if (d != axis)
          known &= dims[d].has_dim_value() && (shape[d] = dims[d].dim_value()) >= 0;
      if (known)
        out[name] = shape; // a symbolic dim: the importer asks for --shape
    } else if ((writeIndices.contains(name) || gqaSeqlens.contains(name)) && rank == 1) {
      out[name] = {B};
    } else if (gqaTotals.contains(name) && rank <= 1) {
      out[name] = SmallVector<int64_t>(rank, 1);
    } else if (isPastCacheName(name) && rank == 4) {
      SmallVector<int64_t> shape = {B, -1, 0, -1};
      for (int i : {1, 3})
        if (dims[i].has_dim_value())
          shape[i] = dims[i].dim_value();
      if (shape[1] >= 0 && shape[3] >= 0)
        out[name] = shape; // symbolic heads or head size: the importer asks for --shape
    } else if ((name == "attention_mask" || name == "position_ids") && dims.size() == 2) {
      if (name == "attention_mask" && dims[1].has_dim_value() && dims[1].dim_value() != S)
        return emitError(fileLoc)
               << "--kv-cache: input 'attention_mask' has a fixed length of " << dims[1].dim_value()
               << " (a static cache's positions, not the past plus the step's " << S
               << " tokens); kiln masks by the runtime's sequence lengths and cannot bind a mask "
                  "over a static cache: export the model with a dynamic attention_mask length "
                  "or without one";
      out[name] = {B, S};
    }
  }
  // A GroupQueryAttention past that stays an input (not named as a cache, its pair not, or read
  // by another node) and whose symbolic dims kiln cannot fill: say how to give it an empty past.
  for (const onnx::NodeProto &node : model.graph().node()) {
    if (!isGroupQueryAttention(node))
      continue;
    for (int slot : {3, 4}) {
      if (node.input_size() <= slot)
        continue;
      const std::string &name = node.input(slot);
      if (name.empty() || gqaPasts.contains(name) || out.count(name) ||
          initializers.contains(name))
        continue;
      for (const onnx::ValueInfoProto &in : model.graph().input()) {
        if (in.name() != name || !in.type().has_tensor_type() ||
            !in.type().tensor_type().has_shape() ||
            llvm::all_of(in.type().tensor_type().shape().dim(),
                         [](const onnx::TensorShapeProto::Dimension &d) {
                           return d.has_dim_value();
                         }))
          continue;
        return emitError(fileLoc)
               << "--kv-cache: input '" << name << "' is the "
               << (slot == 3 ? "past_key" : "past_value") << " of GroupQueryAttention node '"
               << node.name()
               << "' and has symbolic dims; kiln leaves a node's past out of the step only when "
                  "both halves are named past_key_values.<layer>.key/.value and nothing else "
                  "reads them. Rename them, or give this one an empty past: --shape "
               << name << "=" << B << "xHx0xD (H kv_num_heads, D the head size)";
      }
    }
  }
  return out;
}

DenseElementsAttr kiln::InitializerCache::lookup(StringRef name) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = values.find(name);
  return it == values.end() ? DenseElementsAttr() : it->second;
}

void kiln::InitializerCache::insert(StringRef name, DenseElementsAttr value) {
  std::lock_guard<std::mutex> lock(mutex);
  values.try_emplace(name, value);
}

std::optional<std::pair<std::string, int64_t>>
kiln::staticCacheLength(const onnx::ModelProto &model) {
  llvm::StringMap<int64_t> scatterAxis = tensorScatterCaches(model);
  std::optional<std::pair<std::string, int64_t>> shortest;
  for (const onnx::ValueInfoProto &in : model.graph().input()) {
    auto it = scatterAxis.find(in.name());
    if (it == scatterAxis.end() || !in.type().has_tensor_type() ||
        !in.type().tensor_type().has_shape())
      continue;
    const auto &dims = in.type().tensor_type().shape().dim();
    const int64_t rank = dims.size();
    const int64_t axis = it->second < 0 ? it->second + rank : it->second;
    if (axis <= 0 || axis >= rank || !dims[axis].has_dim_value() || dims[axis].dim_value() <= 0)
      continue;
    if (!shortest || dims[axis].dim_value() < shortest->second)
      shortest = std::make_pair(in.name(), int64_t(dims[axis].dim_value()));
  }
  return shortest;
}

OwningOpRef<ModuleOp> kiln::importOnnxFile(MLIRContext &ctx, StringRef path,
                                           const InputShapes &shapes, const ImportOptions &options) {
  std::shared_ptr<const onnx::ModelProto> model = loadOnnxModel(ctx, path);
  if (!model)
    return nullptr;
  return importOnnxModel(ctx, path, *model, shapes, options);
}

std::shared_ptr<const onnx::ModelProto> kiln::loadOnnxModel(MLIRContext &ctx, StringRef path) {
  ctx.loadDialect<KilnDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);

  if (std::string reason = notARegularFile(path); !reason.empty()) {
    emitError(fileLoc) << "cannot read ONNX model '" << path << "': " << reason;
    return nullptr;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(fileLoc) << "cannot read ONNX model '" << path
                       << "': " << buffer.getError().message();
    return nullptr;
  }
  auto model = std::make_shared<onnx::ModelProto>();
  std::string parseError;
  if (!parseModelProto((*buffer)->getBufferStart(), (*buffer)->getBufferSize(), *model,
                       parseError)) {
    emitError(fileLoc) << "cannot read ONNX model '" << path << "': " << parseError;
    return nullptr;
  }
  if (!model->has_graph() || model->ir_version() <= 0) {
    emitError(fileLoc) << "cannot read ONNX model '" << path
                       << "': not an ONNX model (no ir_version or graph)";
    return nullptr;
  }
  if (model->ir_version() < kMinIrVersion || model->ir_version() > kMaxIrVersion) {
    emitError(fileLoc) << "cannot read ONNX model '" << path << "': unsupported ir_version "
                       << model->ir_version() << " (kiln reads IR versions " << kMinIrVersion
                       << " to " << kMaxIrVersion << ")";
    return nullptr;
  }
  return model;
}

OwningOpRef<ModuleOp> kiln::importOnnxModel(MLIRContext &ctx, StringRef path,
                                            const onnx::ModelProto &model,
                                            const InputShapes &shapes,
                                            const ImportOptions &options) {
  ctx.loadDialect<KilnDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  if (options.emptyPast) {
    FailureOr<InputShapes> completed = withEmptyPast(model, shapes, fileLoc);
    if (failed(completed))
      return nullptr;
    return GraphImporter(ctx, path, model, *completed, options).run();
  }
  return GraphImporter(ctx, path, model, shapes, options).run();
}
