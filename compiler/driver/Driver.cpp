//===- Driver.cpp - the library behind kiln-compile -----------------------===//
//
// The compilation steps, in order:
//   1. import the ONNX model with static shapes (compiler/onnx);
//   2. run buildKilnPipeline (fold, fuse, outline, plan memory);
//   3. emit CUDA C++ per kernel; identical sources share one module;
//   4. compile modules with NVRTC (PTX + SASS per target) in parallel;
//   5. write the artifact (compiler/artifact).
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Driver.h"

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/codegen/KernelEmitter.h"
#include "compiler/codegen/Nvrtc.h"
#include "compiler/onnx/OnnxImporter.h"
#include "dialects/kiln/KilnDialect.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;
using namespace kiln;

namespace {
double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

llvm::Error writeFile(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '%s': %s", path.c_str(), ec.message().c_str());
  os << text;
  return llvm::Error::success();
}
} // namespace

void kiln::loadKilnDialects(MLIRContext &context) {
  context.loadDialect<KilnDialect, func::FuncDialect>();
}

llvm::Expected<CompileStats> kiln::compileModel(MLIRContext &context,
                                                const CompileOptions &options,
                                                llvm::raw_ostream &os) {
  auto t0 = std::chrono::steady_clock::now();
  CompileStats stats;
  loadKilnDialects(context);

  // Targets first: a bad --target should fail before any work.
  std::vector<unsigned> targets;
  for (const std::string &t : options.targets) {
    auto arch = codegen::parseTarget(t);
    if (!arch)
      return arch.takeError();
    targets.push_back(*arch);
  }
  if (targets.empty())
    return llvm::createStringError("no --target given");

  // 1. Import.
  auto shapes = parseShapeSpec(options.shapeSpec);
  if (!shapes)
    return shapes.takeError();
  auto tImport = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module = importOnnxFile(context, options.inputPath, *shapes);
  if (!module)
    return llvm::createStringError("failed to import '%s'", options.inputPath.c_str());
  stats.importMs = msSince(tImport);
  if (options.emit == EmitKind::Graph) {
    module->print(os);
    stats.totalMs = msSince(t0);
    return stats;
  }

  // 2. Passes.
  auto tPasses = std::chrono::steady_clock::now();
  PassManager pm(&context);
  KilnPipelineOptions pipelineOptions;
  pipelineOptions.fuse = options.fuse;
  buildKilnPipeline(pm, pipelineOptions);
  if (failed(pm.run(*module)))
    return llvm::createStringError("the kiln pass pipeline failed on '%s'",
                                   options.inputPath.c_str());
  stats.passesMs = msSince(tPasses);
  if (options.emit == EmitKind::Kernels) {
    module->print(os);
    stats.totalMs = msSince(t0);
    return stats;
  }

  auto funcs = llvm::to_vector(module->getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return llvm::createStringError("expected one function after import, found %zu", funcs.size());
  func::FuncOp func = funcs.front();
  if (auto a = func->getAttrOfType<IntegerAttr>("kiln.arena_bytes"))
    stats.arenaBytes = a.getInt();
  if (auto a = func->getAttrOfType<IntegerAttr>("kiln.intermediate_bytes"))
    stats.intermediateBytes = a.getInt();

  // 3. Codegen; identical sources share a module.
  auto tCodegen = std::chrono::steady_clock::now();
  codegen::EmitterRegistry registry = codegen::makeDefaultEmitterRegistry();
  std::vector<std::string> moduleNames, moduleSources;
  llvm::StringMap<unsigned> moduleBySource;
  std::vector<ArtifactLaunch> launches;
  bool failedEmit = false;
  func.walk([&](KernelOp kernel) {
    auto generated = registry.emit(kernel);
    if (failed(generated)) {
      failedEmit = true;
      return;
    }
    auto [it, inserted] = moduleBySource.try_emplace(generated->source, moduleNames.size());
    if (inserted) {
      moduleNames.push_back(kernel.getSymName().str());
      moduleSources.push_back(generated->source);
    }
    ArtifactLaunch launch;
    launch.module = it->second;
    launch.function = codegen::kKernelFunctionName;
    launch.grid = generated->grid;
    launch.block = generated->block;
    launch.sharedMemBytes = generated->sharedMemBytes;
    launch.args = generated->args;
    launches.push_back(std::move(launch));
  });
  if (failedEmit)
    return llvm::createStringError("CUDA code generation failed for '%s'",
                                   options.inputPath.c_str());
  stats.kernels = launches.size();
  stats.modules = moduleNames.size();
  stats.codegenMs = msSince(tCodegen);

  // 4. NVRTC.
  auto tNvrtc = std::chrono::steady_clock::now();
  auto compiled = codegen::compileModules(moduleNames, moduleSources, targets, options.threads);
  if (!compiled)
    return compiled.takeError();
  stats.nvrtcMs = msSince(tNvrtc);

  if (!options.dumpCudaDir.empty()) {
    if (auto ec = llvm::sys::fs::create_directories(options.dumpCudaDir))
      return llvm::createStringError(ec, "cannot create --dump-cuda directory '%s': %s",
                                     options.dumpCudaDir.c_str(), ec.message().c_str());
    for (size_t m = 0; m < moduleNames.size(); ++m) {
      llvm::SmallString<256> base(options.dumpCudaDir);
      llvm::sys::path::append(base, moduleNames[m]);
      if (auto e = writeFile((base + ".cu").str(), moduleSources[m]))
        return e;
      if (auto e = writeFile((base + ".ptx").str(), (*compiled)[m].ptx))
        return e;
    }
  }

  // 5. Artifact.
  std::vector<ArtifactModule> modules;
  for (size_t m = 0; m < moduleNames.size(); ++m)
    modules.push_back({moduleNames[m], std::move((*compiled)[m])});
  auto written = writeArtifact(func, modules, launches, options.outputPath);
  if (!written)
    return written.takeError();
  stats.weightBytes = written->weightBytes;
  stats.fileBytes = written->fileBytes;
  stats.totalMs = msSince(t0);
  return stats;
}
