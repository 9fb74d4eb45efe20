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
//   3. seqlens_k and total_sequence_length must be constants describing full
//      rows (every batch row holds P + S tokens): padded batches, where rows
//      differ, are refused, so no per-row masking is needed;
//   4. heads split to [B, H, S, D], rotary embedding (buildRotary, the IR
//      RotaryEmbedding-23 gives) on q and k;
//   5. present = Concat(past, k/v) along the sequence;
//   6. one kiln.attention (causal bottom-right: query i sees keys j <= i + P)
//      or, with softcap or a window, buildCompositeAttention (the ONNX
//      Attention-25 importer's form), then the heads merged back.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxOpImport.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

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

/// Step 3: seqlens_k int32 [B] and total_sequence_length int32 (a scalar or
/// [1]), constants equal to P + S - 1 per row and P + S. Anything else is a
/// padded batch (rows of different lengths) or a past buffer longer than the
/// past (a shared past/present buffer), which kiln does not import yet.
LogicalResult checkFullRows(NodeImporter &n, int64_t batch, int64_t past, int64_t seq) {
  RankedTensorType st = n.getInputType(kSeqlensK), tt = n.getInputType(kTotalSequenceLength);
  if (!st.getElementType().isInteger(32) || st.getShape() != ArrayRef<int64_t>{batch})
    return n.emitError() << "seqlens_k " << st << " must be int32 [batch_size] = [" << batch << "]";
  if (!tt.getElementType().isInteger(32) || tt.getNumElements() != 1 || tt.getRank() > 1)
    return n.emitError() << "total_sequence_length " << tt << " must be an int32 scalar";
  if (!matchPattern(n.getInput(kSeqlensK), m_Constant()))
    return n.emitUnsupported(
        "seqlens_k is computed at run time; kiln needs it constant after shape specialization "
        "(every batch row full: past + new tokens), padded batches are not supported yet");
  FailureOr<SmallVector<int64_t>> seqlens = n.getConstantInts(kSeqlensK, "seqlens_k");
  if (failed(seqlens))
    return failure();
  FailureOr<SmallVector<int64_t>> total =
      n.getConstantInts(kTotalSequenceLength, "total_sequence_length");
  if (failed(total))
    return failure();
  int64_t full = past + seq;
  bool fullRows = (*total)[0] == full &&
                  llvm::all_of(*seqlens, [&](int64_t len) { return len == full - 1; });
  if (fullRows)
    return success();
  auto diag = n.emitError();
  diag << "unsupported: seqlens_k [";
  llvm::interleaveComma(*seqlens, diag);
  diag << "] and total_sequence_length " << (*total)[0]
       << " must describe full rows: seqlens_k[b] = past length " << past << " + sequence length "
       << seq << " - 1 = " << full - 1 << " for every batch row and total_sequence_length "
       << full << "; padded batches (and past buffers longer than the past) are not supported yet";
  return failure();
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
/// at rows past..past+seq-1, as [1, seq, R/2]; checks its type against the
/// query's and that the rows exist.
FailureOr<Value> getRotaryRows(NodeImporter &n, unsigned which, RankedTensorType queryType,
                               int64_t headSize, int64_t past, int64_t seq) {
  StringRef what = which == kCosCache ? "cos_cache" : "sin_cache";
  if (!n.hasInput(which))
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
  if (t.getDimSize(0) < past + seq)
    return n.emitError() << what << " " << t << " has " << t.getDimSize(0)
                         << " positions; positions " << past << " to " << past + seq - 1
                         << " are needed";
  Builder &b = n.getBuilder();
  Value rows = n.create<SliceOp>(t.clone({seq, t.getDimSize(1)}), n.getInput(which),
                                 b.getDenseI64ArrayAttr({past, 0}), b.getDenseI64ArrayAttr({1, 1}));
  return n.createReshape(rows, {1, seq, t.getDimSize(1)});
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

  // 3. Every row holds P + S tokens.
  if (failed(checkFullRows(n, B, P, S)))
    return failure();

  // 4. Heads, then the rotary embedding at positions P..P+S-1.
  Value q4 = splitHeads(n, q, Hq), k4 = splitHeads(n, k, Hkv), v4 = splitHeads(n, v, Hkv);
  if (attrs->doRotary) {
    FailureOr<Value> cos = getRotaryRows(n, kCosCache, qt, D, P, S);
    if (failed(cos))
      return failure();
    FailureOr<Value> sin = getRotaryRows(n, kSinCache, qt, D, P, S);
    if (failed(sin))
      return failure();
    q4 = buildRotary(n, q4, *cos, *sin, attrs->interleaved);
    k4 = buildRotary(n, k4, *cos, *sin, attrs->interleaved);
  }

  // 5. present = Concat(past, new) along the sequence.
  Builder &b = n.getBuilder();
  auto present = [&](unsigned pastSlot, Value cur) -> Value {
    if (P == 0)
      return cur;
    return n.create<ConcatOp>(RankedTensorType::get({B, Hkv, P + S, D}, et),
                              ValueRange{n.getInput(pastSlot), cur}, b.getI64IntegerAttr(2));
  };
  Value keys = present(kPastKey, k4), values = present(kPastValue, v4);
  n.setResult(1, keys);
  n.setResult(2, values);

  // 6. Attention of the S new queries (positions P..P+S-1) over P + S keys.
  double scale = attrs->scale != 0.0f ? double(attrs->scale) : 1.0 / std::sqrt(double(D));
  auto outType = RankedTensorType::get({B, Hq, S, D}, et);
  Value y;
  // local_window_size W keeps W keys: the composite's left window (keys before the query).
  int64_t leftWindow = attrs->localWindow > 0 ? attrs->localWindow - 1 : -1;
  if (attrs->softcap == 0.0f && leftWindow < 0) {
    // kiln.attention's causal mask is bottom-right aligned: key j <= i + P.
    y = n.create<AttentionOp>(outType, q4, keys, values, Value(), b.getF64FloatAttr(scale),
                              b.getBoolAttr(attrs->causal),
                              /*zero_masked_rows=*/b.getBoolAttr(false),
                              /*bshd_output=*/b.getBoolAttr(false));
  } else {
    AttentionParts parts{q4, keys, values, /*mask=*/Value(), scale, attrs->causal,
                         /*offset=*/P, leftWindow, /*rightWindow=*/-1,
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
