//===- Session.h - Internal checks of the session API -----------*- C++ -*-===//
//
// Declarations from Session.cpp that need no device: the argument checks of
// kiln_session_bind_input / kiln_session_bind_output, which run before any driver call, the
// analysis that decides whether a bound output is written by the kernels directly or copied, and
// the tensor-map checks (a driver that can encode them; bound addresses they can use). Exposed so
// that the runtime's unit tests check them on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_SESSION_H
#define KILN_RUNTIME_SRC_SESSION_H

#include "Artifact.h"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

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

/// One kernel argument that lies inside an output's arena range: argument `arg` of launch
/// `launch`, starting `offset` bytes after the output's first byte.
struct ArgRedirect {
  size_t launch = 0;
  size_t arg = 0;
  uint64_t offset = 0;
};

/// Decides whether a caller's buffer bound to output `output` of `artifact` can stand in for the
/// output's arena range R during the whole run, so that the kernels write the output there
/// directly: R must be in the arena and non-empty, no other output and no collective may touch any
/// byte of R, and every kernel argument touching R must lie entirely inside it (arguments are
/// whole tensors; those inside R, the output's own and those of tensors that used R at other
/// times, are then moved into the caller's buffer together, so every access to a byte of R goes
/// to the same byte of the buffer). On success returns true and fills `redirects` with those
/// arguments; otherwise returns false with `redirects` empty, and a bound output is copied into
/// the caller's buffer after each run instead. Makes no driver call.
bool planOutputRedirect(const kiln_artifact &artifact, size_t output,
                        std::vector<ArgRedirect> &redirects);

/// Alignment TMA needs of the global address a tensor map encodes (cuTensorMapEncodeTiled). The
/// session's own buffers (kBindingAlignment) meet it together with the verified offsets, so only
/// addresses that binding computes can miss it.
constexpr uint64_t kTensorMapAddressAlignment = 16;
static_assert(kBindingAlignment % kTensorMapAddressAlignment == 0,
              "bound buffers must keep every verified tensor map address aligned");

/// Checks that a session can encode the tensor maps of `artifact`: when `haveEncoder` is false (the
/// driver lacks cuTensorMapEncodeTiled, i.e. is older than CUDA 12.0) and some launch has tensor
/// maps, KILN_UNAVAILABLE naming the file and that launch. NULL for artifacts without tensor maps,
/// whatever the driver. Makes no driver call.
kiln_status_t checkTensorMapEncoder(const kiln_artifact &artifact, bool haveEncoder);

/// Checks that binding `devicePtr` to input (`isInput`) or output `index` leaves every tensor map
/// that would address it with a 16-byte aligned address: for an input, maps whose argument reads
/// the input (address devicePtr + argument offset + map offset); for an output, maps whose
/// argument is one of `redirects` (planOutputRedirect; address devicePtr + redirect offset + map
/// offset). Otherwise KILN_INVALID_ARGUMENT "<function>: <input|output> '<name>': ..." naming the
/// launch, the map and the address. Run after checkBinding has accepted `devicePtr`. Makes no
/// driver call.
kiln_status_t checkTensorMapBinding(const kiln_artifact &artifact, bool isInput, size_t index,
                                    uint64_t devicePtr, const std::vector<ArgRedirect> &redirects,
                                    const char *function);

class CudaSymbols;

/// The driver symbols and the CUDA context of `session` (non-null), for runtime code that enqueues
/// its own device work beside the session's runs (the generator's decode loop, Generate.cpp): its
/// stream, events, page-locked staging and device-to-device copies. The symbols live as long as
/// the session.
const CudaSymbols &sessionSymbols(const kiln_session_t &session);
CUcontext sessionContext(const kiln_session_t &session);
/// Before the caller destroys `stream`: when it carried the session's last run or asynchronous
/// transfer, waits for it and makes the session's own stream the last one again (the session
/// waits for its last stream before later work and when it is released).
void forgetStream(kiln_session_t &session, CUstream stream);

} // namespace kiln

#endif // KILN_RUNTIME_SRC_SESSION_H
