//===- kiln-compile.cpp - ONNX model -> .kiln artifact ---------------------===//
//
// Command-line shell over kiln::compileModel(): checks the options strictly
// (kiln::checkCommandLine: an unknown option is an error) and parses them with
// llvm::cl, shows progress on stderr, and prints a summary (files, kernel
// count, arena vs intermediate bytes, the time of every phase). With `-o -`
// (or -o naming stdout) the artifact goes to stdout and the summary to
// stderr. Exit status: 0 success, 1 the compile failed, 2 a usage error.
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/driver/CommandLine.h"
#include "compiler/driver/Driver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "ArtifactHeader.h"
#include <unistd.h>

using namespace llvm;

static cl::OptionCategory kilnCategory("kiln-compile options");

/// The first of `targets` that is not sm_90 (or sm_90a), where the Hopper kernels (TMA GEMM,
/// attention) do not exist; empty when every target is sm_90.
static std::string firstTargetBelowSm90(const std::vector<std::string> &targets) {
  for (const std::string &t : targets)
    if (t != "sm_90" && t != "sm_90a")
      return t;
  return {};
}

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx | graph.mlir>"),
                                      cl::Required, cl::cat(kilnCategory));
static cl::opt<std::string> outputPath(
    "o",
    cl::desc("Output file: the artifact (default: the model's name with .kiln, in the current "
             "directory), or MLIR text with --emit=graph/kernels (default: stdout); '-' = stdout"),
    cl::value_desc("file"), cl::cat(kilnCategory));
static cl::list<std::string>
    shapeSpecs("shape",
               cl::desc("Static shapes of symbolic inputs, e.g. input_ids=2x16,attention_mask=2x16 "
                        "(may be repeated); with --kv-cache, input_ids=1..8x1..2048 compiles "
                        "one program per step shape"),
               cl::value_desc("name=AxB,..."), cl::cat(kilnCategory));
static cl::list<std::string> targets("target", cl::desc("SASS target(s), e.g. sm_90 (default)"),
                                     cl::CommaSeparated, cl::cat(kilnCategory));
static cl::opt<std::string> dumpCuda("dump-cuda",
                                     cl::desc("Write each kernel module's CUDA C++ and PTX here"),
                                     cl::value_desc("dir"), cl::cat(kilnCategory));
static cl::opt<std::string> reportDir(
    "report",
    cl::desc("Write a compile report here: index.html (the memory plan as a picture, the kernel "
             "table with bytes and FLOPs, the compile phases) and report.json; see docs/report.md"),
    cl::value_desc("dir"), cl::cat(kilnCategory));
static cl::opt<kiln::EmitKind> emit(
    "emit", cl::desc("What to produce"), cl::init(kiln::EmitKind::Artifact),
    cl::values(clEnumValN(kiln::EmitKind::Graph, "graph", "imported kiln graph (MLIR)"),
               clEnumValN(kiln::EmitKind::Kernels, "kernels", "MLIR after the pass pipeline"),
               clEnumValN(kiln::EmitKind::Pipeline, "pipeline",
                          "the pass pipeline that would run, as text for --pass-pipeline"),
               clEnumValN(kiln::EmitKind::Artifact, "artifact", "the .kiln artifact (default)")),
    cl::cat(kilnCategory));
static cl::opt<std::string> passPipeline(
    "pass-pipeline",
    cl::desc("Run this textual MLIR pass pipeline instead of the default one, e.g. "
             "'builtin.module(func.func(kiln-fold-shape-subgraphs,my-pass),kiln-pipeline)'; "
             "--emit=pipeline prints the default to start from (docs/passes.md)"),
    cl::value_desc("pipeline"), cl::cat(kilnCategory));
static cl::opt<bool> printConstants(
    "print-constants",
    cl::desc("--emit=graph/kernels: print every constant in full (default: constants of more "
             "than 16 elements print as dense_resource<__elided__>, which cannot be compiled "
             "again)"),
    cl::cat(kilnCategory));
static cl::opt<bool> quiet("quiet", cl::desc("Print no progress and no summary, only errors"),
                           cl::cat(kilnCategory));
enum class ProgressChoice { Auto, Bar, Lines, None };
static cl::opt<ProgressChoice> progressChoice(
    "progress", cl::desc("How to show the progress of long phases on stderr"),
    cl::init(ProgressChoice::Auto),
    cl::values(clEnumValN(ProgressChoice::Auto, "auto",
                          "a bar on a terminal, plain lines otherwise (default)"),
               clEnumValN(ProgressChoice::Bar, "bar", "one status line redrawn in place"),
               clEnumValN(ProgressChoice::Lines, "lines",
                          "a line when a phase has run 2 s, per tenth of its work, at its end"),
               clEnumValN(ProgressChoice::None, "none", "nothing")),
    cl::cat(kilnCategory));
static cl::opt<unsigned> progressDelayMs(
    "progress-delay-ms",
    cl::desc("Show a phase once it has run this long (default: 2000 for lines, 300 for the bar)"),
    cl::value_desc("ms"), cl::Hidden, cl::cat(kilnCategory));
static cl::opt<kiln::Precision> precision(
    "precision",
    cl::desc("Storage and GEMM precision; graph inputs and outputs keep the model's types"),
    cl::init(kiln::Precision::FP32),
    cl::values(clEnumValN(kiln::Precision::FP32, "fp32", "fp32 everywhere (default)"),
               clEnumValN(kiln::Precision::TF32, "tf32", "fp32 storage, TF32 tensor-core GEMMs"),
               clEnumValN(kiln::Precision::FP16, "fp16",
                          "fp16 weights and activations, fp32 accumulation and statistics"),
               clEnumValN(kiln::Precision::BF16, "bf16",
                          "bf16 weights and activations, fp32 accumulation and statistics")),
    cl::cat(kilnCategory));
static cl::opt<std::string> mmaTile(
    "mma-tile",
    cl::desc("Tensor-core tile for every fp16/bf16 GEMM instead of kiln-select-tiles' choice "
             "(experiments), e.g. 128x128x32x2x4x4 = BM x BN x BK x warps-M x warps-N x stages"),
    cl::value_desc("BMxBNxBKxWMxWNxS"), cl::cat(kilnCategory));
static cl::opt<bool> wgmma(
    "wgmma",
    cl::desc("fp16/bf16 GEMMs use Hopper wgmma on sm_90 (built as sm_90a; mma.sync elsewhere). "
             "Experimental (cp.async, no TMA): slower than the default inside whole models; takes "
             "precedence over --sm90-gemm"),
    cl::cat(kilnCategory));
static cl::opt<bool> sm90Gemm(
    "sm90-gemm",
    cl::desc("fp16/bf16 GEMMs use the Hopper TMA + warp-specialized wgmma GEMM when every "
             "--target is sm_90 (default true; --sm90-gemm=false selects mma.sync, e.g. for A/B "
             "timing; --wgmma and --mma-tile take precedence)"),
    cl::init(true), cl::cat(kilnCategory));
static cl::opt<bool> hopperAttention(
    "hopper-attention",
    cl::desc("fp16/bf16 attention uses the Hopper TMA + warp-specialized wgmma kernel "
             "(cuda/attention_sm90.cuh) when every --target is sm_90 and kiln-select-tiles finds "
             "it fits (at least one 128-row query tile per SM); otherwise, or when TMA cannot "
             "read Q, K or V, the mma.sync kernel. Default true (--hopper-attention=false for "
             "A/B timing)"),
    cl::init(true), cl::cat(kilnCategory));
static cl::opt<kiln::Sm90AttentionLaunch> hopperAttentionPersistent(
    "hopper-attention-persistent",
    cl::desc("How the Hopper attention kernel is launched: persistent (at most one block per SM "
             "walking the query tiles longest first) or one block per query tile"),
    cl::values(clEnumValN(kiln::Sm90AttentionLaunch::Grid, "off", "one block per query tile"),
               clEnumValN(kiln::Sm90AttentionLaunch::Auto, "auto",
                          "persistent up to 4 waves of 128-row query tiles (batch x heads x "
                          "query tiles <= 4 x SMs), one block per tile above (default)"),
               clEnumValN(kiln::Sm90AttentionLaunch::Persistent, "on",
                          "persistent blocks for any size")),
    cl::init(kiln::Sm90AttentionLaunch::Auto), cl::cat(kilnCategory));
static cl::opt<bool> hopperPrefillAttention(
    "hopper-prefill-attention",
    cl::desc("With --hopper-attention and --kv-cache: prefill chunks attend over the paged cache "
             "with the Hopper kernel (K and V tiles by TMA through the block table; "
             "cuda/decode_attention.cuh prefillAttentionSm90Paged) where the cache's block size "
             "is a multiple of its key tile or a multiple of 8 dividing it; otherwise the mma.sync "
             "kernel over the cache. Default true (--hopper-prefill-attention=false for A/B "
             "timing)"),
    cl::init(true), cl::cat(kilnCategory));
static cl::opt<bool> skinnyGemm(
    "skinny-gemm",
    cl::desc("fp16/bf16 GEMMs of at most 16 rows in all (decode steps) read their weight once "
             "with the few-row GEMM when the Hopper GEMM is on (default true; "
             "--skinny-gemm=false for A/B timing)"),
    cl::init(true), cl::cat(kilnCategory));
static cl::opt<kiln::SkinnyTensorCores> skinnyTensorCores(
    "skinny-tensor-cores",
    cl::desc("Where the few-row GEMM (decode steps, --skinny-gemm) does its multiply-adds"),
    cl::values(clEnumValN(kiln::SkinnyTensorCores::Off, "off",
                          "on the CUDA cores in fp32 (for A/B timing)"),
               clEnumValN(kiln::SkinnyTensorCores::Auto, "auto",
                          "on the tensor cores (mma.sync, A rounded to the weight's type) from "
                          "5 rows on, on the CUDA cores below (default)"),
               clEnumValN(kiln::SkinnyTensorCores::On, "on",
                          "on the tensor cores for any rows (for A/B timing)")),
    cl::init(kiln::SkinnyTensorCores::Auto), cl::cat(kilnCategory));
static cl::opt<bool> skinnyWeightPreload(
    "skinny-weight-preload",
    cl::desc("Few-row GEMMs (decode steps, --skinny-gemm) of 1-2 rows run on the tensor cores "
             "with one block slot per SM left for the next kernel, and copy the first stages of "
             "a constant weight to shared memory before waiting for the previous kernel, which "
             "runs beside them (programmatic dependent launch; sm_90 targets; not with "
             "--skinny-tensor-cores=off or --programmatic-launch=off). Default true "
             "(--skinny-weight-preload=false for A/B timing)"),
    cl::init(true), cl::cat(kilnCategory));
static cl::opt<int64_t> skinnyPreloadRows(
    "skinny-preload-rows",
    cl::desc("With --skinny-weight-preload: few-row GEMMs of up to this many rows, 2..16, "
             "preload their weight before the grid-dependency wait. Above 2 rows (batch 3-16 "
             "decode steps) the tensor-core path then stages A in chunks short enough that 3 "
             "blocks fit an SM, 2 of them this GEMM's and one slot left for the next kernel "
             "(for A/B timing; default 2: only 1-2 rows, whose default plan leaves the slot)"),
    cl::init(2), cl::cat(kilnCategory));
static cl::opt<int64_t> skinnyTcOccupancy(
    "skinny-tc-occupancy",
    cl::desc("Few-row GEMMs on the tensor cores (decode steps of 3-16 rows; not those with "
             "--skinny-weight-preload) are planned for this many blocks per SM, 2..4: A is "
             "staged in chunks short enough for their shared memory, the registers capped to "
             "match, the split-K counted with them, where the default plan has fewer (for A/B "
             "timing; default 0: the default plan, 2 blocks per SM at 5-16 rows on sm_90, where "
             "3 is the most that fits; the tile's reason says when a value does not)"),
    cl::init(0), cl::cat(kilnCategory));
static cl::opt<kiln::WeightPrefetch> weightPrefetch(
    "weight-prefetch",
    cl::desc("What the few-row GEMMs of a decode step (16-bit weights: --precision fp16/bf16 or a "
             "16-bit model; sm_90) warm L2 with before their grid-dependency wait (for A/B "
             "timing; on the H200 both prefetches made the 0.8B Llama's decode GEMMs slower)"),
    cl::values(clEnumValN(kiln::WeightPrefetch::Off, "off", "nothing (default)"),
               clEnumValN(kiln::WeightPrefetch::Own, "own",
                          "the next rows of the kernel's own weight share (prefetch.global.L2; "
                          "the default until session 30)"),
               clEnumValN(kiln::WeightPrefetch::Next, "next",
                          "with --skinny-weight-preload: the next decode GEMM's weight, at most "
                          "half the target's L2 (cp.async.bulk.prefetch.L2)")),
    cl::init(kiln::WeightPrefetch::Off), cl::cat(kilnCategory));
static cl::opt<bool> splitKv(
    "split-kv",
    cl::desc("--kv-cache: attention over the paged cache by the decode kernel (decode steps, "
             "short or fp32 prefill chunks) splits each KV group's keys over a cluster of up to "
             "8 blocks when the cache holds more than 128 tokens per sequence and every --target "
             "is sm_90 with --sm90-gemm on (default true; --split-kv=false for A/B timing: one "
             "block per KV group)"),
    cl::init(true), cl::cat(kilnCategory));
static cl::opt<bool> decodeAttentionPreload(
    "decode-attention-preload",
    cl::desc("--kv-cache: the split-KV decode attention (--split-kv) reads the sequence lengths, "
             "the block table and the cached keys and values of its first tiles before waiting "
             "for the previous kernel, which runs beside it (programmatic dependent launch; not "
             "with --programmatic-launch=off, --split-kv=false or --sm90-gemm=false, nor for "
             "targets other than sm_90). Default true "
             "(--decode-attention-preload=false for A/B timing)"),
    cl::init(true), cl::cat(kilnCategory));
static cl::opt<bool> fuseKvAppend(
    "fuse-kv-append",
    cl::desc("--kv-cache: a decode step's KV cache append runs inside the attention kernel that "
             "reads the cache (each block writes the new keys and values of its own split "
             "chunk), one launch per layer instead of two (default true; prefill chunks keep their "
             "own append kernel; --fuse-kv-append=false for A/B timing)"),
    cl::init(true), cl::cat(kilnCategory));
enum class KeyRotary { Fused, Kernel };
static cl::opt<KeyRotary> keyRotary(
    "attention-key-rotary",
    cl::desc("Where a rotary embedding (RoPE) on attention's key is applied (for A/B timing)"),
    cl::values(clEnumValN(KeyRotary::Fused, "fused",
                          "in the attention kernel, on each K tile a block reads"),
               clEnumValN(KeyRotary::Kernel, "kernel",
                          "by its own kernel, once per key; attention reads the rotated K "
                          "(default)")),
    cl::init(KeyRotary::Kernel), cl::cat(kilnCategory));
enum class DecodeRotary { Recompute, Kernel };
static cl::opt<DecodeRotary> decodeRotary(
    "decode-rotary",
    cl::desc("--kv-cache: where a decode step gets the rotary embedding's cos and sin tables "
             "(for A/B timing)"),
    cl::values(clEnumValN(DecodeRotary::Recompute, "recompute",
                          "the KV-cache append and the paged attention compute them per element "
                          "(one launch less, but the attention 7 us per layer slower on the H200)"),
               clEnumValN(DecodeRotary::Kernel, "kernel",
                          "one kernel writes the tables, which the attention reads (default)")),
    cl::init(DecodeRotary::Kernel), cl::cat(kilnCategory));
enum class NormIntoGemm { Fused, FewRow, Kernel };
static cl::opt<NormIntoGemm> normIntoGemm(
    "norm-into-gemm",
    cl::desc("Where a layer norm or RMS norm read only by fp16/bf16 GEMMs runs, on sm_90 "
             "targets with the Hopper GEMM"),
    cl::values(clEnumValN(NormIntoGemm::Fused, "fused",
                          "folded into each GEMM: its weight scaled at compile time, the row "
                          "statistics computed from the GEMM's A tiles (one kernel less per "
                          "norm, but slower on the H200); few-row GEMMs as with few-row"),
               clEnumValN(NormIntoGemm::FewRow, "few-row",
                          "an RMS norm read only by few-row GEMMs (at most 16 rows: decode "
                          "steps) in their A loader, weights unchanged; other norms by their "
                          "own kernel (default)"),
               clEnumValN(NormIntoGemm::Kernel, "kernel",
                          "by its own kernel, which writes the normalized tensor")),
    cl::init(NormIntoGemm::FewRow), cl::cat(kilnCategory));
static cl::opt<kiln::ProgrammaticLaunch> programmaticLaunch(
    "programmatic-launch",
    cl::desc("Programmatic dependent launch (PDL) of the kernels on sm_90+ targets: each kernel "
             "waits for the previous one itself (griddepcontrol.wait), so the runtime starts it "
             "while the previous one still runs (docs/runtime.md)"),
    cl::values(clEnumValN(kiln::ProgrammaticLaunch::Auto, "auto",
                          "early in programs whose GEMMs have at most 256 rows (decode steps, "
                          "short prefill), at-exit elsewhere (default)"),
               clEnumValN(kiln::ProgrammaticLaunch::AtExit, "at-exit",
                          "wait; the next kernel starts as this one's blocks exit"),
               clEnumValN(kiln::ProgrammaticLaunch::Early, "early",
                          "wait, then let the next kernel start at once (faster for short "
                          "kernels, slower for long ones)"),
               clEnumValN(kiln::ProgrammaticLaunch::Off, "off", "plain stream order")),
    cl::init(kiln::ProgrammaticLaunch::Auto), cl::cat(kilnCategory));
static cl::opt<bool> noFuse("no-fuse", cl::desc("Disable pointwise fusion"), cl::cat(kilnCategory));
static cl::opt<unsigned> tensorParallel(
    "tensor-parallel",
    cl::desc("Shard the model over N GPUs (Megatron-style: attention heads and MLP width "
             "split, an all-reduce after each row-parallel GEMM) and write one artifact per "
             "rank: -o BASE.kiln gives BASE.rank0.kiln ... BASE.rank<N-1>.kiln"),
    cl::value_desc("N"), cl::init(1), cl::cat(kilnCategory));
static cl::opt<bool> tpLoopback(
    "tp-loopback",
    cl::desc("With --tensor-parallel N: write one artifact (-o) that runs all N ranks' shards "
             "on one GPU, a sum standing in for each all-reduce (checks the sharding)"),
    cl::cat(kilnCategory));
static cl::opt<bool> kvCache(
    "kv-cache",
    cl::desc("Compile one step of text generation over a paged KV cache the runtime owns: "
             "--shape input_ids=BxS gives the step (S = 1: decode); a Hugging Face export's "
             "past_key_values.* inputs are compiled empty (those only onnxruntime-genai's "
             "GroupQueryAttention reads leave the step), attention_mask and present.* are "
             "dropped; needs --max-seq-len (docs/generation.md). With --pass-pipeline it "
             "shapes and checks the import only: give kiln-pipeline{kv-cache=true "
             "max-seq-len=N} in the text"),
    cl::cat(kilnCategory));
static cl::opt<int64_t> maxSeqLen("max-seq-len",
                                  cl::desc("--kv-cache: most tokens one sequence may hold"),
                                  cl::value_desc("N"), cl::init(0), cl::cat(kilnCategory));
static cl::opt<int64_t> kvBlockSize("kv-block-size",
                                    cl::desc("--kv-cache: tokens per cache block (default 16, or --max-seq-len when that is "
             "smaller)"),
                                    cl::value_desc("N"), cl::init(16), cl::cat(kilnCategory));
static cl::opt<int64_t> kvBlocks(
    "kv-blocks",
    cl::desc("--kv-cache: blocks in each layer's cache pool (default: batch x "
             "ceil(max-seq-len / kv-block-size), every row at --max-seq-len)"),
    cl::value_desc("N"), cl::init(0), cl::cat(kilnCategory));
static cl::opt<bool> deviceSampling(
    "device-sampling",
    cl::desc("--kv-cache: next_token samples on the GPU with per-row temperature, top-k, top-p "
             "and seed inputs (default true; false: the greedy arg-max only, and a runtime "
             "samples on the host from the logits)"),
    cl::init(true), cl::cat(kilnCategory));
enum class PrefillLogits { Last, All };
static cl::opt<PrefillLogits> prefillLogits(
    "prefill-logits",
    cl::desc("--kv-cache: the logits a step of several tokens (a prefill chunk) returns"),
    cl::values(clEnumValN(PrefillLogits::Last, "last",
                          "the last real token's only, [1, 1, vocab] (the default; generation "
                          "needs no more)"),
               clEnumValN(PrefillLogits::All, "all",
                          "every token's, [1, tokens, vocab] (scoring a prompt, tests)")),
    cl::init(PrefillLogits::Last), cl::cat(kilnCategory));
static cl::opt<unsigned> threads("j", cl::desc("NVRTC compile threads (0 = all cores)"),
                                 cl::init(0), cl::cat(kilnCategory));

/// The number of an "sm_NN" or "sm_NNa" target (90 for sm_90a), 0 for any other text.
static unsigned smArch(StringRef target) {
  unsigned arch = 0;
  if (!target.consume_front("sm_") || target.take_while(llvm::isDigit).getAsInteger(10, arch))
    return 0;
  return arch;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(kilnCategory);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "kiln-compile " << KILN_VERSION << " (artifact format "
       << kiln::artifact::kOldestFormatVersion << ", " << kiln::artifact::kFormatVersionCollectives
       << " with --tensor-parallel, " << kiln::artifact::kFormatVersionTensorMaps
       << " with TMA tensor maps)\n  built with LLVM/MLIR " << LLVM_VERSION_STRING << "\n";
  });
  if (!kiln::checkCommandLine(argc, argv, "kiln-compile", errs(), {},
                              {kiln::enumOption(emit), kiln::enumOption(progressChoice),
                               kiln::enumOption(precision), kiln::enumOption(keyRotary),
                               kiln::enumOption(normIntoGemm),
                               kiln::enumOption(skinnyTensorCores),
                               kiln::enumOption(programmaticLaunch),
                               kiln::enumOption(hopperAttentionPersistent),
                               kiln::enumOption(weightPrefetch), kiln::enumOption(decodeRotary),
                               kiln::enumOption(prefillLogits)}))
    return 2;
  if (!cl::ParseCommandLineOptions(
          argc, argv, "kiln-compile: ONNX model (or kiln graph .mlir) -> kiln artifact\n", &errs()))
    return 2;
  auto usageError = [](const Twine &message) {
    WithColor::error(errs(), "kiln-compile") << message << "\n";
    return 2;
  };
  if (!passPipeline.empty()) {
    // Those options configure the default pipeline; a pipeline text sets its own. Each with
    // the kiln-pipeline option that does the same.
    // The advice gives the value given, so that copying it changes nothing else.
    auto onOff = [](auto value, auto off, auto on) {
      return value == off ? std::string("off") : value == on ? std::string("on") : "auto";
    };
    auto setting = [](const char *name, bool value) {
      return std::string(name) + (value ? "=true" : "=false");
    };
    const std::pair<cl::Option *, std::string> pipelineOptions[] = {
        {&noFuse, setting("fuse", !noFuse)},
        {&precision, "precision=" + kiln::stringifyPrecision(precision).str()},
        {&mmaTile, "mma-tile=" + mmaTile},
        {&wgmma, setting("wgmma", wgmma)},
        {&sm90Gemm, setting("sm90-gemm", sm90Gemm)},
        {&hopperAttention, setting("sm90-attention", hopperAttention)},
        {&hopperAttentionPersistent,
         "sm90-attention-persistent=" + onOff(hopperAttentionPersistent.getValue(),
                                              kiln::Sm90AttentionLaunch::Grid,
                                              kiln::Sm90AttentionLaunch::Persistent)},
        {&hopperPrefillAttention, setting("sm90-prefill-attention", hopperPrefillAttention)},
        {&skinnyGemm, setting("skinny-gemm", skinnyGemm)},
        {&skinnyTensorCores,
         "skinny-tensor-cores=" + onOff(skinnyTensorCores.getValue(), kiln::SkinnyTensorCores::Off,
                                        kiln::SkinnyTensorCores::On)},
        {&skinnyWeightPreload, setting("skinny-weight-preload", skinnyWeightPreload)},
        {&skinnyTcOccupancy, "skinny-tc-occupancy=" + std::to_string(skinnyTcOccupancy)},
        {&skinnyPreloadRows, "skinny-preload-rows=" + std::to_string(skinnyPreloadRows)},
        {&weightPrefetch,
         std::string("weight-prefetch=") +
             (weightPrefetch == kiln::WeightPrefetch::Off   ? "off"
              : weightPrefetch == kiln::WeightPrefetch::Own ? "own"
                                                            : "next")},
        {&splitKv, setting("split-kv", splitKv)},
        {&decodeAttentionPreload, setting("decode-attention-preload", decodeAttentionPreload)},
        {&fuseKvAppend, setting("fuse-kv-append", fuseKvAppend)},
        {&keyRotary, setting("fuse-key-rotary", keyRotary == KeyRotary::Fused)},
        {&normIntoGemm, normIntoGemm == NormIntoGemm::Fused    ? "fuse-norm-into-gemm=true"
                        : normIntoGemm == NormIntoGemm::FewRow ? "norm-into-few-row-gemm=true"
                                                               : "norm-into-few-row-gemm=false"},
        {&tensorParallel, "tp-size=" + std::to_string(tensorParallel) + " tp-rank=0"},
        {&tpLoopback, setting("tp-loopback", tpLoopback)},
        {&maxSeqLen, "kv-cache=true max-seq-len=" + std::to_string(maxSeqLen)},
        {&kvBlockSize, "kv-block-size=" + std::to_string(kvBlockSize)},
        {&kvBlocks, "kv-blocks=" + std::to_string(kvBlocks)},
        {&prefillLogits, setting("last-token-logits", prefillLogits == PrefillLogits::Last)},
        {&deviceSampling, setting("sampling", deviceSampling)}};
    for (const auto &[o, pipelineOption] : pipelineOptions)
      if (o->getNumOccurrences())
        return usageError("--" + o->ArgStr +
                          " configures the default pipeline and has no effect "
                          "with --pass-pipeline; give it as a pipeline option in the text: "
                          "kiln-pipeline{" +
                          pipelineOption + "}");
  }

  kiln::CompileOptions options;
  options.inputPath = inputPath;
  // Repeated --shape options join into one spec, so a name given twice is
  // reported by the spec parser instead of the last one silently winning.
  options.shapeSpec = llvm::join(shapeSpecs, ",");
  if (!targets.empty())
    options.targets.assign(targets.begin(), targets.end());
  options.dumpCudaDir = dumpCuda;
  options.reportDir = reportDir;
  options.emit = emit;
  options.fuse = !noFuse;
  options.precision = precision;
  options.mmaTile = mmaTile;
  options.wgmma = wgmma;
  options.sm90Gemm = sm90Gemm;
  options.sm90Attention = hopperAttention;
  options.sm90AttentionPersistent = hopperAttentionPersistent;
  options.sm90PrefillAttention = hopperPrefillAttention;
  options.skinnyGemm = skinnyGemm;
  options.skinnyTensorCores = skinnyTensorCores;
  options.skinnyWeightPreload = skinnyWeightPreload;
  options.weightPrefetch = weightPrefetch;
  if (skinnyTcOccupancy != 0 && (skinnyTcOccupancy < 2 || skinnyTcOccupancy > 4))
    return usageError("--skinny-tc-occupancy must be 0 (the default plan) or 2..4 blocks per "
                      "SM, got " +
                      Twine(skinnyTcOccupancy.getValue()));
  options.skinnyTcOccupancy = skinnyTcOccupancy;
  if (skinnyPreloadRows < 2 || skinnyPreloadRows > 16)
    return usageError("--skinny-preload-rows must be 2..16 rows, got " +
                      Twine(skinnyPreloadRows.getValue()));
  options.skinnyPreloadRows = skinnyPreloadRows;
  options.splitKv = splitKv;
  options.decodeAttentionPreload = decodeAttentionPreload;
  if (fuseKvAppend.getNumOccurrences()) // unset: on wherever it applies, without warnings
    options.fuseKvAppend = bool(fuseKvAppend);
  options.fuseKeyRotary = keyRotary == KeyRotary::Fused;
  options.recomputeRotaryTables = decodeRotary == DecodeRotary::Recompute;
  options.fuseNormIntoGemm = normIntoGemm == NormIntoGemm::Fused;
  options.normIntoFewRowGemm = normIntoGemm != NormIntoGemm::Kernel;
  options.programmaticLaunch = programmaticLaunch;
  // Asked for explicitly but impossible: say so (the compile goes on, in plain stream order).
  if (programmaticLaunch.getNumOccurrences() &&
      programmaticLaunch != kiln::ProgrammaticLaunch::Off)
    for (const std::string &t : options.targets) {
      if (unsigned arch = smArch(t); arch && arch < 90) {
        WithColor::warning(errs(), "kiln-compile")
            << "--programmatic-launch has no effect: target " << t
            << " is below sm_90 (no griddepcontrol there), so every kernel runs in plain stream "
               "order\n";
        break;
      }
    }
  // The first --target that is not sm_90 (the plans that need every target to be sm_90), or "".
  auto nonSm90Target = [&]() -> std::string {
    for (const std::string &t : options.targets)
      if (unsigned arch = smArch(t); arch && arch != 90)
        return t;
    return "";
  };
  auto warnNoEffect = [](llvm::StringRef option, const std::string &why) {
    if (!why.empty())
      WithColor::warning(errs(), "kiln-compile")
          << "--" << option << " has no effect with " << why << "\n";
  };
  // An explicit --skinny-weight-preload that other options rule out (the compile goes on without
  // it): it needs programmatic launch, the tensor cores' few-row path and sm_90 targets.
  if (skinnyWeightPreload.getNumOccurrences() && skinnyWeightPreload) {
    std::string why;
    if (programmaticLaunch == kiln::ProgrammaticLaunch::Off)
      why = "--programmatic-launch=off (the preload overlaps the previous kernel only with "
            "programmatic dependent launch)";
    else if (skinnyTensorCores == kiln::SkinnyTensorCores::Off)
      why = "--skinny-tensor-cores=off (the weight is preloaded into the tensor-core path's "
            "rings)";
    else if (!skinnyGemm)
      why = "--skinny-gemm=false";
    else if (std::string t = nonSm90Target(); !t.empty())
      why = "target " + t + " (the few-row GEMM's plan needs every --target to be sm_90)";
    warnNoEffect("skinny-weight-preload", why);
  }
  // Likewise an explicit --decode-attention-preload: it needs programmatic launch and the
  // split-KV kernel (clusters: sm_90 targets, --sm90-gemm).
  if (decodeAttentionPreload.getNumOccurrences() && decodeAttentionPreload) {
    std::string why;
    if (programmaticLaunch == kiln::ProgrammaticLaunch::Off)
      why = "--programmatic-launch=off (the reads overlap the previous kernel only with "
            "programmatic dependent launch)";
    else if (!splitKv)
      why = "--split-kv=false (only the split-KV decode kernel reads before its wait)";
    else if (!sm90Gemm)
      why = "--sm90-gemm=false (the split-KV decode kernel's clusters come with the Hopper "
            "path)";
    else if (std::string t = nonSm90Target(); !t.empty())
      why = "target " + t + " (the split-KV kernel needs every --target to be sm_90)";
    warnNoEffect("decode-attention-preload", why);
  }
  // Likewise a norm fold the options rule out (the pipeline leaves kiln-fuse-norm-into-gemm out).
  if (normIntoGemm.getNumOccurrences() && normIntoGemm == NormIntoGemm::Fused) {
    std::string why;
    if (noFuse)
      why = "--no-fuse";
    else if (wgmma)
      why = "--wgmma";
    else if (!mmaTile.empty())
      why = "--mma-tile";
    else if (!sm90Gemm)
      why = "--sm90-gemm=false";
    else if (std::string t = firstTargetBelowSm90(options.targets); !t.empty())
      why = "target " + t + " (the Hopper GEMM needs every --target to be sm_90)";
    if (!why.empty())
      WithColor::warning(errs(), "kiln-compile")
          << "--norm-into-gemm=fused has no effect with " << why
          << ": only the Hopper TMA GEMM computes a folded norm's row statistics\n";
  }
  // The Hopper attention options, asked for where no Hopper attention kernel can run.
  {
    std::string offWhy;
    if (!hopperAttention)
      offWhy = "--hopper-attention=false";
    else if (std::string t = firstTargetBelowSm90(options.targets); !t.empty())
      offWhy = "target " + t + " (the Hopper kernels need every --target to be sm_90)";
    if (!offWhy.empty() && hopperAttentionPersistent.getNumOccurrences())
      WithColor::warning(errs(), "kiln-compile")
          << "--hopper-attention-persistent has no effect with " << offWhy
          << ": every attention runs on the mma.sync kernel\n";
    if (hopperPrefillAttention && hopperPrefillAttention.getNumOccurrences() && passPipeline.empty() &&
        (!offWhy.empty() || !kvCache))
      WithColor::warning(errs(), "kiln-compile")
          << "--hopper-prefill-attention has no effect "
          << (offWhy.empty() ? std::string("without --kv-cache (it is the attention of a "
                                           "prefill chunk over the KV cache)")
                             : "with " + offWhy)
          << "\n";
    // Given on the command line with a cache it cannot read: fp32 storage, or blocks that fit
    // neither the 64- nor the 128-key tile (a multiple of the tile, or a multiple of 8 dividing
    // it; kiln-select-tiles).
    if (hopperPrefillAttention && hopperPrefillAttention.getNumOccurrences() &&
        passPipeline.empty() && offWhy.empty() && kvCache) {
      const int64_t block = maxSeqLen > 0 ? std::min<int64_t>(kvBlockSize, maxSeqLen) : kvBlockSize;
      if (precision == kiln::Precision::FP32 || precision == kiln::Precision::TF32)
        WithColor::warning(errs(), "kiln-compile")
            << "--hopper-prefill-attention has no effect with --precision "
            << (precision == kiln::Precision::FP32 ? "fp32" : "tf32")
            << ": the KV cache is fp32 and the Hopper attention reads fp16 or bf16\n";
      else if (block > 0 && block % 128 != 0 && !(block % 8 == 0 && 128 % block == 0))
        WithColor::warning(errs(), "kiln-compile")
            << "--hopper-prefill-attention "
            << (block % 64 == 0 ? "applies only to head dims above 192" : "has no effect")
            << " with cache blocks of " << block
            << " tokens: the Hopper kernel's key tile (128 keys for head dims up to 192, 64 "
               "above) needs blocks of 8, 16, 32 or 64 tokens or a multiple of the tile "
               "(--kv-block-size)\n";
    }
  }
  if (kvCache && passPipeline.empty()) {
    if (maxSeqLen < 0)
      return usageError("--max-seq-len must be positive, got " + Twine(maxSeqLen));
    if (maxSeqLen == 0)
      return usageError("--kv-cache needs --max-seq-len N (N > 0): the most tokens, prompt and "
                        "generated, that one sequence may hold");
    if (kvBlockSize <= 0)
      return usageError("--kv-block-size must be positive");
    if (kvBlocks < 0)
      return usageError("--kv-blocks must not be negative");
    // Positions, lengths and block ids are int32 on the GPU.
    constexpr int64_t kInt32Max = 2147483647;
    if (maxSeqLen > kInt32Max)
      return usageError("--max-seq-len " + std::to_string(maxSeqLen) +
                        " is above 2147483647: positions and lengths are 32-bit on the GPU");
    if (kvBlocks > kInt32Max)
      return usageError("--kv-blocks " + std::to_string(kvBlocks) +
                        " is above 2147483647: block ids are 32-bit on the GPU");
    if (kvBlockSize > maxSeqLen && kvBlockSize.getNumOccurrences())
      return usageError("--kv-block-size " + std::to_string(kvBlockSize) +
                        " is larger than --max-seq-len " + std::to_string(maxSeqLen) +
                        ": a block holds at most one sequence's tokens");
    // A short sequence is one block (a contiguous cache) when the block size is the default.
    if (kvBlockSize > maxSeqLen)
      kvBlockSize = maxSeqLen;
  } else if (!kvCache) {
    const cl::Option *cacheOptions[] = {&maxSeqLen,     &kvBlockSize,           &kvBlocks,
                                        &prefillLogits, &deviceSampling,        &splitKv,
                                        &fuseKvAppend,  &decodeAttentionPreload, &decodeRotary};
    for (const cl::Option *o : cacheOptions)
      if (o->getNumOccurrences())
        return usageError("--" + o->ArgStr +
                          " applies to --kv-cache (compiling generation steps); add --kv-cache "
                          "or leave it out");
  }
  options.kvCache = kvCache;
  options.maxSeqLen = maxSeqLen;
  options.kvBlockSize = kvBlockSize;
  options.kvBlocks = kvBlocks;
  options.lastTokenLogits = prefillLogits == PrefillLogits::Last;
  options.deviceSampling = deviceSampling;
  options.threads = threads;
  options.tensorParallel = tensorParallel;
  options.tpLoopback = tpLoopback;
  options.passPipeline = passPipeline;
  options.elideElementsLargerThan = printConstants ? 0 : 16;
  if (!dumpCuda.empty() && emit != kiln::EmitKind::Artifact)
    return usageError("--dump-cuda needs --emit=artifact (the default)");
  if (reportDir.getNumOccurrences() && reportDir.empty())
    return usageError("--report needs a directory name");
  if (outputPath.getNumOccurrences() && outputPath.empty())
    return usageError("-o needs a file name (an empty one was given; leave -o out for the "
                      "default, the model's name with .kiln)");
  if (dumpCuda.getNumOccurrences() && dumpCuda.empty())
    return usageError("--dump-cuda needs a directory name");
  if (emit == kiln::EmitKind::Artifact && outputPath.empty())
    outputPath = kiln::defaultArtifactPath(inputPath);
  // Checked before anything is opened or written: -o must not clobber the model.
  // (compileModel checks artifact outputs again, for kiln.compile; this covers MLIR text too.)
  if (!outputPath.empty())
    if (llvm::Error error = kiln::checkOutputIsNotInput(inputPath, outputPath))
      return usageError(toString(std::move(error)));
  // An artifact written to stdout ("-", /dev/stdout, or the file stdout is
  // redirected to) must be the only thing there: the summary goes to stderr.
  bool artifactToStdout = emit == kiln::EmitKind::Artifact && kiln::isStandardOutput(outputPath);
  if (emit == kiln::EmitKind::Artifact)
    options.outputPath = artifactToStdout ? std::string("-") : outputPath.getValue();
  raw_ostream &summary = artifactToStdout ? errs() : outs();

  // --emit=graph/kernels print MLIR to -o (a file) or stdout. The text is
  // buffered and written like an artifact (temporary file, then rename) only
  // after a successful compile, so a failure leaves an existing -o file as it was.
  bool textToFile = emit != kiln::EmitKind::Artifact && !outputPath.empty() &&
                    !kiln::isStandardOutput(outputPath);
  if (textToFile)
    if (llvm::Error error = kiln::checkOutputWritable(outputPath))
      return usageError(toString(std::move(error)));
  std::string text;
  raw_string_ostream textStream(text);
  mlir::MLIRContext context;
  auto diagHandler = kiln::installModelDiagnosticHandler(context, errs());
  raw_ostream &textSink = textToFile ? static_cast<raw_ostream &>(textStream) : outs();

  kiln::ProgressMode mode = kiln::ProgressMode::None;
  if (!quiet) {
    switch (progressChoice) {
    case ProgressChoice::Auto:
      mode = ::isatty(STDERR_FILENO) ? kiln::ProgressMode::Bar : kiln::ProgressMode::Lines;
      break;
    case ProgressChoice::Bar:
      mode = kiln::ProgressMode::Bar;
      break;
    case ProgressChoice::Lines:
      mode = kiln::ProgressMode::Lines;
      break;
    case ProgressChoice::None:
      break;
    }
  }
  double delayMs = progressDelayMs.getNumOccurrences() ? double(progressDelayMs)
                   : mode == kiln::ProgressMode::Bar   ? 300.0
                                                       : 2000.0;
  kiln::ProgressReporter progress(errs(), mode, "kiln-compile", delayMs);
  options.progress = &progress;
  auto stats = kiln::compileModel(context, options, textSink);
  if (!stats) {
    progress.end();
    llvm::Error error = stats.takeError();
    // A bad option value (found before the model is read) is a usage error, like an unknown
    // option: exit 2. A model or compile failure: exit 1.
    int status = error.isA<kiln::UsageError>() ? 2 : 1;
    WithColor::error(errs(), "kiln-compile") << toString(std::move(error)) << "\n";
    return status;
  }
  if (emit != kiln::EmitKind::Artifact) {
    if (textToFile) {
      if (llvm::Error error =
              kiln::writeOutputFile(outputPath, [&](raw_ostream &os) { os << text; })) {
        WithColor::error(errs(), "kiln-compile") << toString(std::move(error)) << "\n";
        return 1;
      }
    }
    return 0;
  }
  if (quiet)
    return 0;
  for (const kiln::CompiledFile &file : stats->files)
    summary << "wrote " << (artifactToStdout ? StringRef("<stdout>") : StringRef(file.path)) << " ("
            << file.fileBytes << " bytes, weights " << file.weightBytes << " bytes)\n";
  if (!stats->programs.empty()) {
    summary << "programs: " << stats->programs.size() << " ("
            << llvm::join(stats->programs, ", ") << ")";
    // Past the buckets planStepPrograms aims for only when the batch range forces it (one
    // decode program per power of two): say so, since each costs compile time and a graph.
    const size_t decode = llvm::count_if(
        stats->programs, [](const std::string &p) { return StringRef(p).starts_with("decode_"); });
    if (stats->programs.size() > kiln::kMaxStepPrograms)
      summary << "; more than " << kiln::kMaxStepPrograms << ": the batch range takes " << decode
              << " decode programs (one per power of two), each with its own kernels and CUDA "
                 "graph; a narrower --shape batch range gives fewer";
    summary << "\n";
  }
  if (!reportDir.empty()) {
    SmallString<256> page(reportDir.getValue());
    sys::path::append(page, "index.html");
    summary << "wrote report " << page << "\n";
  }
  if (tensorParallel > 1)
    summary << "tensor parallel: " << tensorParallel.getValue()
            << (tpLoopback
                    ? " ranks in one loopback artifact (sums for the all-reduces)"
                    : " ranks, " + std::to_string(stats->collectives) + " all-reduces per rank")
            << "\n";
  if (stats->programs.size() > 1) // launches of one program, kernels of all of them
    summary << "kernels: " << stats->kernels << " launches in the largest program; "
            << stats->uniqueKernels << " distinct kernels in all " << stats->programs.size()
            << " programs, in " << stats->modules
            << (stats->modules == 1 ? " CUDA module\n" : " CUDA modules\n");
  else
    summary << "kernels: " << stats->kernels << " (" << stats->uniqueKernels << " distinct, in "
            << stats->modules << (stats->modules == 1 ? " CUDA module" : " CUDA modules")
            << (tensorParallel > 1 && !tpLoopback ? "; the largest rank's)\n" : ")\n");
  summary << "arena bytes: " << stats->arenaBytes
          << " (sum of intermediate tensor bytes: " << stats->intermediateBytes
          << (tensorParallel > 1 && !tpLoopback ? "; the largest rank's" : "") << ")\n";
  // Every phase, then the time outside them, so that the lines add up to the total.
  summary << format("compile time: %.1f ms\n", stats->totalMs);
  double phasesMs = 0;
  for (const kiln::CompilePhase &phase : stats->phases) {
    summary << format("  %-16s %10.1f ms\n", phase.name.c_str(), phase.ms);
    phasesMs += phase.ms;
  }
  if (stats->totalMs - phasesMs >= 0.05)
    summary << format("  %-16s %10.1f ms\n", "other", stats->totalMs - phasesMs);
  return 0;
}
