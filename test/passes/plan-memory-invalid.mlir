// RUN: kiln-opt %s --split-input-file --kiln-plan-memory --verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-plan-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not kiln-opt %s --split-input-file --kiln-plan-memory=alignment=4611686018427387904 2>&1 | FileCheck %s --check-prefix=ALIGN-BIG
// ALIGN-BIG: error: arena alignment 4611686018427387904 is larger than 65536 bytes

// Planning runs after outlining; a compute op outside a kernel is an error.
func.func @not_outlined(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unsupported: memory planning expects only kernels, constants, reshape views, all-reduces and the return; run kiln-outline-kernels first}}
  %t = kiln.tanh %x : tensor<4xf32>
  return %t : tensor<4xf32>
}

// ALIGN: error: arena alignment 48 is not a power of two

// -----

// kiln-opt accepts dynamic shapes; memory planning does not.
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{unsupported: memory planning needs static shapes, got 'tensor<?xf32>' (shapes are specialized at import)}}
  %r = kiln.kernel @k0(%x) : (tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: tensor<?xf32>):
    %t = kiln.tanh %v : tensor<?xf32>
    kiln.yield %t : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
// Option errors do not dump the function.
// ALIGN-NOT: see current operation

// -----

// An in-place all-reduce would change a value another kernel still reads.
func.func @all_reduce_shared_operand(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = kiln.kernel @a(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %t = kiln.tanh %v : tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  // expected-error @+1 {{unsupported: kiln.all_reduce runs in place, so its operand must be a kernel result (or a view of one) that nothing else reads}}
  %s = kiln.all_reduce %a : tensor<4xf32> -> tensor<4xf32>
  return %s, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @all_reduce_of_input(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unsupported: kiln.all_reduce runs in place, so its operand must be a kernel result (or a view of one) that nothing else reads}}
  %s = kiln.all_reduce %x : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}
