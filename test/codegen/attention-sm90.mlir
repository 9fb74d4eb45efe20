// The Hopper attention kernel (kiln::attentionSm90, cuda/attention_sm90.cuh) through
// kiln-compile (--hopper-attention, the default): kiln-select-tiles sets a #kiln.sm90_attention_tile and
// AttentionEmitter reads Q, K and V through three rank-4 tensor maps ({D, S, H, B}, box
// {64, rows, 1, 1}); NVRTC compiles it for sm_90a and ptxas assembles the PTX.
// Grid launch (--hopper-attention-persistent=off): one block per query tile.
// RUN: rm -rf %t.on && kiln-compile %s --precision fp16 --hopper-attention --hopper-attention-persistent=off -o %t.on.kiln --dump-cuda %t.on --quiet
// RUN: cat %t.on/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t.on/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.on.cubin || exit 1; done %}
// RUN: kiln-compile %s --precision fp16 --hopper-attention-persistent=off --emit=kernels -o - | FileCheck %s --check-prefix=IR
// Persistent launch: the kernel gets the batch (4) and the grid is min(query tiles, 132 SMs).
// RUN: rm -rf %t.pers && kiln-compile %s --precision fp16 --hopper-attention --hopper-attention-persistent=on -o %t.pers.kiln --dump-cuda %t.pers --quiet
// RUN: cat %t.pers/module*.cu | FileCheck %s --check-prefix=PERS
// RUN: %if ptxas %{ for f in %t.pers/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.pers.cubin || exit 1; done %}
// PERS: kiln::attentionSm90<kiln::f16, 128, 128, 128, 2, true, true>(&tmap0, &tmap1, &tmap2, mask, o, shape, kiln_smem, ropeQ, 4);
// The default (auto): 256 query tiles are at most 4 waves on 132 SMs, so persistent as well.
// RUN: rm -rf %t.auto && kiln-compile %s --precision fp16 -o %t.auto.kiln --dump-cuda %t.auto --quiet
// RUN: cat %t.auto/module*.cu | FileCheck %s --check-prefix=PERS
// RUN: kiln-compile %s --precision fp16 --emit=kernels -o - | FileCheck %s --check-prefix=AUTO
// AUTO: kiln.tile_reason = "Hopper TMA + wgmma: 256 query tiles walked by persistent blocks (at most 4 waves) on 132 SMs
// Off (--hopper-attention=false): the mma.sync kernel, as before.
// RUN: rm -rf %t.off && kiln-compile %s --precision fp16 --hopper-attention=false -o %t.off.kiln --dump-cuda %t.off --quiet
// RUN: cat %t.off/module*.cu | FileCheck %s --check-prefix=OFF
// Another target besides sm_90: the option has no effect (the kernel exists for sm_90a alone).
// RUN: rm -rf %t.multi && kiln-compile %s --precision fp16 --hopper-attention --target sm_90,sm_80 -o %t.multi.kiln --dump-cuda %t.multi --quiet
// RUN: cat %t.multi/module*.cu | FileCheck %s --check-prefix=OFF

// Causal, [B, H, S, D] = [4, 8, 1024, 128]: 128 query rows and 128 keys per tile, ping-pong,
// 384 threads with one block per SM, the maps after the pointers.
// CHECK-LABEL: // attention [4x8x1024x128] keys 1024 (kv heads 8), causal, Hopper TMA + wgmma (attention_sm90.cuh), 128 keys x 128 queries per tile
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(384, 1) kiln_k{{[0-9]+}}(const kiln::f16 *__restrict__ in0, const kiln::f16 *__restrict__ in1, const kiln::f16 *__restrict__ in2, kiln::f16 *__restrict__ out0, const __grid_constant__ kiln::TensorMap tmap0, const __grid_constant__ kiln::TensorMap tmap1, const __grid_constant__ kiln::TensorMap tmap2)
// CHECK: const kiln::AttnShape shape{8, 8, 1024, 1024, {{.+}}, false};
// CHECK-NEXT: const kiln::AttnOut<kiln::f16> o{out0, 1048576LL, 131072LL, 128LL};
// CHECK-NEXT: auto mask = kiln::NoMask{};
// CHECK-NEXT: const auto ropeQ = kiln::NoRope{};
// CHECK-NEXT: kiln::attentionSm90<kiln::f16, 128, 128, 128, 2, true, true>(&tmap0, &tmap1, &tmap2, mask, o, shape, kiln_smem, ropeQ);

// GQA (8 query heads over 2 KV heads) with an additive mask [B, 1, 1, Sk] (row-invariant),
// D = 64, not causal: 128 keys per tile (64 + 64 + 32 + 32 + 64 registers fit).
// CHECK-LABEL: // attention [4x8x1024x64] keys 1024 (kv heads 2), not causal, additive mask, Hopper TMA + wgmma
// CHECK: auto mask = kiln::makeRowInvariantMask(
// CHECK: kiln::attentionSm90<kiln::f16, 64, 128, 128, 2, false, true>(&tmap0, &tmap1, &tmap2, mask, o, shape, kiln_smem, ropeQ);

// A rotary on Q (Llama) is a prologue: TMA reads its input and the kernel rotates the Q tile in
// shared memory with cos / sin from loader lambdas.
// CHECK-LABEL: // attention [4x8x1024x64] keys 1024 (kv heads 8), causal, Hopper TMA + wgmma
// CHECK: const auto ropeQ = kiln::makeRope(
// CHECK: kiln::attentionSm90<kiln::f16, 64, 128, 128, 2, true, true>(&tmap0, &tmap1, &tmap2, mask, o, shape, kiln_smem, ropeQ);

// IR: kiln.sm90_attention_tile = #kiln.sm90_attention_tile<query_tile = 128, key_tile = 128, stages = 2, pingpong = true, persistent = false>, kiln.tile_reason = "Hopper TMA + wgmma: 256 query tiles as blocks on 132 SMs
// OFF-NOT: attentionSm90
// OFF: kiln::attentionTC<kiln::f16, 128,
// OFF: kiln::attentionTC<kiln::f16, 64,
module {
  func.func @main(%q: tensor<4x8x1024x128xf16> {kiln.name = "q"}, %k: tensor<4x8x1024x128xf16> {kiln.name = "k"}, %v: tensor<4x8x1024x128xf16> {kiln.name = "v"},
                  %q2: tensor<4x8x1024x64xf16> {kiln.name = "q2"}, %k2: tensor<4x2x1024x64xf16> {kiln.name = "k2"}, %v2: tensor<4x2x1024x64xf16> {kiln.name = "v2"}, %m: tensor<4x1x1x1024xf16> {kiln.name = "m"},
                  %q3: tensor<4x8x1024x64xf16> {kiln.name = "q3"}, %cos: tensor<1x1x1024x64xf16> {kiln.name = "cos"}, %sin: tensor<1x1x1024x64xf16> {kiln.name = "sin"})
      -> (tensor<4x8x1024x128xf16> {kiln.name = "o"}, tensor<4x8x1024x64xf16> {kiln.name = "o2"}, tensor<4x8x1024x64xf16> {kiln.name = "o3"}) {
    %o = kiln.attention %q, %k, %v {bshd_output = false, causal = true, scale = 0.08838834764831845 : f64, zero_masked_rows = false} : tensor<4x8x1024x128xf16>, tensor<4x8x1024x128xf16>, tensor<4x8x1024x128xf16> -> tensor<4x8x1024x128xf16>
    %o2 = kiln.attention %q2, %k2, %v2, %m {bshd_output = false, causal = false, scale = 0.125 : f64, zero_masked_rows = false} : tensor<4x8x1024x64xf16>, tensor<4x2x1024x64xf16>, tensor<4x2x1024x64xf16>, tensor<4x1x1x1024xf16> -> tensor<4x8x1024x64xf16>
    %qr = kiln.rotary %q3, %cos, %sin : tensor<4x8x1024x64xf16>, tensor<1x1x1024x64xf16>, tensor<1x1x1024x64xf16> -> tensor<4x8x1024x64xf16>
    %o3 = kiln.attention %qr, %q3, %q3 {bshd_output = false, causal = true, scale = 0.125 : f64, zero_masked_rows = false} : tensor<4x8x1024x64xf16>, tensor<4x8x1024x64xf16>, tensor<4x8x1024x64xf16> -> tensor<4x8x1024x64xf16>
    return %o, %o2, %o3 : tensor<4x8x1024x128xf16>, tensor<4x8x1024x64xf16>, tensor<4x8x1024x64xf16>
  }
}
