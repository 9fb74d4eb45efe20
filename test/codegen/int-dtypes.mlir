// RUN: rm -rf %t && kiln-compile %S/Inputs/int_dtypes.onnx --shape a=3x16,b=3x16,c=3x16,d=3x16,e=3x16 -o %t.kiln --dump-cuda %t > %t.summary
// RUN: cat %t/module*.cu | FileCheck %s
// RUN: kiln-compile %S/Inputs/int_dtypes.onnx --shape a=3x16,b=3x16,c=3x16,d=3x16,e=3x16 --emit=graph | FileCheck %s --check-prefix=GRAPH
// RUN: kiln-run %t.kiln --info | FileCheck %s --check-prefix=INFO
// RUN: %if ptxas %{ for f in %t/*.ptx; do %cuda_home/bin/ptxas -arch=sm_90a $f -o %t.cubin || exit 1; done %}

// Every integer element type (model: save_int_dtypes() in gen_codegen_tests.py; values
// checked on a GPU by test/e2e/small_models_test.py). Each is its own C type, so C's
// arithmetic, comparison and truncating stores give ONNX's wrapping results; unsigned
// literals are unsigned numbers (a uint8 200 or a uint64 2^63 + 5 compares as large).
// CHECK-DAG: const unsigned char t1 = (t0 + (200u));
// CHECK-DAG: const unsigned char t1 = (t0 > (128u) ? t0 : (128u));
// CHECK-DAG: kiln::umod(t0, (5u))
// CHECK-DAG: const bool t1 = (t0 < (100u));
// CHECK-DAG: const signed char t1 = (-t0);
// CHECK-DAG: kiln::imod(t0, (5))
// CHECK-DAG: const short t1 = (t0 * t0);
// CHECK-DAG: const unsigned t1 = (t0 + (4000000000u));
// CHECK-DAG: const unsigned long long t1 = (t0 > (9223372036854775813ULL) ? t0 : (9223372036854775813ULL));
// CHECK-DAG: const unsigned long long t1 = (t0 - (1ULL));
// ArgMax and reductions on uint64 accumulate as unsigned (a signed compare would lose 2^63).
// CHECK-DAG: unsigned long long best = (unsigned long long)in0[base];

// The constant folder reads unsigned constants zero-extended and wraps at the element width:
// 200 + (100 + k) = 44 + k, then + max(200, 100 + k) = 200.
// GRAPH: func.func @main(%arg0: tensor<3x16xui8> {kiln.name = "a"}, %arg1: tensor<3x16xi8> {kiln.name = "b"}, %arg2: tensor<3x16xi16> {kiln.name = "c"}, %arg3: tensor<3x16xui32> {kiln.name = "d"}, %arg4: tensor<3x16xui64> {kiln.name = "e"})
// GRAPH: kiln.constant dense<[244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 0, 1, 2, 3]> : tensor<16xui8>

// The artifact records each dtype.
// INFO: a: u8[3x16] (48 bytes)
// INFO-NEXT: b: i8[3x16] (48 bytes)
// INFO-NEXT: c: i16[3x16] (96 bytes)
// INFO-NEXT: d: u32[3x16] (192 bytes)
// INFO-NEXT: e: u64[3x16] (384 bytes)
