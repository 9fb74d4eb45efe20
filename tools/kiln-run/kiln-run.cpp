//===- kiln-run.cpp - Run a .kiln artifact on .npy inputs -----------------===//
//
// The command-line runner: opens an artifact, prints its description (--info, no GPU needed),
// feeds .npy or generated inputs (random, zeros, a constant), runs once, writes/compares outputs
// and optionally measures latency with CUDA events (--bench) and per-kernel time (--profile,
// with the model layer of each kernel and the time per layer), writes a Chrome trace of one run
// (--trace) and everything as JSON (--json). Runs replay the schedule as a CUDA graph unless
// --no-cuda-graph is given. Links only kiln_runtime and kiln_npy. Exit codes: 0 success /
// all comparisons pass, 1 a comparison failed (or tensor-parallel ranks disagree), 2 usage, file
// or runtime error. See docs/runtime.md.
//
// Tensor-parallel rank artifacts (kiln-compile --tensor-parallel N) run in one of two modes,
// both orchestrated by the runtime library (docs/runtime.md, "Tensor-parallel groups"):
//  - threads mode, `--tensor-parallel N BASE.kiln`: kiln_tp_artifacts_open opens and checks the N
//    rank files, kiln_tp_group_create runs them as one group in this process (one session and
//    worker thread per rank, rank r on device --device + r); rank 0's outputs are reported and
//    every rank's outputs must equal them bit for bit;
//  - process mode, one kiln-run per rank (MPI, torchrun, job schedulers): MODEL is a rank file,
//    or a BASE with the rank in the environment (kiln_tp_rank_from_env: KILN_TP_RANK /
//    KILN_TP_WORLD_SIZE, else torchrun's RANK / WORLD_SIZE); the group id comes from
//    kiln_tp_id_from_env (KILN_TP_ID, or KILN_TP_ID_FILE, which rank 0 creates and writes). Only
//    rank 0 prints and writes files.
// Every rank runs the same schedule (run, --bench, --profile), so their collectives pair up.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include "ArtifactHeader.h"
#include "InputGen.h"
#include "JsonWriter.h"
#include "Npy.h"
#include "Report.h"
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;
constexpr int kBenchWarmup = 3;
/// Default of --tp-timeout (kiln_session_params_t::tp_timeout_ms's default).
constexpr uint32_t kDefaultTpTimeoutMs = 300000;
/// Largest --tensor-parallel.
constexpr long kMaxTensorParallel = 1024;

const char *const kUsage =
    "usage: kiln-run MODEL.kiln [--info] [--json] [--input NAME=FILE.npy|GEN]... "
    "[--inputs-generate GEN]\n"
    "                [--output NAME=FILE.npy]... [--compare NAME=REF.npy]... [--rtol R] [--atol "
    "A]\n"
    "                [--bench N] [--profile N] [--trace FILE.json] [--device N] [--no-cuda-graph]\n"
    "                [--tensor-parallel N] [--tp-timeout MS] [--program NAME]\n"
    "       kiln-run STEPS.kiln --generate N --prompt-ids IDS.npy [--batch B] [--temperature T]\n"
    "                [--top-k K] [--top-p P] [--seed S] [--stop-ids A,B,...] [--warmup W] [--json]\n"
    "       GEN: random[:SEED] | zeros | const:V\n"
    "       kiln-run --version | --help";

const char *const kHelp =
    "Runs a .kiln artifact (from kiln-compile) on an NVIDIA GPU.\n"
    "  --info               print inputs, outputs, modules (PTX, SASS targets), kernels, arena\n"
    "                       and weight bytes, and a rank file's tensor-parallel group and\n"
    "                       collectives; needs no GPU\n"
    "  --json               print the --info description (and the --compare, --bench and\n"
    "                       --profile results) as one JSON object on stdout instead of text\n"
    "  --input NAME=F.npy   value of model input NAME (exact dtype and shape; integers inside\n"
    "                       the range the artifact records, e.g. token ids inside the\n"
    "                       embedding: --info shows it); every input needed\n"
    "  --input NAME=GEN     generate input NAME instead: random (seed 0) or random:SEED (floats\n"
    "                       uniform in [-1, 1); integer inputs inside the range the artifact\n"
    "                       records, e.g. token ids below the embedding's row count, else 0/1;\n"
    "                       bools 0/1), zeros, or const:V (every element V); a file named like\n"
    "                       a generator is given as ./zeros\n"
    "  --inputs-generate GEN generate every input that no --input gives (e.g. random:1)\n"
    "  --output NAME=F.npy  write output NAME after one run\n"
    "  --compare NAME=R.npy compare output NAME with a reference; exit 1 unless\n"
    "                       max_rel_err <= rtol or max_abs_err <= atol (and no NaN)\n"
    "  --rtol R, --atol A   tolerances of --compare (default 1e-4, 1e-5)\n"
    "  --bench N            time N runs (after 3 warm-up runs): latency p50/p90 in ms\n"
    "  --profile N          per-kernel device time, median of N runs, with each kernel's model\n"
    "                       layer and name, and the time per layer (and per collective for\n"
    "                       tensor-parallel models)\n"
    "  --trace FILE.json    write a Chrome trace-event file of one profiled run (kernels,\n"
    "                       layers and collectives as slices; open it in Perfetto or\n"
    "                       chrome://tracing)\n"
    "  --generate N         generate up to N tokens per sequence with a --kv-cache artifact:\n"
    "                       prefill the prompts, decode them together, print the tokens, the\n"
    "                       time to first token, decode tokens/s and per-step p50/p99\n"
    "  --prompt-ids F.npy   the prompt(s) of --generate: integer ids [P] or [B, P]\n"
    "  --batch B            --generate: B copies of a [P] prompt (default 1)\n"
    "  --temperature T, --top-k K, --top-p P, --seed S\n"
    "                       --generate sampling (default greedy: T 0); top-k 0 and top-p 1 keep\n"
    "                       every token\n"
    "  --stop-ids A,B,...   --generate: token ids that end a sequence (kept as its last token)\n"
    "  --warmup W           --generate: run the whole generation W times first, untimed (CUDA\n"
    "                       graph capture, first touches); the timings printed are the last run's\n"
    "  --program NAME       the program of a multi-program artifact (kiln-compile --kv-cache\n"
    "                       with a --shape range: one program per step shape; --info lists\n"
    "                       them) to describe or run; default: program 0\n"
    "  --device N           CUDA device ordinal (default 0; with --tensor-parallel, rank r uses\n"
    "                       device N + r)\n"
    "  --no-cuda-graph      launch kernels one by one instead of replaying a CUDA graph\n"
    "  --tensor-parallel N  run the N rank files that `kiln-compile --tensor-parallel N -o\n"
    "                       MODEL.kiln` writes (MODEL.rank0.kiln ... MODEL.rank<N-1>.kiln) in "
    "this\n"
    "                       process, one thread and GPU per rank; rank 0's outputs are written\n"
    "                       and compared, and every rank's outputs must equal them bit for bit\n"
    "  --tp-timeout MS      longest wait for the other ranks, in ms (default 300000, 0 = forever)\n"
    "  --version            print kiln's version and the artifact format versions this reads\n"
    "\n"
    "Options with one value may be given once; --input, --output and --compare once per name.\n"
    "\n"
    "Tensor parallelism with one process per rank (MPI, torchrun, job schedulers): give a rank\n"
    "file (MODEL.rank<R>.kiln) or MODEL.kiln with the rank in the environment:\n"
    "  KILN_TP_RANK, KILN_TP_WORLD_SIZE  rank and world size (else torchrun's RANK, WORLD_SIZE);\n"
    "                       kiln-run then opens MODEL.rank<R>.kiln\n"
    "  KILN_TP_ID_FILE=PATH rank 0 creates the group id and writes it to PATH (atomically); the\n"
    "                       other ranks wait for the file (up to --tp-timeout); rank 0 deletes it\n"
    "                       once the group has formed. Use a path no other job uses at the time.\n"
    "  KILN_TP_ID=HEX       or the id's text form, from a launcher that created it\n"
    "                       (kiln_tp_id_create) and stays alive until the group has formed\n"
    "  The device is --device, else LOCAL_RANK, else the rank. Every rank runs the same runs,\n"
    "  --bench and --profile; only rank 0 prints and writes --output files.\n"
    "  Examples:\n"
    "    KILN_TP_ID_FILE=/tmp/kiln.id torchrun --nproc-per-node 2 --no-python \\\n"
    "        kiln-run llama.kiln --input input_ids=ids.npy --output logits=logits.npy\n"
    "    export KILN_TP_ID_FILE=/tmp/kiln.id KILN_TP_WORLD_SIZE=2\n"
    "    KILN_TP_RANK=1 kiln-run llama.kiln --input input_ids=ids.npy &\n"
    "    KILN_TP_RANK=0 kiln-run llama.kiln --input input_ids=ids.npy --output logits=logits.npy\n"
    "\n"
    "Exit status: 0 ok, 1 a --compare failed or tensor-parallel ranks' outputs differ, 2 usage,\n"
    "file or CUDA error.\n";

/// Parsed command line.
struct Options {
  std::string model;
  bool info = false;
  /// --json: the description and results as one JSON object on stdout.
  bool json = false;
  /// --trace FILE: Chrome trace-event JSON of one profiled run.
  std::string trace;
  /// --program NAME: the program of a multi-program artifact to describe or run ("": program 0).
  std::string program;
  /// --generate N (0: no generation) and its options.
  long generate = 0;
  /// --warmup W: untimed whole generations before the timed one.
  long warmup = 0;
  std::string promptIds;
  long batch = 0; ///< --batch (0: not given)
  double temperature = 0, topP = 1;
  long topK = 0, seed = 0;
  std::vector<int64_t> stopIds;
  /// --inputs-generate: the generator for every input no --input gives.
  bool generateAll = false;
  kiln::inputgen::Spec generateAllSpec;
  std::vector<std::pair<std::string, std::string>> inputs, outputs, compares;
  double rtol = 1e-4;
  double atol = 1e-5;
  long bench = 0;
  long profile = 0;
  int device = 0;
  /// True when --device was given (process mode then ignores LOCAL_RANK and the rank).
  bool deviceGiven = false;
  /// False with --no-cuda-graph: launch kernels one by one instead of replaying a CUDA graph.
  bool cudaGraph = true;
  /// --tensor-parallel N (threads mode); 0 when not given.
  long tensorParallel = 0;
  /// --tp-timeout, passed to kiln_session_params_t::tp_timeout_ms.
  uint32_t tpTimeoutMs = kDefaultTpTimeoutMs;
};

/// Prints "kiln-run: error: <message>" and the usage line; returns kExitError.
int usageError(const std::string &message) {
  std::fprintf(stderr, "kiln-run: error: %s\n%s\n", message.c_str(), kUsage);
  return kExitError;
}

/// Prints "kiln-run: error: <message>"; returns kExitError.
int fileError(const std::string &message) {
  std::fprintf(stderr, "kiln-run: error: %s\n", message.c_str());
  return kExitError;
}

/// Prints a failed status (after `prefix`, e.g. "rank 1: "), frees it and returns kExitError.
int statusError(kiln_status_t status, const std::string &prefix = std::string()) {
  std::fprintf(stderr, "kiln-run: error: %s%s\n", prefix.c_str(), kiln_status_message(status));
  kiln_status_free(status);
  return kExitError;
}

/// Splits "NAME=FILE"; false if there is no '=' or either side is empty.
bool splitBinding(const std::string &text, std::pair<std::string, std::string> &out) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return false;
  out = {text.substr(0, eq), text.substr(eq + 1)};
  return true;
}

/// Parses a finite, non-negative double.
bool parseDouble(const std::string &text, double &out) {
  char *end = nullptr;
  // No leading white space (strtod skips it), and no value out of a double's range: strtod
  // gives ERANGE for 1e-400 (a positive value read as 0) as for 1e400.
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    return false;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno == 0 && std::isfinite(out) && out >= 0;
}

/// Parses a long in [min, max].
bool parseLong(const std::string &text, long min, long max, long &out) {
  char *end = nullptr;
  errno = 0;
  // strtol skips leading white space; an option value with it is refused like trailing space.
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    return false;
  out = std::strtol(text.c_str(), &end, 10);
  return *end == '\0' && errno == 0 && out >= min && out <= max;
}

/// Prints --version: "kiln-run 0.3.0 (reads artifact format versions 1 to 3)", the version of the
/// runtime library (kiln_version()) and the artifact formats it reads; a second line names the
/// headers' version when the library loaded is another one.
void printVersion() {
  std::printf("kiln-run %s (reads artifact format versions %u to %u)\n", kiln_version(),
              kiln::artifact::kOldestFormatVersion, kiln::artifact::kFormatVersion);
  if (std::strcmp(kiln_version(), KILN_VERSION_STRING) != 0)
    std::printf("  built with the kiln %s runtime headers\n", KILN_VERSION_STRING);
}

/// Parses argv into `options`; returns false after printing a usage error.
/// Anything starting with '-' (but "-" itself) is an option, and one this
/// tool does not know is an error naming it; after "--" every argument is
/// the model.
bool parseArgs(int argc, char **argv, Options &options) {
  bool optionsEnded = false;
  // The value of each single-value option seen so far.
  std::map<std::string, std::string> singleValues;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!optionsEnded && (arg == "-h" || arg == "--help")) {
      std::printf("%s\n\n%s", kUsage, kHelp);
      std::exit(kExitOk);
    }
    if (!optionsEnded && arg == "--version") {
      printVersion();
      std::exit(kExitOk);
    }
    if (!optionsEnded && arg == "--") {
      optionsEnded = true;
      continue;
    }
    if (!optionsEnded && arg.size() > 1 && arg[0] == '-' && arg[1] != '-') {
      usageError("unknown option '" + arg + "'");
      return false;
    }
    if (optionsEnded || arg.rfind("--", 0) != 0) {
      if (!options.model.empty()) {
        usageError("unexpected argument '" + arg + "' (model already given: '" + options.model +
                   "')");
        return false;
      }
      options.model = arg;
      continue;
    }
    // Flags without a value: each sets one member.
    struct Flag {
      const char *name;
      bool Options::*member;
      bool value;
    };
    static const Flag kFlags[] = {{"--info", &Options::info, true},
                                  {"--json", &Options::json, true},
                                  {"--no-cuda-graph", &Options::cudaGraph, false}};
    auto findFlag = [&](const std::string &name) -> const Flag * {
      for (const Flag &f : kFlags)
        if (name == f.name)
          return &f;
      return nullptr;
    };
    if (const Flag *f = findFlag(arg)) {
      options.*(f->member) = f->value;
      continue;
    }
    // Flags with a value: "--flag value" or "--flag=value".
    std::string flag = arg, value;
    size_t eq = arg.find('=');
    if (eq != std::string::npos)
      flag = arg.substr(0, eq);
    if (findFlag(flag) || flag == "--help" || flag == "--version") {
      usageError("option '" + flag + "' takes no value, got '" + arg + "'");
      return false;
    }
    static const char *const kValueFlags[] = {"--input",      "--output", "--compare",
                                              "--rtol",       "--atol",   "--bench",
                                              "--profile",    "--device", "--tensor-parallel",
                                              "--tp-timeout", "--trace",  "--inputs-generate",
                                              "--program", "--generate", "--prompt-ids",
                                              "--batch", "--temperature", "--top-k", "--top-p",
                                              "--seed", "--stop-ids", "--warmup"};
    if (std::find(std::begin(kValueFlags), std::end(kValueFlags), flag) == std::end(kValueFlags)) {
      usageError("unknown option '" + flag + "'");
      return false;
    }
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      usageError("option '" + arg + "' needs a value");
      return false;
    }
    // Options with one value may be given once (not silently the last one wins); --input,
    // --output and --compare may repeat, once per name (checked in prepareFiles).
    if (flag != "--input" && flag != "--output" && flag != "--compare") {
      auto [previous, first] = singleValues.emplace(flag, value);
      if (!first) {
        usageError("option '" + flag + "' given twice ('" + previous->second + "', then '" + value +
                   "')");
        return false;
      }
    }
    std::pair<std::string, std::string> binding;
    if (flag == "--input" || flag == "--output" || flag == "--compare") {
      if (!splitBinding(value, binding)) {
        usageError("option '" + flag + "' expects NAME=FILE.npy, got '" + value + "'" +
                   (flag == "--input" ? " (or NAME=random[:SEED], NAME=zeros, NAME=const:V)" : ""));
        return false;
      }
      (flag == "--input"    ? options.inputs
       : flag == "--output" ? options.outputs
                            : options.compares)
          .push_back(binding);
    } else if (flag == "--generate") {
      if (!parseLong(value, 1, 1 << 20, options.generate)) {
        usageError("option '--generate' expects a token count in [1, 1048576], got '" + value +
                   "'");
        return false;
      }
    } else if (flag == "--warmup") {
      if (!parseLong(value, 0, 1000, options.warmup)) {
        usageError("option '--warmup' expects a run count in [0, 1000], got '" + value + "'");
        return false;
      }
    } else if (flag == "--prompt-ids") {
      if (value.empty()) {
        usageError("option '--prompt-ids' expects a .npy file of token ids");
        return false;
      }
      options.promptIds = value;
    } else if (flag == "--batch") {
      if (!parseLong(value, 1, 4096, options.batch)) {
        usageError("option '--batch' expects a count in [1, 4096], got '" + value + "'");
        return false;
      }
    } else if (flag == "--temperature" || flag == "--top-p") {
      double &out = flag == "--temperature" ? options.temperature : options.topP;
      // The runtime takes floats: a value that is finite as a double but not as a float, or
      // positive but 0 as a float (greedy, for a temperature), is refused here too.
      if (!parseDouble(value, out) || !std::isfinite(out) || out < 0 ||
          (flag == "--top-p" && (out <= 0 || out > 1)) || !std::isfinite(float(out)) ||
          (out > 0 && float(out) == 0.0f)) {
        usageError("option '" + flag + "' expects a number " +
                   (flag == "--top-p" ? "in (0, 1]" : ">= 0") +
                   " that a 32-bit float holds (positive values at least 1.5e-45), got '" +
                   value + "'");
        return false;
      }
    } else if (flag == "--top-k") {
      if (!parseLong(value, 0, 1L << 30, options.topK)) {
        usageError("option '--top-k' expects a count >= 0 (0: every token), got '" + value + "'");
        return false;
      }
    } else if (flag == "--seed") {
      if (!parseLong(value, 0, LONG_MAX, options.seed)) {
        usageError("option '--seed' expects a number in [0, " + std::to_string(LONG_MAX) +
                   "], got '" + value + "'");
        return false;
      }
    } else if (flag == "--stop-ids") {
      // Every item a decimal id; an empty list or item (",", "1,,2", "1,") is refused.
      std::stringstream list(value);
      std::string item;
      long id = 0;
      bool ok = !value.empty() && value.back() != ',', outOfRange = false;
      while (ok && std::getline(list, item, ','))
        if (parseLong(item, LONG_MIN, LONG_MAX, id)) {
          options.stopIds.push_back(id);
        } else {
          ok = false;
          outOfRange = errno == ERANGE; // read right after this item's strtol
        }
      if (!ok) {
        usageError("option '--stop-ids' expects token ids separated by commas" +
                   std::string(outOfRange ? " (each a 64-bit integer)" : "") + ", got '" +
                   value + "'");
        return false;
      }
    } else if (flag == "--program") {
      if (value.empty()) {
        usageError("option '--program' expects a program name (kiln-run MODEL --info lists them)");
        return false;
      }
      options.program = value;
    } else if (flag == "--trace") {
      if (value.empty()) {
        usageError("option '--trace' expects a file name");
        return false;
      }
      options.trace = value;
    } else if (flag == "--inputs-generate") {
      std::string error;
      kiln::inputgen::ParseResult parsed =
          kiln::inputgen::parseSpec(value, options.generateAllSpec, error);
      if (parsed != kiln::inputgen::ParseResult::Spec) {
        usageError("option '--inputs-generate' expects random, random:SEED, zeros or const:V, "
                   "got '" +
                   value + "'" + (error.empty() ? "" : " (" + error + ")"));
        return false;
      }
      options.generateAll = true;
    } else if (flag == "--rtol" || flag == "--atol") {
      if (!parseDouble(value, flag == "--rtol" ? options.rtol : options.atol)) {
        usageError("option '" + flag + "' expects a non-negative number, got '" + value + "'");
        return false;
      }
    } else if (flag == "--bench") {
      if (!parseLong(value, 1, 1000000, options.bench)) {
        usageError("option '--bench' expects an iteration count in [1, 1000000], got '" + value +
                   "'");
        return false;
      }
    } else if (flag == "--profile") {
      if (!parseLong(value, 1, 100000, options.profile)) {
        usageError("option '--profile' expects an iteration count in [1, 100000], got '" + value +
                   "'");
        return false;
      }
    } else if (flag == "--device") {
      long device = 0;
      if (!parseLong(value, 0, 1024, device)) {
        usageError("option '--device' expects a device ordinal, got '" + value + "'");
        return false;
      }
      options.device = static_cast<int>(device);
      options.deviceGiven = true;
    } else if (flag == "--tensor-parallel") {
      if (!parseLong(value, 2, kMaxTensorParallel, options.tensorParallel)) {
        usageError("option '--tensor-parallel' expects the number of ranks in [2, " +
                   std::to_string(kMaxTensorParallel) + "], got '" + value + "'");
        return false;
      }
    } else if (flag == "--tp-timeout") {
      long timeout = 0;
      if (!parseLong(value, 0, 0xffffffffL, timeout)) {
        usageError("option '--tp-timeout' expects milliseconds in [0, 4294967295] (0 = no "
                   "limit), got '" +
                   value + "'");
        return false;
      }
      options.tpTimeoutMs = static_cast<uint32_t>(timeout);
    } else {
      usageError("unknown option '" + flag + "'");
      return false;
    }
  }
  if (options.model.empty()) {
    usageError("no model file given");
    return false;
  }
  return true;
}

/// "f32[1x128]".
std::string describe(const kiln_tensor_info_t &info) {
  return std::string(kiln_dtype_name(info.dtype)) + "[" +
         kiln::npy::formatShape(info.shape, info.rank) + "]";
}

/// "16 B", "4.0 KiB", "2.0 MiB", "1.5 GiB".
std::string formatBytes(uint64_t bytes) {
  char text[48];
  if (bytes < 1024)
    std::snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
  else if (bytes < (1ull << 20))
    std::snprintf(text, sizeof(text), "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  else if (bytes < (1ull << 30))
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

/// "all_reduce_sum f16 x 1048576 (2.0 MiB)": a collective as kiln-run prints it.
std::string describeCollective(const kiln_collective_info_t &info) {
  return std::string(info.kind) + " " + kiln_dtype_name(info.dtype) + " x " +
         std::to_string(info.count) + " (" + formatBytes(info.count * kiln_dtype_size(info.dtype)) +
         ")";
}

/// "arg 1 +0: f16 rank 2, dims 64x128, strides 128, box 64x64, swizzle 128B": a tensor map as
/// --info prints it (dims and box innermost first, byte strides of dims 1.., as the artifact
/// stores them; a rank-1 map has no strides).
std::string describeTensorMap(const kiln_tensor_map_info_t &map) {
  std::string dims, box, strides;
  for (size_t d = 0; d < map.rank; ++d) {
    dims += (d ? "x" : "") + std::to_string(map.dims[d]);
    box += (d ? "x" : "") + std::to_string(map.box[d]);
    if (d > 0)
      strides += (d > 1 ? "x" : "") + std::to_string(map.strides[d - 1]);
  }
  return "arg " + std::to_string(map.arg) + " +" + std::to_string(map.offset_bytes) + ": " +
         kiln_dtype_name(map.dtype) + " rank " + std::to_string(map.rank) + ", dims " + dims +
         (strides.empty() ? "" : ", strides " + strides) + ", box " + box + ", swizzle " +
         kiln::report::tensorMapSwizzleName(map.swizzle);
}

/// Whether input `index`'s value range is that of a table index (which also takes -R .. -1):
/// every input but a --kv-cache step's block table, lengths and positions.
bool isTableIndex(const kiln_artifact_t *artifact, size_t index) {
  kiln_input_role_t role = KILN_INPUT_ROLE_DATA;
  kiln_status_free(kiln_artifact_input_role(artifact, index, &role));
  return role == KILN_INPUT_ROLE_DATA;
}

/// What --info says of a generation artifact (kiln_generator_limits and
/// kiln_generator_prefill_waste); isGeneration is false for other artifacts.
struct GenerationInfo {
  bool isGeneration = false;
  size_t maxBatch = 0, maxSeqLen = 0;
  /// The KV cache's blocks for sequences, their tokens, and how many sequences of maxSeqLen
  /// tokens one call holds (kiln_generator_kv_blocks; 0: unknown).
  size_t kvBlocks = 0, kvBlockSize = 0, kvFullSequences = 0;
  /// Prompt lengths 1..wastePrompts the padding is averaged over: the capacity, at most
  /// kInfoWastePrompts (the sum visits every length; --info stays under a second).
  size_t wastePrompts = 0;
  double meanWaste = 0, tokenWaste = 0;
  /// The same over prompts 1..chunkPrompts, the longest prefill chunk, when it is shorter than
  /// wastePrompts (0 otherwise): the range the padding price also bounds (since session 34).
  size_t chunkPrompts = 0;
  double chunkMeanWaste = 0, chunkTokenWaste = 0;
  std::string wasteError; ///< why the padding is not known, when it is not
  /// Every program has the compiler's time estimate, so kiln_generate cuts prompts by time.
  bool planByTime = false;
  /// What that plan charges per padded token (kiln_generator_prefill_padding_price).
  double paddingPriceUs = 0;
};
constexpr size_t kInfoWastePrompts = size_t(1) << 20;

/// ", each padded token priced at X us ..." for --info's padding line, or "" without a price.
std::string pricedPadding(double us) {
  if (!(us > 0))
    return "";
  char text[128];
  std::snprintf(text, sizeof text,
                ", each padded token priced at %.3g us to keep the padding within 12.5%%", us);
  return text;
}

/// "; over prompts 1..C (the longest chunk): X% and Y%" for --info's padding line, or "".
std::string chunkWaste(const GenerationInfo &g) {
  if (g.chunkPrompts == 0)
    return "";
  char text[128];
  std::snprintf(text, sizeof text, "; over prompts 1..%zu (the longest chunk): %.1f%% and %.1f%%",
                g.chunkPrompts, 100 * g.chunkMeanWaste, 100 * g.chunkTokenWaste);
  return text;
}

/// The `input_ids` input of `program` (one program of an artifact), or false without one.
bool inputIdsInfo(const kiln_artifact_t *program, kiln_tensor_info_t &out) {
  size_t index = 0;
  if (kiln_status_t status = kiln_artifact_find_input(program, "input_ids", &index)) {
    kiln_status_free(status);
    return false;
  }
  if (kiln_status_t status = kiln_artifact_input_info(program, index, &out)) {
    kiln_status_free(status);
    return false;
  }
  return true;
}

GenerationInfo describeGeneration(const kiln_artifact_t *artifact) {
  GenerationInfo g;
  int hasIds = 0;
  int64_t idMin = 0, idMax = 0;
  kiln_artifact_t *mutableArtifact = const_cast<kiln_artifact_t *>(artifact);
  if (kiln_status_t status = kiln_generator_limits(mutableArtifact, &g.maxBatch, &g.maxSeqLen,
                                                   &hasIds, &idMin, &idMax)) {
    kiln_status_free(status);
    return g;
  }
  g.isGeneration = true;
  kiln_status_free(kiln_generator_kv_blocks(mutableArtifact, &g.kvBlocks, &g.kvBlockSize,
                                            &g.kvFullSequences));
  int byTime = 0;
  kiln_status_free(kiln_generator_prefill_by_time(mutableArtifact, &byTime));
  g.planByTime = byTime != 0;
  kiln_status_free(kiln_generator_prefill_padding_price(mutableArtifact, &g.paddingPriceUs));
  g.wastePrompts = std::min(g.maxSeqLen, kInfoWastePrompts);
  if (kiln_status_t status = kiln_generator_prefill_waste(mutableArtifact, g.wastePrompts,
                                                          &g.meanWaste, &g.tokenWaste)) {
    g.wasteError = kiln_status_message(status);
    kiln_status_free(status);
    return g;
  }
  // The longest prefill chunk: the most tokens per step among the programs.
  size_t longest = 0;
  for (size_t p = 0; p < kiln_artifact_program_count(artifact); ++p) {
    kiln_artifact_t *program = nullptr;
    kiln_tensor_info_t ids;
    if (kiln_status_t status = kiln_artifact_program(mutableArtifact, p, &program)) {
      kiln_status_free(status);
      continue;
    }
    if (inputIdsInfo(program, ids) && ids.rank == 2 && ids.shape[0] == 1 && ids.shape[1] > 1)
      longest = std::max(longest, size_t(ids.shape[1])); // prefill steps of one row
    kiln_artifact_release(program);
  }
  if (longest > 0 && longest < g.wastePrompts) {
    if (kiln_status_t status = kiln_generator_prefill_waste(mutableArtifact, longest,
                                                            &g.chunkMeanWaste, &g.chunkTokenWaste))
      kiln_status_free(status);
    else
      g.chunkPrompts = longest;
  }
  return g;
}

/// Prints the artifact description for --info.
void printInfo(const kiln_artifact_t *artifact) {
  std::printf("artifact: %s (producer '%s')\n", kiln_artifact_path(artifact),
              kiln_artifact_producer(artifact));
  if (size_t count = kiln_artifact_program_count(artifact); count > 1) {
    // Every program, with its input_ids shape and arena; this description is of one of them.
    std::printf("programs: %zu (described: '%s'; kiln-run --program NAME)\n", count,
                kiln_artifact_program_name(artifact));
    for (size_t p = 0; p < count; ++p) {
      kiln_artifact_t *program = nullptr;
      if (kiln_status_t status =
              kiln_artifact_program(const_cast<kiln_artifact_t *>(artifact), p, &program)) {
        kiln_status_free(status);
        continue;
      }
      std::string shape;
      kiln_tensor_info_t ids;
      if (inputIdsInfo(program, ids))
        shape = ", input_ids " + describe(ids);
      // The compiler's estimate, which the generation loop's prefill plan compares.
      char estimate[48] = "";
      if (double us = kiln_artifact_program_estimated_us(program); us > 0)
        std::snprintf(estimate, sizeof estimate, ", est. %.1f us", us);
      std::printf("  %zu: %s (%zu launches%s, arena %llu bytes%s)\n", p,
                  kiln_artifact_program_name(program), kiln_artifact_launch_count(program),
                  shape.c_str(), static_cast<unsigned long long>(kiln_artifact_arena_bytes(program)),
                  estimate);
      kiln_artifact_release(program);
    }
    // A generation artifact: the padding its prefill programs add over every prompt length.
    const GenerationInfo g = describeGeneration(artifact);
    if (g.isGeneration && !g.wasteError.empty())
      std::printf("generation: up to %zu sequence%s of %zu tokens; prefill padding not known: %s\n",
                  g.maxBatch, g.maxBatch == 1 ? "" : "s", g.maxSeqLen, g.wasteError.c_str());
    else if (g.isGeneration)
      std::printf("generation: up to %zu sequence%s of %zu tokens; prefill padding over prompts "
                  "1..%zu: padding is on average %.1f%% of a prompt's tokens run and %.1f%% of all "
                  "tokens run%s "
                  "(prompts cut into chunks by %s%s)\n",
                  g.maxBatch, g.maxBatch == 1 ? "" : "s", g.maxSeqLen, g.wastePrompts,
                  100 * g.meanWaste, 100 * g.tokenWaste, chunkWaste(g).c_str(),
                  g.planByTime ? "the programs' estimated time" : "the least padding",
                  pricedPadding(g.paddingPriceUs).c_str());
    if (g.isGeneration && g.kvBlockSize > 0) {
      // What the pool holds for all sequences together, beside what one may hold.
      const size_t perSequence = (g.maxSeqLen + g.kvBlockSize - 1) / g.kvBlockSize;
      std::printf("KV cache: %zu blocks of %zu tokens for all sequences together (%zu tokens); "
                  "a sequence of %zu tokens takes %zu, so %zu such %s at once\n",
                  g.kvBlocks, g.kvBlockSize, g.kvBlocks * g.kvBlockSize, g.maxSeqLen, perSequence,
                  g.kvFullSequences, g.kvFullSequences == 1 ? "sequence fits" : "sequences fit");
    }
  }
  kiln_tensor_info_t info;
  std::printf("inputs: %zu\n", kiln_artifact_input_count(artifact));
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_status_free(kiln_artifact_input_info(artifact, i, &info));
    int hasRange = 0;
    int64_t lo = 0, hi = 0;
    kiln_status_free(kiln_artifact_input_value_range(artifact, i, &hasRange, &lo, &hi));
    std::string range = hasRange
                            ? " values [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                            : std::string();
    // What the runtime fills (kiln-compile --kv-cache), e.g. "role position_ids".
    kiln_input_role_t role = KILN_INPUT_ROLE_DATA;
    kiln_status_free(kiln_artifact_input_role(artifact, i, &role));
    if (role != KILN_INPUT_ROLE_DATA)
      range += std::string(" role ") + kiln::report::inputRoleName(role);
    std::printf("  %s: %s (%llu bytes)%s\n", info.name, describe(info).c_str(),
                static_cast<unsigned long long>(info.byte_size), range.c_str());
  }
  std::printf("outputs: %zu\n", kiln_artifact_output_count(artifact));
  for (size_t i = 0; i < kiln_artifact_output_count(artifact); ++i) {
    kiln_status_free(kiln_artifact_output_info(artifact, i, &info));
    std::printf("  %s: %s (%llu bytes)\n", info.name, describe(info).c_str(),
                static_cast<unsigned long long>(info.byte_size));
  }
  std::printf("kernels: %zu launches in %zu modules\n", kiln_artifact_launch_count(artifact),
              kiln_artifact_module_count(artifact));
  kiln_module_info_t module;
  for (size_t i = 0; i < kiln_artifact_module_count(artifact); ++i) {
    kiln_status_free(kiln_artifact_module_info(artifact, i, &module));
    std::printf("  module %s: PTX %llu bytes", module.name,
                static_cast<unsigned long long>(module.ptx_bytes));
    for (size_t c = 0; c < module.cubin_count; ++c) {
      uint32_t arch = 0;
      uint64_t bytes = 0;
      kiln_status_free(kiln_artifact_module_cubin(artifact, i, c, &arch, &bytes));
      std::printf(", SASS sm_%u %llu bytes", arch, static_cast<unsigned long long>(bytes));
    }
    std::printf("\n");
  }
  kiln_launch_info_t launch;
  for (size_t i = 0; i < kiln_artifact_launch_count(artifact); ++i) {
    kiln_status_free(kiln_artifact_launch_info(artifact, i, &launch));
    std::printf("  %zu: %s (module %s) grid=(%u,%u,%u) block=(%u,%u,%u) smem=%u args=%zu%s\n", i,
                launch.function_name, launch.module_name, launch.grid[0], launch.grid[1],
                launch.grid[2], launch.block[0], launch.block[1], launch.block[2],
                launch.shared_mem_bytes, launch.arg_count,
                kiln_artifact_launch_programmatic(artifact, i) ? " programmatic" : "");
    // Tensor maps (format version 3), one line each after the launch line.
    for (size_t m = 0; m < kiln_artifact_launch_tensor_map_count(artifact, i); ++m) {
      kiln_tensor_map_info_t map;
      kiln_status_free(kiln_artifact_launch_tensor_map_info(artifact, i, m, &map));
      std::printf("      tensor map %zu: %s\n", m, describeTensorMap(map).c_str());
    }
    // What it computes, when the artifact records it (older files do not).
    const char *name = kiln_artifact_launch_name(artifact, i);
    if (!name || !*name)
      continue;
    std::string ops;
    for (size_t o = 0; o < kiln_artifact_launch_op_count(artifact, i); ++o)
      ops += (o ? " " : "") + std::string(kiln_artifact_launch_op(artifact, i, o));
    kiln_launch_cost_t cost;
    kiln_status_free(kiln_artifact_launch_cost(artifact, i, &cost));
    std::printf("      name: %s\n      layer: %s\n      ops: %s\n", name,
                *kiln_artifact_launch_layer(artifact, i) ? kiln_artifact_launch_layer(artifact, i)
                                                         : "-",
                ops.c_str());
    size_t stored = kiln_artifact_launch_node_count(artifact, i);
    size_t total = kiln_artifact_launch_node_total(artifact, i);
    std::string nodes;
    for (size_t n = 0; n < stored; ++n)
      nodes += (n ? ", " : "") + std::string(kiln_artifact_launch_node(artifact, i, n));
    if (total > stored)
      nodes += ", ... (" + std::to_string(total - stored) + " more)";
    std::printf("      onnx nodes (%zu): %s\n", total, total ? nodes.c_str() : "-");
    std::printf("      cost: %llu flop, %s read, %s written\n",
                static_cast<unsigned long long>(cost.flops), formatBytes(cost.bytes_read).c_str(),
                formatBytes(cost.bytes_written).c_str());
  }
  std::printf("arena_bytes: %llu\n",
              static_cast<unsigned long long>(kiln_artifact_arena_bytes(artifact)));
  std::printf("weights_bytes: %llu\n",
              static_cast<unsigned long long>(kiln_artifact_weights_bytes(artifact)));
  if (kiln_artifact_tp_world_size(artifact) > 1) {
    std::printf("tensor_parallel: world_size %u, rank %u, group_hash 0x%016llx\n",
                kiln_artifact_tp_world_size(artifact), kiln_artifact_tp_rank(artifact),
                static_cast<unsigned long long>(kiln_artifact_tp_group_hash(artifact)));
    std::printf("collectives: %zu\n", kiln_artifact_collective_count(artifact));
    kiln_collective_info_t collective;
    for (size_t c = 0; c < kiln_artifact_collective_count(artifact); ++c) {
      kiln_status_free(kiln_artifact_collective_info(artifact, c, &collective));
      std::printf("  %zu: %s before launch %zu\n", c, describeCollective(collective).c_str(),
                  collective.before_launch);
    }
  }
}

/// IEEE half -> float.
float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0)
    value = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    value =
        mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    value = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  return sign ? -value : value;
}

/// Element `i` of a `dtype` buffer as a double.
double loadElement(kiln_dtype_t dtype, const uint8_t *data, uint64_t i) {
  switch (dtype) {
  case KILN_DTYPE_F32: {
    float v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  case KILN_DTYPE_F16: {
    uint16_t v;
    std::memcpy(&v, data + 2 * i, 2);
    return halfToFloat(v);
  }
  case KILN_DTYPE_BF16: {
    uint16_t v;
    std::memcpy(&v, data + 2 * i, 2);
    uint32_t bits = static_cast<uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case KILN_DTYPE_I64: {
    int64_t v;
    std::memcpy(&v, data + 8 * i, 8);
    return static_cast<double>(v);
  }
  case KILN_DTYPE_I32: {
    int32_t v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  case KILN_DTYPE_I8:
    return static_cast<int8_t>(data[i]);
  case KILN_DTYPE_U8:
    return data[i];
  case KILN_DTYPE_I16: {
    int16_t v;
    std::memcpy(&v, data + 2 * i, 2);
    return v;
  }
  case KILN_DTYPE_U16: {
    uint16_t v;
    std::memcpy(&v, data + 2 * i, 2);
    return v;
  }
  case KILN_DTYPE_U32: {
    uint32_t v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  case KILN_DTYPE_U64: {
    uint64_t v;
    std::memcpy(&v, data + 8 * i, 8);
    return static_cast<double>(v);
  }
  case KILN_DTYPE_BOOL:
    return data[i] ? 1.0 : 0.0;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

/// Result of comparing one output with its reference.
struct Comparison {
  double maxAbsErr = 0, maxRef = 0, maxRelErr = 0;
  uint64_t nanCount = 0;
  bool pass = false;
};

/// Compares `count` elements. Passes iff the output has no NaN and no non-finite difference, and
/// max_rel_err = max|out - ref| / max|ref| <= rtol or max_abs_err <= atol.
Comparison compare(kiln_dtype_t outType, const uint8_t *out, kiln_dtype_t refType,
                   const uint8_t *ref, uint64_t count, double rtol, double atol) {
  Comparison result;
  bool nonFinite = false;
  for (uint64_t i = 0; i < count; ++i) {
    double o = loadElement(outType, out, i), r = loadElement(refType, ref, i);
    if (std::isnan(o)) {
      ++result.nanCount;
      continue;
    }
    double diff = o == r ? 0.0 : std::fabs(o - r);
    if (!std::isfinite(diff)) {
      nonFinite = true;
      continue;
    }
    result.maxAbsErr = std::max(result.maxAbsErr, diff);
    if (std::isfinite(r))
      result.maxRef = std::max(result.maxRef, std::fabs(r));
  }
  result.maxRelErr = result.maxAbsErr / std::max(result.maxRef, 1e-30);
  result.pass =
      result.nanCount == 0 && !nonFinite && (result.maxRelErr <= rtol || result.maxAbsErr <= atol);
  return result;
}

/// Returns the value at percentile `p` (0..1, nearest rank) of sorted `values`.
float percentile(const std::vector<float> &sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[rank == 0 ? 0 : rank - 1];
}

/// Checks that an .npy array matches a tensor's dtype (exactly, if `exactDType`) and shape.
bool checkArray(const kiln::npy::NpyArray &array, const kiln_tensor_info_t &info,
                const std::string &kind, const std::string &path, bool exactDType,
                std::string &error) {
  std::string expected = describe(info);
  std::string got = std::string(kiln_dtype_name(array.dtype)) + "[" +
                    kiln::npy::formatShape(array.shape.data(), array.shape.size()) + "]";
  bool shapeOk = array.shape.size() == info.rank &&
                 std::equal(array.shape.begin(), array.shape.end(), info.shape);
  if ((exactDType && array.dtype != info.dtype) || !shapeOk) {
    error = "'" + path + "': " + kind + " '" + info.name + "' expects " + expected + ", got " + got;
    return false;
  }
  return true;
}

/// The files of a run, read and checked against the artifact before the GPU is touched.
struct RunFiles {
  /// --input arrays by input name (read from files or generated).
  std::map<std::string, kiln::npy::NpyArray> inputs;
  /// The generator of each generated input ("random:1"), by input name.
  std::map<std::string, std::string> generated;
  /// --output paths by output name (checked writable).
  std::map<std::string, std::string> outputPaths;
  /// --compare references, in command-line order.
  std::vector<std::pair<std::string, kiln::npy::NpyArray>> references;
};

/// Reads and checks every --input file against `artifact` and, when `reporting` (the process
/// that writes and prints: not a process-mode rank other than 0), the --output paths and
/// --compare references. Returns kExitOk, or kExitError after printing the error.
int prepareFiles(const Options &options, kiln_artifact_t *artifact, bool reporting,
                 RunFiles &files) {
  // Generates input `index` as `spec` says (inside the artifact's value range).
  auto generateInput = [&](size_t index, const kiln::inputgen::Spec &spec) {
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_input_info(artifact, index, &info));
    kiln::inputgen::Range range;
    int known = 0;
    kiln_status_free(
        kiln_artifact_input_value_range(artifact, index, &known, &range.min, &range.max));
    range.known = known != 0;
    range.fromEnd = isTableIndex(artifact, index);
    kiln::npy::NpyArray array;
    array.dtype = info.dtype;
    array.shape.assign(info.shape, info.shape + info.rank);
    std::string error;
    if (!kiln::inputgen::generate(spec, info.name, info.dtype, array.elementCount(), range,
                                  array.data, error))
      return fileError(error);
    files.inputs[info.name] = std::move(array);
    files.generated[info.name] = spec.text;
    return kExitOk;
  };
  for (const auto &[name, path] : options.inputs) {
    size_t index = 0;
    if (kiln_status_t status = kiln_artifact_find_input(artifact, name.c_str(), &index))
      return statusError(status);
    if (files.inputs.count(name))
      return usageError("input '" + name + "' given twice");
    kiln::inputgen::Spec spec;
    std::string error;
    switch (kiln::inputgen::parseSpec(path, spec, error)) {
    case kiln::inputgen::ParseResult::Error:
      return usageError("--input " + name + "=" + path + ": " + error);
    case kiln::inputgen::ParseResult::Spec:
      if (int code = generateInput(index, spec))
        return code;
      continue;
    case kiln::inputgen::ParseResult::NotASpec:
      break;
    }
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_input_info(artifact, index, &info));
    kiln::npy::NpyArray array;
    if (!kiln::npy::readNpyFile(path, array, error) ||
        !checkArray(array, info, "input", path, /*exactDType=*/true, error))
      return fileError(error);
    files.inputs[name] = std::move(array);
  }
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_input_info(artifact, i, &info));
    if (files.inputs.count(info.name))
      continue;
    if (options.generateAll) {
      if (int code = generateInput(i, options.generateAllSpec))
        return code;
      continue;
    }
    return usageError(std::string("missing --input for '") + info.name + "' (" + describe(info) +
                      "); give NAME=FILE.npy, NAME=random[:SEED], or --inputs-generate random");
  }
  // Every integer input inside the range the artifact records (token ids inside the embedding
  // table): the kernels do not check indices (an index outside reads a clamped row), the
  // runtime does not scan inputs, so this is where a bad .npy is caught. Generated inputs are
  // inside by construction and checked all the same.
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_input_info(artifact, i, &info));
    const kiln::npy::NpyArray &array = files.inputs.at(info.name);
    kiln_status_t status =
        kiln_artifact_check_input_values(artifact, i, array.data.data(), array.data.size());
    if (!status)
      continue;
    const std::string error = kiln_status_message(status);
    kiln_status_free(status);
    auto generated = files.generated.find(info.name);
    if (generated != files.generated.end())
      return fileError(error + " (generated by " + generated->second + ")");
    for (const auto &[name, path] : options.inputs)
      if (name == info.name)
        return fileError("'" + path + "': " + error);
    return fileError(error);
  }
  if (!options.trace.empty() && reporting) {
    // Like --output: fail before the run when the trace cannot be written.
    const std::string &path = options.trace;
    std::string dir =
        path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
    bool writable = access(path.c_str(), F_OK) == 0 ? access(path.c_str(), W_OK) == 0
                                                    : access(dir.c_str(), W_OK | X_OK) == 0;
    if (!writable)
      return fileError("cannot write --trace file '" + path + "': " + std::strerror(errno));
  }
  for (const auto &[name, path] : options.outputs) {
    size_t index = 0;
    if (kiln_status_t status = kiln_artifact_find_output(artifact, name.c_str(), &index))
      return statusError(status);
    if (!files.outputPaths.emplace(name, path).second)
      return usageError("output '" + name + "' is given to --output twice");
    if (!reporting)
      continue;
    // Fail before the run, not after it: the output file must be writable,
    // or its directory must exist and be writable (nothing is created yet).
    std::string dir =
        path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
    bool writable = access(path.c_str(), F_OK) == 0 ? access(path.c_str(), W_OK) == 0
                                                    : access(dir.c_str(), W_OK | X_OK) == 0;
    if (!writable)
      return fileError("cannot write '" + path + "': " + std::strerror(errno));
  }
  std::map<std::string, std::string> comparePaths;
  for (const auto &[name, path] : options.compares) {
    size_t index = 0;
    if (kiln_status_t status = kiln_artifact_find_output(artifact, name.c_str(), &index))
      return statusError(status);
    if (!comparePaths.emplace(name, path).second)
      return usageError("output '" + name + "' is given to --compare twice");
    if (!reporting)
      continue;
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_output_info(artifact, index, &info));
    std::string error;
    kiln::npy::NpyArray array;
    if (!kiln::npy::readNpyFile(path, array, error) ||
        !checkArray(array, info, "reference for output", path, /*exactDType=*/false, error))
      return fileError(error);
    files.references.emplace_back(name, std::move(array));
  }
  return kExitOk;
}

/// The names of the outputs a reporting run needs (--output and --compare), sorted.
std::vector<std::string> reportedOutputs(const RunFiles &files) {
  std::vector<std::string> names;
  for (const auto &entry : files.outputPaths)
    names.push_back(entry.first);
  for (const auto &entry : files.references)
    if (std::find(names.begin(), names.end(), entry.first) == names.end())
      names.push_back(entry.first);
  return names;
}

/// One session (the single-GPU run, or one rank) and what it measured. The phases are separate
/// calls so that single-process runs report between them; a tensor-parallel rank must run the
/// same phases as its peers, in the same order.
class RankRunner {
public:
  RankRunner(kiln_artifact_t *artifact, const Options &options, const RunFiles &files)
      : artifact(artifact), options(options), files(files) {}
  ~RankRunner() { release(); }
  RankRunner(const RankRunner &) = delete;
  RankRunner &operator=(const RankRunner &) = delete;

  /// The session options of a run: the arena poisoned, the CUDA graph as --no-cuda-graph says,
  /// the tensor-parallel timeout of --tp-timeout.
  static kiln_session_params_t sessionParams(const Options &options, int device) {
    kiln_session_params_t params;
    kiln_session_params_initialize(&params);
    params.device_ordinal = device;
    params.poison_arena = 1;
    params.use_cuda_graph = options.cudaGraph ? 1 : 0;
    params.tp_timeout_ms = options.tpTimeoutMs;
    return params;
  }

  /// Creates the session this runner owns (sessionParams on `device`, group id `tpId`).
  kiln_status_t create(int device, const kiln_tp_id_t *tpId) {
    kiln_session_params_t params = sessionParams(options, device);
    params.tp_id = tpId;
    return kiln_session_create(artifact, &params, &session);
  }

  /// Uses `borrowed`, a session owned elsewhere (a rank of a kiln_tp_group), or none (nullptr).
  void attach(kiln_session_t *borrowed) {
    release();
    session = borrowed;
    owned = false;
  }

  /// Sets every input, runs once, waits for the run, then copies the outputs named in `names`
  /// into `outputs`. (The arena was poisoned at session creation, so an element no kernel wrote
  /// reads back as NaN / -1.)
  kiln_status_t run(const std::vector<std::string> &names) {
    for (const auto &[name, array] : files.inputs)
      if (kiln_status_t status =
              kiln_session_set_input(session, name.c_str(), array.data.data(), array.data.size()))
        return status;
    if (kiln_status_t status = kiln_session_run(session, nullptr))
      return status;
    if (kiln_status_t status = kiln_session_synchronize(session))
      return status;
    return readOutputs(names);
  }

  /// Copies the outputs named in `names` of the last run into `outputs`.
  kiln_status_t readOutputs(const std::vector<std::string> &names) {
    for (const std::string &name : names) {
      size_t index = 0;
      kiln_tensor_info_t info;
      kiln_status_free(kiln_artifact_find_output(artifact, name.c_str(), &index));
      kiln_status_free(kiln_artifact_output_info(artifact, index, &info));
      std::vector<uint8_t> &buffer = outputs[name];
      buffer.assign(static_cast<size_t>(info.byte_size), 0);
      if (kiln_status_t status =
              kiln_session_get_output(session, name.c_str(), buffer.data(), buffer.size()))
        return status;
    }
    return nullptr;
  }

  /// --bench: kBenchWarmup untimed runs, then --bench timed runs; `benchMs` sorted.
  kiln_status_t bench() {
    benchMs.assign(static_cast<size_t>(options.bench), 0.0f);
    if (kiln_status_t status =
            kiln_session_benchmark(session, kBenchWarmup, benchMs.size(), benchMs.data()))
      return status;
    std::sort(benchMs.begin(), benchMs.end());
    usedCudaGraph = kiln_session_has_cuda_graph(session) != 0;
    return nullptr;
  }

  /// --profile: per-launch medians in `launchMs`; per-collective medians in `collectiveMs` for
  /// tensor-parallel artifacts (kiln_session_profile_collectives), none otherwise.
  kiln_status_t profile() {
    launchMs.assign(kiln_artifact_launch_count(artifact), 0.0f);
    collectiveMs.assign(kiln_artifact_collective_count(artifact), 0.0f);
    size_t iterations = static_cast<size_t>(options.profile);
    if (kiln_artifact_tp_world_size(artifact) > 1)
      return kiln_session_profile_collectives(session, iterations, launchMs.data(),
                                              collectiveMs.data());
    return kiln_session_profile(session, iterations, launchMs.data());
  }

  /// --trace: the timeline of one profiled run (kiln_session_profile_timeline) in `timeline`.
  kiln_status_t traceRun() {
    timeline.launchStartMs.assign(kiln_artifact_launch_count(artifact), 0.0f);
    timeline.launchEndMs.assign(kiln_artifact_launch_count(artifact), 0.0f);
    timeline.collectiveStartMs.assign(kiln_artifact_collective_count(artifact), 0.0f);
    timeline.collectiveEndMs.assign(kiln_artifact_collective_count(artifact), 0.0f);
    return kiln_session_profile_timeline(
        session, timeline.launchStartMs.data(), timeline.launchEndMs.data(),
        timeline.collectiveStartMs.data(), timeline.collectiveEndMs.data());
  }

  /// Releases the session if this runner owns it (tensor-parallel: finalizes or aborts its
  /// communicator).
  void release() {
    if (owned)
      kiln_session_release(session);
    session = nullptr;
    owned = true;
  }

  std::map<std::string, std::vector<uint8_t>> outputs;
  std::vector<float> benchMs;
  bool usedCudaGraph = false;
  std::vector<float> launchMs, collectiveMs;
  kiln::report::Timeline timeline;

private:
  kiln_artifact_t *artifact;
  const Options &options;
  const RunFiles &files;
  kiln_session_t *session = nullptr;
  /// False while the session is borrowed (attach).
  bool owned = true;
};

/// Writes the --output files and prints the --compare lines from `outputs` (a run's outputs).
/// Returns kExitOk, kExitMismatch when a comparison failed, or kExitError after printing a write
/// error.
int reportOutputs(const Options &options, kiln_artifact_t *artifact, const RunFiles &files,
                  const std::map<std::string, std::vector<uint8_t>> &outputs,
                  kiln::JsonWriter *json) {
  auto infoOf = [artifact](const std::string &name) {
    size_t index = 0;
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_find_output(artifact, name.c_str(), &index));
    kiln_status_free(kiln_artifact_output_info(artifact, index, &info));
    return info;
  };
  for (const auto &[name, path] : files.outputPaths) {
    kiln_tensor_info_t info = infoOf(name);
    const std::vector<uint8_t> &buffer = outputs.at(name);
    std::string error;
    if (!kiln::npy::writeNpyFile(path, info.dtype,
                                 std::vector<int64_t>(info.shape, info.shape + info.rank),
                                 buffer.data(), buffer.size(), error))
      return fileError(error);
  }
  int exitCode = kExitOk;
  if (json && !files.references.empty()) {
    json->key("compare");
    json->beginArray();
  }
  for (const auto &[name, reference] : files.references) {
    kiln_tensor_info_t info = infoOf(name);
    const std::vector<uint8_t> &buffer = outputs.at(name);
    Comparison result = compare(info.dtype, buffer.data(), reference.dtype, reference.data.data(),
                                reference.elementCount(), options.rtol, options.atol);
    if (!result.pass)
      exitCode = kExitMismatch;
    if (json) {
      json->beginObject();
      json->field("output", name);
      json->field("max_abs_err", result.maxAbsErr);
      json->field("max_rel_err", result.maxRelErr);
      json->field("max_abs_ref", result.maxRef);
      json->field("nan", static_cast<unsigned long long>(result.nanCount));
      json->field("rtol", options.rtol);
      json->field("atol", options.atol);
      json->field("pass", result.pass);
      json->endObject();
      continue;
    }
    std::printf("compare %s: max_abs_err=%.6g max_rel_err=%.6g max_abs_ref=%.6g nan=%llu "
                "(rtol=%g atol=%g) %s\n",
                name.c_str(), result.maxAbsErr, result.maxRelErr, result.maxRef,
                static_cast<unsigned long long>(result.nanCount), options.rtol, options.atol,
                result.pass ? "PASS" : "FAIL");
  }
  if (json && !files.references.empty())
    json->endArray();
  return exitCode;
}

/// Prints the --bench line of `runner` ("tensor-parallel N" added when worldSize > 1), or adds
/// "bench" to `json`.
void reportBench(const RankRunner &runner, uint32_t worldSize, kiln::JsonWriter *json) {
  std::string mode = runner.usedCudaGraph ? "cuda graph" : "kernel launches";
  if (worldSize > 1)
    mode += ", tensor-parallel " + std::to_string(worldSize);
  if (json) {
    json->key("bench");
    json->beginObject();
    json->field("iterations", static_cast<unsigned long long>(runner.benchMs.size()));
    json->field("p50_ms", static_cast<double>(percentile(runner.benchMs, 0.5)));
    json->field("p90_ms", static_cast<double>(percentile(runner.benchMs, 0.9)));
    json->field("min_ms", static_cast<double>(runner.benchMs.front()));
    json->field("max_ms", static_cast<double>(runner.benchMs.back()));
    json->field("cuda_graph", runner.usedCudaGraph);
    json->field("world_size", worldSize);
    json->endObject();
    return;
  }
  std::printf("latency_ms p50=%.4f p90=%.4f (%zu iterations, %s)\n",
              percentile(runner.benchMs, 0.5), percentile(runner.benchMs, 0.9),
              runner.benchMs.size(), mode.c_str());
}

/// Prints the --profile table of `runner`: one row per launch and, for tensor-parallel
/// artifacts, one row per collective at its place in the schedule, the total, and a summary of
/// the collectives' share.
int reportProfile(const Options &options, kiln_artifact_t *artifact, const RankRunner &runner,
                  kiln::JsonWriter *json) {
  size_t launches = kiln_artifact_launch_count(artifact);
  size_t collectives = kiln_artifact_collective_count(artifact);
  uint32_t worldSize = kiln_artifact_tp_world_size(artifact);
  double launchTotal = 0, collectiveTotal = 0;
  for (float v : runner.launchMs)
    launchTotal += v;
  for (float v : runner.collectiveMs)
    collectiveTotal += v;
  double total = launchTotal + collectiveTotal;
  auto percent = [total](double ms) { return total > 0 ? 100.0 * ms / total : 0.0; };
  std::vector<kiln::report::LayerTime> layers =
      kiln::report::timePerLayer(artifact, runner.launchMs);
  if (json) {
    json->key("profile");
    json->beginObject();
    json->field("iterations", options.profile);
    json->field("total_ms", total);
    json->key("launches");
    json->beginArray();
    for (size_t i = 0; i < launches; ++i) {
      json->beginObject();
      json->field("index", static_cast<unsigned long long>(i));
      json->field("name", kiln::report::launchLabel(artifact, i));
      json->field("layer", kiln::report::launchLayer(artifact, i));
      json->field("ms", static_cast<double>(runner.launchMs[i]));
      json->field("percent", percent(runner.launchMs[i]));
      kiln_launch_cost_t cost;
      kiln_status_free(kiln_artifact_launch_cost(artifact, i, &cost));
      double seconds = runner.launchMs[i] * 1e-3;
      if (seconds > 0 && cost.bytes_read + cost.bytes_written > 0)
        json->field("gb_per_s",
                    static_cast<double>(cost.bytes_read + cost.bytes_written) / seconds * 1e-9);
      if (seconds > 0 && cost.flops > 0)
        json->field("tflop_per_s", static_cast<double>(cost.flops) / seconds * 1e-12);
      json->endObject();
    }
    json->endArray();
    json->key("layers");
    json->beginArray();
    for (const kiln::report::LayerTime &layer : layers) {
      json->beginObject();
      json->field("layer", layer.layer);
      json->field("launches", static_cast<unsigned long long>(layer.launches));
      json->field("ms", layer.ms);
      json->field("percent", percent(layer.ms));
      json->endObject();
    }
    json->endArray();
    if (collectives > 0) {
      json->key("collectives");
      json->beginArray();
      for (size_t c = 0; c < collectives; ++c) {
        json->beginObject();
        json->field("index", static_cast<unsigned long long>(c));
        json->field("ms", static_cast<double>(runner.collectiveMs[c]));
        json->field("percent", percent(runner.collectiveMs[c]));
        json->endObject();
      }
      json->endArray();
    }
    json->endObject();
    return kExitOk;
  }
  if (worldSize > 1)
    std::printf("profile (median of %ld runs, plain launches, event-bracketed, rank %u of %u):\n",
                options.profile, kiln_artifact_tp_rank(artifact), worldSize);
  else
    std::printf("profile (median of %ld runs, plain launches, event-bracketed):\n",
                options.profile);
  std::printf("  %4s  %-12s %-14s %-12s %9s %6s %8s %8s  %s\n", "#", "function", "grid", "block",
              "us", "%", "GB/s", "TFLOP/s", "kernel");
  size_t c = 0;
  auto printCollectivesBefore = [&](size_t launch) -> kiln_status_t {
    kiln_collective_info_t info;
    while (c < collectives) {
      if (kiln_status_t status = kiln_artifact_collective_info(artifact, c, &info))
        return status;
      if (info.before_launch != launch)
        break;
      std::string label = "c" + std::to_string(c);
      std::printf("  %4s  %-40s %9.2f %6.1f\n", label.c_str(), describeCollective(info).c_str(),
                  runner.collectiveMs[c] * 1e3,
                  total > 0 ? 100.0 * runner.collectiveMs[c] / total : 0.0);
      ++c;
    }
    return nullptr;
  };
  for (size_t i = 0; i < launches; ++i) {
    if (kiln_status_t status = printCollectivesBefore(i))
      return statusError(status);
    kiln_launch_info_t info;
    if (kiln_status_t status = kiln_artifact_launch_info(artifact, i, &info))
      return statusError(status);
    char grid[48], block[48];
    std::snprintf(grid, sizeof(grid), "%ux%ux%u", info.grid[0], info.grid[1], info.grid[2]);
    std::snprintf(block, sizeof(block), "%ux%ux%u", info.block[0], info.block[1], info.block[2]);
    const char *name = kiln_artifact_launch_name(artifact, i);
    // Achieved bandwidth and throughput from the compiler's estimates ("-" when not recorded).
    kiln_launch_cost_t cost;
    kiln_status_free(kiln_artifact_launch_cost(artifact, i, &cost));
    char gbps[32] = "-", tflops[32] = "-";
    double seconds = runner.launchMs[i] * 1e-3;
    if (seconds > 0 && cost.bytes_read + cost.bytes_written > 0)
      std::snprintf(gbps, sizeof(gbps), "%.1f",
                    static_cast<double>(cost.bytes_read + cost.bytes_written) / seconds * 1e-9);
    if (seconds > 0 && cost.flops > 0)
      std::snprintf(tflops, sizeof(tflops), "%.2f",
                    static_cast<double>(cost.flops) / seconds * 1e-12);
    std::printf("  %4zu  %-12s %-14s %-12s %9.2f %6.1f %8s %8s  %s\n", i, info.function_name, grid,
                block, runner.launchMs[i] * 1e3, percent(runner.launchMs[i]), gbps, tflops,
                name && *name ? name : "-");
  }
  if (kiln_status_t status = printCollectivesBefore(launches))
    return statusError(status);
  // Time per layer, when the artifact names layers.
  auto printLayers = [&] {
    if (layers.empty() || (layers.size() == 1 && layers.front().layer.empty()))
      return;
    std::printf("  per layer (sum of its kernels, largest first):\n");
    std::printf("    %-32s %7s %9s %6s\n", "layer", "kernels", "us", "%");
    for (const kiln::report::LayerTime &layer : layers)
      std::printf("    %-32s %7zu %9.2f %6.1f\n",
                  layer.layer.empty() ? "(no layer)" : layer.layer.c_str(), layer.launches,
                  layer.ms * 1e3, percent(layer.ms));
  };
  if (worldSize <= 1) {
    std::printf("  total %.2f us over %zu launches\n", total * 1e3, launches);
    printLayers();
    return kExitOk;
  }
  std::printf("  total %.2f us over %zu launches and %zu collectives\n", total * 1e3, launches,
              collectives);
  std::printf("  collectives: %zu per run, %.4f ms per run, %.1f%% of the profiled total\n",
              collectives, collectiveTotal, total > 0 ? 100.0 * collectiveTotal / total : 0.0);
  printLayers();
  return kExitOk;
}

/// Writes the --trace file of `runner`'s timeline; prints where it went (or adds "trace" to
/// `json`). Returns kExitOk or kExitError after printing the write error.
int writeTrace(const Options &options, kiln_artifact_t *artifact, const RankRunner &runner,
               kiln::JsonWriter *json) {
  std::string document = kiln::report::chromeTrace(artifact, runner.timeline);
  std::ofstream file(options.trace, std::ios::binary | std::ios::trunc);
  file << document << "\n";
  file.close();
  if (!file)
    return fileError("cannot write --trace file '" + options.trace + "': " + std::strerror(errno));
  if (json)
    json->field("trace", options.trace);
  else
    std::printf("trace: wrote %s (%zu kernels; open it in Perfetto, ui.perfetto.dev)\n",
                options.trace.c_str(), runner.timeline.launchStartMs.size());
  return kExitOk;
}

//===----------------------------------------------------------------------===//
// Tensor parallelism: what kiln-run adds to the runtime's rank files, environment and groups.
//===----------------------------------------------------------------------===//

/// True if `path` names an existing file system entry.
bool pathExists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

/// Prints a failed status of a tensor-parallel group call (kiln_tp_group_*), which lists each
/// failed rank on a line of its own ("rank R: ..."), as one "kiln-run: error: rank R: ..." line
/// per rank (continuation lines of a rank's message stay as they are); frees it and returns
/// kExitError.
int groupStatusError(kiln_status_t status) {
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  std::string out;
  size_t begin = 0;
  while (begin <= message.size()) {
    size_t end = message.find('\n', begin);
    std::string line = message.substr(begin, end == std::string::npos ? end : end - begin);
    size_t digits = line.rfind("rank ", 0) == 0 ? line.find_first_not_of("0123456789", 5) : 0;
    bool rankLine = digits > 5 && digits != std::string::npos && line.compare(digits, 2, ": ") == 0;
    out += (begin == 0 || rankLine ? "kiln-run: error: " : "") + line + "\n";
    if (end == std::string::npos)
      break;
    begin = end + 1;
  }
  std::fputs(out.c_str(), stderr);
  return kExitError;
}

/// Gets the group id of process-mode rank `rank` of `worldSize` ('path') from the environment
/// (kiln_tp_id_from_env: KILN_TP_ID, or KILN_TP_ID_FILE, which rank 0 creates and writes; its
/// path goes to `writtenFile`). Returns kExitOk, or kExitError after printing the error.
int obtainGroupId(uint32_t rank, uint32_t worldSize, const std::string &path, uint32_t timeoutMs,
                  kiln_tp_id_t &id, const char *&writtenFile) {
  kiln_status_t status = kiln_tp_id_from_env(rank, timeoutMs, &id, &writtenFile);
  if (kiln_status_code(status) == KILN_NOT_FOUND) {
    // Neither variable is set: say how else to run the ranks.
    std::string base = kiln::tpBaseArtifactPath(path, rank);
    std::string message = std::string(kiln_status_message(status)) +
                          ", or run all ranks in one process with `kiln-run --tensor-parallel " +
                          std::to_string(worldSize) + " " + (base.empty() ? "BASE.kiln" : base) +
                          "` (see kiln-run --help)";
    kiln_status_free(status);
    return fileError("rank " + std::to_string(rank) + " of " + std::to_string(worldSize) + " ('" +
                     path + "'): " + message);
  }
  if (status)
    return statusError(status, "rank " + std::to_string(rank) + ": ");
  return kExitOk;
}

//===----------------------------------------------------------------------===//
// The three ways to run.
//===----------------------------------------------------------------------===//

/// Owns an artifact reference.
struct ArtifactRef {
  kiln_artifact_t *artifact = nullptr;
  ArtifactRef() = default;
  ArtifactRef(const ArtifactRef &) = delete;
  ArtifactRef &operator=(const ArtifactRef &) = delete;
  ~ArtifactRef() { kiln_artifact_release(artifact); }
};

/// True when the options ask for a run (not only --info).
bool wantsRun(const Options &options) {
  return !options.inputs.empty() || !options.outputs.empty() || !options.compares.empty() ||
         options.bench > 0 || options.profile > 0 || options.generateAll || !options.trace.empty();
}

/// Starts the --json document of a run: {"artifact": ..., "generated_inputs": {...}; the run's
/// reports add their keys and finishJson closes it.
void startJson(kiln::JsonWriter &json, const kiln_artifact_t *artifact, const RunFiles *files) {
  json.beginObject();
  json.key("artifact");
  kiln::report::writeArtifactJson(json, artifact);
  if (files && !files->generated.empty()) {
    json.key("generated_inputs");
    json.beginObject();
    for (const auto &[name, spec] : files->generated)
      json.field(name, spec);
    json.endObject();
  }
}

/// Closes the --json document and prints it on stdout.
void finishJson(kiln::JsonWriter &json) {
  json.endObject();
  std::printf("%s\n", json.str().c_str());
}

/// --info without a run: the text description, or with --json the JSON one.
void describeArtifact(const Options &options, const kiln_artifact_t *artifact) {
  if (!options.json) {
    printInfo(artifact);
    return;
  }
  kiln::JsonWriter json;
  startJson(json, artifact, nullptr);
  if (kiln_artifact_program_count(artifact) > 1)
    if (const GenerationInfo g = describeGeneration(artifact); g.isGeneration) {
      json.key("generation");
      json.beginObject();
      json.field("max_batch", static_cast<uint64_t>(g.maxBatch));
      json.field("max_seq_len", static_cast<uint64_t>(g.maxSeqLen));
      json.field("kv_blocks", static_cast<uint64_t>(g.kvBlocks));
      json.field("kv_block_size", static_cast<uint64_t>(g.kvBlockSize));
      json.field("kv_full_sequences", static_cast<uint64_t>(g.kvFullSequences));
      if (g.wasteError.empty()) {
        json.field("prefill_waste_prompts", static_cast<uint64_t>(g.wastePrompts));
        json.field("prefill_mean_waste", g.meanWaste);
        json.field("prefill_token_waste", g.tokenWaste);
        if (g.chunkPrompts > 0) {
          json.field("prefill_chunk_waste_prompts", static_cast<uint64_t>(g.chunkPrompts));
          json.field("prefill_chunk_mean_waste", g.chunkMeanWaste);
          json.field("prefill_chunk_token_waste", g.chunkTokenWaste);
        }
        json.field("prefill_plan", g.planByTime ? "time" : "padding");
        json.field("prefill_padding_price_us", g.paddingPriceUs);
      } else {
        json.field("prefill_waste_error", g.wasteError);
      }
      json.endObject();
    }
  finishJson(json);
}

/// Runs one session in this process and reports as it goes: the single-GPU run, or one rank of
/// process mode (`tpId` non-null; `reporting` false for ranks other than 0, which print nothing
/// but errors, prefixed with `errorPrefix`; `idFile` the group id file this rank wrote, if any).
int runOneSession(const Options &options, kiln_artifact_t *artifact, const RunFiles &files,
                  int device, const kiln_tp_id_t *tpId, const char *idFile, bool reporting,
                  const std::string &errorPrefix, kiln::JsonWriter *json) {
  RankRunner runner(artifact, options, files);
  kiln_status_t created = runner.create(device, tpId);
  // Rank 0 deletes the id file once its session exists (every rank has read the file then, since
  // the communicator is complete) or failed (the group cannot form): the next job can reuse it.
  if (idFile)
    kiln_status_free(kiln_tp_id_file_remove(idFile));
  if (created)
    return statusError(created, errorPrefix);
  if (kiln_status_t status =
          runner.run(reporting ? reportedOutputs(files) : std::vector<std::string>()))
    return statusError(status, errorPrefix);
  int exitCode =
      reporting ? reportOutputs(options, artifact, files, runner.outputs, json) : kExitOk;
  if (exitCode == kExitError)
    return exitCode;
  if (options.bench > 0) {
    if (kiln_status_t status = runner.bench())
      return statusError(status, errorPrefix);
    if (reporting)
      reportBench(runner, kiln_artifact_tp_world_size(artifact), json);
  }
  if (options.profile > 0) {
    if (kiln_status_t status = runner.profile())
      return statusError(status, errorPrefix);
    if (reporting && reportProfile(options, artifact, runner, json) != kExitOk)
      return kExitError;
  }
  if (!options.trace.empty()) {
    if (kiln_status_t status = runner.traceRun())
      return statusError(status, errorPrefix);
    if (reporting && writeTrace(options, artifact, runner, json) != kExitOk)
      return kExitError;
  }
  return exitCode;
}

/// Process mode: this process is one rank. `artifact` is its rank file (already checked against
/// the environment when that gave the rank).
int runProcessMode(const Options &options, kiln_artifact_t *artifact) {
  uint32_t rank = kiln_artifact_tp_rank(artifact);
  uint32_t worldSize = kiln_artifact_tp_world_size(artifact);
  bool reporting = rank == 0;
  std::string prefix = "rank " + std::to_string(rank) + ": ";
  if (options.info && reporting && !options.json)
    printInfo(artifact);
  RunFiles files;
  if (int code = prepareFiles(options, artifact, reporting, files))
    return code;
  // The device: --device, else LOCAL_RANK, else the rank.
  int device = options.device;
  if (!options.deviceGiven)
    if (kiln_status_t status = kiln_tp_device_from_env(rank, &device))
      return statusError(status, prefix);
  kiln_tp_id_t id;
  const char *idFile = nullptr;
  if (int code = obtainGroupId(rank, worldSize, kiln_artifact_path(artifact), options.tpTimeoutMs,
                               id, idFile))
    return code;
  kiln::JsonWriter json;
  bool writeJson = options.json && reporting;
  if (writeJson)
    startJson(json, artifact, &files);
  int exitCode = runOneSession(options, artifact, files, device, &id, idFile, reporting, prefix,
                               writeJson ? &json : nullptr);
  if (writeJson && exitCode != kExitError)
    finishJson(json);
  return exitCode;
}

/// Compares every rank's outputs with rank 0's, bit for bit; prints an error per differing
/// output and returns kExitMismatch if any differ.
int checkRanksAgree(kiln_artifact_t *artifact,
                    const std::vector<std::unique_ptr<RankRunner>> &runners) {
  int exitCode = kExitOk;
  const auto &first = runners[0]->outputs;
  for (size_t r = 1; r < runners.size(); ++r) {
    for (const auto &[name, bytes] : first) {
      const std::vector<uint8_t> &other = runners[r]->outputs.at(name);
      if (other == bytes)
        continue;
      size_t index = 0;
      kiln_tensor_info_t info;
      kiln_status_free(kiln_artifact_find_output(artifact, name.c_str(), &index));
      kiln_status_free(kiln_artifact_output_info(artifact, index, &info));
      size_t elementSize = kiln_dtype_size(info.dtype);
      size_t byte = 0;
      while (byte < bytes.size() && bytes[byte] == other[byte])
        ++byte;
      uint64_t element = byte / elementSize;
      std::fprintf(stderr,
                   "kiln-run: error: rank %zu output '%s' differs from rank 0's (first at element "
                   "%llu: %.9g vs %.9g); after the final all-reduce every rank must hold the same "
                   "values\n",
                   r, name.c_str(), static_cast<unsigned long long>(element),
                   loadElement(info.dtype, other.data(), element),
                   loadElement(info.dtype, bytes.data(), element));
      exitCode = kExitMismatch;
    }
  }
  return exitCode;
}

/// Runs `phase` (a RankRunner member) of every rank at once, each on its rank's worker of `group`
/// (kiln_tp_group_for_each_rank): the ranks' collectives pair up.
kiln_status_t onEveryRank(kiln_tp_group_t *group, std::vector<std::unique_ptr<RankRunner>> &runners,
                          kiln_status_t (RankRunner::*phase)()) {
  struct Job {
    std::vector<std::unique_ptr<RankRunner>> *runners;
    kiln_status_t (RankRunner::*phase)();
  } job{&runners, phase};
  return kiln_tp_group_for_each_rank(
      group,
      [](void *user, uint32_t rank, kiln_session_t *) -> kiln_status_t {
        Job &job = *static_cast<Job *>(user);
        return ((*job.runners)[rank].get()->*job.phase)();
      },
      &job);
}

/// Threads mode (--tensor-parallel N): opens and checks the N rank files
/// (kiln_tp_artifacts_open), then runs them as one kiln_tp_group (its group id, one session and
/// worker thread per rank); reports rank 0.
int runThreadsMode(const Options &options) {
  uint32_t worldSize = static_cast<uint32_t>(options.tensorParallel);
  if (std::getenv("KILN_TP_RANK") || std::getenv("KILN_TP_WORLD_SIZE"))
    return usageError("--tensor-parallel runs every rank in this process, but KILN_TP_RANK / "
                      "KILN_TP_WORLD_SIZE ask for one rank per process; use one or the other");

  // 1. The rank files, all checked before anything runs.
  std::vector<kiln_artifact_t *> opened(worldSize, nullptr);
  if (kiln_status_t status =
          kiln_tp_artifacts_open(options.model.c_str(), worldSize, opened.data()))
    return statusError(status);
  std::vector<ArtifactRef> artifacts(worldSize);
  for (uint32_t r = 0; r < worldSize; ++r)
    artifacts[r].artifact = opened[r];
  if (options.info && !options.json)
    for (const ArtifactRef &ref : artifacts)
      printInfo(ref.artifact);
  if (!wantsRun(options)) {
    if (options.json) // rank 0's description (the ranks share their signature)
      describeArtifact(options, artifacts[0].artifact);
    return kExitOk;
  }

  // 2. Files (against rank 0's signature, which every rank shares).
  kiln_artifact_t *first = artifacts[0].artifact;
  RunFiles files;
  if (int code = prepareFiles(options, first, /*reporting=*/true, files))
    return code;

  // 3. The group: its id, and every rank's session, rank r on device --device + r.
  kiln_session_params_t sessionParams = RankRunner::sessionParams(options, options.device);
  kiln_tp_group_params_t groupParams;
  kiln_tp_group_params_initialize(&groupParams);
  groupParams.session_params = &sessionParams;
  kiln_tp_group_t *group = nullptr;
  if (kiln_status_t status = kiln_tp_group_create(opened.data(), worldSize, &groupParams, &group))
    return groupStatusError(status);
  std::unique_ptr<kiln_tp_group_t, void (*)(kiln_tp_group_t *)> groupHolder(group,
                                                                            kiln_tp_group_release);
  std::vector<std::unique_ptr<RankRunner>> runners;
  for (uint32_t r = 0; r < worldSize; ++r) {
    runners.push_back(std::make_unique<RankRunner>(artifacts[r].artifact, options, files));
    runners.back()->attach(kiln_tp_group_session(group, r));
  }

  // 4. Every rank runs the same phases at once: one run (every output read back), --bench,
  // --profile, --trace. Then the group is released, so the ranks tear down their communicators
  // together.
  std::vector<std::string> allOutputs;
  for (size_t i = 0; i < kiln_artifact_output_count(first); ++i) {
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_output_info(first, i, &info));
    allOutputs.push_back(info.name);
  }
  for (const auto &[name, array] : files.inputs)
    if (kiln_status_t status =
            kiln_tp_group_set_input(group, name.c_str(), array.data.data(), array.data.size()))
      return groupStatusError(status);
  if (kiln_status_t status = kiln_tp_group_run(group))
    return groupStatusError(status);
  for (uint32_t r = 0; r < worldSize; ++r)
    if (kiln_status_t status = runners[r]->readOutputs(allOutputs))
      return statusError(status, "rank " + std::to_string(r) + ": ");
  if (options.bench > 0)
    if (kiln_status_t status = onEveryRank(group, runners, &RankRunner::bench))
      return groupStatusError(status);
  if (options.profile > 0)
    if (kiln_status_t status = onEveryRank(group, runners, &RankRunner::profile))
      return groupStatusError(status);
  if (!options.trace.empty())
    if (kiln_status_t status = onEveryRank(group, runners, &RankRunner::traceRun))
      return groupStatusError(status);
  for (std::unique_ptr<RankRunner> &runner : runners)
    runner->attach(nullptr);
  groupHolder.reset();

  // 5. Rank 0's results; every rank must agree with it.
  kiln::JsonWriter jsonDocument;
  kiln::JsonWriter *json = options.json ? &jsonDocument : nullptr;
  if (json)
    startJson(*json, first, &files);
  int exitCode = reportOutputs(options, first, files, runners[0]->outputs, json);
  if (exitCode == kExitError)
    return exitCode;
  exitCode = std::max(exitCode, checkRanksAgree(first, runners));
  if (options.bench > 0)
    reportBench(*runners[0], worldSize, json);
  if (options.profile > 0 && reportProfile(options, first, *runners[0], json) != kExitOk)
    return kExitError;
  if (!options.trace.empty() && writeTrace(options, first, *runners[0], json) != kExitOk)
    return kExitError;
  if (json)
    finishJson(*json);
  return exitCode;
}

/// --generate: prefill the prompts of --prompt-ids, decode up to --generate tokens each through
/// kiln_generate, print the tokens and the timings (or, with --json, one JSON object).
int runGenerate(const Options &options) {
  kiln::npy::NpyArray prompts;
  std::string error;
  if (!kiln::npy::readNpyFile(options.promptIds, prompts, error))
    return fileError(error);
  if ((prompts.shape.size() != 1 && prompts.shape.size() != 2) ||
      (prompts.dtype != KILN_DTYPE_I64 && prompts.dtype != KILN_DTYPE_I32) ||
      prompts.elementCount() == 0)
    return fileError("'" + options.promptIds + "': --prompt-ids needs integer (int64 or int32) " +
                     "token ids of shape [P] or [B, P] with P >= 1, got " +
                     kiln_dtype_name(prompts.dtype) + " [" +
                     kiln::npy::formatShape(prompts.shape.data(), prompts.shape.size()) + "]");
  if (prompts.shape.size() == 2 && options.batch > 0)
    return usageError("--batch copies a [P] prompt; '" + options.promptIds + "' already has " +
                      std::to_string(prompts.shape[0]) +
                      (prompts.shape[0] == 1 ? " prompt" : " prompts"));
  const size_t rows = prompts.shape.size() == 2 ? size_t(prompts.shape[0])
                                                : size_t(std::max<long>(options.batch, 1));
  const size_t length = size_t(prompts.shape.back());

  // What the artifact takes, checked before anything is allocated or the GPU is touched.
  ArtifactRef model;
  if (kiln_status_t status = kiln_artifact_open(options.model.c_str(), &model.artifact))
    return statusError(status);
  size_t maxBatch = 0, maxSeqLen = 0;
  int hasIdRange = 0;
  int64_t idMin = 0, idMax = 0;
  if (kiln_status_t status = kiln_generator_limits(model.artifact, &maxBatch, &maxSeqLen,
                                                   &hasIdRange, &idMin, &idMax))
    return statusError(status);
  if (rows > maxBatch)
    return fileError("'" + options.promptIds + "' and --batch give " + std::to_string(rows) +
                     " sequences; '" + options.model + "' decodes at most " +
                     std::to_string(maxBatch) + " together");
  if (length + size_t(options.generate) - 1 > maxSeqLen)
    return fileError("'" + options.promptIds + "': a prompt of " + std::to_string(length) +
                     " tokens and --generate " + std::to_string(options.generate) + " need " +
                     std::to_string(length + size_t(options.generate) - 1) +
                     " tokens of cache; '" + options.model + "' holds " +
                     std::to_string(maxSeqLen) + " per sequence");
  std::vector<int64_t> ids(rows * length);
  for (size_t r = 0; r < rows; ++r)
    for (size_t t = 0; t < length; ++t) {
      const size_t source = prompts.shape.size() == 2 ? r * length + t : t;
      if (prompts.dtype == KILN_DTYPE_I64)
        std::memcpy(&ids[r * length + t], prompts.data.data() + source * 8, 8);
      else {
        int32_t v;
        std::memcpy(&v, prompts.data.data() + source * 4, 4);
        ids[r * length + t] = v;
      }
      if (hasIdRange && (ids[r * length + t] < idMin || ids[r * length + t] > idMax))
        return fileError("'" + options.promptIds + "': token " + std::to_string(t) +
                         " of prompt " + std::to_string(r) + " is " +
                         std::to_string(ids[r * length + t]) + ", outside the model's ids [" +
                         std::to_string(idMin) + ", " + std::to_string(idMax) + "]");
    }
  // A stop id the model never produces would never end a sequence: refused like a prompt id.
  if (hasIdRange)
    for (int64_t id : options.stopIds)
      if (id < idMin || id > idMax)
        return usageError("option '--stop-ids': " + std::to_string(id) +
                          " is outside the model's ids [" + std::to_string(idMin) + ", " +
                          std::to_string(idMax) + "]");

  std::vector<kiln_generate_request_t> requests(rows);
  std::vector<kiln_generate_result_t> results(rows);
  std::vector<std::vector<int64_t>> tokens(rows, std::vector<int64_t>(size_t(options.generate)));
  for (size_t r = 0; r < rows; ++r) {
    kiln_generate_request_t &q = requests[r];
    q.prompt = ids.data() + r * length;
    q.prompt_length = length;
    q.max_new_tokens = size_t(options.generate);
    q.stop_tokens = options.stopIds.data();
    q.stop_token_count = options.stopIds.size();
    kiln_sampling_params_initialize(&q.sampling);
    q.sampling.temperature = float(options.temperature);
    q.sampling.top_k = int32_t(options.topK);
    q.sampling.top_p = float(options.topP);
    q.sampling.seed = uint64_t(options.seed) + r;
    results[r].tokens = tokens[r].data();
  }
  // kiln_generate's own checks (the KV cache's blocks among them), still without the GPU.
  if (kiln_status_t status = kiln_generate_check(model.artifact, requests.data(), rows))
    return statusError(status);
  kiln_generator_t *generator = nullptr;
  if (kiln_status_t status = kiln_generator_create(model.artifact, options.device, &generator))
    return statusError(status);
  std::unique_ptr<kiln_generator_t, void (*)(kiln_generator_t *)> holder(generator,
                                                                        kiln_generator_release);
  for (long run = 0; run <= options.warmup; ++run)
    if (kiln_status_t status = kiln_generate(generator, requests.data(), rows, results.data(),
                                             nullptr, nullptr))
      return statusError(status);
  kiln_generate_stats_t stats;
  if (kiln_status_t status = kiln_generator_last_stats(generator, &stats))
    return statusError(status);
  static const char *const kReasons[] = {"length", "stop", "cancelled"};
  double ttft = 0;
  for (const kiln_generate_result_t &res : results)
    ttft = std::max(ttft, res.time_to_first_token_ms);
  // Decode throughput: tokens the decode steps produced (each sequence's first token comes from
  // its prefill) over the decode time.
  const size_t decodeTokens = stats.generated_tokens - rows;
  const double tokensPerSecond = stats.decode_ms > 0 ? decodeTokens / (stats.decode_ms / 1e3) : 0;
  if (options.json) {
    kiln::JsonWriter json;
    json.beginObject();
    json.key("sequences");
    json.beginArray();
    for (size_t r = 0; r < rows; ++r) {
      json.beginObject();
      json.key("tokens");
      json.beginArray();
      for (size_t t = 0; t < results[r].length; ++t)
        json.value(static_cast<long long>(tokens[r][t]));
      json.endArray();
      json.key("finish_reason");
      json.value(kReasons[results[r].finish_reason]);
      json.key("time_to_first_token_ms");
      json.value(results[r].time_to_first_token_ms);
      json.endObject();
    }
    json.endArray();
    json.key("prefill_ms");
    json.value(stats.prefill_ms);
    json.key("decode_steps");
    json.value(static_cast<long long>(stats.decode_steps));
    json.key("decode_tokens_per_s");
    json.value(tokensPerSecond);
    json.key("decode_step_p50_ms");
    json.value(stats.decode_step_p50_ms);
    json.key("decode_step_p99_ms");
    json.value(stats.decode_step_p99_ms);
    json.endObject();
    std::printf("%s\n", json.str().c_str());
    return kExitOk;
  }
  for (size_t r = 0; r < rows; ++r) {
    std::printf("sequence %zu (%zu tokens, %s):", r, results[r].length,
                kReasons[results[r].finish_reason]);
    for (size_t t = 0; t < results[r].length; ++t)
      std::printf(" %lld", static_cast<long long>(tokens[r][t]));
    std::printf("\n");
  }
  std::printf("time to first token: %.3f ms (prompt %zu tokens x %zu, prefill %.3f ms in %zu "
              "steps)\n",
              ttft, length, rows, stats.prefill_ms, stats.prefill_steps);
  std::printf("decode: %zu steps, %.1f tokens/s (batch %zu), step p50 %.3f ms, p99 %.3f ms\n",
              stats.decode_steps, tokensPerSecond, rows, stats.decode_step_p50_ms,
              stats.decode_step_p99_ms);
  return kExitOk;
}

/// The whole tool; returns the exit code.
int runTool(int argc, char **argv) {
  Options options;
  if (!parseArgs(argc, argv, options))
    return kExitError;
  const bool samplingGiven = options.temperature != 0 || options.topP != 1 || options.topK != 0 ||
                            options.seed != 0 || !options.stopIds.empty() || options.warmup != 0;
  if (options.generate > 0 || !options.promptIds.empty() || options.batch > 0 || samplingGiven) {
    if (options.generate == 0 || options.promptIds.empty())
      return usageError("--generate N and --prompt-ids IDS.npy go together (--batch, --warmup and "
                        "the sampling options only with them)");
    if (wantsRun(options) || options.tensorParallel > 0 || !options.program.empty() ||
        options.info)
      return usageError("--generate runs every program of a --kv-cache artifact; it takes no "
                        "--input/--output/--compare/--bench/--profile/--trace, --info, --program "
                        "or --tensor-parallel");
    return runGenerate(options);
  }
  if (!options.info && !options.json && !wantsRun(options))
    return usageError("nothing to do: give --info or --json, or "
                      "--input/--inputs-generate/--output/--compare/--bench/--profile/--trace, "
                      "or --generate");
  if (options.tensorParallel > 0 && !options.program.empty())
    return usageError("--program picks a program of a multi-program artifact; tensor-parallel "
                      "rank files have one program");
  if (options.tensorParallel > 0)
    return runThreadsMode(options);

  kiln_tp_rank_env_t env;
  if (kiln_status_t status = kiln_tp_rank_from_env(&env))
    return statusError(status);
  const std::string envPrefix = std::string(env.source) + ": ";

  // MODEL is a rank file, a base whose rank file the environment names, or a single-GPU model.
  ArtifactRef model;
  bool modelExists = pathExists(options.model);
  if (modelExists || !env.found || env.world_size == 1)
    if (kiln_status_t status = kiln_artifact_open(options.model.c_str(), &model.artifact))
      return statusError(status);
  if (!options.program.empty() &&
      ((model.artifact && kiln_artifact_tp_world_size(model.artifact) > 1) ||
       (env.found && env.world_size > 1)))
    return usageError("--program picks a program of a multi-program artifact; tensor-parallel "
                      "rank files have one program");
  if (model.artifact && kiln_artifact_tp_world_size(model.artifact) > 1) {
    // A rank file; the environment, when it gives a rank, must agree.
    if (!wantsRun(options)) {
      describeArtifact(options, model.artifact);
      return kExitOk;
    }
    if (env.found)
      if (kiln_status_t status = kiln_tp_artifact_check(model.artifact, env.rank, env.world_size))
        return statusError(status, envPrefix);
    return runProcessMode(options, model.artifact);
  }
  if (env.found && env.world_size > 1) {
    // A base: open this rank's file (kiln_tp_artifact_open checks it against the environment).
    ArtifactRef rankFile;
    if (kiln_status_t status = kiln_tp_artifact_open(options.model.c_str(), env.rank,
                                                     env.world_size, &rankFile.artifact)) {
      // MODEL itself is a single-GPU artifact (opened above): say how to run it.
      std::string message = envPrefix + kiln_status_message(status);
      if (kiln_status_code(status) == KILN_NOT_FOUND && model.artifact)
        message += ": run it without the rank variables";
      kiln_status_free(status);
      return fileError(message);
    }
    if (!wantsRun(options)) {
      describeArtifact(options, rankFile.artifact);
      return kExitOk;
    }
    return runProcessMode(options, rankFile.artifact);
  }

  // Single GPU: program 0, or the --program asked for.
  kiln_artifact_t *artifact = model.artifact;
  ArtifactRef program;
  if (!options.program.empty()) {
    if (kiln_status_t status =
            kiln_artifact_find_program(model.artifact, options.program.c_str(), &program.artifact))
      return statusError(status);
    artifact = program.artifact;
  }
  if (!wantsRun(options)) {
    describeArtifact(options, artifact);
    return kExitOk;
  }
  if (options.info && !options.json)
    printInfo(artifact);
  // 1. Read (or generate) and validate every input and file before touching the GPU.
  RunFiles files;
  if (int code = prepareFiles(options, artifact, /*reporting=*/true, files))
    return code;
  // 2.-6. Session, one run, outputs, latency, per-kernel time, trace.
  kiln::JsonWriter json;
  if (options.json)
    startJson(json, artifact, &files);
  int exitCode = runOneSession(options, artifact, files, options.device, nullptr, nullptr,
                               /*reporting=*/true, std::string(), options.json ? &json : nullptr);
  if (options.json && exitCode != kExitError)
    finishJson(json);
  return exitCode;
}

} // namespace

int main(int argc, char **argv) { return runTool(argc, argv); }
