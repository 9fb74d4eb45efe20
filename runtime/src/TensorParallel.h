//===- TensorParallel.h - NCCL communicator of a tensor-parallel session -*- C++ -*-===//
//
// What a session of a tensor-parallel rank artifact needs beyond a single-GPU session: a
// communicator joining the other ranks of its group (NCCL, loaded with dlopen through
// NcclSymbols), the all-reduce it enqueues between kernel launches, and a Deadline so that no
// wait on the other ranks blocks for longer than the session's tp_timeout_ms.
//
// The communicator is non-blocking (ncclConfig_t::blocking = 0): NCCL calls return at once, maybe
// with ncclInProgress, and the caller polls ncclCommGetAsyncError until the call has finished or
// the deadline passes; then ncclCommAbort tears the communicator down (and makes any NCCL kernel
// still waiting for a peer exit), so a rank whose peers never come back gets a status instead of
// hanging. Cost: since NCCL 2.23 every collective of a non-blocking communicator returns
// ncclInProgress and is launched by an NCCL helper thread (src/group.cc, groupLaunchNonBlocking),
// which the enqueue waits for, so each all-reduce enqueued with plain launches costs host time
// (a thread start); inside a CUDA graph it is paid once, at capture. A runtime configured without
// nccl.h (KILN_HAVE_NCCL=0) has no communicator: createCommunicator returns KILN_UNAVAILABLE.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_TENSORPARALLEL_H
#define KILN_RUNTIME_SRC_TENSORPARALLEL_H

#include "kiln/runtime.h"

#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace kiln {

/// A time limit for one wait, in milliseconds from construction (0 = no limit), and the pause
/// between two polls of that wait.
class Deadline {
public:
  /// Starts the clock; `timeoutMs` 0 never expires.
  explicit Deadline(uint32_t timeoutMs);
  /// True once `timeoutMs` milliseconds have passed since construction (never for 0).
  bool expired() const;
  /// Milliseconds since construction.
  uint64_t elapsedMs() const;
  /// The limit given to the constructor.
  uint32_t timeoutMs() const { return limitMs; }
  /// Waits before the next poll: the first kSpinPolls polls only yield the CPU (a collective
  /// enqueued by NCCL's helper thread is usually done within tens of microseconds), then 50 us
  /// sleeps for about 5 ms (short runs finish with little added latency), then 200 us (a long
  /// wait costs little CPU).
  void pause();

  /// Polls that only yield before pause() starts sleeping.
  static constexpr unsigned kSpinPolls = 2000;

private:
  std::chrono::steady_clock::time_point start;
  uint32_t limitMs;
  unsigned polls = 0;
};

/// Where a tensor-parallel session sits in its group, for NCCL and for messages.
struct TpRankInfo {
  /// The rank artifact's path.
  std::string path;
  /// kiln_artifact_tp_rank and kiln_artifact_tp_world_size of the artifact.
  uint32_t rank = 0;
  uint32_t worldSize = 1;
  /// CUDA device ordinal of the session.
  int device = 0;
  /// kiln_session_params_t::tp_timeout_ms (0 = no limit).
  uint32_t timeoutMs = 0;

  /// "'m.rank1.kiln': rank 1 of 2 (device 1)", the prefix of every tensor-parallel message.
  std::string describe() const;
};

/// The NCCL communicator of one tensor-parallel session (one rank of a group). Created
/// unconnected by createCommunicator (which loads NCCL), joined to the group by connect(). All
/// calls that touch the device need the session's CUDA context current. Failures become
/// statuses that start with TpRankInfo::describe().
///
/// Aborting: NCCL's ncclCommAbort / ncclCommDestroy wait until every CUDA graph that captured
/// the communicator's collectives has been destroyed (cuGraphExecDestroy of a graph still running
/// frees it when it finishes, which an abort makes happen). So only the owner, who knows its
/// graphs, aborts: allReduceSum and asyncError never abort, they report; connect (no graph exists
/// yet) and destroy (graphs already gone) abort on their own failures.
class Communicator {
public:
  virtual ~Communicator() = default;

  /// Joins the group `id` as TpRankInfo::rank of worldSize (ncclCommInitRankConfig, non-blocking)
  /// and waits until every rank has joined. Past the timeout: ncclCommAbort and
  /// KILN_DEADLINE_EXCEEDED naming rank, world size and timeout (a peer rank did not join).
  /// NCCL errors: the status of NcclSymbols::makeError.
  virtual kiln_status_t connect(const kiln_tp_id_t &id) = 0;

  /// Enqueues an all-reduce (sum over all ranks) of `count` elements of `dtype` (f32, f16 or
  /// bf16; the caller has verified it) from device address `input` to `output` (equal for in
  /// place) on `stream`, as one of the group's collectives in schedule order. Works inside a CUDA
  /// stream capture. An ncclInProgress return is polled to completion within the timeout
  /// (KILN_DEADLINE_EXCEEDED after it). On any failure the group is out of step: the caller must
  /// abort (after destroying its graphs). `what` names the collective in messages
  /// ("collective 3 (all_reduce_sum, before launch 5)").
  virtual kiln_status_t allReduceSum(kiln_dtype_t dtype, uint64_t count, CUdeviceptr input,
                                     CUdeviceptr output, CUstream stream,
                                     const std::string &what) = 0;

  /// Returns NULL while the communicator is healthy (or still finishing a non-blocking call),
  /// else a status for NCCL's asynchronous error (a peer that vanished, a network failure; see
  /// NcclSymbols::makeError for the codes). Also NULL before connect().
  virtual kiln_status_t asyncError() = 0;

  /// Aborts the communicator (ncclCommAbort: NCCL kernels still running exit, resources are
  /// freed). Every graph that captured its collectives must have been destroyed (see above).
  /// Idempotent; nothing to do before connect().
  virtual void abort() = 0;

  /// True after abort() (explicit, or on a timeout or error inside a call).
  virtual bool aborted() const = 0;

  /// Orderly teardown of a connected, healthy communicator whose work has finished and whose
  /// graphs have been destroyed: ncclCommFinalize, polled within the
  /// timeout, then ncclCommDestroy; on a failure or timeout ncclCommAbort instead, and the status
  /// says why (kiln_session_release has no caller to return it to, so it only matters to tests).
  /// Afterwards the communicator is gone; calling it again returns NULL.
  virtual kiln_status_t destroy() = 0;

  /// The rank this communicator serves.
  virtual const TpRankInfo &info() const = 0;
};

/// Loads NCCL ("libnccl.so.2") and returns an unconnected communicator for `info` in `out`.
/// KILN_UNAVAILABLE when NCCL cannot be loaded, or when this runtime was configured without
/// nccl.h (no tensor-parallel support).
kiln_status_t createCommunicator(const TpRankInfo &info, std::unique_ptr<Communicator> &out);

} // namespace kiln

#endif // KILN_RUNTIME_SRC_TENSORPARALLEL_H
