// The sampler sums 2^-40 fixed-point weights of a whole row in 64 bits: vocabularies above 2^23
// are refused at code generation, naming the kernel and the limit.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not kiln-compile %s -o %t/m.kiln 2>&1 | FileCheck %s
// CHECK: error: unsupported: sample kernel @k{{[0-9]+}}_sample over a vocabulary of 8388609 exceeds 8388608 (2^23), the sampler's fixed-point limit
// RUN: test ! -e %t/m.kiln
func.func @wide(%logits: tensor<1x8388609xf32> {kiln.name = "logits"},
                %t: tensor<1xf32> {kiln.name = "temperature"},
                %k: tensor<1xi32> {kiln.name = "top_k"},
                %p: tensor<1xf32> {kiln.name = "top_p"},
                %s: tensor<1xi64> {kiln.name = "seed"},
                %o: tensor<1xi64> {kiln.name = "offset"})
    -> (tensor<1x1xi64> {kiln.name = "next_token"}) {
  %n = kiln.sample %logits, %t, %k, %p, %s, %o : (tensor<1x8388609xf32>, tensor<1xf32>, tensor<1xi32>, tensor<1xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1xi64>
  return %n : tensor<1x1xi64>
}
