//===- LaunchMetadata.h - names, ONNX nodes and costs of launches -*- C++ -*-===//
//
// What the artifact records about each kernel launch so that tools can say which part of the
// model it computes: a readable name ("h.0.attn: matmul+add"), the kiln ops fused into it, the
// ONNX nodes they came from (read back from the locations the importer gives every op), the
// model layer those nodes belong to, and an estimate of its FLOPs and compulsory DRAM bytes.
// Also the value ranges of integer graph inputs that index an embedding table (Gather), so that
// generated inputs stay inside the table. All of it is derived from the planned function alone
// (after kiln-plan-memory), so the HTML report and the artifact writer share one definition.
// Format of the fields: docs/artifact.md ("Launch metadata").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ARTIFACT_LAUNCHMETADATA_H
#define KILN_COMPILER_ARTIFACT_LAUNCHMETADATA_H

#include "dialects/kiln/KilnOps.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// An ONNX node as the importer's location names it: NameLoc(node, NameLoc(opType, X)), where X
/// is the file location or a fused location around it whose metadata is the node's module scope
/// (a StringAttr such as "m.h.0.attn.c_attn"; compiler/onnx/OnnxImporter.h).
struct OnnxNodeRef {
  std::string node;   ///< ONNX node name ("node_MatMul_12", "/h.0/attn/MatMul")
  std::string opType; ///< ONNX op type ("MatMul")
  std::string scope;  ///< dotted module path, "" when the node shows none
};

/// Appends the ONNX nodes that `loc` names (each part of a fused location) to `out`, skipping
/// nodes already in `out`. Locations that are not importer node locations add nothing.
void collectOnnxNodes(mlir::Location loc, llvm::SmallVectorImpl<OnnxNodeRef> &out);

/// Estimated work of one kernel. FLOPs count multiply and add as two (matmul: 2*M*N*K per batch;
/// attention: 2*Sk*(|Q| + |O|) elements, scaled by the visible fraction of keys when causal;
/// layer_norm 8, rms_norm 4, softmax 5, reductions 1 per input element; rotary 3 and every other
/// arithmetic or comparison op 1 per result element; data movement (reshape, transpose, slice,
/// concat, expand, gather*, cast, constant) 0). Bytes are the compulsory DRAM traffic: every
/// kernel operand read once (an embedding table read through a gather counts only the gathered
/// rows) and every result written once, in the kernel's element types.
struct KernelCost {
  uint64_t flops = 0;
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
};

/// Estimates the cost of `kernel` (see KernelCost). Saturates at UINT64_MAX instead of wrapping.
KernelCost estimateKernelCost(KernelOp kernel);

/// Most ONNX node names stored per launch; the artifact also records the total count.
constexpr size_t kMaxLaunchNodeNames = 32;

/// Everything the artifact records about one launch beyond how to launch it.
struct LaunchMetadata {
  /// "<layer>: <ops>" or "<ops>" without a layer, e.g. "h.0.attn: matmul+add"; ops are the
  /// distinct fused op names, the main op (matmul, attention, norm, softmax, reduction) first,
  /// views (reshape) left out, at most four then "+...".
  std::string name;
  /// Short model layer, e.g. "h.0.attn", "layer.1.attention", "layers.0.mlp", "ln_f"; "" when
  /// the ONNX nodes show no module path.
  std::string layer;
  /// kiln op names of the kernel body in program order ("matmul", "add"; no "yield").
  std::vector<std::string> ops;
  /// Names of the ONNX nodes the kernel computes, first-seen order, at most kMaxLaunchNodeNames.
  std::vector<std::string> nodes;
  /// Number of distinct ONNX nodes (may exceed nodes.size()).
  uint32_t nodeCount = 0;
  KernelCost cost;
};

/// Names the launches of one planned function. Layers are derived from module scopes:
///  1. a scope component that is a number ("h.0", "layer.1") marks a repeated block; the layer
///     is the component before it, the number and the next component ("m.h.0.attn.c_attn" ->
///     "h.0.attn", "encoder.layer.1.attention.self" -> "layer.1.attention");
///  2. other scopes drop their longest prefix that is a container of numbered blocks somewhere
///     in the function ("m", "m.encoder") and keep two components ("m.embeddings.LayerNorm" ->
///     "embeddings.LayerNorm", "m.ln_f" -> "ln_f"); a scope that is itself a container (glue
///     code of the top model: mask construction) has no layer;
///  3. a kernel takes the layer of its main op (matmul, attention, norm, softmax, reduction) if
///     that op has one, else of its first op that has one.
class LaunchNamer {
public:
  /// Collects the module scopes of every op in `func` (to find the containers of step 2).
  explicit LaunchNamer(mlir::func::FuncOp func);

  /// Metadata of the launch of `kernel` (a kiln.kernel of the function given to the
  /// constructor).
  LaunchMetadata describe(KernelOp kernel) const;

  /// Short layer name of module scope `scope` (steps 1-2); "" for none.
  std::string layerOf(llvm::StringRef scope) const;

private:
  llvm::StringSet<> containers;
};

/// Inclusive range of values an integer graph input may hold, recorded in the artifact so that
/// generated inputs are valid.
struct InputValueRange {
  int64_t min = 0;
  int64_t max = 0;
};

/// The value range of function argument `argNumber` of `func` (before or after
/// kiln-outline-kernels): when the argument (possibly through reshapes, casts and kernel
/// boundaries) is the indices operand of one or more gathers from tables with R entries along the
/// gather axis, [0, R-1] with R the smallest such count (other uses of the argument do not
/// matter: the gathers alone bound it). Otherwise (no such gather, a zero-row table)
/// std::nullopt.
std::optional<InputValueRange> indexInputRange(mlir::func::FuncOp func, unsigned argNumber);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_LAUNCHMETADATA_H
