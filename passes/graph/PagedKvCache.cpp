//===- PagedKvCache.cpp - a decoder's forward pass as a generation step ---===//
//
// Two passes that compile a decoder for KV-cached generation
// (docs/generation.md):
//
//  - kiln-bind-generation-inputs (before folding) binds what the runtime owns:
//    `attention_mask` becomes ones, the `present.*` outputs go, the empty past
//    inputs go;
//  - kiln-paged-kv-cache (after precision assignment) rewrites each causal
//    `kiln.attention` into `kiln.kv_cache_append` (keys and values) and
//    `kiln.paged_attention`, and adds the cache pools, the block table and the
//    sequence lengths as function arguments with a `kiln.role`.
//
// The cache layout is vLLM's PagedAttention (Kwon et al. 2023,
// arXiv:2309.06180): per layer a pool of blocks [NB, Hkv, BS, D] and one
// block table [B, MB] shared by all layers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/kiln/KernelPlan.h"
#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/KilnTarget.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <limits>

namespace kiln {
#define GEN_PASS_DEF_BINDGENERATIONINPUTS
#define GEN_PASS_DEF_PAGEDKVCACHE
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

RankedTensorType rtt(Value v) { return cast<RankedTensorType>(v.getType()); }

StringRef argName(func::FuncOp func, unsigned i) {
  if (auto s = func.getArgAttrOfType<StringAttr>(i, "kiln.name"))
    return s.getValue();
  return "";
}

StringRef resultName(func::FuncOp func, unsigned i) {
  if (auto s = func.getResultAttrOfType<StringAttr>(i, "kiln.name"))
    return s.getValue();
  return "";
}

/// Erases the results of `func` marked in `drop` (and the return operands).
LogicalResult eraseResults(func::FuncOp func, const llvm::BitVector &drop) {
  if (drop.none())
    return success();
  for (Block &block : func.getBody())
    if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
      for (int i = static_cast<int>(drop.size()) - 1; i >= 0; --i)
        if (drop.test(i))
          ret->eraseOperand(i);
  return func.eraseResults(drop);
}

/// For a prefill chunk of batch 1 (`positions` the position_ids argument, [1, S], S > 1):
/// rewrites the `logits` result [1, S, V] = chain(MatMul(h [1, S, H], W)) to the last real
/// token's row, chain(MatMul(Gather(h, last, axis 1), W)) [1, 1, V], where chain is casts and
/// adds/multiplies by constants broadcast along V (a bias, a scale) and last =
/// clamp(positions[0, S - 1] - positions[0, 0], 0, S - 1): the runtime gives the padding after
/// the last real token that token's position. Returns true when it rewrote; false (and changes
/// nothing) when the result is not such a chain.
bool selectLastTokenLogits(func::FuncOp func, Value positions) {
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  std::optional<unsigned> index;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (resultName(func, i) == "logits")
      index = i;
  if (!index)
    return false;
  Value logits = ret.getOperand(*index);
  auto type = dyn_cast<RankedTensorType>(logits.getType());
  if (!type || type.getRank() != 3 || type.getDimSize(0) != 1 || type.getDimSize(1) < 2)
    return false;
  const int64_t S = type.getDimSize(1);
  // The chain from the lm_head GEMM to the result: each op keeps [1, S, V] and reads the
  // previous value once; its other operands are constants of at most one dim (broadcast along V).
  SmallVector<Operation *> chain;
  Value v = logits;
  MatMulOp lmHead;
  while (Operation *op = v.getDefiningOp()) {
    if (auto mm = dyn_cast<MatMulOp>(op)) {
      lmHead = mm;
      break;
    }
    if (!isa<CastOp, AddOp, MulOp>(op) || op->getNumResults() != 1 || !v.hasOneUse())
      return false;
    Value next;
    for (Value operand : op->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(operand.getType());
      if (t && t.getShape() == rtt(op->getResult(0)).getShape() && !next)
        next = operand;
      else if (!matchPattern(operand, m_Constant()) || !t || t.getRank() > 1)
        return false;
    }
    if (!next)
      return false;
    chain.push_back(op);
    v = next;
  }
  if (!lmHead || !v.hasOneUse())
    return false;
  auto posType = dyn_cast<RankedTensorType>(positions.getType());
  if (!posType || posType.getShape() != ArrayRef<int64_t>{1, S} ||
      !posType.getElementType().isInteger(64))
    return false;
  auto hType = dyn_cast<RankedTensorType>(lmHead.getLhs().getType());
  auto wType = dyn_cast<RankedTensorType>(lmHead.getRhs().getType());
  if (!hType || !wType || hType.getRank() != 3 || hType.getDimSize(1) != S || wType.getRank() != 2)
    return false;

  OpBuilder b(lmHead);
  Location loc = lmHead.getLoc();
  Type i64 = b.getI64Type();
  auto one = RankedTensorType::get({1, 1}, i64);
  auto at = [&](int64_t column) -> Value {
    return SliceOp::create(b, loc, one, positions, b.getDenseI64ArrayAttr({0, column}),
                           b.getDenseI64ArrayAttr({1, 1}));
  };
  auto scalar = [&](int64_t value) -> Value {
    return ConstantOp::create(b, loc, RankedTensorType::get({}, i64),
                              DenseElementsAttr::get(RankedTensorType::get({}, i64), value));
  };
  // Sequenced (argument evaluation order differs between compilers; the IR must not).
  Value lastPosition = at(S - 1);
  Value firstPosition = at(0);
  Value offset = SubOp::create(b, loc, one, lastPosition, firstPosition);
  offset = MaxOp::create(b, loc, one, offset, scalar(0));
  offset = MinOp::create(b, loc, one, offset, scalar(S - 1));
  Value last = ReshapeOp::create(b, loc, RankedTensorType::get({1}, i64), offset);
  auto rowType = RankedTensorType::get({1, 1, hType.getDimSize(2)}, hType.getElementType());
  Value row = GatherOp::create(b, loc, rowType, lmHead.getLhs(), last, b.getI64IntegerAttr(1));
  auto narrow = [](Type t) {
    auto r = cast<RankedTensorType>(t);
    return RankedTensorType::get({1, 1, r.getDimSize(2)}, r.getElementType());
  };
  Value result =
      MatMulOp::create(b, loc, narrow(lmHead.getType()), row, lmHead.getRhs()).getResult();
  // The chain again on the one row, from the GEMM towards the result.
  Value before = lmHead.getResult();
  for (Operation *op : llvm::reverse(chain)) {
    b.setInsertionPoint(op);
    Operation *copy = b.clone(*op);
    for (OpOperand &operand : copy->getOpOperands())
      if (operand.get() == before)
        operand.set(result);
    copy->getResult(0).setType(narrow(op->getResult(0).getType()));
    before = op->getResult(0);
    result = copy->getResult(0);
  }
  ret->setOperand(*index, result);
  SmallVector<Type> results(func.getResultTypes());
  results[*index] = result.getType();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(), results));
  for (Operation *op : chain)
    op->erase();
  lmHead.erase();
  return true;
}

struct BindGenerationInputs
    : public kiln::impl::BindGenerationInputsBase<BindGenerationInputs> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    OpBuilder b(func.getBody());
    int64_t batch = -1, seq = -1;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (argName(func, i) == "input_ids") {
        auto t = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
        if (t && t.getRank() == 2)
          batch = t.getDimSize(0), seq = t.getDimSize(1);
      }
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      if (argName(func, i) != "attention_mask")
        continue;
      BlockArgument arg = func.getArgument(i);
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape() || !isa<IntegerType>(type.getElementType()) ||
          type.getRank() != 2 ||
          (batch >= 0 && (type.getDimSize(0) != batch || type.getDimSize(1) != seq))) {
        func.emitError() << "kv-cache: input 'attention_mask' " << arg.getType()
                         << " must be a static integer or bool [batch, seq] = [" << batch << ", "
                         << seq << "] with an empty past; the runtime masks by sequence length";
        return signalPassFailure();
      }
      Attribute one = type.getElementType().isInteger(1)
                          ? Attribute(b.getBoolAttr(true))
                          : Attribute(b.getIntegerAttr(type.getElementType(), 1));
      Value ones = ConstantOp::create(b, arg.getLoc(), type,
                                      DenseElementsAttr::get(type, ArrayRef<Attribute>{one}));
      arg.replaceAllUsesWith(ones);
    }
    llvm::BitVector dropResults(func.getNumResults());
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (resultName(func, i).starts_with("present"))
        dropResults.set(i);
    if (func.getNumResults() > 0 && dropResults.all()) {
      func.emitError() << "kv-cache: every output of the model is a 'present.*' cache output; "
                          "nothing (e.g. logits) is left to compute";
      return signalPassFailure();
    }
    if (failed(eraseResults(func, dropResults)))
      return signalPassFailure();
    // The now unread attention mask; the empty past inputs stay until
    // kiln-eliminate-empty-tensors has replaced their uses, and
    // kiln-paged-kv-cache erases them.
    llvm::BitVector dropArgs(func.getNumArguments());
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (argName(func, i) == "attention_mask" && func.getArgument(i).use_empty())
        dropArgs.set(i);
    if (failed(func.eraseArguments(dropArgs)))
      return signalPassFailure();
  }
};

struct PagedKvCache : public kiln::impl::PagedKvCacheBase<PagedKvCache> {
  using PagedKvCacheBase::PagedKvCacheBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<AttentionOp> attentions;
    func.walk([&](AttentionOp op) { attentions.push_back(op); });
    if (attentions.empty()) {
      func.emitError() << "kv-cache: the model has no attention kiln could recognize, so there is "
                          "nothing to cache (is it a decoder? see docs/generation.md)";
      return signalPassFailure();
    }
    const int64_t maxLen = maxSeqLen, BS = blockSize, blocks = numBlocks;
    // Positions and block indices are int32 in the kernels and the block table.
    constexpr int64_t kMaxTokens = std::numeric_limits<int32_t>::max();
    // The first option out of range, alone.
    if (maxLen <= 0 || maxLen > kMaxTokens) {
      func.emitError() << "kv-cache: max-seq-len (" << maxLen << ") must be in [1, " << kMaxTokens
                       << "]";
      return signalPassFailure();
    }
    if (BS <= 0 || BS > maxLen) {
      func.emitError() << "kv-cache: block-size (" << BS << ") must be in [1, max-seq-len (" << maxLen
                       << ")] (kiln-pipeline's kv-block-size; kiln-compile shrinks its default "
                          "to max-seq-len, a pipeline text does not)";
      return signalPassFailure();
    }
    if (blocks < 0 || blocks > kMaxTokens) {
      func.emitError() << "kv-cache: num-blocks (" << blocks << ") must be in [0, " << kMaxTokens
                       << "]";
      return signalPassFailure();
    }
    // The capacity is max-seq-len rounded up to whole blocks: token positions stay int32.
    if ((maxLen + BS - 1) / BS * BS > kMaxTokens) {
      func.emitError() << "kv-cache: max-seq-len " << maxLen << " in whole blocks of " << BS
                       << " tokens is " << (maxLen + BS - 1) / BS * BS
                       << " tokens, past the int32 positions of the cache (" << kMaxTokens << ")";
      return signalPassFailure();
    }
    // Every attention: causal self-attention over this step's tokens, static shapes.
    const bool checkedCausal = func->hasAttr(kCausalCheckedAttrName);
    int64_t B = -1, S = -1;
    for (AttentionOp op : attentions) {
      auto q = rtt(op.getQuery()), k = rtt(op.getKey());
      if (!q.hasStaticShape() || !k.hasStaticShape() || !rtt(op.getValue()).hasStaticShape()) {
        op.emitError() << "kv-cache: attention " << q << " x " << k
                       << " has dynamic shapes; a generation step has static shapes";
        return signalPassFailure();
      }
      // One token attends only to itself: causal and bidirectional look the same, so at S = 1
      // only kiln-compile's check at two tokens (kCausalCheckedAttrName) tells them apart.
      bool oneToken = q.getDimSize(2) == 1 && k.getDimSize(2) == 1;
      if (oneToken && !op.getCausal() && !op.getMask() && !checkedCausal) {
        op.emitError() << "kv-cache: at one token kiln cannot tell causal from bidirectional "
                          "attention; compile the ONNX model with kiln-compile --kv-cache, "
                          "which checks it at two tokens, or a step of two or more tokens";
        return signalPassFailure();
      }
      if (!(op.getCausal() || oneToken) || op.getMask() || q.getDimSize(2) != k.getDimSize(2)) {
        auto diag = op.emitError() << "kv-cache: attention " << formatShape(q.getShape()) << " x "
                                   << formatShape(k.getShape())
                                   << " is not causal self-attention over the step's tokens";
        if (Value m = op.getMask()) {
          int64_t B0 = q.getDimSize(0), S0 = q.getDimSize(2);
          if (!m.getDefiningOp<ConstantOp>() && S0 > 0 && B0 * S0 > kMaxFoldElements / S0)
            diag << " (its mask " << formatShape(rtt(m).getShape())
                 << " is computed at run time: kiln folds mask subgraphs of at most "
                 << kMaxFoldElements << " elements into constants, and recognizes causal ones; "
                 << "compile a step with fewer tokens)";
          else
            diag << " (it has a mask kiln could not fold into causal)";
        }
        diag << "; only a decoder's causal attention can use a KV cache";
        return signalPassFailure();
      }
      if (B >= 0 && q.getDimSize(0) != B) {
        op.emitError() << "kv-cache: attentions disagree on the batch size";
        return signalPassFailure();
      }
      B = q.getDimSize(0);
      S = q.getDimSize(2);
    }
    const int64_t MB = (maxLen + BS - 1) / BS;
    if (S > maxLen) {
      func.emitError() << "kv-cache: a step of " << S << " tokens does not fit in max-seq-len "
                       << maxLen;
      return signalPassFailure();
    }
    if (B > kMaxTokens / MB) {
      func.emitError() << "kv-cache: batch " << B << " x " << MB
                       << " blocks per sequence exceeds the int32 block table";
      return signalPassFailure();
    }
    const int64_t NB = blocks > 0 ? blocks : B * MB;
    const int64_t stepBlocks = B * ((S + BS - 1) / BS);
    if (NB < stepBlocks) {
      func.emitError() << "kv-cache: num-blocks " << NB << " cannot hold one step (" << B
                       << (B == 1 ? " sequence of " : " sequences of ") << S
                       << (S == 1 ? " token" : " tokens") << " in blocks of " << BS << " need "
                       << stepBlocks << ")";
      return signalPassFailure();
    }
    // Token positions must come from the runtime.
    std::optional<unsigned> positions;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (argName(func, i) == "position_ids")
        positions = i;
    if (!positions) {
      func.emitError()
          << "kv-cache: the model has no 'position_ids' input, so its token positions are "
             "computed inside the graph and would restart at 0 in every step (kiln-compile "
             "--kv-cache makes that input from a plain export's positions only where they come "
             "from a Range(0, S) that a position lookup reads: docs/generation.md, form b); "
             "export it with position_ids (e.g. examples/export/export_hf.py --task causal-lm "
             "--with-past)";
      return signalPassFailure();
    }

    MLIRContext *ctx = func.getContext();
    Builder b(ctx);
    auto i32 = b.getI32Type();
    auto addArg = [&](RankedTensorType type, StringRef name, InputRole role) -> BlockArgument {
      unsigned index = func.getNumArguments();
      NamedAttribute attrs[] = {b.getNamedAttr("kiln.name", b.getStringAttr(name)),
                                b.getNamedAttr(kRoleAttrName, InputRoleAttr::get(ctx, role))};
      if (failed(func.insertArgument(index, type, b.getDictionaryAttr(attrs), func.getLoc())))
        return nullptr;
      return func.getArgument(index);
    };
    func.setArgAttr(*positions, kRoleAttrName, InputRoleAttr::get(ctx, InputRole::PositionIds));
    Value table = addArg(RankedTensorType::get({B, MB}, i32), "kv_cache.block_table",
                         InputRole::BlockTable);
    Value lens = addArg(RankedTensorType::get({B}, i32), "kv_cache.seq_lens", InputRole::SeqLens);
    if (!table || !lens)
      return signalPassFailure();

    // The pools of all layers must fit in the device memory of the largest GPU of the target's
    // arch (the target table's bound); the runtime allocates them when a session starts.
    if (int64_t memory = getTargetOrDefault(func).getMemoryBytes(); memory > 0) {
      double poolBytes = 0;
      for (AttentionOp op : attentions) {
        auto k = rtt(op.getKey()), v = rtt(op.getValue());
        double bytesPerElement = k.getElementTypeBitWidth() / 8.0;
        poolBytes += double(NB) * BS * bytesPerElement *
                     (k.getDimSize(1) * k.getDimSize(3) + v.getDimSize(1) * v.getDimSize(3));
      }
      if (poolBytes > double(memory)) {
        constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
        auto diag = func.emitError();
        diag << "kv-cache: the KV cache pools (" << NB << " blocks of " << BS << " tokens in "
             << attentions.size() << " layer" << (attentions.size() == 1 ? "" : "s") << ") take ";
        std::string sizes;
        llvm::raw_string_ostream(sizes) << llvm::format("%.1f GiB, more than the %.1f GiB",
                                                        poolBytes / kGiB, double(memory) / kGiB);
        diag << sizes;
        diag << " of the largest " << getTargetOrDefault(func).getName()
             << " GPU; lower max-seq-len, the batch or num-blocks (kiln-compile --max-seq-len, "
                "--shape, --kv-blocks)";
        return signalPassFailure();
      }
    }
    for (auto [layer, op] : llvm::enumerate(attentions)) {
      auto k = rtt(op.getKey()), v = rtt(op.getValue());
      Type et = k.getElementType();
      auto kType = RankedTensorType::get({NB, k.getDimSize(1), BS, k.getDimSize(3)}, et);
      auto vType = RankedTensorType::get({NB, v.getDimSize(1), BS, v.getDimSize(3)}, et);
      // The pools obey the size limit every tensor of kiln does (kiln-compile checks it on import,
      // before these exist).
      constexpr int64_t kMaxElements = int64_t(1) << 40;
      if (NB > kMaxElements / (k.getDimSize(1) * BS * std::max(k.getDimSize(3), v.getDimSize(3)))) {
        op.emitError() << "kv-cache: a pool of " << NB << " blocks of " << BS << " tokens x "
                       << k.getDimSize(1) << " heads x " << k.getDimSize(3)
                       << " has more than 2^40 elements; lower num-blocks, max-seq-len or the batch";
        return signalPassFailure();
      }
      std::string prefix = "kv_cache." + std::to_string(layer);
      Value kc = addArg(kType, prefix + ".key", InputRole::KeyCache);
      Value vc = addArg(vType, prefix + ".value", InputRole::ValueCache);
      if (!kc || !vc)
        return signalPassFailure();
      OpBuilder ob(op);
      Location loc = op.getLoc();
      auto append = KvCacheAppendOp::create(ob, loc, kType, vType, op.getKey(), op.getValue(), kc,
                                            vc, table, lens);
      Value out = PagedAttentionOp::create(ob, loc, op.getType(), op.getQuery(),
                                           append.getKeyResult(), append.getValueResult(), table,
                                           lens, op.getScaleAttr(), op.getBshdOutputAttr());
      op.getResult().replaceAllUsesWith(out);
      op.erase();
    }
    // The empty past inputs (kiln-eliminate-empty-tensors replaced their uses).
    llvm::BitVector dropArgs(func.getNumArguments());
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto t = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      if (t && t.getNumElements() == 0 && func.getArgument(i).use_empty())
        dropArgs.set(i);
    }
    if (failed(func.eraseArguments(dropArgs)))
      return signalPassFailure();
    if (lastTokenLogits && S > 1)
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (argName(func, i) == "position_ids") {
          selectLastTokenLogits(func, func.getArgument(i));
          break;
        }
    addNextTokenResult(func, deviceSampling);
  }

  /// A step whose `logits` result is [B, 1, V] (a decode step, or a prefill chunk's last token)
  /// also returns `next_token`, i64 [B, 1], so that generation reads B integers back instead of
  /// B x V logits. With `sampling` it is `kiln.sample` of the logits with five new [B]
  /// arguments that carry each row's parameters (`sampling.temperature` f32, `sampling.top_k`
  /// i32, `sampling.top_p` f32, `sampling.seed` i64, `sampling.offset` i64, each with its
  /// `kiln.role`): greedy rows get the first maximum, sampled rows a draw on the GPU. Without,
  /// it is the greedy token alone (`kiln.arg_reduce <max>`, the first maximum; a NaN wins).
  static void addNextTokenResult(func::FuncOp func, bool sampling) {
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "kiln.name");
      auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
      if (!name || name.getValue() != "logits" || !type || type.getRank() != 3 ||
          type.getDimSize(1) != 1 || !isa<FloatType>(type.getElementType()))
        continue;
      for (unsigned j = 0; j < func.getNumResults(); ++j)
        if (auto other = func.getResultAttrOfType<StringAttr>(j, "kiln.name");
            other && other.getValue() == "next_token")
          return; // the model has one of its own
      MLIRContext *ctx = func.getContext();
      OpBuilder b(ret);
      const int64_t B = type.getDimSize(0);
      auto tokenType = RankedTensorType::get({B, 1}, b.getIntegerType(64));
      Value logits = ret.getOperand(i);
      Value token;
      if (sampling) {
        auto addArg = [&](Type element, StringRef argName, InputRole role) -> Value {
          unsigned index = func.getNumArguments();
          NamedAttribute attrs[] = {b.getNamedAttr("kiln.name", b.getStringAttr(argName)),
                                    b.getNamedAttr(kRoleAttrName, InputRoleAttr::get(ctx, role))};
          if (failed(func.insertArgument(index, RankedTensorType::get({B}, element),
                                         b.getDictionaryAttr(attrs), func.getLoc())))
            return nullptr;
          return func.getArgument(index);
        };
        Value temperature = addArg(b.getF32Type(), "sampling.temperature", InputRole::Temperature);
        Value topK = addArg(b.getIntegerType(32), "sampling.top_k", InputRole::TopK);
        Value topP = addArg(b.getF32Type(), "sampling.top_p", InputRole::TopP);
        Value seed = addArg(b.getIntegerType(64), "sampling.seed", InputRole::Seed);
        Value offset = addArg(b.getIntegerType(64), "sampling.offset", InputRole::SampleOffset);
        if (!temperature || !topK || !topP || !seed || !offset)
          return;
        token = SampleOp::create(b, ret.getLoc(), tokenType, logits, temperature, topK, topP,
                                 seed, offset);
      } else {
        token = ArgReduceOp::create(b, ret.getLoc(), tokenType, ReduceKind::Max, logits,
                                    /*axis=*/2, /*keep_dims=*/false,
                                    /*select_last_index=*/false);
      }
      ret->insertOperands(ret.getNumOperands(), token);
      unsigned index = func.getNumResults();
      (void)func.insertResult(index, tokenType,
                              b.getDictionaryAttr(b.getNamedAttr(
                                  "kiln.name", b.getStringAttr("next_token"))));
      return;
    }
  }
};

} // namespace
