//===- CompilerBridge.cpp - kiln::compileModel behind plain C++ types -----===//
//
// Maps a CompileRequest onto kiln::CompileOptions (the enum spellings of kiln-compile's options),
// runs kiln::compileModel with the model diagnostic handler kiln-compile uses, and returns the
// diagnostics, the summary error and the statistics as plain C++ values.
//
//===----------------------------------------------------------------------===//

#include "CompilerBridge.h"

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/driver/Driver.h"
#include "compiler/report/Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "mlir/IR/MLIRContext.h"

#include <optional>

using namespace kiln::python;

namespace {

/// Parses `value` of option `option` with `cases` (spelling, value); a usage error listing the
/// spellings otherwise.
template <typename T>
std::optional<T> parseChoice(llvm::StringRef option, llvm::StringRef value,
                             llvm::ArrayRef<std::pair<llvm::StringRef, T>> cases,
                             CompileResult &result) {
  for (const auto &[spelling, v] : cases)
    if (value == spelling)
      return v;
  std::vector<std::string> names;
  for (const auto &c : cases)
    names.push_back(c.first.str());
  result.usageError = true;
  result.error =
      ("invalid " + option + " '" + value + "': expected one of " + llvm::join(names, ", ")).str();
  return std::nullopt;
}

} // namespace

CompileResult kiln::python::compile(const CompileRequest &request) {
  CompileResult result;
  // kiln.compile opens what it wrote; an artifact sent to stdout would land in the caller's
  // output (kiln-compile -o - is for shell pipes).
  if (request.emit == "artifact" && isStandardOutput(request.outputPath)) {
    result.usageError = true;
    result.error = "output '" + request.outputPath +
                   "' is standard output: kiln.compile writes the artifact to a file and "
                   "returns it opened; give a file path, or output=None for a temporary file";
    return result;
  }
  kiln::CompileOptions options;
  options.inputPath = request.inputPath;
  options.outputPath = request.outputPath;
  options.shapeSpec = request.shapeSpec;
  options.targets = request.targets;
  options.dumpCudaDir = request.dumpCudaDir;
  options.reportDir = request.reportDir;
  options.fuse = request.fuse;
  options.mmaTile = request.mmaTile;
  options.wgmma = request.wgmma;
  options.sm90Gemm = request.sm90Gemm;
  options.sm90Attention = request.sm90Attention;
  options.sm90PrefillAttention = request.sm90PrefillAttention;
  options.skinnyGemm = request.skinnyGemm;
  options.skinnyWeightPreload = request.skinnyWeightPreload;
  options.splitKv = request.splitKv;
  options.decodeAttentionPreload = request.decodeAttentionPreload;
  options.fuseKvAppend = request.fuseKvAppend;
  options.kvCache = request.kvCache;
  options.maxSeqLen = request.maxSeqLen;
  options.kvBlockSize = request.kvBlockSize;
  options.kvBlocks = request.kvBlocks;
  options.deviceSampling = request.deviceSampling;
  options.tensorParallel = request.tensorParallel;
  options.tpLoopback = request.tpLoopback;
  options.passPipeline = request.passPipeline;
  options.threads = request.threads;
  options.elideElementsLargerThan = request.printConstants ? 0 : 16;

  using llvm::StringRef;
  auto emit = parseChoice<EmitKind>("emit", request.emit,
                                    {{"artifact", EmitKind::Artifact},
                                     {"graph", EmitKind::Graph},
                                     {"kernels", EmitKind::Kernels},
                                     {"pipeline", EmitKind::Pipeline}},
                                    result);
  auto precision = parseChoice<Precision>("precision", request.precision,
                                          {{"fp32", Precision::FP32},
                                           {"tf32", Precision::TF32},
                                           {"fp16", Precision::FP16},
                                           {"bf16", Precision::BF16}},
                                          result);
  auto skinny = parseChoice<SkinnyTensorCores>("skinny_tensor_cores", request.skinnyTensorCores,
                                               {{"off", SkinnyTensorCores::Off},
                                                {"auto", SkinnyTensorCores::Auto},
                                                {"on", SkinnyTensorCores::On}},
                                               result);
  auto keyRotary = parseChoice<bool>("attention_key_rotary", request.attentionKeyRotary,
                                     {{"kernel", false}, {"fused", true}}, result);
  auto norm = parseChoice<int>("norm_into_gemm", request.normIntoGemm,
                               {{"fused", 0}, {"few-row", 1}, {"kernel", 2}}, result);
  auto launch = parseChoice<ProgrammaticLaunch>("programmatic_launch", request.programmaticLaunch,
                                                {{"auto", ProgrammaticLaunch::Auto},
                                                 {"at-exit", ProgrammaticLaunch::AtExit},
                                                 {"early", ProgrammaticLaunch::Early},
                                                 {"off", ProgrammaticLaunch::Off}},
                                                result);
  auto persistent = parseChoice<Sm90AttentionLaunch>("hopper_attention_persistent",
                                                     request.sm90AttentionPersistent,
                                                     {{"off", Sm90AttentionLaunch::Grid},
                                                      {"auto", Sm90AttentionLaunch::Auto},
                                                      {"on", Sm90AttentionLaunch::Persistent}},
                                                     result);
  auto logits = parseChoice<bool>("prefill_logits", request.prefillLogits,
                                  {{"last", true}, {"all", false}}, result);
  if (!emit || !precision || !skinny || !keyRotary || !norm || !launch || !persistent || !logits)
    return result;
  options.emit = *emit;
  options.precision = *precision;
  options.skinnyTensorCores = *skinny;
  options.fuseKeyRotary = *keyRotary;
  options.fuseNormIntoGemm = *norm == 0;
  options.normIntoFewRowGemm = *norm != 2;
  options.programmaticLaunch = *launch;
  options.lastTokenLogits = *logits;
  options.sm90AttentionPersistent = *persistent;

  mlir::MLIRContext context;
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  llvm::raw_string_ostream textStream(result.text);
  llvm::Expected<CompileStats> stats = [&] {
    auto handler = installModelDiagnosticHandler(context, diagStream);
    return compileModel(context, options, textStream);
  }();
  diagStream.flush();
  textStream.flush();
  llvm::SmallVector<StringRef> lines;
  StringRef(diagnostics).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines)
    result.diagnostics.push_back(line.str());
  if (!stats) {
    llvm::Error error = stats.takeError();
    result.usageError = error.isA<UsageError>();
    result.error = llvm::toString(std::move(error));
    return result;
  }
  result.ok = true;
  result.kernels = stats->kernels;
  result.uniqueKernels = stats->uniqueKernels;
  result.modules = stats->modules;
  result.arenaBytes = stats->arenaBytes;
  result.intermediateBytes = stats->intermediateBytes;
  result.collectives = stats->collectives;
  for (const CompiledFile &file : stats->files)
    result.files.push_back({file.path, {file.fileBytes, file.weightBytes}});
  for (const CompilePhase &phase : stats->phases)
    result.phases.emplace_back(phase.name, phase.ms);
  result.programs = stats->programs;
  for (const CompileReport &report : stats->reports) {
    std::string json;
    llvm::raw_string_ostream os(json);
    os << compileReportToJson(report);
    os.flush();
    result.reportsJson.push_back(std::move(json));
  }
  result.totalMs = stats->totalMs;
  return result;
}
