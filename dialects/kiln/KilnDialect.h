//===- KilnDialect.h - kiln dialect declaration -------------------*- C++ -*-===//
//
// Declares the kiln dialect class (generated from KilnBase.td) and the
// `KilnFusible` op trait that marks ops a fused pointwise kernel can inline.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_KILNDIALECT_H
#define KILN_DIALECTS_KILN_KILNDIALECT_H

#include "dialects/kiln/ConstantCache.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include <memory>

namespace kiln {

/// Op trait: the op computes each result element from operand elements at
/// coordinates that are a function of the result coordinates (pointwise math,
/// broadcasts, reshapes, transposes, slices, concats, gathers). Fusion inlines
/// such ops into one generated kernel; codegen emits them as expressions.
template <typename ConcreteType>
class KilnFusible : public mlir::OpTrait::TraitBase<ConcreteType, KilnFusible> {};

} // namespace kiln

#include "dialects/kiln/KilnDialect.h.inc"

#endif // KILN_DIALECTS_KILN_KILNDIALECT_H
