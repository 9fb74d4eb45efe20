//===- NcclSymbols.h - NCCL loaded at run time ------------------*- C++ -*-===//
//
// A symbol table object that dlopen()s NCCL and resolves the functions listed in
// NcclSymbols.def, like CudaSymbols does for the driver: the runtime never links against
// libnccl, so single-GPU programs need no NCCL, and a missing or too old NCCL becomes a
// KILN_UNAVAILABLE status when a tensor-parallel session asks for it. Also defines
// KILN_NCCL_RETURN_IF_ERROR, which turns a failed NCCL call into a status carrying the call,
// file, line, NCCL's error string and its last-error detail.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_NCCLSYMBOLS_H
#define KILN_RUNTIME_SRC_NCCLSYMBOLS_H

#include "kiln/runtime.h"

#include <nccl.h>

#include <memory>
#include <string>

namespace kiln {

/// The default NCCL library name.
constexpr const char *kNcclLibrary = "libnccl.so.2";

/// Function pointers into NCCL. Owns the dlopen handle; closes it on destruction (the library
/// itself stays mapped: it is opened with RTLD_NODELETE because NCCL threads may outlive this
/// object).
class NcclSymbols {
public:
  /// Loads `library` (normally kNcclLibrary) and resolves every symbol. Fails with
  /// KILN_UNAVAILABLE "NCCL not found (<library>): <dlerror>" when the library cannot be loaded,
  /// or naming the first missing symbol (an NCCL older than the API kiln was built against).
  static kiln_status_t load(const char *library, std::unique_ptr<NcclSymbols> &out);

  ~NcclSymbols();
  NcclSymbols(const NcclSymbols &) = delete;
  NcclSymbols &operator=(const NcclSymbols &) = delete;

#define KILN_NCCL_SYMBOL(name) decltype(&::name) name = nullptr;
#include "NcclSymbols.def"
#undef KILN_NCCL_SYMBOL

  /// The loaded library's version as NCCL encodes it (major * 10000 + minor * 100 + patch for
  /// 2.9 and later), or 0 when ncclGetVersion fails.
  int version() const;

  /// Builds the status for a failed call: "<file>:<line>: <call> failed: <string> [ncclResult
  /// <n>]" plus NCCL's last-error detail and `detail` on new lines when non-empty. Invalid
  /// arguments or usage map to KILN_INVALID_ARGUMENT, system and remote errors (a peer that
  /// vanished, a network failure) to KILN_UNAVAILABLE, everything else to KILN_INTERNAL.
  kiln_status_t makeError(ncclResult_t result, const char *call, const char *file, int line,
                          const std::string &detail = std::string()) const;

private:
  NcclSymbols() = default;
  void *handle = nullptr;
};

} // namespace kiln

/// Calls `symbols.call` (e.g. `ncclGroupEnd()`) and returns a status from the enclosing function
/// if NCCL reports an error. The message quotes the call as written.
#define KILN_NCCL_RETURN_IF_ERROR(symbols, call)                                                   \
  do {                                                                                             \
    ncclResult_t kilnNcclResult_ = (symbols).call;                                                 \
    if (kilnNcclResult_ != ncclSuccess)                                                            \
      return (symbols).makeError(kilnNcclResult_, #call, __FILE__, __LINE__);                      \
  } while (0)

#endif // KILN_RUNTIME_SRC_NCCLSYMBOLS_H
