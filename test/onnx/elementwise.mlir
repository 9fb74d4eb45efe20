// ONNX pointwise ops -> kiln pointwise ops (compiler/onnx/OnnxElementwise.cpp).
// RUN: kiln-compile %S/Inputs/elementwise.onnx --shape x=2x3 --emit=graph | FileCheck %s --check-prefix=EW
// RUN: kiln-compile %S/Inputs/logic.onnx --emit=graph | FileCheck %s --check-prefix=LOGIC
// RUN: kiln-compile %S/Inputs/gelu.onnx --emit=graph | FileCheck %s --check-prefix=GELU
// RUN: kiln-compile %S/Inputs/folding.onnx --emit=graph | FileCheck %s --check-prefix=FOLD

// The symbolic dim `n` of x is specialized to 2 by --shape; y is static.
// EW-LABEL: func.func @main(
// EW-SAME: %[[X:.+]]: tensor<2x3xf32> {kiln.name = "x"}, %[[Y:.+]]: tensor<1x1xf32> {kiln.name = "y"})
// EW-SAME: tensor<2x3xf32> {kiln.name = "neg"}
// EW-SAME: tensor<2x3xi32> {kiln.name = "cast"}
// EW: %[[NEG:.+]] = kiln.neg %[[X]] : tensor<2x3xf32>
// EW: kiln.exp %[[X]] : tensor<2x3xf32>
// EW: kiln.log %[[X]]
// EW: kiln.sqrt %[[X]]
// EW: kiln.reciprocal %[[X]]
// EW: kiln.tanh %[[X]]
// EW: kiln.erf %[[X]]
// EW: kiln.sigmoid %[[X]]
// EW: kiln.relu %[[X]]
// EW: kiln.cos %[[X]]
// EW: kiln.sin %[[X]]
// EW: %[[B:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// EW: %[[ADD:.+]] = kiln.add %[[X]], %[[B]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// EW: kiln.sub %[[X]], %[[B]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// EW: kiln.mul %[[X]], %[[B]]
// EW: kiln.div %[[X]], %[[B]]
// Pow's int64 exponent is cast to the base type (and folds).
// EW: %[[TWO:.+]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// EW: kiln.pow %[[X]], %[[TWO]] : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
// Variadic Max is a chain; single-operand Min is the operand itself.
// EW: %[[M1:.+]] = kiln.max %[[X]], %[[B]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// EW: %[[M2:.+]] = kiln.max %[[M1]], %[[Y]] : tensor<2x3xf32>, tensor<1x1xf32> -> tensor<2x3xf32>
// Clip = max(x, lo) then min(., hi).
// EW: %[[LO:.+]] = kiln.constant dense<-1.000000e+00> : tensor<f32>
// EW: %[[HI:.+]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// EW: %[[C1:.+]] = kiln.max %[[X]], %[[LO]]
// EW: %[[CLIP:.+]] = kiln.min %[[C1]], %[[HI]]
// EW: %[[CAST:.+]] = kiln.cast %[[X]] : tensor<2x3xf32> -> tensor<2x3xi32>
// Identity and Min(x) return x itself.
// EW: return %[[NEG]], {{.*}}, %[[X]], %[[ADD]], {{.*}}, %[[M2]], %[[X]], %[[CLIP]], %[[CAST]] :

// LOGIC-LABEL: func.func @main(
// LOGIC-SAME: %[[X:.+]]: tensor<2x3xf32> {kiln.name = "x"}, %[[Y:.+]]: tensor<3xf32> {kiln.name = "y"})
// LOGIC: kiln.equal %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
// LOGIC: %[[LT:.+]] = kiln.less %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
// LOGIC: kiln.less_equal %[[X]], %[[Y]]
// LOGIC: %[[GT:.+]] = kiln.greater %[[X]], %[[Y]]
// LOGIC: kiln.greater_equal %[[X]], %[[Y]]
// LOGIC: %[[AND:.+]] = kiln.and %[[LT]], %[[GT]] : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
// LOGIC: %[[OR:.+]] = kiln.or %[[LT]], %[[GT]]
// LOGIC: kiln.not %[[AND]] : tensor<2x3xi1>
// LOGIC: kiln.is_nan %[[X]] : tensor<2x3xf32> -> tensor<2x3xi1>
// LOGIC: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// LOGIC: kiln.where %[[OR]], %[[X]], %[[ZERO]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>

// Gelu-20 decomposes: none = 0.5 x (1 + erf(x / sqrt 2)),
// tanh = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// GELU-LABEL: func.func @main(
// GELU-SAME: %[[X:.+]]: tensor<4xf32>
// GELU: %[[RSQRT2:.+]] = kiln.constant dense<0.707106769> : tensor<f32>
// GELU: %[[S:.+]] = kiln.mul %[[X]], %[[RSQRT2]]
// GELU: %[[E:.+]] = kiln.erf %[[S]] : tensor<4xf32>
// GELU: kiln.add %[[E]], {{.*}}
// GELU: kiln.constant dense<4.471500e-02> : tensor<f32>
// GELU: kiln.constant dense<0.797884583> : tensor<f32>
// GELU: kiln.tanh
// GELU: return

// Ops whose operands are all constants fold at import.
// FOLD-LABEL: func.func @main() -> (tensor<2xi64> {kiln.name = "int"})
// FOLD-NEXT: %[[C:.+]] = kiln.constant dense<[4, 12]> : tensor<2xi64>
// FOLD-NEXT: return %[[C]] : tensor<2xi64>
