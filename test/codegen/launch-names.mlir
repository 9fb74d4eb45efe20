// Launches named after the model (docs/artifact.md, "Launch metadata"): the artifact records
// each launch's name, layer, fused ops, ONNX nodes and cost, from the module paths of the nodes;
// legacy exports show them in node names ("/m/h.0/attn/c_attn/MatMul_2"), dynamo exports in
// the pkg.torch.onnx.name_scopes metadata entry. Token ids that index the 50-row embedding get
// the value range [0, 49]. kiln-run --info prints it all, --json gives the same as JSON.
// Inputs: gen_launch_names.py.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %S/Inputs/launch_names_legacy.onnx -o %t/legacy.kiln > /dev/null
// RUN: kiln-run %t/legacy.kiln --info | FileCheck %s --check-prefixes=INFO,LEGACY
// RUN: kiln-compile %S/Inputs/launch_names_dynamo.onnx -o %t/dynamo.kiln > /dev/null
// RUN: kiln-run %t/dynamo.kiln --info | FileCheck %s --check-prefixes=INFO,DYNAMO
// RUN: kiln-run %t/dynamo.kiln --json > %t/dynamo.json
// RUN: %python %S/check_launch_json.py %t/dynamo.json | FileCheck %s --check-prefix=JSON
// RUN: kiln-run %t/legacy.kiln --json --info > %t/legacy.json
// RUN: %python %S/check_launch_json.py %t/legacy.json | FileCheck %s --check-prefix=JSON
// Value ranges through a Cast and over two tables (the smaller wins); nodes without a module
// path give a launch without a layer, named by its ops.
// RUN: kiln-compile %S/Inputs/launch_names_ranges.onnx -o %t/ranges.kiln > /dev/null
// RUN: kiln-run %t/ranges.kiln --info | FileCheck %s --check-prefix=RANGES

// INFO: input_ids: i64[1x4] (32 bytes) values [0, 49]
// INFO: 0: kiln_k0
// INFO-NEXT: name: wte: gather
// INFO-NEXT: layer: wte
// INFO-NEXT: ops: gather
// LEGACY-NEXT: onnx nodes (1): /m/wte/Gather_1
// DYNAMO-NEXT: onnx nodes (1): node_Gather_1
// The gathered rows (4 x 8 f32) and the ids, not the whole 50-row table.
// INFO-NEXT: cost: 0 flop, 160 B read, 128 B written
// INFO: 1: kiln_k1
// INFO-NEXT: name: h.0.attn: matmul+add
// INFO-NEXT: layer: h.0.attn
// INFO-NEXT: ops: matmul add
// LEGACY-NEXT: onnx nodes (2): /m/h.0/attn/c_attn/MatMul_2, /m/h.0/Add_3
// DYNAMO-NEXT: onnx nodes (2): node_MatMul_2, node_Add_3
// 2*4*8*8 for the matmul, 32 for the add.
// INFO-NEXT: cost: 544 flop, 384 B read, 128 B written
// INFO: 2: kiln_k2
// INFO-NEXT: name: h.0.mlp: matmul+tanh
// INFO: 3: kiln_k1
// INFO-NEXT: name: h.1.attn: matmul+add
// INFO: 4: kiln_k2
// INFO-NEXT: name: h.1.mlp: matmul+tanh
// INFO: 5: kiln_k3
// INFO-NEXT: name: ln_f: layer_norm
// INFO-NEXT: layer: ln_f

// JSON: INPUT input_ids i64 [0, 49]
// JSON-NEXT: LAUNCH 0 wte | wte: gather | gather | 1 | flops=0
// JSON-NEXT: LAUNCH 1 h.0.attn | h.0.attn: matmul+add | matmul,add | 2 | flops>0
// JSON-NEXT: LAUNCH 2 h.0.mlp | h.0.mlp: matmul+tanh | matmul,tanh | 2 | flops>0
// JSON-NEXT: LAUNCH 3 h.1.attn | h.1.attn: matmul+add | matmul,add | 2 | flops>0
// JSON-NEXT: LAUNCH 4 h.1.mlp | h.1.mlp: matmul+tanh | matmul,tanh | 2 | flops>0
// JSON-NEXT: LAUNCH 5 ln_f | ln_f: layer_norm | layer_norm | 1 | flops>0

// RANGES: ids: i32[1x4] (16 bytes) values [0, 29]
// RANGES-NEXT: mask: i64[1x4] (32 bytes){{$}}
// RANGES: 0: kiln_k0
// RANGES-NEXT: name: cast+gather+add+mul{{$}}
// RANGES-NEXT: layer: -
// RANGES-NEXT: ops: cast gather gather add cast reshape mul
// RANGES-NEXT: onnx nodes (7): Cast_0, Gather_1, Gather_2, Add_3, Cast_4, Unsqueeze_5, Mul_6
// The ids, the 4 gathered rows of each table (2 x 128 B) and the mask.
// RANGES-NEXT: cost: 64 flop, 304 B read, 128 B written
