//===- Report.h - kiln-compile --report: memory plan, kernels, phases -*- C++ -*-===//
//
// The compile report (`kiln-compile --report DIR`) describes one artifact for
// a person: the activation arena as a picture (every buffer a rectangle of
// lifetime x arena offset, the peak marked), the launches with their fused
// ops, ONNX nodes, launch shape, bytes and FLOPs, and the time of each
// compile phase. It is written as DIR/index.html (self-contained: inline SVG
// and CSS, no external resources) and DIR/report.json (the same data for
// scripts). Everything is read from the planned function and the launch list
// the artifact is written from, so the page shows exactly what runs.
// Format and counting rules: docs/report.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_REPORT_REPORT_H
#define KILN_COMPILER_REPORT_REPORT_H

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/artifact/LaunchMetadata.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// One buffer of the activation arena (a kernel result; views share it).
struct ReportBuffer {
  std::string kernel;      ///< symbol of the defining kiln.kernel, e.g. "k3_matmul_add"
  unsigned result = 0;     ///< result index within that kernel
  std::string type;        ///< tensor type, e.g. "tensor<1x16x64xf32>"
  /// Who computes it: the ONNX node of the op the kernel yields, looking
  /// through reshapes ("node_MatMul_12 (MatMul)"), else "@" and the kernel symbol.
  std::string name;
  std::string output;      ///< graph output name when the function returns it, else ""
  int64_t bytes = 0;       ///< tensor bytes
  int64_t arenaBytes = 0;  ///< bytes it occupies in the arena (rounded up to the alignment)
  int64_t offset = 0;      ///< byte offset in the arena
  int64_t firstLaunch = 0; ///< launch index that writes it
  /// Last launch index that reads it (inclusive); the last launch when the
  /// buffer is a graph output (liveToEnd).
  int64_t lastLaunch = 0;
  bool liveToEnd = false;  ///< returned by the function: lives past the last launch
};

/// One launch of the schedule.
struct ReportLaunch {
  std::string kernel;   ///< kiln.kernel symbol ("k3_matmul_add")
  std::string function; ///< CUDA function in the artifact ("kiln_k2")
  std::array<unsigned, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  unsigned sharedMemBytes = 0; ///< dynamic shared memory, bytes
  LaunchMetadata metadata;     ///< name, layer, ops, ONNX nodes, FLOPs and bytes
};

/// Wall time of one compile phase.
struct ReportPhase {
  std::string name; ///< "import", "passes", "codegen", "nvrtc", ...
  double ms = 0;    ///< milliseconds
};

/// Everything one report page shows: one artifact (one tensor-parallel rank).
struct CompileReport {
  std::string model;                ///< the model path as given
  std::string shapes;               ///< the --shape spec ("" when none)
  std::string precision;            ///< "fp32", "fp16", ...
  std::vector<std::string> targets; ///< "sm_90", ...
  std::string artifact;             ///< the artifact path written ("-": stdout)
  unsigned rank = 0, worldSize = 1; ///< tensor-parallel rank and rank count
  int64_t arenaBytes = 0;           ///< planned arena (kiln.arena_bytes)
  int64_t intermediateBytes = 0;    ///< sum of arenaBytes of all buffers (no reuse)
  int64_t alignment = 0;            ///< arena alignment the plan used, bytes
  /// First launch at which the live buffers reach the top of the arena
  /// (offset + arenaBytes == arenaBytes); -1 without buffers.
  int64_t peakLaunch = -1;
  int64_t maxLiveBytes = 0;   ///< largest sum of arenaBytes over buffers live at one launch
  int64_t maxLiveLaunch = -1; ///< the first launch where maxLiveBytes is reached
  std::vector<ReportBuffer> buffers;      ///< definition order
  std::vector<ReportLaunch> launches;     ///< launch order
  std::vector<unsigned> allReducesBefore; ///< per all-reduce: the launch it runs before
  std::vector<ReportPhase> phases;        ///< compile phases, in the order they first ran
  double totalMs = 0;                     ///< whole compile, milliseconds
};

/// Collects the memory plan and launch table of `func` after kiln-plan-memory
/// (each kiln.kernel has `arena_offsets`; launch i belongs to the i-th
/// kiln.kernel in program order) with its `launches` and `collectives`, as
/// the driver passes them to writeArtifact. Buffer sizes use the alignment
/// the plan recorded (`kiln.arena_alignment`). Only the buffer and launch
/// fields and the arena numbers are filled; the caller sets model, options
/// and phases. Errors (internal: a report of an inconsistent plan would
/// mislead): no `kiln.arena_bytes`/`kiln.arena_alignment` or a kernel without
/// arena offsets (kiln-plan-memory did not run), a launch count that differs
/// from the kernel count, a buffer past the arena or no launch reaching its top.
llvm::Expected<CompileReport> collectCompileReport(mlir::func::FuncOp func,
                                                   llvm::ArrayRef<ArtifactLaunch> launches,
                                                   llvm::ArrayRef<ArtifactCollective> collectives);

/// The report as JSON (the layout is documented in docs/report.md; sizes in
/// bytes, times in milliseconds).
llvm::json::Value compileReportToJson(const CompileReport &report);

/// Writes the report as one self-contained HTML page to `os`: facts, the
/// memory-plan SVG, the kernel table, the phase table and the buffer list.
/// Every name from the model is HTML-escaped.
void printCompileReportHtml(const CompileReport &report, llvm::raw_ostream &os);

/// Creates `dir` (with parents) unless it exists, and checks that files can
/// be created in it by creating and removing a temporary file. Errors name the
/// option and the directory and the reason: "--report directory 'x' exists and
/// is not a directory" (`option` is "--report", or "--dump-cuda" for that one).
/// Run before a compile so that a bad directory fails in milliseconds.
llvm::Error prepareReportDirectory(llvm::StringRef dir, llvm::StringRef option = "--report");

/// Writes `dir`/index.html and `dir`/report.json for `report` (each through a
/// temporary file renamed into place). Errors name the file.
llvm::Error writeCompileReport(const CompileReport &report, llvm::StringRef dir);

/// For tensor-parallel compiles: writes `dir`/index.html linking the rank
/// pages `rank<r>/index.html` written by writeCompileReport, with each rank's
/// launches, arena and FLOPs. Errors name the file.
llvm::Error writeRankIndex(llvm::ArrayRef<CompileReport> ranks, llvm::StringRef dir);

} // namespace kiln

#endif // KILN_COMPILER_REPORT_REPORT_H
