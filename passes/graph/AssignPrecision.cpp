//===- AssignPrecision.cpp - fp16/bf16 storage for f32 graphs -------------===//
//
// Rewrites an f32 graph to store every tensor in fp16 or bf16 (weights
// converted at compile time, rounding to nearest even and saturating), keeping
// the function's own argument and result types through casts at its edges.
// Kernels compute in fp32 registers whatever the storage type, so the pass
// decides only what lives in memory: half the bytes for weights and
// activations, and 16-bit operands for the tensor-core GEMMs.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
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

/// fp32 -> IEEE binary16 bits, rounded to nearest even; finite values beyond
/// 65504 saturate to it, inf stays inf, NaN stays a (quiet) NaN.
uint16_t toF16Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a == 0x7f800000u) // inf
    return uint16_t(sign | 0x7c00u);
  if (a >= 0x477fe000u) // >= 65504: saturate (RNE would give inf from 65520 on)
    return uint16_t(sign | 0x7bffu);
  if (a < 0x38800000u) { // below 2^-14: f16 subnormal (or zero), in units of 2^-24
    float f;
    std::memcpy(&f, &a, 4);
    return uint16_t(sign | uint32_t(std::nearbyint(f * 16777216.0f))); // 1024 = min normal
  }
  uint32_t r = a - (112u << 23); // rebias the exponent (127 - 15)
  r += 0xfffu + ((r >> 13) & 1u); // round to nearest even at bit 13
  return uint16_t(sign | (r >> 13));
}

/// fp32 -> bfloat16 bits, rounded to nearest even; finite values beyond the
/// bf16 range saturate to its largest finite value; NaN stays a quiet NaN.
uint16_t toBF16Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x))
    return uint16_t((u >> 16) | 0x40u);
  uint16_t b = uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  if ((b & 0x7f80u) == 0x7f80u && std::isfinite(x)) // rounded up to inf
    b = uint16_t(((u >> 16) & 0x8000u) | 0x7f7fu);
  return b;
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
  std::vector<uint16_t> bits(n);
  for (int64_t i = 0; i < n; ++i) {
    float x;
    std::memcpy(&x, raw.data() + 4 * i, 4);
    bits[i] = convert(x);
  }
  return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()), bits.size() * 2)));
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

  // 1. Arguments keep their types; f32 ones are cast on entry.
  rewriter.setInsertionPointToStart(&entry);
  for (BlockArgument arg : entry.getArguments()) {
    Type narrow = narrowType(arg.getType(), to);
    if (narrow == arg.getType() || arg.use_empty())
      continue;
    auto cast = CastOp::create(rewriter, arg.getLoc(), narrow, arg);
    rewriter.replaceAllUsesExcept(arg, cast.getResult(), cast);
  }

  // 2. Every f32 result inside the body becomes `to`; constants convert.
  //    Tensors already stored in the other 16-bit type (a model exported in
  //    fp16 compiled with --precision bf16) stay as they are: say so.
  Type other = to.isF16() ? Type(BFloat16Type::get(ctx)) : Type(Float16Type::get(ctx));
  bool keptOther = false;
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (isa<func::FuncOp, func::ReturnOp>(op))
      return WalkResult::advance();
    for (Type t : op->getResultTypes())
      if (auto r = dyn_cast<RankedTensorType>(t))
        keptOther |= r.getElementType() == other;
    if (auto c = dyn_cast<ConstantOp>(op)) {
      auto type = cast<RankedTensorType>(c.getType());
      if (!type.getElementType().isF32())
        return WalkResult::advance();
      FailureOr<ElementsAttr> narrow = narrowConstant(c.getValue(), to);
      if (failed(narrow)) {
        c.emitError() << "unsupported: converting constant of " << type << " to " << to;
        return WalkResult::interrupt();
      }
      rewriter.modifyOpInPlace(c, [&] {
        c.setValueAttr(*narrow);
        c.getResult().setType(cast<RankedTensorType>(narrow->getType()));
      });
      return WalkResult::advance();
    }
    for (OpResult r : op->getResults()) {
      Type narrow = narrowType(r.getType(), to);
      if (narrow != r.getType())
        rewriter.modifyOpInPlace(op, [&] { r.setType(narrow); });
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
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
