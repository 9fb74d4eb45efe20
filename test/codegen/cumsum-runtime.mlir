// RUN: rm -rf %t && kiln-compile %S/Inputs/cumsum_runtime.onnx --shape x=3x8,mask=3x8 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// CumSum on run-time values (OPT/RoBERTa position ids come from
// CumSum(attention_mask)) is a kernel: one thread per line along the axis,
// scanning in order; fp32 accumulation for floats, int64 for integers.
// Values against onnxruntime: test/e2e/small_models_test.py.
// Axis 1 of [3, 8], inclusive:
// CHECK-DAG: const long long base = (line / 1LL) * 8LL + line % 1LL;
// Axis 0, exclusive and reversed: the sum so far is stored before the element is added.
// CHECK-DAG: const long long e = base + (3LL - 1 - k) * 8LL;
// CHECK-DAG: long long acc = 0;
