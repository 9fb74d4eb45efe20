//===- Status.h - Construction of kiln_status_t values ----------*- C++ -*-===//
//
// Internal helpers that create the opaque kiln_status objects of the C API. Runtime code builds a
// status with makeStatus(code, printf-style message) and returns it; NULL is success. The
// KILN_RETURN_IF_ERROR macro propagates a failed status from a nested call.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_STATUS_H
#define KILN_RUNTIME_SRC_STATUS_H

#include "kiln/runtime.h"

#include <string>

namespace kiln {

/// Creates a status with `code` (must not be KILN_OK) and `message`. Never returns NULL: if the
/// allocation fails, a static out-of-memory status (ignored by kiln_status_free) is returned.
kiln_status_t makeStatus(kiln_status_code_t code, std::string message);

/// Creates a status with `code` and a printf-style formatted message.
kiln_status_t makeStatusF(kiln_status_code_t code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/// Returns `status` with `prefix` prepended to its message (the code is kept). NULL stays NULL.
kiln_status_t annotateStatus(kiln_status_t status, const std::string &prefix);

/// printf into a std::string.
std::string formatString(const char *format, ...) __attribute__((format(printf, 1, 2)));

} // namespace kiln

/// Evaluates `expr` (a kiln_status_t) and returns it from the enclosing function if it failed.
#define KILN_RETURN_IF_ERROR(expr)                                                                 \
  do {                                                                                             \
    kiln_status_t kilnStatus_ = (expr);                                                            \
    if (kilnStatus_)                                                                               \
      return kilnStatus_;                                                                          \
  } while (0)

#endif // KILN_RUNTIME_SRC_STATUS_H
