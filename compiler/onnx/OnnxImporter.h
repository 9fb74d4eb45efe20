//===- OnnxImporter.h - ONNX model -> kiln dialect ----------------*- C++ -*-===//
//
// Public API of the ONNX importer. The importer parses an ONNX model file
// (resolving external data), specializes symbolic input dims with the shapes
// given on the command line (`--shape input_ids=2x16`) and builds one
// `func.func @main` of kiln ops with static types, computed by kiln's own
// per-op shape inference. See docs/importer.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_ONNXIMPORTER_H
#define KILN_COMPILER_ONNX_ONNXIMPORTER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace kiln {

/// Static values for symbolic dims, by graph input name: {"input_ids": {2, 16}}.
using InputShapes = llvm::StringMap<llvm::SmallVector<int64_t>>;

/// Parses "input_ids=2x16,attention_mask=2x16" into InputShapes. A name with
/// an empty shape (`x=`) is a 0-d input. Returns an error text on bad syntax
/// (missing `=`, empty name, a dim that is not a non-negative integer, a name
/// given twice).
llvm::Expected<InputShapes> parseShapeSpec(llvm::StringRef spec);

/// Imports the model file into a new module holding one func.func @main whose
/// arguments are the graph inputs (in order, initializers excluded) and
/// results the graph outputs; func arg/result attrs `kiln.name = "<onnx
/// name>"`. Loads the kiln and func dialects into `ctx`. Errors go through the
/// MLIRContext diagnostic engine (located at the file, or at the node as
/// `NameLoc(node, file:0:0)`) and the function returns nullptr.
///
/// Every op made from a node is located at
///   NameLoc(node name, NameLoc(op type, file:0:0)), or, when the node shows
///   the module it belongs to,
///   NameLoc(node name, NameLoc(op type, fused<"scope">[file:0:0]))
/// where "scope" is the dotted module path, e.g. "m.h.0.attn.c_attn" (see
/// onnxNodeScope). compiler/artifact/LaunchMetadata.h reads these back.
/// How a model is imported beyond its shapes.
///   emptyPast: compile a generation step whose KV cache the runtime owns
///   (kiln-compile --kv-cache): inputs --shape leaves out get their shapes from
///   `input_ids` [B, S]: `past_key_values.*` / `past.*` [B, Hkv, 0, D] (an
///   empty past; Hkv and D from the file), `attention_mask` and `position_ids`
///   [B, S].
///   derivePositionIds: the same, for a plain causal-LM export (no cache I/O and
///   no `position_ids` input, docs/generation.md form b): the uses of its
///   positions Range(0, S) that look positions up (a Gather from a position
///   table, a Cast to float for rotary frequencies) read a new argument
///   `position_ids` [B, S] int64 (B, S from `input_ids`), appended after the
///   graph inputs; the uses that build the attention mask keep the constant
///   0..S-1. Nothing changes for a model with a `position_ids` input or without
///   such a Range. Errors name the node that reads the positions in a way kiln
///   cannot replace (docs/importer.md, "Plain causal-LM exports under
///   --kv-cache").
/// The constants of one model's initializers, shared by its imports into one MLIRContext
/// (kiln-compile's programs of a --shape range and its two-token check import the file several
/// times): each initializer is read, hashed and uniqued once, not once per import. Thread-safe
/// (the programs import in parallel). The attributes belong to the context.
class InitializerCache {
public:
  /// The constant of initializer `name`, or null when no import loaded it yet.
  mlir::DenseElementsAttr lookup(llvm::StringRef name) const;
  /// Records the constant of initializer `name`.
  void insert(llvm::StringRef name, mlir::DenseElementsAttr value);

private:
  mutable std::mutex mutex;
  llvm::StringMap<mlir::DenseElementsAttr> values;
};

struct ImportOptions {
  bool emptyPast = false;
  bool derivePositionIds = false;
  /// With emptyPast: --max-seq-len, the most tokens a sequence holds (0: not known). A local
  /// attention window at least this long attends to every cached position.
  int64_t maxSeqLen = 0;
  /// The constants of the model's initializers from earlier imports of the same model into the
  /// same context, and where this import adds the ones it loads (null: none shared).
  InitializerCache *initializers = nullptr;
};

mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &ctx,
                                                 llvm::StringRef path,
                                                 const InputShapes &shapes,
                                                 const ImportOptions &options = {});

/// Reads, parses and checks the ONNX model file at `path` (the first half of importOnnxFile), so
/// that it can be imported at several shapes without reading it again (kiln-compile's programs
/// and its two-token causal check). Errors go through the diagnostic engine as importOnnxFile's
/// do; returns nullptr then. External data is read at import, relative to `path`.
std::shared_ptr<const onnx::ModelProto> loadOnnxModel(mlir::MLIRContext &ctx,
                                                      llvm::StringRef path);

/// The shortest past-cache input of `model` that a TensorScatter-24 writes in place and whose
/// length along the TensorScatter's axis is fixed in the file (a static cache: the positions the
/// model was exported for), as (input name, length); std::nullopt when there is none.
/// kiln-compile --kv-cache warns when --max-seq-len is longer.
std::optional<std::pair<std::string, int64_t>> staticCacheLength(const onnx::ModelProto &model);

/// Imports `model`, read from `path` by loadOnnxModel, as importOnnxFile does.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &ctx, llvm::StringRef path,
                                                  const onnx::ModelProto &model,
                                                  const InputShapes &shapes,
                                                  const ImportOptions &options = {});

/// The dotted module path ("scope") of an ONNX node, or "" when the node does
/// not show one:
///  - torch.onnx dynamo exports: the metadata entry
///    "pkg.torch.onnx.name_scopes", a Python list literal such as
///    "['', 'm', 'm.h.0', 'm.h.0.attn', 'view_1']" whose last entry is the FX
///    node and the one before it the innermost module ("m.h.0.attn"); lists
///    that do not start at the root module ('') give "";
///  - legacy (TorchScript) exports: a node name with '/' separators such as
///    "/encoder/layer.0/attention/self/MatMul" gives
///    "encoder.layer.0.attention.self" (the last component is the node).
/// `metadata` holds the node's metadata_props (key, value) entries.
std::string onnxNodeScope(llvm::StringRef nodeName,
                          llvm::ArrayRef<std::pair<std::string, std::string>> metadata);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXIMPORTER_H
