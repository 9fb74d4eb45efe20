//===- NcclSymbols.cpp - dlopen of NCCL -----------------------------------===//
//
// Loads libnccl.so.2 with dlopen, resolves the symbols of NcclSymbols.def, and formats NCCL
// errors into statuses. The library is opened with RTLD_NODELETE: NCCL starts threads that can
// outlive the symbol table that loaded it (ncclGetUniqueId's bootstrap root listens until the
// group has formed, long after kiln_tp_id_create returned), so dlclose must never unmap it.
//
//===----------------------------------------------------------------------===//

#include "NcclSymbols.h"

#include "CudaSymbols.h"
#include "Status.h"
#include <dlfcn.h>

#include <new>

namespace kiln {

kiln_status_t NcclSymbols::load(const char *library, std::unique_ptr<NcclSymbols> &out) {
  out.reset();
  void *handle = ::dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char *error = ::dlerror();
    return makeStatusF(KILN_UNAVAILABLE,
                       "NCCL not found (%s): %s; tensor-parallel sessions need NCCL 2 (install "
                       "libnccl2 or put its directory on LD_LIBRARY_PATH)",
                       library, error ? error : "unknown dlopen error");
  }
  std::unique_ptr<NcclSymbols> symbols(new (std::nothrow) NcclSymbols());
  if (!symbols) {
    ::dlclose(handle);
    return makeStatus(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  }
  symbols->handle = handle;
#define KILN_NCCL_SYMBOL(name)                                                                     \
  symbols->name = reinterpret_cast<decltype(symbols->name)>(::dlsym(handle, #name));               \
  if (!symbols->name)                                                                              \
    return makeStatusF(KILN_UNAVAILABLE,                                                           \
                       "NCCL (%s) lacks symbol %s; it is older than the NCCL %d.%d API kiln was "  \
                       "built against",                                                            \
                       library, #name, NCCL_MAJOR, NCCL_MINOR);
#include "NcclSymbols.def"
#undef KILN_NCCL_SYMBOL
  out = std::move(symbols);
  return nullptr;
}

NcclSymbols::~NcclSymbols() {
  if (handle)
    ::dlclose(handle);
}

int NcclSymbols::version() const {
  int v = 0;
  if (!ncclGetVersion || ncclGetVersion(&v) != ncclSuccess)
    return 0;
  return v;
}

kiln_status_t NcclSymbols::makeError(ncclResult_t result, const char *call, const char *file,
                                     int line, const std::string &detail) const {
  const char *text = ncclGetErrorString ? ncclGetErrorString(result) : nullptr;
  const char *last = ncclGetLastError ? ncclGetLastError(nullptr) : nullptr;
  kiln_status_code_t code = KILN_INTERNAL;
  switch (result) {
  case ncclInvalidArgument:
  case ncclInvalidUsage:
    code = KILN_INVALID_ARGUMENT;
    break;
  case ncclSystemError:
  case ncclRemoteError:
    code = KILN_UNAVAILABLE;
    break;
  default:
    break;
  }
  std::string message =
      formatString("%s:%d: %s failed: %s [ncclResult %d]", shortSourcePath(file), line, call,
                   text ? text : "unrecognized NCCL error", static_cast<int>(result));
  if (last && *last)
    message += std::string("\n") + last;
  if (!detail.empty())
    message += "\n" + detail;
  return makeStatus(code, std::move(message));
}

} // namespace kiln
