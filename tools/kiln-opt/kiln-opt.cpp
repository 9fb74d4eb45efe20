//===- kiln-opt.cpp - kiln pass driver --------------------------------------===//
//
// `mlir-opt` for kiln: parses .mlir, runs any registered kiln pass or the
// `kiln-pipeline` pass pipeline, prints the result. Used by the lit tests.
// Options are checked strictly first (kiln::checkCommandLine): an unknown
// option is an error, never a group of one-letter flags. --version prints
// kiln's version and LLVM's.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/CommandLine.h"
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  kiln::registerKilnPasses();
  kiln::registerKilnPipelines();
  std::string helpHeader = mlir::registerCLIOptions("kiln optimizer driver\n", registry);
  // --version: kiln's version first, as kiln-compile prints it, then LLVM's.
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "kiln-opt " << KILN_VERSION << "\n  built with LLVM/MLIR " << LLVM_VERSION_STRING << "\n";
  });
  // parseCLIOptions registers the output file option `-o` itself.
  if (!kiln::checkCommandLine(argc, argv, "kiln-opt", llvm::errs(), {"o"}))
    return 1;
  auto [inputFilename, outputFilename] = mlir::parseCLIOptions(argc, argv, helpHeader);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
