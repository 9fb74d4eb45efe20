//===- KilnBase.td - kiln dialect definition ---------------*- tablegen -*-===//
//
// The `kiln` dialect: graph-level transformer ops with value semantics, the
// `kiln.kernel` region op that fusion produces, and the base class of all ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BASE_TD
#define KILN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Graph-level transformer ops and fused GPU kernels for the kiln compiler.";
  let description = [{
    The `kiln` dialect is the single IR of the kiln compiler between the ONNX
    importer and CUDA code generation.

    At the *graph level* every op has value semantics on statically shaped,
    ranked tensors (`tensor<2x16x128xf32>`). Symbolic ONNX dimensions are
    specialized by `kiln-compile --shape` before import, so shapes are always
    static. Element types are the builtin `f32`, `f16`, `bf16`, `i64`, `i32`
    and `i1` (ONNX bool). Pointwise ops follow numpy (ONNX multidirectional)
    broadcasting; the verifier checks the result shape. Ops whose operands are
    all constants fold, which is how ONNX shape and mask subgraphs disappear.

    Fusion groups graph ops into `kiln.kernel` regions; each region becomes
    one CUDA kernel. Memory planning annotates kernels with arena offsets.
    Codegen reads the kernel bodies and emits CUDA C++.

    The *kernel plan* is IR too: the module carries the target GPU
    (`kiln.target = #kiln.target<...>`, set by `kiln-compile` from the first
    `--target`), the function its precision (`kiln.precision =
    #kiln.precision<fp16>`), and each kernel the tile kiln-select-tiles chose
    for it (`kiln.gemm_tile`, `kiln.mma_tile`, `kiln.wgmma_tile`,
    `kiln.attention_tile`, with a `kiln.tile_reason` for people). These are
    typed attributes with verifiers that hold the rules of the device
    templates, so codegen reads typed getters and never re-checks them; the
    dialect checks that each `kiln.*` plan attribute has its kind and that
    tiles sit on kernels.
  }];
  let extraClassDeclaration = [{
    /// Weight transforms shared by the programs compiled in this context (ConstantCache.h).
    ConstantCache &getConstantCache() { return *constantCache; }

  private:
    std::unique_ptr<ConstantCache> constantCache;

  public:
  }];
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_BASE_TD
