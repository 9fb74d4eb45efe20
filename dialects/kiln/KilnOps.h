//===- KilnOps.h - kiln dialect ops ---------------------------------*- C++ -*-===//
//
// Declares the kiln ops and enum attributes generated from KilnOps.td and
// KilnAttrs.td, and small shape helpers shared by verifiers and the importer.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_KILNOPS_H
#define KILN_DIALECTS_KILN_KILNOPS_H

#include "dialects/kiln/KilnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/kiln/KilnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/kiln/KilnAttrs.h.inc"

namespace kiln {
class YieldOp;
} // namespace kiln

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.h.inc"

namespace kiln {

/// Largest result (in elements) that the kiln folders materialize on the
/// host; larger constant computations are left to run time.
constexpr int64_t kMaxFoldElements = int64_t(1) << 22;

/// Formats a shape for diagnostics as "[2, 16, 128]".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Numpy/ONNX multidirectional broadcast of two static shapes. Returns
/// failure when a pair of dims differs and neither is 1.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// True for fusible ops that read each operand at the result's own
/// coordinates (up to broadcasting): pointwise math, compares, casts, where.
bool isElementwise(mlir::Operation *op);

/// Size in bytes of one element of `type` (i1 is stored as one byte).
int64_t getElementByteSize(mlir::Type type);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_KILNOPS_H
