//===- CompilerBridge.h - kiln::compileModel behind plain C++ types -*- C++ -*-===//
//
// The compiler half of the Python package calls kiln::compileModel through this header, which
// names no LLVM or MLIR type: the bindings (CompilerModule.cpp) are built with exceptions and RTTI
// as nanobind needs, the bridge (CompilerBridge.cpp) like the compiler, without them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PYTHON_COMPILERBRIDGE_H
#define KILN_PYTHON_COMPILERBRIDGE_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::python {

/// kiln::CompileOptions with enums as the strings kiln-compile takes (docs/kiln-compile.md);
/// defaults as kiln-compile's.
struct CompileRequest {
  std::string inputPath;  ///< model.onnx or a graph-level .mlir file
  std::string outputPath; ///< the artifact (with tensorParallel > 1: the base of the rank files)
  std::string shapeSpec;  ///< "input_ids=1x128,attention_mask=1x128"; ranges with kvCache
  std::vector<std::string> targets = {"sm_90"};
  std::string precision = "fp32"; ///< fp32, tf32, fp16, bf16
  std::string emit = "artifact";  ///< artifact, graph, kernels, pipeline
  bool fuse = true;
  std::string mmaTile;
  bool wgmma = false, sm90Gemm = true, sm90Attention = true;
  std::string sm90AttentionPersistent = "auto"; ///< off, auto, on
  bool sm90PrefillAttention = true;
  bool skinnyGemm = true;
  std::string skinnyTensorCores = "off"; ///< off, auto, on
  bool skinnyWeightPreload = true;
  bool splitKv = true;
  bool decodeAttentionPreload = true;
  std::optional<bool> fuseKvAppend; ///< unset: on wherever it applies (Options::fuseKvAppend)
  std::string attentionKeyRotary = "kernel"; ///< fused, kernel
  std::string normIntoGemm = "few-row";      ///< fused, few-row, kernel
  std::string programmaticLaunch = "auto";   ///< auto, at-exit, early, off
  bool kvCache = false;
  int64_t maxSeqLen = 0, kvBlockSize = 16, kvBlocks = 0;
  std::string prefillLogits = "last"; ///< last, all
  bool deviceSampling = true;
  unsigned tensorParallel = 1;
  bool tpLoopback = false;
  std::string passPipeline;
  std::string dumpCudaDir, reportDir;
  unsigned threads = 0;
  bool printConstants = false;
};

/// The outcome of one compileModel call.
struct CompileResult {
  bool ok = false;
  /// The error is kiln::UsageError (a bad option value, found before the model is read).
  bool usageError = false;
  /// compileModel's summary error ("failed to import 'm.onnx'"), "" on success.
  std::string error;
  /// Every diagnostic as kiln-compile prints it ("m.onnx: error: node 'x' (MatMul): ..."), one
  /// line each.
  std::vector<std::string> diagnostics;
  /// MLIR text of emit graph/kernels, the pipeline text of emit pipeline.
  std::string text;
  int64_t kernels = 0, uniqueKernels = 0, modules = 0, arenaBytes = 0, intermediateBytes = 0,
          collectives = 0;
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>>
      files;                                          ///< path, (file, weights) bytes
  std::vector<std::pair<std::string, double>> phases; ///< name, ms
  std::vector<std::string> programs;
  std::vector<std::string> reportsJson; ///< compileReportToJson per artifact written
  double totalMs = 0;
};

/// Compiles per `request` in a fresh MLIRContext. Never throws; bad enum strings are usage
/// errors naming the option and its values.
CompileResult compile(const CompileRequest &request);

} // namespace kiln::python

#endif // KILN_PYTHON_COMPILERBRIDGE_H
