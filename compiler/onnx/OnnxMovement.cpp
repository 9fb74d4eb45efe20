//===- OnnxMovement.cpp - data-movement ONNX ops --------------------------===//
//
// Reshape, Squeeze, Unsqueeze, Flatten (all -> kiln.reshape), Transpose,
// Slice and Split (-> kiln.slice), Concat, Expand, Tile (reshape + expand +
// reshape), Trilu (a constant mask + kiln.where), Pad (kiln.slice for
// negative pads, then per axis kiln.concat with a filled block or kiln.gather
// with constant indices), Gather, GatherElements, GatherND, and TensorScatter
// (a KV cache write: kiln.where over kiln.gather_elements).
// Shape-determining operands (shape, axes, starts/ends, split sizes, repeats,
// k, pads) must be constants after shape specialization.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Normalizes and sorts a list of axes for `rank`, rejecting duplicates.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeImporter &n, ArrayRef<int64_t> axes,
                                              int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> axis = n.normalizeAxis(a, rank);
    if (failed(axis))
      return failure();
    out.push_back(*axis);
  }
  llvm::sort(out);
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    return n.emitError() << "axes " << formatShape(axes) << " repeat an axis";
  return out;
}

/// Reshape(data, shape) with ONNX 0 (copy, unless allowzero) and -1 (infer).
LogicalResult importReshape(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto type = n.getInputType(0);
  FailureOr<SmallVector<int64_t>> spec = n.getConstantInts(1, "shape");
  FailureOr<int64_t> allowZero = n.getIntAttr("allowzero", 0);
  if (failed(spec) || failed(allowZero))
    return failure();
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(*spec)) {
    if (d == 0 && !*allowZero) {
      if ((int64_t)i >= type.getRank())
        return n.emitError() << "shape " << formatShape(*spec) << " copies dim " << i
                             << " of a rank-" << type.getRank() << " tensor";
      d = type.getDimSize(i);
    } else if (d == -1) {
      if (inferred >= 0)
        return n.emitError() << "shape " << formatShape(*spec) << " has more than one -1";
      inferred = i;
      shape.push_back(1);
      continue;
    } else if (d < -1) {
      return n.emitError() << "shape " << formatShape(*spec) << " has a negative dim";
    }
    shape.push_back(d);
    std::optional<int64_t> product = llvm::checkedMul(known, d);
    if (!product || *product > kMaxImportElements)
      return n.emitError() << "shape " << formatShape(*spec) << " has more than 2^40 elements";
    known = *product;
  }
  if (inferred >= 0) {
    if (known == 0 && type.getNumElements() == 0)
      return n.emitError() << "cannot reshape " << type << " to " << formatShape(*spec)
                           << ": with zero elements the -1 dim is ambiguous (any size fits; "
                              "onnxruntime and torch reject it too)";
    if (known == 0 || type.getNumElements() % known != 0)
      return n.emitError() << "cannot reshape " << type << " to " << formatShape(*spec);
    shape[inferred] = type.getNumElements() / known;
  }
  if (checkedElementCount(shape) != type.getNumElements())
    return n.emitError() << "cannot reshape " << type << " to " << formatShape(*spec)
                         << " (resolved " << formatShape(shape) << ")";
  n.setResult(0, n.createReshape(n.getInput(0), shape));
  return success();
}

/// The axes of Squeeze/Unsqueeze: the `axes` attribute before opset 13 (an
/// error when given from 13 on), operand 1 from 13 on; std::nullopt when
/// absent.
FailureOr<std::optional<SmallVector<int64_t>>> squeezeAxes(NodeImporter &n) {
  FailureOr<std::optional<SmallVector<int64_t>>> attr = n.getIntsAttr("axes");
  if (failed(attr))
    return failure();
  if (n.getOpset() >= 13) {
    if (*attr)
      return n.emitUnsupported("attribute 'axes' (an operand since opset 13)");
    if (!n.hasInput(1))
      return std::optional<SmallVector<int64_t>>();
    FailureOr<SmallVector<int64_t>> given = n.getConstantInts(1, "axes");
    if (failed(given))
      return failure();
    return std::optional<SmallVector<int64_t>>(*given);
  }
  if (n.hasInput(1))
    return n.emitError() << "takes axes as an attribute before opset 13, not as an operand";
  return *attr;
}

/// Squeeze(data, axes?): without axes, drops every dim of size 1.
LogicalResult importSqueeze(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  auto type = n.getInputType(0);
  SmallVector<int64_t> axes;
  FailureOr<std::optional<SmallVector<int64_t>>> given = squeezeAxes(n);
  if (failed(given))
    return failure();
  if (*given) {
    FailureOr<SmallVector<int64_t>> norm = normalizeAxes(n, **given, type.getRank());
    if (failed(norm))
      return failure();
    axes = *norm;
    for (int64_t a : axes)
      if (type.getDimSize(a) != 1)
        return n.emitError() << "cannot squeeze dim " << a << " of size " << type.getDimSize(a)
                             << " in " << type;
  } else {
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.getDimSize(d) == 1)
        axes.push_back(d);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!llvm::is_contained(axes, d))
      shape.push_back(type.getDimSize(d));
  n.setResult(0, n.createReshape(n.getInput(0), shape));
  return success();
}

/// Unsqueeze(data, axes): axes index the result rank (an attribute before
/// opset 13).
LogicalResult importUnsqueeze(NodeImporter &n) {
  if (failed(n.checkNumInputs(n.getOpset() >= 13 ? 2 : 1, n.getOpset() >= 13 ? 2 : 1)))
    return failure();
  auto type = n.getInputType(0);
  FailureOr<std::optional<SmallVector<int64_t>>> given = squeezeAxes(n);
  if (failed(given))
    return failure();
  if (!*given)
    return n.emitError() << "needs the 'axes' attribute";
  int64_t outRank = type.getRank() + (*given)->size();
  FailureOr<SmallVector<int64_t>> axes = normalizeAxes(n, **given, outRank);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  int64_t src = 0;
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(llvm::is_contained(*axes, d) ? 1 : type.getDimSize(src++));
  n.setResult(0, n.createReshape(n.getInput(0), shape));
  return success();
}

/// Flatten(axis): [prod(dims[:axis]), prod(dims[axis:])].
LogicalResult importFlatten(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto type = n.getInputType(0);
  int64_t rank = type.getRank();
  FailureOr<int64_t> axis = n.getIntAttr("axis", 1);
  if (failed(axis))
    return failure();
  if (*axis < -rank || *axis > rank)
    return n.emitError() << "axis " << *axis << " is out of range for rank " << rank;
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < a ? outer : inner) *= type.getDimSize(d);
  n.setResult(0, n.createReshape(n.getInput(0), {outer, inner}));
  return success();
}

/// Transpose(perm): default perm reverses the dims.
LogicalResult importTranspose(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto type = n.getInputType(0);
  int64_t rank = type.getRank();
  FailureOr<std::optional<SmallVector<int64_t>>> given = n.getIntsAttr("perm");
  if (failed(given))
    return failure();
  SmallVector<int64_t> perm;
  if (*given)
    perm = **given;
  else
    perm = llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank)));
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if (!llvm::equal(sorted, llvm::seq<int64_t>(0, rank)))
    return n.emitError() << "perm " << formatShape(perm) << " is not a permutation of rank "
                         << rank;
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  n.setResult(0, n.create<TransposeOp>(type.clone(shape), n.getInput(0),
                                       n.getBuilder().getDenseI64ArrayAttr(perm)));
  return success();
}

/// Slice(data, starts, ends, axes?, steps?) with the ONNX clamping rules.
LogicalResult importSlice(NodeImporter &n) {
  // Slice-1 (before opset 10): starts, ends and axes are attributes.
  bool attrForm = n.getOpset() < 10;
  for (const char *name : {"starts", "ends", "axes"})
    if (!attrForm && n.findAttr(name))
      return n.emitUnsupported(Twine("attribute '") + name + "' (an operand since opset 10)");
  if (failed(attrForm ? n.checkNumInputs(1, 1) : n.checkNumInputs(3, 5)))
    return failure();
  auto type = n.getInputType(0);
  int64_t rank = type.getRank();
  auto ints = [&](unsigned i, StringRef name) -> FailureOr<SmallVector<int64_t>> {
    // starts, ends, axes and steps are 1-D (onnxruntime and the reference
    // implementation reject other ranks).
    if (!attrForm && n.getInputType(i).getRank() != 1)
      return n.emitError() << "'" << name << "' must be a 1-D tensor, got "
                           << n.getInputType(i);
    if (!attrForm)
      return n.getConstantInts(i, name);
    FailureOr<std::optional<SmallVector<int64_t>>> a = n.getIntsAttr(name);
    if (failed(a))
      return failure();
    if (!*a)
      return n.emitError() << "needs the '" << name << "' attribute (Slice-1, opset "
                           << n.getOpset() << ")";
    return **a;
  };
  FailureOr<SmallVector<int64_t>> starts = ints(1, "starts");
  if (failed(starts))
    return failure();
  FailureOr<SmallVector<int64_t>> ends = ints(2, "ends");
  if (failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (attrForm && n.findAttr("axes")) {
    FailureOr<SmallVector<int64_t>> a = ints(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else if (n.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> a = ints(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  }
  if (n.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> s = ints(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return n.emitError() << "starts, ends, axes and steps must have equal lengths";

  SmallVector<int64_t> outStarts(rank, 0), outSteps(rank, 1), shape(type.getShape());
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts->size(); ++i) {
    FailureOr<int64_t> axis = n.normalizeAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return n.emitError() << "axis " << *axis << " is sliced twice";
    seen[*axis] = true;
    int64_t dim = type.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return n.emitError() << "step of axis " << *axis << " is 0";
    // Negative starts/ends count from the back (INT64_MIN/MAX stay far out),
    // then clamp: [0, dim] for positive steps, [-1, dim - 1] for negative.
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start = start < -dim ? -1 - dim : start + dim; // avoid overflow near INT64_MIN
    if (end < 0)
      end = end < -dim ? -1 - dim : end + dim;
    // len = ceil(span / |step|), in unsigned arithmetic: |INT64_MIN| and
    // span + step - 1 overflow int64.
    uint64_t magnitude = step > 0 ? uint64_t(step) : uint64_t(0) - uint64_t(step);
    int64_t span;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      span = end - start;
    } else {
      start = std::clamp<int64_t>(start, -1, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      span = start - end;
    }
    int64_t len = span > 0 ? int64_t(1 + (uint64_t(span) - 1) / magnitude) : 0;
    outStarts[*axis] = len > 0 ? start : 0;
    // One element: any step reads the same element; keep codegen's index
    // arithmetic small.
    outSteps[*axis] = len > 1 ? step : 1;
    shape[*axis] = len;
  }
  Builder &b = n.getBuilder();
  n.setResult(0, n.create<SliceOp>(type.clone(shape), n.getInput(0),
                                   b.getDenseI64ArrayAttr(outStarts),
                                   b.getDenseI64ArrayAttr(outSteps)));
  return success();
}

/// Split(input, split?) with `axis` and opset-18 `num_outputs`: one
/// kiln.slice per output.
LogicalResult importSplit(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  auto type = n.getInputType(0);
  FailureOr<int64_t> axis = n.getAxisAttr("axis", 0, type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  int64_t numOutputs = n.getNumOutputs();
  SmallVector<int64_t> sizes;
  // Before opset 13 the sizes are the `split` attribute.
  if (n.findAttr("split") && n.getOpset() >= 13)
    return n.emitUnsupported("attribute 'split' (an operand since opset 13)");
  if (n.hasInput(1) && n.getOpset() < 13)
    return n.emitError() << "takes split as an attribute before opset 13, not as an operand";
  if (n.findAttr("split")) {
    FailureOr<std::optional<SmallVector<int64_t>>> given = n.getIntsAttr("split");
    if (failed(given))
      return failure();
    sizes = **given;
  } else if (n.hasInput(1)) {
    if (n.findAttr("num_outputs"))
      return n.emitError() << "'split' and 'num_outputs' are both given";
    FailureOr<SmallVector<int64_t>> given = n.getConstantInts(1, "split");
    if (failed(given))
      return failure();
    sizes = *given;
  } else {
    FailureOr<int64_t> num = n.getIntAttr("num_outputs", numOutputs);
    if (failed(num))
      return failure();
    if (*num != numOutputs || *num <= 0)
      return n.emitError() << "num_outputs " << *num << " does not match the "
                           << numOutputs << " outputs";
    // Opset 18: ceil(dim / num) each, the last one smaller; older opsets
    // require an even split.
    int64_t chunk = (dim + *num - 1) / *num;
    if (!n.findAttr("num_outputs") && dim % *num != 0)
      return n.emitError() << "cannot split dim " << dim << " evenly into " << *num
                           << " outputs";
    if (dim > 0 && (*num - 1) * chunk >= dim)
      return n.emitError() << "cannot split dim " << dim << " into " << *num
                           << " chunks of " << chunk << " with a smaller, non-empty last one";
    for (int64_t i = 0, left = dim; i < *num; ++i, left -= chunk)
      sizes.push_back(std::clamp<int64_t>(left, 0, chunk));
  }
  if ((int64_t)sizes.size() != numOutputs)
    return n.emitError() << "split " << formatShape(sizes) << " has " << sizes.size()
                         << " sizes for " << numOutputs << " outputs";
  // The sum is checked for overflow: a split from a file can hold any int64.
  int64_t total = 0;
  bool partitions = llvm::all_of(sizes, [&](int64_t s) {
    return s >= 0 && !llvm::AddOverflow(total, s, total);
  });
  if (!partitions || total != dim)
    return n.emitError() << "split " << formatShape(sizes) << " does not partition dim "
                         << *axis << " of " << type;
  Builder &b = n.getBuilder();
  int64_t offset = 0;
  for (int64_t i = 0; i < numOutputs; ++i) {
    SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1),
        shape(type.getShape());
    starts[*axis] = sizes[i] > 0 ? offset : 0;
    shape[*axis] = sizes[i];
    n.setResult(i, n.create<SliceOp>(type.clone(shape), n.getInput(0),
                                     b.getDenseI64ArrayAttr(starts),
                                     b.getDenseI64ArrayAttr(steps)));
    offset += sizes[i];
  }
  return success();
}

LogicalResult importConcat(NodeImporter &n) {
  if (n.getNumInputs() < 1)
    return n.emitError() << "expects at least 1 operand";
  for (unsigned i = 0; i < n.getNumInputs(); ++i)
    if (!n.hasInput(i))
      return n.emitError() << "operand " << i << " is empty";
  auto first = n.getInputType(0);
  FailureOr<int64_t> axis = n.getAxisAttr("axis", 0, first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> operands;
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (unsigned i = 0; i < n.getNumInputs(); ++i) {
    auto t = n.getInputType(i);
    if (failed(n.checkSameElementType(0, i)))
      return failure();
    bool ok = t.getRank() == first.getRank();
    for (int64_t d = 0; ok && d < t.getRank(); ++d)
      ok = d == *axis || t.getDimSize(d) == first.getDimSize(d);
    if (!ok)
      return n.emitError() << "operand " << i << " of type " << t
                           << " does not match operand 0 of type " << first
                           << " outside axis " << *axis;
    shape[*axis] += t.getDimSize(*axis);
    operands.push_back(n.getInput(i));
  }
  n.setResult(0, n.create<ConcatOp>(first.clone(shape), operands,
                                    n.getBuilder().getI64IntegerAttr(*axis)));
  return success();
}

/// Expand(input, shape): bidirectional broadcast of the input to `shape`.
LogicalResult importExpand(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto type = n.getInputType(0);
  FailureOr<SmallVector<int64_t>> target = n.getConstantInts(1, "shape");
  if (failed(target))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = n.broadcast(type.getShape(), *target);
  if (failed(shape))
    return failure();
  n.setResult(0, n.create<ExpandOp>(type.clone(*shape), n.getInput(0)));
  return success();
}

/// Tile(input, repeats) = reshape [1, d0, 1, d1, ...] -> expand
/// [r0, d0, r1, d1, ...] -> reshape [r0*d0, r1*d1, ...].
LogicalResult importTile(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto type = n.getInputType(0);
  FailureOr<SmallVector<int64_t>> repeats = n.getConstantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  if ((int64_t)repeats->size() != type.getRank() ||
      llvm::any_of(*repeats, [](int64_t r) { return r < 0; }))
    return n.emitError() << "repeats " << formatShape(*repeats)
                         << " must be non-negative, one per dim of " << type;
  SmallVector<int64_t> interleaved, expanded, result;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    interleaved.append({1, type.getDimSize(d)});
    expanded.append({(*repeats)[d], type.getDimSize(d)});
    std::optional<int64_t> dim = llvm::checkedMul((*repeats)[d], type.getDimSize(d));
    if (!dim)
      return n.emitError() << "repeats " << formatShape(*repeats) << " of " << type
                           << " give more than 2^40 elements";
    result.push_back(*dim);
  }
  if (!checkedElementCount(expanded))
    return n.emitError() << "repeats " << formatShape(*repeats) << " of " << type
                         << " give more than 2^40 elements";
  Value v = n.createReshape(n.getInput(0), interleaved);
  v = n.create<ExpandOp>(type.clone(expanded), v);
  n.setResult(0, n.createReshape(v, result));
  return success();
}

/// Trilu(input, k?) with `upper`: where(mask, input, 0) with a constant mask
/// over the last two dims.
LogicalResult importTrilu(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  auto type = n.getInputType(0);
  if (type.getRank() < 2)
    return n.emitError() << "input must have rank >= 2, got " << type;
  int64_t k = 0;
  if (n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> kv = n.getConstantInts(1, "k");
    if (failed(kv))
      return failure();
    if (kv->size() != 1)
      return n.emitError() << "k must hold one value";
    k = (*kv)[0];
  }
  FailureOr<int64_t> upper = n.getIntAttr("upper", 1);
  if (failed(upper))
    return failure();
  int64_t rows = type.getDimSize(type.getRank() - 2), cols = type.getShape().back();
  SmallVector<bool> mask;
  mask.reserve(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.push_back(*upper ? j - i >= k : j - i <= k);
  Builder &b = n.getBuilder();
  Value maskValue = n.createConstant(
      DenseElementsAttr::get(getTensorType({rows, cols}, b.getI1Type()), ArrayRef<bool>(mask)));
  Value zero = n.createScalar(type.getElementType(), 0.0);
  n.setResult(0, n.create<WhereOp>(type, maskValue, n.getInput(0), zero));
  return success();
}

/// The modes of ONNX Pad (`mode` attribute).
enum class PadMode { Constant, Reflect, Edge, Wrap };

/// Largest padded axis, in elements, that the edge, reflect and wrap modes
/// build an index table for (2^24 int64 indices = 128 MiB of constant).
constexpr int64_t kMaxPadIndexTable = int64_t(1) << 24;

/// The position in [0, dim) that the edge, reflect or wrap mode reads for
/// position `src` of an axis of size `dim` > 0 (src < 0 or >= dim lie in the
/// padding). Reflect repeats with period 2 (dim - 1), as numpy.pad does for
/// pads wider than the axis.
int64_t padSourceIndex(PadMode mode, int64_t src, int64_t dim) {
  auto floorMod = [](int64_t a, int64_t m) { return ((a % m) + m) % m; };
  switch (mode) {
  case PadMode::Edge:
    return std::clamp<int64_t>(src, 0, dim - 1);
  case PadMode::Wrap:
    return floorMod(src, dim);
  case PadMode::Reflect: {
    if (dim == 1)
      return 0;
    int64_t period = 2 * (dim - 1), m = floorMod(src, period);
    return m < dim ? m : period - m;
  }
  case PadMode::Constant:
    break;
  }
  llvm_unreachable("constant mode reads no source index");
}

/// The fill value of a constant-mode Pad as a 0-d tensor of `elementType`:
/// the `value` attribute before opset 11, else operand 2 (a constant or a
/// run-time scalar), else 0.
FailureOr<Value> padFillValue(NodeImporter &n, Type elementType) {
  if (n.getOpset() < 11) {
    FailureOr<float> value = n.getFloatAttr("value", 0.0f);
    if (failed(value))
      return failure();
    return n.createScalar(elementType, *value);
  }
  if (!n.hasInput(2))
    return n.createScalar(elementType, 0.0);
  auto type = n.getInputType(2);
  if (type.getElementType() != elementType || type.getNumElements() != 1)
    return n.emitError() << "constant_value must be one element of the data's type " << elementType
                         << ", got " << type;
  return n.createReshape(n.getInput(2), {});
}

/// Pad(data, pads, constant_value?, axes?) with `mode` (opsets 2-10: the
/// `pads` and `value` attributes). Lowered in two steps:
///  1. negative pads crop: one kiln.slice over all axes;
///  2. per padded axis, constant mode concatenates the fill value expanded
///     to the pad blocks; edge, reflect and wrap gather the axis with a
///     constant index table (padSourceIndex).
LogicalResult importPad(NodeImporter &n) {
  bool attrForm = n.getOpset() < 11;
  for (const char *name : {"pads", "value"})
    if (!attrForm && n.findAttr(name))
      return n.emitUnsupported(Twine("attribute '") + name + "' (an operand since opset 11)");
  if (failed(attrForm ? n.checkNumInputs(1, 1) : n.checkNumInputs(2, n.getOpset() >= 18 ? 4 : 3)))
    return failure();
  auto type = n.getInputType(0);
  int64_t rank = type.getRank();

  FailureOr<std::string> modeName = n.getStringAttr("mode", "constant");
  if (failed(modeName))
    return failure();
  int mode = llvm::StringSwitch<int>(*modeName)
                 .Case("constant", int(PadMode::Constant))
                 .Case("reflect", int(PadMode::Reflect))
                 .Case("edge", int(PadMode::Edge))
                 .Case("wrap", int(PadMode::Wrap))
                 .Default(-1);
  if (mode < 0)
    return n.emitUnsupported("mode '" + *modeName +
                             "' (Pad's modes are constant, reflect, edge and wrap)");
  PadMode padMode = PadMode(mode);
  if (padMode == PadMode::Wrap && n.getOpset() < 19)
    return n.emitError() << "mode 'wrap' first appears in Pad-19 (the model imports opset "
                         << n.getOpset() << ")";

  SmallVector<int64_t> pads;
  if (attrForm) {
    FailureOr<std::optional<SmallVector<int64_t>>> a = n.getIntsAttr("pads");
    if (failed(a))
      return failure();
    if (!*a)
      return n.emitError() << "needs the 'pads' attribute (Pad-2, opset " << n.getOpset() << ")";
    pads = **a;
  } else {
    if (n.getInputType(1).getRank() != 1)
      return n.emitError() << "'pads' must be a 1-D tensor, got " << n.getInputType(1);
    // The spec's type constraint (onnxruntime refuses the model otherwise).
    if (!n.getInputType(1).getElementType().isSignlessInteger(64))
      return n.emitError() << "'pads' must be int64 (Pad's type constraint), got "
                           << n.getInputType(1);
    FailureOr<SmallVector<int64_t>> v = n.getConstantInts(1, "pads");
    if (failed(v))
      return failure();
    pads = *v;
  }
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (n.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = n.getConstantInts(3, "axes");
    if (failed(given))
      return failure();
    axes.clear();
    for (int64_t a : *given) {
      FailureOr<int64_t> axis = n.normalizeAxis(a, rank);
      if (failed(axis))
        return failure();
      if (llvm::is_contained(axes, *axis))
        return n.emitError() << "axes " << formatShape(*given) << " repeat an axis";
      axes.push_back(*axis);
    }
  }
  if (pads.size() != 2 * axes.size())
    return n.emitError() << "pads " << formatShape(pads) << " must hold 2 values per padded axis ("
                         << 2 * axes.size() << " for " << axes.size() << " axes)";
  SmallVector<int64_t> before(rank, 0), after(rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    before[axis] = pads[i];
    after[axis] = pads[i + axes.size()];
  }

  Value fill;
  if (padMode == PadMode::Constant) {
    FailureOr<Value> v = padFillValue(n, type.getElementType());
    if (failed(v))
      return failure();
    fill = *v;
  }

  // 1. Negative pads crop (onnxruntime's semantics; numpy.pad, the ONNX
  //    reference, rejects them).
  Builder &b = n.getBuilder();
  Value v = n.getInput(0);
  SmallVector<int64_t> starts(rank, 0), shape(type.getShape());
  bool crops = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t cropBefore = before[d] < 0 ? before[d] : 0, cropAfter = after[d] < 0 ? after[d] : 0;
    if (cropBefore == 0 && cropAfter == 0)
      continue;
    // -cropBefore - cropAfter cannot overflow unless a pad is INT64_MIN.
    if (cropBefore < -shape[d] || cropAfter < -shape[d] || -cropBefore > shape[d] + cropAfter)
      return n.emitError() << "pads " << formatShape(pads) << " crop more than the " << shape[d]
                           << " elements of dim " << d << " of " << type;
    crops = true;
    starts[d] = -cropBefore;
    shape[d] += cropBefore + cropAfter;
    if (shape[d] == 0)
      starts[d] = 0;
  }
  if (crops)
    v = n.create<SliceOp>(type.clone(shape), v, b.getDenseI64ArrayAttr(starts),
                          b.getDenseI64ArrayAttr(SmallVector<int64_t>(rank, 1)));

  // 2. Positive pads, one axis at a time.
  for (int64_t d = 0; d < rank; ++d) {
    int64_t lo = std::max<int64_t>(before[d], 0), hi = std::max<int64_t>(after[d], 0);
    if (lo == 0 && hi == 0)
      continue;
    int64_t dim = shape[d];
    std::optional<int64_t> padded = llvm::checkedAdd(dim, lo);
    if (padded)
      padded = llvm::checkedAdd(*padded, hi);
    SmallVector<int64_t> outShape(shape);
    if (padded)
      outShape[d] = *padded;
    if (!padded || !checkedElementCount(outShape))
      return n.emitError() << "pads " << formatShape(pads) << " of " << type
                           << " give more than 2^40 elements";
    if (padMode == PadMode::Constant) {
      SmallVector<Value> parts;
      auto block = [&](int64_t size) {
        SmallVector<int64_t> blockShape(shape);
        blockShape[d] = size;
        Value one = n.createReshape(fill, SmallVector<int64_t>(rank, 1));
        parts.push_back(n.create<ExpandOp>(type.clone(blockShape), one));
      };
      if (lo > 0)
        block(lo);
      parts.push_back(v);
      if (hi > 0)
        block(hi);
      v = n.create<ConcatOp>(type.clone(outShape), parts, b.getI64IntegerAttr(d));
    } else {
      if (dim == 0)
        return n.emitError() << "cannot pad dim " << d << " of size 0 in mode '" << *modeName
                             << "' (it has no elements to repeat)";
      if (*padded > kMaxPadIndexTable)
        return n.emitUnsupported("mode '" + *modeName + "' padding dim " + Twine(d) + " to " +
                                 Twine(*padded) +
                                 " elements (kiln's index table is limited to 2^24)");
      SmallVector<int64_t> indices;
      indices.reserve(*padded);
      for (int64_t j = 0; j < *padded; ++j)
        indices.push_back(padSourceIndex(padMode, j - lo, dim));
      Value table = n.createConstant(DenseElementsAttr::get(
          getTensorType({*padded}, b.getI64Type()), ArrayRef<int64_t>(indices)));
      v = n.create<GatherOp>(type.clone(outShape), v, table, b.getI64IntegerAttr(d));
    }
    shape = outShape;
  }
  n.setResult(0, v);
  return success();
}

/// Checks that operand 1 holds int32/int64 indices.
LogicalResult checkIndices(NodeImporter &n) {
  Type elem = n.getInputType(1).getElementType();
  if (elem.isInteger(64) || elem.isInteger(32))
    return success();
  return n.emitError() << "indices must be int64 or int32, got " << n.getInputType(1);
}

LogicalResult importGather(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)) || failed(checkIndices(n)))
    return failure();
  auto data = n.getInputType(0), indices = n.getInputType(1);
  FailureOr<int64_t> axis = n.getAxisAttr("axis", 0, data.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  n.setResult(0, n.create<GatherOp>(data.clone(shape), n.getInput(0), n.getInput(1),
                                    n.getBuilder().getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importGatherElements(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)) || failed(checkIndices(n)))
    return failure();
  auto data = n.getInputType(0), indices = n.getInputType(1);
  FailureOr<int64_t> axis = n.getAxisAttr("axis", 0, data.getRank());
  if (failed(axis))
    return failure();
  if (indices.getRank() != data.getRank())
    return n.emitError() << "indices " << indices << " must have the rank of data " << data;
  n.setResult(0, n.create<GatherElementsOp>(data.clone(indices.getShape()), n.getInput(0),
                                            n.getInput(1),
                                            n.getBuilder().getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importGatherND(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)) || failed(checkIndices(n)))
    return failure();
  auto data = n.getInputType(0), indices = n.getInputType(1);
  FailureOr<int64_t> batchDims = n.getIntAttr("batch_dims", 0);
  if (failed(batchDims))
    return failure();
  int64_t b = *batchDims, q = indices.getRank(), r = data.getRank();
  if (q < 1 || b < 0 || b >= std::min(q, r))
    return n.emitError() << "batch_dims " << b << " is invalid for data " << data
                         << " and indices " << indices;
  int64_t k = indices.getShape().back();
  if (b + k > r)
    return n.emitError() << "index tuples of length " << k << " exceed the rank of data "
                         << data;
  for (int64_t d = 0; d < b; ++d)
    if (data.getDimSize(d) != indices.getDimSize(d))
      return n.emitError() << "batch dim " << d << " differs between data " << data
                           << " and indices " << indices;
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(b + k));
  n.setResult(0, n.create<GatherNDOp>(data.clone(shape), n.getInput(0), n.getInput(1),
                                      n.getBuilder().getI64IntegerAttr(b)));
  return success();
}

/// TensorScatter-24, a KV cache written in place: present = past_cache with update's S entries
/// along `axis` (not the batch dim 0) written at write_indices[b] + i for batch row b (mode
/// "linear"; entries past the cache's M positions are dropped, where the ONNX reference would
/// index out of bounds) or at (write_indices[b] + i) mod M ("circular"); write_indices (int64
/// [B]) defaults to zeros. As fusible ops (one elementwise kernel): for cache position j,
/// rel = j - write_indices[b] (circular: rel mod M), and present = where(0 <= rel < S,
/// GatherElements(update, clamp(rel, 0, S - 1), axis), past_cache).
LogicalResult importTensorScatter(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 3)) || failed(n.checkSameElementType(0, 1)))
    return failure();
  auto past = n.getInputType(0), update = n.getInputType(1);
  const int64_t rank = past.getRank();
  if (rank < 2 || update.getRank() != rank)
    return n.emitError() << "past_cache " << past << " and update " << update
                         << " must have one rank of at least 2 (batch first)";
  FailureOr<int64_t> axis = n.getAxisAttr("axis", -2, rank);
  if (failed(axis))
    return failure();
  if (*axis == 0)
    return n.emitError() << "axis must not be 0, the batch dimension";
  FailureOr<std::string> mode = n.getStringAttr("mode", "linear");
  if (failed(mode))
    return failure();
  if (*mode != "linear" && *mode != "circular")
    return n.emitError() << "mode '" << *mode << "' is not 'linear' or 'circular'";
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis ? past.getDimSize(d) != update.getDimSize(d)
                   : past.getDimSize(d) < update.getDimSize(d))
      return n.emitError() << "update " << update << " does not fit past_cache " << past
                           << " (dim " << d << ")";
  const int64_t batch = past.getDimSize(0), M = past.getDimSize(*axis),
                S = update.getDimSize(*axis);
  OpBuilder &b = n.getBuilder();
  Type i64 = b.getI64Type();
  if (S == 0 || past.getNumElements() == 0) {
    n.setResult(0, n.getInput(0));
    return success();
  }
  // write_indices[b] as [B, 1, ..., 1].
  SmallVector<int64_t> batchShape(rank, 1);
  batchShape[0] = batch;
  Value w;
  if (n.hasInput(2)) {
    auto wt = n.getInputType(2);
    if (!wt.getElementType().isInteger(64) || wt.getRank() != 1 || wt.getDimSize(0) != batch)
      return n.emitError() << "write_indices " << wt << " must be int64 [batch_size] = ["
                           << batch << "]";
    w = n.createReshape(n.getInput(2), batchShape);
  } else {
    w = n.createConstant(DenseElementsAttr::get(getTensorType(batchShape, i64), int64_t(0)));
  }
  // The cache positions j along the axis, [1, .., M, .., 1].
  SmallVector<int64_t> positionShape(rank, 1);
  positionShape[*axis] = M;
  SmallVector<int64_t> positions(M);
  for (int64_t j = 0; j < M; ++j)
    positions[j] = j;
  Value j = n.createConstant(
      DenseElementsAttr::get(getTensorType(positionShape, i64), ArrayRef<int64_t>(positions)));
  Value rel = broadcastBinary<SubOp>(n, j, w);
  if (*mode == "circular")
    rel = broadcastBinary<ModOp>(n, rel, n.createScalar(i64, double(M)));
  Value zero = n.createScalar(i64, 0), count = n.createScalar(i64, double(S));
  Type i1 = b.getI1Type();
  Value written = broadcastBinary<AndOp>(n, broadcastBinary<GreaterEqualOp>(n, rel, zero, i1),
                                         broadcastBinary<LessOp>(n, rel, count, i1));
  Value index = broadcastBinary<MinOp>(n, broadcastBinary<MaxOp>(n, rel, zero),
                                       n.createScalar(i64, double(S - 1)));
  Value fullIndex = n.create<ExpandOp>(getTensorType(past.getShape(), i64), index);
  Value gathered = n.create<GatherElementsOp>(past, n.getInput(1), fullIndex,
                                              b.getI64IntegerAttr(*axis));
  n.setResult(0, broadcastWhere(n, written, gathered, n.getInput(0)));
  return success();
}

} // namespace

void onnx_import::registerMovementOps(OpRegistry &r) {
  r.add("Reshape", importReshape, {"allowzero"});
  r.add("Squeeze", importSqueeze, {"axes"});
  r.add("Unsqueeze", importUnsqueeze, {"axes"});
  r.add("Flatten", importFlatten, {"axis"});
  r.add("Transpose", importTranspose, {"perm"});
  r.add("Slice", importSlice, {"starts", "ends", "axes"});
  r.add("Split", importSplit, {"axis", "num_outputs", "split"});
  r.add("Concat", importConcat, {"axis"});
  r.add("Expand", importExpand);
  r.add("Tile", importTile);
  r.add("Trilu", importTrilu, {"upper"});
  r.add("Pad", importPad, {"mode", "pads", "value"});
  r.add("Gather", importGather, {"axis"});
  r.add("GatherElements", importGatherElements, {"axis"});
  r.add("GatherND", importGatherND, {"batch_dims"});
  r.add("TensorScatter", importTensorScatter, {"axis", "mode"});
}
