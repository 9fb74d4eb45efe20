//===- kiln-run.cpp - Run a .kiln artifact on .npy inputs -----------------===//
//
// The command-line runner: opens an artifact, prints its description (--info, no GPU needed),
// feeds .npy inputs, runs once, writes/compares outputs and optionally measures latency with CUDA
// events (--bench). Runs replay the launch list as a CUDA graph unless --no-cuda-graph is given.
// Links only kiln_runtime and kiln_npy. Exit codes: 0 success / all comparisons pass, 1 a
// comparison failed, 2 usage, file or runtime error. See docs/runtime.md.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "Npy.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;
constexpr int kBenchWarmup = 3;

const char *const kUsage =
    "usage: kiln-run MODEL.kiln [--info] [--input NAME=FILE.npy]... [--output NAME=FILE.npy]...\n"
    "                [--compare NAME=REF.npy]... [--rtol R] [--atol A] [--bench N] [--profile N] [--device N]\n"
    "                [--no-cuda-graph]";

const char *const kHelp =
    "Runs a .kiln artifact (from kiln-compile) on an NVIDIA GPU.\n"
    "  --info               print inputs, outputs, modules (PTX, SASS targets), kernels, arena\n"
    "                       and weight bytes; needs no GPU\n"
    "  --input NAME=F.npy   value of model input NAME (exact dtype and shape); every input needed\n"
    "  --output NAME=F.npy  write output NAME after one run\n"
    "  --compare NAME=R.npy compare output NAME with a reference; exit 1 unless\n"
    "                       max_rel_err <= rtol or max_abs_err <= atol (and no NaN)\n"
    "  --rtol R, --atol A   tolerances of --compare (default 1e-4, 1e-5)\n"
    "  --bench N            time N runs (after 3 warm-up runs): latency p50/p90 in ms\n"
    "  --profile N          per-kernel device time, median of N runs\n"
    "  --device N           CUDA device ordinal (default 0)\n"
    "  --no-cuda-graph      launch kernels one by one instead of replaying a CUDA graph\n"
    "Exit status: 0 ok, 1 a --compare failed, 2 usage, file or CUDA error.\n";

/// Parsed command line.
struct Options {
  std::string model;
  bool info = false;
  std::vector<std::pair<std::string, std::string>> inputs, outputs, compares;
  double rtol = 1e-4;
  double atol = 1e-5;
  long bench = 0;
  long profile = 0;
  int device = 0;
  /// False with --no-cuda-graph: launch kernels one by one instead of replaying a CUDA graph.
  bool cudaGraph = true;
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

/// Prints a failed status, frees it and returns kExitError.
int statusError(kiln_status_t status) {
  std::fprintf(stderr, "kiln-run: error: %s\n", kiln_status_message(status));
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
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && std::isfinite(out) && out >= 0;
}

/// Parses a long in [min, max].
bool parseLong(const std::string &text, long min, long max, long &out) {
  char *end = nullptr;
  errno = 0;
  out = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && errno == 0 && out >= min && out <= max;
}

/// Parses argv into `options`; returns false after printing a usage error.
bool parseArgs(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::printf("%s\n\n%s", kUsage, kHelp);
      std::exit(kExitOk);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!options.model.empty()) {
        usageError("unexpected argument '" + arg + "' (model already given: '" + options.model +
                   "')");
        return false;
      }
      options.model = arg;
      continue;
    }
    if (arg == "--info") {
      options.info = true;
      continue;
    }
    if (arg == "--no-cuda-graph") {
      options.cudaGraph = false;
      continue;
    }
    // Flags with a value: "--flag value" or "--flag=value".
    std::string flag = arg, value;
    size_t eq = arg.find('=');
    if (eq != std::string::npos)
      flag = arg.substr(0, eq);
    static const char *const kValueFlags[] = {"--input", "--output", "--compare", "--rtol",
                                              "--atol",  "--bench",  "--profile", "--device"};
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
    std::pair<std::string, std::string> binding;
    if (flag == "--input" || flag == "--output" || flag == "--compare") {
      if (!splitBinding(value, binding)) {
        usageError("option '" + flag + "' expects NAME=FILE.npy, got '" + value + "'");
        return false;
      }
      (flag == "--input"    ? options.inputs
       : flag == "--output" ? options.outputs
                            : options.compares)
          .push_back(binding);
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
        usageError("option '--profile' expects an iteration count in [1, 100000], got '" +
                   value + "'");
        return false;
      }
    } else if (flag == "--device") {
      long device = 0;
      if (!parseLong(value, 0, 1024, device)) {
        usageError("option '--device' expects a device ordinal, got '" + value + "'");
        return false;
      }
      options.device = static_cast<int>(device);
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

/// Prints the artifact description for --info.
void printInfo(const kiln_artifact_t *artifact) {
  std::printf("artifact: %s (producer '%s')\n", kiln_artifact_path(artifact),
              kiln_artifact_producer(artifact));
  kiln_tensor_info_t info;
  std::printf("inputs: %zu\n", kiln_artifact_input_count(artifact));
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_status_free(kiln_artifact_input_info(artifact, i, &info));
    std::printf("  %s: %s (%llu bytes)\n", info.name, describe(info).c_str(),
                static_cast<unsigned long long>(info.byte_size));
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
    std::printf("  %zu: %s (module %s) grid=(%u,%u,%u) block=(%u,%u,%u) smem=%u args=%zu\n", i,
                launch.function_name, launch.module_name, launch.grid[0], launch.grid[1],
                launch.grid[2], launch.block[0], launch.block[1], launch.block[2],
                launch.shared_mem_bytes, launch.arg_count);
  }
  std::printf("arena_bytes: %llu\n",
              static_cast<unsigned long long>(kiln_artifact_arena_bytes(artifact)));
  std::printf("weights_bytes: %llu\n",
              static_cast<unsigned long long>(kiln_artifact_weights_bytes(artifact)));
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

/// Owns the artifact and session handles for main.
struct Handles {
  kiln_artifact_t *artifact = nullptr;
  kiln_session_t *session = nullptr;
  ~Handles() {
    kiln_session_release(session);
    kiln_artifact_release(artifact);
  }
};

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

/// The whole tool; returns the exit code.
int runTool(int argc, char **argv) {
  Options options;
  if (!parseArgs(argc, argv, options))
    return kExitError;
  bool wantsRun = !options.inputs.empty() || !options.outputs.empty() ||
                  !options.compares.empty() || options.bench > 0 ||
                  options.profile > 0;
  if (!options.info && !wantsRun)
    return usageError("nothing to do: give --info, or --input/--output/--compare/--bench/--profile");

  Handles handles;
  if (kiln_status_t status = kiln_artifact_open(options.model.c_str(), &handles.artifact))
    return statusError(status);
  kiln_artifact_t *artifact = handles.artifact;
  if (options.info)
    printInfo(artifact);
  if (!wantsRun)
    return kExitOk;

  // 1. Read and validate every file before touching the GPU.
  std::map<std::string, kiln::npy::NpyArray> inputs;
  for (const auto &[name, path] : options.inputs) {
    size_t index = 0;
    if (kiln_status_t status = kiln_artifact_find_input(artifact, name.c_str(), &index))
      return statusError(status);
    if (inputs.count(name))
      return usageError("input '" + name + "' given twice");
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_input_info(artifact, index, &info));
    std::string error;
    kiln::npy::NpyArray array;
    if (!kiln::npy::readNpyFile(path, array, error) ||
        !checkArray(array, info, "input", path, /*exactDType=*/true, error))
      return fileError(error);
    inputs[name] = std::move(array);
  }
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_input_info(artifact, i, &info));
    if (!inputs.count(info.name))
      return usageError(std::string("missing --input for '") + info.name + "' (" + describe(info) +
                        ")");
  }
  std::map<std::string, std::string> outputPaths;
  for (const auto &[name, path] : options.outputs) {
    size_t index = 0;
    if (kiln_status_t status = kiln_artifact_find_output(artifact, name.c_str(), &index))
      return statusError(status);
    if (!outputPaths.emplace(name, path).second)
      return usageError("output '" + name + "' is given to --output twice");
    // Fail before the run, not after it: the output file must be writable,
    // or its directory must exist and be writable (nothing is created yet).
    std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
    bool writable = access(path.c_str(), F_OK) == 0 ? access(path.c_str(), W_OK) == 0
                                                      : access(dir.c_str(), W_OK | X_OK) == 0;
    if (!writable)
      return fileError("cannot write '" + path + "': " + std::strerror(errno));
  }
  std::vector<std::pair<std::string, kiln::npy::NpyArray>> references;
  for (const auto &[name, path] : options.compares) {
    size_t index = 0;
    if (kiln_status_t status = kiln_artifact_find_output(artifact, name.c_str(), &index))
      return statusError(status);
    kiln_tensor_info_t info;
    kiln_status_free(kiln_artifact_output_info(artifact, index, &info));
    std::string error;
    kiln::npy::NpyArray array;
    if (!kiln::npy::readNpyFile(path, array, error) ||
        !checkArray(array, info, "reference for output", path, /*exactDType=*/false, error))
      return fileError(error);
    references.emplace_back(name, std::move(array));
  }

  // 2. Session, inputs, one run.
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.device_ordinal = options.device;
  params.poison_arena = 1;
  params.use_cuda_graph = options.cudaGraph ? 1 : 0;
  if (kiln_status_t status = kiln_session_create(artifact, &params, &handles.session))
    return statusError(status);
  kiln_session_t *session = handles.session;
  for (const auto &[name, array] : inputs)
    if (kiln_status_t status =
            kiln_session_set_input(session, name.c_str(), array.data.data(), array.data.size()))
      return statusError(status);
  if (kiln_status_t status = kiln_session_run(session, nullptr))
    return statusError(status);

  // 3. Fetch, write and compare outputs. (The device arena was poisoned at session creation,
  // so an element no kernel wrote reads back as NaN / -1; get_output fills the whole buffer.)
  std::map<std::string, std::vector<uint8_t>> fetched;
  auto fetch = [&](const std::string &name, kiln_tensor_info_t &info,
                   std::vector<uint8_t> *&buffer) -> kiln_status_t {
    size_t index = 0;
    kiln_status_free(kiln_artifact_find_output(artifact, name.c_str(), &index));
    kiln_status_free(kiln_artifact_output_info(artifact, index, &info));
    buffer = &fetched[name];
    if (buffer->size() == info.byte_size)
      return nullptr;
    buffer->assign(static_cast<size_t>(info.byte_size), 0);
    return kiln_session_get_output(session, name.c_str(), buffer->data(), buffer->size());
  };
  for (const auto &[name, path] : outputPaths) {
    kiln_tensor_info_t info;
    std::vector<uint8_t> *buffer = nullptr;
    if (kiln_status_t status = fetch(name, info, buffer))
      return statusError(status);
    std::string error;
    if (!kiln::npy::writeNpyFile(path, info.dtype,
                                 std::vector<int64_t>(info.shape, info.shape + info.rank),
                                 buffer->data(), buffer->size(), error))
      return fileError(error);
  }
  int exitCode = kExitOk;
  for (const auto &[name, reference] : references) {
    kiln_tensor_info_t info;
    std::vector<uint8_t> *buffer = nullptr;
    if (kiln_status_t status = fetch(name, info, buffer))
      return statusError(status);
    Comparison result = compare(info.dtype, buffer->data(), reference.dtype, reference.data.data(),
                                reference.elementCount(), options.rtol, options.atol);
    std::printf("compare %s: max_abs_err=%.6g max_rel_err=%.6g max_abs_ref=%.6g nan=%llu "
                "(rtol=%g atol=%g) %s\n",
                name.c_str(), result.maxAbsErr, result.maxRelErr, result.maxRef,
                static_cast<unsigned long long>(result.nanCount), options.rtol, options.atol,
                result.pass ? "PASS" : "FAIL");
    if (!result.pass)
      exitCode = kExitMismatch;
  }

  // 4. Latency.
  if (options.bench > 0) {
    std::vector<float> ms(static_cast<size_t>(options.bench));
    if (kiln_status_t status = kiln_session_benchmark(session, kBenchWarmup, ms.size(), ms.data()))
      return statusError(status);
    std::sort(ms.begin(), ms.end());
    std::printf("latency_ms p50=%.4f p90=%.4f (%zu iterations, %s)\n", percentile(ms, 0.5),
                percentile(ms, 0.9), ms.size(),
                kiln_session_has_cuda_graph(session) ? "cuda graph" : "kernel launches");
  }

  // 5. Per-kernel device time.
  if (options.profile > 0) {
    size_t launches = kiln_artifact_launch_count(artifact);
    std::vector<float> ms(launches);
    if (kiln_status_t status =
            kiln_session_profile(session, static_cast<size_t>(options.profile), ms.data()))
      return statusError(status);
    double total = 0;
    for (float v : ms)
      total += v;
    std::printf("profile (median of %ld runs, plain launches, event-bracketed):\n", options.profile);
    std::printf("  %4s  %-12s %-14s %-12s %9s %6s\n", "#", "function", "grid", "block", "us", "%");
    for (size_t i = 0; i < launches; ++i) {
      kiln_launch_info_t info;
      if (kiln_status_t status = kiln_artifact_launch_info(artifact, i, &info))
        return statusError(status);
      char grid[48], block[48];
      std::snprintf(grid, sizeof(grid), "%ux%ux%u", info.grid[0], info.grid[1], info.grid[2]);
      std::snprintf(block, sizeof(block), "%ux%ux%u", info.block[0], info.block[1], info.block[2]);
      std::printf("  %4zu  %-12s %-14s %-12s %9.2f %6.1f\n", i, info.function_name, grid, block,
                  ms[i] * 1e3, total > 0 ? 100.0 * ms[i] / total : 0.0);
    }
    std::printf("  total %.2f us over %zu launches\n", total * 1e3, launches);
  }
  return exitCode;
}

} // namespace

int main(int argc, char **argv) { return runTool(argc, argv); }
