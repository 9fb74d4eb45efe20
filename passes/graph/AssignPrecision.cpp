//===- AssignPrecision.cpp - fp16/bf16 storage for f32 graphs -------------===//
//
// Rewrites an f32 graph to store every tensor in fp16 or bf16 (weights
// converted at compile time, rounding to nearest even and saturating), keeping
// the function's own argument and result types through casts at its edges.
// Kernels compute in fp32 registers whatever the storage type, so the pass
// decides only what lives in memory: half the bytes for weights and
// activations, and 16-bit operands for the tensor-core GEMMs.
//
// Exception: values whose rounding an op amplifies stay f32. The argument of
// a cos or sin (a rotary or sinusoidal angle, position x frequency, reaches
// thousands of radians: in f16 its spacing at 2048 is 2 rad) and the value a
// cast turns into an integer (an index or a bucket: rounding moves it to
// another one) are computed from f32 inputs in f32, with every f32 op and
// constant they are computed from (keepTrigAndIndexInputs).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/kiln/ConstantCache.h"

#include "dialects/kiln/FloatBits.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <cstring>

#define DEBUG_TYPE "kiln-assign-precision"

namespace kiln {
#define GEN_PASS_DEF_ASSIGNPRECISION
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// `t` with an f32 element type replaced by `to`; other types unchanged.
Type narrowType(Type t, Type to) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  if (!ranked || !ranked.getElementType().isF32())
    return t;
  return ranked.clone(to);
}

/// The f32 constant `attr` converted to `to` (f16 or bf16) element by element
/// from its raw buffer; weights can be gigabytes, so no APFloat per element.
FailureOr<ElementsAttr> narrowConstant(ElementsAttr attr, FloatType to) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return failure();
  auto type = cast<RankedTensorType>(dense.getType()).clone(to);
  auto convert = to.isBF16() ? toBF16Bits : toF16Bits;
  if (dense.isSplat()) {
    llvm::APFloat v(to.getFloatSemantics(), llvm::APInt(16, convert(dense.getSplatValue<float>())));
    return cast<ElementsAttr>(DenseElementsAttr::get(type, v));
  }
  ArrayRef<char> raw = dense.getRawData();
  int64_t n = type.getNumElements();
  assert(int64_t(raw.size()) == n * 4 && "dense f32 payload of unexpected size");
  // Built in this thread's scratch buffer (no zeroing, no fresh pages per weight).
  llvm::MutableArrayRef<char> buffer = kiln::scratchBytes(size_t(n) * 2);
  uint16_t *bits = reinterpret_cast<uint16_t *>(buffer.data());
  // A large weight in blocks on the context's threads.
  constexpr int64_t kBlock = int64_t(1) << 18;
  mlir::parallelFor(attr.getContext(), 0, (n + kBlock - 1) / kBlock, [&](size_t b) {
    for (int64_t i = int64_t(b) * kBlock, e = std::min(n, i + kBlock); i < e; ++i) {
      float x;
      std::memcpy(&x, raw.data() + 4 * i, 4);
      bits[i] = convert(x);
    }
  });
  return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, buffer));
}

/// Most elements a constant may have and still stay f32 as the input of an angle or an index
/// (inverse frequencies, scales): a weight matrix in that slice means the slice is part of the
/// network itself, which the precision then stores narrow as before.
constexpr int64_t kMaxKeptConstantElements = 1 << 16;

/// Whether `op` starts a slice that stays f32: cos or sin of an f32 tensor, or a cast from an
/// f32 tensor to an integer type.
bool readsExactFloat(Operation *op) {
  auto isF32 = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getElementType().isF32();
  };
  if (isa<CosOp, SinOp>(op))
    return isF32(op->getOperand(0));
  if (auto c = dyn_cast<CastOp>(op))
    return isF32(c.getInput()) && isa<IntegerType>(c.getType().getElementType());
  return false;
}

/// The ops (constants included) whose f32 results stay f32: for every op that readsExactFloat,
/// the f32 values it is computed from, back through ops with an f32 result, up to the function's
/// arguments, integer values and the model's casts from other float types (which read their
/// input as it is). cos and sin themselves stay f32 too (their results are cast on use). A slice
/// that reaches a non-splat constant of more than kMaxKeptConstantElements elements, a GEMM with
/// K > 1, attention, a norm, softmax or a reduction is the network, not an angle or an index: it
/// is dropped whole (stored narrow, as before).
llvm::DenseSet<Operation *> keepTrigAndIndexInputs(func::FuncOp func) {
  llvm::DenseSet<Operation *> kept;
  func.walk([&](Operation *root) {
    if (!readsExactFloat(root))
      return;
    llvm::DenseSet<Operation *> slice;
    SmallVector<Value> work{root->getOperand(0)};
    if (isa<CosOp, SinOp>(root))
      slice.insert(root);
    while (!work.empty()) {
      Value v = work.pop_back_val();
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !type.getElementType().isF32())
        continue;
      if (isa<BlockArgument>(v))
        continue; // read as it is (step 1 gives kept readers no entry cast)
      Operation *def = v.getDefiningOp();
      if (kept.contains(def) || !slice.insert(def).second)
        continue;
      if (auto c = dyn_cast<ConstantOp>(def)) {
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (type.getNumElements() > kMaxKeptConstantElements && !(dense && dense.isSplat()))
          return; // a weight: this slice is the network, not an angle
        continue;
      }
      // A GEMM that contracts (K > 1), attention, a norm, softmax or a reduction: the slice is
      // the network itself (x W -> sin -> ...), whatever the size of its weights.
      if (auto mm = dyn_cast<MatMulOp>(def);
          (mm && cast<RankedTensorType>(mm.getLhs().getType()).getShape().back() != 1) ||
          isa<AttentionOp, SoftmaxOp, LayerNormOp, RmsNormOp, ReduceOp>(def))
        return;
      for (Value operand : def->getOperands())
        work.push_back(operand);
    }
    kept.insert(slice.begin(), slice.end());
  });
  return kept;
}

} // namespace

LogicalResult kiln::assignPrecision(RewriterBase &rewriter, func::FuncOp func,
                                    Precision precision) {
  MLIRContext *ctx = func.getContext();
  func->setAttr(kPrecisionAttrName, PrecisionAttr::get(ctx, precision));
  if (precision == Precision::FP32 || precision == Precision::TF32 || func.isExternal())
    return success();
  FloatType to = precision == Precision::FP16 ? FloatType(Float16Type::get(ctx))
                                              : FloatType(BFloat16Type::get(ctx));
  if (!func.getOps<KernelOp>().empty())
    return func.emitError() << "kiln-assign-precision must run before fusion (found kiln.kernel)";
  Block &entry = func.getBody().front();
  // One conversion per weight for all programs of a --shape range (ConstantCache); null when
  // the payload cannot be converted.
  auto narrowedConstant = [&](ElementsAttr value) {
    return dyn_cast_or_null<ElementsAttr>(ConstantCache::get(ctx).getOrCompute(
        "assign-precision", {value, TypeAttr::get(to)}, [&]() -> Attribute {
          FailureOr<ElementsAttr> converted = narrowConstant(value, to);
          return succeeded(converted) ? Attribute(*converted) : Attribute();
        }));
  };

  // 1. Arguments keep their types; f32 ones are cast on entry. The model's own casts of an
  //    argument to another type keep reading the f32 argument: they convert its exact value
  //    once, as ONNX Cast does (through the 16-bit copy, f32 -> bf16 would round twice under
  //    fp16 storage, and f32 -> int64 would truncate a rounded value).
  llvm::DenseSet<Operation *> kept = keepTrigAndIndexInputs(func);
  rewriter.setInsertionPointToStart(&entry);
  for (BlockArgument arg : entry.getArguments()) {
    Type narrow = narrowType(arg.getType(), to);
    auto readsExactValue = [&](OpOperand &use) {
      return isa<CastOp>(use.getOwner()) || kept.contains(use.getOwner());
    };
    if (narrow == arg.getType() || llvm::all_of(arg.getUses(), readsExactValue))
      continue;
    // Saturating, like the constants and every 16-bit store (a -1e9 mask stays finite).
    auto cast = CastOp::create(rewriter, arg.getLoc(), narrow, arg, /*saturate_finite=*/true);
    rewriter.replaceUsesWithIf(arg, cast.getResult(), [&](OpOperand &use) {
      return use.getOwner() != cast && !readsExactValue(use);
    });
  }

  // 2. Every f32 result inside the body becomes `to`; constants convert.
  //    Tensors already stored in the other 16-bit type (a model exported in
  //    fp16 compiled with --precision bf16) stay as they are: say so.
  Type other = to.isF16() ? Type(BFloat16Type::get(ctx)) : Type(Float16Type::get(ctx));
  bool keptOther = false;
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (isa<func::FuncOp, func::ReturnOp>(op) || kept.contains(op))
      return WalkResult::advance();
    for (Type t : op->getResultTypes())
      if (auto r = dyn_cast<RankedTensorType>(t))
        keptOther |= r.getElementType() == other;
    if (auto c = dyn_cast<ConstantOp>(op)) {
      auto type = cast<RankedTensorType>(c.getType());
      if (!type.getElementType().isF32())
        return WalkResult::advance();
      ElementsAttr cached = narrowedConstant(c.getValue());
      if (!cached) {
        c.emitError() << "unsupported: converting constant of " << type << " to " << to;
        return WalkResult::interrupt();
      }
      rewriter.modifyOpInPlace(c, [&] {
        c.setValueAttr(cached);
        c.getResult().setType(cast<RankedTensorType>(cached.getType()));
      });
      return WalkResult::advance();
    }
    for (OpResult r : op->getResults()) {
      Type narrow = narrowType(r.getType(), to);
      if (narrow == r.getType())
        continue;
      rewriter.modifyOpInPlace(op, [&] {
        r.setType(narrow);
        // A model's cast to f32 now rounds to `to` because of this pass: it stores by the
        // storage rule (saturating), not by ONNX Cast's overflow to inf.
        if (auto c = dyn_cast<CastOp>(op))
          c.setSaturateFinite(true);
      });
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // 2b. Ops outside the kept slices read its f32 values in the storage type: a kept constant
  //     through its own converted copy, any other value through a cast (cos and sin round once,
  //     there). The model's own casts read the f32 value as it is.
  SmallVector<Operation *> keptInOrder; // program order: the same IR on every run
  func.walk([&](Operation *op) {
    if (kept.contains(op))
      keptInOrder.push_back(op);
  });
  for (Operation *op : keptInOrder) {
    for (OpResult r : op->getResults()) {
      if (narrowType(r.getType(), to) == r.getType())
        continue; // not f32: nothing to convert
      SmallVector<OpOperand *> narrowUses;
      for (OpOperand &use : r.getUses())
        if (!kept.contains(use.getOwner()) && !isa<CastOp, func::ReturnOp>(use.getOwner()))
          narrowUses.push_back(&use);
      if (narrowUses.empty())
        continue;
      rewriter.setInsertionPointAfter(op);
      Value narrow;
      if (auto c = dyn_cast<ConstantOp>(op)) {
        ElementsAttr converted = narrowedConstant(c.getValue());
        if (!converted)
          return c.emitError() << "unsupported: converting constant of " << c.getType() << " to "
                               << to;
        narrow = ConstantOp::create(rewriter, c.getLoc(), converted.getType(), converted);
      } else {
        narrow = CastOp::create(rewriter, op->getLoc(), narrowType(r.getType(), to), r,
                                /*saturate_finite=*/true);
      }
      for (OpOperand *use : narrowUses)
        rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(narrow); });
    }
  }
  if (keptOther)
    func.emitWarning() << "the model already stores tensors as " << other << "; --precision "
                       << stringifyPrecision(precision) << " converts only its f32 tensors, so "
                       << other << " ones stay " << other;

  // 3. Results return in the function's declared types.
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  rewriter.setInsertionPoint(ret);
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Type declared = func.getFunctionType().getResult(i);
    if (v.getType() == declared)
      continue;
    // An argument returned as it is stays exact (no round trip through 16 bits).
    if (auto entryCast = v.getDefiningOp<CastOp>();
        entryCast && isa<BlockArgument>(entryCast.getInput()) &&
        entryCast.getInput().getType() == declared) {
      rewriter.modifyOpInPlace(ret, [&] { ret->setOperand(i, entryCast.getInput()); });
      continue;
    }
    auto cast = CastOp::create(rewriter, v.getLoc(), declared, v);
    rewriter.modifyOpInPlace(ret, [&] { ret->setOperand(i, cast.getResult()); });
  }
  LLVM_DEBUG(llvm::dbgs() << "stored in " << to << "\n");
  return success();
}

namespace {
struct AssignPrecisionPass : public kiln::impl::AssignPrecisionBase<AssignPrecisionPass> {
  using AssignPrecisionBase::AssignPrecisionBase;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    if (failed(assignPrecision(rewriter, getOperation(), precision)))
      signalPassFailure();
  }
};
} // namespace
