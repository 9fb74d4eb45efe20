//===- KilnDialect.cpp - kiln dialect registration ------------------------===//
//
// Registers the kiln ops and attributes and materializes folded constants as
// `kiln.constant`.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnOps.h"

#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace kiln;

#include "dialects/kiln/KilnDialect.cpp.inc"
#include "dialects/kiln/KilnEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/kiln/KilnAttrs.cpp.inc"

void KilnDialect::initialize() {
  constantCache = std::make_unique<ConstantCache>();
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/KilnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/kiln/KilnAttrs.cpp.inc"
      >();
}

/// Folded values of kiln ops are `ElementsAttr`s; they become `kiln.constant`.
Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}
