// com.microsoft MatMulNBits: the block-quantized weight is dequantized at import into a
// constant W [K, N] of A's element type and the node becomes a kiln.matmul (+ kiln.add of the
// bias), and the errors (compiler/onnx/OnnxMatMulNBits.cpp). K = 80 with block_size 32: the
// last block is partial. Values: check_import_numerics.py --contrib and small_models_test.py.

// RUN: kiln-compile %S/Inputs/matmul_nbits.onnx --emit=graph --print-constants | FileCheck %s
// RUN: kiln-compile %S/Inputs/matmul_nbits.onnx --emit=graph | FileCheck %s --check-prefix=NO-CODES
// RUN: kiln-compile %S/Inputs/matmul_nbits_fp16.onnx --emit=graph --print-constants | FileCheck %s --check-prefix=FP16
// RUN: kiln-compile %S/Inputs/matmul_nbits_fp16.onnx --emit=kernels | FileCheck %s --check-prefix=FP16-KERNELS

// The first weights W[0, 0..3] are gen_onnx_tests.py's nbits_dequantize (checked against
// onnxruntime there): 4-bit with packed uint8 zero points (0.10106839, -0.16530423), 4-bit
// with the default zero point 8 (-0.10178681, -0.04521804), 8-bit with block_size 16
// (-0.11972526, 0.06650264), 2-bit with float zero points and block_size 64 (-0.05277408,
// -0.08601395) on a 1-D A, which is [1, K] for the kiln.matmul.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x80xf32> {kiln.name = "a"}, %[[A2:[^:]+]]: tensor<5x80xf32> {kiln.name = "a2"}, %[[A3:[^:]+]]: tensor<80xf32> {kiln.name = "a3"})
// CHECK: %[[W4:.+]] = kiln.constant dense<"0xF2FCCE3D834529BE{{[0-9A-F]+}}"> : tensor<80x48xf32>
// CHECK: %[[Y:.+]] = kiln.matmul %[[A]], %[[W4]] : tensor<2x3x80xf32>, tensor<80x48xf32> -> tensor<2x3x48xf32>
// CHECK: %[[BIAS:.+]] = kiln.constant dense<[{{.+}}]> : tensor<48xf32>
// CHECK: %[[W4Z:.+]] = kiln.constant dense<"0x9B75D0BD8E3639BD{{[0-9A-F]+}}"> : tensor<80x48xf32>
// CHECK: %[[P:.+]] = kiln.matmul %[[A]], %[[W4Z]] : tensor<2x3x80xf32>, tensor<80x48xf32> -> tensor<2x3x48xf32>
// CHECK: %[[YB:.+]] = kiln.add %[[P]], %[[BIAS]] : tensor<2x3x48xf32>, tensor<48xf32> -> tensor<2x3x48xf32>
// CHECK: %[[W8:.+]] = kiln.constant dense<"0x8432F5BD8932883D{{[0-9A-F]+}}"> : tensor<80x48xf32>
// CHECK: %[[Y8:.+]] = kiln.matmul %[[A2]], %[[W8]] : tensor<5x80xf32>, tensor<80x48xf32> -> tensor<5x48xf32>
// CHECK: %[[W2:.+]] = kiln.constant dense<"0xA22958BD1528B0BD{{[0-9A-F]+}}"> : tensor<80x48xf32>
// CHECK: %[[A3R:.+]] = kiln.reshape %[[A3]] : tensor<80xf32> -> tensor<1x80xf32>
// CHECK: %[[P2:.+]] = kiln.matmul %[[A3R]], %[[W2]] : tensor<1x80xf32>, tensor<80x48xf32> -> tensor<1x48xf32>
// CHECK: %[[Y2:.+]] = kiln.reshape %[[P2]] : tensor<1x48xf32> -> tensor<48xf32>
// CHECK: return %[[Y]], %[[YB]], %[[Y8]], %[[Y2]] :
// No uint8 codes or zero points are left in the graph.
// NO-CODES-NOT: ui8

// float16: W in f16 (-0.4004, 0.2666 with float16 zero points), the bias added after.
// FP16-LABEL: func.func @main(
// FP16-SAME: %[[A:[^:]+]]: tensor<1x4x80xf16> {kiln.name = "a"}
// FP16-DAG: %[[BIAS:.+]] = kiln.constant dense<{{.+}}> : tensor<48xf16>
// FP16-DAG: %[[W:.+]] = kiln.constant dense<"0x68B64434{{[0-9A-F]+}}"> : tensor<80x48xf16>
// FP16: %[[P:.+]] = kiln.matmul %[[A]], %[[W]] : tensor<1x4x80xf16>, tensor<80x48xf16> -> tensor<1x4x48xf16>
// FP16: %[[Y:.+]] = kiln.add %[[P]], %[[BIAS]] : tensor<1x4x48xf16>, tensor<48xf16> -> tensor<1x4x48xf16>
// FP16: return %[[Y]]

// One GEMM kernel with the bias in its epilogue; 4 rows take the few-row GEMM.
// FP16-KERNELS: kiln.kernel @k0_fused_matmul_add({{.*}}kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 4, split_k = 1>
// FP16-KERNELS-NOT: kiln.kernel

// Errors.
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_no_k.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=NO-K
// NO-K: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): attribute 'K' is required
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_n.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=N
// N: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): K 80 and N 0 must be positive (W is [K, N])
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_huge.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): unsupported: dequantizing the N x K = 65536 x 65536 weight at import would make more than 2147483648 elements (2^31), the most kiln dequantizes for MatMulNBits
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_bits.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=BITS
// BITS: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): unsupported: bits 3 (kiln imports 2-, 4- and 8-bit weights, as onnxruntime does)
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_block_size.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): block_size 24 must be a power of 2 from 16 to 1073741824
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_k.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=K
// K: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): A 'tensor<2x64xf32>' must have K = 80 as its last dim
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_g_idx.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=GIDX
// GIDX: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): unsupported: g_idx (input 4, the deprecated per-row block index of act-order GPTQ exports); quantize without act-order or export without g_idx
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_b_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=B-TYPE
// B-TYPE: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): B 'tensor<48x3x16xi8>' must be uint8
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_b_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=B-SHAPE
// B-SHAPE: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): B 'tensor<48x2x16xui8>' must have shape [N, k_blocks, blob_size] = [48, 3, 16] (N = 48, K = 80, block_size = 32, bits = 4)
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_scales_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SCALES-SHAPE
// SCALES-SHAPE: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): scales 'tensor<96xf32>' must have shape [N * k_blocks] = [144] or [N, k_blocks] = [48, 3] (N = 48, K = 80, block_size = 32)
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_scales_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SCALES-TYPE
// SCALES-TYPE: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): scales 'tensor<144xf16>' must have the element type of A 'tensor<2x80xf32>'
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_zero_points_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ZP-SHAPE
// ZP-SHAPE: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): zero_points 'tensor<144xui8>' must have shape [N * ceil(k_blocks * bits / 8)] = [96] or [N, ceil(k_blocks * bits / 8)] = [48, 2] (N = 48, K = 80, block_size = 32, bits = 4)
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_zero_points_type.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ZP-TYPE
// ZP-TYPE: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): zero_points 'tensor<144xi8>' must be uint8 (packed) or of the element type of A 'tensor<2x80xf32>' (one per block)
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_bias_shape.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=BIAS-SHAPE
// BIAS-SHAPE: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): bias 'tensor<80xf32>' must have shape [N] = [48] and the element type of A 'tensor<2x80xf32>'
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_dynamic_b.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DYNAMIC-B
// DYNAMIC-B: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): unsupported: B of MatMulNBits must be a constant after shape specialization
// RUN: not kiln-compile %S/Inputs/error_matmul_nbits_dynamic_scales.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=DYNAMIC-SCALES
// DYNAMIC-SCALES: error: node 'mm' (com.microsoft::MatMulNBits, opset 1): unsupported: scales of MatMulNBits must be a constant after shape specialization
