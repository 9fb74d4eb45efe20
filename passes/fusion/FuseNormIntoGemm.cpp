//===- FuseNormIntoGemm.cpp - layer / RMS norm folded into the next GEMM --===//
//
// A kernel that only normalizes rows (kiln.layer_norm or kiln.rms_norm over
// the last dim, constant scale and bias) and whose every reader is a GEMM
// kernel taking it as its matmul's lhs against a constant weight disappears:
//
//   LN(x) W = rstd (x - mean) (diag(g) W) + b W = rstd (x W' - mean c) + b'
//   RMS(x) W = rstd x (diag(g) W) = rstd (x W')
//
// with W' = diag(g) W rounded to W's type, c the column sums of W' (fp32,
// summed from the rounded W' so that x W' - mean c is exactly sum_k (x_k -
// mean) W'_kn up to accumulation) and b' = b W (fp32), all folded here. Each
// GEMM kernel gets kiln.row_stats of x (the Hopper GEMM computes it from the
// A tiles it multiplies) and an epilogue prefix that applies the formula to
// the fp32 accumulator before the kernel's own epilogue (bias, activation,
// residual). An RMS norm read only by few-row GEMMs (decode steps) is folded
// into their A loader instead, W unchanged:
//
//   RMS(x) W = rstd ((x * g) W)
//
// (kiln.mul x, g as the matmul's lhs, kiln.row_stats of x, the same epilogue
// prefix), which kiln::gemmSkinnyRms computes. See FuseNormIntoGemm in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/kiln/FloatBits.h"
#include "dialects/kiln/KilnTarget.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <vector>

#define DEBUG_TYPE "kiln-fuse-norm-into-gemm"

namespace kiln {
#define GEN_PASS_DEF_FUSENORMINTOGEMM
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A kernel made of one row norm over the last dim (and reshapes of its result).
struct NormKernel {
  KernelOp kernel;
  Value input;                    ///< the norm's input x (a kernel operand, outside)
  DenseElementsAttr scale, bias;  ///< bias null for RMS norm or no bias
  float epsilon = 0;
  bool rms = false;
  RankedTensorType resultType;    ///< the kernel's result (x reshaped, same last dim)
  mlir::Location location;        ///< the norm's (its ONNX node), for kiln.row_stats
};

/// The dense constant that kernel operand `arg` (a block argument of `kernel`)
/// is bound to, or null.
DenseElementsAttr constantOperand(KernelOp kernel, Value arg) {
  auto ba = dyn_cast<BlockArgument>(arg);
  if (!ba || ba.getOwner() != &kernel.getBodyBlock())
    return nullptr;
  return denseFloatConstant(kernel->getOperand(ba.getArgNumber()));
}

bool isSixteenBit(Type t) { return t.isF16() || t.isBF16(); }

/// Element i of a dense float constant (f32, f16 or bf16; a splat has one).
float elementAt(DenseElementsAttr a, int64_t i) {
  ArrayRef<char> raw = a.getRawData();
  if (a.isSplat())
    i = 0;
  Type t = a.getElementType();
  if (t.isF32()) {
    float f;
    std::memcpy(&f, raw.data() + 4 * i, 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, raw.data() + 2 * i, 2);
  return t.isBF16() ? fromBF16Bits(bits) : fromF16Bits(bits);
}

std::optional<NormKernel> matchNormKernel(KernelOp kernel) {
  if (kernel->getNumResults() != 1)
    return std::nullopt;
  Block &body = kernel.getBodyBlock();
  auto it = body.without_terminator().begin(), end = body.without_terminator().end();
  if (it == end)
    return std::nullopt;
  Operation *norm = &*it;
  NormKernel nk{kernel, {}, {}, {}, 0, false, {}, norm->getLoc()};
  Value x, scale, bias;
  int64_t axis;
  if (auto ln = dyn_cast<LayerNormOp>(norm)) {
    x = ln.getInput(), scale = ln.getScale(), bias = ln.getBias();
    axis = ln.getAxis(), nk.epsilon = ln.getEpsilon().convertToFloat();
  } else if (auto rn = dyn_cast<RmsNormOp>(norm)) {
    x = rn.getInput(), scale = rn.getScale();
    axis = rn.getAxis(), nk.epsilon = rn.getEpsilon().convertToFloat();
    nk.rms = true;
  } else {
    return std::nullopt;
  }
  auto xType = cast<RankedTensorType>(x.getType());
  // kiln.row_stats needs epsilon >= 0 (a NaN or negative one stays in the norm kernel).
  if (axis != xType.getRank() - 1 || !isSixteenBit(xType.getElementType()) ||
      !(nk.epsilon >= 0.0f))
    return std::nullopt;
  auto xArg = dyn_cast<BlockArgument>(x);
  if (!xArg || xArg.getOwner() != &body)
    return std::nullopt;
  nk.input = kernel->getOperand(xArg.getArgNumber());
  nk.scale = constantOperand(kernel, scale);
  if (!nk.scale || (bias && !(nk.bias = constantOperand(kernel, bias))))
    return std::nullopt;
  // Only reshapes that keep the last dim after the norm.
  Value v = norm->getResult(0);
  for (++it; it != end; ++it) {
    auto r = dyn_cast<ReshapeOp>(&*it);
    if (!r || r.getInput() != v || !v.hasOneUse())
      return std::nullopt;
    v = r.getResult();
  }
  if (kernel.getYield().getValues().size() != 1 || kernel.getYield().getValues()[0] != v ||
      !v.hasOneUse())
    return std::nullopt;
  nk.resultType = cast<RankedTensorType>(v.getType());
  if (nk.resultType.getShape().back() != xType.getShape().back())
    return std::nullopt;
  return nk;
}

/// A GEMM kernel reading the norm's result as the lhs of its one matmul,
/// against a constant [K, N] weight.
struct GemmUse {
  KernelOp kernel;
  unsigned operand;     ///< operand index of the norm result
  MatMulOp matmul;
  unsigned weightArg;   ///< block argument index of the weight
  DenseElementsAttr weight;
};

std::optional<GemmUse> matchGemmUse(OpOperand &use, Type elementType) {
  auto kernel = dyn_cast<KernelOp>(use.getOwner());
  if (!kernel || kernel->getNumResults() != 1)
    return std::nullopt;
  GemmUse g;
  g.kernel = kernel;
  g.operand = use.getOperandNumber();
  BlockArgument arg = kernel.getBodyBlock().getArgument(g.operand);
  if (!arg.hasOneUse())
    return std::nullopt;
  g.matmul = dyn_cast<MatMulOp>(*arg.getUsers().begin());
  if (!g.matmul || g.matmul.getLhs() != arg || g.matmul.getRhs() == arg)
    return std::nullopt;
  // The matmul is the kernel's only non-fusible op.
  for (Operation &op : kernel.getBodyBlock().without_terminator())
    if (&op != g.matmul.getOperation() && !op.hasTrait<KilnFusible>())
      return std::nullopt;
  auto rhs = dyn_cast<BlockArgument>(g.matmul.getRhs());
  g.weight = rhs ? constantOperand(kernel, rhs) : nullptr;
  // A uniform weight becomes a literal in the kernel, which TMA cannot read.
  if (!g.weight || g.weight.isSplat())
    return std::nullopt;
  auto w = cast<RankedTensorType>(g.weight.getType());
  if (w.getRank() != 2 || w.getElementType() != elementType || w.getShape()[0] < 8 ||
      w.getShape()[1] < 8 || w.getShape()[0] % 8 ||
      w.getShape()[1] % 8)
    return std::nullopt;
  g.weightArg = rhs.getArgNumber();
  return g;
}

/// The folded constants of one GEMM: W' (W's type), c and b' (fp32 [N]; b'
/// empty without a norm bias, c empty for RMS norm). Failure when W' leaves
/// the finite range of W's type.
struct Folded {
  DenseElementsAttr weight, colSums, bias;
};

FailureOr<Folded> fold(const NormKernel &nk, DenseElementsAttr w) {
  auto type = cast<RankedTensorType>(w.getType());
  const int64_t K = type.getShape()[0], N = type.getShape()[1];
  const bool bf16 = type.getElementType().isBF16();
  const double maxFinite = bf16 ? 3.3895313892515355e38 : 65504.0;
  // W is 16-bit and not a splat (matchGemmUse): its raw data holds K x N bit patterns.
  // Weights reach hundreds of millions of elements (the 0.8B Llama), so the conversions are
  // chosen once, not per element.
  float (*const widen)(uint16_t) = bf16 ? fromBF16Bits : fromF16Bits;
  uint16_t (*const narrow)(float) = bf16 ? toBF16Bits : toF16Bits;
  const auto *in = reinterpret_cast<const uint16_t *>(w.getRawData().data());
  std::vector<uint16_t> out(size_t(K * N));
  std::vector<double> c(nk.rms ? 0 : N, 0.0), b(nk.bias ? N : 0, 0.0);
  for (int64_t k = 0; k < K; ++k) {
    const double g = elementAt(nk.scale, k);
    const double beta = nk.bias ? elementAt(nk.bias, k) : 0.0;
    for (int64_t n = 0; n < N; ++n) {
      const double x = widen(in[k * N + n]);
      const double scaled = g * x;
      if (!(std::fabs(scaled) <= maxFinite))
        return failure();
      const uint16_t bits = narrow(float(scaled));
      out[size_t(k * N + n)] = bits;
      if (!nk.rms)
        c[size_t(n)] += widen(bits);
      if (nk.bias)
        b[size_t(n)] += beta * x;
    }
  }
  Folded f;
  f.weight = DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(out.data()), out.size() * 2));
  auto vec = RankedTensorType::get({N}, Float32Type::get(w.getContext()));
  auto toAttr = [&](const std::vector<double> &v) {
    std::vector<float> fv(v.begin(), v.end());
    return DenseElementsAttr::get(vec, ArrayRef<float>(fv));
  };
  if (!nk.rms)
    f.colSums = toAttr(c);
  if (nk.bias && llvm::any_of(b, [](double v) { return v != 0.0; }))
    f.bias = toAttr(b);
  return f;
}

/// kiln.row_stats of `x` (the norm's statistics: mean and rstd, f32 [..., 1]) before `mm`.
RowStatsOp createRowStats(RewriterBase &rewriter, const NormKernel &nk, MatMulOp mm, Value x) {
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> statShape(xType.getShape());
  statShape.back() = 1;
  auto statType = RankedTensorType::get(statShape, Float32Type::get(mm.getContext()));
  rewriter.setInsertionPoint(mm);
  return RowStatsOp::create(rewriter, nk.location, statType, statType, x,
                            rewriter.getF32FloatAttr(nk.epsilon), rewriter.getBoolAttr(nk.rms));
}

/// The epilogue prefix after `mm`: cast(y) (- mean c) x rstd (+ b'), rounded and saturated to
/// the norm's type as the norm kernel would have stored it; every other reader of y reads it.
/// `colSums` only for a layer norm, `bias` may be null.
void createNormEpilogue(RewriterBase &rewriter, Location loc, MatMulOp mm, RowStatsOp stats,
                        bool rms, Value colSums, Value bias) {
  rewriter.setInsertionPointAfter(mm);
  auto yType = mm.getType();
  auto y32Type = yType.clone(Float32Type::get(mm.getContext()));
  auto y32 = CastOp::create(rewriter, loc, y32Type, mm.getResult());
  Value z = y32;
  if (!rms) {
    Value t = MulOp::create(rewriter, loc, y32Type, stats.getMean(), colSums);
    z = SubOp::create(rewriter, loc, y32Type, z, t);
  }
  z = MulOp::create(rewriter, loc, y32Type, z, stats.getRstd());
  if (bias)
    z = AddOp::create(rewriter, loc, y32Type, z, bias);
  Value normalized = CastOp::create(rewriter, loc, yType, z, /*saturate_finite=*/true);
  rewriter.replaceAllUsesExcept(mm.getResult(), normalized, y32);
}

/// Names the kernel after the folded norm: `rms_norm_` / `layer_norm_` after `_fused_`, or a
/// `_rms_norm` / `_layer_norm` suffix.
void renameWithNorm(KernelOp kernel, bool rms) {
  std::string name = kernel.getSymName().str();
  std::string norm = rms ? "rms_norm_" : "layer_norm_";
  size_t pos = name.find("_fused_");
  if (pos != std::string::npos)
    name.insert(pos + 7, norm);
  else
    name += "_" + norm.substr(0, norm.size() - 1);
  kernel.setSymName(name);
}

/// Rewrites GEMM kernel `g` to read x (`xView`) and the folded constants.
void rewriteGemm(RewriterBase &rewriter, const NormKernel &nk, GemmUse &g, const Folded &f,
                 Value xView) {
  KernelOp kernel = g.kernel;
  Location loc = kernel.getLoc();
  Block &body = kernel.getBodyBlock();

  // New operands: W', c, b' (constants before the kernel).
  rewriter.setInsertionPoint(kernel);
  auto addOperand = [&](DenseElementsAttr attr) -> Value {
    Value c = ConstantOp::create(rewriter, loc, attr.getType(), attr);
    kernel->insertOperands(kernel->getNumOperands(), c);
    return body.addArgument(c.getType(), loc);
  };
  kernel->setOperand(g.operand, xView);
  Value weight = addOperand(f.weight);
  Value colSums = f.colSums ? addOperand(f.colSums) : Value();
  Value bias = f.bias ? addOperand(f.bias) : Value();

  MatMulOp mm = g.matmul;
  RowStatsOp stats = createRowStats(rewriter, nk, mm, mm.getLhs());
  rewriter.modifyOpInPlace(mm, [&] { mm->setOperand(1, weight); });
  createNormEpilogue(rewriter, loc, mm, stats, nk.rms, colSums, bias);

  // The original weight argument, if nothing else reads it.
  BlockArgument oldWeight = body.getArgument(g.weightArg);
  if (oldWeight.use_empty()) {
    body.eraseArgument(g.weightArg);
    kernel->eraseOperand(g.weightArg);
  }

  renameWithNorm(kernel, nk.rms);
}

/// Whether `g` can take `nk` (an RMS norm) in its A loader: a few-row GEMM (the tile
/// kiln-select-tiles gives it computes the row statistics) whose norm scale has x's type.
bool fitsFewRow(const NormKernel &nk, const GemmUse &g) {
  return nk.rms && !nk.bias && isFewRowGemm(g.matmul) &&
         nk.scale.getElementType() == nk.resultType.getElementType() &&
         cast<RankedTensorType>(nk.scale.getType()).getRank() == 1;
}

/// Rewrites GEMM kernel `g` to read x (`xView`) with the RMS norm in its A loader: the matmul's
/// lhs becomes x * scale, kiln.row_stats of x gives rstd, the epilogue prefix multiplies the
/// fp32 accumulator by it and rounds to the norm's type. The weight is unchanged.
void rewriteGemmFewRow(RewriterBase &rewriter, const NormKernel &nk, GemmUse &g, Value xView) {
  KernelOp kernel = g.kernel;
  Location loc = kernel.getLoc();
  Block &body = kernel.getBodyBlock();

  rewriter.setInsertionPoint(kernel);
  Value scaleConstant = ConstantOp::create(rewriter, loc, nk.scale.getType(), nk.scale);
  kernel->insertOperands(kernel->getNumOperands(), scaleConstant);
  Value scale = body.addArgument(scaleConstant.getType(), loc);
  kernel->setOperand(g.operand, xView);

  MatMulOp mm = g.matmul;
  Value x = mm.getLhs();
  RowStatsOp stats = createRowStats(rewriter, nk, mm, x); // fitsFewRow: nk.rms
  Value scaled = MulOp::create(rewriter, nk.location, x.getType(), x, scale);
  rewriter.modifyOpInPlace(mm, [&] { mm->setOperand(0, scaled); });
  createNormEpilogue(rewriter, loc, mm, stats, /*rms=*/true, Value(), Value());
  renameWithNorm(kernel, /*rms=*/true);
}

struct FuseNormIntoGemmPass : public kiln::impl::FuseNormIntoGemmBase<FuseNormIntoGemmPass> {
  using FuseNormIntoGemmBase::FuseNormIntoGemmBase;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (getTargetOrDefault(func).getTensorCores() != TensorCores::Wgmma)
      return;
    IRRewriter rewriter(&getContext());
    SmallVector<KernelOp> kernels(func.getOps<KernelOp>());
    unsigned fused = 0;
    for (KernelOp kernel : kernels) {
      std::optional<NormKernel> nk = matchNormKernel(kernel);
      if (!nk)
        continue;
      Value result = kernel->getResult(0);
      if (result.use_empty())
        continue;
      Type et = nk->resultType.getElementType();
      SmallVector<GemmUse> uses;
      bool all = true;
      for (OpOperand &use : result.getUses()) {
        std::optional<GemmUse> g = matchGemmUse(use, et);
        if (!g || llvm::any_of(uses, [&](const GemmUse &u) { return u.kernel == g->kernel; })) {
          all = false;
          break;
        }
        uses.push_back(*g);
      }
      if (!all)
        continue;
      // x viewed with the norm kernel's result shape (a reshape stays a view).
      auto viewOfX = [&]() -> Value {
        rewriter.setInsertionPoint(kernel);
        Value xView = nk->input;
        if (cast<RankedTensorType>(xView.getType()) != nk->resultType)
          xView = ReshapeOp::create(rewriter, kernel.getLoc(), nk->resultType, xView);
        return xView;
      };
      auto eraseNormKernel = [&] {
        SmallVector<Value> oldOperands(kernel->getOperands());
        rewriter.eraseOp(kernel);
        for (Value v : oldOperands)
          if (auto c = v.getDefiningOp<ConstantOp>(); c && c->use_empty())
            rewriter.eraseOp(c);
        ++fused;
      };
      // Few-row GEMMs (every reader): the norm in their A loader, weights unchanged.
      if (fewRow && llvm::all_of(uses, [&](const GemmUse &g) { return fitsFewRow(*nk, g); })) {
        Value xView = viewOfX();
        for (GemmUse &g : uses)
          rewriteGemmFewRow(rewriter, *nk, g, xView);
        eraseNormKernel();
        continue;
      }
      if (!hopper || llvm::any_of(uses, [](const GemmUse &g) { return isFewRowGemm(g.matmul); }))
        continue; // a few-row GEMM is faster with the norm's own kernel than on the Hopper GEMM
      SmallVector<Folded> folded;
      for (GemmUse &g : uses) {
        FailureOr<Folded> f = fold(*nk, g.weight);
        if (failed(f) || f->weight.isSplat()) // overflow, or uniform (a literal: no TMA)
          break;
        folded.push_back(*f);
      }
      if (folded.size() != uses.size())
        continue;
      Value xView = viewOfX();
      for (auto [g, f] : llvm::zip(uses, folded))
        rewriteGemm(rewriter, *nk, g, f, xView);
      eraseNormKernel();
    }
    // Weights the rewrite replaced.
    for (ConstantOp c : llvm::make_early_inc_range(func.getOps<ConstantOp>()))
      if (c->use_empty())
        rewriter.eraseOp(c);
    LLVM_DEBUG(llvm::dbgs() << "folded " << fused << " norm kernels into GEMMs\n");
  }
};

} // namespace
