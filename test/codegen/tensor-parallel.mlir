// kiln-compile --tensor-parallel N: one artifact per rank (BASE.rank<r>.kiln),
// each with its weight shard and an all-reduce after every row-parallel GEMM;
// --tp-loopback: one artifact with every rank's shard and sums instead.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 -o %t/g1.kiln | FileCheck %s --check-prefix=TP1
// TP1: wrote {{.*}}g1.kiln ({{[0-9]+}} bytes, weights 2089984 bytes)
// TP1-NOT: tensor parallel

// Each rank holds the replicated weights (embeddings, norms) and half of
// every attention and MLP weight: 1303552 = 2089984 - half of 1572864.
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 2 -o %t/g.kiln | FileCheck %s --check-prefix=TP2
// TP2: wrote {{.*}}g.rank0.kiln ({{[0-9]+}} bytes, weights 1303552 bytes)
// TP2-NEXT: wrote {{.*}}g.rank1.kiln ({{[0-9]+}} bytes, weights 1303552 bytes)
// TP2-NEXT: tensor parallel: 2 ranks, 4 all-reduces per rank
// TP2-NEXT: kernels: 16 (8 distinct, in 4 CUDA modules; the largest rank's)
// TP2-NEXT: arena bytes: {{[0-9]+}} (sum of intermediate tensor bytes: {{[0-9]+}}; the largest rank's)
// The summary's arena is the largest rank's: at N = 4, rank 0's (its GEMMs before an all-reduce
// also read bias and residual) is larger than the last rank's.
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 4 -o %t/a4.kiln > %t/a4.summary
// RUN: kiln-run %t/a4.rank0.kiln --info > %t/a4.info0
// RUN: kiln-run %t/a4.rank3.kiln --info > %t/a4.info3
// RUN: cat %t/a4.summary %t/a4.info0 %t/a4.info3 | FileCheck %s --check-prefix=ARENA
// ARENA: arena bytes: [[ARENA:[0-9]+]] (sum of intermediate tensor bytes: {{[0-9]+}}; the largest rank's)
// ARENA: artifact: {{.*}}a4.rank0.kiln
// ARENA: arena_bytes: [[ARENA]]
// ARENA: artifact: {{.*}}a4.rank3.kiln
// ARENA-NOT: arena_bytes: [[ARENA]]
// RUN: test ! -e %t/g.kiln
// kiln-run finds the rank files by the same rule and reads the group and the
// all-reduces (in place, between launches) from each.
// RUN: kiln-run --tensor-parallel 2 %t/g.kiln --info | FileCheck %s --check-prefix=INFO
// RUN: kiln-run %t/g.rank1.kiln --info | FileCheck %s --check-prefix=INFO1
// INFO: artifact: {{.*}}g.rank0.kiln
// INFO: tensor_parallel: world_size 2, rank 0, group_hash 0x[[HASH:[0-9a-f]+]]
// INFO: collectives: 4
// INFO-NEXT: 0: all_reduce_sum f32 x 1024 (4.0 KiB) before launch 5
// INFO1: tensor_parallel: world_size 2, rank 1, group_hash
// --dump-cuda writes each rank's modules to DIR/rank<r>/ (the ranks' kernels differ: rank 0's
// output-projection GEMM adds bias and residual before the all-reduce, rank 1's does not).
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 2 -o %t/gd.kiln --dump-cuda %t/dump > /dev/null
// RUN: test -s %t/dump/rank0/module0.cu && test -s %t/dump/rank0/module0.ptx
// RUN: test -s %t/dump/rank1/module0.cu && test -s %t/dump/rank1/module0.ptx && test ! -e %t/dump/module0.cu
// RUN: not cmp -s %t/dump/rank0/module0.cu %t/dump/rank1/module0.cu
// Without a .kiln suffix the rank suffix is appended.
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 2 -o %t/plain > /dev/null
// RUN: test -e %t/plain.rank0.kiln && test -e %t/plain.rank1.kiln

// The loopback artifact holds every shard exactly once: the unsharded weight bytes.
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 4 --tp-loopback -o %t/loop4.kiln | FileCheck %s --check-prefix=LOOP
// LOOP: wrote {{.*}}loop4.kiln ({{[0-9]+}} bytes, weights 2089984 bytes)
// LOOP-NEXT: tensor parallel: 4 ranks in one loopback artifact (sums for the all-reduces)

// After the pipeline, each all-reduce follows the row-parallel GEMM's kernel
// directly: rank 0's GEMM adds the bias and the residual in its epilogue (they
// go into the sum once), rank 1's adds nothing, and the next layer norm reads
// the sum. So a rank has as many kernels as the single-GPU model (16).
// RUN: kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 2 --emit=kernels | FileCheck %s --check-prefix=KERNELS
// KERNELS: // tensor-parallel rank 0 of 2
// KERNELS: %[[P:[0-9]+]] = kiln.kernel @k{{[0-9]+}}_fused_matmul_add({{.*}}) -> tensor<1x8x128xf32> {
// KERNELS: kiln.add
// KERNELS: %[[S:[0-9]+]] = kiln.all_reduce %[[P]] : tensor<1x8x128xf32> -> tensor<1x8x128xf32>
// KERNELS-NEXT: kiln.kernel @k{{[0-9]+}}_fused_layer_norm(%[[S]]
// KERNELS-COUNT-3: kiln.all_reduce
// KERNELS: // tensor-parallel rank 1 of 2
// KERNELS-COUNT-4: kiln.all_reduce
// KERNELS-NOT: kiln.all_reduce

// Errors.
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 3 -o %t/g3.kiln 2>&1 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: error: node '{{.+}}' (Softmax): unsupported: tensor-parallel sharding over tp-size 3: 4 query heads are not divisible by 3
// RUN: test ! -e %t/g3.rank0.kiln
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 0 -o %t/g0.kiln 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: --tensor-parallel must be at least 1, got 0
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tp-loopback -o %t/l.kiln 2>&1 | FileCheck %s --check-prefix=LOOP1
// LOOP1: error: --tp-loopback needs --tensor-parallel N with N >= 2
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 2 -o - 2>&1 | FileCheck %s --check-prefix=STDOUT
// STDOUT: error: --tensor-parallel 2 writes one artifact per rank, which cannot go to stdout; give -o BASE.kiln
// A directory as -o (with or without a trailing slash) is an error, as for a single-GPU compile,
// instead of rank files beside it or hidden '.rank<r>.kiln' files in it.
// RUN: mkdir -p %t/outdir
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 2 -o %t/outdir 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 2 -o %t/outdir/ 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not kiln-compile %S/../../examples/models/gpt2_tiny.onnx --shape input_ids=1x8 --tensor-parallel 2 -o %t/newdir/ 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: error: --tensor-parallel 2: -o '{{.*}}dir{{/?}}' is a directory; give -o DIR/BASE.kiln, which writes DIR/BASE.rank0.kiln ... DIR/BASE.rank1.kiln
// RUN: test ! -e %t/outdir.rank0.kiln && test ! -e %t/outdir/.rank0.kiln && test ! -e %t/newdir
// RUN: not kiln-compile %S/Inputs/chain.onnx --shape x=2x8 --tensor-parallel 2 -o %t/c.kiln 2>&1 | FileCheck %s --check-prefix=NOTHING
// NOTHING: error: --tensor-parallel 2: '{{.*}}chain.onnx' has no attention or MLP that kiln-shard-tensor-parallel recognizes
