// com.microsoft GroupQueryAttention (onnxruntime-genai's attention with a KV cache) becomes
// kiln.attention over Concat(past, new) in BNSH, and the errors
// (compiler/onnx/OnnxGroupQueryAttention.cpp). 4 query and 2 KV heads; a prompt of 3 tokens
// without a past, a decode step and a 3-token chunk after a past of 4. Values (every model
// checked against onnxruntime's CPU kernel by gen_onnx_tests.py): check_import_numerics.py
// --contrib and small_models_test.py.

// RUN: kiln-compile %S/Inputs/gqa.onnx --emit=graph | FileCheck %s
// RUN: kiln-compile %S/Inputs/gqa_rotary.onnx --emit=graph | FileCheck %s --check-prefix=ROTARY
// RUN: kiln-compile %S/Inputs/gqa_softcap_window_packed.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=COMPOSITE

// The prompt (scale 0.3): heads split to [B, H, S, D], no past, present = the new keys/values.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[QP:[^:]+]]: tensor<2x3x32xf32> {kiln.name = "qp"}, %[[KP:[^:]+]]: tensor<2x3x16xf32> {kiln.name = "kp"}, %[[VP:[^:]+]]: tensor<2x3x16xf32> {kiln.name = "vp"}
// CHECK-SAME: %[[PKD:[^:]+]]: tensor<2x2x4x8xf32> {kiln.name = "pkd"}, %[[PVD:[^:]+]]: tensor<2x2x4x8xf32> {kiln.name = "pvd"}
// CHECK: %[[QR:.+]] = kiln.reshape %[[QP]] : tensor<2x3x32xf32> -> tensor<2x3x4x8xf32>
// CHECK: %[[Q:.+]] = kiln.transpose %[[QR]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x4x8xf32> -> tensor<2x4x3x8xf32>
// CHECK: %[[K:.+]] = kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x8xf32> -> tensor<2x2x3x8xf32>
// CHECK: %[[V:.+]] = kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x8xf32> -> tensor<2x2x3x8xf32>
// CHECK: %[[A:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {bshd_output = false, causal = true, scale = 0.30000001192092896 : f64, zero_masked_rows = false} : tensor<2x4x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32> -> tensor<2x4x3x8xf32>
// CHECK: %[[AT:.+]] = kiln.transpose %[[A]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
// CHECK: %[[Y:.+]] = kiln.reshape %[[AT]] : tensor<2x3x4x8xf32> -> tensor<2x3x32xf32>
// The decode step: present = Concat(past, new) along the sequence, 1 query over 5 keys, scale
// 1/sqrt(8) (kiln.attention's causal mask is bottom-right aligned: key j <= i + 4).
// CHECK: %[[KD:.+]] = kiln.transpose %{{.+}} : tensor<2x1x2x8xf32> -> tensor<2x2x1x8xf32>
// CHECK: %[[VD:.+]] = kiln.transpose %{{.+}} : tensor<2x1x2x8xf32> -> tensor<2x2x1x8xf32>
// CHECK: %[[PK:.+]] = kiln.concat %[[PKD]], %[[KD]] {axis = 2 : i64} : tensor<2x2x4x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x2x5x8xf32>
// CHECK: %[[PV:.+]] = kiln.concat %[[PVD]], %[[VD]] {axis = 2 : i64} : tensor<2x2x4x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x2x5x8xf32>
// CHECK: kiln.attention %{{.+}}, %[[PK]], %[[PV]] {bshd_output = false, causal = true, scale = 0.35355339059327373 : f64, zero_masked_rows = false} : tensor<2x4x1x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32> -> tensor<2x4x1x8xf32>
// The chunk: 3 queries over 7 keys; then the same with causal 0.
// CHECK: kiln.attention %{{.+}}, %{{.+}}, %{{.+}} {bshd_output = false, causal = true, {{.+}}} : tensor<1x4x3x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32> -> tensor<1x4x3x8xf32>
// CHECK: kiln.attention %{{.+}}, %{{.+}}, %{{.+}} {bshd_output = false, causal = false, {{.+}}} : tensor<1x4x3x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32> -> tensor<1x4x3x8xf32>
// CHECK: return %[[Y]], %[[K]], %[[V]], %{{.+}}, %[[PK]], %[[PV]],

// do_rotary: the cache rows of positions P..P+S-1 (folded: the caches are initializers),
// rotate-half as kiln.rotary on q and k before the concat, as RotaryEmbedding-23 gives.
// ROTARY-LABEL: func.func @main(
// ROTARY-SAME: %[[PKW:[^:]+]]: tensor<2x2x4x32xf32> {kiln.name = "pkw"}
// The prompt: rows 0..2.
// ROTARY: %[[QR:.+]] = kiln.rotary %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x3x32xf32>, tensor<1x1x3x32xf32>, tensor<1x1x3x32xf32> -> tensor<2x4x3x32xf32>
// ROTARY: %[[KR:.+]] = kiln.rotary %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x2x3x32xf32>, tensor<1x1x3x32xf32>, tensor<1x1x3x32xf32> -> tensor<2x2x3x32xf32>
// ROTARY: kiln.attention %[[QR]], %[[KR]], %{{.+}} {bshd_output = false, causal = true,
// The decode step: row 4; the rotated key goes into present_key.
// ROTARY: %[[QW:.+]] = kiln.rotary %{{.+}} : tensor<2x4x1x32xf32>, tensor<1x1x1x32xf32>, tensor<1x1x1x32xf32> -> tensor<2x4x1x32xf32>
// ROTARY: %[[KW:.+]] = kiln.rotary %{{.+}} : tensor<2x2x1x32xf32>, tensor<1x1x1x32xf32>, tensor<1x1x1x32xf32> -> tensor<2x2x1x32xf32>
// ROTARY: %[[PK:.+]] = kiln.concat %[[PKW]], %[[KW]] {axis = 2 : i64} : tensor<2x2x4x32xf32>, tensor<2x2x1x32xf32> -> tensor<2x2x5x32xf32>
// ROTARY: kiln.attention %[[QW]], %[[PK]], %{{.+}} {bshd_output = false, causal = true,
// The chunk: rows 4..6.
// ROTARY: kiln.rotary %{{.+}} : tensor<1x4x3x32xf32>, tensor<1x1x3x32xf32>, tensor<1x1x3x32xf32> -> tensor<1x4x3x32xf32>
// Interleaved: the pairs (x[2i], x[2i+1]) rotated elementwise, cos/sin [1, 1, 1, 16].
// ROTARY: kiln.reshape %{{.+}} : tensor<2x4x1x32xf32> -> tensor<2x4x1x16x2xf32>
// ROTARY: kiln.mul %{{.+}}, %{{.+}} : tensor<2x4x1x16xf32>, tensor<1x1x1x16xf32> -> tensor<2x4x1x16xf32>
// Partial (16 of 32): the first 16 columns rotated, the other 16 concatenated back.
// ROTARY: kiln.slice %{{.+}} {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x1x32xf32> -> tensor<2x4x1x16xf32>
// ROTARY: kiln.slice %{{.+}} {starts = array<i64: 0, 0, 0, 16>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x1x32xf32> -> tensor<2x4x1x16xf32>
// ROTARY: kiln.concat %{{.+}}, %{{.+}} {axis = 3 : i64} : tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32> -> tensor<2x4x1x32xf32>

// softcap and local windows: the composite attention (kiln.attention has neither).
// COMPOSITE-LABEL: func.func @main(
// COMPOSITE-SAME: %[[QKV:[^:]+]]: tensor<2x1x64xf32> {kiln.name = "qkv"}
// softcap 2: 2 * tanh(scores / 2) before the softmax.
// COMPOSITE: %[[S:.+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<2x4x1x8xf32>, tensor<2x4x8x5xf32> -> tensor<2x4x1x5xf32>
// COMPOSITE: %[[H:.+]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// COMPOSITE: %[[SH:.+]] = kiln.mul %[[S]], %[[H]]
// COMPOSITE: %[[T:.+]] = kiln.tanh %[[SH]] : tensor<2x4x1x5xf32>
// COMPOSITE: %[[TWO:.+]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// COMPOSITE: kiln.mul %[[T]], %[[TWO]]
// COMPOSITE: kiln.softmax
// local_window_size 2 on the prompt: each query sees itself and the key before it.
// COMPOSITE: %[[W:.+]] = kiln.constant dense<{{\[}}[0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000], [0xFF800000, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>
// COMPOSITE: kiln.add %{{.+}}, %[[W]] : tensor<2x4x3x3xf32>, tensor<3x3xf32> -> tensor<2x4x3x3xf32>
// local_window_size 3 on the chunk (queries at positions 4..6 over 7 keys).
// COMPOSITE: %[[W3:.+]] = kiln.constant dense<{{\[}}[0xFF800000, 0xFF800000, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0xFF800000, 0xFF800000, 0xFF800000, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000], [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x7xf32>
// COMPOSITE: kiln.add %{{.+}}, %[[W3]] : tensor<1x4x3x7xf32>, tensor<3x7xf32> -> tensor<1x4x3x7xf32>
// Packed QKV [2, 1, (4 + 2 * 2) * 8]: q, k and v are column slices.
// COMPOSITE: %[[PKS:.+]] = kiln.slice %[[QKV]] {starts = array<i64: 0, 0, 32>, steps = array<i64: 1, 1, 1>} : tensor<2x1x64xf32> -> tensor<2x1x16xf32>
// COMPOSITE: %[[PVS:.+]] = kiln.slice %[[QKV]] {starts = array<i64: 0, 0, 48>, steps = array<i64: 1, 1, 1>} : tensor<2x1x64xf32> -> tensor<2x1x16xf32>
// COMPOSITE: %[[PQS:.+]] = kiln.slice %[[QKV]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x1x64xf32> -> tensor<2x1x32xf32>
// COMPOSITE: kiln.attention %{{.+}}, %{{.+}}, %{{.+}} {bshd_output = false, causal = true, {{.+}}} : tensor<2x4x1x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32> -> tensor<2x4x1x8xf32>

// seqlens_k read at run time (onnxruntime-genai: Cast(ReduceSum(attention_mask) - 1)), rows of
// different lengths. Row b holds keys[b] = seqlens_k[b] + 1 tokens; a decode step's past is
// keys[b] - 1 long and its new token goes right after it; the causal frontier and the row end
// become an additive mask [B, 1, S, L] on kiln.attention (causal off, masked rows zero).
// RUN: kiln-compile %S/Inputs/gqa_runtime_lengths.onnx --emit=graph | FileCheck %s --check-prefix=RUNTIME
// RUNTIME-LABEL: func.func @main(
// RUNTIME-SAME: %[[PKRD:[^:]+]]: tensor<2x2x4x8xf32> {kiln.name = "pkrd"}
// RUNTIME-SAME: %[[MASK:[^:]+]]: tensor<2x5xi64> {kiln.name = "mask_rd"}
// RUNTIME: %[[SUM:.+]] = kiln.reduce <sum> %[[MASK]] {axes = array<i64: 1>, keep_dims = false} : tensor<2x5xi64> -> tensor<2xi64>
// RUNTIME: %[[LENS:.+]] = kiln.cast %{{.+}} : tensor<2xi32> -> tensor<2xi64>
// RUNTIME: %[[KEYS:.+]] = kiln.add %[[LENS]], %{{.+}} : tensor<2xi64>, tensor<i64> -> tensor<2xi64>
// RUNTIME: %[[OFF:.+]] = kiln.sub %[[KEYS]], %{{.+}} : tensor<2xi64>, tensor<i64> -> tensor<2xi64>
// The past buffer (4) padded to the present length T = 5; per row: past before the offset,
// the new key at it, zeros after.
// RUNTIME: %[[PAST:.+]] = kiln.concat %[[PKRD]], %{{.+}} {axis = 2 : i64} : tensor<2x2x4x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x2x5x8xf32>
// RUNTIME: %[[J:.+]] = kiln.constant dense<{{\[}}[{{\[}}[0], [1], [2], [3], [4]]]]> : tensor<1x1x5x1xi64>
// RUNTIME: %[[OFF4:.+]] = kiln.reshape %[[OFF]] : tensor<2xi64> -> tensor<2x1x1x1xi64>
// RUNTIME: %[[BEFORE:.+]] = kiln.less %[[J]], %[[OFF4]] : tensor<1x1x5x1xi64>, tensor<2x1x1x1xi64> -> tensor<2x1x5x1xi1>
// RUNTIME: %[[NEW:.+]] = kiln.where %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x1x5x1xi1>, tensor<2x2x1x8xf32>, tensor<f32> -> tensor<2x2x5x8xf32>
// RUNTIME: %[[PK:.+]] = kiln.where %[[BEFORE]], %[[PAST]], %[[NEW]] : tensor<2x1x5x1xi1>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32> -> tensor<2x2x5x8xf32>
// The mask: key j < keys[b] and j <= offset[b] + i.
// RUNTIME: %[[END:.+]] = kiln.less %{{.+}}, %{{.+}} : tensor<1x1x5xi64>, tensor<2x1x1xi64> -> tensor<2x1x5xi1>
// RUNTIME: %[[CAUSAL:.+]] = kiln.less_equal %{{.+}}, %{{.+}} : tensor<1x1x5xi64>, tensor<2x1x1xi64> -> tensor<2x1x5xi1>
// RUNTIME: %[[OK:.+]] = kiln.and %[[END]], %[[CAUSAL]]
// RUNTIME: %[[BIAS:.+]] = kiln.where %[[OK]], %{{.+}}, %{{.+}} : tensor<2x1x5xi1>, tensor<f32>, tensor<f32> -> tensor<2x1x5xf32>
// RUNTIME: %[[BIAS4:.+]] = kiln.reshape %[[BIAS]] : tensor<2x1x5xf32> -> tensor<2x1x1x5xf32>
// RUNTIME: kiln.attention %{{.+}}, %[[PK]], %{{.+}}, %[[BIAS4]] {bshd_output = false, causal = false, scale = 0.35355339059327373 : f64, zero_masked_rows = true} : tensor<2x4x1x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x1x1x5xf32> -> tensor<2x4x1x8xf32>
// A past buffer of 8 (shared past/present): present is 8 long.
// RUNTIME: kiln.attention {{.+}} : tensor<2x4x1x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x1x1x8xf32> -> tensor<2x4x1x8xf32>
// First prompts (right-padded): the new tokens at 0..2, without and with a buffer of 8.
// RUNTIME: kiln.attention {{.+}} : tensor<2x4x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x1x3x3xf32> -> tensor<2x4x3x8xf32>
// RUNTIME: kiln.attention {{.+}} : tensor<2x4x3x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x1x3x8xf32> -> tensor<2x4x3x8xf32>
// A batch-1 chunk of 3: new[clamp(j - offset, 0, 2)] gathered along the sequence.
// RUNTIME: %[[LO:.+]] = kiln.max %{{.+}}, %{{.+}} : tensor<6xi64>, tensor<i64> -> tensor<6xi64>
// RUNTIME: %[[IDX:.+]] = kiln.min %[[LO]], %{{.+}} : tensor<6xi64>, tensor<i64> -> tensor<6xi64>
// RUNTIME: kiln.gather %{{.+}}, %[[IDX]] {axis = 2 : i64} : tensor<1x2x3x8xf32>, tensor<6xi64> -> tensor<1x2x6x8xf32>
// RUNTIME: kiln.attention {{.+}} : tensor<1x4x3x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x3x6xf32> -> tensor<1x4x3x8xf32>
// Rotary on a decode step: the cos/sin rows of each row's position, clamped to the table.
// RUNTIME: kiln.gather %{{.+}}, %{{.+}} {axis = 0 : i64} : tensor<16x16xf32>, tensor<2x1xi64> -> tensor<2x1x16xf32>
// RUNTIME: kiln.rotary %{{.+}} : tensor<2x4x1x32xf32>, tensor<2x1x1x32xf32>, tensor<2x1x1x32xf32> -> tensor<2x4x1x32xf32>

// Errors: node 'gqa', a decode step (S = 1) after a past of 4 unless said.
// RUN: not kiln-compile %S/Inputs/error_gqa_total.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=TOTAL
// TOTAL: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): total_sequence_length 9 is more than the past (4) plus the sequence length (1); the past_key/past_value buffers are too short
// RUN: not kiln-compile %S/Inputs/error_gqa_total_short.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=TOTAL-SHORT
// TOTAL-SHORT: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): total_sequence_length 0 is less than the sequence length 1
// RUN: not kiln-compile %S/Inputs/error_gqa_seqlens_range.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SEQLENS-RANGE
// SEQLENS-RANGE: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): seqlens_k[1] = 100 is out of range [0, 5) (total_sequence_length 5)
// RUN: not kiln-compile %S/Inputs/error_gqa_zero_tokens.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ZERO-TOKENS
// ZERO-TOKENS: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): a step of 0 new tokens (query 'tensor<2x0x32xf32>'): with seqlens_k read at run time, GroupQueryAttention needs at least one new token
// RUN: not kiln-compile %S/Inputs/error_gqa_dynamic_total.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DYNAMIC-TOTAL
// DYNAMIC-TOTAL: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): unsupported: total_sequence_length is computed at run time; kiln needs it constant after shape specialization (onnxruntime-genai's models take it from the attention mask's shape)
// RUN: not kiln-compile %S/Inputs/error_gqa_chunk_batch.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=CHUNK-BATCH
// CHUNK-BATCH: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): with seqlens_k read at run time, a prompt chunk after a past (sequence length 3 < total_sequence_length 7) needs batch size 1, as in onnxruntime; got 2
// RUN: not kiln-compile %S/Inputs/error_gqa_seqlens_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SEQLENS-TYPE
// SEQLENS-TYPE: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): seqlens_k 'tensor<2xi64>' must be int32 [batch_size] = [2]
// RUN: not kiln-compile %S/Inputs/error_gqa_no_seqlens.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-SEQLENS
// NO-SEQLENS: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): seqlens_k (input 5) and total_sequence_length (input 6) are required
// RUN: not kiln-compile %S/Inputs/error_gqa_no_num_heads.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-HEADS
// NO-HEADS: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): attribute 'num_heads' is required
// RUN: not kiln-compile %S/Inputs/error_gqa_heads.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): num_heads 4 and kv_num_heads 3 must be positive, kv_num_heads dividing num_heads
// RUN: not kiln-compile %S/Inputs/error_gqa_window_not_causal.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=WINDOW-CAUSAL
// WINDOW-CAUSAL: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): local_window_size 2 needs causal 1
// RUN: not kiln-compile %S/Inputs/error_gqa_window_zero.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=WINDOW-ZERO
// WINDOW-ZERO: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): local_window_size must be -1 (none) or >= 1 (the query and the local_window_size - 1 keys before it), got 0
// RUN: not kiln-compile %S/Inputs/error_gqa_smooth_softmax.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SMOOTH
// SMOOTH: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): unsupported: smooth_softmax 1 (the softmax with an extra 1 in the denominator)
// RUN: not kiln-compile %S/Inputs/error_gqa_qk_output.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=QK-OUTPUT
// QK-OUTPUT: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): unsupported: qk_output 1 (the output_qk output)
// RUN: not kiln-compile %S/Inputs/error_gqa_quantized.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=QUANTIZED
// QUANTIZED: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): unsupported: a quantized KV cache (k_quant_type 'PER_TENSOR', v_quant_type 'NONE'); kiln imports 'NONE' only
// RUN: not kiln-compile %S/Inputs/error_gqa_position_ids.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=POSITION-IDS
// POSITION-IDS: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): unsupported: position_ids (input 9); kiln imports GroupQueryAttention without it
// RUN: not kiln-compile %S/Inputs/error_gqa_key_only.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=KEY-ONLY
// KEY-ONLY: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): key and value must be given together (or both left out for packed QKV in query)
// RUN: not kiln-compile %S/Inputs/error_gqa_query_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=QUERY-SHAPE
// QUERY-SHAPE: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): query 'tensor<2x1x18xf32>' must be [batch_size, sequence_length, num_heads * head_size] (num_heads 4, kv_num_heads 2)
// RUN: not kiln-compile %S/Inputs/error_gqa_past_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=PAST-SHAPE
// PAST-SHAPE: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): past_key 'tensor<2x4x4x8xf32>' and past_value 'tensor<2x4x4x8xf32>' must both be [batch_size, kv_num_heads, past_length, head_size] = [2, 2, P, 8] of the query's element type
// RUN: not kiln-compile %S/Inputs/error_gqa_no_cos.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-COS
// NO-COS: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): do_rotary 1 needs cos_cache and sin_cache
// RUN: not kiln-compile %S/Inputs/error_gqa_no_sin.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-SIN
// NO-SIN: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): do_rotary 1 needs cos_cache and sin_cache
// RUN: not kiln-compile %S/Inputs/error_gqa_cos_short.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=COS-SHORT
// COS-SHORT: error: node 'gqa' (com.microsoft::GroupQueryAttention, opset 1): cos_cache 'tensor<4x4xf32>' has 4 positions; 5 are needed (positions 0 to 4)
