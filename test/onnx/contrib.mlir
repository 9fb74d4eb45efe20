// onnxruntime contrib ops: com.microsoft SkipLayerNormalization,
// SkipSimplifiedLayerNormalization, FastGelu, BiasGelu and SimplifiedLayerNormalization
// (default domain and com.microsoft), and the errors for the others
// (compiler/onnx/OnnxContrib.cpp, OnnxImporter.cpp). Values: small_models_test.py and
// check_import_numerics.py --contrib.

// RUN: kiln-compile %S/Inputs/contrib_skip_layer_norm.onnx --emit=graph | FileCheck %s --check-prefix=SLN
// RUN: kiln-compile %S/Inputs/contrib_skip_simplified_layer_norm.onnx --emit=graph | FileCheck %s --check-prefix=SSLN
// RUN: kiln-compile %S/Inputs/contrib_simplified_layer_norm.onnx --emit=graph | FileCheck %s --check-prefix=RMS
// RUN: kiln-compile %S/Inputs/contrib_simplified_layer_norm_ms.onnx --emit=graph | FileCheck %s --check-prefix=RMS-MS
// RUN: kiln-compile %S/Inputs/contrib_gelu.onnx --emit=graph | FileCheck %s --check-prefix=GELU

// Each norm is still one fused norm kernel after the pipeline.
// RUN: kiln-compile %S/Inputs/contrib_skip_layer_norm.onnx --emit=kernels | FileCheck %s --check-prefix=SLN-KERNELS
// RUN: kiln-compile %S/Inputs/contrib_skip_simplified_layer_norm.onnx --emit=kernels | FileCheck %s --check-prefix=SSLN-KERNELS

// All inputs and outputs: (x + s) + bias, one kiln.layer_norm with gamma and beta, Mean and
// InvStdDev from reductions in f32, the sum as output 3.
// SLN-LABEL: func.func @main(
// SLN-SAME: %[[X:[^:]+]]: tensor<2x3x8xf32> {kiln.name = "x"}, %[[S:[^:]+]]: tensor<2x3x8xf32> {kiln.name = "s"}, %[[S2:[^:]+]]: tensor<3x8xf32> {kiln.name = "s2"})
// SLN-SAME: tensor<2x3x1xf32> {kiln.name = "mean"}, tensor<2x3x1xf32> {kiln.name = "inv_std_var"}
// SLN-DAG: %[[GAMMA:.+]] = kiln.constant dense<[0.034192767, {{.*}}]> : tensor<8xf32>
// SLN-DAG: %[[BETA:.+]] = kiln.constant dense<[0.746885597, {{.*}}]> : tensor<8xf32>
// SLN-DAG: %[[BIAS:.+]] = kiln.constant dense<[0.824513554, {{.*}}]> : tensor<8xf32>
// SLN: %[[XS:.+]] = kiln.add %[[X]], %[[S]] : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
// SLN: %[[SUM:.+]] = kiln.add %[[XS]], %[[BIAS]] : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// SLN: %[[MEAN:.+]] = kiln.reduce <mean> %[[SUM]] {axes = array<i64: 2>, keep_dims = true} : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
// SLN: %[[D:.+]] = kiln.sub %[[SUM]], %[[MEAN]]
// SLN: %[[D2:.+]] = kiln.mul %[[D]], %[[D]]
// SLN: %[[VAR:.+]] = kiln.reduce <mean> %[[D2]]
// SLN: %[[EPS:.+]] = kiln.constant dense<9.99999974E-6> : tensor<f32>
// SLN: %[[VE:.+]] = kiln.add %[[VAR]], %[[EPS]]
// SLN: %[[SQ:.+]] = kiln.sqrt %[[VE]]
// SLN: %[[ISV:.+]] = kiln.reciprocal %[[SQ]] : tensor<2x3x1xf32>
// SLN: %[[Y:.+]] = kiln.layer_norm %[[SUM]], %[[GAMMA]], %[[BETA]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// A [S, H] skip broadcasts; no beta and bias; the default epsilon is 1e-12.
// SLN: %[[XS2:.+]] = kiln.add %[[X]], %[[S2]] : tensor<2x3x8xf32>, tensor<3x8xf32> -> tensor<2x3x8xf32>
// SLN: %[[Y2:.+]] = kiln.layer_norm %[[XS2]], %[[GAMMA]] {axis = 2 : i64, epsilon = 9.99999996E-13 : f32} : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// Beta without bias: the sum output is input + skip.
// SLN: %[[XS3:.+]] = kiln.add %[[X]], %[[S]]
// SLN: %[[Y3:.+]] = kiln.layer_norm %[[XS3]], %[[GAMMA]], %[[BETA]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// SLN: return %[[Y]], %[[MEAN]], %[[ISV]], %[[SUM]], %[[Y2]], %[[Y3]], %[[XS3]] :

// SLN-KERNELS-COUNT-3: kiln.kernel @k{{[0-9]+}}_layer_norm(

// RMS form: one kiln.rms_norm of the sum; inv_std_var = 1/sqrt(mean(sum^2) + eps) in f32.
// SSLN-LABEL: func.func @main(
// SSLN-SAME: %[[X:[^:]+]]: tensor<2x3x8xf32> {kiln.name = "x"}, %[[S:[^:]+]]: tensor<2x3x8xf32> {kiln.name = "s"})
// SSLN-DAG: %[[GAMMA:.+]] = kiln.constant dense<[-1.92034054, {{.*}}]> : tensor<8xf32>
// SSLN-DAG: %[[BIAS:.+]] = kiln.constant dense<[-7.435960e-01, {{.*}}]> : tensor<8xf32>
// SSLN: %[[XS:.+]] = kiln.add %[[X]], %[[S]]
// SSLN: %[[SUM:.+]] = kiln.add %[[XS]], %[[BIAS]] : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// SSLN: %[[SQ:.+]] = kiln.mul %[[SUM]], %[[SUM]]
// SSLN: %[[MS:.+]] = kiln.reduce <mean> %[[SQ]] {axes = array<i64: 2>, keep_dims = true} : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
// SSLN: kiln.add %[[MS]]
// SSLN: kiln.sqrt
// SSLN: %[[ISV:.+]] = kiln.reciprocal
// SSLN: %[[Y:.+]] = kiln.rms_norm %[[SUM]], %[[GAMMA]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// SSLN: %[[XS2:.+]] = kiln.add %[[X]], %[[S]]
// SSLN: %[[Y2:.+]] = kiln.rms_norm %[[XS2]], %[[GAMMA]] {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
// SSLN: return %[[Y]], %[[ISV]], %[[SUM]], %[[Y2]] :

// SSLN-KERNELS-COUNT-2: kiln.kernel @k{{[0-9]+}}_rms_norm(

// SimplifiedLayerNormalization (default domain): the last axis, and axis 1 with a [3, 8] scale
// and inv_std_var [2, 1, 1].
// RMS-LABEL: func.func @main(
// RMS-SAME: %[[X:[^:]+]]: tensor<2x3x8xf32>
// RMS-SAME: tensor<2x1x1xf32> {kiln.name = "inv_std_var2"}
// RMS: %[[ISV:.+]] = kiln.reciprocal %{{.+}} : tensor<2x3x1xf32>
// RMS: %[[Y:.+]] = kiln.rms_norm %[[X]], %{{.+}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// RMS: kiln.reduce <mean> %{{.+}} {axes = array<i64: 1, 2>, keep_dims = true} : tensor<2x3x8xf32> -> tensor<2x1x1xf32>
// RMS: %[[ISV2:.+]] = kiln.reciprocal %{{.+}} : tensor<2x1x1xf32>
// RMS: %[[Y2:.+]] = kiln.rms_norm %[[X]], %{{.+}} {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x3x8xf32>, tensor<3x8xf32> -> tensor<2x3x8xf32>
// RMS: return %[[Y]], %[[ISV]], %[[Y2]], %[[ISV2]] :

// RMS-MS-LABEL: func.func @main(
// RMS-MS: kiln.rms_norm %arg0, %{{.+}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}

// FastGelu without and with bias (tanh form), BiasGelu (erf form) of x + bias.
// GELU-LABEL: func.func @main(
// GELU-SAME: %[[X:[^:]+]]: tensor<2x3x8xf32>
// GELU: %[[T:.+]] = kiln.tanh
// GELU: %[[P:.+]] = kiln.add %[[T]], %{{.+}} : tensor<2x3x8xf32>, tensor<f32>
// GELU: %[[F:.+]] = kiln.mul %{{.+}}, %[[P]] : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
// GELU: %[[BIAS:.+]] = kiln.constant dense<[-1.00666499, {{.*}}]> : tensor<8xf32>
// GELU: %[[XB:.+]] = kiln.add %[[X]], %[[BIAS]] : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// GELU: kiln.mul %[[XB]], %[[XB]]
// GELU: kiln.constant dense<0.797884583> : tensor<f32>
// GELU: %[[TB:.+]] = kiln.tanh
// GELU: %[[PB:.+]] = kiln.add %[[TB]], %{{.+}} : tensor<2x3x8xf32>, tensor<f32>
// GELU: %[[FB:.+]] = kiln.mul %{{.+}}, %[[PB]] :
// GELU: %[[XB2:.+]] = kiln.add %[[X]], %[[BIAS]]
// GELU: %[[C:.+]] = kiln.constant dense<0.707106769> : tensor<f32>
// GELU: kiln.mul %[[XB2]], %[[C]]
// GELU-NOT: kiln.tanh
// GELU: %[[E:.+]] = kiln.erf
// GELU: %[[PE:.+]] = kiln.add %[[E]], %{{.+}} : tensor<2x3x8xf32>, tensor<f32>
// GELU: %[[BG:.+]] = kiln.mul %{{.+}}, %[[PE]] :
// GELU: return %[[F]], %[[FB]], %[[BG]] :

// Errors. The fused attention ops (but GroupQueryAttention, group-query-attention.mlir) get the hint to export the standard form; any other
// com.microsoft op (or other domain) is an unsupported operator named with its domain.
// RUN: not kiln-compile %S/Inputs/error_contrib_op.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ATTN
// ATTN: error: node 'Attention_3' (com.microsoft::Attention, opset 1): unsupported operator 'com.microsoft.Attention': kiln does not import onnxruntime's fused attention contrib ops; export the model without the onnxruntime transformer optimizer (the standard ONNX MatMul/Softmax or Attention-23 form, which kiln fuses itself)
// RUN: not kiln-compile %S/Inputs/error_contrib_multiheadattention.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=MHA
// MHA: error: node 'attn' (com.microsoft::MultiHeadAttention, opset 1): unsupported operator 'com.microsoft.MultiHeadAttention': kiln does not import onnxruntime's fused attention contrib ops; export the model without the onnxruntime transformer optimizer
// RUN: not kiln-compile %S/Inputs/error_contrib_unknown.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: node 'qg' (com.microsoft::QuickGelu, opset 1): unsupported operator 'com.microsoft.QuickGelu'{{$}}
// RUN: not kiln-compile %S/Inputs/error_contrib_other_domain.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: error: node 'foo' (com.example::Foo, opset 1): unsupported operator 'com.example.Foo'{{$}}
// RUN: not kiln-compile %S/Inputs/error_contrib_version.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: error: node 'fg' (com.microsoft::FastGelu, opset 2): unsupported: version 2 of the com.microsoft domain (kiln imports version 1)
// RUN: not kiln-compile %S/Inputs/error_contrib_no_import.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-IMPORT
// NO-IMPORT: error: node 'fg' (com.microsoft::FastGelu, opset 0): the model does not import the com.microsoft domain (opset_import has no entry for it)
// RUN: not kiln-compile %S/Inputs/error_contrib_attribute.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ATTR
// ATTR: error: node 'fg' (com.microsoft::FastGelu, opset 1): unsupported: attribute 'alpha'

// RUN: not kiln-compile %S/Inputs/error_skip_simplified_mean.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SSLN-MEAN
// SSLN-MEAN: error: node 'ssln' (com.microsoft::SkipSimplifiedLayerNormalization, opset 1): unsupported: output 1 (mean) is used; the RMS form computes no mean (onnxruntime writes zeros there)
// RUN: not kiln-compile %S/Inputs/error_skip_layer_norm_skip_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SKIP-SHAPE
// SKIP-SHAPE: error: node 'sln' (com.microsoft::SkipLayerNormalization, opset 1): skip 'tensor<2x2x3x8xf32>' does not broadcast to the input 'tensor<2x3x8xf32>'
// RUN: not kiln-compile %S/Inputs/error_skip_layer_norm_gamma_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=GAMMA-TYPE
// GAMMA-TYPE: error: node 'sln' (com.microsoft::SkipLayerNormalization, opset 1): gamma 'tensor<8xf16>' must have the element type of the input 'tensor<2x3x8xf32>'
// RUN: not kiln-compile %S/Inputs/error_skip_layer_norm_bias_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=BIAS-SHAPE
// BIAS-SHAPE: error: node 'sln' (com.microsoft::SkipLayerNormalization, opset 1): bias 'tensor<3xf32>' does not broadcast to the normalized shape [8]
// RUN: not kiln-compile %S/Inputs/error_skip_layer_norm_operands.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SLN-OPERANDS
// SLN-OPERANDS: error: node 'sln' (com.microsoft::SkipLayerNormalization, opset 1): expects 3 to 5 operands, got 2
// RUN: not kiln-compile %S/Inputs/error_bias_gelu_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=BG-SHAPE
// BG-SHAPE: error: node 'bg' (com.microsoft::BiasGelu, opset 1): bias 'tensor<4xf32>' does not broadcast to the input 'tensor<2x3x8xf32>'
// RUN: not kiln-compile %S/Inputs/error_bias_gelu_no_bias.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=BG-OPERANDS
// BG-OPERANDS: error: node 'bg' (com.microsoft::BiasGelu, opset 1): expects 2 operands, got 1
// RUN: not kiln-compile %S/Inputs/error_fast_gelu_int.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=FG-INT
// FG-INT: error: node 'fg' (com.microsoft::FastGelu, opset 1): unsupported: input of type 'tensor<2x3xi64>' (a floating-point tensor is required)
// RUN: not kiln-compile %S/Inputs/error_simplified_stash_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=RMS-STASH
// RMS-STASH: error: node 'rms' (SimplifiedLayerNormalization, opset 18): unsupported: stash_type 10 (kiln computes statistics in FLOAT)
