//===- OnnxGroupQueryAttention.cpp - com.microsoft GroupQueryAttention ----===//
//
// onnxruntime's fused attention with a KV cache, which onnxruntime-genai's
// model builder writes for every layer of Llama/Phi/Qwen/Mistral exports.
// Semantics follow onnxruntime's docs/ContribOperators.md and its CPU kernel
// (checked against onnxruntime 1.30 on CPU, test/onnx/gen_onnx_tests.py):
//
//   query [B, S, Hq*D], key/value [B, S, Hkv*D] (or packed QKV
//   [B, S, (Hq + 2 Hkv) * D] in query alone), past_key/past_value
//   [B, Hkv, P, D] (BNSH), seqlens_k int32 [B] (total length - 1 per row),
//   total_sequence_length int32 scalar; with do_rotary, q and k rotated at
//   positions P..P+S-1 by cos_cache/sin_cache [max_seq, R/2].
//   present_key/present_value = Concat(past, new) [B, Hkv, P+S, D];
//   output [B, S, Hq*D] = causal attention of the new queries over the
//   present keys and values (query i at position P + i), scale default
//   1/sqrt(D), optional softcap and a local (sliding) window: with
//   local_window_size W, query i sees keys P + i - W < j <= P + i (W keys,
//   itself included, as onnxruntime's CPU kernel and Hugging Face's
//   sliding_window count them).
//
// Steps of importGroupQueryAttention:
//   1. attributes; the ones onnxruntime added for quantized caches, smooth
//      softmax, QK output and window-sized caches are refused when set;
//   2. operand shapes: q/k/v (or the slices of packed QKV), the past, the
//      optional operands kiln does not take (refused by name);
//   3. total_sequence_length must be a constant; seqlens_k either a constant
//      describing full rows (every batch row holds P + S tokens: the static
//      form) or, 3b, read at run time (onnxruntime-genai's padded batches:
//      per-row offsets, positions and lengths, see RowLengths); or, 3c, a
//      generation step under kiln-compile --kv-cache: an empty past, the
//      runtime's lengths, the step's position_ids (checkGenerationStep);
//   4. heads split to [B, H, S, D], rotary embedding (buildRotary, the IR
//      RotaryEmbedding-23 gives) on q and k, at positions P + i or, per row,
//      offset[b] + i, or position_ids[b, i] in a generation step;
//   5. present = Concat(past, k/v) along the sequence; per row, the past up
//      to its offset, the new tokens, zeros;
//   6. one kiln.attention (causal bottom-right: query i sees keys j <= i + P;
//      per row, an additive mask from the row lengths) or, with softcap or
//      a window in the static form, buildCompositeAttention (the ONNX
//      Attention-25 importer's form), then the heads merged back.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Operand slots of GroupQueryAttention (version 1, onnxruntime 1.30).
enum : unsigned {
  kQuery = 0,
  kKey,
  kValue,
  kPastKey,
  kPastValue,
  kSeqlensK,
  kTotalSequenceLength,
  kCosCache,
  kSinCache,
  kPositionIds,
  kAttentionBias,
  kHeadSink,
  kKScale,
  kVScale,
  kQNormWeight,
  kKNormWeight,
  kNumOperands
};

/// The attributes kiln reads.
struct GqaAttributes {
  int64_t numHeads, kvNumHeads;
  float scale, softcap;
  int64_t localWindow;
  bool causal, doRotary, interleaved;
};

/// Reads num_heads and kv_num_heads (required, kv_num_heads dividing
/// num_heads), scale, softcap, local_window_size, causal, do_rotary and
/// rotary_interleaved; refuses the attributes of features kiln does not
/// import when they are set to anything but their defaults.
FailureOr<GqaAttributes> getGqaAttributes(NodeImporter &n) {
  for (StringRef name : {"num_heads", "kv_num_heads"})
    if (!n.findAttr(name))
      return n.emitError() << "attribute '" << name << "' is required";
  FailureOr<int64_t> numHeads = n.getIntAttr("num_heads", 0),
                     kvNumHeads = n.getIntAttr("kv_num_heads", 0),
                     localWindow = n.getIntAttr("local_window_size", -1),
                     causal = n.getIntAttr("causal", 1), doRotary = n.getIntAttr("do_rotary", 0),
                     interleaved = n.getIntAttr("rotary_interleaved", 0),
                     smoothSoftmax = n.getIntAttr("smooth_softmax", 0),
                     qkOutput = n.getIntAttr("qk_output", 0),
                     windowCache = n.getIntAttr("sliding_window_cache", 0),
                     bitWidth = n.getIntAttr("kv_cache_bit_width", 0);
  FailureOr<float> scale = n.getFloatAttr("scale", 0.0f), softcap = n.getFloatAttr("softcap", 0.0f),
                   qkNormEpsilon = n.getFloatAttr("qk_norm_epsilon", 1e-6f);
  FailureOr<std::string> kQuant = n.getStringAttr("k_quant_type", "NONE"),
                         vQuant = n.getStringAttr("v_quant_type", "NONE");
  if (failed(numHeads) || failed(kvNumHeads) || failed(localWindow) || failed(causal) ||
      failed(doRotary) || failed(interleaved) || failed(smoothSoftmax) || failed(qkOutput) ||
      failed(windowCache) || failed(bitWidth) || failed(scale) || failed(softcap) ||
      failed(qkNormEpsilon) || failed(kQuant) || failed(vQuant))
    return failure();
  if (*numHeads <= 0 || *kvNumHeads <= 0 || *numHeads % *kvNumHeads != 0)
    return n.emitError() << "num_heads " << *numHeads << " and kv_num_heads " << *kvNumHeads
                         << " must be positive, kv_num_heads dividing num_heads";
  if (*kQuant != "NONE" || *vQuant != "NONE")
    return n.emitUnsupported("a quantized KV cache (k_quant_type '" + *kQuant +
                             "', v_quant_type '" + *vQuant + "'); kiln imports 'NONE' only");
  if (*smoothSoftmax == 1)
    return n.emitUnsupported("smooth_softmax 1 (the softmax with an extra 1 in the denominator)");
  if (*qkOutput != 0)
    return n.emitUnsupported("qk_output " + Twine(*qkOutput) + " (the output_qk output)");
  if (*windowCache != 0)
    return n.emitUnsupported("sliding_window_cache " + Twine(*windowCache) +
                             " (window-sized past/present buffers)");
  if (*causal != 0 && *causal != 1)
    return n.emitError() << "causal must be 0 or 1, got " << *causal;
  if (*localWindow == 0 || *localWindow < -1)
    return n.emitError() << "local_window_size must be -1 (none) or >= 1 (the query and the "
                            "local_window_size - 1 keys before it), got "
                         << *localWindow;
  if (*localWindow != -1 && *causal == 0)
    return n.emitError() << "local_window_size " << *localWindow << " needs causal 1";
  if (*softcap < 0.0f)
    return n.emitError() << "softcap must be >= 0, got " << *softcap;
  if (*scale < 0.0f)
    return n.emitError() << "scale must be >= 0 (0: 1/sqrt(head_size)), got " << *scale;
  GqaAttributes a{*numHeads,    *kvNumHeads,   *scale,           *softcap,
                  *localWindow, *causal == 1,  *doRotary != 0,   *interleaved != 0};
  return a;
}

/// The types of seqlens_k (int32 [B]) and total_sequence_length (an int32 scalar or [1]).
LogicalResult checkLengthTypes(NodeImporter &n, int64_t batch) {
  RankedTensorType st = n.getInputType(kSeqlensK), tt = n.getInputType(kTotalSequenceLength);
  if (!st.getElementType().isInteger(32) || st.getShape() != ArrayRef<int64_t>{batch})
    return n.emitError() << "seqlens_k " << st << " must be int32 [batch_size] = [" << batch << "]";
  if (!tt.getElementType().isInteger(32) || tt.getNumElements() != 1 || tt.getRank() > 1)
    return n.emitError() << "total_sequence_length " << tt << " must be an int32 scalar";
  return success();
}

/// Step 3: seqlens_k int32 [B] and total_sequence_length int32 (a scalar or
/// [1], a constant after shape specialization: onnxruntime-genai computes it
/// from the attention mask's shape). Returns true when seqlens_k is a constant
/// describing full rows (every row holds P + S tokens, total P + S): the
/// static form. Otherwise (seqlens_k computed at run time from the attention
/// mask, or rows of different lengths) the per-row form of step 3b applies.
FailureOr<bool> checkLengths(NodeImporter &n, int64_t batch, int64_t past, int64_t seq) {
  if (failed(checkLengthTypes(n, batch)))
    return failure();
  if (!matchPattern(n.getInput(kTotalSequenceLength), m_Constant()))
    return n.emitUnsupported(
        "total_sequence_length is computed at run time; kiln needs it constant after shape "
        "specialization (onnxruntime-genai's models take it from the attention mask's shape)");
  FailureOr<SmallVector<int64_t>> total =
      n.getConstantInts(kTotalSequenceLength, "total_sequence_length");
  if (failed(total))
    return failure();
  if (!matchPattern(n.getInput(kSeqlensK), m_Constant()))
    return false;
  FailureOr<SmallVector<int64_t>> seqlens = n.getConstantInts(kSeqlensK, "seqlens_k");
  if (failed(seqlens))
    return failure();
  // Each row holds seqlens_k[b] + 1 of the total_sequence_length tokens (onnxruntime refuses
  // other values at run time; kiln sees them now).
  for (auto [b, len] : llvm::enumerate(*seqlens))
    if (len < 0 || len >= (*total)[0])
      return n.emitError() << "seqlens_k[" << b << "] = " << len << " is out of range [0, "
                           << (*total)[0] << ") (total_sequence_length " << (*total)[0] << ")";
  int64_t full = past + seq;
  return (*total)[0] == full &&
         llvm::all_of(*seqlens, [&](int64_t len) { return len == full - 1; });
}

/// Step 3b, the per-row form: row b holds seqlens_k[b] + 1 tokens, read at
/// run time. As onnxruntime's CPU kernel (group_query_attention_helper.h,
/// gqa_attention_base.h): a first prompt (S == total_sequence_length T) puts
/// the S new tokens at positions 0..S-1 of every row (rows shorter than S are
/// right-padded); otherwise (a decode step, S == 1, or a later prompt chunk of
/// batch 1) row b's past is seqlens_k[b] + 1 - S tokens long and the new
/// tokens follow it. The present buffers are max(T, P) long (P the past
/// buffer's length: onnxruntime-genai's shared past/present buffer of
/// max_length, or the past itself); positions past a row's end are 0.
struct RowLengths {
  int64_t total;          ///< T, total_sequence_length
  int64_t presentLength;  ///< L = max(T, P)
  bool firstPrompt;       ///< S == T: every row starts at position 0
  Value offset;           ///< int64 [B]: the past length of each row (0 on a first prompt)
  Value keys;             ///< int64 [B]: seqlens_k + 1, the keys each row attends to
};

/// Reads total_sequence_length and seqlens_k for step 3b and checks what
/// onnxruntime requires of them. Errors name the operand and the rule.
FailureOr<RowLengths> getRowLengths(NodeImporter &n, int64_t batch, int64_t past, int64_t seq) {
  FailureOr<SmallVector<int64_t>> total =
      n.getConstantInts(kTotalSequenceLength, "total_sequence_length");
  if (failed(total))
    return failure();
  RowLengths r;
  r.total = (*total)[0];
  r.presentLength = std::max(r.total, past);
  r.firstPrompt = seq == r.total;
  if (r.total < seq)
    return n.emitError() << "total_sequence_length " << r.total
                         << " is less than the sequence length " << seq;
  if (seq == 0)
    return n.emitError() << "a step of 0 new tokens (query " << n.getInputType(kQuery)
                         << "): with seqlens_k read at run time, GroupQueryAttention needs at "
                            "least one new token";
  if (!r.firstPrompt && seq > 1 && batch != 1)
    return n.emitError() << "with seqlens_k read at run time, a prompt chunk after a past "
                            "(sequence length "
                         << seq << " < total_sequence_length " << r.total
                         << ") needs batch size 1, as in onnxruntime; got " << batch;
  if (!r.firstPrompt && past + seq < r.total)
    return n.emitError() << "total_sequence_length " << r.total << " is more than the past ("
                         << past << ") plus the sequence length (" << seq
                         << "); the past_key/past_value buffers are too short";
  Builder &b = n.getBuilder();
  Type i64 = b.getI64Type();
  auto vec = RankedTensorType::get({batch}, i64);
  Value lens = n.create<CastOp>(vec, n.getInput(kSeqlensK));
  r.keys = n.create<AddOp>(vec, lens, n.createScalar(i64, 1.0));
  if (r.firstPrompt)
    r.offset = n.createConstant(
        DenseElementsAttr::get(vec, ArrayRef<int64_t>(SmallVector<int64_t>(batch, 0))));
  else
    r.offset = n.create<SubOp>(vec, r.keys, n.createScalar(i64, double(seq)));
  return r;
}

/// An int64 constant 0, 1, ..., count - 1 shaped `shape` (its element count is `count`).
Value iota(NodeImporter &n, int64_t count, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(i);
  return n.createConstant(DenseElementsAttr::get(
      RankedTensorType::get(shape, n.getBuilder().getI64Type()), ArrayRef<int64_t>(values)));
}

/// `x` clamped to [lo, hi] (int64, elementwise).
Value clampInts(NodeImporter &n, Value x, int64_t lo, int64_t hi) {
  auto t = cast<RankedTensorType>(x.getType());
  Type i64 = t.getElementType();
  Value up = n.create<MaxOp>(t, x, n.createScalar(i64, double(lo)));
  return n.create<MinOp>(t, up, n.createScalar(i64, double(hi)));
}

/// [B, S, H*D] -> [B, H, S, D].
Value splitHeads(NodeImporter &n, Value x, int64_t heads) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t B = t.getDimSize(0), S = t.getDimSize(1), D = t.getDimSize(2) / heads;
  Value r = n.createReshape(x, {B, S, heads, D});
  return n.create<TransposeOp>(RankedTensorType::get({B, heads, S, D}, t.getElementType()), r,
                               n.getBuilder().getDenseI64ArrayAttr({0, 2, 1, 3}));
}

/// Columns [begin, begin + width) of the last dim of x [B, S, W].
Value sliceColumns(NodeImporter &n, Value x, int64_t begin, int64_t width) {
  auto t = cast<RankedTensorType>(x.getType());
  Builder &b = n.getBuilder();
  return n.create<SliceOp>(t.clone({t.getDimSize(0), t.getDimSize(1), width}), x,
                           b.getDenseI64ArrayAttr({0, 0, begin}),
                           b.getDenseI64ArrayAttr({1, 1, 1}));
}

/// The rotary table `which` (operand kCosCache or kSinCache) [max_seq, R/2]
/// at rows past..past+seq-1, as [1, seq, R/2]; or, given `positions` (int64
/// [B, seq], read at run time), at those rows (clamped to the table unless
/// `clamp` is false: a generation step's position_ids, which kiln-compile
/// bounds by the table's rows), as [B, seq, R/2]. Checks its type against the
/// query's and that rows up to `needed` exist.
FailureOr<Value> getRotaryRows(NodeImporter &n, unsigned which, RankedTensorType queryType,
                               int64_t headSize, int64_t past, int64_t seq, int64_t needed,
                               Value positions = Value(), bool clamp = true) {
  StringRef what = which == kCosCache ? "cos_cache" : "sin_cache";
  if (!n.hasInput(kCosCache) || !n.hasInput(kSinCache))
    return n.emitError() << "do_rotary 1 needs cos_cache and sin_cache";
  RankedTensorType t = n.getInputType(which);
  if (t.getElementType() != queryType.getElementType() || t.getRank() != 2 ||
      t.getDimSize(1) <= 0 || 2 * t.getDimSize(1) > headSize)
    return n.emitError() << what << " " << t
                         << " must be [max_sequence_length, rotary_dim / 2] of the query's "
                            "element type with rotary_dim <= head_size "
                         << headSize << " (query " << queryType << ")";
  if (t != n.getInputType(which == kCosCache ? kSinCache : kCosCache))
    return n.emitError() << "cos_cache " << n.getInputType(kCosCache) << " and sin_cache "
                         << n.getInputType(kSinCache) << " must have one type";
  if (t.getDimSize(0) < needed)
    return n.emitError() << what << " " << t << " has " << t.getDimSize(0)
                         << " positions; " << needed << " are needed (positions 0 to "
                         << needed - 1 << ")";
  Builder &b = n.getBuilder();
  if (positions) {
    int64_t batch = cast<RankedTensorType>(positions.getType()).getDimSize(0);
    Value rows = clamp ? clampInts(n, positions, 0, t.getDimSize(0) - 1) : positions;
    return n.create<GatherOp>(RankedTensorType::get({batch, seq, t.getDimSize(1)},
                                                    t.getElementType()),
                              n.getInput(which), rows, b.getI64IntegerAttr(0));
  }
  Value rows = n.create<SliceOp>(t.clone({seq, t.getDimSize(1)}), n.getInput(which),
                                 b.getDenseI64ArrayAttr({past, 0}), b.getDenseI64ArrayAttr({1, 1}));
  return n.createReshape(rows, {1, seq, t.getDimSize(1)});
}

/// Step 3c, a generation step (kiln-compile --kv-cache, NodeImporter::getGenerationStep): the
/// past is empty (the runtime owns the cache) and the runtime's sequence lengths replace
/// seqlens_k and total_sequence_length (only their types are checked); the new tokens sit at
/// the step's positions. What kiln's paged attention does not compute is refused: a local
/// window shorter than --max-seq-len, softcap, causal 0.
LogicalResult checkGenerationStep(NodeImporter &n, const GqaAttributes &attrs, int64_t past,
                                  int64_t seq) {
  const int64_t maxSeqLen = n.getGenerationStep()->maxSeqLen;
  if (past != 0)
    return n.emitError() << "--kv-cache: past_key '" << n.getNode().input(kPastKey)
                         << "' holds " << past << " positions (" << n.getInputType(kPastKey)
                         << "); kiln compiles a generation step with an empty past (the "
                            "runtime owns the cache) and empties the inputs named "
                            "past_key_values.<layer>.key/.value: give the cache inputs those "
                            "names, and no past length in --shape";
  // A window of W keys sees every cached position when a sequence holds at most W tokens.
  if (attrs.localWindow > 0 && (maxSeqLen <= 0 || maxSeqLen > attrs.localWindow))
    return n.emitError() << "--kv-cache: a sliding window (local_window_size " << attrs.localWindow
                         << ") over the KV cache: kiln's paged attention attends to every cached "
                            "position of a sequence; with --max-seq-len "
                         << attrs.localWindow << " or less the window holds them all";
  if (attrs.softcap != 0.0f)
    return n.emitError() << "--kv-cache: softcap " << attrs.softcap
                         << " on attention over the KV cache: kiln's paged attention has no "
                            "softcap";
  if (!attrs.causal)
    return n.emitError() << "--kv-cache: causal 0 (every key visible to every query): kiln's "
                            "paged attention is causal";
  if (seq == 0)
    return n.emitError() << "--kv-cache: a step of 0 new tokens (query "
                         << n.getInputType(kQuery) << ")";
  return checkLengthTypes(n, n.getInputType(kQuery).getDimSize(0));
}

/// com.microsoft GroupQueryAttention (version 1): see the file comment.
///   inputs:  query, key, value (or packed QKV), past_key, past_value,
///            seqlens_k, total_sequence_length, cos_cache, sin_cache; the
///            later optional operands (position_ids, attention_bias,
///            head_sink, k_scale, v_scale, q_norm_weight, k_norm_weight) are
///            refused.
///   outputs: output, present_key, present_value; output_qk refused.
/// Errors: each check below names the operand, its type and what it must be.
LogicalResult importGroupQueryAttention(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, kNumOperands)) || failed(n.checkFloat(kQuery, "query")))
    return failure();
  if (!n.hasInput(kSeqlensK) || !n.hasInput(kTotalSequenceLength))
    return n.emitError() << "seqlens_k (input 5) and total_sequence_length (input 6) are required";
  // 1. Attributes.
  FailureOr<GqaAttributes> attrs = getGqaAttributes(n);
  if (failed(attrs))
    return failure();
  int64_t Hq = attrs->numHeads, Hkv = attrs->kvNumHeads;

  // 2. Operands.
  static constexpr std::pair<unsigned, const char *> kRefused[] = {
      {kPositionIds, "position_ids"}, {kAttentionBias, "attention_bias"},
      {kHeadSink, "head_sink"},       {kKScale, "k_scale"},
      {kVScale, "v_scale"},           {kQNormWeight, "q_norm_weight"},
      {kKNormWeight, "k_norm_weight"}};
  for (auto [slot, name] : kRefused)
    if (n.hasInput(slot))
      return n.emitUnsupported(Twine(name) + " (input " + Twine(slot) +
                               "); kiln imports GroupQueryAttention without it");
  if (n.isOutputUsed(3))
    return n.emitUnsupported("output 3 (output_qk)");
  RankedTensorType qt = n.getInputType(kQuery);
  Type et = qt.getElementType();
  if (n.hasInput(kKey) != n.hasInput(kValue))
    return n.emitError() << "key and value must be given together (or both left out for packed "
                            "QKV in query)";
  bool packed = !n.hasInput(kKey);
  int64_t groups = packed ? Hq + 2 * Hkv : Hq;
  if (qt.getRank() != 3 || qt.getDimSize(2) <= 0 || qt.getDimSize(2) % groups != 0)
    return n.emitError() << "query " << qt << " must be [batch_size, sequence_length, "
                         << (packed ? "(num_heads + 2 * kv_num_heads) * head_size" :
                                      "num_heads * head_size")
                         << "] (num_heads " << Hq << ", kv_num_heads " << Hkv << ")";
  int64_t B = qt.getDimSize(0), S = qt.getDimSize(1), D = qt.getDimSize(2) / groups;
  Value q = n.getInput(kQuery), k, v;
  if (packed) {
    k = sliceColumns(n, q, Hq * D, Hkv * D);
    v = sliceColumns(n, q, (Hq + Hkv) * D, Hkv * D);
    q = sliceColumns(n, q, 0, Hq * D);
  } else {
    auto kvType = RankedTensorType::get({B, S, Hkv * D}, et);
    for (unsigned i : {kKey, kValue})
      if (n.getInputType(i) != kvType)
        return n.emitError() << (i == kKey ? "key " : "value ") << n.getInputType(i)
                             << " must be " << kvType << " (query " << qt << ", num_heads " << Hq
                             << ", kv_num_heads " << Hkv << ")";
    k = n.getInput(kKey);
    v = n.getInput(kValue);
  }
  if (n.hasInput(kPastKey) != n.hasInput(kPastValue))
    return n.emitError() << "past_key and past_value must be given together";
  int64_t P = 0;
  if (n.hasInput(kPastKey)) {
    RankedTensorType pt = n.getInputType(kPastKey);
    if (pt.getRank() != 4 || pt.getElementType() != et || pt.getDimSize(0) != B ||
        pt.getDimSize(1) != Hkv || pt.getDimSize(3) != D || pt != n.getInputType(kPastValue))
      return n.emitError() << "past_key " << pt << " and past_value "
                           << n.getInputType(kPastValue)
                           << " must both be [batch_size, kv_num_heads, past_length, head_size] = ["
                           << B << ", " << Hkv << ", P, " << D << "] of the query's element type";
    P = pt.getDimSize(2);
  }

  // 3. Full rows (the static form), or 3b. lengths per row read at run time; or a generation
  // step over the runtime's cache (3c).
  const NodeImporter::GenerationStep *step = n.getGenerationStep();
  if (step && failed(checkGenerationStep(n, *attrs, P, S)))
    return failure();
  // A generation step's window holds every cached position (checkGenerationStep).
  const int64_t localWindow = step ? -1 : attrs->localWindow;
  Value stepPositions = step ? step->positions : Value();
  if (step && attrs->doRotary && !stepPositions)
    return n.emitError() << "internal: a generation step's rotary without positions";
  FailureOr<bool> fullRows = step ? FailureOr<bool>(true) : checkLengths(n, B, P, S);
  if (failed(fullRows))
    return failure();
  std::optional<RowLengths> rows;
  if (!*fullRows) {
    FailureOr<RowLengths> r = getRowLengths(n, B, P, S);
    if (failed(r))
      return failure();
    rows = *r;
  }
  Builder &b = n.getBuilder();
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  // Row b's new tokens sit at positions offset[b] + i (int64 [B, S]); the static form's at P + i.
  // (Ops are created in sequenced statements, never two in one call's arguments: the order in
  // which C++ evaluates arguments differs between compilers, and the IR must not.)
  Value positions = stepPositions;
  if (rows) {
    Value offsets = n.createReshape(rows->offset, {B, 1});
    Value steps = iota(n, S, {1, S});
    positions = n.create<AddOp>(RankedTensorType::get({B, S}, i64), offsets, steps);
  }

  // 4. Heads, then the rotary embedding at the new tokens' positions.
  Value q4 = splitHeads(n, q, Hq), k4 = splitHeads(n, k, Hkv), v4 = splitHeads(n, v, Hkv);
  if (attrs->doRotary) {
    // A generation step's positions are bounded by kiln-compile (--max-seq-len against the
    // table's rows), not here.
    int64_t needed = stepPositions ? 1 : rows ? rows->total : P + S;
    bool clamp = !stepPositions;
    FailureOr<Value> cos = getRotaryRows(n, kCosCache, qt, D, P, S, needed, positions, clamp);
    if (failed(cos))
      return failure();
    FailureOr<Value> sin = getRotaryRows(n, kSinCache, qt, D, P, S, needed, positions, clamp);
    if (failed(sin))
      return failure();
    q4 = buildRotary(n, q4, *cos, *sin, attrs->interleaved);
    k4 = buildRotary(n, k4, *cos, *sin, attrs->interleaved);
  }

  // 5. present: Concat(past, new) along the sequence; per row, the past's first offset[b]
  // positions, the new tokens, then zeros (onnxruntime clears a present buffer it does not
  // share with the past).
  int64_t L = rows ? rows->presentLength : P + S;
  auto zeros = [&](int64_t length) -> Value {
    return n.create<ExpandOp>(RankedTensorType::get({B, Hkv, length, D}, et),
                              n.createScalar(et, 0.0));
  };
  auto presentType = RankedTensorType::get({B, Hkv, L, D}, et);
  auto present = [&](unsigned pastSlot, Value cur) -> Value {
    if (!rows)
      return P == 0 ? cur :
                      n.create<ConcatOp>(presentType, ValueRange{n.getInput(pastSlot), cur},
                                         b.getI64IntegerAttr(2));
    if (rows->firstPrompt)
      return L == S ? cur :
                      n.create<ConcatOp>(presentType, ValueRange{cur, zeros(L - S)},
                                         b.getI64IntegerAttr(2));
    Value pastFull = n.getInput(pastSlot);
    if (L > P)
      pastFull = n.create<ConcatOp>(presentType, ValueRange{pastFull, zeros(L - P)},
                                    b.getI64IntegerAttr(2));
    // The new tokens at positions offset..offset+S-1: broadcast for one token; for a chunk
    // (batch 1), new[clamp(j - offset, 0, S - 1)] by a gather along the sequence.
    Value j = iota(n, L, {1, 1, L, 1}), offset = n.createReshape(rows->offset, {B, 1, 1, 1});
    Value fresh = cur;
    if (S > 1) {
      Value js = iota(n, L, {L});
      Value start = n.createReshape(rows->offset, {1});
      Value rel = n.create<SubOp>(RankedTensorType::get({L}, i64), js, start);
      fresh = n.create<GatherOp>(presentType, cur, clampInts(n, rel, 0, S - 1),
                                 b.getI64IntegerAttr(2));
    }
    auto mask = RankedTensorType::get({B, 1, L, 1}, i1);
    Value before = n.create<LessOp>(mask, j, offset);
    Value end = n.create<AddOp>(offset.getType(), offset, n.createScalar(i64, double(S)));
    Value inNew = n.create<LessOp>(mask, j, end);
    Value tail = n.create<WhereOp>(presentType, inNew, fresh, n.createScalar(et, 0.0));
    return n.create<WhereOp>(presentType, before, pastFull, tail);
  };
  Value keys = present(kPastKey, k4), values = present(kPastValue, v4);
  n.setResult(1, keys);
  n.setResult(2, values);

  // 6. Attention of the S new queries over the present keys: the static form's causal frontier
  // is kiln.attention's bottom-right mask (query i sees keys j <= P + i); per row, an additive
  // mask [B, 1, S, L]: key j visible to query i iff j < keys[b], and with causal
  // j <= offset[b] + i, and with a local window W also j > offset[b] + i - W.
  double scale = attrs->scale != 0.0f ? double(attrs->scale) : 1.0 / std::sqrt(double(D));
  auto outType = RankedTensorType::get({B, Hq, S, D}, et);
  // local_window_size W keeps W keys: the composite's left window (keys before the query).
  int64_t leftWindow = localWindow > 0 ? localWindow - 1 : -1;
  Value bias;
  if (rows) {
    double inf = std::numeric_limits<double>::infinity();
    Value j = iota(n, L, {1, 1, L});
    Value pos = n.createReshape(positions, {B, S, 1});
    Value keys = n.createReshape(rows->keys, {B, 1, 1});
    Value allowed = broadcastBinary<LessOp>(n, j, keys, i1);
    if (attrs->causal) {
      Value seen = broadcastBinary<LessEqualOp>(n, j, pos, i1);
      allowed = broadcastBinary<AndOp>(n, allowed, seen, i1);
    }
    if (leftWindow >= 0) {
      Value first = n.create<SubOp>(pos.getType(), pos, n.createScalar(i64, double(leftWindow)));
      Value inWindow = broadcastBinary<GreaterEqualOp>(n, j, first, i1);
      allowed = broadcastBinary<AndOp>(n, allowed, inWindow, i1);
    }
    Value zero = n.createScalar(et, 0.0);
    Value minusInf = n.createScalar(et, -inf);
    Value additive = broadcastWhere(n, allowed, zero, minusInf);
    bias = n.createReshape(additive,
                           {B, 1, cast<RankedTensorType>(allowed.getType()).getDimSize(1), L});
  }
  Value y;
  if (attrs->softcap == 0.0f && (leftWindow < 0 || rows)) {
    y = n.create<AttentionOp>(outType, q4, keys, values, bias, b.getF64FloatAttr(scale),
                              b.getBoolAttr(attrs->causal && !rows),
                              /*zero_masked_rows=*/b.getBoolAttr(bool(rows)),
                              /*bshd_output=*/b.getBoolAttr(false));
  } else {
    AttentionParts parts{q4, keys, values, bias, scale, attrs->causal && !rows,
                         /*offset=*/P, rows ? -1 : leftWindow, /*rightWindow=*/-1,
                         /*nonpad=*/Value(), attrs->softcap, /*qkMode=*/0,
                         /*softmaxPrecision=*/0};
    FailureOr<std::pair<Value, Value>> r = buildCompositeAttention(n, parts);
    if (failed(r))
      return failure();
    y = r->first;
  }
  Value t = n.create<TransposeOp>(RankedTensorType::get({B, S, Hq, D}, et), y,
                                  b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  n.setResult(0, n.createReshape(t, {B, S, Hq * D}));
  return success();
}

} // namespace

/// Registers com.microsoft GroupQueryAttention with every attribute of
/// onnxruntime 1.30's schema (the unsupported ones are refused by value).
void onnx_import::registerGroupQueryAttention(OpRegistry &microsoftDomain) {
  microsoftDomain.add("GroupQueryAttention", importGroupQueryAttention,
                      {"num_heads", "kv_num_heads", "scale", "softcap", "local_window_size",
                       "causal", "do_rotary", "rotary_interleaved", "smooth_softmax", "qk_output",
                       "sliding_window_cache", "kv_cache_bit_width", "k_quant_type",
                       "v_quant_type", "qk_norm_epsilon"});
}
