//===- OnnxImportFuzzer.cpp - libFuzzer target: ONNX bytes -> kiln pipeline -===//
//
// Feeds arbitrary bytes through the compiler exactly as `kiln-compile
// --emit=kernels` would: parse as an ONNX ModelProto, import with static
// shapes, check tensor sizes, run buildKilnPipeline and print the result. NVRTC
// is never reached (compileModel stops after the pipeline for
// EmitKind::Kernels). A clean rejection (a diagnostic and an error) is a normal
// outcome; a crash, a sanitizer report, a hang or an out-of-memory is a finding.
//
// Inputs that parse are written to model.onnx in a private temporary
// directory (the importer reads files; external data resolves inside that
// directory, which holds nothing else). Shapes, like `--shape`:
//   1. every graph input (initializers excluded) with a symbolic or unknown
//      dim gets a shape; fixed dims keep their value;
//   2. symbolic dims get 2, 3, 4, ... in the order their names first appear
//      (the same name, the same value), unnamed dims ("?") get 2;
//   3. inputs whose names the --shape syntax cannot carry (',' '=' or empty)
//      get none, so the importer rejects them as it would on the command line.
// Precision: FP32, FP16 or BF16 by the input's length modulo 3, so one file
// always replays the same way (kiln-compile --precision fp32|fp16|bf16).
//
// Replay a file: kiln-fuzz-onnx FILE; or with kiln-compile:
//   kiln-compile FILE --emit=kernels --shape <spec> --precision <p>
// (the target prints the spec and precision with KILN_FUZZ_VERBOSE=1).
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Driver.h"
#include "compiler/onnx/OnnxProto.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

/// model.onnx inside the private directory created by LLVMFuzzerInitialize.
std::string modelPath;
bool verbose = false;

/// Returns the --shape spec for `graph` (steps 1-3 of the file comment).
std::string shapeSpecFor(const onnx::GraphProto &graph) {
  llvm::StringMap<bool> initializers;
  for (const onnx::TensorProto &t : graph.initializer())
    initializers[t.name()] = true;
  llvm::StringMap<int64_t> symbolValues;
  std::string spec;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    const std::string &name = in.name();
    if (initializers.count(name) || !in.type().has_tensor_type() ||
        !in.type().tensor_type().has_shape())
      continue;
    if (name.empty() || name.find_first_of(",=") != std::string::npos)
      continue;
    std::string dims;
    bool symbolic = false;
    for (const onnx::TensorShapeProto::Dimension &d : in.type().tensor_type().shape().dim()) {
      int64_t value = 2;
      if (d.has_dim_value() && d.dim_value() >= 0) {
        value = d.dim_value();
      } else {
        symbolic = true;
        if (d.has_dim_param() && !d.dim_param().empty())
          value = symbolValues.try_emplace(d.dim_param(), 2 + symbolValues.size()).first->second;
      }
      if (!dims.empty())
        dims += 'x';
      dims += std::to_string(value);
    }
    if (!symbolic)
      continue;
    if (!spec.empty())
      spec += ',';
    spec += name + "=" + dims;
  }
  return spec;
}

bool writeModel(const uint8_t *data, size_t size) {
  FILE *f = std::fopen(modelPath.c_str(), "wb");
  if (!f)
    return false;
  bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

} // namespace

/// Creates the private directory that holds model.onnx.
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/kiln-fuzz-onnx-XXXXXX";
  if (!mkdtemp(dir.data())) {
    std::perror("kiln-fuzz-onnx: mkdtemp");
    std::abort();
  }
  modelPath = dir + "/model.onnx";
  verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnx::ModelProto model;
  std::string parseError;
  if (!kiln::parseModelProto(data, size, model, parseError) || !model.has_graph() ||
      model.ir_version() <= 0)
    return -1; // not a model: importOnnxFile rejects it the same way; keep it out of the corpus
  if (!writeModel(data, size)) {
    std::perror("kiln-fuzz-onnx: cannot write the model");
    std::abort();
  }

  static const kiln::Precision kPrecisions[] = {kiln::Precision::FP32, kiln::Precision::FP16,
                                                kiln::Precision::BF16};
  kiln::CompileOptions options;
  options.inputPath = modelPath;
  options.outputPath = "-";
  options.shapeSpec = shapeSpecFor(model.graph());
  options.emit = kiln::EmitKind::Kernels;
  options.precision = kPrecisions[size % 3];
  options.threads = 1;
  if (verbose)
    llvm::errs() << "kiln-fuzz-onnx: --shape '" << options.shapeSpec << "' --precision "
                 << kiln::stringifyPrecision(options.precision) << "\n";

  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  kiln::loadKilnDialects(context);
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler handler(&context, [](mlir::Diagnostic &diag) {
    if (verbose)
      llvm::errs() << "kiln-fuzz-onnx: " << diag.str() << "\n";
    return mlir::success();
  });
  llvm::raw_null_ostream os;
  llvm::Expected<kiln::CompileStats> stats = kiln::compileModel(context, options, os);
  if (!stats) {
    if (verbose)
      llvm::errs() << "kiln-fuzz-onnx: " << llvm::toString(stats.takeError()) << "\n";
    else
      llvm::consumeError(stats.takeError());
  }
  return 0;
}
