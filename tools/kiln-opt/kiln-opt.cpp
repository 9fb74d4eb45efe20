//===- kiln-opt.cpp - kiln pass driver --------------------------------------===//
//
// `mlir-opt` for kiln: parses .mlir, runs any registered kiln pass or the
// `kiln-pipeline` pass pipeline, prints the result. Used by the lit tests.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  kiln::registerKilnPasses();
  kiln::registerKilnPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
