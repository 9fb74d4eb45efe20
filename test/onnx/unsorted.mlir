// Node lists out of topological order: the importer sorts them (stable: a
// node list that is already sorted keeps its order), and a cycle is an error
// naming its nodes in data-flow order. Models from gen_onnx_tests.py's
// unsorted_graphs(); values against onnxruntime in test/e2e/small_models_test.py.
//
// RUN: kiln-compile %S/Inputs/unsorted_nodes.onnx --emit=graph | FileCheck %s --check-prefix=UNSORTED
// RUN: kiln-compile %S/Inputs/unsorted_stable.onnx --emit=graph | FileCheck %s --check-prefix=STABLE
// RUN: not kiln-compile %S/Inputs/error_cycle.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=CYCLE
// RUN: not kiln-compile %S/Inputs/error_cycle_self.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=SELF
// RUN: not kiln-compile %S/Inputs/error_cycle_three.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=THREE
// RUN: not kiln-compile %S/Inputs/error_cycle_long.onnx --emit=graph 2>&1 | FileCheck %s --check-prefix=LONG

// Every node is listed before its producers (mul, add, Constant half, tanh,
// relu, split, concat): each is imported after them.
// UNSORTED-LABEL: func.func @main
// UNSORTED-DAG: %[[HALF:.+]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// UNSORTED-DAG: %[[C:.+]] = kiln.constant dense<{{\[\[}}1.000000e+00], [-2.000000e+00]]> : tensor<2x1xf32>
// UNSORTED: %[[XC:.+]] = kiln.concat %arg0, %[[C]] {axis = 1 : i64}
// UNSORTED-NEXT: %[[A:.+]] = kiln.slice %[[XC]] {starts = array<i64: 0, 0>
// UNSORTED-NEXT: %[[B:.+]] = kiln.slice %[[XC]] {starts = array<i64: 0, 2>
// UNSORTED-NEXT: %[[T:.+]] = kiln.tanh %[[B]]
// UNSORTED-NEXT: %[[R:.+]] = kiln.relu %[[A]]
// UNSORTED-NEXT: %[[S:.+]] = kiln.add %[[R]], %[[T]]
// UNSORTED-NEXT: %[[Y:.+]] = kiln.mul %[[S]], %[[HALF]]
// UNSORTED-NEXT: return %[[Y]]

// add is listed first but reads exp and neg; exp and neg keep their file order.
// STABLE-LABEL: func.func @main
// STABLE-NEXT: %[[E:.+]] = kiln.exp %arg0
// STABLE-NEXT: %[[N:.+]] = kiln.neg %arg0
// STABLE-NEXT: kiln.add %[[N]], %[[E]]

// The cycle is printed from its node that comes first in the file.
// CYCLE: error: the graph of '{{.*}}error_cycle.onnx' has a cycle (ONNX graphs are acyclic): node 'relu' (Relu) feeds 'w' to 'neg' (Neg), which feeds 'z' to 'relu' (Relu)
// SELF: error: the graph of '{{.*}}error_cycle_self.onnx' has a cycle (ONNX graphs are acyclic): node 'acc' (Add) reads its own output 's'
// The node 'out' that reads the cycle (listed first) is not part of it.
// THREE: error: the graph of '{{.*}}error_cycle_three.onnx' has a cycle (ONNX graphs are acyclic): node 'n1' (Add) feeds 'c1' to 'n2' (Neg), which feeds 'c2' to 'n3' (Exp), which feeds 'c3' to 'n1' (Add)
// Long cycles are cut after eight edges.
// LONG: error: the graph of '{{.*}}error_cycle_long.onnx' has a cycle (ONNX graphs are acyclic): node 'n0' (Neg) feeds 't0' to 'n1' (Neg), which feeds 't1' to 'n2' (Neg), {{.*}}, which feeds 't7' to 'n8' (Neg), ... (10 nodes in the cycle)
