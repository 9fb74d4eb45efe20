//===- OnnxEinsum.cpp - ONNX Einsum ---------------------------------------===//
//
// Einsum (opset 12+) lowered to existing kiln ops. The equation is parsed in
// full (labels a-z and A-Z, one `...` per term, spaces, an implicit output
// when `->` is absent), then:
//  1. each operand's repeated labels become diagonals (transpose the pair to
//     the back, reshape [.., n, n] -> [.., n * n], kiln.slice with step n + 1);
//  2. labels that no other operand and not the output hold are summed out
//     (kiln.reduce <sum>);
//  3. operands are contracted pairwise from the left: labels in both that
//     are still needed are batch dims, the others are contracted. Floats go
//     through kiln.matmul on [batch.., M, K] x [batch.., K, N] (size-1 batch
//     dims broadcast); without a contracted label (an outer product) and for
//     integers it is a broadcast kiln.mul followed by kiln.reduce <sum>;
//  4. the last operand is transposed to the output order.
// A size-1 dim broadcasts against any size of the same label, for letters as
// for the dims under `...` (numpy, onnxruntime). Any number of operands is
// accepted (pairwise chaining, left to right, without reordering for cost).
// Refused: bool operands, an explicit output without `...` when the inputs'
// `...` covers dims (numpy and onnxruntime refuse it too), a label repeated in
// one operand with different sizes. Every step creates ops through
// createOrFold, so einsums of constants fold.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// A label: a letter's ASCII code, or kEllipsisLabel + i for the i-th of the
/// dims that `...` stands for (counted from the first of the widest
/// ellipsis, so ellipses of different ranks align at the right).
using Label = int64_t;
constexpr Label kEllipsisLabel = 256;

/// A parsed term: its letters and the position of `...` among them (-1 when
/// the term has none).
struct Term {
  std::string text; // as written, without spaces
  std::string letters;
  int64_t ellipsisAt = -1;
};

/// A parsed equation.
struct Equation {
  SmallVector<Term> inputs;
  std::optional<Term> output; // std::nullopt: implicit output
};

/// Parses one term (spaces already removed); an error text on failure.
FailureOr<Term> parseTerm(StringRef text, std::string &why) {
  Term term;
  term.text = text.str();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (!text.substr(i).starts_with("...")) {
        why = "'.' outside an ellipsis '...'";
        return failure();
      }
      if (term.ellipsisAt >= 0) {
        why = "a term has two ellipses";
        return failure();
      }
      term.ellipsisAt = term.letters.size();
      i += 2;
    } else if (llvm::isAlpha(c)) {
      term.letters.push_back(c);
    } else {
      // A byte outside ASCII (part of a UTF-8 character) is named by its value: the message
      // stays valid text.
      why = static_cast<unsigned char>(c) < 0x80
                ? std::string("character '") + c + "'"
                : llvm::formatv("byte 0x{0:X-2} (not ASCII)", unsigned(static_cast<unsigned char>(c)))
                      .str();
      why += " is not a label (a-z, A-Z), '...', ',' or '->'";
      return failure();
    }
  }
  return term;
}

/// Parses an Einsum equation; on failure `why` says what is wrong.
FailureOr<Equation> parseEquation(StringRef equation, std::string &why) {
  std::string compact;
  for (char c : equation)
    if (c != ' ')
      compact.push_back(c);
  StringRef text(compact);
  Equation eq;
  size_t arrow = text.find("->");
  StringRef lhs = text.substr(0, arrow);
  if (arrow != StringRef::npos) {
    StringRef rhs = text.substr(arrow + 2);
    if (rhs.contains("->") || rhs.contains(',')) {
      why = "the output term after '->' must be one term";
      return failure();
    }
    FailureOr<Term> out = parseTerm(rhs, why);
    if (failed(out))
      return failure();
    eq.output = *out;
  }
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  for (StringRef t : terms) {
    FailureOr<Term> term = parseTerm(t, why);
    if (failed(term))
      return failure();
    eq.inputs.push_back(*term);
  }
  return eq;
}

/// A tensor during the lowering with one label per dim.
struct Labeled {
  Value value;
  SmallVector<Label> labels;

  /// The value's ranked tensor type.
  RankedTensorType type() const { return cast<RankedTensorType>(value.getType()); }
  /// The size of the (first) dim labelled `l`, which must be present.
  int64_t dim(Label l) const { return type().getDimSize(llvm::find(labels, l) - labels.begin()); }
  /// True if a dim is labelled `l`.
  bool has(Label l) const { return llvm::is_contained(labels, l); }
};

/// The label of character `c`.
Label letterLabel(char c) { return Label(static_cast<unsigned char>(c)); }

/// How messages name label `l`: "label 'j'" or "dim 1 under '...'".
std::string labelName(Label l) {
  if (l >= kEllipsisLabel)
    return "dim " + std::to_string(l - kEllipsisLabel) + " under '...'";
  return std::string("label '") + char(l) + "'";
}

/// Builds the einsum of one node; `equation` (as written) is quoted in
/// messages.
class EinsumLowering {
public:
  EinsumLowering(NodeImporter &n, StringRef equation) : n(n), equation(equation.str()) {}

  /// Parses and checks the equation against the operands, then builds steps
  /// 1-4 and sets the node's result; emits an error naming the node on
  /// failure.
  LogicalResult run();

private:
  Value transpose(Value v, ArrayRef<int64_t> perm);
  Labeled permute(Labeled t, ArrayRef<Label> order);
  Labeled takeDiagonals(Labeled t);
  Labeled sumOut(Labeled t, ArrayRef<Label> labels);
  Labeled contract(Labeled a, Labeled b, ArrayRef<Label> keep);
  /// `kiln.reshape` of `v` (nothing when the shape is unchanged).
  Value reshapeTo(Value v, ArrayRef<int64_t> shape) { return n.createReshape(v, shape); }

  NodeImporter &n;
  std::string equation;
};

/// `kiln.transpose` of `v` by `perm` (nothing for the identity).
Value EinsumLowering::transpose(Value v, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return n.create<TransposeOp>(type.clone(shape), v, n.getBuilder().getDenseI64ArrayAttr(perm));
}

/// `t` with its dims in `order` (a permutation of t.labels).
Labeled EinsumLowering::permute(Labeled t, ArrayRef<Label> order) {
  SmallVector<int64_t> perm;
  for (Label l : order)
    perm.push_back(llvm::find(t.labels, l) - t.labels.begin());
  return {transpose(t.value, perm), SmallVector<Label>(order)};
}

/// Step 1: while a label repeats in `t`, moves its first two dims to the
/// back and keeps their diagonal: reshape [.., n, n] -> [.., n * n] and slice
/// with step n + 1.
Labeled EinsumLowering::takeDiagonals(Labeled t) {
  Builder &b = n.getBuilder();
  for (;;) {
    auto dup = llvm::find_if(t.labels, [&](Label l) { return llvm::count(t.labels, l) > 1; });
    if (dup == t.labels.end())
      return t;
    Label l = *dup;
    SmallVector<Label> order;
    for (Label x : t.labels)
      if (x != l)
        order.push_back(x);
    int64_t repeats = llvm::count(t.labels, l);
    // Two of the copies go to the back; any further copy stays in front and
    // is handled by the next round.
    for (int64_t i = 0; i < repeats - 2; ++i)
      order.insert(order.begin(), l);
    SmallVector<int64_t> perm;
    SmallVector<bool> used(t.labels.size(), false);
    for (Label x : order) {
      for (size_t i = 0; i < t.labels.size(); ++i)
        if (!used[i] && t.labels[i] == x) {
          used[i] = true;
          perm.push_back(i);
          break;
        }
    }
    for (size_t i = 0; i < t.labels.size(); ++i)
      if (!used[i])
        perm.push_back(i);
    Value v = transpose(t.value, perm);
    auto type = cast<RankedTensorType>(v.getType());
    int64_t size = t.dim(l), rank = type.getRank();
    SmallVector<int64_t> flat(type.getShape().drop_back(2));
    flat.push_back(size * size);
    v = reshapeTo(v, flat);
    SmallVector<int64_t> shape(type.getShape().drop_back(1)), starts(rank - 1, 0),
        steps(rank - 1, 1);
    steps.back() = size > 1 ? size + 1 : 1;
    v = n.create<SliceOp>(type.clone(shape), v, b.getDenseI64ArrayAttr(starts),
                          b.getDenseI64ArrayAttr(steps));
    order.push_back(l);
    t = {v, order};
  }
}

/// Step 2: sums out the dims of `t` labelled with any of `labels`.
Labeled EinsumLowering::sumOut(Labeled t, ArrayRef<Label> labels) {
  SmallVector<int64_t> axes, shape;
  SmallVector<Label> kept;
  auto type = t.type();
  for (auto [i, l] : llvm::enumerate(t.labels)) {
    if (llvm::is_contained(labels, l)) {
      axes.push_back(i);
    } else {
      kept.push_back(l);
      shape.push_back(type.getDimSize(i));
    }
  }
  if (axes.empty())
    return t;
  Builder &b = n.getBuilder();
  Value v =
      n.create<ReduceOp>(type.clone(shape), ReduceKindAttr::get(n.getContext(), ReduceKind::Sum),
                         t.value, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
  return {v, kept};
}

/// Step 3: the product of `a` and `b` summed over their shared labels that
/// are not in `keep`; the result's labels are the shared kept ones (batch),
/// then a's own, then b's own. Labels of one operand only must be in `keep`
/// (step 2 removed the others).
Labeled EinsumLowering::contract(Labeled a, Labeled b, ArrayRef<Label> keep) {
  SmallVector<Label> batch, contracted, lhsOnly, rhsOnly, mismatched;
  for (Label l : a.labels) {
    if (!b.has(l))
      lhsOnly.push_back(l);
    else if (llvm::is_contained(keep, l))
      batch.push_back(l);
    else if (a.dim(l) != b.dim(l))
      mismatched.push_back(l); // a size-1 ellipsis dim against a wider one
    else
      contracted.push_back(l);
  }
  for (Label l : b.labels)
    if (!a.has(l))
      rhsOnly.push_back(l);
  // sum_k a[k] b[k] with a's k broadcast from size 1 is a[0] * sum_k b[k]:
  // such labels are summed in each operand alone.
  a = sumOut(a, mismatched);
  b = sumOut(b, mismatched);

  auto dims = [](const Labeled &t, ArrayRef<Label> ls) {
    SmallVector<int64_t> out;
    for (Label l : ls)
      out.push_back(t.dim(l));
    return out;
  };
  auto product = [](ArrayRef<int64_t> ds) {
    int64_t p = 1;
    for (int64_t d : ds)
      p *= d;
    return p;
  };
  SmallVector<int64_t> batchA = dims(a, batch), batchB = dims(b, batch), batchOut;
  for (auto [x, y] : llvm::zip(batchA, batchB))
    batchOut.push_back(x == 1 ? y : x);
  SmallVector<Label> outLabels(batch);
  llvm::append_range(outLabels, lhsOnly);
  llvm::append_range(outLabels, rhsOnly);
  SmallVector<int64_t> outShape(batchOut);
  llvm::append_range(outShape, dims(a, lhsOnly));
  llvm::append_range(outShape, dims(b, rhsOnly));
  Type et = a.type().getElementType();

  if (isa<FloatType>(et) && !contracted.empty()) {
    // [batch.., M, K] x [batch.., K, N] through kiln.matmul.
    SmallVector<Label> orderA(batch), orderB(batch);
    llvm::append_range(orderA, lhsOnly);
    llvm::append_range(orderA, contracted);
    llvm::append_range(orderB, contracted);
    llvm::append_range(orderB, rhsOnly);
    int64_t m = product(dims(a, lhsOnly)), k = product(dims(a, contracted)),
            nDim = product(dims(b, rhsOnly));
    SmallVector<int64_t> shapeA(batchA), shapeB(batchB), shapeMM(batchOut);
    shapeA.append({m, k});
    shapeB.append({k, nDim});
    shapeMM.append({m, nDim});
    Value lhs = reshapeTo(permute(a, orderA).value, shapeA);
    Value rhs = reshapeTo(permute(b, orderB).value, shapeB);
    Value mm = n.create<MatMulOp>(RankedTensorType::get(shapeMM, et), lhs, rhs);
    return {reshapeTo(mm, outShape), outLabels};
  }

  // Broadcast multiply in the order [batch, lhsOnly, rhsOnly, contracted],
  // each operand with size-1 dims for the labels it lacks, then sum the
  // contracted labels.
  SmallVector<Label> all(outLabels);
  llvm::append_range(all, contracted);
  auto spread = [&](const Labeled &t) {
    SmallVector<Label> order;
    SmallVector<int64_t> shape;
    for (Label l : all) {
      if (t.has(l))
        order.push_back(l);
      shape.push_back(t.has(l) ? t.dim(l) : 1);
    }
    return reshapeTo(permute(t, order).value, shape);
  };
  SmallVector<int64_t> mulShape(outShape);
  llvm::append_range(mulShape, dims(a, contracted));
  // One statement each: the order of the ops they create must not depend on the C++ compiler's
  // order of evaluating call arguments (it is unspecified).
  Value lhs = spread(a);
  Value rhs = spread(b);
  Value v = n.create<MulOp>(RankedTensorType::get(mulShape, et), lhs, rhs);
  return sumOut({v, all}, contracted);
}

LogicalResult EinsumLowering::run() {
  std::string why;
  FailureOr<Equation> eq = parseEquation(equation, why);
  if (failed(eq))
    return n.emitError() << "equation '" << equation << "' is invalid: " << why;
  unsigned numOperands = n.getNumInputs();
  if (eq->inputs.size() != numOperands)
    return n.emitError() << "equation '" << equation << "' has " << eq->inputs.size()
                         << " input terms for " << numOperands << " operands";
  for (unsigned i = 0; i < numOperands; ++i) {
    if (!n.hasInput(i))
      return n.emitError() << "operand " << i << " is empty";
    if (failed(n.checkSameElementType(0, i)))
      return failure();
  }
  Type et = n.getInputType(0).getElementType();
  if (et.isInteger(1))
    return n.emitError() << "operands must be numbers, got " << n.getInputType(0)
                         << " (ONNX Einsum takes no bool)";

  // Labels per operand; `...` covers rank - letters dims, aligned at the right
  // of the widest ellipsis.
  int64_t ellipsisRank = 0;
  for (unsigned i = 0; i < numOperands; ++i) {
    const Term &t = eq->inputs[i];
    int64_t rank = n.getInputType(i).getRank(), letters = t.letters.size();
    if (t.ellipsisAt < 0 ? rank != letters : rank < letters)
      return n.emitError() << "term '" << t.text << "' of operand " << i
                           << " does not fit its type " << n.getInputType(i) << " (equation '"
                           << equation << "')";
    if (t.ellipsisAt >= 0)
      ellipsisRank = std::max(ellipsisRank, rank - letters);
  }
  SmallVector<Labeled> operands;
  std::map<Label, int64_t> sizes; // ordered: deterministic messages
  for (unsigned i = 0; i < numOperands; ++i) {
    const Term &t = eq->inputs[i];
    auto type = n.getInputType(i);
    Labeled op{n.getInput(i), {}};
    int64_t covered = type.getRank() - t.letters.size();
    for (int64_t j = 0; j <= (int64_t)t.letters.size(); ++j) {
      if (j == t.ellipsisAt)
        for (int64_t e = 0; e < covered; ++e)
          op.labels.push_back(kEllipsisLabel + ellipsisRank - covered + e);
      if (j < (int64_t)t.letters.size())
        op.labels.push_back(letterLabel(t.letters[j]));
    }
    for (auto [d, l] : llvm::enumerate(op.labels)) {
      int64_t size = type.getDimSize(d);
      // A label repeated in one operand (a diagonal) needs equal sizes there.
      auto first = llvm::find(op.labels, l);
      int64_t firstSize = type.getDimSize(first - op.labels.begin());
      if (firstSize != size)
        return n.emitError() << labelName(l) << " repeats in operand " << i << " with sizes "
                             << firstSize << " and " << size << " (equation '" << equation << "')";
      // Across operands a size-1 dim broadcasts (numpy and onnxruntime), for
      // letters as for the dims under `...`.
      auto [it, inserted] = sizes.try_emplace(l, size);
      if (inserted || it->second == size)
        continue;
      if (it->second == 1 || size == 1) {
        it->second = std::max(it->second, size);
        continue;
      }
      return n.emitError() << labelName(l) << " has sizes " << it->second << " and " << size
                           << ", which do not broadcast (equation '" << equation << "')";
    }
    operands.push_back(std::move(op));
  }

  // The output labels: explicit, or `...` then the letters used once, in
  // ASCII order (numpy's implicit mode).
  SmallVector<Label> output;
  auto appendEllipsis = [&]() {
    for (int64_t e = 0; e < ellipsisRank; ++e)
      output.push_back(kEllipsisLabel + e);
  };
  if (eq->output) {
    const Term &t = *eq->output;
    if (t.ellipsisAt < 0 && ellipsisRank > 0)
      return n.emitError() << "the output term '" << t.text
                           << "' has no '...' but the inputs' '...' covers " << ellipsisRank
                           << " dims (equation '" << equation
                           << "'; numpy and onnxruntime refuse it too)";
    for (int64_t j = 0; j <= (int64_t)t.letters.size(); ++j) {
      if (j == t.ellipsisAt)
        appendEllipsis();
      if (j >= (int64_t)t.letters.size())
        continue;
      char c = t.letters[j];
      if (!sizes.count(letterLabel(c)))
        return n.emitError() << "output label '" << c << "' is in no input term (equation '"
                             << equation << "')";
      if (llvm::count(t.letters, c) > 1)
        return n.emitError() << "output label '" << c << "' repeats (equation '" << equation
                             << "')";
      output.push_back(letterLabel(c));
    }
  } else {
    appendEllipsis();
    std::map<char, int> counts;
    for (const Term &t : eq->inputs)
      for (char c : t.letters)
        ++counts[c];
    for (auto [c, count] : counts)
      if (count == 1)
        output.push_back(letterLabel(c));
  }
  SmallVector<int64_t> outShape;
  for (Label l : output)
    outShape.push_back(sizes[l]);
  if (!checkedElementCount(outShape))
    return n.emitError() << "the result of equation '" << equation
                         << "' has more than 2^40 elements";

  // 1. Diagonals.
  for (Labeled &op : operands)
    op = takeDiagonals(op);
  // 2-3. Sum labels needed nowhere else, contract pairwise from the left.
  auto neededElsewhere = [&](size_t self, ArrayRef<Labeled> rest) {
    SmallVector<Label> keep(output);
    for (auto [i, op] : llvm::enumerate(rest))
      if (i != self)
        llvm::append_range(keep, op.labels);
    return keep;
  };
  auto sumLonely = [&](SmallVector<Labeled> &ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      SmallVector<Label> keep = neededElsewhere(i, ops), lonely;
      for (Label l : ops[i].labels)
        if (!llvm::is_contained(keep, l))
          lonely.push_back(l);
      ops[i] = sumOut(ops[i], lonely);
    }
  };
  sumLonely(operands);
  while (operands.size() > 1) {
    SmallVector<Label> keep(output);
    for (size_t i = 2; i < operands.size(); ++i)
      llvm::append_range(keep, operands[i].labels);
    Labeled c = contract(operands[0], operands[1], keep);
    operands.erase(operands.begin(), operands.begin() + 2);
    operands.insert(operands.begin(), c);
    sumLonely(operands);
  }
  // 4. Output order; an output dim broadcast from size 1 under `...` (one
  //    operand only) keeps the operand's size, so expand to the full shape.
  Labeled last = permute(operands.front(), output);
  Value result = last.value;
  if (last.type().getShape() != ArrayRef<int64_t>(outShape))
    result = n.create<ExpandOp>(last.type().clone(outShape), result);
  n.setResult(0, result);
  return success();
}

/// Einsum(inputs...) with `equation` (required).
LogicalResult importEinsum(NodeImporter &n) {
  if (n.getNumInputs() < 1)
    return n.emitError() << "expects at least 1 operand";
  if (!n.findAttr("equation"))
    return n.emitError() << "needs the 'equation' attribute";
  FailureOr<std::string> equation = n.getStringAttr("equation", "");
  if (failed(equation))
    return failure();
  return EinsumLowering(n, *equation).run();
}

} // namespace

void onnx_import::registerEinsumOps(OpRegistry &r) { r.add("Einsum", importEinsum, {"equation"}); }
