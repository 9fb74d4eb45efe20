//===- OnnxOpImport.h - per-node import interface -----------------*- C++ -*-===//
//
// Internal interface between the graph importer (OnnxImporter.cpp) and the
// per-op-family import files (OnnxElementwise.cpp, OnnxShapeOps.cpp,
// OnnxMovement.cpp, OnnxMath.cpp, OnnxContrib.cpp, OnnxMatMulNBits.cpp,
// OnnxGroupQueryAttention.cpp), and the positions rewrite of plain causal-LM
// exports (OnnxPositions.cpp). A handler receives a
// NodeImporter for one ONNX node: resolved operand values with static types,
// typed attribute accessors, constant-operand accessors and diagnostics that
// name the node.
// Handlers compute static result types themselves (kiln's shape inference)
// and build kiln ops with createOrFold, so ops on constants fold at once.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_ONNXOPIMPORT_H
#define KILN_COMPILER_ONNX_ONNXOPIMPORT_H

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace kiln::onnx_import {

//===----------------------------------------------------------------------===//
// Data types and tensors (OnnxTensors.cpp)
//===----------------------------------------------------------------------===//

/// Name of an ONNX TensorProto::DataType value ("FLOAT", "INT64", ...).
std::string getDataTypeName(int32_t dataType);

/// kiln element type of an ONNX data type, or null when kiln tensors cannot
/// hold it (kiln has f32, f16, bf16, i64, i32 and i1 = bool).
mlir::Type getElementType(mlir::MLIRContext *ctx, int32_t dataType);

/// Error text for a data type that getElementType rejects.
std::string unsupportedDataTypeMessage(int32_t dataType);

/// Converts TensorProtos (initializers, Constant values) to DenseElementsAttr.
/// External data is read from files relative to the model directory, each
/// file mapped once.
class TensorLoader {
public:
  TensorLoader(mlir::MLIRContext *ctx, llvm::StringRef modelDir)
      : ctx(ctx), modelDir(modelDir.str()) {}

  /// The static type of `tensor` or an error (unsupported dtype, bad dims).
  llvm::Expected<mlir::RankedTensorType> getType(const onnx::TensorProto &tensor);

  /// The contents of `tensor` as a DenseElementsAttr or an error (dtype, a
  /// payload whose size does not match the dims, unreadable external data).
  llvm::Expected<mlir::DenseElementsAttr> load(const onnx::TensorProto &tensor);

private:
  /// The `size` bytes of an external tensor, bounds-checked; `file` is set to the mapped file
  /// they lie in.
  llvm::Expected<llvm::ArrayRef<char>> readExternal(const onnx::TensorProto &tensor, uint64_t size,
                                                    llvm::MemoryBuffer *&file);

  mlir::MLIRContext *ctx;
  std::string modelDir;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
};

//===----------------------------------------------------------------------===//
// Node import
//===----------------------------------------------------------------------===//

class NodeImporter;

/// Imports one node; emits a diagnostic through `node` and fails on error.
using OpImportFn = mlir::LogicalResult (*)(NodeImporter &node);

/// One registered op type: its handler and the attributes it understands
/// (any other attribute on the node is an "unsupported attribute" error).
struct OpImporter {
  OpImportFn fn;
  llvm::SmallVector<std::string> attributes;
};

/// The table op_type -> handler of one domain.
class OpRegistry {
public:
  /// Registers `opType`; each op type is registered exactly once.
  void add(llvm::StringRef opType, OpImportFn fn,
           std::initializer_list<const char *> attributes = {});
  /// The importer for `opType`, or null.
  const OpImporter *lookup(llvm::StringRef opType) const;

private:
  llvm::StringMap<OpImporter> table;
};

void registerElementwiseOps(OpRegistry &registry);
void registerShapeOps(OpRegistry &registry);
void registerMovementOps(OpRegistry &registry);
void registerMathOps(OpRegistry &registry);
/// Einsum (OnnxEinsum.cpp).
void registerEinsumOps(OpRegistry &registry);
/// onnxruntime's contrib ops (OnnxContrib.cpp): the com.microsoft domain and
/// the one it defines in the default domain (SimplifiedLayerNormalization).
void registerContribOps(OpRegistry &defaultDomain, OpRegistry &microsoftDomain);
/// com.microsoft MatMulNBits, dequantized at import (OnnxMatMulNBits.cpp).
void registerMatMulNBits(OpRegistry &microsoftDomain);
/// com.microsoft GroupQueryAttention as kiln.attention (OnnxGroupQueryAttention.cpp).
void registerGroupQueryAttention(OpRegistry &microsoftDomain);

/// What a handler sees of one ONNX node. Created by the graph importer with
/// the operands already resolved (absent optional operands are null).
class NodeImporter {
public:
  /// `domainVersion` is the imported version of the node's domain (`opset`
  /// for default-domain nodes); diagnostics show it.
  NodeImporter(mlir::OpBuilder &builder, mlir::Location loc, const onnx::NodeProto &node,
               std::string displayName, int64_t opset, int64_t domainVersion,
               llvm::SmallVector<mlir::Value> inputs, llvm::SmallVector<bool> outputUsed,
               TensorLoader &tensors)
      : builder(builder), loc(loc), node(node), displayName(std::move(displayName)),
        opset(opset), domainVersion(domainVersion), inputs(std::move(inputs)),
        outputUsed(std::move(outputUsed)), results(node.output_size()), tensors(tensors) {}

  mlir::OpBuilder &getBuilder() { return builder; }
  mlir::MLIRContext *getContext() { return builder.getContext(); }
  mlir::Location getLoc() const { return loc; }
  const onnx::NodeProto &getNode() const { return node; }
  llvm::StringRef getOpType() const { return node.op_type(); }
  /// Opset version of the default domain (7 to 28); handlers use it where an
  /// op changed between versions (e.g. Squeeze's axes attribute before 13).
  int64_t getOpset() const { return opset; }

  //--- Operands and results ---------------------------------------------===//

  /// Number of operand slots, including empty optional ones.
  unsigned getNumInputs() const { return inputs.size(); }
  /// True if operand `i` is given (present and not the empty name).
  bool hasInput(unsigned i) const { return i < inputs.size() && inputs[i]; }
  /// Operand `i`, or null if absent.
  mlir::Value getInput(unsigned i) const { return hasInput(i) ? inputs[i] : mlir::Value(); }
  /// Type of operand `i` (which must be present: check with hasInput or
  /// checkNumInputs first).
  mlir::RankedTensorType getInputType(unsigned i) const {
    assert(hasInput(i) && "type of an absent operand");
    return mlir::cast<mlir::RankedTensorType>(inputs[i].getType());
  }
  /// Fails with "expects N to M operands" unless the present operand slots
  /// are in range and operands [0, minCount) are all given.
  mlir::LogicalResult checkNumInputs(unsigned minCount, unsigned maxCount);

  unsigned getNumOutputs() const { return results.size(); }
  /// True if output `i` is named and consumed by a node or graph output.
  bool isOutputUsed(unsigned i) const { return i < outputUsed.size() && outputUsed[i]; }
  /// Sets output `i`. An optional output the node does not list (i past its
  /// output count) is dropped: handlers may set every output they compute.
  void setResult(unsigned i, mlir::Value v) {
    if (i < results.size())
      results[i] = v;
  }
  llvm::ArrayRef<mlir::Value> getResults() const { return results; }

  //--- Attributes -------------------------------------------------------===//

  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  mlir::FailureOr<int64_t> getIntAttr(llvm::StringRef name, int64_t dflt);
  mlir::FailureOr<float> getFloatAttr(llvm::StringRef name, float dflt);
  mlir::FailureOr<std::string> getStringAttr(llvm::StringRef name, llvm::StringRef dflt);
  /// INTS attribute; std::nullopt (inside success) when absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>> getIntsAttr(llvm::StringRef name);
  /// TENSOR attribute converted through the TensorLoader; null when absent.
  mlir::FailureOr<mlir::DenseElementsAttr> getTensorAttr(llvm::StringRef name);

  //--- Constant operands ------------------------------------------------===//

  /// The constant value of operand `i`; if it is not a constant, fails with
  /// "unsupported: <what> of <op> must be a constant after shape specialization".
  mlir::FailureOr<mlir::DenseElementsAttr> getConstantInput(unsigned i, llvm::StringRef what);
  /// getConstantInput for an integer tensor, as int64 values.
  mlir::FailureOr<llvm::SmallVector<int64_t>> getConstantInts(unsigned i, llvm::StringRef what);

  //--- Diagnostics ------------------------------------------------------===//

  /// An error at the node, prefixed "node '<name>' (<op>, opset <n>): "
  /// ("(<domain>::<op>, opset <n>)" outside the default domain).
  mlir::InFlightDiagnostic emitError();
  /// emitError() << "unsupported: " << reason; returns failure.
  mlir::LogicalResult emitUnsupported(const llvm::Twine &reason);

  //--- Building ---------------------------------------------------------===//

  /// Creates `OpTy` at the node location and folds it if its operands are
  /// constants (the folded value is a `kiln.constant`).
  template <typename OpTy, typename... Args>
  mlir::Value create(Args &&...args) {
    return builder.createOrFold<OpTy>(loc, std::forward<Args>(args)...);
  }
  /// A `kiln.constant` holding `value`.
  mlir::Value createConstant(mlir::DenseElementsAttr value);
  /// A 0-d `kiln.constant` of element type `elementType` holding `value`.
  mlir::Value createScalar(mlir::Type elementType, double value);
  /// `kiln.reshape` of `v` to `shape` (folds away when the shape is unchanged).
  mlir::Value createReshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);

  /// Normalizes an ONNX axis in [-rank, rank) to [0, rank), or fails with
  /// "<what> <axis> is out of range for rank <rank>".
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef what = "axis");
  /// Reads int attribute `name` (default `dflt`) and normalizes it as an
  /// axis of a tensor of rank `rank` (errors as getIntAttr/normalizeAxis).
  mlir::FailureOr<int64_t> getAxisAttr(llvm::StringRef name, int64_t dflt, int64_t rank);
  /// Broadcast shape of operands or an error naming both shapes.
  mlir::FailureOr<llvm::SmallVector<int64_t>> broadcast(llvm::ArrayRef<int64_t> a,
                                                       llvm::ArrayRef<int64_t> b);
  /// Fails unless operands `i` and `j` have the same element type.
  mlir::LogicalResult checkSameElementType(unsigned i, unsigned j);
  /// Fails unless operand `i` has a floating-point element type.
  mlir::LogicalResult checkFloat(unsigned i, llvm::StringRef what = "input");

  //--- Generation steps (kiln-compile --kv-cache) -----------------------===//

  /// What a handler knows of a generation step (kiln-compile --kv-cache) for an
  /// attention node that keeps its own KV cache (com.microsoft
  /// GroupQueryAttention), set by the graph importer under
  /// ImportOptions::emptyPast. A handler that sees it imports the node as one
  /// step over the runtime's cache: the lengths are the runtime's, rotary rows
  /// are read at `positions`.
  struct GenerationStep {
    /// int64 [B, S]: the `position_ids` argument (seq_lens[b] + i, filled by
    /// the runtime); null for a node that rotates nothing.
    mlir::Value positions;
    /// --max-seq-len, the most tokens a sequence holds (0: not known).
    int64_t maxSeqLen = 0;
  };
  /// The generation step, or null outside one.
  const GenerationStep *getGenerationStep() const {
    return generationStep ? &*generationStep : nullptr;
  }
  void setGenerationStep(GenerationStep step) { generationStep = step; }

private:
  mlir::OpBuilder &builder;
  mlir::Location loc;
  const onnx::NodeProto &node;
  std::string displayName;
  int64_t opset;
  int64_t domainVersion;
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<bool> outputUsed;
  llvm::SmallVector<mlir::Value> results;
  TensorLoader &tensors;
  std::optional<GenerationStep> generationStep;
};

//===----------------------------------------------------------------------===//
// Builders shared by op families
//===----------------------------------------------------------------------===//

/// The attributes of the LayerNormalization family: `axis` (default -1,
/// normalized) and `epsilon` (default 1e-5); `stash_type` must be 1 (FLOAT),
/// else "unsupported: stash_type N". (OnnxMath.cpp)
struct NormAttributes {
  int64_t axis;
  float epsilon;
};
mlir::FailureOr<NormAttributes> getNormAttributes(NodeImporter &node, int64_t rank);

/// `param` (named `what` in errors: "scale", "gamma", ...) checked to have
/// the element type of `xType` and to broadcast to the normalized shape
/// xType[axis:], and expanded to it (kiln.expand, folds on constants).
mlir::FailureOr<mlir::Value> getNormParameter(NodeImporter &node, mlir::Value param,
                                              llvm::StringRef what,
                                              mlir::RankedTensorType xType, int64_t axis);

/// A normalization's output and its optional float32 statistics, shaped
/// [d0, ..., d(axis-1), 1, ..., 1] (null unless requested).
struct NormResults {
  mlir::Value y, mean, invStdDev;
};

/// LayerNormalization over dims [axis, rank) of `x`: y is one kiln.layer_norm
/// (`scale`, and `bias` if not null, already of the normalized shape); mean
/// and 1/sqrt(var + epsilon) from reductions in float32 when requested.
NormResults buildLayerNorm(NodeImporter &node, mlir::Value x, mlir::Value scale,
                           mlir::Value bias, int64_t axis, float epsilon, bool withMean,
                           bool withInvStdDev);

/// RMS normalization over dims [axis, rank) of `x`: y is one kiln.rms_norm
/// (`scale` of the normalized shape); 1/sqrt(mean(x^2) + epsilon) in float32
/// when requested.
NormResults buildRmsNorm(NodeImporter &node, mlir::Value x, mlir::Value scale, int64_t axis,
                         float epsilon, bool withInvStdDev);

/// GELU of a float tensor, decomposed into pointwise kiln ops: the exact
/// 0.5 x (1 + erf(x / sqrt 2)), or with `tanhApproximation`
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). (OnnxElementwise.cpp)
mlir::Value buildGelu(NodeImporter &node, mlir::Value x, bool tanhApproximation);

/// Rotary embedding of x [B, H, S, D] on its first R = 2 * cos.dim(2) columns, with
/// cosHalf/sinHalf [N, S, R/2] (N = B, or 1 for one table shared by the batch) of x's element
/// type and R <= D even (the caller checks): kiln.rotary with concat(c, c) caches (rotate-half),
/// or elementwise ops on the pairs (x[2i], x[2i+1]) when `interleaved`; the last D - R columns
/// pass through. The IR RotaryEmbedding-23 gives. (OnnxMath.cpp)
mlir::Value buildRotary(NodeImporter &node, mlir::Value x, mlir::Value cosHalf,
                        mlir::Value sinHalf, bool interleaved);

/// An attention after head splitting and the KV-cache concatenation, for the composite form:
/// q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv] of one float type; mask an
/// additive bias broadcastable to [B, Hq, Sq, Sk] (or null); the causal and sliding-window
/// frontier offset (the past length), or nonpad (int64 [B]: per-batch valid key counts, offset
/// nonpad[b] - Sq); softcap 0 for none; qkMode and softmaxPrecision as ONNX Attention's
/// attributes (0 for the plain output).
struct AttentionParts {
  mlir::Value q, k, v, mask;
  double scale;
  bool causal;
  int64_t offset, leftWindow, rightWindow;
  mlir::Value nonpad;
  float softcap;
  int64_t qkMode, softmaxPrecision;
};

/// Attention as separate ops (matmul, softcap, additive bias of the causal/window/padding
/// masks, softmax, matmul), for the forms kiln.attention does not cover; returns the output
/// [B, Hq, Sq, Dv] and the qk_matmul_output of `qkMode`. (OnnxMath.cpp)
mlir::FailureOr<std::pair<mlir::Value, mlir::Value>>
buildCompositeAttention(NodeImporter &node, const AttentionParts &parts);

/// Largest element count of any tensor the importer builds: 2^40, far above
/// the 128 GiB kiln-compile accepts and far below int64 overflow, so element
/// counts of checked shapes can be multiplied by a byte size safely.
inline constexpr int64_t kMaxImportElements = int64_t(1) << 40;

/// The element count of `shape`, computed with overflow checks
/// (llvm::checkedMul); std::nullopt when a dim is negative or the count
/// exceeds kMaxImportElements. Every shape computed from model data goes
/// through it before a type of that shape is built.
std::optional<int64_t> checkedElementCount(llvm::ArrayRef<int64_t> shape);

/// Why `path` must not be opened as an input file: it exists and is neither a
/// regular file nor a directory (a FIFO would block the open until a writer
/// appears). Empty when it may be opened; missing files and directories are
/// left to the open, whose error names them.
std::string notARegularFile(const llvm::Twine &path);

/// `tensor<shape x elementType>`.
inline mlir::RankedTensorType getTensorType(llvm::ArrayRef<int64_t> shape,
                                            mlir::Type elementType) {
  return mlir::RankedTensorType::get(shape, elementType);
}

/// `OpTy(lhs, rhs)` with numpy broadcasting; the result has `elem` (default: lhs's type). For
/// operands the caller built to broadcast (composite attention, GroupQueryAttention's masks);
/// asserts that they do.
template <typename OpTy>
mlir::Value broadcastBinary(NodeImporter &n, mlir::Value lhs, mlir::Value rhs,
                            mlir::Type elem = {}) {
  auto lt = mlir::cast<mlir::RankedTensorType>(lhs.getType());
  auto rt = mlir::cast<mlir::RankedTensorType>(rhs.getType());
  mlir::FailureOr<llvm::SmallVector<int64_t>> shape = broadcastShapes(lt.getShape(), rt.getShape());
  assert(mlir::succeeded(shape) && "the caller's operands broadcast by construction");
  return n.create<OpTy>(getTensorType(*shape, elem ? elem : lt.getElementType()), lhs, rhs);
}

/// `cond ? x : y` with numpy broadcasting of all three (operands built to broadcast, as for
/// broadcastBinary). (OnnxMath.cpp)
mlir::Value broadcastWhere(NodeImporter &n, mlir::Value cond, mlir::Value x, mlir::Value y);

//===----------------------------------------------------------------------===//
// Token positions of a plain causal-LM export (OnnxPositions.cpp)
//===----------------------------------------------------------------------===//

/// Makes the token positions of a plain causal-LM export (no cache I/O, no `position_ids`
/// input) a `position_ids` [B, S] int64 argument, so that kiln-compile --kv-cache can compile it
/// as it compiles an export with cache I/O (ImportOptions::derivePositionIds; docs/importer.md,
/// "Plain causal-LM exports under --kv-cache"; docs/generation.md, form b).
///
/// Such a graph computes its positions as `Range(0, S, 1)` (Hugging Face's `cache_position`),
/// which folds into the constant 0..S-1 at a static shape. The graph importer calls the three
/// hooks around each node, in import order:
///  - a **positions Range** is a Range node whose result is the integer constant 0..S-1, S the
///    step's token count; its result and every integer value computed from it carry positions;
///  - a **position lookup** reads them as a float value: `Gather(float table, positions)`
///    (learned positions, GPT-2) or `Cast(positions)` / `CastLike` to a float type (rotary
///    frequencies, Llama). Its positions operand becomes position_ids, reshaped to the operand's
///    shape with the batch first (and cast to its element type), when it is a *view* of the
///    Range (through Unsqueeze, Squeeze, Reshape, Flatten, Expand, Identity and integer Casts)
///    shaped [1 or B, ...] with the S positions in order after the batch dim;
///  - integer ops ending in a comparison (a bool result) are the **attention mask**: they keep
///    the constant, so that a step's mask still folds into `causal` on `kiln.attention`;
///  - Shape and Size read no positions.
/// Errors (each names the node, "unsupported: ..."): a position lookup reading the positions
/// through another op (Add, Concat, ...) or in another shape, and, for a Range whose positions
/// became position_ids, any other float value computed from them (finish()).
class StepPositionIds {
public:
  /// Callbacks into the graph importer: `nodeError(i)` starts an error at node i ("node
  /// '<name>' (<op>, opset <n>): "), `describeNode(i)` is "'<name>' (<op>)" for node i, and
  /// `argument()` returns the position_ids argument, created on the first call.
  struct Callbacks {
    std::function<mlir::InFlightDiagnostic(int)> nodeError;
    std::function<std::string(int)> describeNode;
    std::function<mlir::Value()> argument;
  };

  /// `batch` B and `tokens` S: the shape of `input_ids`, and of position_ids.
  StepPositionIds(int64_t batch, int64_t tokens, Callbacks callbacks)
      : batch(batch), tokens(tokens), callbacks(std::move(callbacks)) {}

  /// Before node `index` (`node`) is imported, its operands resolved in `inputs`: replaces each
  /// operand through which a position lookup reads positions by position_ids, built with
  /// `builder` at `loc`. Fails after an error naming the node when the lookup reads them in a
  /// way kiln cannot replace.
  mlir::LogicalResult rewriteOperands(const onnx::NodeProto &node, int index,
                                      llvm::MutableArrayRef<mlir::Value> inputs,
                                      mlir::OpBuilder &builder, mlir::Location loc);
  /// After node `index` is imported with `results` (null for outputs it does not produce):
  /// records a positions Range and the results that carry positions, and any other float use.
  void noteResults(const onnx::NodeProto &node, int index, llvm::ArrayRef<mlir::Value> results);
  /// After the last node: fails after an error naming the first node that computes a float
  /// value from positions that became position_ids without being a position lookup.
  mlir::LogicalResult finish();
  /// The position_ids argument [B, S] int64, created on the first call (also by
  /// rewriteOperands): what an attention node that rotates by the step's positions itself
  /// (GroupQueryAttention's do_rotary) reads under --kv-cache.
  mlir::Value argument() { return callbacks.argument(); }

private:
  /// A value that carries the positions of the Range node `range`; `via` is the first node
  /// between them that is not a view (-1 when the value is a view of the Range).
  struct Carrier {
    int range;
    int via;
  };
  /// What became of a positions Range's uses.
  struct RangeUses {
    bool replaced = false; // a position lookup now reads position_ids
    int otherUse = -1;     // the first node computing a float value from it otherwise
  };

  int64_t batch, tokens;
  Callbacks callbacks;
  llvm::StringMap<Carrier> carriers; // by ONNX tensor name
  std::map<int, RangeUses> ranges;   // by Range node index
  /// The operands of the node being imported that rewriteOperands replaced (noteResults reads
  /// them).
  llvm::SmallVector<unsigned> replacedNow;
};

} // namespace kiln::onnx_import

#endif // KILN_COMPILER_ONNX_ONNXOPIMPORT_H
