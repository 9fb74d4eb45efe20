// kiln.sample is one block per row running kiln::sampleRow (cuda/sample.cuh) on the logits row
// and the row's temperature, top_k, top_p, seed and offset; the values are checked on a GPU by
// test/gpu/sample_test.cu (greedy equality, chi-square against the exact top-k / top-p
// distribution, reproducibility) and, in a generation step, by test/e2e/kv_cache_decode_test.py.
// RUN: rm -rf %t && kiln-compile %s -o %t.kiln --dump-cuda %t --quiet
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// A 32000-way f16 row: 512 threads (about 32 elements each, at most 512).
// CHECK: __launch_bounds__(512)
// CHECK: const long long row = blockIdx.x;
// CHECK-NEXT: kiln::sampleRow([&](long long k) { return kiln::ld(in0[row * 32000LL + k]); }, 32000LL, in1[row], in2[row], in3[row],
// CHECK-NEXT: (unsigned long long)in4[row], (unsigned long long)in5[row], out0 + row);
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
