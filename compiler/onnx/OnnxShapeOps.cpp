//===- OnnxShapeOps.cpp - constants and shape computations ----------------===//
//
// Constant, Shape, Size, ConstantOfShape, Range and CumSum. After --shape
// specialization every shape is static, so Shape and Size are constants at
// import, and ops whose result *type* depends on operand values
// (ConstantOfShape, Range) require those operands to be constants.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Constant: exactly one of value / value_float(s) / value_int(s).
LogicalResult importConstant(NodeImporter &n) {
  if (failed(n.checkNumInputs(0, 0)))
    return failure();
  if (n.getNode().attribute_size() != 1)
    return n.emitError() << "expects exactly one value attribute, got "
                         << n.getNode().attribute_size();
  const onnx::AttributeProto &a = n.getNode().attribute(0);
  Builder &b = n.getBuilder();
  DenseElementsAttr value;
  if (a.name() == "value") {
    FailureOr<DenseElementsAttr> t = n.getTensorAttr("value");
    if (failed(t))
      return failure();
    value = *t;
  } else if (a.name() == "value_float") {
    FailureOr<float> f = n.getFloatAttr("value_float", 0);
    if (failed(f))
      return failure();
    value = DenseElementsAttr::get(getTensorType({}, b.getF32Type()), *f);
  } else if (a.name() == "value_int") {
    FailureOr<int64_t> i = n.getIntAttr("value_int", 0);
    if (failed(i))
      return failure();
    value = DenseElementsAttr::get(getTensorType({}, b.getI64Type()), *i);
  } else if (a.name() == "value_ints") {
    FailureOr<std::optional<SmallVector<int64_t>>> v = n.getIntsAttr("value_ints");
    if (failed(v))
      return failure();
    value = DenseElementsAttr::get(getTensorType({int64_t((*v)->size())}, b.getI64Type()),
                                   ArrayRef<int64_t>(**v));
  } else if (a.name() == "value_floats") {
    if (a.type() != onnx::AttributeProto::FLOATS)
      return n.emitError() << "attribute 'value_floats' must be FLOATS";
    SmallVector<float> v(a.floats().begin(), a.floats().end());
    value = DenseElementsAttr::get(getTensorType({int64_t(v.size())}, b.getF32Type()),
                                   ArrayRef<float>(v));
  } else {
    return n.emitUnsupported("attribute '" + a.name() + "'");
  }
  n.setResult(0, n.createConstant(value));
  return success();
}

/// Shape(start, end): dims [start, end) of the static operand shape.
LogicalResult importShape(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  int64_t rank = n.getInputType(0).getRank();
  FailureOr<int64_t> start = n.getIntAttr("start", 0), end = n.getIntAttr("end", rank);
  if (failed(start) || failed(end))
    return failure();
  // ONNX: negative values count from the back; out-of-range values clamp.
  auto clampDim = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank); };
  int64_t s = clampDim(*start), e = std::max(clampDim(*end), s);
  Builder &b = n.getBuilder();
  n.setResult(0, n.create<ShapeOp>(getTensorType({e - s}, b.getI64Type()), n.getInput(0),
                                   b.getI64IntegerAttr(s), b.getI64IntegerAttr(e)));
  return success();
}

LogicalResult importSize(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  n.setResult(0, n.createScalar(n.getBuilder().getI64Type(),
                                double(n.getInputType(0).getNumElements())));
  return success();
}

/// ConstantOfShape(shape) with `value` (a one-element tensor, default float 0).
LogicalResult importConstantOfShape(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = n.getConstantInts(0, "shape");
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return n.emitError() << "shape " << formatShape(*shape) << " has a negative dim";
  if (!checkedElementCount(*shape))
    return n.emitError() << "shape " << formatShape(*shape) << " has more than 2^40 elements";
  FailureOr<DenseElementsAttr> value = n.getTensorAttr("value");
  if (failed(value))
    return failure();
  Builder &b = n.getBuilder();
  Attribute element;
  Type elemType;
  if (!*value) {
    elemType = b.getF32Type();
    element = b.getF32FloatAttr(0.0f);
  } else {
    if (value->getNumElements() != 1)
      return n.emitError() << "'value' must hold one element, got " << value->getType();
    elemType = value->getElementType();
    element = value->getValues<Attribute>()[0];
  }
  n.setResult(0, n.createConstant(DenseElementsAttr::get(getTensorType(*shape, elemType),
                                                         element)));
  return success();
}

/// Range(start, limit, delta): all three must be constants (the length is
/// part of the result type).
LogicalResult importRange(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 3)))
    return failure();
  static const char *names[] = {"start", "limit", "delta"};
  double v[3];
  Type elem = n.getInputType(0).getElementType();
  for (unsigned i = 0; i < 3; ++i) {
    if (n.getInputType(i).getRank() != 0 || n.getInputType(i).getElementType() != elem)
      return n.emitError() << "operands must be scalars of one type, got " << n.getInputType(0)
                           << ", " << n.getInputType(1) << ", " << n.getInputType(2);
    FailureOr<DenseElementsAttr> c = n.getConstantInput(i, names[i]);
    if (failed(c))
      return failure();
    if (isa<FloatType>(elem))
      v[i] = (*c->getValues<APFloat>().begin()).convertToDouble();
    else
      v[i] = double((*c->getValues<APInt>().begin()).getSExtValue());
  }
  if (elem.isInteger(1))
    return n.emitUnsupported("bool Range");
  // Range-27 stash_type: 16-bit float ranges computed in fp32 (1, the
  // default) or in the element type itself, rounding at each step (0).
  // kiln computes start + k * delta exactly and rounds once: the fp32 form.
  FailureOr<int64_t> stash = n.getIntAttr("stash_type", 1);
  if (failed(stash))
    return failure();
  if ((elem.isF16() || elem.isBF16()) && *stash != 1)
    return n.emitUnsupported("stash_type = " + Twine(*stash) + " (accumulating in " +
                             (elem.isF16() ? "float16" : "bfloat16") + ")");
  if (v[2] == 0)
    return n.emitError() << "delta is 0";
  // A count past kMaxImportElements (or NaN from infinite bounds) would
  // overflow the conversion to int64.
  double len = std::ceil((v[1] - v[0]) / v[2]);
  if (!(len <= double(kMaxImportElements)))
    return n.emitError() << "start " << v[0] << ", limit " << v[1] << " and delta " << v[2]
                         << " give more than 2^40 elements";
  int64_t count = len > 0 ? int64_t(len) : 0;
  n.setResult(0, n.create<RangeOp>(getTensorType({count}, elem), n.getInput(0), n.getInput(1),
                                   n.getInput(2)));
  return success();
}

/// CumSum(x, axis): the axis operand must be a constant.
LogicalResult importCumSum(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  FailureOr<SmallVector<int64_t>> axisValues = n.getConstantInts(1, "axis");
  if (failed(axisValues))
    return failure();
  if (axisValues->size() != 1)
    return n.emitError() << "axis must hold one value";
  auto type = n.getInputType(0);
  FailureOr<int64_t> axis = n.normalizeAxis((*axisValues)[0], type.getRank());
  FailureOr<int64_t> exclusive = n.getIntAttr("exclusive", 0),
                     reverse = n.getIntAttr("reverse", 0);
  if (failed(axis) || failed(exclusive) || failed(reverse))
    return failure();
  if (type.getElementType().isInteger(1))
    return n.emitUnsupported("bool CumSum");
  Builder &b = n.getBuilder();
  n.setResult(0, n.create<CumSumOp>(type, n.getInput(0), b.getI64IntegerAttr(*axis),
                                    b.getBoolAttr(*exclusive != 0),
                                    b.getBoolAttr(*reverse != 0)));
  return success();
}

} // namespace

void onnx_import::registerShapeOps(OpRegistry &r) {
  r.add("Constant", importConstant,
        {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
         "value_strings", "sparse_value"});
  r.add("Shape", importShape, {"start", "end"});
  r.add("Size", importSize);
  r.add("ConstantOfShape", importConstantOfShape, {"value"});
  r.add("Range", importRange, {"stash_type"});
  r.add("CumSum", importCumSum, {"exclusive", "reverse"});
}
