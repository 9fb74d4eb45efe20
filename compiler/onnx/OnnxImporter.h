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

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

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
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &ctx,
                                                 llvm::StringRef path,
                                                 const InputShapes &shapes);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXIMPORTER_H
