//===- Session.h - Internal checks of the session API -----------*- C++ -*-===//
//
// Declarations from Session.cpp that need no device: the argument checks of
// kiln_session_bind_input / kiln_session_bind_output, which run before any driver call. Exposed
// so that the runtime's unit tests check every binding error on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_SESSION_H
#define KILN_RUNTIME_SRC_SESSION_H

#include "Artifact.h"

#include <cstddef>
#include <cstdint>

namespace kiln {

/// Alignment in bytes that a caller's device buffer must have to be bound to an input or output:
/// the alignment of every buffer kiln allocates itself (cuMemAlloc, arena offsets), which the
/// generated kernels may assume (16-byte cp.async and vector accesses).
constexpr uint64_t kBindingAlignment = 256;

/// Checks the arguments of `function` (kiln_session_bind_input when `isInput`, else
/// kiln_session_bind_output) against `artifact` and sets `index` to the input's or output's
/// number. Errors, naming the function and the tensor: `name` NULL (KILN_INVALID_ARGUMENT), no
/// such input/output (KILN_NOT_FOUND, listing the names), `bytes` different from the tensor's
/// byte size, `devicePtr` 0 or not a multiple of kBindingAlignment (KILN_INVALID_ARGUMENT).
/// Makes no driver call.
kiln_status_t checkBinding(const kiln_artifact &artifact, bool isInput, const char *name,
                           uint64_t devicePtr, size_t bytes, const char *function, size_t &index);

} // namespace kiln

#endif // KILN_RUNTIME_SRC_SESSION_H
