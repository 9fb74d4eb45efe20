// ArgMax / ArgMin over contiguous rows of at least 256 elements run one block per row
// (kiln::argReduceRow, cuda/norm.cuh) with the scan's result: the first extreme, the last with
// select_last_index, int64 compared as integers. The values are checked against onnxruntime on a
// GPU by test/e2e/small_models_test.py (arg_reduce_rows, with many ties).
// RUN: rm -rf %t.d && kiln-compile %S/../onnx/Inputs/arg_reduce_rows.onnx -o %t.kiln --dump-cuda %t.d --quiet
// RUN: cat %t.d/module*.cu | FileCheck %s
// RUN: %if ptxas %{ for f in %t.d/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}
// CHECK-DAG: kiln::argReduceRow<float, true, false, true>([&](long long k) { return kiln::ld(in0[base + k]); }, 300LL, out0 + blockIdx.x);
// CHECK-DAG: kiln::argReduceRow<float, true, true, true>(
// CHECK-DAG: kiln::argReduceRow<float, false, false, true>(
// CHECK-DAG: kiln::argReduceRow<long long, true, false, false>([&](long long k) { return (long long)in0[base + k]; }, 300LL,
// A 32000-element row (a vocabulary) gets 1024 threads; 300 elements keep 128.
// CHECK-DAG: __launch_bounds__(1024{{.*}}
// CHECK-DAG: kiln::argReduceRow<float, true, false, true>([&](long long k) { return kiln::ld(in0[base + k]); }, 32000LL, out0 + blockIdx.x);
// The short rows of arg_reduce.onnx (5 elements) keep the one-thread-per-row scan.
// RUN: rm -rf %t.s && kiln-compile %S/../onnx/Inputs/arg_reduce.onnx -o %t.s.kiln --dump-cuda %t.s --quiet
// RUN: cat %t.s/module*.cu | FileCheck %s --check-prefix=SHORT
// SHORT-NOT: argReduceRow
