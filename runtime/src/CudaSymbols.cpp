//===- CudaSymbols.cpp - dlopen of the CUDA driver ------------------------===//
//
// Loads libcuda.so.1 with dlopen and resolves the symbols of CudaSymbols.def (required ones must
// exist, optional ones may be missing), and formats driver errors into statuses.
//
//===----------------------------------------------------------------------===//

#include "CudaSymbols.h"

#include "Status.h"
#include <dlfcn.h>

#include <cstring>
#include <new>

/// Stringizes after macro expansion, so cuda.h's "#define cuMemAlloc cuMemAlloc_v2" yields the
/// versioned symbol name.
#define KILN_STRINGIZE_IMPL(x) #x
#define KILN_STRINGIZE(x) KILN_STRINGIZE_IMPL(x)

namespace kiln {

kiln_status_t CudaSymbols::load(const char *library, std::unique_ptr<CudaSymbols> &out) {
  out.reset();
  void *handle = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *error = ::dlerror();
    return makeStatusF(KILN_UNAVAILABLE,
                       "CUDA driver not found (%s): %s; kiln needs an NVIDIA GPU with its driver "
                       "installed",
                       library, error ? error : "unknown dlopen error");
  }
  std::unique_ptr<CudaSymbols> symbols(new (std::nothrow) CudaSymbols());
  if (!symbols) {
    ::dlclose(handle);
    return makeStatus(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  }
  symbols->handle = handle;
#define KILN_CU_SYMBOL(name)                                                                       \
  symbols->name =                                                                                  \
      reinterpret_cast<decltype(symbols->name)>(::dlsym(handle, KILN_STRINGIZE(name)));            \
  if (!symbols->name)                                                                              \
    return makeStatusF(                                                                            \
        KILN_UNAVAILABLE,                                                                          \
        "CUDA driver (%s) lacks symbol %s; the driver is older than the CUDA %d.%d "               \
        "API kiln was built against",                                                              \
        library, KILN_STRINGIZE(name), CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
#define KILN_CU_OPTIONAL_SYMBOL(name)                                                              \
  symbols->name = reinterpret_cast<decltype(symbols->name)>(::dlsym(handle, KILN_STRINGIZE(name)));
#include "CudaSymbols.def"
#undef KILN_CU_OPTIONAL_SYMBOL
#undef KILN_CU_SYMBOL
  out = std::move(symbols);
  return nullptr;
}

CudaSymbols::~CudaSymbols() {
  if (handle)
    ::dlclose(handle);
}

kiln_status_t CudaSymbols::makeError(CUresult result, const char *call, const char *file, int line,
                                     const std::string &detail) const {
  const char *name = nullptr;
  const char *description = nullptr;
  if (!cuGetErrorName || cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "CUDA_ERROR_UNKNOWN";
  if (!cuGetErrorString || cuGetErrorString(result, &description) != CUDA_SUCCESS || !description)
    description = "unrecognized error code";
  kiln_status_code_t code = KILN_CUDA_ERROR;
  switch (result) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    code = KILN_RESOURCE_EXHAUSTED;
    break;
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_STUB_LIBRARY:
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    code = KILN_UNAVAILABLE;
    break;
  default:
    break;
  }
  std::string message = formatString("%s:%d: %s failed: %s (%s) [error %d]", shortSourcePath(file),
                                     line, call, name, description, static_cast<int>(result));
  if (!detail.empty())
    message += "\n" + detail;
  return makeStatus(code, std::move(message));
}

const char *shortSourcePath(const char *file) {
  const char *found = std::strstr(file, "runtime/");
  return found ? found : file;
}

} // namespace kiln
