// RUN: kiln-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @roundtrip
func.func @roundtrip(%x: tensor<2x16xf32>) -> (tensor<2xi64>, tensor<2x1xi64>) {
  // CHECK: kiln.arg_reduce <max> %{{.+}} {axis = 1 : i64, keep_dims = false, select_last_index = false} : tensor<2x16xf32> -> tensor<2xi64>
  %a = kiln.arg_reduce <max> %x {axis = 1 : i64, keep_dims = false, select_last_index = false} : tensor<2x16xf32> -> tensor<2xi64>
  // CHECK: kiln.arg_reduce <min> %{{.+}} {axis = 1 : i64, keep_dims = true, select_last_index = true} : tensor<2x16xf32> -> tensor<2x1xi64>
  %b = kiln.arg_reduce <min> %x {axis = 1 : i64, keep_dims = true, select_last_index = true} : tensor<2x16xf32> -> tensor<2x1xi64>
  return %a, %b : tensor<2xi64>, tensor<2x1xi64>
}

// -----

func.func @sum_kind(%x: tensor<2x16xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{kind must be max or min}}
  %a = kiln.arg_reduce <sum> %x {axis = 1 : i64, keep_dims = false, select_last_index = false} : tensor<2x16xf32> -> tensor<2xi64>
  return %a : tensor<2xi64>
}

// -----

func.func @bad_axis(%x: tensor<2x16xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %a = kiln.arg_reduce <max> %x {axis = 2 : i64, keep_dims = false, select_last_index = false} : tensor<2x16xf32> -> tensor<2xi64>
  return %a : tensor<2xi64>
}

// -----

func.func @bad_shape(%x: tensor<2x16xf32>) -> tensor<16xi64> {
  // expected-error @+1 {{result shape [16] should be [2]}}
  %a = kiln.arg_reduce <max> %x {axis = 1 : i64, keep_dims = false, select_last_index = false} : tensor<2x16xf32> -> tensor<16xi64>
  return %a : tensor<16xi64>
}

// -----

func.func @bad_type(%x: tensor<2x16xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{result element type must be i64}}
  %a = kiln.arg_reduce <max> %x {axis = 1 : i64, keep_dims = false, select_last_index = false} : tensor<2x16xf32> -> tensor<2xi32>
  return %a : tensor<2xi32>
}
