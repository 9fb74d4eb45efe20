// Default-domain opsets 7 to 28: each op follows the version the model's
// opset selects (values against onnxruntime: test/e2e/small_models_test.py).
// RUN: kiln-compile %S/Inputs/opset7_ops.onnx --emit=graph | FileCheck %s --check-prefix=OPSET7
// RUN: kiln-compile %S/Inputs/opset12_ops.onnx --emit=graph | FileCheck %s --check-prefix=OPSET12
// RUN: kiln-compile %S/Inputs/opset24_ops.onnx --emit=graph | FileCheck %s --check-prefix=OPSET24
// RUN: kiln-compile %S/Inputs/rotary_embedding_4d.onnx --emit=graph | FileCheck %s --check-prefix=ROPE4
// RUN: kiln-compile %S/Inputs/rotary_embedding_3d.onnx --emit=graph | FileCheck %s --check-prefix=ROPE3
// RUN: kiln-compile %S/Inputs/derived_ops.onnx --emit=graph | FileCheck %s --check-prefix=DERIVED
// RUN: kiln-compile %S/Inputs/activations.onnx --emit=graph | FileCheck %s --check-prefix=ACT
// RUN: kiln-compile %S/Inputs/arg_reduce.onnx --emit=graph | FileCheck %s --check-prefix=ARG
// RUN: rm -rf %t && kiln-compile %S/Inputs/arg_reduce.onnx -o %t.kiln --dump-cuda %t > /dev/null
// RUN: cat %t/module*.cu | FileCheck %s --check-prefix=ARG-CUDA
// RUN: kiln-compile %S/Inputs/mod.onnx --emit=graph | FileCheck %s --check-prefix=MOD
// RUN: kiln-compile %S/Inputs/attention23.onnx --emit=graph | FileCheck %s --check-prefix=ATTN
// RUN: kiln-compile %S/Inputs/opset28_ops.onnx --emit=graph | FileCheck %s --check-prefix=OPSET28
// RUN: not kiln-compile %S/Inputs/error_opset29.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=OPSET29
// RUN: not kiln-compile %S/Inputs/error_mod_float_fmod0.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=MOD27
// RUN: not kiln-compile %S/Inputs/error_range_stash.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=STASH
// RUN: kiln-compile %S/Inputs/attention_window.onnx --emit=graph | FileCheck %s --check-prefix=WINDOW
// RUN: kiln-compile %S/Inputs/attention_softcap_causal.onnx --emit=graph | FileCheck %s --check-prefix=SOFTCAP
// RUN: kiln-compile %S/Inputs/attention_qk_modes.onnx --emit=graph | FileCheck %s --check-prefix=QKMODES
// RUN: kiln-compile %S/Inputs/attention_nonpad.onnx --emit=graph | FileCheck %s --check-prefix=NONPAD
// RUN: kiln-compile %S/Inputs/rotary_interleaved.onnx --emit=graph | FileCheck %s --check-prefix=ROPE-INTERLEAVED
// RUN: not kiln-compile %S/Inputs/error_op_version.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=VERSION

// Opset 7: Unsqueeze-1/Squeeze-1 (attribute axes), Slice-1 (attributes),
// Split-2 (attribute split), Clip-6 (attributes min/max) and Softmax-1, which
// normalizes over all dims from `axis` on (the input coerced to 2-D).
// OPSET7: kiln.reshape %arg0 : tensor<2x3x4xf32> -> tensor<1x2x3x4xf32>
// OPSET7-NEXT: kiln.reshape %{{.+}} : tensor<1x2x3x4xf32> -> tensor<2x3x4xf32>
// OPSET7-NEXT: kiln.slice %{{.+}} {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 1>} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
// OPSET7-NEXT: kiln.slice %{{.+}} {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x2xf32> -> tensor<2x1x2xf32>
// OPSET7-NEXT: kiln.slice %{{.+}} {starts = array<i64: 0, 1, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x3x2xf32> -> tensor<2x2x2xf32>
// OPSET7: kiln.constant dense<-5.000000e-01> : tensor<f32>
// OPSET7-NEXT: kiln.max
// OPSET7: kiln.constant dense<5.000000e-01> : tensor<f32>
// OPSET7-NEXT: kiln.min
// OPSET7: kiln.reshape %arg0 : tensor<2x3x4xf32> -> tensor<2x12xf32>
// OPSET7-NEXT: kiln.softmax %{{.+}} {axis = 1 : i64} : tensor<2x12xf32>
// OPSET7-NEXT: kiln.reshape %{{.+}} : tensor<2x12xf32> -> tensor<2x3x4xf32>

// Opset 12: Softmax-11 with axis -1 (here the same as 13's), negative
// attribute axes of Squeeze-11/Unsqueeze-11.
// OPSET12: kiln.softmax %{{.+}} {axis = 1 : i64} : tensor<6x4xf32>
// OPSET12: kiln.reshape %{{.+}} : tensor<2x3x4xf32> -> tensor<2x3x4x1xf32>
// OPSET12-NEXT: kiln.reshape %{{.+}} : tensor<2x3x4x1xf32> -> tensor<2x3x4xf32>

// Opset 24: RMSNormalization-23 is one kiln.rms_norm; Cast-24's saturate
// (float8 only) is accepted.
// OPSET24: kiln.rms_norm %arg0, %{{.+}} {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
// OPSET24-NEXT: kiln.cast %{{.+}} : tensor<2x3x4xf32> -> tensor<2x3x4xf16>

// Opset 28: Mod-28 with fmod 0 on floats is kiln.mod (the divisor's sign);
// Range-27 on float16 with stash_type 1 folds to a constant [1, 1.5, 2, 2.5, 3].
// OPSET28: kiln.mod %arg0, %{{.+}} : tensor<3x5xf32>, tensor<5xf32> -> tensor<3x5xf32>
// OPSET28: kiln.constant dense<[1.000000e+00, 1.500000e+00, 2.000000e+00, 2.500000e+00, 3.000000e+00]> : tensor<5xf32>
// OPSET29: error: ONNX model '{{.*}}error_opset29.onnx': unsupported: opset 29 of the default domain (kiln imports opsets 7 to 28)
// MOD27: error: node 'mod' (Mod, opset 27): fmod must be 1 for floating-point inputs before opset 28 (ONNX Mod)
// STASH: error: node 'range' (Range, opset 27): unsupported: stash_type = 0 (accumulating in float16)
// Attention that kiln.attention does not cover becomes the ONNX reference's ops
// (values: the ONNX node tests, test/e2e/onnx_node_tests.py). A sliding window of
// 1 to the left: a constant bias, -inf outside the band; no row is fully masked,
// so no guard.
// WINDOW-NOT: kiln.attention
// WINDOW: kiln.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00], [0xFF800000, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>
// WINDOW: kiln.softmax
// WINDOW-NOT: kiln.where
// Softcap: 2 tanh(s / 2) before the causal bias (top-left: Sq 3, Sk 5); qk_matmul_output
// mode 3 is the probabilities (no row is fully masked: no guard).
// SOFTCAP-NOT: kiln.attention
// SOFTCAP: kiln.tanh
// SOFTCAP: %[[P:.+]] = kiln.softmax
// SOFTCAP-NOT: kiln.where
// SOFTCAP: return %{{.+}}, %[[P]]

// qk_matmul_output as the spec's function body defines it, with softcap 1.5 and
// an additive mask: mode 0 is the scaled Q K^T before softcap (the ONNX
// reference evaluator softcaps it; onnxruntime does not), mode 1 the
// softcapped scores, mode 2 those plus the mask, mode 3 the probabilities.
// QKMODES-LABEL: func.func @main
// QKMODES: %[[M0:.+]] = kiln.matmul
// QKMODES: kiln.tanh
// QKMODES: %[[Y0:.+]] = kiln.matmul %{{.+}}, %arg2
// QKMODES: kiln.matmul
// QKMODES: %[[T1:.+]] = kiln.tanh
// QKMODES-NEXT: %[[CAP:.+]] = kiln.constant dense<1.500000e+00>
// QKMODES-NEXT: %[[C1:.+]] = kiln.mul %[[T1]], %[[CAP]]
// QKMODES: kiln.tanh
// QKMODES: %[[A2:.+]] = kiln.add %{{.+}}, %arg3
// QKMODES: kiln.tanh
// QKMODES: kiln.softmax
// QKMODES: %[[P3:.+]] = kiln.where
// QKMODES: return %[[Y0]], %[[M0]], %[[C1]], %[[A2]], %[[P3]] :
// nonpad_kv_seqlen: per-batch causal frontier and key padding from the run-time lengths;
// GQA repeats each KV head (expand over a unit dim).
// NONPAD: kiln.expand %{{.+}} : tensor<2x2x1x6x8xf32> -> tensor<2x2x2x6x8xf32>
// NONPAD: kiln.greater_equal %{{.+}}, %{{.+}} : tensor<2x1x1xi64>, tensor<1x6xi64> -> tensor<2x1x6xi1>
// NONPAD: kiln.less %{{.+}}, %{{.+}} : tensor<1x6xi64>, tensor<2x1xi64> -> tensor<2x6xi1>
// Interleaved RotaryEmbedding: pairs (x[2i], x[2i+1]) as elementwise ops.
// ROPE-INTERLEAVED-NOT: kiln.rotary
// ROPE-INTERLEAVED: kiln.slice %{{.+}} {starts = array<i64: 0, 0, 0, 0, 1>, steps = array<i64: 1, 1, 1, 1, 1>} : tensor<1x2x3x4x2xf32> -> tensor<1x2x3x4x1xf32>
// ROPE-INTERLEAVED: kiln.concat %{{.+}}, %{{.+}} {axis = 4 : i64} : tensor<1x2x3x4x1xf32>, tensor<1x2x3x4x1xf32> -> tensor<1x2x3x4x2xf32>
// VERSION: error: node 'where' (Where, opset 8): unsupported: Where is not in opset 8 of the default domain (it first appears in opset 9)

// RotaryEmbedding-23 becomes kiln.rotary (rotate-half) with cos/sin gathered by
// the position ids and doubled to the rotated width, broadcast over the heads.
// ROPE4: %[[C:.+]] = kiln.gather %{{.+}}, %arg1 {axis = 0 : i64} : tensor<16x4xf32>, tensor<2x5xi64> -> tensor<2x5x4xf32>
// ROPE4: kiln.concat %[[C]], %[[C]] {axis = 2 : i64} : tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<2x5x8xf32>
// ROPE4: kiln.rotary %arg0, %{{.+}}, %{{.+}} : tensor<2x3x5x8xf32>, tensor<2x1x5x8xf32>, tensor<2x1x5x8xf32> -> tensor<2x3x5x8xf32>
// A 3-D input is split into heads; only the first rotary_embedding_dim (4)
// columns of each head rotate, the rest pass through.
// ROPE3: kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x5x3x8xf32> -> tensor<2x3x5x8xf32>
// ROPE3: kiln.rotary %{{.+}} : tensor<2x3x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32> -> tensor<2x3x5x4xf32>
// ROPE3-NEXT: kiln.concat %{{.+}}, %{{.+}} {axis = 3 : i64} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32> -> tensor<2x3x5x8xf32>

// Ops spelled with other kiln ops: Abs = max(x, -x); ReduceMin = -max(-x);
// LogSoftmax = (x - m) - log(sum(exp(x - m))); Dropout (inference) is the
// identity with an all-true mask; CastLike casts to its second operand's type.
// DERIVED: %[[N:.+]] = kiln.neg %arg0 : tensor<3x4x5xf32>
// DERIVED-NEXT: kiln.max %arg0, %[[N]]
// DERIVED: kiln.cast %arg0 : tensor<3x4x5xf32> -> tensor<3x4x5xi64>
// DERIVED: kiln.reduce <max> %{{.+}} {axes = array<i64: 1>, keep_dims = true} : tensor<3x4x5xf32> -> tensor<3x1x5xf32>
// DERIVED: kiln.log
// DERIVED-NOT: unsupported

// Activations from their ONNX formulas; the selects test x < 0 (false for
// NaN, which then passes through). LeakyRelu(alpha 0.1):
// ACT: %[[NEG:.+]] = kiln.less %arg0, %{{.+}} : tensor<3x4x5xf32>, tensor<f32> -> tensor<3x4x5xi1>
// ACT: kiln.where %[[NEG]], %{{.+}}, %arg0 : tensor<3x4x5xi1>, tensor<3x4x5xf32>, tensor<3x4x5xf32> -> tensor<3x4x5xf32>

// ArgMax/ArgMin are kiln.arg_reduce (i64); ReduceMin is kiln.reduce <min>.
// ARG: kiln.arg_reduce <max> %arg0 {axis = 1 : i64, keep_dims = false, select_last_index = false} : tensor<3x4x5xf32> -> tensor<3x5xi64>
// ARG: kiln.arg_reduce <min> %arg0 {axis = 2 : i64, keep_dims = true, select_last_index = true} : tensor<3x4x5xf32> -> tensor<3x4x1xi64>
// ARG: kiln.reduce <min> %arg0 {axes = array<i64: 2>, keep_dims = false} : tensor<3x4x5xf32> -> tensor<3x4xf32>
// A NaN wins (numpy); select_last_index lets ties move to the later index.
// ARG-CUDA-DAG: if ((best == best) && (v != v || v > best)) {
// ARG-CUDA-DAG: if ((best == best) && (v != v || v <= best)) {
// ARG-CUDA-DAG: kiln::warpMin(acc)

// Mod: fmod = 0 is kiln.mod (the divisor's sign), fmod = 1 kiln.fmod (C).
// MOD: kiln.mod %{{.+}}, %{{.+}} : tensor<3x5xi64>, tensor<5xi64> -> tensor<3x5xi64>
// MOD: kiln.fmod %{{.+}}, %{{.+}} : tensor<3x5xi64>, tensor<5xi64> -> tensor<3x5xi64>
// MOD: kiln.fmod %arg0, %{{.+}} : tensor<3x5xf32>, tensor<5xf32> -> tensor<3x5xf32>

// Attention-23 is kiln.attention: past key/value concatenated in front along the
// sequence (also the present outputs), a bool mask turned additive (0 / -inf;
// folded here, the mask is a constant),
// GQA kept; a 3-D input split into heads, causal with Sq == Sk. A fully masked
// row gives 0 (zero_masked_rows), as in the ONNX reference implementation.
// ATTN: %[[K:.+]] = kiln.concat %arg3, %arg1 {axis = 2 : i64} : tensor<2x2x2x8xf32>, tensor<2x2x3x8xf32> -> tensor<2x2x5x8xf32>
// ATTN: kiln.attention %arg0, %[[K]], %{{.+}}, %{{.+}} {bshd_output = false, causal = false, scale = 0.35355339059327373 : f64, zero_masked_rows = true} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<1x1x3x5xf32> -> tensor<2x4x3x8xf32>
// ATTN: kiln.attention %{{.+}}, %{{.+}}, %{{.+}} {bshd_output = false, causal = true, scale = 0.30000001192092896 : f64, zero_masked_rows = true} : tensor<2x2x4x8xf32>
