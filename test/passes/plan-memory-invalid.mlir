// RUN: kiln-opt %s --split-input-file --kiln-plan-memory --verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-plan-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN

// Planning runs after outlining; a compute op outside a kernel is an error.
func.func @not_outlined(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unsupported: memory planning expects only kernels, constants, reshape views and the return; run kiln-outline-kernels first}}
  %t = kiln.tanh %x : tensor<4xf32>
  return %t : tensor<4xf32>
}

// ALIGN: error: arena alignment 48 is not a power of two
