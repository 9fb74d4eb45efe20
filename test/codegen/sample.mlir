// kiln.sample is one block per row (or, for a large vocabulary on sm_90, a cluster of blocks per row
// finding the maximum) running kiln::sampleRow (cuda/sample.cuh) on the logits row and the row's
// temperature, top_k, top_p, seed and offset; the values are checked on a GPU by
// test/gpu/sample_test.cu (greedy equality, chi-square against the exact top-k / top-p
// distribution, reproducibility) and, in a generation step, by test/e2e/kv_cache_decode_test.py.
// RUN: rm -rf %t && kiln-compile %s -o %t.kiln --dump-cuda %t --quiet
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// RUN: kiln-run %t.kiln --info | FileCheck %s --check-prefix=GRID
// RUN: rm -rf %t.80 && kiln-compile %s -o %t.80.kiln --target sm_80 --dump-cuda %t.80 --quiet
// RUN: %if ptxas %{ for f in %t.80/*.ptx; do %cuda_home/bin/ptxas -arch=sm_80 $f -o %t.cubin || exit 1; done %}
// RUN: kiln-run %t.80.kiln --info | FileCheck %s --check-prefix=GRID80
// RUN: rm -rf %t.90.80 && kiln-compile %s -o %t.90.80.kiln --target sm_90,sm_80 --dump-cuda %t.90.80 --quiet
// RUN: %if ptxas %{ %cuda_home/bin/ptxas -arch=sm_80 %t.90.80/module0.ptx -o %t.cubin %}
// With sm_90 first the plan keeps the cluster; its sm_80 code (KILN_CLUSTER_DIMS empty) lets block 0
// do each row and the other blocks return.
// A 32000-way f16 row: 512 threads (about 32 elements each, at most 512), and the row's maximum
// over a cluster of 8 blocks (one pass of 8 loads per thread each; grid (8, rows)); below sm_90
// KILN_CLUSTER_DIMS is empty and block 0 does it all.
// CHECK: // sample over 32000 words: each row's maximum over a cluster of 8 blocks
// CHECK-NEXT: __launch_bounds__(512) KILN_CLUSTER_DIMS(8, 1, 1)
// CHECK: const long long row = blockIdx.y;
// CHECK-NEXT: const auto load = [&](long long k) { return kiln::ld(in0[row * 32000LL + k]); };
// CHECK-NEXT: kiln::sampleRow<decltype(load), true, 8>(load, 32000LL, in1[row], in2[row], in3[row],
// CHECK-NEXT: (unsigned long long)in4[row], (unsigned long long)in5[row], out0 + row);
// GRID: kiln_k0 (module module0) grid=(8,3,1) block=(512,1,1)
// Planned for sm_80 (the first --target): one block per row.
// GRID80: kiln_k0 (module module0) grid=(3,1,1) block=(512,1,1)
func.func @step(%logits: tensor<3x1x32000xf16> {kiln.name = "logits"},
                %t: tensor<3xf32> {kiln.name = "temperature"},
                %k: tensor<3xi32> {kiln.name = "top_k"},
                %p: tensor<3xf32> {kiln.name = "top_p"},
                %s: tensor<3xi64> {kiln.name = "seed"},
                %o: tensor<3xi64> {kiln.name = "offset"})
    -> (tensor<3x1xi64> {kiln.name = "next_token"}) {
  %n = kiln.sample %logits, %t, %k, %p, %s, %o : (tensor<3x1x32000xf16>, tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<3xi64>, tensor<3xi64>) -> tensor<3x1xi64>
  return %n : tensor<3x1xi64>
}
