// RUN: kiln-opt %s --split-input-file --kiln-fuse-kv-append | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fuse-kv-append --kiln-plan-memory | FileCheck %s --check-prefix=PLAN

// A decode step (one new token): the append kernel (the key's rotary, the slices of the QKV
// output) is merged into the attention kernel that reads its pools. Operands: the append
// kernel's, then the attention kernel's others (none here); results: the attention's output,
// then the two pools, which kiln-plan-memory keeps in place (no arena offset for them).
// CHECK-LABEL: func.func @decode
// CHECK-NOT: kiln.kernel @k0_
// CHECK: %[[K:.*]]:3 = kiln.kernel @k1_kv_cache_append_fused_paged_attention(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6) : ({{.*}}) -> (tensor<1x1x4x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>)
// CHECK: ^bb0(%[[QKV:[^:]+]]: tensor<1x1x256xf16>, %[[COS:[^:]+]]: tensor<1x1x1x32xf16>, %[[SIN:[^:]+]]: tensor<1x1x1x32xf16>, %[[KC:[^:]+]]: tensor<4x2x16x32xf16>, %[[VC:[^:]+]]: tensor<4x2x16x32xf16>, %[[TABLE:[^:]+]]: tensor<1x4xi32>, %[[LENS:[^:]+]]: tensor<1xi32>):
// CHECK: %[[KR:.*]] = kiln.rotary %{{.*}}, %[[COS]], %[[SIN]] : tensor<1x2x1x32xf16>
// CHECK: %[[KP:.*]], %[[VP:.*]] = kiln.kv_cache_append %[[KR]], %{{.*}}, %[[KC]], %[[VC]], %[[TABLE]], %[[LENS]]
// CHECK: %[[QR:.*]] = kiln.rotary %{{.*}}, %[[COS]], %[[SIN]] : tensor<1x4x1x32xf16>
// CHECK: %[[O:.*]] = kiln.paged_attention %[[QR]], %[[KP]], %[[VP]], %[[TABLE]], %[[LENS]]
// CHECK: kiln.yield %[[O]], %[[KP]], %[[VP]]
// CHECK: return %[[K]]#0
// PLAN-LABEL: func.func @decode
// PLAN: kiln.kernel @k1_kv_cache_append_fused_paged_attention({{.*}}) {arena_offsets = array<i64: 0, -1, -1>}
func.func @decode(%qkv: tensor<1x1x256xf16>, %cos: tensor<1x1x1x32xf16>, %sin: tensor<1x1x1x32xf16>,
                  %kc: tensor<4x2x16x32xf16>, %vc: tensor<4x2x16x32xf16>,
                  %table: tensor<1x4xi32>, %lens: tensor<1xi32>) -> tensor<1x1x4x32xf16> {
  %pools:2 = kiln.kernel @k0_fused_kv_cache_append(%qkv, %cos, %sin, %kc, %vc, %table, %lens) : (tensor<1x1x256xf16>, tensor<1x1x1x32xf16>, tensor<1x1x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> (tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>) {
  ^bb0(%a: tensor<1x1x256xf16>, %c: tensor<1x1x1x32xf16>, %s: tensor<1x1x1x32xf16>, %k: tensor<4x2x16x32xf16>, %v: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %0 = kiln.slice %a {starts = array<i64: 0, 0, 128>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x64xf16>
    %1 = kiln.slice %a {starts = array<i64: 0, 0, 192>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x64xf16>
    %2 = kiln.reshape %0 : tensor<1x1x64xf16> -> tensor<1x1x2x32xf16>
    %3 = kiln.transpose %2 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x2x32xf16> -> tensor<1x2x1x32xf16>
    %4 = kiln.reshape %1 : tensor<1x1x64xf16> -> tensor<1x1x2x32xf16>
    %5 = kiln.transpose %4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x2x32xf16> -> tensor<1x2x1x32xf16>
    %6 = kiln.rotary %3, %c, %s : tensor<1x2x1x32xf16>, tensor<1x1x1x32xf16>, tensor<1x1x1x32xf16> -> tensor<1x2x1x32xf16>
    %kr, %vr = kiln.kv_cache_append %6, %5, %k, %v, %t, %l : tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
    kiln.yield %kr, %vr : tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
  }
  %o = kiln.kernel @k1_fused_paged_attention(%qkv, %cos, %sin, %pools#0, %pools#1, %table, %lens) : (tensor<1x1x256xf16>, tensor<1x1x1x32xf16>, tensor<1x1x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> tensor<1x1x4x32xf16> {
  ^bb0(%a: tensor<1x1x256xf16>, %c: tensor<1x1x1x32xf16>, %s: tensor<1x1x1x32xf16>, %k: tensor<4x2x16x32xf16>, %v: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %0 = kiln.slice %a {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x1x256xf16> -> tensor<1x1x128xf16>
    %1 = kiln.reshape %0 : tensor<1x1x128xf16> -> tensor<1x1x4x32xf16>
    %2 = kiln.transpose %1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x4x32xf16> -> tensor<1x4x1x32xf16>
    %3 = kiln.rotary %2, %c, %s : tensor<1x4x1x32xf16>, tensor<1x1x1x32xf16>, tensor<1x1x1x32xf16> -> tensor<1x4x1x32xf16>
    %4 = kiln.paged_attention %3, %k, %v, %t, %l {bshd_output = true, scale = 0.1767766922712326 : f64} : tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<1x1x4x32xf16>
    kiln.yield %4 : tensor<1x1x4x32xf16>
  }
  return %o : tensor<1x1x4x32xf16>
}

// -----

// A prefill chunk (3 new tokens): left alone (its attention may take the tensor-core prefill
// kernels, which read the cache by TMA or mma.sync tiles and do not append).
// CHECK-LABEL: func.func @prefill
// CHECK: kiln.kernel @k0_kv_cache_append(
// CHECK: kiln.kernel @k1_paged_attention(
func.func @prefill(%k: tensor<1x2x3x32xf16>, %v: tensor<1x2x3x32xf16>, %q: tensor<1x4x3x32xf16>,
                   %kc: tensor<4x2x16x32xf16>, %vc: tensor<4x2x16x32xf16>,
                   %table: tensor<1x4xi32>, %lens: tensor<1xi32>) -> tensor<1x3x4x32xf16> {
  %pools:2 = kiln.kernel @k0_kv_cache_append(%k, %v, %kc, %vc, %table, %lens) : (tensor<1x2x3x32xf16>, tensor<1x2x3x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> (tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>) {
  ^bb0(%a: tensor<1x2x3x32xf16>, %b: tensor<1x2x3x32xf16>, %kk: tensor<4x2x16x32xf16>, %vv: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %kr, %vr = kiln.kv_cache_append %a, %b, %kk, %vv, %t, %l : tensor<1x2x3x32xf16>, tensor<1x2x3x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
    kiln.yield %kr, %vr : tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
  }
  %o = kiln.kernel @k1_paged_attention(%q, %pools#0, %pools#1, %table, %lens) : (tensor<1x4x3x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> tensor<1x3x4x32xf16> {
  ^bb0(%a: tensor<1x4x3x32xf16>, %kk: tensor<4x2x16x32xf16>, %vv: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %0 = kiln.paged_attention %a, %kk, %vv, %t, %l {bshd_output = true, scale = 0.1767766922712326 : f64} : tensor<1x4x3x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<1x3x4x32xf16>
    kiln.yield %0 : tensor<1x3x4x32xf16>
  }
  return %o : tensor<1x3x4x32xf16>
}

// -----

// The appended pools read by a second kernel as well: left alone (the merged kernel would have
// to run before both).
// CHECK-LABEL: func.func @pools_read_twice
// CHECK: kiln.kernel @k0_kv_cache_append(
// CHECK: kiln.kernel @k1_paged_attention(
// CHECK: kiln.kernel @k2_paged_attention(
func.func @pools_read_twice(%k: tensor<1x2x1x32xf16>, %v: tensor<1x2x1x32xf16>, %q: tensor<1x4x1x32xf16>,
                            %kc: tensor<4x2x16x32xf16>, %vc: tensor<4x2x16x32xf16>,
                            %table: tensor<1x4xi32>, %lens: tensor<1xi32>) -> (tensor<1x1x4x32xf16>, tensor<1x1x4x32xf16>) {
  %pools:2 = kiln.kernel @k0_kv_cache_append(%k, %v, %kc, %vc, %table, %lens) : (tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> (tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>) {
  ^bb0(%a: tensor<1x2x1x32xf16>, %b: tensor<1x2x1x32xf16>, %kk: tensor<4x2x16x32xf16>, %vv: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %kr, %vr = kiln.kv_cache_append %a, %b, %kk, %vv, %t, %l : tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
    kiln.yield %kr, %vr : tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
  }
  %o1 = kiln.kernel @k1_paged_attention(%q, %pools#0, %pools#1, %table, %lens) : (tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> tensor<1x1x4x32xf16> {
  ^bb0(%a: tensor<1x4x1x32xf16>, %kk: tensor<4x2x16x32xf16>, %vv: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %0 = kiln.paged_attention %a, %kk, %vv, %t, %l {bshd_output = true, scale = 0.1767766922712326 : f64} : tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<1x1x4x32xf16>
    kiln.yield %0 : tensor<1x1x4x32xf16>
  }
  %o2 = kiln.kernel @k2_paged_attention(%q, %pools#0, %pools#1, %table, %lens) : (tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> tensor<1x1x4x32xf16> {
  ^bb0(%a: tensor<1x4x1x32xf16>, %kk: tensor<4x2x16x32xf16>, %vv: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %0 = kiln.paged_attention %a, %kk, %vv, %t, %l {bshd_output = true, scale = 0.1767766922712326 : f64} : tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<1x1x4x32xf16>
    kiln.yield %0 : tensor<1x1x4x32xf16>
  }
  return %o1, %o2 : tensor<1x1x4x32xf16>, tensor<1x1x4x32xf16>
}

// -----

// The pool before the append read by another kernel: left alone (the merged kernel would write
// it later than the append kernel did, after that reader instead of before).
// CHECK-LABEL: func.func @pool_read_before
// CHECK: kiln.kernel @k0_kv_cache_append(
// CHECK: kiln.kernel @k1_negate(
// CHECK: kiln.kernel @k2_paged_attention(
func.func @pool_read_before(%k: tensor<1x2x1x32xf16>, %v: tensor<1x2x1x32xf16>, %q: tensor<1x4x1x32xf16>,
                            %kc: tensor<4x2x16x32xf16>, %vc: tensor<4x2x16x32xf16>,
                            %table: tensor<1x4xi32>, %lens: tensor<1xi32>) -> (tensor<1x1x4x32xf16>, tensor<4x2x16x32xf16>) {
  %pools:2 = kiln.kernel @k0_kv_cache_append(%k, %v, %kc, %vc, %table, %lens) : (tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> (tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>) {
  ^bb0(%a: tensor<1x2x1x32xf16>, %b: tensor<1x2x1x32xf16>, %kk: tensor<4x2x16x32xf16>, %vv: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %kr, %vr = kiln.kv_cache_append %a, %b, %kk, %vv, %t, %l : tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
    kiln.yield %kr, %vr : tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>
  }
  %n = kiln.kernel @k1_negate(%kc) : (tensor<4x2x16x32xf16>) -> tensor<4x2x16x32xf16> {
  ^bb0(%a: tensor<4x2x16x32xf16>):
    %0 = kiln.neg %a : tensor<4x2x16x32xf16>
    kiln.yield %0 : tensor<4x2x16x32xf16>
  }
  %o = kiln.kernel @k2_paged_attention(%q, %pools#0, %pools#1, %table, %lens) : (tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32>) -> tensor<1x1x4x32xf16> {
  ^bb0(%a: tensor<1x4x1x32xf16>, %kk: tensor<4x2x16x32xf16>, %vv: tensor<4x2x16x32xf16>, %t: tensor<1x4xi32>, %l: tensor<1xi32>):
    %0 = kiln.paged_attention %a, %kk, %vv, %t, %l {bshd_output = true, scale = 0.1767766922712326 : f64} : tensor<1x4x1x32xf16>, tensor<4x2x16x32xf16>, tensor<4x2x16x32xf16>, tensor<1x4xi32>, tensor<1xi32> -> tensor<1x1x4x32xf16>
    kiln.yield %0 : tensor<1x1x4x32xf16>
  }
  return %o, %n : tensor<1x1x4x32xf16>, tensor<4x2x16x32xf16>
}

