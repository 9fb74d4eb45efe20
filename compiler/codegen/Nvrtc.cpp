//===- Nvrtc.cpp - NVRTC wrapper ------------------------------------------===//
//
// Each module is compiled once per target to a cubin (sm_<target>); the
// compilation for the lowest target also yields the module's PTX, which the
// driver can JIT on newer GPUs. Modules compile in parallel on threads with a
// large stack; NVRTC is thread safe per program.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Nvrtc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/thread.h"

#include <nvrtc.h>

#include <atomic>
#include <mutex>
#include <optional>

using namespace kiln::codegen;

namespace {
#include "compiler/codegen/CudaHeaders.inc"

/// Stack of each NVRTC compile thread: 512 MiB.
constexpr unsigned kNvrtcStackBytes = 512u << 20;

/// Compiles one source with `options` for a real architecture and returns
/// its cubin and, if `wantPtx`, the PTX of the same compilation (NVRTC keeps
/// both when the target is sm_XX, so the front end runs once).
llvm::Error compileOnce(const std::string &name, const std::string &source,
                        const std::vector<std::string> &options, std::string &cubin,
                        std::string *ptx) {
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
  size_t size = 0;
  rc = nvrtcGetCUBINSize(prog, &size);
  if (rc == NVRTC_SUCCESS) {
    cubin.resize(size);
    rc = nvrtcGetCUBIN(prog, cubin.data());
  }
  if (rc == NVRTC_SUCCESS && ptx) {
    rc = nvrtcGetPTXSize(prog, &size);
    if (rc == NVRTC_SUCCESS) {
      ptx->resize(size);
      rc = nvrtcGetPTX(prog, ptx->data());
      if (!ptx->empty() && ptx->back() == '\0')
        ptx->pop_back();
    }
  }
  nvrtcDestroyProgram(&prog);
  if (rc != NVRTC_SUCCESS || cubin.empty() || (ptx && ptx->empty()))
    return llvm::createStringError("NVRTC returned no code for module '%s': %s", name.c_str(),
                                   nvrtcGetErrorString(rc));
  return llvm::Error::success();
}

std::vector<std::string> baseOptions() {
  // No fast math: kiln's numerics contract is IEEE fp32 per op.
  // Warning 177 (unused variable): generated index code may compute a
  // coordinate that a broadcast read then ignores.
  return {"-std=c++17", "--fmad=true", "-default-device", "-diag-suppress=177"};
}
} // namespace

llvm::ArrayRef<std::pair<const char *, const char *>> kiln::codegen::embeddedCudaHeaders() {
  return kEmbeddedHeaders;
}

llvm::Expected<unsigned> kiln::codegen::parseTarget(llvm::StringRef target) {
  // The architectures this NVRTC can generate code for (CUDA 13: sm_75 and up).
  int count = 0;
  std::vector<int> supported;
  if (nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    supported.resize(count);
    if (nvrtcGetSupportedArchs(supported.data()) != NVRTC_SUCCESS)
      supported.clear();
  }
  std::string list;
  for (int a : supported)
    list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
  llvm::StringRef digits = target;
  digits.consume_front("sm_");
  if (digits == "90a") // what sm_90 builds as (wgmma)
    digits = "90";
  unsigned arch;
  if (digits.getAsInteger(10, arch) ||
      (!supported.empty() && !llvm::is_contained(supported, int(arch))))
    return llvm::createStringError("invalid --target '%s': expected one of %s", target.str().c_str(),
                                   list.empty() ? "sm_<NN>" : list.c_str());
  return arch;
}

llvm::Expected<std::vector<CompiledModule>>
kiln::codegen::compileModules(llvm::ArrayRef<std::string> names,
                              llvm::ArrayRef<std::string> sources,
                              llvm::ArrayRef<unsigned> targets, unsigned threads,
                              const std::function<void(size_t, size_t)> &onProgress) {
  assert(!targets.empty() && "no targets");
  assert(names.size() == sources.size() && "one name per source");
  std::vector<unsigned> sortedTargets(targets.begin(), targets.end());
  llvm::sort(sortedTargets);
  sortedTargets.erase(std::unique(sortedTargets.begin(), sortedTargets.end()), sortedTargets.end());
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
  size_t compilesDone = 0, compilesTotal = sources.size() * sortedTargets.size();
  auto compileModule = [&](size_t m) {
    for (unsigned arch : sortedTargets) {
      auto opts = baseOptions();
      // sm_90 builds as sm_90a: Hopper's wgmma and setmaxnreg exist only
      // there; its SASS runs on every compute capability 9.0 GPU.
      opts.push_back("--gpu-architecture=sm_" + std::to_string(arch) + (arch == 90 ? "a" : ""));
      CubinImage image{arch, {}};
      std::string *ptx = arch == sortedTargets.front() ? &modules[m].ptx : nullptr;
      if (auto e = compileOnce(names[m], sources[m], opts, image.image, ptx))
        return record(std::move(e));
      modules[m].cubins.push_back(std::move(image));
      if (onProgress) {
        std::lock_guard<std::mutex> lock(errorMutex);
        onProgress(++compilesDone, compilesTotal);
      }
    }
  };
  // NVRTC's front end recurses over the source's nesting; a deep statement
  // overflowed the default 8 MiB stack (a silent SIGSEGV of kiln-compile).
  // Its workers get kNvrtcStackBytes instead (address space only, until
  // touched). Codegen bounds the nesting too; this is the margin.
  size_t workers = std::min<size_t>(
      sources.size(), llvm::hardware_concurrency(std::max(1u, threads)).compute_thread_count());
  std::atomic<size_t> nextModule{0};
  std::vector<llvm::thread> pool;
  for (size_t w = 0; w < workers; ++w)
    pool.emplace_back(std::optional<unsigned>(kNvrtcStackBytes), [&] {
      for (size_t m = nextModule++; m < sources.size(); m = nextModule++)
        compileModule(m);
    });
  for (llvm::thread &t : pool)
    t.join();
  if (firstError)
    return std::move(firstError);
  return modules;
}
