//===- KilnAttrs.td - kiln dialect attributes --------------*- tablegen -*-===//
//
// Enum attributes of the kiln dialect.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ATTRS_TD
#define KILN_ATTRS_TD

include "KilnBase.td"
include "mlir/IR/EnumAttr.td"

def Kiln_ReduceKind : I32EnumAttr<"ReduceKind", "reduction combiner", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Mean", 1, "mean">,
    I32EnumAttrCase<"Max", 2, "max">,
    I32EnumAttrCase<"Min", 3, "min">,
  ]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

def Kiln_ReduceKindAttr : EnumAttr<Kiln_Dialect, Kiln_ReduceKind, "reduce_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // KILN_ATTRS_TD
