//===- Pipelines.h - the kiln pass pipeline -----------------------*- C++ -*-===//
//
// buildKilnPipeline() is the one place that orders the kiln passes; the
// compiler driver and `kiln-opt --kiln-pipeline` both use it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PIPELINES_H
#define KILN_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

/// Options of the whole pipeline (also parsed from `--kiln-pipeline="..."`).
struct KilnPipelineOptions : public mlir::PassPipelineOptions<KilnPipelineOptions> {
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("Fuse pointwise chains"),
                    llvm::cl::init(true)};
  Option<int64_t> numSMs{*this, "num-sms",
                         llvm::cl::desc("Multiprocessors of the target GPU (tile selection)"),
                         llvm::cl::init(132)};
  Option<int64_t> arenaAlignment{*this, "arena-alignment",
                                 llvm::cl::desc("Arena buffer alignment in bytes"),
                                 llvm::cl::init(256)};
};

/// Adds the graph → kernel pipeline to `pm` (a module-level manager):
/// fold shape subgraphs, CSE, fuse, outline, select GEMM tiles, plan memory.
void buildKilnPipeline(mlir::OpPassManager &pm, const KilnPipelineOptions &options);

/// Registers `kiln-pipeline` for kiln-opt and lit tests.
void registerKilnPipelines();

} // namespace kiln

#endif // KILN_PASSES_PIPELINES_H
