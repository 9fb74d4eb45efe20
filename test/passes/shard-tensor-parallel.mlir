// RUN: kiln-opt %s --split-input-file --kiln-shard-tensor-parallel="tp-size=2 rank=0" | FileCheck %s --check-prefix=R0
// RUN: kiln-opt %s --split-input-file --kiln-shard-tensor-parallel="tp-size=2 rank=1" | FileCheck %s --check-prefix=R1
// Loopback: both ranks' graphs in one function, a sum for each all-reduce.
// RUN: kiln-opt %s --split-input-file --kiln-shard-tensor-parallel="tp-size=2 loopback=true" | FileCheck %s --check-prefix=LB
// tp-size=4 on the GQA layer (4 query heads, 2 KV heads): KV heads are replicated.
// (The 2-head GPT-2 layer fails at tp-size=4, so kiln-opt exits non-zero.)
// RUN: not kiln-opt %s --split-input-file --kiln-shard-tensor-parallel="tp-size=4 rank=3" 2>&1 | FileCheck %s --check-prefix=R4
// tp-size=1 changes nothing:
// RUN: kiln-opt %s --split-input-file > %t.unsharded
// RUN: kiln-opt %s --split-input-file --kiln-shard-tensor-parallel=tp-size=1 > %t.tp1
// RUN: diff %t.unsharded %t.tp1

// A GPT-2 layer after kiln-raise-attention: fused QKV weight [8, 24]
// (2 heads, D = 4; weight element [k][c] = 100 k + c, bias 1000 + c, so the
// kept columns can be read off), output projection with bias, GELU-like MLP
// of width 16. Rank r keeps head r's columns of Q, K and V (per head, not a
// column block of the fused weight), rows 4r..4r+3 of the output projection
// and an all_reduce; the MLP up projection keeps columns 8r..8r+7 and its
// bias, the down projection those rows, again followed by an all_reduce.
// The bias and residual adds after each row-parallel GEMM go into the sum
// once: rank 0 adds them before its all_reduce, rank 1 drops them.
// R0-LABEL: func.func @gpt2_layer
// R0: %[[W:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.600000e+01, 1.700000e+01, 1.800000e+01, 1.900000e+01], [1.000000e+02, 1.010000e+02, 1.020000e+02, 1.030000e+02, 1.080000e+02,
// R0-SAME: tensor<8x12xf32>
// R0-NEXT: %[[B:.+]] = kiln.constant dense<[1.000000e+03, 1.001000e+03, 1.002000e+03, 1.003000e+03, 1.008000e+03, 1.009000e+03, 1.010000e+03, 1.011000e+03, 1.016000e+03, 1.017000e+03, 1.018000e+03, 1.019000e+03]> : tensor<12xf32>
// R0-NEXT: %[[QKV:.+]] = kiln.matmul %{{.+}}, %[[W]] : tensor<1x4x8xf32>, tensor<8x12xf32> -> tensor<1x4x12xf32>
// R0-NEXT: %[[QKVB:.+]] = kiln.add %[[QKV]], %[[B]] : tensor<1x4x12xf32>, tensor<12xf32> -> tensor<1x4x12xf32>
// R0-NEXT: kiln.slice %[[QKVB]] {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x12xf32> -> tensor<1x4x4xf32>
// R0-NEXT: kiln.slice %[[QKVB]] {starts = array<i64: 0, 0, 4>, steps = array<i64: 1, 1, 1>} : tensor<1x4x12xf32> -> tensor<1x4x4xf32>
// R0-NEXT: kiln.slice %[[QKVB]] {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x12xf32> -> tensor<1x4x4xf32>
// R0-COUNT-3: kiln.reshape {{.+}} : tensor<1x4x4xf32> -> tensor<1x4x1x4xf32>
// R0-COUNT-3: kiln.transpose {{.+}} : tensor<1x4x1x4xf32> -> tensor<1x1x4x4xf32>
// R0-NEXT: kiln.attention {{.+}} : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x4x1x4xf32>
// R0-NEXT: %[[O:.+]] = kiln.reshape %{{.+}} : tensor<1x4x1x4xf32> -> tensor<1x4x4xf32>
// R0-NEXT: %[[WO:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, {{.*}}], [1.000000e+01, {{.*}}], [2.000000e+01, {{.*}}], [3.000000e+01, {{.*}}]]> : tensor<4x8xf32>
// R0-NEXT: %[[BO:.+]] = kiln.constant dense<[5.000000e-01,
// R0-NEXT: %[[P:.+]] = kiln.matmul %[[O]], %[[WO]] : tensor<1x4x4xf32>, tensor<4x8xf32> -> tensor<1x4x8xf32>
// R0-NEXT: %[[PB:.+]] = kiln.add %[[P]], %[[BO]] : tensor<1x4x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
// R0-NEXT: %[[PR:.+]] = kiln.add %[[PB]], %arg0
// R0-NEXT: %[[RES:.+]] = kiln.all_reduce %[[PR]] : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
// R0-NEXT: kiln.layer_norm %[[RES]]
// R0-NEXT: %[[WFC:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00], [1.000000e+02,
// R0-SAME: tensor<8x8xf32>
// R0-NEXT: kiln.constant dense<[1.000000e+03, 1.001000e+03, 1.002000e+03, 1.003000e+03, 1.004000e+03, 1.005000e+03, 1.006000e+03, 1.007000e+03]> : tensor<8xf32>
// R0: kiln.matmul %{{.+}}, %[[WFC]] : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
// R0: kiln.tanh %{{.+}} : tensor<1x4x8xf32>
// R0: %[[WP:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, {{.*}}], [1.000000e+01, {{.*}}], [7.000000e+01, {{.*}}]]> : tensor<8x8xf32>
// R0: %[[D:.+]] = kiln.matmul %{{.+}}, %[[WP]] : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
// R0-NEXT: %[[DB:.+]] = kiln.add %[[D]], %{{.+}} : tensor<1x4x8xf32>, tensor<8xf32>
// R0-NEXT: %[[DR:.+]] = kiln.add %[[DB]], %[[RES]]
// R0-NEXT: %[[DS:.+]] = kiln.all_reduce %[[DR]]
// R0-NEXT: return %[[DS]]
// R0-NOT: kiln.all_reduce

// Loopback: rank 0 runs up to its first all-reduce (its partial output
// projection plus bias and residual), then rank 1 up to its own (the bare
// partial); the sum is the residual stream that both ranks read on.
// LB-LABEL: func.func @gpt2_layer
// LB-NOT: kiln.all_reduce
// LB: kiln.matmul %{{.+}} : tensor<1x4x8xf32>, tensor<8x12xf32> -> tensor<1x4x12xf32>
// LB: %[[P0M:[0-9]+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<1x4x4xf32>, tensor<4x8xf32> -> tensor<1x4x8xf32>
// LB-NEXT: %[[P0B:[0-9]+]] = kiln.add %[[P0M]], %{{.+}} : tensor<1x4x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
// LB-NEXT: %[[P0:[0-9]+]] = kiln.add %[[P0B]], %arg0
// LB: kiln.matmul %{{.+}} : tensor<1x4x8xf32>, tensor<8x12xf32> -> tensor<1x4x12xf32>
// LB: %[[P1:[0-9]+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<1x4x4xf32>, tensor<4x8xf32> -> tensor<1x4x8xf32>
// LB-NEXT: %[[S:[0-9]+]] = kiln.add %[[P0]], %[[P1]] : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
// LB: kiln.tanh
// LB: %[[D0M:[0-9]+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
// LB-NEXT: %[[D0B:[0-9]+]] = kiln.add %[[D0M]]
// LB-NEXT: %[[D0:[0-9]+]] = kiln.add %[[D0B]], %[[S]]
// LB: kiln.tanh
// LB: %[[D1:[0-9]+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
// LB-NEXT: kiln.add %[[D0]], %[[D1]] : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
// LB-NOT: kiln.all_reduce
// LB: return

// R1-LABEL: func.func @gpt2_layer
// R1: kiln.constant dense<{{\[\[}}4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01, 2.000000e+01, 2.100000e+01, 2.200000e+01, 2.300000e+01], [1.040000e+02,
// R1-SAME: tensor<8x12xf32>
// R1-NEXT: kiln.constant dense<[1.004000e+03, 1.005000e+03, 1.006000e+03, 1.007000e+03, 1.012000e+03, 1.013000e+03, 1.014000e+03, 1.015000e+03, 1.020000e+03, 1.021000e+03, 1.022000e+03, 1.023000e+03]> : tensor<12xf32>
// R1: kiln.slice {{.+}} {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x12xf32> -> tensor<1x4x4xf32>
// R1: %[[WO:.+]] = kiln.constant dense<{{\[\[}}4.000000e+01, {{.*}}], [5.000000e+01, {{.*}}], [6.000000e+01, {{.*}}], [7.000000e+01, {{.*}}]]> : tensor<4x8xf32>
// R1: %[[P:.+]] = kiln.matmul %{{.+}}, %[[WO]]
// R1-NEXT: %[[PS:.+]] = kiln.all_reduce %[[P]]
// R1-NEXT: kiln.layer_norm %[[PS]]
// R1: kiln.constant dense<{{\[\[}}8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01], [1.080000e+02,
// R1-NEXT: kiln.constant dense<[1.008000e+03, 1.009000e+03, 1.010000e+03, 1.011000e+03, 1.012000e+03, 1.013000e+03, 1.014000e+03, 1.015000e+03]> : tensor<8xf32>
// R1: %[[WP:.+]] = kiln.constant dense<{{\[\[}}8.000000e+01, {{.*}}], [1.500000e+02, {{.*}}]]> : tensor<8x8xf32>
// R1: %[[D:.+]] = kiln.matmul %{{.+}}, %[[WP]]
// R1-NEXT: kiln.all_reduce %[[D]]
func.func @gpt2_layer(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %g = kiln.constant dense<1.0> : tensor<8xf32>
  %beta = kiln.constant dense<0.0> : tensor<8xf32>
  %h = kiln.layer_norm %x, %g, %beta {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0], [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0], [200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0, 216.0, 217.0, 218.0, 219.0, 220.0, 221.0, 222.0, 223.0], [300.0, 301.0, 302.0, 303.0, 304.0, 305.0, 306.0, 307.0, 308.0, 309.0, 310.0, 311.0, 312.0, 313.0, 314.0, 315.0, 316.0, 317.0, 318.0, 319.0, 320.0, 321.0, 322.0, 323.0], [400.0, 401.0, 402.0, 403.0, 404.0, 405.0, 406.0, 407.0, 408.0, 409.0, 410.0, 411.0, 412.0, 413.0, 414.0, 415.0, 416.0, 417.0, 418.0, 419.0, 420.0, 421.0, 422.0, 423.0], [500.0, 501.0, 502.0, 503.0, 504.0, 505.0, 506.0, 507.0, 508.0, 509.0, 510.0, 511.0, 512.0, 513.0, 514.0, 515.0, 516.0, 517.0, 518.0, 519.0, 520.0, 521.0, 522.0, 523.0], [600.0, 601.0, 602.0, 603.0, 604.0, 605.0, 606.0, 607.0, 608.0, 609.0, 610.0, 611.0, 612.0, 613.0, 614.0, 615.0, 616.0, 617.0, 618.0, 619.0, 620.0, 621.0, 622.0, 623.0], [700.0, 701.0, 702.0, 703.0, 704.0, 705.0, 706.0, 707.0, 708.0, 709.0, 710.0, 711.0, 712.0, 713.0, 714.0, 715.0, 716.0, 717.0, 718.0, 719.0, 720.0, 721.0, 722.0, 723.0]]> : tensor<8x24xf32>
  %b = kiln.constant dense<[1000.0, 1001.0, 1002.0, 1003.0, 1004.0, 1005.0, 1006.0, 1007.0, 1008.0, 1009.0, 1010.0, 1011.0, 1012.0, 1013.0, 1014.0, 1015.0, 1016.0, 1017.0, 1018.0, 1019.0, 1020.0, 1021.0, 1022.0, 1023.0]> : tensor<24xf32>
  %qkv0 = kiln.matmul %h, %w : tensor<1x4x8xf32>, tensor<8x24xf32> -> tensor<1x4x24xf32>
  %qkv = kiln.add %qkv0, %b : tensor<1x4x24xf32>, tensor<24xf32> -> tensor<1x4x24xf32>
  %q = kiln.slice %qkv {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %k = kiln.slice %qkv {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %v = kiln.slice %qkv {starts = array<i64: 0, 0, 16>, steps = array<i64: 1, 1, 1>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %q4 = kiln.reshape %q : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %k4 = kiln.reshape %k : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %v4 = kiln.reshape %v : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %qt = kiln.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
  %kt = kiln.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
  %vt = kiln.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
  %o = kiln.attention %qt, %kt, %vt {bshd_output = true, causal = true, scale = 5.000000e-01 : f64, zero_masked_rows = true} : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x4x2x4xf32>
  %o2 = kiln.reshape %o : tensor<1x4x2x4xf32> -> tensor<1x4x8xf32>
  %wo = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0], [30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0], [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0], [50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0], [60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0], [70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0]]> : tensor<8x8xf32>
  %bo = kiln.constant dense<[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5]> : tensor<8xf32>
  %p = kiln.matmul %o2, %wo : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  %pb = kiln.add %p, %bo : tensor<1x4x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %res = kiln.add %pb, %x : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %h2 = kiln.layer_norm %res, %g, %beta {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %wfc = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0], [200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0], [300.0, 301.0, 302.0, 303.0, 304.0, 305.0, 306.0, 307.0, 308.0, 309.0, 310.0, 311.0, 312.0, 313.0, 314.0, 315.0], [400.0, 401.0, 402.0, 403.0, 404.0, 405.0, 406.0, 407.0, 408.0, 409.0, 410.0, 411.0, 412.0, 413.0, 414.0, 415.0], [500.0, 501.0, 502.0, 503.0, 504.0, 505.0, 506.0, 507.0, 508.0, 509.0, 510.0, 511.0, 512.0, 513.0, 514.0, 515.0], [600.0, 601.0, 602.0, 603.0, 604.0, 605.0, 606.0, 607.0, 608.0, 609.0, 610.0, 611.0, 612.0, 613.0, 614.0, 615.0], [700.0, 701.0, 702.0, 703.0, 704.0, 705.0, 706.0, 707.0, 708.0, 709.0, 710.0, 711.0, 712.0, 713.0, 714.0, 715.0]]> : tensor<8x16xf32>
  %bfc = kiln.constant dense<[1000.0, 1001.0, 1002.0, 1003.0, 1004.0, 1005.0, 1006.0, 1007.0, 1008.0, 1009.0, 1010.0, 1011.0, 1012.0, 1013.0, 1014.0, 1015.0]> : tensor<16xf32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %f = kiln.matmul %h2, %wfc : tensor<1x4x8xf32>, tensor<8x16xf32> -> tensor<1x4x16xf32>
  %fb = kiln.add %f, %bfc : tensor<1x4x16xf32>, tensor<16xf32> -> tensor<1x4x16xf32>
  %t = kiln.tanh %fb : tensor<1x4x16xf32>
  %fh = kiln.mul %fb, %half : tensor<1x4x16xf32>, tensor<f32> -> tensor<1x4x16xf32>
  %gl = kiln.mul %fh, %t : tensor<1x4x16xf32>, tensor<1x4x16xf32> -> tensor<1x4x16xf32>
  %wp = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0], [30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0], [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0], [50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0], [60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0], [70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0], [80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0], [90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0], [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0], [110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0], [120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0], [130.0, 131.0, 132.0, 133.0, 134.0, 135.0, 136.0, 137.0], [140.0, 141.0, 142.0, 143.0, 144.0, 145.0, 146.0, 147.0], [150.0, 151.0, 152.0, 153.0, 154.0, 155.0, 156.0, 157.0]]> : tensor<16x8xf32>
  %bp = kiln.constant dense<[0.2, 1.2, 2.2, 3.2, 4.2, 5.2, 6.2, 7.2]> : tensor<8xf32>
  %d = kiln.matmul %gl, %wp : tensor<1x4x16xf32>, tensor<16x8xf32> -> tensor<1x4x8xf32>
  %db = kiln.add %d, %bp : tensor<1x4x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %out = kiln.add %db, %res : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %out : tensor<1x4x8xf32>
}

// -----

// A Llama layer after kiln-raise-attention, kiln-fuse-sibling-gemms and
// kiln-interleave-glu: grouped-query attention with 4 query heads and 2 KV
// heads (D = 2) from one fused weight [8, 8 + 4 + 4], rotary Q and K with
// [1, 1, S, D] tables (replicated), no biases, residual add before the
// out-projection result in operand order, and a SwiGLU MLP of width 8 whose
// gate/up weight [8, 16] is interleaved (gate = Y[..., 0::2], up =
// Y[..., 1::2]). Rank r keeps query heads 2r, 2r+1 (columns 4r..4r+3), KV head
// r (columns 8+2r, 9+2r and 12+2r, 13+2r) and gate/up columns 8r..8r+7 (the
// pairs of MLP columns 4r..4r+3).
// R0-LABEL: func.func @llama_gqa_layer
// R0: kiln.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 8.000000e+00, 9.000000e+00, 1.200000e+01, 1.300000e+01], [1.000000e+02,
// R0-SAME: tensor<8x8xf32>
// R0: kiln.slice {{.+}} {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x8xf32> -> tensor<1x4x4xf32>
// R0-NEXT: kiln.slice {{.+}} {starts = array<i64: 0, 0, 4>, steps = array<i64: 1, 1, 1>} : tensor<1x4x8xf32> -> tensor<1x4x2xf32>
// R0-NEXT: kiln.slice {{.+}} {starts = array<i64: 0, 0, 6>, steps = array<i64: 1, 1, 1>} : tensor<1x4x8xf32> -> tensor<1x4x2xf32>
// R0: kiln.rotary {{.+}} : tensor<1x2x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<1x2x4x2xf32>
// R0-NEXT: kiln.rotary {{.+}} : tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<1x1x4x2xf32>
// R0-NEXT: kiln.attention {{.+}} : tensor<1x2x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<1x2x4x2xf32>
// R0-NEXT: kiln.transpose {{.+}} : tensor<1x2x4x2xf32> -> tensor<1x4x2x2xf32>
// R0-NEXT: kiln.reshape {{.+}} : tensor<1x4x2x2xf32> -> tensor<1x4x4xf32>
// R0-NEXT: %[[WO:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, {{.*}}], [3.000000e+01, {{.*}}]]> : tensor<4x8xf32>
// R0-NEXT: %[[P:.+]] = kiln.matmul %{{.+}}, %[[WO]] : tensor<1x4x4xf32>, tensor<4x8xf32> -> tensor<1x4x8xf32>
// R0-NEXT: %[[PR:.+]] = kiln.add %arg0, %[[P]]
// R0-NEXT: %[[RES:.+]] = kiln.all_reduce %[[PR]]
// R0: kiln.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00], [1.000000e+02,
// R0-SAME: tensor<8x8xf32>
// R0-NEXT: kiln.matmul {{.+}} -> tensor<1x4x8xf32>
// R0-NEXT: kiln.slice {{.+}} {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>} : tensor<1x4x8xf32> -> tensor<1x4x4xf32>
// R0-NEXT: kiln.slice {{.+}} {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>} : tensor<1x4x8xf32> -> tensor<1x4x4xf32>
// R0: %[[WD:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, {{.*}}], [3.000000e+01, {{.*}}]]> : tensor<4x8xf32>
// R0-NEXT: %[[D:.+]] = kiln.matmul %{{.+}}, %[[WD]] : tensor<1x4x4xf32>, tensor<4x8xf32> -> tensor<1x4x8xf32>
// R0-NEXT: %[[DR:.+]] = kiln.add %[[RES]], %[[D]]
// R0-NEXT: kiln.all_reduce %[[DR]]

// R1-LABEL: func.func @llama_gqa_layer
// R1: kiln.constant dense<{{\[\[}}4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 1.000000e+01, 1.100000e+01, 1.400000e+01, 1.500000e+01], [1.040000e+02,
// R1: %[[WO:.+]] = kiln.constant dense<{{\[\[}}4.000000e+01, {{.*}}], [7.000000e+01, {{.*}}]]> : tensor<4x8xf32>
// R1-NEXT: %[[P:.+]] = kiln.matmul %{{.+}}, %[[WO]]
// R1-NEXT: kiln.all_reduce %[[P]]
// R1: kiln.constant dense<{{\[\[}}8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01], [1.080000e+02,
// R1: kiln.slice {{.+}} {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>} : tensor<1x4x8xf32> -> tensor<1x4x4xf32>
// R1: %[[WD:.+]] = kiln.constant dense<{{\[\[}}4.000000e+01, {{.*}}], [7.000000e+01, {{.*}}]]> : tensor<4x8xf32>
// R1-NEXT: %[[D:.+]] = kiln.matmul %{{.+}}, %[[WD]]
// R1-NEXT: kiln.all_reduce %[[D]]

// Rank 3 of 4 keeps query head 3 (columns 6-7) and KV head 1 (key columns
// 10-11, value columns 14-15), the KV head its query head reads; ranks 2 and 3
// hold the same KV head.
// R4: error: unsupported: tensor-parallel sharding over tp-size 4: 2 query heads are not divisible by 4
// R4-LABEL: func.func @llama_gqa_layer
// R4: kiln.constant dense<{{\[\[}}6.000000e+00, 7.000000e+00, 1.000000e+01, 1.100000e+01, 1.400000e+01, 1.500000e+01], [1.060000e+02,
// R4-SAME: tensor<8x6xf32>
// R4: kiln.attention {{.+}} : tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<1x1x4x2xf32>
// R4: kiln.all_reduce
// R4: kiln.all_reduce

func.func @llama_gqa_layer(%x: tensor<1x4x8xf32>, %cos: tensor<1x1x4x2xf32>, %sin: tensor<1x1x4x2xf32>) -> tensor<1x4x8xf32> {
  %g = kiln.constant dense<1.0> : tensor<8xf32>
  %h = kiln.rms_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-06 : f32} : tensor<1x4x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %w = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0], [200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0], [300.0, 301.0, 302.0, 303.0, 304.0, 305.0, 306.0, 307.0, 308.0, 309.0, 310.0, 311.0, 312.0, 313.0, 314.0, 315.0], [400.0, 401.0, 402.0, 403.0, 404.0, 405.0, 406.0, 407.0, 408.0, 409.0, 410.0, 411.0, 412.0, 413.0, 414.0, 415.0], [500.0, 501.0, 502.0, 503.0, 504.0, 505.0, 506.0, 507.0, 508.0, 509.0, 510.0, 511.0, 512.0, 513.0, 514.0, 515.0], [600.0, 601.0, 602.0, 603.0, 604.0, 605.0, 606.0, 607.0, 608.0, 609.0, 610.0, 611.0, 612.0, 613.0, 614.0, 615.0], [700.0, 701.0, 702.0, 703.0, 704.0, 705.0, 706.0, 707.0, 708.0, 709.0, 710.0, 711.0, 712.0, 713.0, 714.0, 715.0]]> : tensor<8x16xf32>
  %qkv = kiln.matmul %h, %w : tensor<1x4x8xf32>, tensor<8x16xf32> -> tensor<1x4x16xf32>
  %q = kiln.slice %qkv {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %k = kiln.slice %qkv {starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x4xf32>
  %v = kiln.slice %qkv {starts = array<i64: 0, 0, 12>, steps = array<i64: 1, 1, 1>} : tensor<1x4x16xf32> -> tensor<1x4x4xf32>
  %q4 = kiln.reshape %q : tensor<1x4x8xf32> -> tensor<1x4x4x2xf32>
  %k4 = kiln.reshape %k : tensor<1x4x4xf32> -> tensor<1x4x2x2xf32>
  %v4 = kiln.reshape %v : tensor<1x4x4xf32> -> tensor<1x4x2x2xf32>
  %qt = kiln.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
  %kt = kiln.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x2xf32> -> tensor<1x2x4x2xf32>
  %vt = kiln.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x2xf32> -> tensor<1x2x4x2xf32>
  %qr = kiln.rotary %qt, %cos, %sin : tensor<1x4x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<1x4x4x2xf32>
  %kr = kiln.rotary %kt, %cos, %sin : tensor<1x2x4x2xf32>, tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32> -> tensor<1x2x4x2xf32>
  %o = kiln.attention %qr, %kr, %vt {bshd_output = false, causal = true, scale = 7.070000e-01 : f64, zero_masked_rows = false} : tensor<1x4x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32> -> tensor<1x4x4x2xf32>
  %ot = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
  %o2 = kiln.reshape %ot : tensor<1x4x4x2xf32> -> tensor<1x4x8xf32>
  %wo = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0], [30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0], [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0], [50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0], [60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0], [70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0]]> : tensor<8x8xf32>
  %p = kiln.matmul %o2, %wo : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  %res = kiln.add %x, %p : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %h2 = kiln.rms_norm %res, %g {axis = 2 : i64, epsilon = 1.0e-06 : f32} : tensor<1x4x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %wgu = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0], [200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0], [300.0, 301.0, 302.0, 303.0, 304.0, 305.0, 306.0, 307.0, 308.0, 309.0, 310.0, 311.0, 312.0, 313.0, 314.0, 315.0], [400.0, 401.0, 402.0, 403.0, 404.0, 405.0, 406.0, 407.0, 408.0, 409.0, 410.0, 411.0, 412.0, 413.0, 414.0, 415.0], [500.0, 501.0, 502.0, 503.0, 504.0, 505.0, 506.0, 507.0, 508.0, 509.0, 510.0, 511.0, 512.0, 513.0, 514.0, 515.0], [600.0, 601.0, 602.0, 603.0, 604.0, 605.0, 606.0, 607.0, 608.0, 609.0, 610.0, 611.0, 612.0, 613.0, 614.0, 615.0], [700.0, 701.0, 702.0, 703.0, 704.0, 705.0, 706.0, 707.0, 708.0, 709.0, 710.0, 711.0, 712.0, 713.0, 714.0, 715.0]]> : tensor<8x16xf32>
  %gu = kiln.matmul %h2, %wgu : tensor<1x4x8xf32>, tensor<8x16xf32> -> tensor<1x4x16xf32>
  %gate = kiln.slice %gu {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %up = kiln.slice %gu {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 2>} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %sg = kiln.sigmoid %gate : tensor<1x4x8xf32>
  %silu = kiln.mul %gate, %sg : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %m = kiln.mul %silu, %up : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %wd = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0], [30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0], [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0], [50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0], [60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0], [70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0]]> : tensor<8x8xf32>
  %d = kiln.matmul %m, %wd : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  %out = kiln.add %res, %d : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %out : tensor<1x4x8xf32>
}
