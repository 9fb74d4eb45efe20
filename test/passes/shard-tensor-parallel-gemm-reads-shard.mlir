// A GEMM whose input would itself be a shard is not column-parallel. Traced back from the
// second GEMM's input, y = x + W2·x with x = tanh(W1·h) reaches W1 through both operands of
// the add and W2 through the first; cutting both weights' columns fed W2 a shard and failed
// the verifier ("contraction dims differ"). Now nothing here is sharded: there is no MLP whose
// up projection reads a whole value.
// RUN: kiln-opt %s --kiln-shard-tensor-parallel="tp-size=2 rank=0" | FileCheck %s
// CHECK-LABEL: func.func @gemm_reads_shard
// CHECK-NOT: kiln.all_reduce
// CHECK: kiln.matmul {{.*}} : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
// CHECK: kiln.matmul {{.*}} : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
// CHECK: kiln.matmul {{.*}} : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
// CHECK-NOT: kiln.all_reduce
func.func @gemm_reads_shard(%h: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %w1 = kiln.constant dense<0.5> : tensor<8x8xf32>
  %w2 = kiln.constant dense<0.25> : tensor<8x8xf32>
  %w3 = kiln.constant dense<0.125> : tensor<8x8xf32>
  %0 = kiln.matmul %h, %w1 : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  %x = kiln.tanh %0 : tensor<1x4x8xf32>
  %1 = kiln.matmul %x, %w2 : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  %y = kiln.add %1, %x : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %2 = kiln.matmul %y, %w3 : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  return %2 : tensor<1x4x8xf32>
}
