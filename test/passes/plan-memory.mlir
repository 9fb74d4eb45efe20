// RUN: kiln-opt %s --split-input-file --kiln-plan-memory | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-plan-memory=alignment=64 | FileCheck %s --check-prefix=ALIGN64

// A chain a -> b -> c -> d: buffers whose last reader has run are reused.
// Each tensor is 1024 bytes.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: kiln.arena_bytes = 2048 : i64, kiln.intermediate_bytes = 4096 : i64
func.func @chain(%x: tensor<256xf32>) -> tensor<256xf32> {
  // CHECK: kiln.kernel @a({{.*}}) {arena_offsets = array<i64: 0>}
  %a = kiln.kernel @a(%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%v: tensor<256xf32>):
    %t = kiln.tanh %v : tensor<256xf32>
    kiln.yield %t : tensor<256xf32>
  }
  // CHECK: kiln.kernel @b({{.*}}) {arena_offsets = array<i64: 1024>}
  %b = kiln.kernel @b(%a) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%v: tensor<256xf32>):
    %t = kiln.tanh %v : tensor<256xf32>
    kiln.yield %t : tensor<256xf32>
  }
  // CHECK: kiln.kernel @c({{.*}}) {arena_offsets = array<i64: 0>}
  %c = kiln.kernel @c(%b) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%v: tensor<256xf32>):
    %t = kiln.tanh %v : tensor<256xf32>
    kiln.yield %t : tensor<256xf32>
  }
  // CHECK: kiln.kernel @d({{.*}}) {arena_offsets = array<i64: 1024>}
  %d = kiln.kernel @d(%c) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%v: tensor<256xf32>):
    %t = kiln.tanh %v : tensor<256xf32>
    kiln.yield %t : tensor<256xf32>
  }
  return %d : tensor<256xf32>
}

// -----

// A view extends the liveness of the buffer it aliases; the function result
// stays live to the end. Sizes round up to the alignment.
// The alignment is recorded for readers of the plan (kiln-compile --report).
// CHECK-LABEL: func.func @view_liveness
// CHECK-SAME: kiln.arena_alignment = 256 : i64, kiln.arena_bytes = 768 : i64, kiln.intermediate_bytes = 768 : i64
// ALIGN64-LABEL: func.func @view_liveness
// ALIGN64-SAME: kiln.arena_alignment = 64 : i64, kiln.arena_bytes = 192 : i64, kiln.intermediate_bytes = 192 : i64
func.func @view_liveness(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  // CHECK: @a({{.*}}) {arena_offsets = array<i64: 0>}
  %a = kiln.kernel @a(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %t = kiln.tanh %v : tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  %view = kiln.reshape %a : tensor<4xf32> -> tensor<2x2xf32>
  // CHECK: @b({{.*}}) {arena_offsets = array<i64: 256>}
  %b = kiln.kernel @b(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %t = kiln.exp %v : tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  // CHECK: @c({{.*}}) {arena_offsets = array<i64: 512>}
  %c = kiln.kernel @c(%b, %view) : (tensor<4xf32>, tensor<2x2xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>, %w: tensor<2x2xf32>):
    %r = kiln.reshape %w : tensor<2x2xf32> -> tensor<4xf32>
    %t = kiln.add %v, %r : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  return %c, %view : tensor<4xf32>, tensor<2x2xf32>
}

// -----

// kiln.all_reduce runs in place: its result is its operand's buffer, and a
// later reader of the sum keeps that buffer live (so @c cannot reuse it).
// CHECK-LABEL: func.func @all_reduce_in_place
// CHECK-SAME: kiln.arena_bytes = 3072 : i64
func.func @all_reduce_in_place(%x: tensor<256xf32>) -> tensor<256xf32> {
  // CHECK: kiln.kernel @a({{.*}}) {arena_offsets = array<i64: 0>}
  %a = kiln.kernel @a(%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%v: tensor<256xf32>):
    %t = kiln.tanh %v : tensor<256xf32>
    kiln.yield %t : tensor<256xf32>
  }
  %s = kiln.all_reduce %a : tensor<256xf32> -> tensor<256xf32>
  // CHECK: kiln.kernel @b({{.*}}) {arena_offsets = array<i64: 1024>}
  %b = kiln.kernel @b(%x) : (tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%v: tensor<256xf32>):
    %t = kiln.tanh %v : tensor<256xf32>
    kiln.yield %t : tensor<256xf32>
  }
  // CHECK: kiln.kernel @c({{.*}}) {arena_offsets = array<i64: 2048>}
  %c = kiln.kernel @c(%s, %b) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%v: tensor<256xf32>, %w: tensor<256xf32>):
    %t = kiln.add %v, %w : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    kiln.yield %t : tensor<256xf32>
  }
  return %c : tensor<256xf32>
}
