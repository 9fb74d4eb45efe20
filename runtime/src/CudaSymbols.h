//===- CudaSymbols.h - CUDA driver API loaded at run time -------*- C++ -*-===//
//
// A symbol table object that dlopen()s the CUDA driver and resolves the functions listed in
// CudaSymbols.def. The runtime never links against libcuda, so programs using it start on
// machines without a GPU; a missing driver becomes a KILN_UNAVAILABLE status. Also defines the
// KILN_CU_RETURN_IF_ERROR macro that turns a failed driver call into a status carrying the call,
// file, line and the driver's error name and description.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDASYMBOLS_H
#define KILN_RUNTIME_SRC_CUDASYMBOLS_H

#include "kiln/runtime.h"

#include <cuda.h>

#include <memory>
#include <string>

namespace kiln {

/// The default driver library name.
constexpr const char *kCudaDriverLibrary = "libcuda.so.1";

/// Function pointers into the CUDA driver. Owns the dlopen handle; closing it on destruction.
class CudaSymbols {
public:
  /// Loads `library` (normally kCudaDriverLibrary) and resolves every symbol. Fails with
  /// KILN_UNAVAILABLE "CUDA driver not found (<library>): <dlerror>" when the library cannot be
  /// loaded, or naming the first missing required symbol (driver too old); a missing optional
  /// symbol (KILN_CU_OPTIONAL_SYMBOL) stays null.
  static kiln_status_t load(const char *library, std::unique_ptr<CudaSymbols> &out);

  ~CudaSymbols();
  CudaSymbols(const CudaSymbols &) = delete;
  CudaSymbols &operator=(const CudaSymbols &) = delete;

#define KILN_CU_SYMBOL(name) decltype(&::name) name = nullptr;
#define KILN_CU_OPTIONAL_SYMBOL(name) KILN_CU_SYMBOL(name)
#include "CudaSymbols.def"
#undef KILN_CU_OPTIONAL_SYMBOL
#undef KILN_CU_SYMBOL

  /// Builds the status for a failed call: "<file>:<line>: <call> failed: <NAME> (<string>)" plus
  /// `detail` on a new line when non-empty. Maps out-of-memory to KILN_RESOURCE_EXHAUSTED, missing
  /// device/driver errors to KILN_UNAVAILABLE and everything else to KILN_CUDA_ERROR.
  kiln_status_t makeError(CUresult result, const char *call, const char *file, int line,
                          const std::string &detail = std::string()) const;

private:
  CudaSymbols() = default;
  void *handle = nullptr;
};

/// Returns the path of `file` from the repository's runtime/ directory on, for shorter messages.
const char *shortSourcePath(const char *file);

/// Makes a context current for the lifetime of the object (push on entry, pop on exit).
class ContextScope {
public:
  ContextScope(const CudaSymbols &cu, CUcontext context) : cu(cu) {
    pushed = context && cu.cuCtxPushCurrent(context) == CUDA_SUCCESS;
  }
  ~ContextScope() {
    CUcontext popped;
    if (pushed)
      cu.cuCtxPopCurrent(&popped);
  }
  /// True if the context was made current.
  bool ok() const { return pushed; }

private:
  const CudaSymbols &cu;
  bool pushed = false;
};

} // namespace kiln

/// Calls `symbols.call` (e.g. `cuInit(0)`) and returns a status from the enclosing function if the
/// driver reports an error. The message quotes the call as written.
#define KILN_CU_RETURN_IF_ERROR(symbols, call)                                                     \
  do {                                                                                             \
    CUresult kilnResult_ = (symbols).call;                                                         \
    if (kilnResult_ != CUDA_SUCCESS)                                                               \
      return (symbols).makeError(kilnResult_, #call, __FILE__, __LINE__);                          \
  } while (0)

#endif // KILN_RUNTIME_SRC_CUDASYMBOLS_H
