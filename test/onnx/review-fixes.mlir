// Regressions from a review of the opset 7-24 importer (models: review_fixes() in
// gen_onnx_tests.py). Each bad node fails with an error naming it; none crashes.

// A rank-0 RotaryEmbedding input crashed (segfault reading dim 0).
// RUN: not kiln-compile %S/Inputs/error_rotary_rank0.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ROPE0
// ROPE0: error: node 'rope' (RotaryEmbedding, opset 23): input 'tensor<f32>' must be 3-D [B, S, H*D] or 4-D [B, H, S, D]

// RUN: not kiln-compile %S/Inputs/error_rotary_float_ids.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ROPE-IDS
// ROPE-IDS: error: node 'rope' (RotaryEmbedding, opset 23): position_ids 'tensor<1x3xf32>' must be an integer tensor

// training_mode is a bool: true is unsupported, false is inference (it was rejected as
// "must be an integer tensor" either way).
// RUN: not kiln-compile %S/Inputs/error_dropout_training.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DROP-TRAIN
// DROP-TRAIN: error: node 'drop' (Dropout, opset 13): unsupported: training_mode = true (kiln compiles inference)
// RUN: kiln-compile %S/Inputs/dropout_mask_types.onnx --emit=graph | FileCheck %s --check-prefix=DROP13
// DROP13: kiln.constant dense<true> : tensor<2x3xi1>
// DROP13: return %arg0, %{{.+}} : tensor<2x3xf32>, tensor<2x3xi1>

// Dropout-7's mask has the input's type (bool from Dropout-10).
// RUN: kiln-compile %S/Inputs/dropout7_mask.onnx --emit=graph | FileCheck %s --check-prefix=DROP7
// DROP7: kiln.constant dense<1.000000e+00> : tensor<2x3xf32>
// DROP7: return %arg0, %{{.+}} : tensor<2x3xf32>, tensor<2x3xf32>

// RUN: not kiln-compile %S/Inputs/error_clip6_operand.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=CLIP6
// CLIP6: error: node 'clip' (Clip, opset 7): expects 1 operands, got 2

// RUN: not kiln-compile %S/Inputs/error_split11_operand.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SPLIT11
// SPLIT11: error: node 'split' (Split, opset 11): takes split as an attribute before opset 13, not as an operand

// RUN: not kiln-compile %S/Inputs/error_split18_empty_chunk.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SPLIT18
// SPLIT18: error: node 'split' (Split, opset 18): cannot split dim 6 into 5 chunks of 2 with a smaller, non-empty last one

// RUN: not kiln-compile %S/Inputs/error_xor_float.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=XOR
// XOR: error: node 'xor' (Xor, opset 18): operand 0 must be a bool tensor, got 'tensor<2x3xf32>'

// RUN: not kiln-compile %S/Inputs/error_abs_bool.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ABS
// ABS: error: node 'abs' (Abs, opset 18): input must be numeric, got 'tensor<2xi1>'

// ReduceLogSumExp shifts by 0 where the maximum is infinite (a row of -inf gives -inf, not NaN).
// RUN: kiln-compile %S/Inputs/logsumexp_inf.onnx --emit=graph | FileCheck %s --check-prefix=LSE
// LSE: %[[M:.+]] = kiln.reshape %{{.+}} : tensor<2xf32> -> tensor<2x1xf32>
// LSE: %[[NEG:.+]] = kiln.neg %[[M]]
// LSE: %[[MAG:.+]] = kiln.max %[[M]], %[[NEG]]
// LSE: %[[INF:.+]] = kiln.constant dense<0x7F800000> : tensor<f32>
// LSE: %[[IS:.+]] = kiln.equal %[[MAG]], %[[INF]]
// LSE: %[[SAFE:.+]] = kiln.where %[[IS]], %{{.+}}, %[[M]]
// LSE: kiln.sub %arg0, %[[SAFE]]
// LSE: kiln.add %{{.+}}, %[[SAFE]]
