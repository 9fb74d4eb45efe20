// RUN: kiln-opt %s --split-input-file --verify-diagnostics | FileCheck %s
// kiln.sample: the next token per row (greedy or sampled on the GPU) with run-time parameters.

// CHECK-LABEL: func.func @roundtrip
func.func @roundtrip(%x: tensor<2x1x32000xf16>, %y: tensor<2x100xf32>, %t: tensor<2xf32>, %k: tensor<2xi32>, %p: tensor<2xf32>, %s: tensor<2xi64>, %o: tensor<2xi64>) -> (tensor<2x1xi64>, tensor<2x1xi64>) {
  // CHECK: kiln.sample %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x1x32000xf16>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xi64>
  %a = kiln.sample %x, %t, %k, %p, %s, %o : (tensor<2x1x32000xf16>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xi64>
  // CHECK: kiln.sample %{{.+}} : (tensor<2x100xf32>,
  %b = kiln.sample %y, %t, %k, %p, %s, %o : (tensor<2x100xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xi64>
  return %a, %b : tensor<2x1xi64>, tensor<2x1xi64>
}

// -----

func.func @logits_rank(%x: tensor<2x3x100xf32>, %t: tensor<2xf32>, %k: tensor<2xi32>, %p: tensor<2xf32>, %s: tensor<2xi64>, %o: tensor<2xi64>) -> tensor<2x1xi64> {
  // expected-error @+1 {{logits [2, 3, 100] must be [B, V] or [B, 1, V]}}
  %a = kiln.sample %x, %t, %k, %p, %s, %o : (tensor<2x3x100xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xi64>
  return %a : tensor<2x1xi64>
}

// -----

func.func @params_batch(%x: tensor<3x100xf32>, %t: tensor<2xf32>, %k: tensor<2xi32>, %p: tensor<2xf32>, %s: tensor<2xi64>, %o: tensor<2xi64>) -> tensor<3x1xi64> {
  // expected-error @+1 {{temperature [2] must be [3], one value per row of the logits}}
  %a = kiln.sample %x, %t, %k, %p, %s, %o : (tensor<3x100xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x1xi64>
  return %a : tensor<3x1xi64>
}

// -----

func.func @result_shape(%x: tensor<2x100xf32>, %t: tensor<2xf32>, %k: tensor<2xi32>, %p: tensor<2xf32>, %s: tensor<2xi64>, %o: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{result shape [2] should be [2, 1]}}
  %a = kiln.sample %x, %t, %k, %p, %s, %o : (tensor<2x100xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %a : tensor<2xi64>
}

// -----

func.func @top_k_type(%x: tensor<2x100xf32>, %t: tensor<2xf32>, %k: tensor<2xi64>, %p: tensor<2xf32>, %s: tensor<2xi64>, %o: tensor<2xi64>) -> tensor<2x1xi64> {
  // expected-error @+1 {{operand #2 must be ranked tensor of 32-bit signless integer values}}
  %a = kiln.sample %x, %t, %k, %p, %s, %o : (tensor<2x100xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xi64>
  return %a : tensor<2x1xi64>
}
