//===- Driver.cpp - the library behind kiln-compile -----------------------===//
//
// The compilation steps, in order:
//   1. import the ONNX model with static shapes (compiler/onnx), or parse a
//      graph-level .mlir file and check that it is one;
//   2. run buildKilnPipeline (fold, fuse, outline, plan memory), or the
//      --pass-pipeline text;
//   3. emit CUDA C++ per kernel; identical kernels are emitted once and the
//      unique ones spread over one module per compile thread;
//   4. compile modules with NVRTC (PTX + SASS per target) in parallel;
//   5. write the artifact (compiler/artifact) and verify it.
//   6. with --report, write the compile report of each artifact
//      (compiler/report: memory plan, launches, phase times).
// Every step is timed as one or more named phases (CompileStats::phases),
// which the progress reporter shows while they run.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Driver.h"

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/artifact/LaunchMetadata.h"
#include "compiler/codegen/KernelEmitter.h"
#include "compiler/codegen/Nvrtc.h"
#include "compiler/onnx/OnnxImporter.h"
#include "dialects/kiln/KernelPlan.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/KilnTarget.h"
#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/xxhash.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Threading.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "ArtifactHeader.h"
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

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

/// Times the phases of one compileModel call into CompileStats::phases (one
/// entry per name, in first-run order; a phase run again, by the next
/// tensor-parallel rank, adds to its entry) and shows them on the progress
/// reporter. One phase runs at a time; starting one ends the previous.
class PhaseClock {
public:
  PhaseClock(CompileStats &stats, ProgressReporter *progress) : stats(stats), progress(progress) {}
  /// A phase still running here failed (an early return with an error).
  ~PhaseClock() { stop(/*completed=*/false); }

  /// Ends the running phase, if any, and starts `name`.
  void start(llvm::StringRef name) {
    stop();
    current = name.str();
    t0 = std::chrono::steady_clock::now();
    if (progress)
      progress->begin(name);
  }

  /// Ends the running phase, if any; `completed` false: it failed.
  void stop(bool completed = true) {
    if (current.empty())
      return;
    double ms = msSince(t0);
    auto it = llvm::find_if(stats.phases, [&](const CompilePhase &p) { return p.name == current; });
    if (it == stats.phases.end())
      stats.phases.push_back({current, ms});
    else
      it->ms += ms;
    current.clear();
    if (progress)
      progress->end(completed);
  }

  /// `done` of `total` `unit`s of the running phase are finished.
  void update(uint64_t done, uint64_t total, llvm::StringRef unit) {
    if (progress)
      progress->update(done, total, unit);
  }

private:
  CompileStats &stats;
  ProgressReporter *progress;
  std::string current;
  std::chrono::steady_clock::time_point t0;
};

/// Total milliseconds of the phases named `name` (0 if none ran).
double phaseMs(const CompileStats &stats, llvm::StringRef name) {
  for (const CompilePhase &p : stats.phases)
    if (p.name == name)
      return p.ms;
  return 0;
}
} // namespace

/// The ONNX node, its op type and the file a location names (each may stay
/// empty). The importer gives every node NameLoc(node, NameLoc(op type, file)).
/// A position in a text file (a .mlir input: line > 0) is appended to
/// `file` as ":line:col".
static void describeLocation(Location loc, std::string &node, std::string &opType,
                             std::string &file) {
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l)) {
      if (node.empty())
        node = name.getName().str();
      else if (opType.empty())
        opType = name.getName().str();
    }
    if (auto flc = dyn_cast<FileLineColLoc>(l); flc && file.empty()) {
      file = flc.getFilename().str();
      if (flc.getLine() > 0)
        file += ":" + std::to_string(flc.getLine()) + ":" + std::to_string(flc.getColumn());
    }
    return WalkResult::advance();
  });
}

/// Under --kv-cache: a step's positions index the model's position table (GPT-2's learned
/// positions, a GroupQueryAttention's rotary caches), so a sequence longer than the table would
/// read past it. An error naming --max-seq-len and the table's rows, or success.
static llvm::Error checkPositionTable(func::FuncOp func, const CompileOptions &options) {
  if (!options.kvCache)
    return llvm::Error::success();
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto role = func.getArgAttrOfType<InputRoleAttr>(i, kRoleAttrName);
    if (!role || role.getValue() != InputRole::PositionIds)
      continue;
    if (std::optional<InputValueRange> range = indexInputRange(func, i);
        range && range->max < options.maxSeqLen - 1)
      return llvm::createStringError(
          "--max-seq-len %lld: '%s' indexes a position table of %lld rows, so a sequence may "
          "hold at most %lld tokens; lower --max-seq-len",
          (long long)options.maxSeqLen, options.inputPath.c_str(), (long long)range->max + 1,
          (long long)range->max + 1);
  }
  return llvm::Error::success();
}

std::unique_ptr<ScopedDiagnosticHandler>
kiln::installModelDiagnosticHandler(MLIRContext &context, llvm::raw_ostream &os) {
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);
  // A warning that every program of a --shape range gives (the same model, the same pass) is
  // printed once. (The engine calls the handler under its lock.)
  auto printedWarnings = std::make_shared<llvm::StringSet<>>();
  return std::make_unique<ScopedDiagnosticHandler>(&context, [&os, printedWarnings](
                                                                 Diagnostic &diag) {
    auto format = [&](Diagnostic &d, StringRef severity) {
      std::string node, opType, file, message = d.str(), line;
      llvm::raw_string_ostream out(line);
      describeLocation(d.getLocation(), node, opType, file);
      if (!file.empty())
        out << file << ": ";
      out << severity << ": ";
      // Name the node unless the message already quotes it (importer
      // messages name their node, input or initializer themselves).
      if (!node.empty() && !StringRef(message).contains("'" + node + "'")) {
        out << "node '" << node << "'";
        if (!opType.empty())
          out << " (" << opType << ")";
        out << ": ";
      }
      out << message << "\n";
      return line;
    };
    StringRef severity = diag.getSeverity() == DiagnosticSeverity::Error     ? "error"
                         : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning"
                                                                             : "note";
    std::string text = format(diag, severity);
    for (Diagnostic &note : diag.getNotes())
      text += format(note, "note");
    if (diag.getSeverity() == DiagnosticSeverity::Warning && !printedWarnings->insert(text).second)
      return success();
    os << text;
    return success();
  });
}

/// Opens the artifact just written to `path` with the runtime's own loader
/// (kiln_artifact_open verifies every structure and limit it checks before a
/// run; no GPU needed), so that kiln-compile never reports success for a file
/// kiln-run would refuse. A file that fails is removed. Skipped for outputs
/// that cannot be read back (stdout, a FIFO, /dev/null).
static llvm::Error verifyWrittenArtifact(const std::string &path) {
  if (isStandardOutput(path) || !llvm::sys::fs::is_regular_file(path))
    return llvm::Error::success();
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  if (!status) {
    kiln_artifact_release(artifact);
    return llvm::Error::success();
  }
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  llvm::sys::fs::remove(path);
  return llvm::createStringError(
      "internal error: the artifact written to '%s' does not pass the runtime's verification "
      "(removed; please report this as a kiln-compile bug): %s",
      path.c_str(), message.c_str());
}

/// Largest tensor kiln compiles: 128 GiB, about the memory of the largest
/// GPU (H200: 141 GB). Bigger tensors cannot run anywhere, and their element
/// counts approach the int64 and launch-size limits of codegen.
static constexpr int64_t kMaxTensorBytes = int64_t(1) << 37;

/// Rejects any value larger than kMaxTensorBytes, naming the op that makes
/// it; sizes are computed with overflow checks.
static LogicalResult verifyTensorSizes(ModuleOp module) {
  WalkResult result = module.walk([&](Operation *op) -> WalkResult {
    for (Value v : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        continue;
      int64_t bytes = getElementByteSize(type.getElementType());
      bool overflow = false;
      for (int64_t d : type.getShape())
        overflow |= d < 0 || llvm::MulOverflow(bytes, d, bytes);
      if (overflow || bytes > kMaxTensorBytes) {
        op->emitError() << "unsupported: tensor " << type << " is larger than the "
                        << (kMaxTensorBytes >> 30)
                        << " GiB kiln compiles; use smaller --shape values";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

void kiln::loadKilnDialects(MLIRContext &context) {
  context.loadDialect<KilnDialect, func::FuncDialect>();
}

void kiln::registerCompilerPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerKilnPasses();
    registerKilnPipelines();
    mlir::registerCanonicalizerPass();
    mlir::registerCSEPass();
  });
}

/// Parses a --pass-pipeline text into `pm` (a manager on builtin.module):
/// "builtin.module(P)" or just "P", where P is a pass list relative to the
/// module ("func.func(cse),kiln-pipeline"). The error quotes the text and
/// MLIR's message.
static llvm::Error parseCustomPipeline(llvm::StringRef text, OpPassManager &pm) {
  registerCompilerPasses();
  llvm::StringRef passes = text.trim();
  // Strip the anchor when its parenthesis closes at the very end.
  if (passes.starts_with("builtin.module(") && passes.ends_with(")")) {
    llvm::StringRef inner = passes.drop_front(strlen("builtin.module(")).drop_back();
    int depth = 0;
    bool balanced = true;
    for (char c : inner) {
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      balanced &= depth >= 0;
    }
    if (balanced && depth == 0)
      passes = inner;
  }
  std::string message;
  llvm::raw_string_ostream errors(message);
  if (failed(parsePassPipeline(passes, pm, errors)))
    return llvm::createStringError("invalid --pass-pipeline '%s': %s", text.str().c_str(),
                                   llvm::StringRef(message).trim().str().c_str());
  return llvm::Error::success();
}

/// Fills `pm` with the pipeline of tensor-parallel rank `rank`: the
/// --pass-pipeline text, else buildKilnPipeline with the options' settings.
static llvm::Error buildPipeline(const CompileOptions &options, ArrayRef<unsigned> targets,
                                 unsigned rank, OpPassManager &pm) {
  if (!options.passPipeline.empty())
    return parseCustomPipeline(options.passPipeline, pm);
  KilnPipelineOptions pipelineOptions;
  pipelineOptions.fuse = options.fuse;
  pipelineOptions.precision = options.precision;
  pipelineOptions.mmaTile = options.mmaTile;
  // Hopper's wgmma only on request (--wgmma, checked to have sm_90 as the
  // first target, compiled as sm_90a there); the generated source keeps an
  // mma.sync path for every other target. Off by default: inside whole models
  // it measured slower than mma.sync on the H200 (docs/results.md), unlike in
  // isolation.
  pipelineOptions.wgmma = options.wgmma;
  const bool onlySm90 = llvm::all_of(targets, [](unsigned arch) { return arch == 90; });
  // With targets besides sm_90 the wgmma kernels' mma.sync path is compiled as well.
  pipelineOptions.wgmmaMmaFallback = !onlySm90;
  // The TMA GEMM's kernels exist for sm_90a alone (one launch list serves every
  // target), so it needs every --target to be sm_90.
  pipelineOptions.sm90Gemm = options.sm90Gemm && onlySm90;
  pipelineOptions.skinnyGemm = options.skinnyGemm;
  // The Hopper attention kernel exists for sm_90a alone, like the TMA GEMM.
  pipelineOptions.sm90Attention = options.sm90Attention && onlySm90;
  pipelineOptions.sm90AttentionPersistent = options.sm90AttentionPersistent;
  pipelineOptions.sm90PrefillAttention =
      options.sm90PrefillAttention && options.sm90Attention && onlySm90;
  pipelineOptions.skinnyTensorCores = options.skinnyTensorCores;
  pipelineOptions.skinnyWeightPreload =
      options.skinnyWeightPreload && options.programmaticLaunch != ProgrammaticLaunch::Off;
  pipelineOptions.weightPrefetch = options.weightPrefetch == WeightPrefetch::Next;
  pipelineOptions.skinnyL2Prefetch = options.weightPrefetch == WeightPrefetch::Own;
  pipelineOptions.skinnyTcOccupancy = options.skinnyTcOccupancy;
  pipelineOptions.skinnyPreloadRows = options.skinnyPreloadRows;
  pipelineOptions.splitKv = options.splitKv;
  pipelineOptions.decodeAttentionPreload =
      options.decodeAttentionPreload && options.programmaticLaunch != ProgrammaticLaunch::Off;
  pipelineOptions.fuseKvAppend = options.fuseKvAppend.value_or(true);
  pipelineOptions.fuseKeyRotary = options.fuseKeyRotary;
  pipelineOptions.recomputeRotaryTables = options.recomputeRotaryTables;
  pipelineOptions.fuseNormIntoGemm = options.fuseNormIntoGemm;
  pipelineOptions.normIntoFewRowGemm = options.normIntoFewRowGemm;
  pipelineOptions.tpSize = options.tensorParallel;
  pipelineOptions.tpRank = rank;
  pipelineOptions.tpLoopback = options.tpLoopback;
  pipelineOptions.kvCache = options.kvCache;
  pipelineOptions.maxSeqLen = options.maxSeqLen;
  pipelineOptions.kvBlockSize = options.kvBlockSize;
  pipelineOptions.kvBlocks = options.kvBlocks;
  pipelineOptions.lastTokenLogits = options.lastTokenLogits;
  pipelineOptions.deviceSampling = options.deviceSampling;
  buildKilnPipeline(pm, pipelineOptions);
  return llvm::Error::success();
}

/// Prints `module` for --emit=graph/kernels, eliding elements attributes
/// larger than options.elideElementsLargerThan (0: none).
static void printModule(ModuleOp module, const CompileOptions &options, llvm::raw_ostream &os) {
  OpPrintingFlags flags;
  if (options.elideElementsLargerThan > 0)
    flags.elideLargeElementsAttrs(options.elideElementsLargerThan);
  module.print(os, flags);
}

/// Parses `path`, a .mlir file that should hold one graph-level function
/// (what `kiln-compile --emit=graph --print-constants` prints), and checks
/// that it is one: exactly one `func.func` with a body, no `kiln.kernel`
/// (a later stage: --emit=kernels), static ranked tensor arguments and
/// results, and no constant without its values (`dense_resource<__elided__>`
/// from printing with elided constants, or a resource with no data). Errors
/// are diagnostics (naming the file, and the line of the op when it has one).
static OwningOpRef<ModuleOp> parseGraphFile(MLIRContext &context, llvm::StringRef path) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    emitError(fileLoc) << "cannot read '" << path << "': " << ec.message();
    return nullptr;
  }
  if (!llvm::sys::fs::is_regular_file(status)) {
    emitError(fileLoc) << "cannot read '" << path << "': not a regular file";
    return nullptr;
  }
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &context);
  if (!module)
    return nullptr; // the parser reported the line
  auto funcs = llvm::to_vector(module->getOps<func::FuncOp>());
  if (funcs.size() != 1 || funcs.front().isExternal()) {
    emitError(module->getLoc()) << "'" << path << "' holds " << funcs.size()
                                << " functions with a body; kiln-compile takes one graph-level "
                                   "function (what --emit=graph prints)";
    return nullptr;
  }
  func::FuncOp func = funcs.front();
  bool bad = false;
  func.walk([&](KernelOp kernel) {
    if (!bad)
      kernel.emitError() << "'" << path
                         << "' is not at graph level: it holds kiln.kernel ops (the output of "
                            "--emit=kernels); kiln-compile continues from what --emit=graph "
                            "prints";
    bad = true;
  });
  if (bad)
    return nullptr;
  auto checkType = [&](Type type, llvm::StringRef what, unsigned index) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && tensor.hasStaticShape())
      return true;
    emitError(func.getLoc()) << "unsupported: " << what << " " << index << " of @"
                             << func.getSymName() << " has type " << type
                             << "; kiln compiles tensors of static shape only";
    return false;
  };
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (!checkType(type, "argument", i))
      return nullptr;
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (!checkType(type, "result", i))
      return nullptr;
  module->walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrs())
      attr.getValue().walk([&](DenseResourceElementsAttr resource) {
        if (bad)
          return;
        bad = true;
        DenseResourceElementsHandle handle = resource.getRawHandle();
        if (handle.getKey().starts_with("__elided__"))
          op->emitError() << "the value of this " << op->getName()
                          << " was elided when the file was printed "
                             "(dense_resource<__elided__>); print the graph with "
                             "`kiln-compile --emit=graph --print-constants`";
        else if (!handle.getBlob())
          op->emitError() << "the resource '" << handle.getKey() << "' of '"
                          << attr.getName().getValue() << "' has no data in '" << path << "'";
        else
          op->emitError() << "unsupported: dense_resource constants ('" << handle.getKey()
                          << "'); give the values inline as dense<...>";
      });
  });
  if (bad)
    return nullptr;
  return module;
}

/// NVRTC results of the last rank, reused when the next rank's module sources
/// are the same (they differ only if shapes differ between ranks).
struct kiln::ModuleCache {
  std::vector<std::string> sources;
  std::vector<codegen::CompiledModule> compiled;
};

/// Completes the reports collected per rank (model, options, artifact path,
/// phase times) and writes them under options.reportDir: index.html and
/// report.json, or for tensor-parallel rank files rank<r>/ per rank plus an
/// index.html linking them.
static llvm::Error writeReports(const CompileOptions &options, CompileStats &stats) {
  for (auto [i, report] : llvm::enumerate(stats.reports)) {
    report.model = options.inputPath;
    report.shapes = options.shapeSpec;
    report.precision = stringifyPrecision(options.precision).str();
    report.targets = options.targets;
    if (i < stats.files.size())
      report.artifact = isStandardOutput(stats.files[i].path) ? "<stdout>" : stats.files[i].path;
    for (const CompilePhase &phase : stats.phases)
      report.phases.push_back({phase.name, phase.ms});
    report.totalMs = stats.totalMs;
  }
  if (stats.reports.size() == 1 && stats.reports.front().worldSize == 1)
    return writeCompileReport(stats.reports.front(), options.reportDir);
  for (const CompileReport &report : stats.reports) {
    llvm::SmallString<256> dir(options.reportDir);
    llvm::sys::path::append(dir, "rank" + std::to_string(report.rank));
    if (auto e = prepareReportDirectory(dir))
      return e;
    if (auto e = writeCompileReport(report, dir))
      return e;
  }
  return writeRankIndex(stats.reports, options.reportDir);
}

/// The most rows (the product of all dims but the last of the result) of any kiln.matmul in
/// `func`'s kernels; 0 without one.
static int64_t largestGemmRows(func::FuncOp func) {
  int64_t rows = 0;
  func.walk([&](MatMulOp mm) {
    ArrayRef<int64_t> shape = mm.getType().getShape();
    int64_t r = 1;
    for (int64_t d : shape.drop_back())
      r *= d;
    rows = std::max(rows, r);
  });
  return rows;
}

/// Steps 2-5 of compileModel for tensor-parallel rank `rank` (0 without
/// tensor parallelism): runs the pipeline on `module`, generates and compiles
/// the kernels (NVRTC output reused from `cache` when the sources match) and
/// writes the artifact; adds to `stats`.
namespace {
/// One program of the artifact being compiled: its imported module and its name ("" when the
/// artifact has one program).
struct ProgramModule {
  std::string name;
  ModuleOp module;
};
} // namespace

static llvm::Error compileRank(MLIRContext &context, const CompileOptions &options,
                               ArrayRef<unsigned> targets, ArrayRef<ProgramModule> programs,
                               unsigned rank, uint64_t groupHash, ModuleCache &cache,
                               llvm::raw_ostream &os, CompileStats &stats, PhaseClock &clock) {
  codegen::EmitterRegistry registry = codegen::makeDefaultEmitterRegistry();
  std::vector<std::string> functionSources;      // unique kernel bodies, over every program
  std::vector<std::vector<std::string>> usersOf; // kiln.kernel names per function
  llvm::StringMap<unsigned> functionBySource;
  std::vector<func::FuncOp> programFuncs;
  std::vector<std::vector<ArtifactLaunch>> programLaunches;
  std::vector<std::vector<unsigned>> programLaunchFunctions;
  std::vector<ArtifactCollective> collectives;
  // 2. Passes: program 0 first (it loads the dialects the pipeline needs), then the others in
  // parallel on the context's thread pool (each program is its own module; diagnostics come out
  // in program order). The first program that fails is reported.
  clock.start("passes");
  std::vector<std::unique_ptr<PassManager>> managers;
  for (size_t p = 0; p < programs.size(); ++p) {
    managers.push_back(std::make_unique<PassManager>(&context, ModuleOp::getOperationName()));
    if (auto e = buildPipeline(options, targets, rank, *managers.back()))
      return e;
  }
  std::vector<char> passed(programs.size(), 0);
  if (!programs.empty())
    passed[0] = succeeded(managers[0]->run(programs[0].module));
  if (passed[0])
    mlir::parallelFor(&context, 1, programs.size(), [&](size_t p) {
      passed[p] = succeeded(managers[p]->run(programs[p].module));
    });
  for (size_t p = 0; p < programs.size(); ++p)
    if (!passed[p])
      return llvm::createStringError(
          "the %s pass pipeline failed on '%s'%s",
          options.passPipeline.empty() ? "kiln" : "--pass-pipeline", options.inputPath.c_str(),
          programs[p].name.empty() ? "" : (" (program " + programs[p].name + ")").c_str());
  managers.clear();
  for (const ProgramModule &program : programs) {
  ModuleOp module = program.module;
  if (options.emit == EmitKind::Kernels) {
    for (auto func : module.getOps<func::FuncOp>())
      if (auto e = checkPositionTable(func, options))
        return e;
    clock.start("print mlir");
    if (options.tensorParallel > 1 && !options.tpLoopback)
      os << "// tensor-parallel rank " << rank << " of " << options.tensorParallel << "\n";
    if (!program.name.empty())
      os << "// program " << program.name << "\n";
    printModule(module, options, os);
    continue;
  }

  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return llvm::createStringError("expected one function after the pass pipeline, found %zu",
                                   funcs.size());
  func::FuncOp func = funcs.front();
  // A --pass-pipeline must end where the default one does: outlined kernels
  // with tiles and an arena plan.
  if (!func->hasAttr("kiln.arena_bytes"))
    return llvm::createStringError(
        "the --pass-pipeline did not plan memory (@%s has no kiln.arena_bytes): an artifact "
        "needs the pipeline to end with kiln-outline-kernels, kiln-select-tiles and "
        "kiln-plan-memory (`--emit=pipeline` prints the default pipeline), or use "
        "--emit=kernels to see its output",
        func.getSymName().str().c_str());
  // kiln.all_reduce ops need rank files and a communicator: only --tensor-parallel N writes
  // those. A --pass-pipeline (or .mlir graph) that shards without it would give one artifact
  // holding one rank's shard and no collectives, which would run and compute wrong values.
  if (!(options.tensorParallel > 1 && !options.tpLoopback)) {
    bool sharded = false;
    func.walk([&](AllReduceOp) { sharded = true; });
    if (sharded)
      return llvm::createStringError(
          "the pipeline left kiln.all_reduce ops (tensor-parallel sharding) in a single-GPU "
          "compile: one artifact would hold one rank's shard and no collectives. Compile with "
          "--tensor-parallel N (kiln-compile shards per rank and writes one file per rank), or "
          "give kiln-pipeline tp-loopback=true to check the sharding on one GPU");
  }
  // Rank files: the largest over the ranks (rank 0's arena can be larger, since its GEMMs before
  // an all-reduce also read the bias and residual).
  if (auto a = func->getAttrOfType<IntegerAttr>("kiln.arena_bytes"))
    stats.arenaBytes = std::max<int64_t>(stats.arenaBytes, a.getInt());
  if (auto a = func->getAttrOfType<IntegerAttr>("kiln.intermediate_bytes"))
    stats.intermediateBytes = std::max<int64_t>(stats.intermediateBytes, a.getInt());

  if (auto e = checkPositionTable(func, options))
    return e;

  // 3. Codegen. Identical kernels (same source, in any program) are emitted once; the unique
  // kernels are spread over a few modules so NVRTC parses the shared device
  // headers a few times, not once per kernel, and modules compile in parallel.
  clock.start("codegen");
  if (options.tensorParallel > 1 && !options.tpLoopback) {
    bool any = false;
    func.walk([&](AllReduceOp) { any = true; });
    if (!any)
      return llvm::createStringError(
          "--tensor-parallel %u: '%s' has no attention or MLP that kiln-shard-tensor-parallel "
          "recognizes, so every rank would compute the whole model; compile it without "
          "--tensor-parallel",
          options.tensorParallel, options.inputPath.c_str());
  }
  LaunchNamer namer(func);
  std::vector<ArtifactLaunch> &launches = programLaunches.emplace_back();
  std::vector<unsigned> &launchFunction = programLaunchFunctions.emplace_back();
  programFuncs.push_back(func);
  bool failedEmit = false;
  // Programmatic dependent launch needs griddepcontrol, which the module's PTX has only when the
  // lowest target (the PTX a newer GPU JIT-compiles) is sm_90 or newer.
  const bool programmatic = options.programmaticLaunch != ProgrammaticLaunch::Off &&
                            *llvm::min_element(targets) >= 90;
  const bool triggerEarly =
      options.programmaticLaunch == ProgrammaticLaunch::Early ||
      (options.programmaticLaunch == ProgrammaticLaunch::Auto &&
       largestGemmRows(func) <= kEarlyLaunchMaxRows);
  // A decode attention that appends the step's keys and values itself (kiln-fuse-kv-append)
  // is started as the kernel before it exits, not early. Launched early (while the QKV GEMM
  // runs) the merged kernel made the batch-1 step 2.3% slower than without the merge; with the
  // whole program at exit it was 1.8% faster (H200, 0.8B Llama at 4 layers; docs/results.md
  // "Session 24"). This narrower form, the rest of the program still early, is not yet timed.
  // A merged attention that reads its cached keys and values before its wait
  // (#kiln.split_kv<..., preload = true>) is started early instead, so that those reads overlap
  // the kernel before it.
  llvm::DenseSet<Operation *> triggerAtExit;
  {
    Operation *previous = nullptr;
    for (auto kernel : func.getBody().front().getOps<KernelOp>()) {
      bool appends = false, attends = false;
      kernel.getBodyBlock().walk([&](Operation *inner) {
        appends |= isa<KvCacheAppendOp>(inner);
        attends |= isa<PagedAttentionOp>(inner);
      });
      auto splitKv = kernel->getAttrOfType<SplitKvAttr>(kSplitKvAttrName);
      const bool preloads = splitKv && splitKv.getPreload();
      if (appends && attends && !preloads && previous)
        triggerAtExit.insert(previous);
      previous = kernel.getOperation();
    }
  }
  for (Operation &op : func.getBody().front()) {
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      collectives.push_back({reduce.getResult(), static_cast<unsigned>(launches.size())});
      continue;
    }
    auto kernel = dyn_cast<KernelOp>(op);
    if (!kernel)
      continue;
    // The Hopper GEMM exists for sm_90a alone (one launch list serves every target): a
    // --pass-pipeline that kept sm90-gemm with other targets would fail in NVRTC.
    if (kernel->hasAttr(kSm90GemmTileAttrName) &&
        llvm::any_of(targets, [](unsigned arch) { return arch != 90; }))
      return llvm::createStringError(
          "kernel @%s has a Hopper GEMM tile (#kiln.sm90_gemm_tile), whose kernels exist for "
          "sm_90 alone, but --target lists other architectures; give sm90-gemm=false in the "
          "--pass-pipeline's kiln-pipeline{...} or kiln-select-tiles{...} options, or compile "
          "for sm_90 only",
          kernel.getSymName().str().c_str());
    if (kernel->hasAttr(kSm90AttentionTileAttrName) &&
        llvm::any_of(targets, [](unsigned arch) { return arch != 90; }))
      return llvm::createStringError(
          "kernel @%s has a Hopper attention tile (#kiln.sm90_attention_tile), whose kernels "
          "exist for sm_90 alone, but --target lists other architectures; give "
          "sm90-attention=false in the --pass-pipeline's kiln-pipeline{...} or "
          "kiln-select-tiles{...} options, or compile for sm_90 only",
          kernel.getSymName().str().c_str());
    auto generated = registry.emit(kernel);
    if (failed(generated)) {
      failedEmit = true;
      break;
    }
    if (programmatic &&
        !codegen::insertGridDependencySync(
            *generated, triggerEarly && !triggerAtExit.contains(kernel.getOperation()))) {
      kernel.emitError() << "internal error: the CUDA source of kernel @" << kernel.getSymName()
                         << " has no function body";
      failedEmit = true;
      break;
    }
    // kiln-split-wide-concats and fusion's operand bound keep kernels far
    // below the runtime's launch limit; a kernel past it is a compiler bug.
    if (generated->args.size() > artifact::kMaxLaunchArgs) {
      kernel.emitError() << "internal error: kernel @" << kernel.getSymName() << " has "
                         << generated->args.size() << " arguments, more than the "
                         << artifact::kMaxLaunchArgs << " one launch may have";
      failedEmit = true;
      break;
    }
    // The same for the whole parameter space once tensor maps (128 bytes each) follow.
    uint64_t paramBytes =
        artifact::kernelParamBytes(generated->args.size(), generated->tensorMaps.size());
    if (paramBytes > artifact::kMaxKernelParamBytes) {
      kernel.emitError() << "internal error: kernel @" << kernel.getSymName() << " passes "
                         << paramBytes << " bytes of parameters (" << generated->args.size()
                         << " pointers, " << generated->tensorMaps.size()
                         << " tensor maps), more than the " << artifact::kMaxKernelParamBytes
                         << " one launch may pass";
      failedEmit = true;
      break;
    }
    auto [it, inserted] = functionBySource.try_emplace(generated->source, functionSources.size());
    if (inserted) {
      functionSources.push_back(generated->source);
      usersOf.emplace_back();
    }
    usersOf[it->second].push_back(program.name.empty()
                                      ? kernel.getSymName().str()
                                      : program.name + ":" + kernel.getSymName().str());
    ArtifactLaunch launch;
    launch.grid = generated->grid;
    launch.block = generated->block;
    launch.sharedMemBytes = generated->sharedMemBytes;
    launch.args = generated->args;
    launch.tensorMaps = generated->tensorMaps;
    launch.programmaticLaunch = generated->programmaticLaunch;
    launch.metadata = namer.describe(kernel);
    launches.push_back(std::move(launch));
    launchFunction.push_back(it->second);
  }
  if (failedEmit)
    return llvm::createStringError("CUDA code generation failed for '%s'%s",
                                   options.inputPath.c_str(),
                                   program.name.empty()
                                       ? ""
                                       : (" (program " + program.name + ")").c_str());
  stats.kernels = std::max<int64_t>(stats.kernels, int64_t(launches.size()));
  } // programs
  if (options.emit == EmitKind::Kernels)
    return llvm::Error::success();
  // The module count is fixed (not the machine's core count) so that the
  // same input gives a byte-identical artifact everywhere.
  constexpr size_t kMaxModules = 4;
  unsigned threads =
      options.threads ? options.threads : llvm::hardware_concurrency().compute_thread_count();
  size_t numModules = std::max<size_t>(1, std::min<size_t>(functionSources.size(), kMaxModules));
  std::vector<std::string> moduleNames, moduleSources(numModules, codegen::modulePrologue());
  for (size_t m = 0; m < numModules; ++m)
    moduleNames.push_back("module" + std::to_string(m));
  auto functionName = [](unsigned f) { return "kiln_k" + std::to_string(f); };
  for (unsigned f = 0; f < functionSources.size(); ++f) {
    std::string text = functionSources[f];
    size_t pos = text.find(codegen::kKernelNamePlaceholder);
    assert(pos != std::string::npos && "kernel source without name placeholder");
    text.replace(pos, std::strlen(codegen::kKernelNamePlaceholder), functionName(f));
    std::string &module = moduleSources[f % numModules];
    module += "// used by @" + llvm::join(usersOf[f], ", @") + "\n" + text + "\n";
  }
  for (auto [launches, launchFunction] : llvm::zip(programLaunches, programLaunchFunctions))
    for (auto [launch, f] : llvm::zip(launches, launchFunction)) {
      launch.module = f % numModules;
      launch.function = functionName(f);
    }
  // With tensor parallelism the ranks' graphs may differ (e.g. a norm folded into a GEMM on one
  // rank only): the largest rank's counts (and the largest program's kernels).
  stats.modules = std::max<int64_t>(stats.modules, int64_t(numModules));
  stats.uniqueKernels = std::max<int64_t>(stats.uniqueKernels, int64_t(functionSources.size()));
  stats.collectives = collectives.size();
  if (!options.reportDir.empty()) {
    // The report shows program 0 (the only one, except for --kv-cache step buckets).
    auto report = collectCompileReport(programFuncs.front(), programLaunches.front(), collectives);
    if (!report)
      return report.takeError();
    report->rank = rank;
    report->worldSize =
        options.tensorParallel > 1 && !options.tpLoopback ? options.tensorParallel : 1;
    stats.reports.push_back(std::move(*report));
  }

  // 4. NVRTC.
  clock.start("nvrtc");
  if (cache.sources != moduleSources) {
    auto compiled = codegen::compileModules(
        moduleNames, moduleSources, targets, threads,
        [&](size_t done, size_t total) { clock.update(done, total, "compilations"); });
    if (!compiled)
      return compiled.takeError();
    cache.sources = moduleSources;
    cache.compiled = std::move(*compiled);
  }
  std::vector<codegen::CompiledModule> *compiled = &cache.compiled;

  if (!options.dumpCudaDir.empty()) {
    clock.start("dump cuda");
    // Rank files each get DIR/rank<r>/: their kernels differ (rank 0's GEMMs before an
    // all-reduce add the bias and residual, the other ranks' do not).
    llvm::SmallString<256> dir(options.dumpCudaDir);
    if (options.tensorParallel > 1 && !options.tpLoopback)
      llvm::sys::path::append(dir, "rank" + std::to_string(rank));
    if (auto ec = llvm::sys::fs::create_directories(dir))
      return llvm::createStringError(ec, "cannot create --dump-cuda directory '%s': %s",
                                     dir.c_str(), ec.message().c_str());
    for (size_t m = 0; m < moduleNames.size(); ++m) {
      llvm::SmallString<256> base(dir);
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
    modules.push_back({moduleNames[m], (*compiled)[m]});
  ArtifactTensorParallel tp;
  std::string path = options.outputPath;
  if (options.tensorParallel > 1 && !options.tpLoopback) {
    tp.worldSize = options.tensorParallel;
    tp.rank = rank;
    tp.groupHash = groupHash;
    path = tpRankArtifactPath(options.outputPath, rank);
  }
  ArtifactWriteObserver observer;
  observer.onStep = [&](llvm::StringRef step) { clock.start(step); };
  observer.onProgress = [&](uint64_t done, uint64_t total) { clock.update(done, total, "bytes"); };
  std::vector<ArtifactProgram> artifactPrograms;
  for (size_t p = 0; p < programs.size(); ++p)
    artifactPrograms.push_back({programs[p].name, programFuncs[p], programLaunches[p]});
  auto written = writeArtifact(artifactPrograms, modules, path, collectives, tp, &observer);
  if (!written)
    return written.takeError();
  clock.start("verify artifact");
  if (auto e = verifyWrittenArtifact(path))
    return e;
  clock.stop();
  stats.weightBytes = written->weightBytes;
  stats.fileBytes = written->fileBytes;
  stats.files.push_back({path, written->fileBytes, written->weightBytes});
  return llvm::Error::success();
}

char kiln::UsageError::ID = 0;

llvm::Expected<std::optional<StepShapeRanges>> kiln::parseStepShapeRanges(llvm::StringRef spec) {
  if (!spec.contains(".."))
    return std::nullopt;
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError("invalid --shape '%s': %s", spec.str().c_str(),
                                   why.str().c_str());
  };
  auto [name, dims] = spec.trim().split('=');
  llvm::SmallVector<llvm::StringRef> entries;
  spec.split(entries, ',');
  if (llvm::count_if(entries, [](llvm::StringRef e) {
        return e.trim().split('=').first.trim() == "input_ids";
      }) > 1)
    return bad("input_ids is given more than once");
  if (name.trim() != "input_ids" || dims.contains(','))
    return bad("a range is given for input_ids alone, as input_ids=B0..B1xS0..S1 (batch and "
               "tokens per step); --kv-cache shapes attention_mask and position_ids itself");
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, 'x');
  if (parts.size() != 2)
    return bad("input_ids has two dims, batch x tokens (e.g. input_ids=1..8x1..2048)");
  int64_t bounds[2][2];
  for (int d = 0; d < 2; ++d) {
    auto [lo, hi] = parts[d].split("..");
    if (hi.empty() && !parts[d].contains(".."))
      hi = lo;
    auto isDigits = [](llvm::StringRef s) {
      s = s.trim();
      return !s.empty() && llvm::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
    };
    if (lo.trim().getAsInteger(10, bounds[d][0]) || hi.trim().getAsInteger(10, bounds[d][1]))
      return bad("'" + parts[d] + "' " +
                 (isDigits(lo) && isDigits(hi) ? "has a number past 2^63 - 1"
                                               : "is not a number or a range a..b of numbers"));
    if (bounds[d][0] < 1 || bounds[d][0] > bounds[d][1])
      return bad("'" + parts[d] + "' must satisfy 1 <= min <= max");
  }
  if (bounds[0][1] > kMaxStepBatch)
    return bad("a batch range up to " + llvm::Twine(bounds[0][1]) + " is past " +
               llvm::Twine(kMaxStepBatch));
  StepShapeRanges ranges;
  ranges.minBatch = bounds[0][0];
  ranges.maxBatch = bounds[0][1];
  ranges.minTokens = bounds[1][0];
  ranges.maxTokens = bounds[1][1];
  return ranges;
}

std::vector<StepProgram> kiln::planStepPrograms(const StepShapeRanges &ranges) {
  std::vector<StepProgram> programs;
  auto add = [&](int64_t batch, int64_t tokens, std::string name) {
    programs.push_back({std::move(name),
                        "input_ids=" + std::to_string(batch) + "x" + std::to_string(tokens),
                        batch, tokens});
  };
  for (int64_t b = ranges.minBatch; b <= ranges.maxBatch;) {
    add(b, 1, "decode_b" + std::to_string(b));
    if (b == ranges.maxBatch)
      break;
    b = std::min(ranges.maxBatch, int64_t(llvm::PowerOf2Ceil(uint64_t(b) + 1)));
  }
  if (ranges.maxTokens > 1) {
    // min(maxTokens, size) for each chunk size, largest first, without repeats; the middle
    // size only while the programs stay within kMaxStepPrograms.
    const auto sizes = [&](bool mid) {
      std::vector<int64_t> chunks;
      for (int64_t size :
           {kLargePrefillChunk, kMidPrefillChunk, kPrefillChunk, kSmallPrefillChunk}) {
        const int64_t chunk = std::min(ranges.maxTokens, size);
        // A chunk at most 1/8 smaller than the one above it adds a program (kernels, a CUDA
        // graph, compile time) for a saving of at most 1/8 of that chunk's tokens: left out
        // (a range of 1..1100 tokens gets 1100, 256 and 32, not also 1024).
        if ((size != kMidPrefillChunk || mid) &&
            (chunks.empty() || chunks.back() > chunk + chunk / 8))
          chunks.push_back(chunk);
      }
      return chunks;
    };
    std::vector<int64_t> chunks = sizes(true);
    if (programs.size() + chunks.size() > kMaxStepPrograms)
      chunks = sizes(false);
    for (int64_t chunk : chunks)
      add(1, chunk, "prefill_b1_s" + std::to_string(chunk));
  }
  return programs;
}


/// --kv-cache with a one-token step (decode): a single token attends only to
/// itself, so the graph at S = 1 cannot show whether attention is causal (a
/// decoder) or bidirectional (an encoder such as BERT, which has no KV-cache
/// form). Checks `module`, the model imported at [B, `tokens`] with tokens >= 2
/// (a prefill program of the --shape range, cloned, or an import at 2 tokens):
/// raises attention and requires every kiln.attention to be causal. Errors name
/// the attention's node.
static llvm::Error checkCausal(MLIRContext &context, StringRef path, ModuleOp module,
                               int64_t tokens) {
  PassManager pm(&context, ModuleOp::getOperationName());
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  fpm.addPass(createBindGenerationInputs());
  fpm.addPass(createEliminateEmptyTensors());
  fpm.addPass(createFoldShapeSubgraphs());
  fpm.addPass(createCSEPass());
  fpm.addPass(createRaiseAttention());
  if (failed(pm.run(module)))
    return llvm::createStringError("the kv-cache check of '%s' at %lld tokens failed",
                                   path.str().c_str(), static_cast<long long>(tokens));
  bool ok = true;
  module->walk([&](AttentionOp op) {
    if (ok && (!op.getCausal() || op.getMask())) {
      op.emitError() << "kv-cache: at " << tokens << " tokens this attention is not causal"
                     << (op.getMask() ? " (it has a mask kiln could not fold into causal)" : "")
                     << "; only a decoder's causal self-attention can use a KV cache";
      ok = false;
    }
  });
  if (!ok)
    return llvm::createStringError("'%s' is not a decoder kiln can compile with --kv-cache",
                                   path.str().c_str());
  return llvm::Error::success();
}

/// The inputs and outputs a generation artifact needs (kiln-compile --kv-cache on an imported
/// model): `input_ids` and `position_ids` int64 (the runtime writes int64), a `position_ids`
/// the graph reads, and a rank-3 `logits` output [batch, seq, vocab]. An error naming the file
/// and what is wrong, or success. (Programs of a --shape range are imported the same way.)
static llvm::Error checkGenerationIO(func::FuncOp func, const std::string &path) {
  auto nameOf = [](DictionaryAttr attrs) -> StringRef {
    if (auto n = attrs ? attrs.getAs<StringAttr>("kiln.name") : StringAttr())
      return n.getValue();
    return "";
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    StringRef name = nameOf(func.getArgAttrDict(i));
    if (name != "position_ids" && name != "input_ids")
      continue;
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!type || !type.getElementType().isInteger(64)) {
      std::string t;
      llvm::raw_string_ostream os(t);
      os << func.getArgument(i).getType();
      return llvm::createStringError(
          "%s: kv-cache: input '%s' '%s' must be int64 (the generation runtime writes int64 "
          "token ids and positions)",
          path.c_str(), name.str().c_str(), t.c_str());
    }
    if (name == "position_ids" && func.getArgument(i).use_empty())
      return llvm::createStringError(
          "%s: kv-cache: the model's 'position_ids' input is never read, so its token positions "
          "come from inside the graph and would restart at 0 in every step; export it so that "
          "its positions are computed from position_ids",
          path.c_str());
  }
  std::string names;
  bool hasLogits = false;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    StringRef name = nameOf(func.getResultAttrDict(i));
    names += (names.empty() ? "'" : ", '") + name.str() + "'";
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
    hasLogits |= name == "logits" && type && type.getRank() == 3;
  }
  if (!hasLogits)
    return llvm::createStringError(
        "%s: kv-cache: the model has no 'logits' output [batch, seq, vocab], which generation "
        "samples from (its outputs: %s); export the causal-LM head (e.g. *ForCausalLM)",
        path.c_str(), names.c_str());
  return llvm::Error::success();
}

/// checkCausal on the model imported again at [B, 2].
static llvm::Error checkCausalAtTwoTokens(MLIRContext &context, StringRef path,
                                          const onnx::ModelProto &model,
                                          const InputShapes &shapes, int64_t maxSeqLen,
                                          InitializerCache *initializers) {
  InputShapes probe = shapes;
  probe["input_ids"][1] = 2;
  // Shaped from input_ids again (ImportOptions::emptyPast): a [B, 1] the user gave would
  // contradict the probe's two tokens.
  probe.erase("attention_mask");
  probe.erase("position_ids");
  ImportOptions importOptions;
  importOptions.emptyPast = true;
  importOptions.derivePositionIds = true;
  importOptions.maxSeqLen = maxSeqLen;
  importOptions.initializers = initializers;
  OwningOpRef<ModuleOp> module = importOnnxModel(context, path, model, probe, importOptions);
  if (!module)
    return llvm::createStringError("failed to import '%s' at 2 tokens (to check that its "
                                   "attention is causal)",
                                   path.str().c_str());
  return checkCausal(context, path, *module, 2);
}

llvm::Expected<CompileStats> kiln::compileModel(MLIRContext &context, const CompileOptions &options,
                                                llvm::raw_ostream &os) {
  auto t0 = std::chrono::steady_clock::now();
  CompileStats stats;
  PhaseClock clock(stats, options.progress);
  loadKilnDialects(context);
  auto finish = [&]() -> llvm::Expected<CompileStats> {
    clock.stop();
    stats.totalMs = msSince(t0);
    stats.importMs = phaseMs(stats, "import") + phaseMs(stats, "parse mlir");
    stats.passesMs = phaseMs(stats, "passes");
    stats.codegenMs = phaseMs(stats, "codegen");
    stats.nvrtcMs = phaseMs(stats, "nvrtc");
    return stats;
  };

  // Everything the command line says is checked before the model is read. An error here names
  // the option and is a UsageError (kiln-compile exits 2 for it, 1 for a failed compile).
  std::vector<unsigned> targets;
  TargetAttr tilingTarget; // the first --target's entry of the target table
  bool mlirInput = llvm::sys::path::extension(options.inputPath) == ".mlir";
  const bool perRank = options.tensorParallel > 1 && !options.tpLoopback;
  std::optional<InputShapes> shapes;
  // --kv-cache with a --shape range: the programs (step shapes) to compile, program 0 first;
  // empty for one static shape.
  std::vector<StepProgram> stepPrograms;
  auto checkOptions = [&]() -> llvm::Error {
    // Targets first: a bad --target should fail before any work.
    for (const std::string &t : options.targets) {
      auto arch = codegen::parseTarget(t);
      if (!arch)
        return arch.takeError();
      targets.push_back(*arch);
    }
    if (targets.empty())
      return llvm::createStringError("no --target given");
    // The first target decides tiling and launch shapes (one launch list
    // serves every target of the artifact).
    std::string tilingName = "sm_" + std::to_string(targets.front());
    FailureOr<TargetAttr> tiling = getTarget(&context, tilingName);
    if (failed(tiling))
      return llvm::createStringError(
          "kiln's target table has no entry for %s, the first --target, whose numbers (SMs, "
          "shared memory) decide tiling; it has %s: give one of them first",
          tilingName.c_str(), getKnownTargetNames().c_str());
    tilingTarget = *tiling;
    // 16-bit storage and TF32 use tensor-core GEMMs and bf16 conversions that
    // exist from sm_80 on.
    if (options.precision != Precision::FP32)
      for (unsigned arch : targets)
        if (arch < 80)
          return llvm::createStringError(
              "--precision %s needs every --target to be sm_80 or newer (tensor-core GEMMs), "
              "got sm_%u",
              stringifyPrecision(options.precision).str().c_str(), arch);
    if (options.kvCache && options.fuseKvAppend.value_or(false) && !options.fuse &&
        options.passPipeline.empty())
      llvm::WithColor::warning(llvm::errs(), "kiln-compile")
          << "--fuse-kv-append has no effect with --no-fuse (kiln-compile's pipeline merges the "
             "append into the attention only when it fuses)\n";
    if (options.kvCache && !options.splitKv &&
        llvm::any_of(targets, [](unsigned arch) { return arch < 90; }))
      llvm::WithColor::warning(llvm::errs(), "kiln-compile")
          << "--split-kv=false has no effect: the split over a cluster needs every --target to "
             "be sm_90, so the decode kernel already takes one block per KV group\n";
    // The KV-cache kernels (append, decode and prefill attention) copy with cp.async.
    if (options.kvCache)
      for (unsigned arch : targets)
        if (arch < 80)
          return llvm::createStringError(
              "--kv-cache needs every --target to be sm_80 or newer (the KV-cache attention "
              "kernels copy with cp.async), got sm_%u",
              arch);
    if (options.wgmma && tilingTarget.getTensorCores() != TensorCores::Wgmma)
      return llvm::createStringError("--wgmma needs sm_90 as the first --target (the first "
                                     "target decides tiling; Hopper's wgmma is built as sm_90a), "
                                     "got %s",
                                     tilingName.c_str());
    // Likewise a malformed --mma-tile (kiln-select-tiles checks it again).
    if (!options.mmaTile.empty()) {
      std::string error;
      if (failed(parseMmaTile(options.mmaTile, tilingTarget, error)))
        return llvm::createStringError("invalid --mma-tile '%s': %s", options.mmaTile.c_str(),
                                       error.c_str());
    }

    if (options.tensorParallel < 1)
      return llvm::createStringError("--tensor-parallel must be at least 1, got %u",
                                     options.tensorParallel);
    if (options.tpLoopback && options.tensorParallel < 2)
      return llvm::createStringError(
          "--tp-loopback needs --tensor-parallel N with N >= 2 (the number of ranks to simulate)");
    if (options.tensorParallel > 1 && !options.tpLoopback && options.emit == EmitKind::Artifact &&
        options.outputPath == "-")
      return llvm::createStringError("--tensor-parallel %u writes one artifact per rank, which "
                                     "cannot go to stdout; give -o BASE.kiln",
                                     options.tensorParallel);
    // A directory as -o would give '<dir>.rank0.kiln' beside it, or hidden '<dir>/.rank0.kiln'
    // files with a trailing separator; a single-GPU compile fails there ("Is a directory").
    if (options.tensorParallel > 1 && !options.tpLoopback && options.emit == EmitKind::Artifact &&
        !options.outputPath.empty() &&
        (llvm::sys::path::is_separator(options.outputPath.back()) ||
         llvm::sys::fs::is_directory(options.outputPath)))
      return llvm::createStringError(
          "--tensor-parallel %u: -o '%s' is a directory; give -o DIR/BASE.kiln, which writes "
          "DIR/BASE.rank0.kiln ... DIR/BASE.rank%u.kiln",
          options.tensorParallel, options.outputPath.c_str(), options.tensorParallel - 1);
    // Every file the compile will write must be writable, and none of them the model, before
    // any work.
    if (options.emit == EmitKind::Artifact && !options.outputPath.empty()) {
      for (unsigned r = 0; r < (perRank ? options.tensorParallel : 1u); ++r) {
        std::string path =
            perRank ? tpRankArtifactPath(options.outputPath, r) : options.outputPath;
        if (auto e = checkOutputIsNotInput(options.inputPath, path))
          return e;
        if (auto e = checkOutputWritable(path))
          return e;
      }
    }
    // --report describes an artifact's launches and memory plan; its directory must be usable.
    if (!options.reportDir.empty()) {
      if (options.emit != EmitKind::Artifact)
        return llvm::createStringError("--report needs --emit=artifact (the default): the report "
                                       "shows the launches and memory plan of an artifact");
      if (auto e = prepareReportDirectory(options.reportDir))
        return std::move(e);
    }
    if (mlirInput && !options.shapeSpec.empty())
      return llvm::createStringError("--shape applies to ONNX models; '%s' is a graph with static "
                                     "shapes already",
                                     options.inputPath.c_str());

    // The pipeline text is checked before the model is read.
    if (!options.passPipeline.empty()) {
      clock.start("parse pipeline");
      PassManager pm(&context, ModuleOp::getOperationName());
      if (auto e = parseCustomPipeline(options.passPipeline, pm))
        return std::move(e);
      // --kv-cache prepares the import for generation steps; the cache itself is the
      // pipeline's kiln-paged-kv-cache pass, without which the artifact would silently be a
      // one-shot forward.
      if (options.kvCache) {
        std::string text;
        llvm::raw_string_ostream os(text);
        pm.printAsTextualPipeline(os);
        if (!llvm::StringRef(text).contains("kiln-paged-kv-cache"))
          return llvm::createStringError(
              "--kv-cache with --pass-pipeline: the pipeline has no kiln-paged-kv-cache pass, so "
              "the artifact would have no KV cache; give kiln-pipeline{kv-cache=true "
              "max-seq-len=N} in the text (or compile without --kv-cache)");
      }
    }
    if (!options.dumpCudaDir.empty())
      if (auto e = prepareReportDirectory(options.dumpCudaDir, "--dump-cuda"))
        return e;
    if (!mlirInput) {
      // A --kv-cache step of more tokens than one sequence holds (a range's largest, or the
      // static shape's).
      auto tooLong = [&](int64_t tokens) {
        return llvm::createStringError(
            "--shape '%s' asks for steps of up to %lld tokens, more than --max-seq-len %lld "
            "holds; lower the tokens to at most %lld",
            options.shapeSpec.c_str(), (long long)tokens, (long long)options.maxSeqLen,
            (long long)options.maxSeqLen);
      };
      auto ranges = parseStepShapeRanges(options.shapeSpec);
      if (!ranges)
        return ranges.takeError();
      if (*ranges) {
        if (!options.kvCache)
          return llvm::createStringError(
              "--shape '%s' gives a range, which needs --kv-cache (a range compiles one program "
              "per generation step shape); other models take one static shape",
              options.shapeSpec.c_str());
        if (options.tensorParallel > 1)
          return llvm::createStringError("--shape with a range (several programs) and "
                                         "--tensor-parallel cannot be combined yet");
        if (!options.passPipeline.empty())
          return llvm::createStringError(
              "--shape with a range and --pass-pipeline cannot be combined: the programs' "
              "KV-cache pools must have one shape, which kiln-compile sets in its own pipeline "
              "(compile one shape per artifact with a --pass-pipeline)");
        if (options.maxSeqLen > 0 && (*ranges)->maxTokens > options.maxSeqLen)
          return tooLong((*ranges)->maxTokens);
        if ((*ranges)->minTokens > 1)
          llvm::WithColor::warning(llvm::errs(), "kiln-compile")
              << "--shape '" << options.shapeSpec << "': the token range's lower bound "
              << (*ranges)->minTokens
              << " changes nothing: prefill programs take prompts of any length in chunks and "
                 "generation steps take 1 token\n";
        stepPrograms = planStepPrograms(**ranges);
        auto parsed = parseShapeSpec(stepPrograms.front().shapeSpec);
        if (!parsed)
          return parsed.takeError();
        shapes = std::move(*parsed);
      } else {
        auto parsed = parseShapeSpec(options.shapeSpec);
        if (!parsed)
          return parsed.takeError();
        shapes = std::move(*parsed);
        // The step's shape comes from input_ids (--kv-cache derives the mask, positions and
        // empty past from it); without it the importer would ask for each of those instead.
        if (options.kvCache && options.passPipeline.empty() && !shapes->count("input_ids"))
          return llvm::createStringError(
              "--kv-cache needs --shape input_ids=BxS (one step: S = 1 decodes) or a range "
              "input_ids=B0..B1xS0..S1; kiln derives the attention mask, positions and empty "
              "past from it");
        if (options.kvCache && options.passPipeline.empty()) {
          const auto &ids = shapes->find("input_ids")->second;
          if (ids.size() != 2 || llvm::any_of(ids, [](int64_t d) { return d < 1; }))
            return llvm::createStringError(
                "--kv-cache: --shape input_ids=%s must be BxS with B >= 1 sequences and S >= 1 "
                "tokens per step",
                llvm::join(llvm::map_range(ids, [](int64_t d) { return std::to_string(d); }),
                           "x")
                    .c_str());
          // As a range's bounds are checked (parseStepShapeRanges, the range check above).
          if (ids[0] > kMaxStepBatch)
            return llvm::createStringError(
                "--kv-cache: --shape input_ids=%lldx%lld has a batch past %lld sequences per step",
                (long long)ids[0], (long long)ids[1], (long long)kMaxStepBatch);
          if (options.maxSeqLen > 0 && ids[1] > options.maxSeqLen)
            return tooLong(ids[1]);
          // Options that act on one kind of step only, given for a shape of the other kind.
          const std::string step = std::to_string(ids[0]) + "x" + std::to_string(ids[1]);
          if (options.fuseKvAppend.value_or(false) && options.fuse && ids[1] > 1)
            llvm::WithColor::warning(llvm::errs(), "kiln-compile")
                << "--fuse-kv-append has no effect with --shape input_ids=" << step
                << ": it merges the append of decode steps (one token per sequence)\n";
          if (!options.lastTokenLogits && ids[1] == 1)
            llvm::WithColor::warning(llvm::errs(), "kiln-compile")
                << "--prefill-logits all has no effect with --shape input_ids=" << step
                << ": a decode step's one token has one row of logits\n";
        }
      }
    }
    return llvm::Error::success();
  };
  if (llvm::Error e = checkOptions())
    return llvm::make_error<UsageError>(llvm::toString(std::move(e)));

  if (options.emit == EmitKind::Pipeline) {
    PassManager pm(&context, ModuleOp::getOperationName());
    if (auto e = buildPipeline(options, targets, /*rank=*/0, pm))
      return std::move(e);
    pm.printAsTextualPipeline(os);
    os << "\n";
    return finish();
  }

  // 1. Import (or parse the .mlir graph).
  OwningOpRef<ModuleOp> module;
  std::shared_ptr<const onnx::ModelProto> onnxModel; // the parsed file, while imports need it
  InitializerCache initializers; // its weights, read once for every import
  if (mlirInput) {
    clock.start("parse mlir");
    module = parseGraphFile(context, options.inputPath);
    if (!module)
      return llvm::createStringError("failed to read the kiln graph in '%s'",
                                     options.inputPath.c_str());
  } else {
    clock.start("import");
    // Read once: the programs of a --shape range and the two-token causal check import the
    // same file again at other shapes.
    onnxModel = loadOnnxModel(context, options.inputPath);
    if (!onnxModel)
      return llvm::createStringError("failed to import '%s'", options.inputPath.c_str());
    if (options.kvCache && options.maxSeqLen > 0)
      if (auto cache = staticCacheLength(*onnxModel); cache && cache->second < options.maxSeqLen)
        llvm::WithColor::warning(llvm::errs(), "kiln-compile")
            << "'" << options.inputPath << "': past cache '" << cache->first << "' holds "
            << cache->second << " positions (a static cache written by TensorScatter), but "
            << "--max-seq-len is " << options.maxSeqLen
            << ": kiln's cache holds that many per sequence, past the positions the model was "
               "exported for; give --max-seq-len "
            << cache->second << " or less to stay within them\n";
    ImportOptions importOptions;
    importOptions.emptyPast = options.kvCache;
    importOptions.derivePositionIds = options.kvCache;
    importOptions.maxSeqLen = options.kvCache ? options.maxSeqLen : 0;
    importOptions.initializers = &initializers;
    module = importOnnxModel(context, options.inputPath, *onnxModel, *shapes, importOptions);
    if (!module)
      return llvm::createStringError("failed to import '%s'", options.inputPath.c_str());
  }
  // Programs 1..n-1 of a --shape range, each imported at its own step shape, in parallel
  // (the context's thread pool; diagnostics come out in program order).
  std::vector<OwningOpRef<ModuleOp>> moreModules(stepPrograms.empty() ? 0
                                                                      : stepPrograms.size() - 1);
  std::vector<InputShapes> moreShapes;
  for (size_t p = 1; p < stepPrograms.size(); ++p) {
    auto programShapes = parseShapeSpec(stepPrograms[p].shapeSpec);
    if (!programShapes)
      return programShapes.takeError();
    moreShapes.push_back(std::move(*programShapes));
  }
  mlir::parallelFor(&context, 0, moreModules.size(), [&](size_t p) {
    ImportOptions importOptions;
    importOptions.emptyPast = true;
    importOptions.derivePositionIds = true;
    importOptions.maxSeqLen = options.maxSeqLen;
    importOptions.initializers = &initializers;
    moreModules[p] = importOnnxModel(context, options.inputPath, *onnxModel, moreShapes[p],
                                     importOptions);
  });
  for (size_t p = 0; p < moreModules.size(); ++p)
    if (!moreModules[p])
      return llvm::createStringError("failed to import '%s' at --shape %s (program %s)",
                                     options.inputPath.c_str(),
                                     stepPrograms[p + 1].shapeSpec.c_str(),
                                     stepPrograms[p + 1].name.c_str());
  if (options.kvCache && !mlirInput) {
    // At one token every attention looks causal (and bidirectional): decide at two.
    auto ids = shapes->find("input_ids");
    if (ids != shapes->end() && ids->second.size() == 2 && ids->second[1] == 1) {
      clock.start("kv-cache check");
      // A --shape range's smallest prefill program (two tokens or more) is already imported:
      // a clone of it is checked instead of importing the model once more (24.5 of 105 s of
      // the 0.8B Llama's compile, session 16).
      std::optional<size_t> smallest;
      for (size_t p = 1; p < stepPrograms.size(); ++p)
        if (stepPrograms[p].tokens >= 2 &&
            (!smallest || stepPrograms[p].tokens < stepPrograms[*smallest].tokens))
          smallest = p;
      if (smallest) {
        OwningOpRef<ModuleOp> probe = moreModules[*smallest - 1]->clone();
        if (auto e = checkCausal(context, options.inputPath, *probe,
                                 stepPrograms[*smallest].tokens))
          return std::move(e);
      } else if (auto e = checkCausalAtTwoTokens(context, options.inputPath, *onnxModel,
                                                 *shapes, options.maxSeqLen, &initializers)) {
        return std::move(e);
      }
      for (auto func : module->getOps<func::FuncOp>())
        func->setAttr(kCausalCheckedAttrName, UnitAttr::get(&context));
      for (OwningOpRef<ModuleOp> &more : moreModules)
        for (auto func : more->getOps<func::FuncOp>())
          func->setAttr(kCausalCheckedAttrName, UnitAttr::get(&context));
    }
  }
  if (options.kvCache && options.emit == EmitKind::Artifact &&
      llvm::sys::path::extension(options.inputPath) != ".mlir") {
    // What the generation runtime writes and reads (runtime/src/Generate.cpp): int64 token ids
    // and positions, and a `logits` output; a position_ids input the graph never reads means
    // its positions come from inside it and would restart at 0 in every step.
    for (auto func : module->getOps<func::FuncOp>())
      if (auto e = checkGenerationIO(func, options.inputPath))
        return std::move(e);
  }
  onnxModel.reset(); // every import is done: the file's bytes are in the modules now
  clock.start("check sizes");
  if (failed(verifyTensorSizes(*module)))
    return llvm::createStringError("'%s' is too large at the given --shape",
                                   options.inputPath.c_str());
  for (size_t p = 0; p < moreModules.size(); ++p)
    if (failed(verifyTensorSizes(*moreModules[p])))
      return llvm::createStringError("'%s' is too large at --shape %s (program %s)",
                                     options.inputPath.c_str(),
                                     stepPrograms[p + 1].shapeSpec.c_str(),
                                     stepPrograms[p + 1].name.c_str());
  // A model that already stores f16/bf16 tensors (an fp16 export) needs the
  // same sm_80 features as --precision fp16, whatever --precision says.
  if (unsigned oldest = *llvm::min_element(targets); oldest < 80) {
    Type narrow;
    module->walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (auto tt = dyn_cast<RankedTensorType>(t);
            tt && !narrow && (tt.getElementType().isF16() || tt.getElementType().isBF16()))
          narrow = tt.getElementType();
    });
    if (narrow) {
      std::string name;
      llvm::raw_string_ostream(name) << narrow;
      return llvm::createStringError(
          "'%s' stores %s tensors, which need every --target to be sm_80 or newer (tensor-core "
          "GEMMs, 16-bit conversions), got sm_%u; compile it for sm_80+ or convert the model "
          "to fp32",
          options.inputPath.c_str(), name.c_str(), oldest);
    }
  }
  if (options.emit == EmitKind::Graph) {
    clock.start("print mlir");
    printModule(*module, options, os);
    return finish();
  }
  // The kernel plan is made for the first target (a .mlir graph's own
  // kiln.target gives way to --target).
  (*module)->setAttr(kTargetAttrName, tilingTarget);
  for (OwningOpRef<ModuleOp> &more : moreModules)
    (*more)->setAttr(kTargetAttrName, tilingTarget);
  // Every program's pools have the same shape: blocks for the largest batch (and one spare
  // block, where the runtime points the rows that pad a batch bucket).
  CompileOptions programOptions = options;
  // A --kv-blocks given with a range must hold one step of every program: name the largest
  // need (each program's pipeline would otherwise report its own, the first failing one).
  if (stepPrograms.size() > 1 && options.kvBlocks > 0 && options.kvBlockSize > 0) {
    const StepProgram *largest = nullptr;
    int64_t need = 0;
    for (const StepProgram &p : stepPrograms) {
      int64_t blocks = p.batch * llvm::divideCeil(p.tokens, options.kvBlockSize);
      if (blocks > need)
        need = blocks, largest = &p;
    }
    if (largest && options.kvBlocks < need)
      return llvm::createStringError(
          "--kv-blocks %lld cannot hold one step of program %s (%lld sequence%s of %lld token%s "
          "in blocks of %lld need %lld blocks); give --kv-blocks %lld or more",
          (long long)options.kvBlocks, largest->name.c_str(), (long long)largest->batch,
          largest->batch == 1 ? "" : "s", (long long)largest->tokens,
          largest->tokens == 1 ? "" : "s",
          (long long)options.kvBlockSize, (long long)need, (long long)need);
  }
  if (!stepPrograms.empty() && options.kvBlocks == 0 && options.maxSeqLen > 0 &&
      options.kvBlockSize > 0) {
    int64_t maxBatch = 0;
    for (const StepProgram &p : stepPrograms)
      maxBatch = std::max(maxBatch, p.batch);
    programOptions.kvBlocks =
        maxBatch * llvm::divideCeil(options.maxSeqLen, options.kvBlockSize) + 1;
    // Block ids are int32 on the GPU: a pool past that is the options' product, not a
    // --kv-blocks the user gave, so say which ones.
    if (programOptions.kvBlocks > std::numeric_limits<int32_t>::max())
      return llvm::createStringError(
          "the KV cache pools would take %lld blocks (%lld sequences x ceil(--max-seq-len %lld "
          "/ block %lld) + 1), more than the 2147483647 block ids of the GPU's int32 block "
          "table; lower --max-seq-len or the batch of --shape",
          (long long)programOptions.kvBlocks, (long long)maxBatch, (long long)options.maxSeqLen,
          (long long)options.kvBlockSize);
  }

  // 2-5 once per rank: passes, codegen, NVRTC, artifact. Ranks have the same
  // kernels (only weights differ), so NVRTC output is reused across ranks.
  const unsigned tpSize = options.tensorParallel;
  const unsigned numRanks = perRank ? tpSize : 1;
  uint64_t groupHash = 0;
  if (perRank && options.emit == EmitKind::Artifact) {
    clock.start("hash model");
    auto file = llvm::MemoryBuffer::getFile(options.inputPath);
    if (!file)
      return llvm::createStringError(file.getError(), "cannot read '%s': %s",
                                     options.inputPath.c_str(), file.getError().message().c_str());
    std::string salt = options.shapeSpec + "|" + stringifyPrecision(options.precision).str() + "|" +
                       std::to_string(tpSize) + "|" + llvm::join(options.targets, ",") + "|" +
                       (options.fuse ? "fuse" : "nofuse") + "|" + options.mmaTile +
                       (options.wgmma ? "|wgmma" : "") + (options.sm90Gemm ? "" : "|no-sm90-gemm") +
                       (options.sm90Attention ? "|hopper-attention" : "") +
                       (options.sm90AttentionPersistent == Sm90AttentionLaunch::Auto
                            ? ""
                            : options.sm90AttentionPersistent == Sm90AttentionLaunch::Persistent
                                  ? "|hopper-attention-persistent"
                                  : "|hopper-attention-grid") +
                       (options.sm90PrefillAttention ? "|hopper-prefill-attention" : "") +
                       (options.fuseKeyRotary ? "" : "|key-rotary-kernel") +
                       (options.recomputeRotaryTables ? "|rotary-recompute" : "") +
                       (options.fuseNormIntoGemm ? "|norm-fused" : "") +
                       (options.normIntoFewRowGemm ? "" : "|norm-few-row-kernel") +
                       (options.splitKv ? "" : "|no-split-kv") +
                       (options.fuseKvAppend.value_or(true) ? "|fuse-kv-append" : "");
    // The compiler itself is part of the group: rank files from two builds
    // (whose sharding or kernels may differ) must not run together.
    if (auto self = llvm::MemoryBuffer::getFile("/proc/self/exe"))
      salt += "|" + std::to_string(llvm::xxh3_64bits((*self)->getBuffer()));
    groupHash = llvm::xxh3_64bits((*file)->getBuffer()) ^ llvm::xxh3_64bits(salt);
  }
  ModuleCache nvrtcCache;
  for (unsigned rank = 0; rank < numRanks; ++rank) {
    // The last rank consumes the imported module; earlier ranks work on clones.
    OwningOpRef<ModuleOp> rankModule =
        rank + 1 < numRanks ? OwningOpRef<ModuleOp>(module->clone()) : std::move(module);
    std::vector<ProgramModule> programs = {
        {stepPrograms.empty() ? "" : stepPrograms.front().name, *rankModule}};
    for (size_t p = 1; p < stepPrograms.size(); ++p)
      programs.push_back({stepPrograms[p].name, *moreModules[p - 1]});
    if (auto e = compileRank(context, programOptions, targets, programs, rank, groupHash,
                             nvrtcCache, os, stats, clock))
      return std::move(e);
    for (const StepProgram &p : stepPrograms)
      stats.programs.push_back(p.name);
  }
  auto result = finish();
  if (!result || options.reportDir.empty())
    return result;
  if (auto e = writeReports(options, *result))
    return std::move(e);
  return result;
}

bool kiln::isSameFile(llvm::StringRef input, llvm::StringRef output) {
  if (output != "-" && output == input)
    return true;
  llvm::sys::fs::file_status in, out;
  if (llvm::sys::fs::status(input, in))
    return false;
  std::error_code ec = output == "-" ? llvm::sys::fs::status(STDOUT_FILENO, out)
                                     : llvm::sys::fs::status(output, out);
  return !ec && llvm::sys::fs::equivalent(in, out);
}

llvm::Error kiln::checkOutputIsNotInput(llvm::StringRef input, llvm::StringRef output) {
  if (!isSameFile(input, output))
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "output '" + output + "' is the input model '" + input +
                                     "' (the same file); choose another -o");
}

llvm::Error kiln::checkOutputWritable(llvm::StringRef path) {
  if (isStandardOutput(path))
    return llvm::Error::success();
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write '" + path + "': " + why);
  };
  if (path.empty())
    return fail("the path is empty");
  if (llvm::sys::path::is_separator(path.back()))
    return fail("the path names a directory; give a file name");
  llvm::SmallString<256> destination = outputDestination(path);
  llvm::sys::fs::file_status existing;
  if (!llvm::sys::fs::status(destination, existing) && llvm::sys::fs::exists(existing)) {
    if (llvm::sys::fs::is_directory(existing))
      return fail("it is a directory");
    // /dev/null, a FIFO: written in place (opening a FIFO here would signal
    // end-of-file to its reader, so only the permission is checked).
    if (!llvm::sys::fs::is_regular_file(existing)) {
      if (::access(destination.c_str(), W_OK) != 0)
        return fail(std::error_code(errno, std::generic_category()).message());
      return llvm::Error::success();
    }
  }
  llvm::StringRef parent = llvm::sys::path::parent_path(destination);
  if (!parent.empty() && !llvm::sys::fs::is_directory(parent))
    return fail("the directory '" + parent + "' does not exist");
  // The writer's temporary file: creating it is exactly what must succeed.
  int fd = -1;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(destination + ".tmp-%%%%%%", fd, temp))
    return fail(ec.message());
  ::close(fd);
  llvm::sys::fs::remove(temp);
  return llvm::Error::success();
}

std::string kiln::defaultArtifactPath(llvm::StringRef inputPath) {
  llvm::SmallString<128> name(llvm::sys::path::filename(inputPath));
  llvm::sys::path::replace_extension(name, ".kiln");
  return name.str().str();
}
