// The few-row GEMM (cuda/gemm_skinny.cuh) in generated code: on an sm_90 target kiln-select-tiles
// gives a 16-bit GEMM of at most 16 rows in all a #kiln.skinny_gemm_tile, and the GEMM emitter
// calls kiln::gemmSkinny with a per-element A loader (here it also rounds the fp32 input to
// fp16), the row-major weight's pointer and row stride, and the fused epilogue; 256 threads, a
// cluster of split-K blocks when there is more than one. The model (gen_codegen_tests.py):
// 16 x [300] x [300, 200] + bias, Relu; 3 x [1, 2048] x [2048, 64] + residual (the batch of a
// shared weight folds into 3 rows); [1, 1024] x [1024, 128] x 0.5; and a graph-input weight read
// transposed (K-major), which the few-row kernel does not take. --skinny-tensor-cores=off: the
// CUDA-core inner product (the tensor-core one: skinny-gemm-tensor-cores.test). With
// --weight-prefetch=own each block warms L2 with its weight share before the wait
// (#kiln.skinny_gemm_tile<..., l2_prefetch = true>); by default (off) nothing is prefetched.
// RUN: rm -rf %t.d && kiln-compile %S/Inputs/skinny_gemms.onnx --precision fp16 --skinny-tensor-cores=off --weight-prefetch=own -o %t.kiln --dump-cuda %t.d --quiet
// RUN: cat %t.d/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t.d/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// --skinny-gemm=false leaves every GEMM to the Hopper / mma.sync kernels.
// Without programmatic launch the wait's place stays a comment.
// RUN: rm -rf %t.plain && kiln-compile %S/Inputs/skinny_gemms.onnx --precision fp16 --skinny-tensor-cores=off --weight-prefetch=own --programmatic-launch=off -o %t.plain.kiln --dump-cuda %t.plain --quiet
// RUN: cat %t.plain/module*.cu | FileCheck %s --check-prefix=PLAIN
// PLAIN: kiln::gemmSkinnyPrefetchB<kiln::f16, 2, 1, false>
// PLAIN-NEXT: /* kiln: grid dependency */
// PLAIN-NOT: gridDependency
// RUN: rm -rf %t.dflt && kiln-compile %S/Inputs/skinny_gemms.onnx --precision fp16 --skinny-tensor-cores=off -o %t.dflt.kiln --dump-cuda %t.dflt --quiet
// RUN: cat %t.dflt/module*.cu | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: kiln::gemmSkinny<kiln::f16, 16, 2>(
// DEFAULT-NOT: gemmSkinnyPrefetchB
// RUN: kiln-compile %S/Inputs/skinny_gemms.onnx --precision fp16 --skinny-tensor-cores=off --weight-prefetch=own --emit=kernels | FileCheck %s --check-prefix=OWN
// OWN: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 16, split_k = 2, l2_prefetch = true>
// RUN: rm -rf %t.off && kiln-compile %S/Inputs/skinny_gemms.onnx --precision fp16 --skinny-gemm=false -o %t.off.kiln --dump-cuda %t.off --quiet
// RUN: cat %t.off/module*.cu | FileCheck %s --check-prefix=OFF
// OFF-NOT: gemmSkinny
// The tile and its reason (--emit=kernels), and the attribute's verifier.
// RUN: kiln-compile %S/Inputs/skinny_gemms.onnx --precision fp16 --skinny-tensor-cores=off --emit=kernels | FileCheck %s --check-prefix=PLAN
// PLAN: kiln.skinny_gemm_tile = #kiln.skinny_gemm_tile<rows = 16, split_k = 2>
// PLAN-SAME: kiln.tile_reason = "skinny: 16 rows, 4 column tiles x split-K 2 = 8 blocks on 132 SMs (2 per SM), the weight read once (K=300); CUDA cores (skinny-tensor-cores=off); sm90:
// RUN: not kiln-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=VERIFY

// CHECK-LABEL: // [16x300] x [300x200], batch 1: 16 rows, few-row GEMM (gemm_skinny.cuh), split-K 2
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(256) __cluster_dims__(2, 1, 1) kiln_k{{[0-9]+}}(
// Before the grid-dependency wait, each block warms L2 with its share of the weight: 160 K rows
// of 64 columns (its whole split-K slice; a 400-byte row stride, so two lines per row).
// CHECK-NEXT: extern __shared__ __align__(16) char kiln_smem[];
// CHECK-NEXT: kiln::gemmSkinnyPrefetchB<kiln::f16, 2, 1, false>(200, 300, in{{[0-9]+}}, 200LL, 160);
// CHECK-NEXT: kiln::gridDependencySync();
// CHECK: auto loadA = [&](int skinnyRow, int k) -> float {
// CHECK: kiln::cvt<kiln::f16>
// CHECK: auto epilogue = [&](int skinnyRow, int n, float acc) {
// CHECK: kiln::gemmSkinny<kiln::f16, 16, 2>(200, 300, loadA, in{{[0-9]+}}, 200LL, epilogue, kiln_smem);

// CHECK-LABEL: // [1x2048] x [2048x64], batch 3: 3 rows, few-row GEMM (gemm_skinny.cuh), split-K 8
// CHECK: __cluster_dims__(8, 1, 1)
// CHECK: kiln::gemmSkinnyPrefetchB<kiln::f16, 8, 1, true>(64, 2048, in{{[0-9]+}}, 64LL, 256);
// CHECK: kiln::gemmSkinny<kiln::f16, 3, 8>(64, 2048, loadA, in{{[0-9]+}}, 64LL, epilogue, kiln_smem);

// CHECK-LABEL: // [1x1024] x [1024x128], batch 1: 1 rows, few-row GEMM (gemm_skinny.cuh), split-K 8
// CHECK: kiln::gemmSkinny<kiln::f16, 1, 8>(128, 1024,

// CHECK-LABEL: // [2x128] x [128x96], batch 1, tensor cores
// CHECK-NOT: gemmSkinny

func.func private @rows_out_of_range() attributes {test.tile = #kiln.skinny_gemm_tile<rows = 17, split_k = 1>}
// VERIFY: skinny_gemm_tile rows must be in 1..16, got 17

// -----

func.func private @split_out_of_range() attributes {test.tile = #kiln.skinny_gemm_tile<rows = 4, split_k = 9>}
// VERIFY: skinny_gemm_tile split_k must be in 1..8 (a portable cluster), got 9

// -----

func.func private @preload_without_tensor_cores() attributes {test.tile = #kiln.skinny_gemm_tile<rows = 1, split_k = 1, preload = true>}
// VERIFY: skinny_gemm_tile preload needs tensor_cores = true (the weight is preloaded into the tensor-core path's rings)

// -----

func.func private @a_chunk_not_a_round() attributes {test.tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 1, tensor_cores = true, a_chunk = 100>}
// VERIFY: skinny_gemm_tile a_chunk must be 0 (the default) or a multiple of 128 in 128..2048 (whole rounds of the 8 warps' 16-row steps), got 100

// -----

func.func private @a_chunk_without_tensor_cores() attributes {test.tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 1, a_chunk = 512>}
// VERIFY: skinny_gemm_tile a_chunk needs tensor_cores = true (it is the tensor-core path's A chunk)

// -----

func.func private @min_blocks_out_of_range() attributes {test.tile = #kiln.skinny_gemm_tile<rows = 8, split_k = 1, tensor_cores = true, min_blocks_per_sm = 9>}
// VERIFY: skinny_gemm_tile min_blocks_per_sm must be in 0..8, got 9

// -----

func.func private @split_kv_one_slot() attributes {test.tile = #kiln.split_kv<slots = 1>}
// VERIFY: split_kv slots must be in 2..8 (a portable cluster), got 1

// -----

func.func private @split_kv_too_many() attributes {test.tile = #kiln.split_kv<slots = 9>}
// VERIFY: split_kv slots must be in 2..8 (a portable cluster), got 9
