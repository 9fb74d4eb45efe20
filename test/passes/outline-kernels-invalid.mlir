// RUN: kiln-opt %s --kiln-outline-kernels --verify-diagnostics

// A zero-element kernel result is an error (kiln launches over non-empty
// tensors only), reported at the kernel with its name.
func.func @empty_slice(%x: tensor<2x9xf32>) -> tensor<2x0xf32> {
  // expected-error @+1 {{unsupported: result 0 of kernel @k0_slice is empty ('tensor<2x0xf32>'); kiln compiles non-empty tensors only}}
  %y = kiln.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x9xf32> -> tensor<2x0xf32>
  return %y : tensor<2x0xf32>
}
