//===- ExprEmitter.cpp - per-element expressions of fused kernels ---------===//
//
// Emits a kernel whose body holds only `KilnFusible` ops. Each result is
// computed one element per thread (grid-stride loop): the thread turns its
// linear index into result coordinates, then evaluates the yielded value as
// an expression, walking producers backwards and mapping coordinates through
// each op (broadcast, reshape, transpose, slice, concat, gather). Leaves are
// loads from kernel operands, or literals for splat constants, so the fused
// chain touches device memory only for its true inputs and its results.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/ExprEmitter.h"
#include "compiler/codegen/KernelEmitter.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <functional>
#include <map>
#include <type_traits>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

using Coords = ExprEmitter::Coords;

namespace {

std::string join(ArrayRef<std::string> parts) {
  std::string s;
  for (auto &p : parts)
    s += p + ",";
  return s;
}

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

} // namespace

Coords kiln::codegen::broadcastCoords(ArrayRef<std::string> coords, ArrayRef<int64_t> shape) {
  Coords out;
  size_t off = coords.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    out.push_back(shape[d] == 1 ? "0" : coords[d + off]);
  return out;
}


SmallVector<unsigned> ExprEmitter::bindOperands(llvm::function_ref<bool(unsigned)> mayInline) {
  SmallVector<unsigned> passed;
  for (auto [i, in] : llvm::enumerate(kernel.getInputs())) {
    Value arg = kernel.getBodyBlock().getArgument(i);
    DenseElementsAttr dense;
    if (mayInline(i) && matchPattern(in, m_Constant(&dense)) && dense.isSplat()) {
      Type et = dense.getElementType();
      if (isa<FloatType>(et)) {
        floatLiteral[arg] = dense.getSplatValue<APFloat>().convertToDouble();
        literal[arg] = cudaLiteral(et, floatLiteral[arg], 0);
      } else
        literal[arg] = cudaLiteral(
            et, 0,
            et.isInteger(1)           ? int64_t(dense.getSplatValue<APInt>().getBoolValue())
            : et.isUnsignedInteger() ? int64_t(dense.getSplatValue<APInt>().getZExtValue())
                                     : dense.getSplatValue<APInt>().getSExtValue());
      continue;
    }
    passed.push_back(i);
    param[arg] = "in" + std::to_string(i);
  }
  return passed;
}

void ExprEmitter::beginBody(std::string indentation) {
  body.clear();
  memo.clear();
  indent = std::move(indentation);
}

Coords ExprEmitter::delinearize(const std::string &linear, ArrayRef<int64_t> shape,
                                const std::string &prefix) {
  Coords coords(shape.size());
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  // 32-bit unsigned arithmetic when the index fits: division by a constant
  // then compiles to a multiply-shift instead of a 64-bit division sequence.
  bool narrow = elements < (int64_t(1) << 31);
  std::string type = narrow ? "unsigned" : "long long", suffix = narrow ? "u" : "LL";
  std::string rem = narrow ? "(unsigned)(" + linear + ")" : linear;
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    std::string c = prefix + std::to_string(d);
    coords[d] = c;
    if (shape[d] == 1) {
      line("const long long " + c + " = 0;");
      continue;
    }
    if (d == 0) {
      line("const long long " + c + " = " + rem + ";");
      break;
    }
    line(llvm::formatv("const long long {0} = {1} % {2}{3};", c, rem, shape[d], suffix).str());
    std::string next = "r" + prefix + std::to_string(d);
    line(llvm::formatv("const {0} {1} = {2} / {3}{4};", type, next, rem, shape[d], suffix).str());
    rem = next;
  }
  return coords;
}

/// Linear index of `coords` in a row-major tensor of `shape`.
std::string ExprEmitter::linearize(ArrayRef<std::string> coords, ArrayRef<int64_t> shape) {
  std::string s;
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (shape[d] != 1) {
      std::string term = stride == 1 ? coords[d] : coords[d] + " * " + std::to_string(stride) + "LL";
      s = s.empty() ? term : term + " + " + s;
    }
    stride *= shape[d];
  }
  return s.empty() ? "0" : s;
}

/// Binds a new local holding `expr` of the element type of `v`.
FailureOr<std::string> ExprEmitter::bind(Value v, const std::string &expr) {
  auto t = cudaScalarType(tensorType(v).getElementType());
  if (failed(t))
    return kernel.emitError() << "unsupported: element type " << tensorType(v).getElementType()
                              << " in kernel @" << kernel.getSymName();
  std::string name = fresh();
  line("const " + *t + " " + name + " = " + expr + ";");
  return name;
}

/// Emits `v` at `coords`, memoized per (value, coordinates).
FailureOr<std::string> ExprEmitter::emitValue(Value v, ArrayRef<std::string> coords) {
  if (auto it = overrides.find(v); it != overrides.end())
    return it->second;
  // A value read at several coordinates (a concat of concats of one value)
  // is emitted once per coordinate tuple, which can grow exponentially with
  // the nesting; stop before the source gets too large for NVRTC.
  if (body.size() > kMaxKernelBodyBytes)
    return kernel.emitError() << "unsupported: the CUDA source of kernel @"
                              << kernel.getSymName() << " exceeds "
                              << (kMaxKernelBodyBytes >> 20)
                              << " MiB (a value is re-evaluated at too many coordinates, e.g. "
                                 "nested concats of one tensor); compile with --no-fuse";
  auto key = std::make_pair(v.getAsOpaquePointer(), join(coords));
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  FailureOr<std::string> r = emitUncached(v, coords);
  if (succeeded(r))
    memo[key] = *r;
  return r;
}

FailureOr<std::string> ExprEmitter::emitUncached(Value v, ArrayRef<std::string> coords) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto it = literal.find(arg); it != literal.end())
      return it->second;
    return bind(v, loadValue(tensorType(v).getElementType(),
                             "kiln::ldg(" + param[arg] + " + (" +
                                 linearize(coords, tensorType(v).getShape()) + "))"));
  }
  Operation *op = v.getDefiningOp();
  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
      .Case<NegOp, ExpOp, LogOp, SqrtOp, ReciprocalOp, TanhOp, ErfOp, SigmoidOp, ReluOp, CosOp,
            SinOp, NotOp, IsNaNOp, CastOp>([&](auto u) { return emitUnary(u, coords); })
      .Case<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, FModOp, EqualOp, LessOp,
            LessEqualOp, GreaterOp, GreaterEqualOp, AndOp, OrOp>(
          [&](auto b) { return emitBinary(b, coords); })
      .Case([&](WhereOp w) -> FailureOr<std::string> {
        auto c = emitValue(w.getCondition(), broadcastCoords(coords, tensorType(w.getCondition()).getShape()));
        auto x = emitValue(w.getTrueValue(), broadcastCoords(coords, tensorType(w.getTrueValue()).getShape()));
        auto y = emitValue(w.getFalseValue(), broadcastCoords(coords, tensorType(w.getFalseValue()).getShape()));
        if (failed(c) || failed(x) || failed(y))
          return failure();
        return bind(v, "(" + *c + " ? " + *x + " : " + *y + ")");
      })
      .Case([&](ExpandOp e) {
        return emitValue(e.getInput(), broadcastCoords(coords, tensorType(e.getInput()).getShape()));
      })
      .Case([&](ReshapeOp r) -> FailureOr<std::string> {
        ArrayRef<int64_t> outShape = r.getType().getShape();
        ArrayRef<int64_t> inShape = tensorType(r.getInput()).getShape();
        // 1. Only unit dims added or removed: coordinates map one to one.
        SmallVector<size_t> outDims, inDims;
        for (auto [d, n] : llvm::enumerate(outShape))
          if (n != 1)
            outDims.push_back(d);
        for (auto [d, n] : llvm::enumerate(inShape))
          if (n != 1)
            inDims.push_back(d);
        if (outDims.size() == inDims.size() &&
            llvm::all_of(llvm::seq<size_t>(0, outDims.size()), [&](size_t i) {
              return outShape[outDims[i]] == inShape[inDims[i]];
            })) {
          Coords in(inShape.size(), "0");
          for (auto [o, i] : llvm::zip(outDims, inDims))
            in[i] = coords[o];
          return emitValue(r.getInput(), in);
        }
        // 2. Linearize in the result shape; a row-major parameter read
        //    through reshapes is then loaded at that linear index directly.
        std::string lin = fresh();
        line("const long long " + lin + " = " + linearize(coords, outShape) + ";");
        Value source = r.getInput();
        while (auto inner = source.getDefiningOp<ReshapeOp>())
          source = inner.getInput();
        if (auto arg = dyn_cast<BlockArgument>(source);
            arg && param.count(arg) && !overrides.count(source))
          return bind(source, loadValue(tensorType(source).getElementType(),
                                        "kiln::ldg(" + param[arg] + " + " + lin + ")"));
        // 3. Otherwise delinearize in the operand shape (in 32-bit arithmetic
        //    when the tensor allows; see delinearize). The "_" keeps the
        //    coordinate names apart from fresh() temporaries.
        Coords in = delinearize(lin, inShape, fresh() + "_");
        return emitValue(r.getInput(), in);
      })
      .Case([&](TransposeOp t) {
        Coords in(coords.size());
        for (auto [i, p] : llvm::enumerate(t.getPerm()))
          in[p] = coords[i];
        return emitValue(t.getInput(), in);
      })
      .Case([&](SliceOp s) {
        Coords in;
        for (auto [d, c] : llvm::enumerate(coords)) {
          int64_t start = s.getStarts()[d], step = s.getSteps()[d];
          std::string e = step == 1 ? c : "(" + c + " * " + std::to_string(step) + "LL)";
          in.push_back(start == 0 ? e : "(" + std::to_string(start) + "LL + " + e + ")");
        }
        return emitValue(s.getInput(), in);
      })
      .Case([&](ConcatOp c) { return emitConcat(c, coords); })
      .Case([&](RotaryOp r) -> FailureOr<std::string> {
        // x[d] * cos[d] + (d < D/2 ? -x[d + D/2] : x[d - D/2]) * sin[d]
        int64_t half = tensorType(r.getInput()).getShape().back() / 2;
        const std::string &d = coords.back();
        auto x = emitValue(r.getInput(), coords);
        auto c = emitValue(r.getCos(), broadcastCoords(coords, tensorType(r.getCos()).getShape()));
        auto s = emitValue(r.getSin(), broadcastCoords(coords, tensorType(r.getSin()).getShape()));
        if (failed(x) || failed(c) || failed(s))
          return failure();
        Coords partner(coords.begin(), coords.end());
        std::string h = std::to_string(half) + "LL";
        partner.back() = "(" + d + " < " + h + " ? " + d + " + " + h + " : " + d + " - " + h + ")";
        // The partner element is read directly: memoization must not reuse a
        // value computed at other coordinates.
        auto y = emitValue(r.getInput(), partner);
        if (failed(y))
          return failure();
        return bind(v, "(" + *x + " * " + *c + " + (" + d + " < " + h + " ? -" + *y + " : " + *y +
                           ") * " + *s + ")");
      })
      .Case([&](GatherOp g) -> FailureOr<std::string> {
        int64_t axis = g.getAxis();
        int64_t q = tensorType(g.getIndices()).getRank();
        Coords idxCoords(coords.begin() + axis, coords.begin() + axis + q);
        auto idx = emitValue(g.getIndices(), idxCoords);
        if (failed(idx))
          return failure();
        auto j = clampIndex(g, *idx, tensorType(g.getData()).getDimSize(axis));
        if (failed(j))
          return failure();
        Coords in(coords.begin(), coords.begin() + axis);
        in.push_back(*j);
        in.append(coords.begin() + axis + q, coords.end());
        return emitValue(g.getData(), in);
      })
      .Case([&](GatherElementsOp g) -> FailureOr<std::string> {
        auto idx = emitValue(g.getIndices(), coords);
        if (failed(idx))
          return failure();
        int64_t axis = g.getAxis();
        auto j = clampIndex(g, *idx, tensorType(g.getData()).getDimSize(axis));
        if (failed(j))
          return failure();
        Coords in(coords.begin(), coords.end());
        in[axis] = *j;
        return emitValue(g.getData(), in);
      })
      .Case([&](GatherNDOp g) -> FailureOr<std::string> {
        auto idxType = tensorType(g.getIndices());
        auto dataType = tensorType(g.getData());
        int64_t b = g.getBatchDims(), q = idxType.getRank(), k = idxType.getShape().back();
        Coords in(coords.begin(), coords.begin() + b);
        for (int64_t t = 0; t < k; ++t) {
          Coords ic(coords.begin(), coords.begin() + (q - 1));
          ic.push_back(std::to_string(t));
          auto idx = emitValue(g.getIndices(), ic);
          if (failed(idx))
            return failure();
          auto j = clampIndex(g, *idx, dataType.getDimSize(b + t));
          if (failed(j))
            return failure();
          in.push_back(*j);
        }
        in.append(coords.begin() + (q - 1), coords.end());
        return emitValue(g.getData(), in);
      })
      .Default([&](Operation *other) -> FailureOr<std::string> {
        return other->emitError() << "unsupported: pointwise codegen for " << other->getName();
      });
}

/// Binds the gather index `idx` normalized into [0, dim) (kiln::normIndex).
/// An empty axis has no element to read; kiln-eliminate-empty-tensors rejects
/// it before codegen, so reaching it here is a compiler bug.
FailureOr<std::string> ExprEmitter::clampIndex(Operation *gather, const std::string &idx,
                                               int64_t dim) {
  if (dim <= 0)
    return gather->emitError() << "internal error: " << gather->getName()
                               << " reads an axis of size " << dim
                               << " (empty operands must be removed before codegen)";
  std::string j = fresh();
  line(llvm::formatv("const long long {0} = kiln::normIndex((long long){1}, {2}LL);", j, idx,
                     dim)
           .str());
  return j;
}

template <typename OpT>
FailureOr<std::string> ExprEmitter::emitUnary(OpT op, ArrayRef<std::string> coords) {
  auto x = emitValue(op.getInput(), coords);
  if (failed(x))
    return failure();
  Type in = tensorType(op.getInput()).getElementType();
  Type outT = tensorType(op.getResult()).getElementType();
  bool f = isa<FloatType>(in);
  std::string e =
      llvm::TypeSwitch<Operation *, std::string>(op.getOperation())
          .Case([&](NegOp) { return "(-" + *x + ")"; })
          .Case([&](ExpOp) { return "expf(" + *x + ")"; })
          .Case([&](LogOp) { return "logf(" + *x + ")"; })
          .Case([&](SqrtOp) { return "sqrtf(" + *x + ")"; })
          .Case([&](ReciprocalOp) { return f ? "(1.0f / " + *x + ")" : "(1 / " + *x + ")"; })
          .Case([&](TanhOp) { return "tanhf(" + *x + ")"; })
          .Case([&](ErfOp) { return "erff(" + *x + ")"; })
          .Case([&](SigmoidOp) { return "(1.0f / (1.0f + expf(-" + *x + ")))"; })
          // max(x, 0) that keeps NaN (ONNX/numpy): NaN < 0 is false.
          .Case([&](ReluOp) { return "(" + *x + " < 0 ? 0 : " + *x + ")"; })
          .Case([&](CosOp) { return "cosf(" + *x + ")"; })
          .Case([&](SinOp) { return "sinf(" + *x + ")"; })
          .Case([&](NotOp) { return "(!" + *x + ")"; })
          .Case([&](IsNaNOp) { return "(" + *x + " != " + *x + ")"; })
          .Case([&](CastOp cast) {
            if (outT.isInteger(1))
              return "(" + *x + " != 0)";
            // A cast to a 16-bit float rounds to nearest even and, as ONNX Cast, overflows to
            // inf (kiln::castRn); the compiler's own precision casts (saturate_finite) saturate
            // like a store. The value then stays in an fp32 register, exactly representable in
            // the 16-bit type, so a later cast back to f32 is exact.
            if (isNarrowFloat(outT)) {
              // An integer wider than fp32's 24-bit significand rounds once (castRnInt), not
              // to fp32 and then again to 16 bits.
              auto wideInt = dyn_cast<IntegerType>(in);
              std::string narrow;
              if (cast.getSaturateFinite())
                narrow = storeValue(outT, "(float)(" + *x + ")");
              else if (wideInt && wideInt.getWidth() > 24 && wideInt.getWidth() <= 64)
                narrow = "kiln::castRnInt<" + *cudaStorageType(outT) + ">((" +
                         (wideInt.isUnsigned() ? "unsigned long long" : "long long") + ")(" + *x +
                         "))";
              else
                narrow = "kiln::castRn<" + *cudaStorageType(outT) + ">((float)(" + *x + "))";
              return "kiln::ld(" + narrow + ")";
            }
            return "(" + *cudaScalarType(outT) + ")(" + *x + ")";
          })
          .Default([](Operation *) { return std::string(); });
  bool floatOnly = isa<ExpOp, LogOp, SqrtOp, TanhOp, ErfOp, SigmoidOp, CosOp, SinOp>(op.getOperation());
  if (floatOnly && !f)
    return op.emitError() << "unsupported: " << op->getName() << " on " << in;
  if (isa<CastOp>(op.getOperation()) && failed(cudaScalarType(outT)))
    return op.emitError() << "unsupported: cast to " << outT;
  return bind(op.getResult(), e);
}

template <typename OpT>
FailureOr<std::string> ExprEmitter::emitBinary(OpT op, ArrayRef<std::string> coords) {
  auto at = [&](Value v) { return emitValue(v, broadcastCoords(coords, tensorType(v).getShape())); };
  bool f = isa<FloatType>(tensorType(op.getLhs()).getElementType());
  bool u = tensorType(op.getLhs()).getElementType().isUnsignedInteger();
  // tanh(x) + 1 (GELU-tanh's 0.5 x (1 + tanh(u))): kiln::onePlusTanh, a few instructions
  // instead of tanhf's ~25 and exact where 1 + tanh(x) cancels. This sum sat in GEMM
  // epilogues that took longer than the GEMM's main loop (GPT-2 124M's MLP up on the H200).
  // erf(x) + 1 (exact GELU's 0.5 x (1 + erf(x / sqrt 2))): kiln::onePlusErf, branch-free and
  // accurate where 1 + erf(x) cancels (BERT-base's MLP up + GELU-erf took 68 us per layer at
  // 8x512 against 50.5 for GPT-2's GELU-tanh on the same GEMM shape, H200).
  // Matched before the operands are emitted, so the tanh / erf itself is not.
  if constexpr (std::is_same_v<OpT, AddOp>) {
    if (f) {
      std::string one = cudaLiteral(Float32Type::get(op.getContext()), 1.0, 0);
      for (auto [t, other] : {std::pair{op.getLhs(), op.getRhs()}, std::pair{op.getRhs(), op.getLhs()}}) {
        Operation *fn = t.getDefiningOp();
        if (!isa_and_nonnull<TanhOp, ErfOp>(fn))
          continue;
        auto o = at(other);
        if (failed(o))
          return failure();
        if (*o != one)
          continue;
        // tanh / erf is elementwise: its operand is read at the coordinates the sum reads t at.
        auto x = emitValue(fn->getOperand(0), broadcastCoords(coords, tensorType(t).getShape()));
        if (failed(x))
          return failure();
        return bind(op.getResult(), std::string(isa<TanhOp>(fn) ? "kiln::onePlusTanh("
                                                                : "kiln::onePlusErf(") +
                                        *x + ")");
      }
    }
  }
  auto a = at(op.getLhs());
  auto b = at(op.getRhs());
  if (failed(a) || failed(b))
    return failure();
  auto infix = [&](const char *o) { return "(" + *a + " " + o + " " + *b + ")"; };
  std::string e =
      llvm::TypeSwitch<Operation *, std::string>(op.getOperation())
          .Case([&](AddOp) { return infix("+"); })
          .Case([&](SubOp) { return infix("-"); })
          .Case([&](MulOp) { return infix("*"); })
          .Case([&](DivOp) {
            // x / c for a float literal c: x * (1 / c) when 1 / c is a normal fp32 number (at
            // most 1.5 ulp from the correctly rounded quotient; exact for powers of two), one
            // FMUL instead of div.rn's reciprocal, refinement and slow-path check (exact GELU's
            // x / sqrt 2 sat in GEMM epilogues). Anything else stays a division.
            if (auto it = floatLiteral.find(op.getRhs()); f && it != floatLiteral.end()) {
              float c = float(it->second), r = float(1.0 / double(c));
              if (std::isfinite(c) && c != 0.0f && std::isnormal(r))
                return "(" + *a + " * " +
                       cudaLiteral(Float32Type::get(op.getContext()), r, 0) + ")";
            }
            return infix("/");
          })
          .Case([&](PowOp) {
            // x^2 and x^3 are the common cases (RMSNorm, GELU-tanh): products
            // instead of powf's log/exp (which also handles what a small
            // integer exponent never needs; NaN and +-inf come out the same).
            // Integers: exact (kiln::ipow), never through floating point.
            if (f) {
              Type f32 = Float32Type::get(op.getContext());
              if (*b == cudaLiteral(f32, 2.0, 0))
                return "(" + *a + " * " + *a + ")";
              if (*b == cudaLiteral(f32, 3.0, 0))
                return "(" + *a + " * " + *a + " * " + *a + ")";
              return "powf(" + *a + ", " + *b + ")";
            }
            return "kiln::ipow((long long)" + *a + ", (long long)" + *b + ")";
          })
          .Case([&](MaxOp) {
            return f ? "kiln::maxNaN(" + *a + ", " + *b + ")"
                     : "(" + *a + " > " + *b + " ? " + *a + " : " + *b + ")";
          })
          .Case([&](MinOp) {
            return f ? "kiln::minNaN(" + *a + ", " + *b + ")"
                     : "(" + *a + " < " + *b + " ? " + *a + " : " + *b + ")";
          })
          .Case([&](ModOp) {
            return (f ? "kiln::fmodSigned(" : u ? "kiln::umod(" : "kiln::imod(") + *a + ", " +
                   *b + ")";
          })
          .Case([&](FModOp) {
            return (f ? "fmodf(" : u ? "kiln::umod(" : "kiln::ifmod(") + *a + ", " + *b + ")";
          })
          .Case([&](EqualOp) { return infix("=="); })
          .Case([&](LessOp) { return infix("<"); })
          .Case([&](LessEqualOp) { return infix("<="); })
          .Case([&](GreaterOp) { return infix(">"); })
          .Case([&](GreaterEqualOp) { return infix(">="); })
          .Case([&](AndOp) { return infix("&&"); })
          .Case([&](OrOp) { return infix("||"); })
          .Default([](Operation *) { return std::string(); });
  return bind(op.getResult(), e);
}

/// Concat: a binary search over the operands' offsets along the axis, one
/// leaf branch per operand, so the nesting depth is log2 of the operand count
/// (a chain of `else if` nests once per operand, which overflowed NVRTC's
/// parser stack at a few thousand operands).
FailureOr<std::string> ExprEmitter::emitConcat(ConcatOp c, ArrayRef<std::string> coords) {
  auto t = cudaScalarType(c.getType().getElementType());
  if (failed(t))
    return c.emitError() << "unsupported: concat of " << c.getType().getElementType();
  std::string res = fresh();
  line(*t + " " + res + ";");
  int64_t axis = c.getAxis();
  // bases[k]: first axis coordinate of operand k.
  SmallVector<int64_t> bases{0};
  for (Value in : c.getInputs())
    bases.push_back(bases.back() + tensorType(in).getDimSize(axis));
  auto savedMemo = memo;
  std::string savedIndent = indent;
  // Emits the operands [lo, hi) at `depth`; the caller has established that
  // the axis coordinate lies in [bases[lo], bases[hi]).
  std::function<LogicalResult(size_t, size_t, unsigned)> emitRange =
      [&](size_t lo, size_t hi, unsigned depth) -> LogicalResult {
    indent = savedIndent + std::string(2 * depth, ' ');
    if (hi - lo == 1) {
      Coords sub(coords.begin(), coords.end());
      if (bases[lo])
        sub[axis] = "(" + coords[axis] + " - " + std::to_string(bases[lo]) + "LL)";
      auto val = emitValue(c.getInputs()[lo], sub);
      if (failed(val))
        return failure();
      line(res + " = " + *val + ";");
      memo = savedMemo; // values computed inside a branch are not visible outside
      return success();
    }
    size_t mid = lo + (hi - lo) / 2;
    line("if (" + coords[axis] + " < " + std::to_string(bases[mid]) + "LL) {");
    if (failed(emitRange(lo, mid, depth + 1)))
      return failure();
    indent = savedIndent + std::string(2 * depth, ' ');
    line("} else {");
    if (failed(emitRange(mid, hi, depth + 1)))
      return failure();
    indent = savedIndent + std::string(2 * depth, ' ');
    line("}");
    return success();
  };
  LogicalResult emitted = emitRange(0, c.getInputs().size(), 0);
  indent = savedIndent;
  if (failed(emitted))
    return failure();
  return res;
}
