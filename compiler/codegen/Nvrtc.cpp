//===- Nvrtc.cpp - NVRTC wrapper ------------------------------------------===//
//
// Each module is compiled once to PTX (compute_<min target>) and once per
// target to a cubin (sm_<target>); compilation of different modules runs on
// an LLVM thread pool. NVRTC is thread safe per program.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Nvrtc.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <nvrtc.h>

#include <mutex>

using namespace kiln::codegen;

namespace {
#include "compiler/codegen/CudaHeaders.inc"

/// Compiles one source with `options`; on success returns PTX or cubin.
llvm::Expected<std::string> compileOnce(const std::string &name, const std::string &source,
                                        const std::vector<std::string> &options, bool wantCubin) {
  std::vector<const char *> headerTexts, headerNames;
  for (auto &[inc, text] : kEmbeddedHeaders) {
    headerNames.push_back(inc);
    headerTexts.push_back(text);
  }
  nvrtcProgram prog;
  nvrtcResult rc = nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(),
                                      (int)headerTexts.size(), headerTexts.data(),
                                      headerNames.data());
  if (rc != NVRTC_SUCCESS)
    return llvm::createStringError("NVRTC could not create program for module '%s': %s",
                                   name.c_str(), nvrtcGetErrorString(rc));
  std::vector<const char *> opts;
  for (auto &o : options)
    opts.push_back(o.c_str());
  rc = nvrtcCompileProgram(prog, (int)opts.size(), opts.data());
  if (rc != NVRTC_SUCCESS) {
    size_t logSize = 0;
    nvrtcGetProgramLogSize(prog, &logSize);
    std::string log(logSize, '\0');
    nvrtcGetProgramLog(prog, log.data());
    nvrtcDestroyProgram(&prog);
    return llvm::createStringError("NVRTC failed to compile module '%s' (%s):\n%s",
                                   name.c_str(), nvrtcGetErrorString(rc), log.c_str());
  }
  std::string out;
  size_t size = 0;
  if (wantCubin) {
    nvrtcGetCUBINSize(prog, &size);
    out.resize(size);
    rc = nvrtcGetCUBIN(prog, out.data());
  } else {
    nvrtcGetPTXSize(prog, &size);
    out.resize(size);
    rc = nvrtcGetPTX(prog, out.data());
    if (!out.empty() && out.back() == '\0')
      out.pop_back();
  }
  nvrtcDestroyProgram(&prog);
  if (rc != NVRTC_SUCCESS)
    return llvm::createStringError("NVRTC could not return code of module '%s': %s",
                                   name.c_str(), nvrtcGetErrorString(rc));
  return out;
}

std::vector<std::string> baseOptions() {
  // No fast math: kiln's numerics contract is IEEE fp32 per op.
  return {"-std=c++17", "--fmad=true", "-default-device"};
}
} // namespace

llvm::ArrayRef<std::pair<const char *, const char *>> kiln::codegen::embeddedCudaHeaders() {
  return kEmbeddedHeaders;
}

llvm::Expected<unsigned> kiln::codegen::parseTarget(llvm::StringRef target) {
  llvm::StringRef digits = target;
  digits.consume_front("sm_");
  unsigned arch;
  if (digits.getAsInteger(10, arch) || arch < 70 || arch > 200)
    return llvm::createStringError("invalid --target '%s': expected sm_<NN> with NN >= 70, "
                                   "e.g. sm_90",
                                   target.str().c_str());
  return arch;
}

llvm::Expected<std::vector<CompiledModule>>
kiln::codegen::compileModules(llvm::ArrayRef<std::string> names,
                              llvm::ArrayRef<std::string> sources,
                              llvm::ArrayRef<unsigned> targets, unsigned threads) {
  assert(!targets.empty() && "no targets");
  assert(names.size() == sources.size() && "one name per source");
  unsigned minArch = *std::min_element(targets.begin(), targets.end());
  std::vector<CompiledModule> modules(sources.size());
  std::mutex errorMutex;
  llvm::Error firstError = llvm::Error::success();
  auto record = [&](llvm::Error e) {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (!firstError)
      firstError = std::move(e);
    else
      llvm::consumeError(std::move(e));
  };
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(std::max(1u, threads)));
    for (size_t m = 0; m < sources.size(); ++m) {
      pool.async([&, m] {
        auto opts = baseOptions();
        opts.push_back("--gpu-architecture=compute_" + std::to_string(minArch));
        auto ptx = compileOnce(names[m], sources[m], opts, false);
        if (!ptx)
          return record(ptx.takeError());
        modules[m].ptx = std::move(*ptx);
        for (unsigned arch : targets) {
          auto o = baseOptions();
          o.push_back("--gpu-architecture=sm_" + std::to_string(arch));
          auto cubin = compileOnce(names[m], sources[m], o, true);
          if (!cubin)
            return record(cubin.takeError());
          modules[m].cubins.push_back({arch, std::move(*cubin)});
        }
      });
    }
    pool.wait();
  }
  if (firstError)
    return std::move(firstError);
  return modules;
}
