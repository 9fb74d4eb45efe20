// ONNX Einsum (compiler/onnx/OnnxEinsum.cpp): diagonals by reshape + strided kiln.slice,
// labels needed nowhere else summed by kiln.reduce, float contractions through kiln.matmul
// on [batch.., M, K] x [batch.., K, N], outer products and integer contractions as a
// broadcast kiln.mul (+ kiln.reduce), a final kiln.transpose to the output order. Values
// against onnxruntime: check_import_numerics.py --pad-einsum and small_models_test.py.

// RUN: kiln-compile %S/Inputs/einsum.onnx --emit=graph | FileCheck %s
// RUN: kiln-compile %S/Inputs/einsum_bf16.onnx --emit=graph | FileCheck %s --check-prefix=BF16

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4xf32> {kiln.name = "a"}, %[[B:[^:]+]]: tensor<2x4x5xf32> {kiln.name = "b"}, %[[M:[^:]+]]: tensor<4x4xf32> {kiln.name = "m"}, %[[V:[^:]+]]: tensor<3xf32> {kiln.name = "v"}, %[[E1:[^:]+]]: tensor<1x3x4xf32> {kiln.name = "e1"}, %[[E2:[^:]+]]: tensor<5x4x6xf32> {kiln.name = "e2"}, %[[W:[^:]+]]: tensor<3x4xf32> {kiln.name = "w"})
// bij,bjk->bik: one batched matmul.
// CHECK: %[[BMM:.+]] = kiln.matmul %[[A]], %[[B]] : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
// ij->ji
// CHECK: %[[T:.+]] = kiln.transpose %[[M]] {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
// ij->i
// CHECK: %[[ROWS:.+]] = kiln.reduce <sum> %[[M]] {axes = array<i64: 1>, keep_dims = false} : tensor<4x4xf32> -> tensor<4xf32>
// ii->i: the diagonal is every 5th element of the flattened 4x4.
// CHECK: %[[FLAT:.+]] = kiln.reshape %[[M]] : tensor<4x4xf32> -> tensor<16xf32>
// CHECK: %[[DIAG:.+]] = kiln.slice %[[FLAT]] {starts = array<i64: 0>, steps = array<i64: 5>} : tensor<16xf32> -> tensor<4xf32>
// ii (implicit output: i repeats, so nothing is kept): the trace.
// CHECK: %[[D2:.+]] = kiln.slice %{{.+}} {starts = array<i64: 0>, steps = array<i64: 5>} : tensor<16xf32> -> tensor<4xf32>
// CHECK: %[[TRACE:.+]] = kiln.reduce <sum> %[[D2]] {axes = array<i64: 0>, keep_dims = false} : tensor<4xf32> -> tensor<f32>
// i,jk->ijk: an outer product is a broadcast multiply.
// CHECK: %[[VO:.+]] = kiln.reshape %[[V]] : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK: %[[WO:.+]] = kiln.reshape %[[W]] : tensor<3x4xf32> -> tensor<1x3x4xf32>
// CHECK: %[[OUTER:.+]] = kiln.mul %[[VO]], %[[WO]] : tensor<3x1x1xf32>, tensor<1x3x4xf32> -> tensor<3x3x4xf32>
// ...ij,...jk->...ik: the size-1 batch dim broadcasts in the matmul.
// CHECK: %[[ELL:.+]] = kiln.matmul %[[E1]], %[[E2]] : tensor<1x3x4xf32>, tensor<5x4x6xf32> -> tensor<5x3x6xf32>
// "b i j , b j k" (spaces, implicit output ik): b and j are both contracted, K = 2 * 4.
// CHECK: %[[AT:.+]] = kiln.transpose %[[A]] {perm = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK: %[[AK:.+]] = kiln.reshape %[[AT]] : tensor<3x2x4xf32> -> tensor<3x8xf32>
// CHECK: %[[BK:.+]] = kiln.reshape %[[B]] : tensor<2x4x5xf32> -> tensor<8x5xf32>
// CHECK: %[[IMPLICIT:.+]] = kiln.matmul %[[AK]], %[[BK]] : tensor<3x8xf32>, tensor<8x5xf32> -> tensor<3x5xf32>
// bij->
// CHECK: %[[SUM:.+]] = kiln.reduce <sum> %[[A]] {axes = array<i64: 0, 1, 2>, keep_dims = false} : tensor<2x3x4xf32> -> tensor<f32>
// bij,ij->b: M = 2, K = 12, N = 1.
// CHECK: %[[CA:.+]] = kiln.reshape %[[A]] : tensor<2x3x4xf32> -> tensor<2x12xf32>
// CHECK: %[[CW:.+]] = kiln.reshape %[[W]] : tensor<3x4xf32> -> tensor<12x1xf32>
// CHECK: %[[CMM:.+]] = kiln.matmul %[[CA]], %[[CW]] : tensor<2x12xf32>, tensor<12x1xf32> -> tensor<2x1xf32>
// CHECK: %[[CONTRACT:.+]] = kiln.reshape %[[CMM]] : tensor<2x1xf32> -> tensor<2xf32>
// ij,jk,bkl->bil: three operands, contracted pairwise from the left.
// CHECK: %[[WM:.+]] = kiln.matmul %[[W]], %[[M]] : tensor<3x4xf32>, tensor<4x4xf32> -> tensor<3x4xf32>
// CHECK: %[[BT:.+]] = kiln.transpose %[[B]] {perm = array<i64: 1, 0, 2>} : tensor<2x4x5xf32> -> tensor<4x2x5xf32>
// CHECK: %[[BR:.+]] = kiln.reshape %[[BT]] : tensor<4x2x5xf32> -> tensor<4x10xf32>
// CHECK: %[[WMB:.+]] = kiln.matmul %[[WM]], %[[BR]] : tensor<3x4xf32>, tensor<4x10xf32> -> tensor<3x10xf32>
// CHECK: %[[WMB3:.+]] = kiln.reshape %[[WMB]] : tensor<3x10xf32> -> tensor<3x2x5xf32>
// CHECK: %[[CHAIN:.+]] = kiln.transpose %[[WMB3]] {perm = array<i64: 1, 0, 2>} : tensor<3x2x5xf32> -> tensor<2x3x5xf32>
// bij,ij->bij: nothing contracted, a broadcast multiply.
// CHECK: %[[BCAST:.+]] = kiln.mul {{.*}} : tensor<3x4x2xf32>, tensor<3x4x1xf32> -> tensor<3x4x2xf32>
// CHECK: %[[BROADCAST:.+]] = kiln.transpose %[[BCAST]] {perm = array<i64: 2, 0, 1>} : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
// bij,bjk->bik with b of size 1 and 5: letters broadcast like the dims under '...'.
// CHECK: %[[LABEL_BCAST:.+]] = kiln.matmul %[[E1]], %[[E2]] : tensor<1x3x4xf32>, tensor<5x4x6xf32> -> tensor<5x3x6xf32>
// int64 ij,jk->ik: kiln.matmul is float-only, so multiply [i, k, j] and sum j.
// CHECK: %[[MI:.+]] = kiln.cast %[[M]] : tensor<4x4xf32> -> tensor<4x4xi64>
// CHECK: %[[PROD:.+]] = kiln.mul {{.*}} : tensor<4x1x4xi64>, tensor<1x4x4xi64> -> tensor<4x4x4xi64>
// CHECK: %[[INT:.+]] = kiln.reduce <sum> %[[PROD]] {axes = array<i64: 2>, keep_dims = false} : tensor<4x4x4xi64> -> tensor<4x4xi64>
// ...ij->...ji
// CHECK: %[[ET:.+]] = kiln.transpose %[[E1]] {perm = array<i64: 0, 2, 1>} : tensor<1x3x4xf32> -> tensor<1x4x3xf32>
// CHECK: return %[[BMM]], %[[T]], %[[ROWS]], %[[DIAG]], %[[TRACE]], %[[OUTER]], %[[ELL]], %[[IMPLICIT]], %[[SUM]], %[[CONTRACT]], %[[CHAIN]], %[[BROADCAST]], %[[LABEL_BCAST]], %[[INT]], %[[ET]]

// bf16 takes the same paths as f32: matmul, diagonal slice, broadcast multiply, reduce.
// BF16-LABEL: func.func @main(
// BF16: kiln.matmul %{{.+}}, %{{.+}} : tensor<2x3x4xbf16>, tensor<2x4x5xbf16> -> tensor<2x3x5xbf16>
// BF16: kiln.slice %{{.+}} {starts = array<i64: 0>, steps = array<i64: 5>} : tensor<16xbf16> -> tensor<4xbf16>
// BF16: kiln.mul %{{.+}}, %{{.+}} : tensor<4x4x1x1xbf16>, tensor<1x1x4x4xbf16> -> tensor<4x4x4x4xbf16>
// BF16: kiln.reduce <sum> %{{.+}} {axes = array<i64: 0, 1>, keep_dims = false} : tensor<2x3x4xbf16> -> tensor<4xbf16>

// Errors, each naming the node.
// RUN: not kiln-compile %S/Inputs/error_einsum_equation.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-DOT
// ERR-DOT: error: node 'einsum' (Einsum, opset 18): equation 'ij->j.i' is invalid: '.' outside an ellipsis '...'
// RUN: not kiln-compile %S/Inputs/error_einsum_char.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-CHAR
// ERR-CHAR: error: node 'einsum' (Einsum, opset 18): equation 'i1->i' is invalid: character '1' is not a label (a-z, A-Z), '...', ',' or '->'
// RUN: not kiln-compile %S/Inputs/error_einsum_non_ascii.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-BYTE
// ERR-BYTE: is invalid: byte 0xC3 (not ASCII) is not a label (a-z, A-Z), '...', ',' or '->'
// RUN: not kiln-compile %S/Inputs/error_einsum_two_ellipses.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-ELLIPSES
// ERR-ELLIPSES: error: node 'einsum' (Einsum, opset 18): equation '......->' is invalid: a term has two ellipses
// RUN: not kiln-compile %S/Inputs/error_einsum_two_outputs.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-OUTPUTS
// ERR-OUTPUTS: error: node 'einsum' (Einsum, opset 18): equation 'ij->i->j' is invalid: the output term after '->' must be one term
// RUN: not kiln-compile %S/Inputs/error_einsum_terms.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-TERMS
// ERR-TERMS: error: node 'einsum' (Einsum, opset 18): equation 'ij,jk->ik' has 2 input terms for 1 operands
// RUN: not kiln-compile %S/Inputs/error_einsum_rank.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-RANK
// ERR-RANK: error: node 'einsum' (Einsum, opset 18): term 'ijk' of operand 0 does not fit its type 'tensor<4x4xf32>' (equation 'ijk->i')
// RUN: not kiln-compile %S/Inputs/error_einsum_ellipsis_rank.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-ELLIPSIS-RANK
// ERR-ELLIPSIS-RANK: error: node 'einsum' (Einsum, opset 18): term '...ijk' of operand 0 does not fit its type 'tensor<4x4xf32>' (equation '...ijk->i')
// RUN: not kiln-compile %S/Inputs/error_einsum_size.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-SIZE
// ERR-SIZE: error: node 'einsum' (Einsum, opset 18): label 'j' has sizes 4 and 3, which do not broadcast (equation 'ij,j->i')
// RUN: not kiln-compile %S/Inputs/error_einsum_broadcast.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-BROADCAST
// ERR-BROADCAST: error: node 'einsum' (Einsum, opset 18): dim 0 under '...' has sizes 2 and 3, which do not broadcast (equation '...i,...i->...')
// RUN: not kiln-compile %S/Inputs/error_einsum_diagonal_size.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-DIAG-SIZE
// ERR-DIAG-SIZE: error: node 'einsum' (Einsum, opset 18): label 'i' repeats in operand 0 with sizes 1 and 3 (equation 'ii->i')
// RUN: not kiln-compile %S/Inputs/error_einsum_output_ellipsis.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-OUT-ELLIPSIS
// ERR-OUT-ELLIPSIS: error: node 'einsum' (Einsum, opset 18): the output term 'i' has no '...' but the inputs' '...' covers 1 dims (equation '...i->i'; numpy and onnxruntime refuse it too)
// RUN: not kiln-compile %S/Inputs/error_einsum_output_label.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-OUT-LABEL
// ERR-OUT-LABEL: error: node 'einsum' (Einsum, opset 18): output label 'k' is in no input term (equation 'ij->k')
// RUN: not kiln-compile %S/Inputs/error_einsum_output_repeat.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-OUT-REPEAT
// ERR-OUT-REPEAT: error: node 'einsum' (Einsum, opset 18): output label 'i' repeats (equation 'ij->ii')
// RUN: not kiln-compile %S/Inputs/error_einsum_bool.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-BOOL
// ERR-BOOL: error: node 'einsum' (Einsum, opset 18): operands must be numbers, got 'tensor<2xi1>' (ONNX Einsum takes no bool)
// RUN: not kiln-compile %S/Inputs/error_einsum_types.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-TYPES
// ERR-TYPES: error: node 'einsum' (Einsum, opset 18): operand element types differ: 'f32' (operand 0) and 'i64' (operand 1); ONNX requires equal types
// RUN: not kiln-compile %S/Inputs/error_einsum_no_equation.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-NO-EQ
// ERR-NO-EQ: error: node 'einsum' (Einsum, opset 18): needs the 'equation' attribute
// RUN: not kiln-compile %S/Inputs/error_einsum_no_operands.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-NO-OPERANDS
// ERR-NO-OPERANDS: error: node 'einsum' (Einsum, opset 18): expects at least 1 operand
// RUN: not kiln-compile %S/Inputs/error_einsum_empty_operand.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-EMPTY
// ERR-EMPTY: error: node 'einsum' (Einsum, opset 18): operand 1 is empty
// RUN: not kiln-compile %S/Inputs/error_einsum_opset.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-OPSET
// ERR-OPSET: error: node 'einsum' (Einsum, opset 11): unsupported: Einsum is not in opset 11 of the default domain (it first appears in opset 12)
// RUN: not kiln-compile %S/Inputs/error_einsum_huge.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=ERR-HUGE
// ERR-HUGE: error: node 'einsum' (Einsum, opset 18): the result of equation 'i,j,k->ijk' has more than 2^40 elements
