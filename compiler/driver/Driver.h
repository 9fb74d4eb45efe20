//===- Driver.h - the library behind kiln-compile -----------------*- C++ -*-===//
//
// compileModel() runs the whole compiler: import ONNX (shapes specialized) or
// parse a graph-level .mlir file, run the kiln pass pipeline (or one given as
// text), generate CUDA C++ per kernel, compile it with NVRTC and write the
// artifact, timing every phase. kiln-compile is a thin command-line shell.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_DRIVER_H
#define KILN_COMPILER_DRIVER_DRIVER_H

#include "compiler/driver/Progress.h"
#include "compiler/report/Report.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// What kiln-compile stops after.
enum class EmitKind {
  Graph,    ///< imported kiln graph, before any pass (MLIR text)
  Kernels,  ///< after the pass pipeline (MLIR text)
  Pipeline, ///< the textual pass pipeline that would run (nothing is read)
  Artifact, ///< the .kiln file (default)
};

/// What a decode step's few-row GEMMs warm L2 with before their grid-dependency wait
/// (kiln-compile --weight-prefetch).
enum class WeightPrefetch {
  Off,  ///< nothing (the default since session 30)
  Own,  ///< the next rows of the kernel's own weight share (kiln-select-tiles skinny-l2-prefetch)
  Next, ///< the next decode GEMM's weight (kiln-plan-weight-prefetch)
};

/// Options of one compilation.
/// Programmatic dependent launch of the generated kernels (kiln-compile --programmatic-launch;
/// docs/runtime.md). Used only when the lowest target is sm_90 or newer.
enum class ProgrammaticLaunch {
  Off,    ///< plain stream order: no griddepcontrol, launches not marked
  AtExit, ///< each kernel waits first; the next one may start as its blocks exit
  Early,  ///< each kernel waits, then lets the next one start at once
  /// Early in a program whose GEMMs have at most kEarlyLaunchMaxRows rows (decode steps, small
  /// prefill chunks, batch-1 runs of a few hundred tokens: short kernels), AtExit elsewhere.
  Auto
};

/// The most GEMM rows (tokens of a step) for which ProgrammaticLaunch::Auto triggers early. On
/// the H200 early was 6% faster than at-exit at 1x128 and 4% slower at 8x512 (docs/results.md).
inline constexpr int64_t kEarlyLaunchMaxRows = 256;

/// The most sequences one --kv-cache step (a --shape input_ids batch, or a range's upper
/// bound) may have.
inline constexpr int64_t kMaxStepBatch = 1024;

struct CompileOptions {
  /// model.onnx, or a .mlir file holding one graph-level `func.func` (what
  /// --emit=graph prints, constants in full): parsed instead of imported.
  std::string inputPath;
  std::string outputPath;           ///< model.kiln; "-" writes the artifact to stdout
  std::string shapeSpec;            ///< "input_ids=2x16,attention_mask=2x16"
  std::vector<std::string> targets = {"sm_90"}; ///< SASS targets; PTX for the lowest
  std::string dumpCudaDir;          ///< if set, write <module>.cu and .ptx here
  EmitKind emit = EmitKind::Artifact;
  bool fuse = true;
  Precision precision = Precision::FP32; ///< storage / GEMM precision (--precision)
  std::string mmaTile;              ///< MMA tile override for every 16-bit GEMM (--mma-tile)
  bool wgmma = false;               ///< Hopper wgmma GEMMs for sm_90 targets (--wgmma)
  /// The Hopper TMA + warp-specialized wgmma GEMM for 16-bit GEMMs (--sm90-gemm, default on);
  /// used only when every --target is sm_90 (its kernels exist for sm_90a alone).
  bool sm90Gemm = true;
  /// Attention on the Hopper TMA + wgmma kernel (kiln::attentionSm90; --hopper-attention,
  /// default on: 1.2-1.7x SDPA on the H200, docs/results.md); used only when every --target is
  /// sm_90.
  bool sm90Attention = true;
  /// With sm90Attention: persistent blocks or one per query tile
  /// (--hopper-attention-persistent=off|auto|on).
  Sm90AttentionLaunch sm90AttentionPersistent = Sm90AttentionLaunch::Auto;
  /// With sm90Attention: prefill chunks over a KV cache on the Hopper attention kernel too
  /// (kiln::prefillAttentionSm90Paged; --hopper-prefill-attention, default on since the H200
  /// measured it, session 22).
  bool sm90PrefillAttention = true;
  /// GEMMs of at most 16 rows (decode steps) on kiln::gemmSkinny, with sm90Gemm (--skinny-gemm,
  /// default on).
  bool skinnyGemm = true;
  /// Where the few-row GEMM multiplies (--skinny-tensor-cores, default auto: the tensor cores
  /// from kMinSkinnyTensorCoreRows rows on).
  SkinnyTensorCores skinnyTensorCores = SkinnyTensorCores::Auto;
  /// The few-row GEMM preloads its weight before the grid-dependency wait, one block per SM
  /// (--skinny-weight-preload, default on; off without programmatic launch).
  bool skinnyWeightPreload = true;
  /// What the few-row GEMMs warm L2 with before their grid-dependency wait (--weight-prefetch):
  /// nothing (the default since session 30), their own weight's next rows, or the next decode
  /// GEMM's weight (needs skinnyWeightPreload).
  WeightPrefetch weightPrefetch = WeightPrefetch::Off;
  /// The most rows whose few-row GEMMs preload their weight (--skinny-preload-rows, 2..16;
  /// above 2, A in chunks short enough that 3 blocks fit an SM; default 2).
  int64_t skinnyPreloadRows = 2;
  /// Blocks per SM the few-row GEMMs on the tensor cores (not preloaded) are planned for, with A
  /// staged in shorter chunks (--skinny-tc-occupancy, 0..4; default 0: the default plan).
  int64_t skinnyTcOccupancy = 0;
  /// Decode steps' paged attention split over a cluster of blocks, with sm90Gemm (--split-kv,
  /// default on).
  bool splitKv = true;
  /// The split-KV decode attention reads the lengths, the block table and its first tiles'
  /// cached rows before the grid-dependency wait (--decode-attention-preload, default on; off
  /// without programmatic launch).
  bool decodeAttentionPreload = true;
  /// A decode step's KV cache append inside its paged attention kernel (--fuse-kv-append,
  /// kiln-fuse-kv-append). Unset: on wherever it applies (decode steps of a fused pipeline; the
  /// default since session 25, measured faster at batch 1 and 8 on the H200 once the kernel
  /// before the merged one triggers at exit, docs/generation.md); true: asked for, with a
  /// warning where it cannot apply (--no-fuse, a prefill shape); false: off.
  std::optional<bool> fuseKvAppend;
  /// Attention's key rotary fused into the attention kernel (--attention-key-rotary=fused) or
  /// computed by its own kernel (=kernel, the default).
  bool fuseKeyRotary = false;
  /// A decode step's KV-cache append and paged attention compute the rotary tables' cos and sin
  /// per element (--decode-rotary=recompute) or read them from a table kernel (=kernel, the
  /// default: measured faster on the H200, session 29).
  bool recomputeRotaryTables = false;
  /// A layer / RMS norm folded into the Hopper GEMMs that read it (--norm-into-gemm=fused) or
  /// kept as its own kernel (=kernel, the default: the fold measured slower on the H200).
  bool fuseNormIntoGemm = false;
  /// An RMS norm read only by few-row (decode) GEMMs folded into their A loader
  /// (--norm-into-gemm=few-row, the default, or fused; off with =kernel).
  bool normIntoFewRowGemm = true;
  /// One generation step over a paged KV cache the runtime owns (--kv-cache; docs/generation.md):
  /// the importer compiles an empty past, kiln-bind-generation-inputs and kiln-paged-kv-cache
  /// run. maxSeqLen (> 0 with kvCache) bounds a sequence; kvBlockSize tokens per block;
  /// kvBlocks per layer pool (0: batch x ceil(maxSeqLen / kvBlockSize)).
  bool kvCache = false;
  int64_t maxSeqLen = 0;
  int64_t kvBlockSize = 16;
  int64_t kvBlocks = 0;
  /// --prefill-logits: a step of several tokens returns the logits of its last real token only
  /// (true, `last`, the default) or of every token (`all`).
  bool lastTokenLogits = true;
  /// --device-sampling: next_token is kiln.sample with the per-row sampling inputs (true, the
  /// default), or the greedy arg-max alone (false: a runtime samples on the host).
  bool deviceSampling = true;
  /// --programmatic-launch.
  ProgrammaticLaunch programmaticLaunch = ProgrammaticLaunch::Auto;
  unsigned threads = 0;             ///< NVRTC threads; 0 = hardware concurrency
  /// Tensor-parallel ranks N (--tensor-parallel): with N > 1 one artifact per
  /// rank, kiln::tpRankArtifactPath(outputPath, r) of kiln/runtime.hpp (the
  /// rule kiln-run uses to find them), each with its weight shard.
  unsigned tensorParallel = 1;
  /// With tensorParallel > 1: one artifact at outputPath holding all N ranks'
  /// shards, a sum in place of each all-reduce (--tp-loopback; one GPU).
  bool tpLoopback = false;
  /// A textual MLIR pass pipeline run instead of buildKilnPipeline
  /// (--pass-pipeline), e.g. "builtin.module(func.func(cse),kiln-pipeline)";
  /// the "builtin.module(...)" anchor may be left out. The pipeline
  /// options above (fuse, precision, mmaTile, wgmma, tensorParallel) are
  /// then not used: they are options of the pipeline text.
  std::string passPipeline;
  /// --emit=graph/kernels: elements attributes with more elements than this
  /// print as `dense_resource<__elided__>` (MLIR's
  /// --mlir-elide-elementsattrs-if-larger); 0 prints every one in full.
  /// Elided text cannot be compiled again (the parser reports it).
  int64_t elideElementsLargerThan = 16;
  /// Shows phases while they run (not owned); null: no progress display.
  ProgressReporter *progress = nullptr;
  /// --report: write the compile report (memory plan, kernel table, phase
  /// times; docs/report.md) as DIR/index.html and DIR/report.json; with
  /// tensor-parallel rank files one page per rank in DIR/rank<r>/ and an
  /// index page. Needs EmitKind::Artifact. Empty: no report.
  std::string reportDir;
};

/// Wall time of one compile phase.
struct CompilePhase {
  std::string name; ///< "import", "passes", "codegen", "nvrtc", "pack weights", ...
  double ms = 0;
};

/// One file written by compileModel.
struct CompiledFile {
  std::string path;
  uint64_t fileBytes = 0;
  uint64_t weightBytes = 0;
};

/// Numbers reported after a compilation.
struct CompileStats {
  int64_t kernels = 0;            ///< launches in the schedule
  int64_t uniqueKernels = 0;      ///< distinct kernel functions after deduplication
  int64_t modules = 0;            ///< CUDA modules (NVRTC compilations per target)
  int64_t arenaBytes = 0;         ///< planned activation arena (rank files: the largest)
  int64_t intermediateBytes = 0;  ///< sum of all kernel result bytes (no reuse; the largest rank)
  uint64_t weightBytes = 0;       ///< of the last file written
  uint64_t fileBytes = 0;         ///< of the last file written
  int64_t collectives = 0;        ///< all-reduces per rank
  std::vector<CompiledFile> files; ///< every artifact written, rank order
  /// Every phase that ran, in the order each first ran, with its wall time;
  /// tensor-parallel ranks add into the same entries. Names: "parse
  /// pipeline", "import" (ONNX; "parse mlir" for .mlir input), "check sizes",
  /// "hash model" (tensor-parallel group id), "passes", "print mlir"
  /// (--emit=graph/kernels), "codegen", "nvrtc", "dump cuda", "pack
  /// weights", "checksum", "write file", "verify artifact". totalMs minus
  /// their sum is the time outside any phase (option checks; well under 1 ms).
  std::vector<CompilePhase> phases;
  /// With CompileOptions::reportDir: the report of each artifact written, rank order.
  std::vector<CompileReport> reports;
  /// Names of the programs of a --kv-cache artifact compiled from a --shape range (program 0
  /// first); empty for an artifact of one program.
  std::vector<std::string> programs;
  /// Shorthands for the phases above (0 when a phase did not run).
  double importMs = 0, passesMs = 0, codegenMs = 0, nvrtcMs = 0, totalMs = 0;
};

/// A `--shape` whose `input_ids` dims are ranges, "input_ids=1..8x1..2048": batch and step
/// length (tokens per step) bounds, each min <= max.
struct StepShapeRanges {
  int64_t minBatch = 1, maxBatch = 1, minTokens = 1, maxTokens = 1;
};

/// Parses `spec` when some dim in it is a range `a..b`: then it must be exactly
/// `input_ids=B0..B1xS0..S1` (a plain number n is n..n), 1 <= min <= max for both dims, and the
/// result holds the bounds. Returns std::nullopt for a spec without ranges (parseShapeSpec reads
/// those) and an error naming the spec for any other use of `..`.
llvm::Expected<std::optional<StepShapeRanges>> parseStepShapeRanges(llvm::StringRef spec);

/// One program (step shape) of a --kv-cache artifact compiled from a --shape range.
struct StepProgram {
  std::string name;      ///< "decode_b4", "prefill_b1_s256"
  std::string shapeSpec; ///< "input_ids=4x1"
  int64_t batch = 1, tokens = 1;
};

/// The programs kiln compiles for `ranges` (docs/generation.md, "Programs"), program 0 first:
///   decode (1 token per step) at batches minBatch, then powers of two above it, up to and
///   including maxBatch: "decode_b<B>";
///   when maxTokens > 1, prefill chunks of one sequence, S = min(maxTokens, C) for C =
///   kLargePrefillChunk, kMidPrefillChunk, kPrefillChunk and kSmallPrefillChunk, largest
///   first, repeats and sizes within 1/8 below the previous one dropped: "prefill_b1_s<S>"; the
///   kMidPrefillChunk program only while the artifact stays within kMaxStepPrograms. A prompt runs as the chunks of the runtime's
///   planPrefill (the least summed Program.estimated_us, only the last chunk padded).
/// At most 4 + 4 = 8 programs for a batch range within 1..8.
std::vector<StepProgram> planStepPrograms(const StepShapeRanges &ranges);

/// Prefill chunk sizes (tokens per prefill step) of planStepPrograms: 2048 keeps a long
/// prompt's GEMMs on full 128-row tiles over the whole GPU (8 chunks of 256 ran the 0.8B
/// Llama's GEMMs at 144-447 TFLOP/s on the H200, session 16); 32 bounds the padding of short
/// prompts; 1024 serves the prompts between 256 and 2048 tokens, which otherwise run as several
/// 256-token chunks or one padded 2048 chunk (the 0.8B Llama's program latencies on the H200
/// scored by test/bench/prefill_plan_model.py: a mean prefill over prompts 1..2048 of 5.53 ms
/// with it and 6.42 ms without, session 23, docs/results.md).
constexpr int64_t kLargePrefillChunk = 2048;
constexpr int64_t kMidPrefillChunk = 1024;
constexpr int64_t kPrefillChunk = 256;
constexpr int64_t kSmallPrefillChunk = 32;
/// The most programs (CUDA-graph buckets) planStepPrograms gives an artifact when it can choose:
/// the kMidPrefillChunk program is left out past it.
constexpr size_t kMaxStepPrograms = 8;

/// NVRTC output shared between the ranks of one compileModel call.
struct ModuleCache;

/// Compiles per `options`. MLIR text for EmitKind::Graph/Kernels goes to
/// `os`. Errors are reported through the context's diagnostics (naming the
/// file, node or kernel) and returned as a summary error.
llvm::Expected<CompileStats> compileModel(mlir::MLIRContext &context,
                                          const CompileOptions &options, llvm::raw_ostream &os);

/// Prints diagnostics of `context` to `os` for users of a model, not of the
/// IR: `<file>: error: node '<onnx node>': <message>` (the node comes from the
/// op's NameLoc, which the importer sets), no dump of the failing op.
/// Returns the handler; diagnostics are printed while it is alive.
std::unique_ptr<mlir::ScopedDiagnosticHandler>
installModelDiagnosticHandler(mlir::MLIRContext &context, llvm::raw_ostream &os);

/// Registers the dialects kiln needs in `context`.
void loadKilnDialects(mlir::MLIRContext &context);

/// Registers the passes and pipelines a --pass-pipeline text may name: every
/// kiln pass, `kiln-pipeline`, `cse` and `canonicalize`. Idempotent.
void registerCompilerPasses();

/// An error in a command-line value (a bad --shape, --target or pipeline text, an unwritable
/// output or directory, conflicting options), found before the model is read. compileModel
/// returns it for every such check, so kiln-compile can exit 2 (usage) for these and 1 for a
/// failed compile: `error.isA<UsageError>()`.
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  static char ID;
  explicit UsageError(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  std::string message;
};

/// Fails with "cannot write '<path>': <reason>" unless an artifact or MLIR
/// text could be written to `path` as writeOutputFile writes it: stdout ("-")
/// always can; an existing directory cannot; an existing non-regular file
/// (/dev/null, a FIFO) needs write permission; otherwise a temporary file
/// must be creatable next to `path` (it is removed again). Run before a
/// compile, so that an unwritable -o fails in milliseconds, not at the end.
llvm::Error checkOutputWritable(llvm::StringRef path);

/// True if writing `output` (a -o value; "-" is stdout) would overwrite the file `input`: the
/// same path, or the same device and inode (a hard link, a symbolic link, "./m.onnx", stdout
/// redirected into the model).
bool isSameFile(llvm::StringRef input, llvm::StringRef output);

/// Fails with "output '<output>' is the input model '<input>' (the same file); choose another
/// -o" when isSameFile(input, output). compileModel runs it for every artifact file it would
/// write (a UsageError then), kiln-compile also for MLIR text written to -o, so neither the CLI
/// nor kiln.compile can replace the model with its artifact.
llvm::Error checkOutputIsNotInput(llvm::StringRef input, llvm::StringRef output);

/// The artifact path kiln-compile writes when -o is not given: the model's
/// file name with its extension replaced by ".kiln", in the current
/// directory ("models/gpt2.onnx" -> "gpt2.kiln").
std::string defaultArtifactPath(llvm::StringRef inputPath);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_DRIVER_H
