//===- Session.cpp - Running an artifact on one CUDA device ---------------===//
//
// Implements kiln_session_*: a session instantiates a verified artifact on one device.
// Creation, in order:
//   1. load the CUDA driver with dlopen (CudaSymbols; an artifact with tensor maps needs its
//      cuTensorMapEncodeTiled, CUDA 12.0+), cuInit, find the device;
//   2. retain the device's primary context (made current only around each API call);
//   3. load every module: the cubin whose arch equals the device's compute capability, else the
//      PTX through the driver JIT (its error log goes into the status);
//   4. resolve every launch's kernel; raise the dynamic shared memory limit where a launch needs
//      more than the default 48 KiB;
//   5. allocate the arena and one buffer per input; take the artifact's device copy of the weight
//      segment for this device, uploading it if no other live session of the artifact on this
//      device has (DeviceWeights: one refcounted upload per artifact and device, freed with the
//      last session using it); precompute each launch's argument array (segment base + offset),
//      then encode its tensor maps (cuTensorMapEncodeTiled on argument + map offset) into storage
//      of the session and append pointers to them to the array;
//   6. tensor-parallel rank artifacts only: join the group (a non-blocking NCCL communicator,
//      TensorParallel.h; NCCL itself was loaded before the driver, right after the tp_id check)
//      and run each distinct collective shape once, so that NCCL sets up its connections here
//      and never inside a later CUDA graph capture;
//   7. poison the arena when asked.
// kiln_session_set_input_async / _get_output_async enqueue their copies on the caller's stream
// and return; all work is ordered through the stream of the last call (lastRunStream): a call on
// another stream first waits for it, since every run shares the input buffers and the arena.
// A run (and a benchmark or profile) first checks that the application has set every input, so
// no kernel reads an input buffer's uninitialized memory. It then enqueues the schedule on a
// stream: the launches in order, each collective between the launches its before_launch names.
// With use_cuda_graph (the default) the first run captures the schedule (kernels and NCCL
// all-reduces) into a CUDA graph on the session's own stream and instantiates it, and every run is
// one cuGraphLaunch of that graph; otherwise one cuLaunchKernel / ncclAllReduce per entry.
//
// Bound buffers: kiln_session_bind_input points every kernel argument that reads an input at the
// caller's device buffer instead of the session's own (argValues recomputed; an instantiated CUDA
// graph is patched in place with cuGraphExecKernelNodeSetParams, on the kernel nodes that the
// capture recorded per launch, or dropped and re-captured by the next run when that fails). Tensor
// maps whose argument moves are re-encoded first, into temporaries, so a binding whose new address
// a map cannot use (checkTensorMapBinding) or whose encoding fails changes nothing.
// kiln_session_bind_output moves the output's whole arena range into the caller's buffer when
// planOutputRedirect allows it (every kernel argument in that range is redirected the same way,
// graph nodes patched as for inputs), so the kernels write the output there directly; otherwise
// (an output in the weights or an input, shared with another output or a collective, or only
// partly covered by some argument) every run ends with a stream-ordered device-to-device copy of
// the output into the caller's buffer, outside the graph.
//
// Waits: a single-GPU session blocks in cuStreamSynchronize / cuEventSynchronize. A
// tensor-parallel session depends on its peers, so it polls instead (cuStreamQuery /
// cuEventQuery, then ncclCommGetAsyncError, then a pause) and gives up after tp_timeout_ms: the
// communicator is aborted, the call returns KILN_DEADLINE_EXCEEDED and the session is marked
// aborted (every later call but kiln_session_release fails with KILN_FAILED_PRECONDITION). An
// NCCL error, or a failure while enqueuing a run (which leaves this rank's collectives out of
// step with its peers'), aborts the session the same way. All device resources are released by
// kiln_session_release, also after a failed creation.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "Artifact.h"
#include "CudaSymbols.h"
#include "DType.h"
#include "Status.h"
#include "TensorParallel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

static_assert(CU_TENSOR_MAP_DATA_TYPE_UINT8 == 0 && CU_TENSOR_MAP_DATA_TYPE_UINT16 == 1 &&
                  CU_TENSOR_MAP_DATA_TYPE_UINT32 == 2 && CU_TENSOR_MAP_DATA_TYPE_INT32 == 3 &&
                  CU_TENSOR_MAP_DATA_TYPE_UINT64 == 4 && CU_TENSOR_MAP_DATA_TYPE_INT64 == 5 &&
                  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 == 6 && CU_TENSOR_MAP_DATA_TYPE_FLOAT32 == 7 &&
                  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 == 9,
              "the CUtensorMapDataType values in DType.cpp's table differ from cuda.h");
static_assert(CU_TENSOR_MAP_SWIZZLE_NONE == static_cast<int>(kiln::TensorMapSwizzle::None) &&
                  CU_TENSOR_MAP_SWIZZLE_32B == static_cast<int>(kiln::TensorMapSwizzle::B32) &&
                  CU_TENSOR_MAP_SWIZZLE_64B == static_cast<int>(kiln::TensorMapSwizzle::B64) &&
                  CU_TENSOR_MAP_SWIZZLE_128B == static_cast<int>(kiln::TensorMapSwizzle::B128),
              "kiln::TensorMapSwizzle must equal CUtensorMapSwizzle");
// cuda.h of CUDA 13 aligns the host-side CUtensorMap to 128 bytes (64 before); the kernel
// parameter itself is 64-byte aligned, and cuTensorMapEncodeTiled needs at least that.
static_assert(sizeof(CUtensorMap) == kiln::artifact::kTensorMapBytes &&
                  alignof(CUtensorMap) % kiln::artifact::kTensorMapAlignment == 0,
              "CUtensorMap must hold the 128-byte, 64-byte aligned parameter the format describes");

namespace kiln {
namespace {

/// Dynamic shared memory a kernel may use without opting in (CU_FUNC_ATTRIBUTE_...).
constexpr uint32_t kDefaultSharedMemLimit = 48 * 1024;

/// Size of the JIT error log buffer captured when loading PTX.
constexpr size_t kJitLogBytes = 16 * 1024;

} // namespace

/// The device copy of an artifact's weight segment on one device, shared by all sessions of the
/// artifact on that device: each holds a shared_ptr, the artifact only a weak_ptr
/// (kiln_artifact::weightUploads), so the copy is freed exactly once, when the last session using
/// it is released, in whatever order sessions and the artifact are released. It keeps what the
/// free needs: the driver's symbol table and a retained reference to the device's primary
/// context (every session uses the primary context, so the copy is valid in all of them).
struct DeviceWeights {
  std::shared_ptr<const CudaSymbols> cu;
  CUdevice device = 0;
  CUcontext context = nullptr;
  bool contextRetained = false;
  /// Held by the session that uploads; others wait for it and then share the result.
  std::mutex uploadMutex;
  /// The weight segment on the device; 0 until uploaded (also after a failed upload, which the
  /// next session retries).
  CUdeviceptr pointer = 0;

  DeviceWeights() = default;
  DeviceWeights(const DeviceWeights &) = delete;
  DeviceWeights &operator=(const DeviceWeights &) = delete;
  ~DeviceWeights() {
    if (!cu)
      return;
    if (pointer && context && cu->cuCtxPushCurrent(context) == CUDA_SUCCESS) {
      cu->cuMemFree(pointer);
      CUcontext popped;
      cu->cuCtxPopCurrent(&popped);
    }
    if (contextRetained)
      cu->cuDevicePrimaryCtxRelease(device);
  }
};

} // namespace kiln

/// The object behind kiln_session_t.
struct kiln_session {
  kiln_artifact_t *artifact = nullptr;
  /// Shared with the DeviceWeights this session uses, which may outlive the session.
  std::shared_ptr<kiln::CudaSymbols> cu;
  CUdevice device = 0;
  bool contextRetained = false;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  /// Stream of the last run or asynchronous transfer (kiln_session_*_async): the session's own
  /// stream until a call uses another. Work on a different stream first waits for it.
  CUstream lastRunStream = nullptr;
  std::vector<CUmodule> modules;
  /// One kernel per launch.
  std::vector<CUfunction> functions;
  CUdeviceptr arena = 0;
  /// The weight segment: sharedWeights->pointer (0 when the artifact has no weights).
  CUdeviceptr weights = 0;
  std::shared_ptr<kiln::DeviceWeights> sharedWeights;
  /// The session's own input buffers.
  std::vector<CUdeviceptr> inputs;
  /// Per input: whether the application has provided the session's own buffer
  /// (kiln_session_set_input[_async], or kiln_session_input_device_ptr for inputs it fills on the
  /// device); zero-size inputs are always provided. A run, benchmark or profile refuses to start
  /// while an input is neither provided nor bound, so it never reads uninitialized device memory.
  std::vector<bool> inputProvided;
  /// Per input and per output: the caller's device buffer bound to it (kiln_session_bind_input /
  /// _output), 0 when unbound. Launches read a bound input from the caller's buffer; a bound
  /// output is written there by the kernels (outputRedirects) or copied there at the end of every
  /// run.
  std::vector<CUdeviceptr> boundInputs;
  std::vector<CUdeviceptr> boundOutputs;
  /// Per output: the kernel arguments moved into a bound buffer (kiln::planOutputRedirect), empty
  /// when the output cannot be redirected and a bound buffer gets a copy instead.
  std::vector<std::vector<kiln::ArgRedirect>> outputRedirects;
  /// Per launch: the argument values (device addresses) and the pointers to them that
  /// cuLaunchKernel takes as kernelParams.
  std::vector<std::vector<CUdeviceptr>> argValues;
  std::vector<std::vector<void *>> argPointers;
  /// Per launch: its tensor maps, encoded for the current argument values (at least 64-byte
  /// aligned, as cuTensorMapEncodeTiled needs; std::vector honours CUtensorMap's alignas).
  /// argPointers[i] ends with pointers to them, after the argument values. Sized once at creation
  /// and never resized, so those pointers stay valid; binding overwrites the maps in place.
  std::vector<std::vector<CUtensorMap>> tensorMaps;
  /// kiln_session_params_t::use_cuda_graph.
  bool useCudaGraph = true;
  /// Launches marked programmatic_launch go through cuLaunchKernelEx with programmatic stream
  /// serialization (PDL): set at creation when the device is sm_90 or newer, the driver has
  /// cuLaunchKernelEx and CUDA 12.3 or newer, and the environment variable
  /// KILN_PROGRAMMATIC_LAUNCH is not "0" (docs/runtime.md).
  bool programmaticLaunch = false;
  /// The launch list captured and instantiated by the first run (null before it, and always
  /// without useCudaGraph). The graph bakes in the argument values above, i.e. the addresses of the
  /// arena, weights and input buffers. Binding an input changes some of them: the kernel nodes of
  /// the launches concerned are then patched with cuGraphExecKernelNodeSetParams (which affects
  /// later launches of the graph only), or, when a launch's node is unknown or the patch fails, the
  /// graph is dropped (dropGraph) and the next run captures it again.
  CUgraphExec graphExec = nullptr;
  /// The captured graph graphExec was instantiated from, kept while graphExec lives because
  /// cuGraphExecKernelNodeSetParams names nodes of it, and per launch its kernel node (null when
  /// the capture could not tell it).
  CUgraph graph = nullptr;
  std::vector<CUgraphNode> graphNodes;

  /// Tensor-parallel sessions only (artifact world size > 1; null otherwise): the communicator
  /// of this rank, where it sits in its group, and per collective the device addresses of its
  /// input and output.
  std::unique_ptr<kiln::Communicator> comm;
  kiln::TpRankInfo tp;
  std::vector<std::pair<CUdeviceptr, CUdeviceptr>> collectivePointers;
  /// Set when a tensor-parallel wait timed out, NCCL reported an error or a run could not be
  /// enqueued completely: the communicator was aborted and every call but kiln_session_release
  /// fails with KILN_FAILED_PRECONDITION "session aborted after <abortReason>".
  bool aborted = false;
  std::string abortReason;

  ~kiln_session();
};

namespace kiln {
namespace {
kiln_status_t waitForRuns(kiln_session &session, const char *function);

/// Destroys the session's CUDA graph, if any (an executable graph still running is freed by the
/// driver when it finishes), so that the next run captures it again. Context must be current.
void dropGraph(kiln_session &session) {
  if (session.graphExec)
    session.cu->cuGraphExecDestroy(session.graphExec);
  if (session.graph)
    session.cu->cuGraphDestroy(session.graph);
  session.graphExec = nullptr;
  session.graph = nullptr;
  session.graphNodes.clear();
}
} // namespace
} // namespace kiln

kiln_session::~kiln_session() {
  if (cu && context) {
    kiln::ContextScope scope(*cu, context);
    if (scope.ok()) {
      if (comm) {
        // Bounded: a wait that times out aborts the communicator (and sets `aborted`).
        if (!aborted && stream)
          kiln_status_free(kiln::waitForRuns(*this, "kiln_session_release"));
        // The graph goes first: NCCL's teardown waits for every graph that captured its
        // collectives (a graph still running is freed when it finishes, which the abort below
        // makes happen).
        kiln::dropGraph(*this);
        if (aborted)
          comm->abort();
        else
          kiln_status_free(comm->destroy());
        comm.reset();
      }
      // Unbounded for single-GPU sessions as always; for an aborted tensor-parallel session
      // ncclCommAbort has made its kernels exit, so the streams drain.
      if (lastRunStream != stream)
        cu->cuStreamSynchronize(lastRunStream);
      if (stream)
        cu->cuStreamSynchronize(stream);
      kiln::dropGraph(*this);
      if (stream)
        cu->cuStreamDestroy(stream);
      for (CUdeviceptr input : inputs)
        if (input)
          cu->cuMemFree(input);
      // The shared weights are freed here only if no other session of the artifact on this
      // device uses them.
      sharedWeights.reset();
      if (arena)
        cu->cuMemFree(arena);
      for (CUmodule module : modules)
        if (module)
          cu->cuModuleUnload(module);
    }
  }
  // Also when the context could not be made current (DeviceWeights makes its own current).
  sharedWeights.reset();
  if (cu && contextRetained)
    cu->cuDevicePrimaryCtxRelease(device);
  kiln_artifact_release(artifact);
}

namespace kiln {
namespace {

/// Returns the device address of `ref` in `session`'s segments.
CUdeviceptr resolve(const kiln_session &session, const BufferRefDesc &ref) {
  switch (ref.segment) {
  case Segment::Arena:
    return session.arena + ref.offset;
  case Segment::Weights:
    return session.weights + ref.offset;
  case Segment::Input:
    return (session.boundInputs[ref.index] ? session.boundInputs[ref.index]
                                           : session.inputs[ref.index]) +
           ref.offset;
  }
  return 0;
}

/// Returns the device address output `index` is read from after a run: the caller's buffer when
/// the output is bound, else its location in the session's segments.
CUdeviceptr outputAddress(const kiln_session &session, size_t index) {
  if (session.boundOutputs[index])
    return session.boundOutputs[index];
  return resolve(session, session.artifact->outputs[index].location);
}

/// Encodes tensor map `m` of launch `i` for its argument at device address `buffer` into `out`
/// (cuTensorMapEncodeTiled with the parameters the format fixes: element strides 1, no
/// interleave, L2 promotion 256 B, out-of-bounds elements read as zeros). A failure names the
/// launch, the map and what was encoded. The caller checked cuTensorMapEncodeTiled is present.
kiln_status_t encodeTensorMap(const kiln_session &session, size_t i, size_t m, CUdeviceptr buffer,
                              CUtensorMap &out) {
  const CudaSymbols &cu = *session.cu;
  const LaunchDesc &launch = session.artifact->launches[i];
  const TensorMapDesc &map = launch.tensorMaps[m];
  // The verifier bounds the rank to [1, 5], strides to rank - 1 and box to rank entries.
  cuuint64_t dims[5] = {}, strides[4] = {};
  cuuint32_t box[5] = {}, elementStrides[5] = {1, 1, 1, 1, 1};
  const size_t rank = map.dims.size();
  for (size_t d = 0; d < rank; ++d) {
    dims[d] = map.dims[d];
    box[d] = map.box[d];
  }
  for (size_t d = 0; d + 1 < rank; ++d)
    strides[d] = map.strides[d];
  CUdeviceptr address = buffer + map.offset;
  CUresult result = cu.cuTensorMapEncodeTiled(
      &out, static_cast<CUtensorMapDataType>(lookupDType(map.dtype)->tensorMapDataType),
      static_cast<cuuint32_t>(rank), reinterpret_cast<void *>(static_cast<uintptr_t>(address)),
      dims, strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      static_cast<CUtensorMapSwizzle>(map.swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result == CUDA_SUCCESS)
    return nullptr;
  auto join = [](const auto &values) {
    std::string text;
    for (size_t d = 0; d < values.size(); ++d)
      text += (d ? "x" : "") + std::to_string(values[d]);
    return text.empty() ? std::string("none") : text;
  };
  return cu.makeError(
      result, "cuTensorMapEncodeTiled", __FILE__, __LINE__,
      formatString("'%s': launch %zu ('%s') tensor map %zu: %s at 0x%llx (argument %u + %llu), "
                   "dims %s, strides %s, box %s, swizzle %s",
                   session.artifact->path.c_str(), i, launch.function.c_str(), m,
                   lookupDType(map.dtype)->name, static_cast<unsigned long long>(address), map.arg,
                   static_cast<unsigned long long>(map.offset), join(map.dims).c_str(),
                   join(map.strides).c_str(), join(map.box).c_str(),
                   tensorMapSwizzleName(map.swizzle)));
}

/// The per-row sampling parameters of a generation step (kiln.sample's run-time inputs).
bool isSamplingInput(kiln_input_role_t role) {
  return role == KILN_INPUT_ROLE_TEMPERATURE || role == KILN_INPUT_ROLE_TOP_K ||
         role == KILN_INPUT_ROLE_TOP_P || role == KILN_INPUT_ROLE_SEED ||
         role == KILN_INPUT_ROLE_SAMPLE_OFFSET;
}

/// Allocates `bytes` of device memory into `out` (0 bytes: no allocation, `out` = 0).
kiln_status_t allocate(const CudaSymbols &cu, uint64_t bytes, const char *what, CUdeviceptr &out) {
  out = 0;
  if (bytes == 0)
    return nullptr;
  CUresult result = cu.cuMemAlloc(&out, static_cast<size_t>(bytes));
  if (result != CUDA_SUCCESS)
    return cu.makeError(result, "cuMemAlloc", __FILE__, __LINE__,
                        formatString("while allocating %llu bytes for the %s",
                                     static_cast<unsigned long long>(bytes), what));
  return nullptr;
}

/// Step 3: loads module `index`, choosing the cubin for `arch` or the PTX.
kiln_status_t loadModule(kiln_session &session, size_t index, uint32_t arch) {
  const CudaSymbols &cu = *session.cu;
  const kiln_artifact &artifact = *session.artifact;
  const ModuleDesc &module = artifact.modules[index];
  for (const CubinDesc &cubin : module.cubins) {
    if (cubin.arch != arch)
      continue;
    CUresult result = cu.cuModuleLoadDataEx(
        &session.modules[index], artifact.data + cubin.image.offset, 0, nullptr, nullptr);
    if (result != CUDA_SUCCESS)
      return cu.makeError(result, "cuModuleLoadDataEx", __FILE__, __LINE__,
                          formatString("while loading the sm_%u cubin of module '%s' from '%s'",
                                       arch, module.name.c_str(), artifact.path.c_str()));
    return nullptr;
  }
  if (module.ptx.size == 0) {
    std::string archs;
    for (const CubinDesc &cubin : module.cubins)
      archs += formatString("%ssm_%u", archs.empty() ? "" : ", ", cubin.arch);
    return makeStatusF(KILN_UNAVAILABLE,
                       "'%s': module '%s' has no cubin for this device (sm_%u; cubins: %s) and "
                       "no PTX; recompile with --target sm_%u",
                       artifact.path.c_str(), module.name.c_str(), arch, archs.c_str(), arch);
  }
  // The PTX blob need not be NUL-terminated; the JIT needs a C string.
  std::string ptx(reinterpret_cast<const char *>(artifact.data + module.ptx.offset),
                  static_cast<size_t>(module.ptx.size));
  std::vector<char> log(kJitLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(log.size()))};
  CUresult result = cu.cuModuleLoadDataEx(&session.modules[index], ptx.c_str(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    log.back() = '\0';
    return cu.makeError(result, "cuModuleLoadDataEx", __FILE__, __LINE__,
                        formatString("while JIT-compiling the PTX of module '%s' from '%s' for "
                                     "sm_%u; JIT log:\n%s",
                                     module.name.c_str(), artifact.path.c_str(), arch,
                                     log[0] ? log.data() : "(empty)"));
  }
  return nullptr;
}

/// Marks a tensor-parallel session aborted: destroys its CUDA graph (NCCL's abort waits for
/// every graph holding its collectives; a graph still running is freed once it finishes), aborts
/// its communicator (NCCL kernels still waiting for a peer exit) and records `reason` for the
/// FAILED_PRECONDITION of every later call. Context must be current.
void markAborted(kiln_session &session, const std::string &reason) {
  dropGraph(session);
  session.comm->abort();
  session.aborted = true;
  session.abortReason = reason;
}

/// Returns `status` unchanged. In a tensor-parallel session, a failure while enqueuing a run (a
/// launch, a collective, a capture) leaves this rank's collectives out of step with its peers',
/// so the session is aborted (reason: `function` and the first line of the message).
kiln_status_t failRun(kiln_session &session, kiln_status_t status, const char *function) {
  if (status && session.comm && !session.aborted) {
    std::string message = kiln_status_message(status);
    markAborted(session, formatString("%s failed (%s)", function,
                                      message.substr(0, message.find('\n')).c_str()));
  }
  return status;
}

/// Polls `query` (cuStreamQuery or cuEventQuery of one object, named `call`) of a
/// tensor-parallel session until it stops returning CUDA_ERROR_NOT_READY. Between polls it checks
/// NCCL's asynchronous error (returned as the status, the session aborted) and the session's
/// timeout (KILN_DEADLINE_EXCEEDED, the session aborted). `function` is the API call waiting.
/// Context must be current.
kiln_status_t pollUntilDone(kiln_session &session, const char *function, const char *call,
                            const std::function<CUresult()> &query) {
  const CudaSymbols &cu = *session.cu;
  Deadline deadline(session.tp.timeoutMs);
  for (;;) {
    CUresult result = query();
    if (result == CUDA_SUCCESS)
      return nullptr;
    if (result != CUDA_ERROR_NOT_READY)
      return cu.makeError(result, call, __FILE__, __LINE__,
                          session.tp.describe() + ": in " + function);
    if (!session.aborted) {
      if (kiln_status_t error = session.comm->asyncError()) {
        markAborted(session,
                    formatString("NCCL reported an asynchronous error during %s", function));
        return error;
      }
    }
    if (deadline.expired()) {
      if (!session.aborted)
        markAborted(session, formatString("%s timed out after %u ms (tp_timeout_ms) waiting "
                                          "for the peer ranks",
                                          function, session.tp.timeoutMs));
      return makeStatusF(KILN_DEADLINE_EXCEEDED,
                         "%s: %s waited %u ms (tp_timeout_ms) for this rank's work to finish; "
                         "its collectives need every rank of the group, so a peer rank did not "
                         "reach one (it failed, hung, or runs a different schedule). The NCCL "
                         "communicator was aborted; the session accepts only "
                         "kiln_session_release now",
                         session.tp.describe().c_str(), function, session.tp.timeoutMs);
    }
    deadline.pause();
  }
}

/// Waits for `stream`: cuStreamSynchronize in a single-GPU session, pollUntilDone in a
/// tensor-parallel one. Context must be current.
kiln_status_t waitStream(kiln_session &session, CUstream stream, const char *function) {
  const CudaSymbols &cu = *session.cu;
  if (!session.comm) {
    KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(stream));
    return nullptr;
  }
  return pollUntilDone(session, function, "cuStreamQuery",
                       [&cu, stream] { return cu.cuStreamQuery(stream); });
}

/// Waits for `event` like waitStream waits for a stream. Context must be current.
kiln_status_t waitEvent(kiln_session &session, CUevent event, const char *function) {
  const CudaSymbols &cu = *session.cu;
  if (!session.comm) {
    KILN_CU_RETURN_IF_ERROR(cu, cuEventSynchronize(event));
    return nullptr;
  }
  return pollUntilDone(session, function, "cuEventQuery",
                       [&cu, event] { return cu.cuEventQuery(event); });
}

/// Waits for the last run's stream and the session's stream. Context must be current.
kiln_status_t waitForRuns(kiln_session &session, const char *function) {
  if (session.lastRunStream != session.stream)
    KILN_RETURN_IF_ERROR(waitStream(session, session.lastRunStream, function));
  return waitStream(session, session.stream, function);
}

/// Enqueues collective number `c` on `stream`. Context must be current.
kiln_status_t enqueueCollective(kiln_session &session, size_t c, CUstream stream) {
  const CollectiveDesc &collective = session.artifact->collectives[c];
  std::string what = formatString("collective %zu (%s, before launch %u)", c,
                                  collectiveKindName(collective.kind), collective.beforeLaunch);
  switch (collective.kind) {
  case CollectiveKind::AllReduceSum:
    return session.comm->allReduceSum(collective.dtype, collective.count,
                                      session.collectivePointers[c].first,
                                      session.collectivePointers[c].second, stream, what);
  }
  return makeStatus(KILN_INTERNAL, what + ": unhandled collective kind");
}

/// Copies `launch`'s grid, block and dynamic shared memory into a driver launch description
/// (CUlaunchConfig or CUDA_KERNEL_NODE_PARAMS: the same member names).
template <typename Params> void setLaunchShape(Params &params, const LaunchDesc &launch) {
  params.gridDimX = launch.grid[0];
  params.gridDimY = launch.grid[1];
  params.gridDimZ = launch.grid[2];
  params.blockDimX = launch.block[0];
  params.blockDimY = launch.block[1];
  params.blockDimZ = launch.block[2];
  params.sharedMemBytes = launch.sharedMemBytes;
}

/// Enqueues launch number `i` on `stream`. Context must be current.
kiln_status_t enqueueLaunch(kiln_session &session, size_t i, CUstream stream) {
  const CudaSymbols &cu = *session.cu;
  const LaunchDesc &launch = session.artifact->launches[i];
  if (launch.programmaticLaunch && session.programmaticLaunch) {
    CUlaunchAttribute attribute = {};
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {};
    setLaunchShape(config, launch);
    config.hStream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CUresult result = cu.cuLaunchKernelEx(
        &config, session.functions[i],
        session.argPointers[i].empty() ? nullptr : session.argPointers[i].data(), nullptr);
    if (result != CUDA_SUCCESS)
      return cu.makeError(result, "cuLaunchKernelEx", __FILE__, __LINE__,
                          formatString("launch %zu ('%s', programmatic stream serialization)", i,
                                       launch.function.c_str()));
    return nullptr;
  }
  CUresult result = cu.cuLaunchKernel(
      session.functions[i], launch.grid[0], launch.grid[1], launch.grid[2], launch.block[0],
      launch.block[1], launch.block[2], launch.sharedMemBytes, stream,
      session.argPointers[i].empty() ? nullptr : session.argPointers[i].data(), nullptr);
  if (result != CUDA_SUCCESS)
    return cu.makeError(result, "cuLaunchKernel", __FILE__, __LINE__,
                        formatString("launch %zu ('%s')", i, launch.function.c_str()));
  return nullptr;
}

/// One entry of the schedule: a kernel launch or a collective, by index.
struct ScheduleEntry {
  bool collective;
  size_t index;
};

/// The schedule in execution order: before launch i, the collectives whose before_launch is i
/// (in index order); after the last launch, those whose before_launch is the launch count.
std::vector<ScheduleEntry> scheduleOrder(const kiln_artifact &artifact) {
  std::vector<ScheduleEntry> order;
  order.reserve(artifact.launches.size() + artifact.collectives.size());
  size_t c = 0;
  for (size_t i = 0; i <= artifact.launches.size(); ++i) {
    while (c < artifact.collectives.size() && artifact.collectives[c].beforeLaunch == i)
      order.push_back({true, c++});
    if (i < artifact.launches.size())
      order.push_back({false, i});
  }
  return order;
}

/// Enqueues one schedule entry on `stream`. Context must be current.
kiln_status_t enqueueEntry(kiln_session &session, const ScheduleEntry &entry, CUstream stream) {
  return entry.collective ? enqueueCollective(session, entry.index, stream)
                          : enqueueLaunch(session, entry.index, stream);
}

/// While `stream` is capturing, returns the node just captured on it: after a kernel launch, the
/// stream's capture dependency set is that one kernel node. Null when the driver says otherwise.
CUgraphNode lastCapturedNode(const CudaSymbols &cu, CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUgraphNode *dependencies = nullptr;
  const CUgraphEdgeData *edges = nullptr;
  size_t count = 0;
  if (cu.cuStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &dependencies, &edges, &count) !=
          CUDA_SUCCESS ||
      status != CU_STREAM_CAPTURE_STATUS_ACTIVE || count != 1 || !dependencies)
    return nullptr;
  return dependencies[0];
}

/// Enqueues the whole schedule (launches and collectives) on `stream`. Context must be current.
/// When `nodes` is given (`stream` is capturing), sets (*nodes)[i] to launch i's kernel node.
kiln_status_t enqueueSchedule(kiln_session &session, CUstream stream,
                              std::vector<CUgraphNode> *nodes = nullptr) {
  const kiln_artifact &artifact = *session.artifact;
  if (nodes)
    nodes->assign(artifact.launches.size(), nullptr);
  auto launch = [&](size_t i) -> kiln_status_t {
    KILN_RETURN_IF_ERROR(enqueueLaunch(session, i, stream));
    if (nodes)
      (*nodes)[i] = lastCapturedNode(*session.cu, stream);
    return nullptr;
  };
  if (artifact.collectives.empty()) {
    for (size_t i = 0; i < artifact.launches.size(); ++i)
      KILN_RETURN_IF_ERROR(launch(i));
    return nullptr;
  }
  for (const ScheduleEntry &entry : scheduleOrder(artifact))
    KILN_RETURN_IF_ERROR(entry.collective ? enqueueCollective(session, entry.index, stream)
                                          : launch(entry.index));
  return nullptr;
}

/// Step 6 after connecting: runs each distinct (dtype, count) of the schedule's collectives once
/// on the session's stream, in schedule order (the same on every rank, so they pair up), and
/// waits. NCCL sets up the connections an all-reduce of a given size needs when it first runs one
/// (NCCL_RUNTIME_CONNECT, on by default since NCCL 2.22); doing that here keeps connection setup
/// out of the first run's CUDA graph capture. The buffers are zeroed first; they are arena scratch
/// that every run overwrites (and step 7 may poison). Context must be current.
kiln_status_t warmUpCollectives(kiln_session &session) {
  const CudaSymbols &cu = *session.cu;
  const kiln_artifact &artifact = *session.artifact;
  std::vector<std::pair<kiln_dtype_t, uint64_t>> done;
  for (size_t c = 0; c < artifact.collectives.size(); ++c) {
    const CollectiveDesc &collective = artifact.collectives[c];
    std::pair<kiln_dtype_t, uint64_t> shape(collective.dtype, collective.count);
    if (std::find(done.begin(), done.end(), shape) != done.end())
      continue;
    done.push_back(shape);
    KILN_CU_RETURN_IF_ERROR(cu, cuMemsetD8Async(session.collectivePointers[c].first, 0,
                                                static_cast<size_t>(collective.input.size),
                                                session.stream));
    KILN_RETURN_IF_ERROR(annotateStatus(enqueueCollective(session, c, session.stream),
                                        "while warming up the collectives: "));
  }
  return waitStream(session, session.stream, "kiln_session_create");
}

/// Step 5's weights: sets session.sharedWeights and session.weights to the artifact's copy of its
/// weight segment on the session's device, uploading it (from the mapped file, on the session's
/// stream, waited for) when no live session of the artifact on this device holds one. Sessions
/// created concurrently on one device upload once: the first takes the copy's upload mutex, the
/// others wait for it and share the result. Context must be current.
kiln_status_t acquireWeights(kiln_session &session) {
  kiln_artifact &artifact = *session.artifact;
  if (artifact.weights.size == 0)
    return nullptr;
  std::shared_ptr<DeviceWeights> shared;
  {
    // Every program of an artifact shares its owner's uploads (one weight segment).
    kiln_artifact &owner = artifact.owner ? *artifact.owner : artifact;
    std::lock_guard<std::mutex> lock(owner.weightUploadsMutex);
    std::weak_ptr<DeviceWeights> &slot = owner.weightUploads[session.device];
    shared = slot.lock();
    if (!shared) {
      shared = std::make_shared<DeviceWeights>();
      shared->cu = session.cu;
      shared->device = session.device;
      slot = shared;
    }
  }
  std::lock_guard<std::mutex> lock(shared->uploadMutex);
  if (!shared->pointer) {
    const CudaSymbols &cu = *session.cu;
    if (!shared->contextRetained) {
      KILN_CU_RETURN_IF_ERROR(cu, cuDevicePrimaryCtxRetain(&shared->context, session.device));
      shared->contextRetained = true;
    }
    CUdeviceptr pointer = 0;
    KILN_RETURN_IF_ERROR(allocate(cu, artifact.weights.size, "weight segment", pointer));
    CUresult result =
        cu.cuMemcpyHtoDAsync(pointer, artifact.data + artifact.weights.offset,
                             static_cast<size_t>(artifact.weights.size), session.stream);
    if (result == CUDA_SUCCESS)
      result = cu.cuStreamSynchronize(session.stream);
    if (result != CUDA_SUCCESS) {
      cu.cuMemFree(pointer);
      return cu.makeError(result, "cuMemcpyHtoDAsync", __FILE__, __LINE__,
                          formatString("while uploading the %llu-byte weight segment of '%s'",
                                       static_cast<unsigned long long>(artifact.weights.size),
                                       artifact.path.c_str()));
    }
    shared->pointer = pointer;
  }
  session.sharedWeights = std::move(shared);
  session.weights = session.sharedWeights->pointer;
  return nullptr;
}

/// Steps 1-7 of session creation (see the file comment). For a tensor-parallel artifact the
/// caller has checked params.tp_id and created session.comm (NCCL loaded, not connected).
kiln_status_t initialize(kiln_session &session, const kiln_session_params_t &params) {
  int ordinal = params.device_ordinal;
  std::unique_ptr<CudaSymbols> symbols;
  KILN_RETURN_IF_ERROR(CudaSymbols::load(kCudaDriverLibrary, symbols));
  session.cu = std::move(symbols);
  const CudaSymbols &cu = *session.cu;
  const kiln_artifact &artifact = *session.artifact;
  KILN_RETURN_IF_ERROR(checkTensorMapEncoder(artifact, cu.cuTensorMapEncodeTiled != nullptr));

  // 1. Driver and device.
  KILN_CU_RETURN_IF_ERROR(cu, cuInit(0));
  int deviceCount = 0;
  KILN_CU_RETURN_IF_ERROR(cu, cuDeviceGetCount(&deviceCount));
  if (ordinal < 0 || ordinal >= deviceCount)
    return makeStatusF(KILN_UNAVAILABLE, "CUDA device %d does not exist (%d device%s present)",
                       ordinal, deviceCount, deviceCount == 1 ? "" : "s");
  KILN_CU_RETURN_IF_ERROR(cu, cuDeviceGet(&session.device, ordinal));
  int major = 0, minor = 0;
  KILN_CU_RETURN_IF_ERROR(
      cu,
      cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, session.device));
  KILN_CU_RETURN_IF_ERROR(
      cu,
      cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, session.device));
  uint32_t arch = static_cast<uint32_t>(major * 10 + minor);
  {
    int driverVersion = 0;
    KILN_CU_RETURN_IF_ERROR(cu, cuDriverGetVersion(&driverVersion));
    const char *pdl = std::getenv("KILN_PROGRAMMATIC_LAUNCH");
    session.programmaticLaunch = major >= 9 && cu.cuLaunchKernelEx && driverVersion >= 12030 &&
                                 !(pdl && std::string(pdl) == "0");
  }

  // 2. Primary context.
  KILN_CU_RETURN_IF_ERROR(cu, cuDevicePrimaryCtxRetain(&session.context, session.device));
  session.contextRetained = true;
  KILN_CU_RETURN_IF_ERROR(cu, cuCtxPushCurrent(session.context));
  // Pops the context pushed above on every exit path.
  struct Popper {
    const CudaSymbols &cu;
    ~Popper() {
      CUcontext popped;
      cu.cuCtxPopCurrent(&popped);
    }
  } popper{cu};
  KILN_CU_RETURN_IF_ERROR(cu, cuStreamCreate(&session.stream, CU_STREAM_NON_BLOCKING));
  session.lastRunStream = session.stream;

  // 3. Modules.
  session.modules.assign(artifact.modules.size(), nullptr);
  for (size_t i = 0; i < artifact.modules.size(); ++i)
    KILN_RETURN_IF_ERROR(loadModule(session, i, arch));

  // 4. Kernels.
  int sharedOptinLimit = 0;
  KILN_CU_RETURN_IF_ERROR(
      cu,
      cuDeviceGetAttribute(&sharedOptinLimit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                           session.device));
  session.functions.assign(artifact.launches.size(), nullptr);
  for (size_t i = 0; i < artifact.launches.size(); ++i) {
    const LaunchDesc &launch = artifact.launches[i];
    const ModuleDesc &module = artifact.modules[launch.module];
    CUresult result = cu.cuModuleGetFunction(&session.functions[i], session.modules[launch.module],
                                             launch.function.c_str());
    if (result != CUDA_SUCCESS)
      return cu.makeError(result, "cuModuleGetFunction", __FILE__, __LINE__,
                          formatString("kernel '%s' of launch %zu not found in module '%s'",
                                       launch.function.c_str(), i, module.name.c_str()));
    if (launch.sharedMemBytes > kDefaultSharedMemLimit) {
      if (launch.sharedMemBytes > static_cast<uint32_t>(sharedOptinLimit))
        return makeStatusF(KILN_UNAVAILABLE,
                           "'%s': launch %zu ('%s') needs %u bytes of shared memory; this device "
                           "allows %d per block",
                           artifact.path.c_str(), i, launch.function.c_str(), launch.sharedMemBytes,
                           sharedOptinLimit);
      KILN_CU_RETURN_IF_ERROR(cu,
                              cuFuncSetAttribute(session.functions[i],
                                                 CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                 static_cast<int>(launch.sharedMemBytes)));
    }
  }

  // 5. Memory, the shared weights, argument arrays.
  KILN_RETURN_IF_ERROR(allocate(cu, artifact.arenaBytes, "activation arena", session.arena));
  session.inputs.assign(artifact.inputs.size(), 0);
  session.boundInputs.assign(artifact.inputs.size(), 0);
  session.boundOutputs.assign(artifact.outputs.size(), 0);
  for (size_t i = 0; i < artifact.inputs.size(); ++i) {
    std::string what = "input '" + artifact.inputs[i].name + "'";
    KILN_RETURN_IF_ERROR(
        allocate(cu, artifact.inputs[i].byteSize, what.c_str(), session.inputs[i]));
  }
  KILN_RETURN_IF_ERROR(acquireWeights(session));
  session.argValues.resize(artifact.launches.size());
  session.argPointers.resize(artifact.launches.size());
  session.tensorMaps.resize(artifact.launches.size());
  for (size_t i = 0; i < artifact.launches.size(); ++i) {
    const LaunchDesc &launch = artifact.launches[i];
    std::vector<CUdeviceptr> &values = session.argValues[i];
    std::vector<void *> &pointers = session.argPointers[i];
    std::vector<CUtensorMap> &maps = session.tensorMaps[i];
    values.resize(launch.args.size());
    maps.resize(launch.tensorMaps.size());
    pointers.reserve(launch.args.size() + launch.tensorMaps.size());
    for (size_t a = 0; a < launch.args.size(); ++a) {
      values[a] = resolve(session, launch.args[a]);
      pointers.push_back(&values[a]);
    }
    // The kernel's parameters: the pointers, then the tensor maps (docs/artifact.md).
    for (size_t m = 0; m < launch.tensorMaps.size(); ++m) {
      KILN_RETURN_IF_ERROR(
          encodeTensorMap(session, i, m, values[launch.tensorMaps[m].arg], maps[m]));
      pointers.push_back(&maps[m]);
    }
  }

  session.outputRedirects.resize(artifact.outputs.size());
  for (size_t o = 0; o < artifact.outputs.size(); ++o)
    planOutputRedirect(artifact, o, session.outputRedirects[o]);

  // 6. Tensor parallelism: join the group, then set up NCCL's connections.
  if (session.comm) {
    session.collectivePointers.resize(artifact.collectives.size());
    for (size_t c = 0; c < artifact.collectives.size(); ++c)
      session.collectivePointers[c] = {resolve(session, artifact.collectives[c].input),
                                       resolve(session, artifact.collectives[c].output)};
    KILN_RETURN_IF_ERROR(session.comm->connect(*params.tp_id));
    KILN_RETURN_IF_ERROR(warmUpCollectives(session));
  }

  // 7. Poisoning.
  if (params.poison_arena && session.arena) {
    KILN_CU_RETURN_IF_ERROR(cu, cuMemsetD8Async(session.arena, 0xFF,
                                                static_cast<size_t>(artifact.arenaBytes),
                                                session.stream));
    KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session.stream));
  }

  // 8. The sampling inputs of a generation step start as zeros: temperature 0, a greedy
  //    next_token, for a caller that runs the step without filling them (isSamplingInput).
  bool zeroed = false;
  for (size_t i = 0; i < artifact.inputs.size(); ++i)
    if (isSamplingInput(artifact.inputs[i].role) && artifact.inputs[i].byteSize > 0) {
      KILN_CU_RETURN_IF_ERROR(cu, cuMemsetD8Async(session.inputs[i], 0,
                                                  static_cast<size_t>(artifact.inputs[i].byteSize),
                                                  session.stream));
      zeroed = true;
    }
  if (zeroed)
    KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session.stream));
  return nullptr;
}

/// Captures the schedule (kernel launches and collectives) into a CUDA graph and instantiates it
/// into session.graphExec. The capture runs on the session's own non-blocking stream (never the
/// caller's stream, which may be the legacy NULL stream or a stream the caller is itself
/// capturing) in thread-local mode, so other threads' CUDA calls are unaffected; nothing is
/// executed. NCCL supports being captured: the graph then holds its all-reduce kernels (every
/// rank of a group must capture, i.e. use the same use_cuda_graph). Context must be current.
kiln_status_t captureGraph(kiln_session &session) {
  const CudaSymbols &cu = *session.cu;
  KILN_CU_RETURN_IF_ERROR(
      cu, cuStreamBeginCapture(session.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  std::vector<CUgraphNode> nodes;
  kiln_status_t launchStatus = enqueueSchedule(session, session.stream, &nodes);
  CUgraph graph = nullptr;
  // The capture must be ended even after a failed launch, or the stream stays in capture mode.
  CUresult endResult = cu.cuStreamEndCapture(session.stream, &graph);
  if (launchStatus) {
    if (graph)
      cu.cuGraphDestroy(graph);
    return annotateStatus(launchStatus, "while capturing the launch list into a CUDA graph: ");
  }
  if (endResult != CUDA_SUCCESS)
    return cu.makeError(endResult, "cuStreamEndCapture(session.stream, &graph)", __FILE__, __LINE__,
                        "while capturing the launch list into a CUDA graph");
  CUgraphExec exec = nullptr;
  CUresult result = cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
  if (result != CUDA_SUCCESS) {
    cu.cuGraphDestroy(graph);
    return cu.makeError(result, "cuGraphInstantiateWithFlags(&exec, graph, 0)", __FILE__, __LINE__,
                        formatString("while instantiating the CUDA graph of %zu launches and %zu "
                                     "collectives",
                                     session.artifact->launches.size(),
                                     session.artifact->collectives.size()));
  }
  // The executable graph is independent of `graph`, which is kept only for its node handles
  // (patchGraph).
  session.graphExec = exec;
  session.graph = graph;
  session.graphNodes = std::move(nodes);
  return nullptr;
}

/// Makes sure the graph exists when the session uses one (captures it on first use).
kiln_status_t prepareRun(kiln_session &session) {
  if (session.useCudaGraph && !session.graphExec)
    KILN_RETURN_IF_ERROR(captureGraph(session));
  return nullptr;
}

/// Enqueues one run on `stream`: one cuGraphLaunch, or the whole schedule, then a
/// device-to-device copy of every bound output into the caller's buffer. Context must be current
/// and prepareRun must have succeeded (every caller prepares before its bookkeeping).
kiln_status_t enqueueRun(kiln_session &session, CUstream stream) {
  const CudaSymbols &cu = *session.cu;
  if (!session.useCudaGraph)
    KILN_RETURN_IF_ERROR(enqueueSchedule(session, stream));
  else
    KILN_CU_RETURN_IF_ERROR(cu, cuGraphLaunch(session.graphExec, stream));
  const kiln_artifact &artifact = *session.artifact;
  for (size_t o = 0; o < artifact.outputs.size(); ++o) {
    const TensorDesc &output = artifact.outputs[o];
    // A redirected output was written into the bound buffer by the kernels themselves.
    if (!session.boundOutputs[o] || output.byteSize == 0 || !session.outputRedirects[o].empty())
      continue;
    CUresult result =
        cu.cuMemcpyDtoDAsync(session.boundOutputs[o], resolve(session, output.location),
                             static_cast<size_t>(output.byteSize), stream);
    if (result != CUDA_SUCCESS)
      return cu.makeError(result, "cuMemcpyDtoDAsync", __FILE__, __LINE__,
                          formatString("while copying output '%s' into the buffer bound to it",
                                       output.name.c_str()));
  }
  return nullptr;
}

/// Carries the current argument values of launch `i` (argValues) into the instantiated CUDA graph,
/// if any: its kernel node is patched with cuGraphExecKernelNodeSetParams (later launches of the
/// graph use the new arguments; launches already enqueued keep theirs). When the launch's node is
/// unknown or the patch fails, the graph is dropped and the next run captures it again. Context
/// must be current.
void patchLaunch(kiln_session &session, size_t i) {
  if (!session.graphExec)
    return;
  const LaunchDesc &launch = session.artifact->launches[i];
  CUgraphNode node = i < session.graphNodes.size() ? session.graphNodes[i] : nullptr;
  CUDA_KERNEL_NODE_PARAMS params;
  std::memset(&params, 0, sizeof(params));
  params.func = session.functions[i];
  setLaunchShape(params, launch);
  params.kernelParams = session.argPointers[i].empty() ? nullptr : session.argPointers[i].data();
  if (!node ||
      session.cu->cuGraphExecKernelNodeSetParams(session.graphExec, node, &params) != CUDA_SUCCESS)
    dropGraph(session);
}

/// The new argument values of one launch after a binding changed, and its tensor maps encoded for
/// them (`maps`: map index and encoding, only the maps whose argument moved).
struct LaunchUpdate {
  size_t launch = 0;
  std::vector<CUdeviceptr> values;
  std::vector<std::pair<size_t, CUtensorMap>> maps;
};

/// Appends to `updates` every launch that reads input `input` with an argument whose value differs
/// from argValues under the current binding.
void inputUpdates(const kiln_session &session, size_t input, std::vector<LaunchUpdate> &updates) {
  const kiln_artifact &artifact = *session.artifact;
  for (size_t i = 0; i < artifact.launches.size(); ++i) {
    const LaunchDesc &launch = artifact.launches[i];
    LaunchUpdate update;
    update.launch = i;
    update.values = session.argValues[i];
    bool changed = false;
    for (size_t a = 0; a < launch.args.size(); ++a) {
      const BufferRefDesc &ref = launch.args[a];
      if (ref.segment != Segment::Input || ref.index != input)
        continue;
      update.values[a] = resolve(session, ref);
      changed |= update.values[a] != session.argValues[i][a];
    }
    if (changed)
      updates.push_back(std::move(update));
  }
}

/// Appends to `updates` every launch with a redirected argument of output `output`
/// (outputRedirects) that moves: into the bound buffer, or back into the arena when unbound.
void outputUpdates(const kiln_session &session, size_t output, std::vector<LaunchUpdate> &updates) {
  const kiln_artifact &artifact = *session.artifact;
  CUdeviceptr bound = session.boundOutputs[output];
  std::vector<int> updateOf(artifact.launches.size(), -1);
  for (const ArgRedirect &r : session.outputRedirects[output]) {
    CUdeviceptr value =
        bound ? bound + r.offset : resolve(session, artifact.launches[r.launch].args[r.arg]);
    if (session.argValues[r.launch][r.arg] == value)
      continue;
    if (updateOf[r.launch] < 0) {
      updateOf[r.launch] = static_cast<int>(updates.size());
      LaunchUpdate update;
      update.launch = r.launch;
      update.values = session.argValues[r.launch];
      updates.push_back(std::move(update));
    }
    updates[updateOf[r.launch]].values[r.arg] = value;
  }
}

/// Points input (`isInput`) or output `index` at `bound`, the caller's buffer (0: the session's
/// own memory again), and carries that into the launches: 1. the new argument values of the
/// launches concerned; 2. their tensor maps whose argument moved, encoded into temporaries; 3.
/// only when every encoding succeeded, the values and maps are stored and the launches patched
/// into the CUDA graph. On failure the binding and everything else stay as they were. `what`
/// ("kiln_session_bind_input: input 'x': ") prefixes errors. Context must be current.
kiln_status_t rebind(kiln_session &session, bool isInput, size_t index, CUdeviceptr bound,
                     const std::string &what) {
  CUdeviceptr &slot = isInput ? session.boundInputs[index] : session.boundOutputs[index];
  const CUdeviceptr previous = slot;
  slot = bound; // resolve() and outputUpdates read the binding
  std::vector<LaunchUpdate> updates;
  if (isInput)
    inputUpdates(session, index, updates);
  else
    outputUpdates(session, index, updates);
  for (LaunchUpdate &update : updates) {
    const LaunchDesc &launch = session.artifact->launches[update.launch];
    for (size_t m = 0; m < launch.tensorMaps.size(); ++m) {
      uint32_t arg = launch.tensorMaps[m].arg;
      if (update.values[arg] == session.argValues[update.launch][arg])
        continue;
      update.maps.emplace_back(m, CUtensorMap());
      if (kiln_status_t status = encodeTensorMap(session, update.launch, m, update.values[arg],
                                                 update.maps.back().second)) {
        slot = previous;
        return annotateStatus(status, what);
      }
    }
  }
  for (const LaunchUpdate &update : updates) {
    // In place: argPointers point into argValues and tensorMaps.
    std::copy(update.values.begin(), update.values.end(), session.argValues[update.launch].begin());
    for (const auto &[m, map] : update.maps)
      session.tensorMaps[update.launch][m] = map;
    patchLaunch(session, update.launch);
  }
  return nullptr;
}

/// Validates the session argument of every session call, and refuses aborted sessions.
kiln_status_t checkSession(const kiln_session *session, const char *function) {
  if (!session)
    return makeStatusF(KILN_INVALID_ARGUMENT, "%s: session must be non-NULL", function);
  if (session->aborted)
    return makeStatusF(KILN_FAILED_PRECONDITION,
                       "%s: %s: session aborted after %s; only kiln_session_release is allowed "
                       "(then create new sessions on every rank, with a new group id)",
                       session->tp.describe().c_str(), function, session->abortReason.c_str());
  return nullptr;
}

/// Orders work about to be enqueued on `target` after everything the session enqueued before: the
/// session's buffers (inputs, arena) are shared, so when the last run or asynchronous transfer went
/// to another stream, waits for that stream first (as kiln_session_run does). Context must be
/// current.
kiln_status_t orderOnStream(kiln_session &session, CUstream target, const char *function) {
  if (session.lastRunStream != target)
    KILN_RETURN_IF_ERROR(waitStream(session, session.lastRunStream, function));
  return nullptr;
}

/// Fails with KILN_FAILED_PRECONDITION, naming every input the application has not provided yet,
/// when `function` (a run, benchmark or profile) would read one. Needs no device work.
kiln_status_t checkInputsProvided(const kiln_session &session, const char *function) {
  std::string unset;
  size_t count = 0;
  for (size_t i = 0; i < session.inputProvided.size(); ++i) {
    if (session.inputProvided[i] || session.boundInputs[i])
      continue;
    unset += (count++ ? ", '" : "'") + session.artifact->inputs[i].name + "'";
  }
  if (count == 0)
    return nullptr;
  return makeStatusF(KILN_FAILED_PRECONDITION,
                     "%s: %s %s %s never set; set every input with kiln_session_set_input, bind "
                     "it with kiln_session_bind_input or write it through "
                     "kiln_session_input_device_ptr before running",
                     function, count == 1 ? "input" : "inputs", unset.c_str(),
                     count == 1 ? "was" : "were");
}

/// Finds `name` among the artifact's inputs (isInput) or outputs and checks `bytes` against it.
kiln_status_t lookupTensor(const kiln_session &session, bool isInput, const char *name,
                           size_t bytes, bool checkBytes, size_t &index) {
  const kiln_artifact &artifact = *session.artifact;
  if (!name)
    return makeStatus(KILN_INVALID_ARGUMENT, "tensor name must be non-NULL");
  KILN_RETURN_IF_ERROR(isInput ? kiln_artifact_find_input(&artifact, name, &index)
                               : kiln_artifact_find_output(&artifact, name, &index));
  const TensorDesc &tensor = isInput ? artifact.inputs[index] : artifact.outputs[index];
  if (checkBytes && bytes != tensor.byteSize)
    return makeStatusF(
        KILN_INVALID_ARGUMENT, "%s '%s' is %llu bytes (%s, %zu elements) but %zu bytes were given",
        isInput ? "input" : "output", name, static_cast<unsigned long long>(tensor.byteSize),
        lookupDType(tensor.dtype)->name,
        static_cast<size_t>(tensor.byteSize / lookupDType(tensor.dtype)->byteSize), bytes);
  return nullptr;
}

/// Owns CUDA events and destroys them (context must be current then).
struct EventSet {
  const CudaSymbols &cu;
  std::vector<CUevent> events;
  EventSet(const CudaSymbols &cu, size_t count) : cu(cu), events(count, nullptr) {}
  ~EventSet() {
    for (CUevent event : events)
      if (event)
        cu.cuEventDestroy(event);
  }
  /// Creates every event (CU_EVENT_DEFAULT, timing enabled).
  kiln_status_t create() {
    for (CUevent &event : events)
      KILN_CU_RETURN_IF_ERROR(cu, cuEventCreate(&event, CU_EVENT_DEFAULT));
    return nullptr;
  }
};

/// Start and end (ms after the run's first event) of every launch and collective of the last
/// profiled run, for kiln_session_profile_timeline; any pointer may be NULL.
struct TimelineOut {
  float *launchStart = nullptr, *launchEnd = nullptr;
  float *collectiveStart = nullptr, *collectiveEnd = nullptr;
};

/// Shared body of kiln_session_profile, kiln_session_profile_collectives and
/// kiln_session_profile_timeline: one untimed warm-up run, then `iterations` runs of the
/// schedule with plain launches (never the CUDA graph), an event before the first entry and
/// after every entry; writes the median time of launch i to outLaunch[i] and of collective c to
/// outCollective[c] (when non-NULL), in ms, and the last run's timeline to `timeline` (when
/// non-NULL). Context must be current.
kiln_status_t profileSchedule(kiln_session &session, size_t iterations, float *outLaunch,
                              float *outCollective, const char *function,
                              const TimelineOut *timeline = nullptr) {
  const CudaSymbols &cu = *session.cu;
  const kiln_artifact &artifact = *session.artifact;
  KILN_RETURN_IF_ERROR(waitForRuns(session, function));
  // Plain launches only: profiling never captures or uses the CUDA graph.
  session.lastRunStream = session.stream;
  KILN_RETURN_IF_ERROR(failRun(session, enqueueSchedule(session, session.stream), function));
  KILN_RETURN_IF_ERROR(waitStream(session, session.stream, function));

  std::vector<ScheduleEntry> order = scheduleOrder(artifact);
  // One event before the first entry and one after each entry.
  EventSet events(cu, order.size() + 1);
  KILN_RETURN_IF_ERROR(events.create());
  std::vector<std::vector<float>> samples(order.size(), std::vector<float>(iterations));
  for (size_t it = 0; it < iterations; ++it) {
    auto enqueueTimedRun = [&]() -> kiln_status_t {
      KILN_CU_RETURN_IF_ERROR(cu, cuEventRecord(events.events[0], session.stream));
      for (size_t k = 0; k < order.size(); ++k) {
        KILN_RETURN_IF_ERROR(enqueueEntry(session, order[k], session.stream));
        KILN_CU_RETURN_IF_ERROR(cu, cuEventRecord(events.events[k + 1], session.stream));
      }
      return nullptr;
    };
    KILN_RETURN_IF_ERROR(failRun(session, enqueueTimedRun(), function));
    KILN_RETURN_IF_ERROR(waitEvent(session, events.events.back(), function));
    for (size_t k = 0; k < order.size(); ++k)
      KILN_CU_RETURN_IF_ERROR(
          cu, cuEventElapsedTime(&samples[k][it], events.events[k], events.events[k + 1]));
    if (timeline && it + 1 == iterations) {
      // Entry k runs between events k and k + 1; times relative to event 0.
      float start = 0;
      for (size_t k = 0; k < order.size(); ++k) {
        float end = 0;
        KILN_CU_RETURN_IF_ERROR(cu,
                                cuEventElapsedTime(&end, events.events[0], events.events[k + 1]));
        float *starts = order[k].collective ? timeline->collectiveStart : timeline->launchStart;
        float *ends = order[k].collective ? timeline->collectiveEnd : timeline->launchEnd;
        if (starts)
          starts[order[k].index] = start;
        if (ends)
          ends[order[k].index] = end;
        start = end;
      }
    }
  }
  for (size_t k = 0; k < order.size(); ++k) {
    std::sort(samples[k].begin(), samples[k].end());
    float median = samples[k][iterations / 2];
    if (!order[k].collective)
      outLaunch[order[k].index] = median;
    else if (outCollective)
      outCollective[order[k].index] = median;
  }
  return nullptr;
}

/// Fails with KILN_FAILED_PRECONDITION when input `index` is bound to a caller's buffer: `function`
/// (a kiln_session_set_input variant) would write the session's own buffer, which runs do not
/// read while the binding lasts.
kiln_status_t checkInputNotBound(const kiln_session &session, size_t index, const char *function) {
  if (!session.boundInputs[index])
    return nullptr;
  return makeStatusF(KILN_FAILED_PRECONDITION,
                     "%s: input '%s' is bound to the caller's device buffer 0x%llx "
                     "(kiln_session_bind_input), which runs read instead; write that buffer, or "
                     "call kiln_session_unbind_input first",
                     function, session.artifact->inputs[index].name.c_str(),
                     static_cast<unsigned long long>(session.boundInputs[index]));
}

/// Checks with the driver that [devicePtr, devicePtr + bytes) lies in one device allocation
/// (cuPointerGetAttribute: CU_POINTER_ATTRIBUTE_RANGE_START_ADDR and _RANGE_SIZE), so a host
/// pointer or a too small buffer is an error here rather than a fault inside a kernel. `what` is
/// "input 'x'" or "output 'y'". Context must be current.
kiln_status_t checkDeviceRange(const kiln_session &session, uint64_t devicePtr, size_t bytes,
                               const char *function, const std::string &what) {
  if (bytes == 0)
    return nullptr;
  const CudaSymbols &cu = *session.cu;
  CUdeviceptr start = 0;
  size_t size = 0;
  CUresult result = cu.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                             static_cast<CUdeviceptr>(devicePtr));
  if (result == CUDA_SUCCESS)
    result = cu.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                      static_cast<CUdeviceptr>(devicePtr));
  if (result != CUDA_SUCCESS) {
    const char *name = nullptr;
    cu.cuGetErrorName(result, &name);
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "%s: %s: 0x%llx is not device memory known to the CUDA driver "
                       "(cuPointerGetAttribute: %s); bind memory from cuMemAlloc, "
                       "cuMemAllocAsync or a CUDA allocator",
                       function, what.c_str(), static_cast<unsigned long long>(devicePtr),
                       name ? name : "unknown error");
  }
  uint64_t end = static_cast<uint64_t>(start) + size;
  if (devicePtr < start || devicePtr >= end || end - devicePtr < bytes)
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "%s: %s needs %zu bytes at 0x%llx, but the device allocation holding it "
                       "(0x%llx, %zu bytes) ends %llu bytes after that address",
                       function, what.c_str(), bytes, static_cast<unsigned long long>(devicePtr),
                       static_cast<unsigned long long>(start), size,
                       static_cast<unsigned long long>(
                           devicePtr < start || devicePtr >= end ? 0 : end - devicePtr));
  return nullptr;
}

} // namespace

kiln_status_t checkBinding(const kiln_artifact &artifact, bool isInput, const char *name,
                           uint64_t devicePtr, size_t bytes, const char *function, size_t &index) {
  index = 0;
  if (!name)
    return makeStatusF(KILN_INVALID_ARGUMENT, "%s: name must be non-NULL", function);
  KILN_RETURN_IF_ERROR(annotateStatus(isInput ? kiln_artifact_find_input(&artifact, name, &index)
                                              : kiln_artifact_find_output(&artifact, name, &index),
                                      std::string(function) + ": "));
  const TensorDesc &tensor = isInput ? artifact.inputs[index] : artifact.outputs[index];
  const char *kind = isInput ? "input" : "output";
  if (bytes != tensor.byteSize)
    return makeStatusF(
        KILN_INVALID_ARGUMENT,
        "%s: %s '%s' is %llu bytes (%s, %zu elements) but %zu bytes were given", function, kind,
        name, static_cast<unsigned long long>(tensor.byteSize), lookupDType(tensor.dtype)->name,
        static_cast<size_t>(tensor.byteSize / lookupDType(tensor.dtype)->byteSize), bytes);
  if (devicePtr == 0)
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "%s: %s '%s': device_ptr is 0; to go back to the session's own buffer, "
                       "call kiln_session_unbind_%s",
                       function, kind, name, kind);
  if (devicePtr % kBindingAlignment != 0)
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "%s: %s '%s': device pointer 0x%llx is not a multiple of %llu bytes; the "
                       "kernels assume the alignment of the session's own buffers (cuMemAlloc "
                       "returns such addresses)",
                       function, kind, name, static_cast<unsigned long long>(devicePtr),
                       static_cast<unsigned long long>(kBindingAlignment));
  return nullptr;
}

bool planOutputRedirect(const kiln_artifact &artifact, size_t output,
                        std::vector<ArgRedirect> &redirects) {
  redirects.clear();
  const BufferRefDesc &range = artifact.outputs[output].location;
  if (range.segment != Segment::Arena || range.size == 0)
    return false;
  // Whether arena range `ref` shares a byte with the output's range.
  auto overlaps = [&range](const BufferRefDesc &ref) {
    return ref.segment == Segment::Arena && ref.size > 0 &&
           ref.offset < range.offset + range.size && range.offset < ref.offset + ref.size;
  };
  for (size_t o = 0; o < artifact.outputs.size(); ++o)
    if (o != output && overlaps(artifact.outputs[o].location))
      return false;
  for (const CollectiveDesc &collective : artifact.collectives)
    if (overlaps(collective.input) || overlaps(collective.output))
      return false;
  for (size_t i = 0; i < artifact.launches.size(); ++i) {
    const std::vector<BufferRefDesc> &args = artifact.launches[i].args;
    for (size_t a = 0; a < args.size(); ++a) {
      if (!overlaps(args[a]))
        continue;
      if (args[a].offset < range.offset ||
          args[a].offset + args[a].size > range.offset + range.size) {
        redirects.clear();
        return false;
      }
      redirects.push_back({i, a, args[a].offset - range.offset});
    }
  }
  return !redirects.empty();
}

kiln_status_t checkTensorMapEncoder(const kiln_artifact &artifact, bool haveEncoder) {
  if (haveEncoder)
    return nullptr;
  for (size_t i = 0; i < artifact.launches.size(); ++i) {
    const LaunchDesc &launch = artifact.launches[i];
    if (launch.tensorMaps.empty())
      continue;
    return makeStatusF(KILN_UNAVAILABLE,
                       "'%s': launch %zu ('%s') takes %zu tensor map%s (TMA descriptors), which "
                       "the runtime encodes with cuTensorMapEncodeTiled; this CUDA driver (%s) "
                       "lacks it: it needs a CUDA 12.0 or newer driver",
                       artifact.path.c_str(), i, launch.function.c_str(), launch.tensorMaps.size(),
                       launch.tensorMaps.size() == 1 ? "" : "s", kCudaDriverLibrary);
  }
  return nullptr;
}

kiln_status_t checkTensorMapBinding(const kiln_artifact &artifact, bool isInput, size_t index,
                                    uint64_t devicePtr, const std::vector<ArgRedirect> &redirects,
                                    const char *function) {
  const TensorDesc &tensor = isInput ? artifact.inputs[index] : artifact.outputs[index];
  // Checks the maps of launch `i` on argument `arg`, which would start `argOffset` bytes after
  // devicePtr.
  auto check = [&](size_t i, size_t arg, uint64_t argOffset) -> kiln_status_t {
    const LaunchDesc &launch = artifact.launches[i];
    for (size_t m = 0; m < launch.tensorMaps.size(); ++m) {
      const TensorMapDesc &map = launch.tensorMaps[m];
      if (map.arg != arg)
        continue;
      uint64_t address = devicePtr + argOffset + map.offset;
      if (address % kTensorMapAddressAlignment == 0)
        continue;
      return makeStatusF(KILN_INVALID_ARGUMENT,
                         "%s: %s '%s': launch %zu ('%s') tensor map %zu would address 0x%llx "
                         "(device pointer 0x%llx + %llu), which is not a multiple of %llu bytes "
                         "as TMA requires",
                         function, isInput ? "input" : "output", tensor.name.c_str(), i,
                         launch.function.c_str(), m, static_cast<unsigned long long>(address),
                         static_cast<unsigned long long>(devicePtr),
                         static_cast<unsigned long long>(argOffset + map.offset),
                         static_cast<unsigned long long>(kTensorMapAddressAlignment));
    }
    return nullptr;
  };
  if (!isInput) {
    for (const ArgRedirect &r : redirects)
      KILN_RETURN_IF_ERROR(check(r.launch, r.arg, r.offset));
    return nullptr;
  }
  for (size_t i = 0; i < artifact.launches.size(); ++i) {
    const std::vector<BufferRefDesc> &args = artifact.launches[i].args;
    for (size_t a = 0; a < args.size(); ++a)
      if (args[a].segment == Segment::Input && args[a].index == index)
        KILN_RETURN_IF_ERROR(check(i, a, args[a].offset));
  }
  return nullptr;
}

} // namespace kiln

using kiln::makeStatus;
using kiln::makeStatusF;

extern "C" {

void kiln_session_params_initialize(kiln_session_params_t *params) {
  if (!params)
    return;
  params->device_ordinal = 0;
  params->poison_arena = 0;
  params->use_cuda_graph = 1;
  params->tp_id = nullptr;
  params->tp_timeout_ms = 300000;
}

kiln_status_t kiln_session_create(kiln_artifact_t *artifact, const kiln_session_params_t *params,
                                  kiln_session_t **out_session) {
  if (out_session)
    *out_session = nullptr;
  if (!artifact || !out_session)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_session_create: artifact and out_session must be non-NULL");
  kiln_session_params_t defaults;
  kiln_session_params_initialize(&defaults);
  if (!params)
    params = &defaults;
  kiln_session *session = new (std::nothrow) kiln_session();
  if (!session)
    return makeStatus(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  kiln_artifact_retain(artifact);
  session->artifact = artifact;
  session->useCudaGraph = params->use_cuda_graph != 0;
  kiln_status_t status = nullptr;
  if (artifact->tpWorldSize > 1) {
    // Checked before the driver is loaded, so these errors need no GPU.
    session->tp.path = artifact->path;
    session->tp.rank = artifact->tpRank;
    session->tp.worldSize = artifact->tpWorldSize;
    session->tp.device = params->device_ordinal;
    session->tp.timeoutMs = params->tp_timeout_ms;
    if (!params->tp_id)
      status = makeStatusF(KILN_INVALID_ARGUMENT,
                           "%s: kiln_session_create: a tensor-parallel rank artifact needs "
                           "kiln_session_params_t::tp_id, the group id (kiln_tp_id_create) that "
                           "every rank of the group is given",
                           session->tp.describe().c_str());
    else
      status = kiln::createCommunicator(session->tp, session->comm);
  }
  if (!status)
    status = kiln::initialize(*session, *params);
  if (status) {
    // A rank that fails after joining its group must not leave NCCL kernels or a half-formed
    // communicator behind: the destructor aborts instead of finalizing.
    session->aborted = session->comm != nullptr;
    delete session;
    return status;
  }
  session->inputProvided.resize(artifact->inputs.size());
  // A KV-cache pool is state the step itself writes before it reads (slots below seq_lens):
  // it needs no value from the application; the sampling inputs start greedy (zeros).
  for (size_t i = 0; i < artifact->inputs.size(); ++i)
    session->inputProvided[i] = artifact->inputs[i].byteSize == 0 ||
                                artifact->inputs[i].role == KILN_INPUT_ROLE_KEY_CACHE ||
                                artifact->inputs[i].role == KILN_INPUT_ROLE_VALUE_CACHE ||
                                kiln::isSamplingInput(artifact->inputs[i].role);
  *out_session = session;
  return nullptr;
}

void kiln_session_release(kiln_session_t *session) { delete session; }

kiln_artifact_t *kiln_session_artifact(const kiln_session_t *session) {
  return session ? session->artifact : nullptr;
}

kiln_status_t kiln_session_set_input(kiln_session_t *session, const char *name,
                                     const void *host_data, size_t bytes) {
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_set_input"));
  size_t index = 0;
  KILN_RETURN_IF_ERROR(kiln::lookupTensor(*session, /*isInput=*/true, name, bytes, true, index));
  KILN_RETURN_IF_ERROR(kiln::checkInputNotBound(*session, index, "kiln_session_set_input"));
  if (bytes == 0)
    return nullptr;
  if (!host_data)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_session_set_input: host_data is NULL");
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::waitForRuns(*session, "kiln_session_set_input"));
  KILN_CU_RETURN_IF_ERROR(
      cu, cuMemcpyHtoDAsync(session->inputs[index], host_data, bytes, session->stream));
  KILN_RETURN_IF_ERROR(kiln::waitStream(*session, session->stream, "kiln_session_set_input"));
  session->inputProvided[index] = true;
  return nullptr;
}

kiln_status_t kiln_session_set_input_async(kiln_session_t *session, const char *name,
                                           const void *host_data, size_t bytes, void *stream) {
  const char *const function = "kiln_session_set_input_async";
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, function));
  size_t index = 0;
  KILN_RETURN_IF_ERROR(kiln::lookupTensor(*session, /*isInput=*/true, name, bytes, true, index));
  KILN_RETURN_IF_ERROR(kiln::checkInputNotBound(*session, index, function));
  if (bytes == 0)
    return nullptr;
  if (!host_data)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_session_set_input_async: host_data is NULL");
  CUstream target = stream ? static_cast<CUstream>(stream) : session->stream;
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::orderOnStream(*session, target, function));
  KILN_CU_RETURN_IF_ERROR(cu, cuMemcpyHtoDAsync(session->inputs[index], host_data, bytes, target));
  session->lastRunStream = target;
  session->inputProvided[index] = true;
  return nullptr;
}

kiln_status_t kiln_session_get_output_async(kiln_session_t *session, const char *name,
                                            void *host_data, size_t bytes, void *stream) {
  const char *const function = "kiln_session_get_output_async";
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, function));
  size_t index = 0;
  KILN_RETURN_IF_ERROR(kiln::lookupTensor(*session, /*isInput=*/false, name, bytes, true, index));
  if (bytes == 0)
    return nullptr;
  if (!host_data)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_session_get_output_async: host_data is NULL");
  CUstream target = stream ? static_cast<CUstream>(stream) : session->stream;
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::orderOnStream(*session, target, function));
  CUdeviceptr source = kiln::outputAddress(*session, index);
  KILN_CU_RETURN_IF_ERROR(cu, cuMemcpyDtoHAsync(host_data, source, bytes, target));
  session->lastRunStream = target;
  return nullptr;
}

kiln_status_t kiln_session_run(kiln_session_t *session, void *stream) {
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_run"));
  KILN_RETURN_IF_ERROR(kiln::checkInputsProvided(*session, "kiln_session_run"));
  CUstream target = stream ? static_cast<CUstream>(stream) : session->stream;
  kiln::ContextScope scope(*session->cu, session->context);
  // A run on a different stream than the previous one must not overlap it (shared arena).
  if (session->lastRunStream != target)
    KILN_RETURN_IF_ERROR(kiln::waitStream(*session, session->lastRunStream, "kiln_session_run"));
  // Capture (first run only) before the bookkeeping below, so a failed capture leaves no run
  // recorded.
  KILN_RETURN_IF_ERROR(kiln::failRun(*session, kiln::prepareRun(*session), "kiln_session_run"));
  session->lastRunStream = target;
  return kiln::failRun(*session, kiln::enqueueRun(*session, target), "kiln_session_run");
}

int kiln_session_has_cuda_graph(const kiln_session_t *session) {
  return session && session->graphExec ? 1 : 0;
}

kiln_status_t kiln_session_synchronize(kiln_session_t *session) {
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_synchronize"));
  kiln::ContextScope scope(*session->cu, session->context);
  return kiln::waitForRuns(*session, "kiln_session_synchronize");
}

kiln_status_t kiln_session_get_output(kiln_session_t *session, const char *name, void *host_data,
                                      size_t bytes) {
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_get_output"));
  size_t index = 0;
  KILN_RETURN_IF_ERROR(kiln::lookupTensor(*session, /*isInput=*/false, name, bytes, true, index));
  if (bytes == 0)
    return nullptr;
  if (!host_data)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_session_get_output: host_data is NULL");
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::waitForRuns(*session, "kiln_session_get_output"));
  CUdeviceptr source = kiln::outputAddress(*session, index);
  KILN_CU_RETURN_IF_ERROR(cu, cuMemcpyDtoHAsync(host_data, source, bytes, session->stream));
  return kiln::waitStream(*session, session->stream, "kiln_session_get_output");
}

kiln_status_t kiln_session_get_output_range(kiln_session_t *session, const char *name,
                                            size_t offset, void *host_data, size_t bytes) {
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_get_output_range"));
  size_t index = 0;
  KILN_RETURN_IF_ERROR(kiln::lookupTensor(*session, /*isInput=*/false, name, 0, false, index));
  const uint64_t size = session->artifact->outputs[index].byteSize;
  if (offset > size || bytes > size - offset)
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "kiln_session_get_output_range: bytes [%zu, %zu + %zu) are not inside "
                       "output '%s' (%llu bytes)",
                       offset, offset, bytes, name, static_cast<unsigned long long>(size));
  if (bytes == 0)
    return nullptr;
  if (!host_data)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_session_get_output_range: host_data is NULL");
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::waitForRuns(*session, "kiln_session_get_output_range"));
  CUdeviceptr source = kiln::outputAddress(*session, index) + offset;
  KILN_CU_RETURN_IF_ERROR(cu, cuMemcpyDtoHAsync(host_data, source, bytes, session->stream));
  return kiln::waitStream(*session, session->stream, "kiln_session_get_output_range");
}

kiln_status_t kiln_session_input_device_ptr(kiln_session_t *session, const char *name,
                                            uint64_t *out_device_ptr) {
  if (out_device_ptr)
    *out_device_ptr = 0;
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_input_device_ptr"));
  if (!out_device_ptr)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_session_input_device_ptr: out_device_ptr is NULL");
  size_t index = 0;
  KILN_RETURN_IF_ERROR(kiln::lookupTensor(*session, /*isInput=*/true, name, 0, false, index));
  if (session->boundInputs[index]) {
    // Runs read the caller's buffer; the session's own one stays as it was.
    *out_device_ptr = session->boundInputs[index];
    return nullptr;
  }
  *out_device_ptr = session->inputs[index];
  // The application fills the buffer itself from here on.
  session->inputProvided[index] = true;
  return nullptr;
}

kiln_status_t kiln_session_output_device_ptr(kiln_session_t *session, const char *name,
                                             uint64_t *out_device_ptr) {
  if (out_device_ptr)
    *out_device_ptr = 0;
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_output_device_ptr"));
  if (!out_device_ptr)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_session_output_device_ptr: out_device_ptr is NULL");
  size_t index = 0;
  KILN_RETURN_IF_ERROR(kiln::lookupTensor(*session, /*isInput=*/false, name, 0, false, index));
  *out_device_ptr = kiln::outputAddress(*session, index);
  return nullptr;
}

namespace kiln {
namespace {

/// kiln_session_bind_input/_output: checks the binding (name, size, alignment, the device range
/// of the caller's allocation) before recording it and patching the arguments that read the
/// tensor. `function` names the C entry point in errors.
kiln_status_t bindTensor(kiln_session_t *session, bool isInput, const char *name,
                         uint64_t device_ptr, size_t bytes, const char *function) {
  KILN_RETURN_IF_ERROR(checkSession(session, function));
  size_t index = 0;
  KILN_RETURN_IF_ERROR(
      checkBinding(*session->artifact, isInput, name, device_ptr, bytes, function, index));
  ContextScope scope(*session->cu, session->context);
  const std::string &tensor =
      isInput ? session->artifact->inputs[index].name : session->artifact->outputs[index].name;
  std::string what = (isInput ? "input '" : "output '") + tensor + "'";
  KILN_RETURN_IF_ERROR(checkDeviceRange(*session, device_ptr, bytes, function, what));
  static const std::vector<ArgRedirect> kNoRedirects;
  KILN_RETURN_IF_ERROR(
      checkTensorMapBinding(*session->artifact, isInput, index, device_ptr,
                            isInput ? kNoRedirects : session->outputRedirects[index], function));
  return rebind(*session, isInput, index, static_cast<CUdeviceptr>(device_ptr),
                std::string(function) + ": " + what + ": ");
}

/// kiln_session_unbind_input/_output: back to the session's own buffer (a no-op when unbound).
kiln_status_t unbindTensor(kiln_session_t *session, bool isInput, const char *name,
                           const char *function) {
  KILN_RETURN_IF_ERROR(checkSession(session, function));
  size_t index = 0;
  KILN_RETURN_IF_ERROR(lookupTensor(*session, isInput, name, 0, false, index));
  CUdeviceptr &bound = isInput ? session->boundInputs[index] : session->boundOutputs[index];
  if (!bound)
    return nullptr;
  ContextScope scope(*session->cu, session->context);
  const kiln_artifact &artifact = *session->artifact;
  std::string what = std::string(function) + ": " + (isInput ? "input '" : "output '") +
                     (isInput ? artifact.inputs[index].name : artifact.outputs[index].name) + "': ";
  return rebind(*session, isInput, index, 0, what);
}

} // namespace
} // namespace kiln

kiln_status_t kiln_session_bind_input(kiln_session_t *session, const char *name,
                                      uint64_t device_ptr, size_t bytes) {
  return kiln::bindTensor(session, /*isInput=*/true, name, device_ptr, bytes,
                          "kiln_session_bind_input");
}

kiln_status_t kiln_session_unbind_input(kiln_session_t *session, const char *name) {
  return kiln::unbindTensor(session, /*isInput=*/true, name, "kiln_session_unbind_input");
}

kiln_status_t kiln_session_bind_output(kiln_session_t *session, const char *name,
                                       uint64_t device_ptr, size_t bytes) {
  return kiln::bindTensor(session, /*isInput=*/false, name, device_ptr, bytes,
                          "kiln_session_bind_output");
}

kiln_status_t kiln_session_unbind_output(kiln_session_t *session, const char *name) {
  return kiln::unbindTensor(session, /*isInput=*/false, name, "kiln_session_unbind_output");
}

kiln_status_t kiln_session_weights_device_ptr(const kiln_session_t *session,
                                              uint64_t *out_device_ptr) {
  if (out_device_ptr)
    *out_device_ptr = 0;
  if (!session || !out_device_ptr)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_session_weights_device_ptr: session and out_device_ptr must be "
                      "non-NULL");
  *out_device_ptr = session->weights;
  return nullptr;
}

kiln_status_t kiln_session_benchmark(kiln_session_t *session, size_t warmup_iterations,
                                     size_t iterations, float *out_ms_per_iteration) {
  const char *const function = "kiln_session_benchmark";
  if (out_ms_per_iteration)
    std::memset(out_ms_per_iteration, 0, iterations * sizeof(float));
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, function));
  if (iterations == 0 || !out_ms_per_iteration)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_session_benchmark: iterations must be > 0 and out_ms_per_iteration "
                      "non-NULL");
  KILN_RETURN_IF_ERROR(kiln::checkInputsProvided(*session, function));
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::waitForRuns(*session, function));
  // Capture the graph first (if used) so that no timed run includes the capture.
  KILN_RETURN_IF_ERROR(kiln::failRun(*session, kiln::prepareRun(*session), function));
  session->lastRunStream = session->stream;
  for (size_t i = 0; i < warmup_iterations; ++i)
    KILN_RETURN_IF_ERROR(
        kiln::failRun(*session, kiln::enqueueRun(*session, session->stream), function));
  KILN_RETURN_IF_ERROR(kiln::waitStream(*session, session->stream, function));

  kiln::EventSet events(cu, 2);
  KILN_RETURN_IF_ERROR(events.create());
  for (size_t i = 0; i < iterations; ++i) {
    auto enqueueTimedRun = [&]() -> kiln_status_t {
      KILN_CU_RETURN_IF_ERROR(cu, cuEventRecord(events.events[0], session->stream));
      KILN_RETURN_IF_ERROR(kiln::enqueueRun(*session, session->stream));
      KILN_CU_RETURN_IF_ERROR(cu, cuEventRecord(events.events[1], session->stream));
      return nullptr;
    };
    KILN_RETURN_IF_ERROR(kiln::failRun(*session, enqueueTimedRun(), function));
    KILN_RETURN_IF_ERROR(kiln::waitEvent(*session, events.events[1], function));
    KILN_CU_RETURN_IF_ERROR(
        cu, cuEventElapsedTime(&out_ms_per_iteration[i], events.events[0], events.events[1]));
  }
  return nullptr;
}

kiln_status_t kiln_session_profile_collectives(kiln_session_t *session, size_t iterations,
                                               float *out_ms_per_launch,
                                               float *out_ms_per_collective) {
  const char *const function = "kiln_session_profile_collectives";
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, function));
  const size_t launches = session->artifact->launches.size();
  const size_t collectives = session->artifact->collectives.size();
  if (out_ms_per_launch)
    std::memset(out_ms_per_launch, 0, launches * sizeof(float));
  if (out_ms_per_collective)
    std::memset(out_ms_per_collective, 0, collectives * sizeof(float));
  if (iterations == 0 || !out_ms_per_launch || (collectives > 0 && !out_ms_per_collective))
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "%s: iterations must be > 0, out_ms_per_launch non-NULL and "
                       "out_ms_per_collective non-NULL when the artifact has collectives (it has "
                       "%zu)",
                       function, collectives);
  KILN_RETURN_IF_ERROR(kiln::checkInputsProvided(*session, function));
  kiln::ContextScope scope(*session->cu, session->context);
  return kiln::profileSchedule(*session, iterations, out_ms_per_launch, out_ms_per_collective,
                               function);
}

kiln_status_t kiln_session_profile(kiln_session_t *session, size_t iterations,
                                   float *out_ms_per_launch) {
  const char *const function = "kiln_session_profile";
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, function));
  const size_t launches = session->artifact->launches.size();
  if (out_ms_per_launch)
    std::memset(out_ms_per_launch, 0, launches * sizeof(float));
  if (iterations == 0 || !out_ms_per_launch)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_session_profile: iterations must be > 0 and out_ms_per_launch "
                      "non-NULL");
  KILN_RETURN_IF_ERROR(kiln::checkInputsProvided(*session, function));
  kiln::ContextScope scope(*session->cu, session->context);
  return kiln::profileSchedule(*session, iterations, out_ms_per_launch, nullptr, function);
}

kiln_status_t kiln_session_profile_timeline(kiln_session_t *session, float *out_launch_start_ms,
                                            float *out_launch_end_ms,
                                            float *out_collective_start_ms,
                                            float *out_collective_end_ms) {
  const char *const function = "kiln_session_profile_timeline";
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, function));
  const size_t launches = session->artifact->launches.size();
  const size_t collectives = session->artifact->collectives.size();
  for (float *out : {out_launch_start_ms, out_launch_end_ms})
    if (out)
      std::memset(out, 0, launches * sizeof(float));
  for (float *out : {out_collective_start_ms, out_collective_end_ms})
    if (out)
      std::memset(out, 0, collectives * sizeof(float));
  if (!out_launch_start_ms || !out_launch_end_ms ||
      (collectives > 0 && (!out_collective_start_ms || !out_collective_end_ms)))
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "%s: the launch start/end arrays must be non-NULL, and the collective "
                       "start/end arrays too when the artifact has collectives (it has %zu)",
                       function, collectives);
  KILN_RETURN_IF_ERROR(kiln::checkInputsProvided(*session, function));
  kiln::ContextScope scope(*session->cu, session->context);
  std::vector<float> launchMs(launches), collectiveMs(collectives);
  kiln::TimelineOut timeline;
  timeline.launchStart = out_launch_start_ms;
  timeline.launchEnd = out_launch_end_ms;
  timeline.collectiveStart = out_collective_start_ms;
  timeline.collectiveEnd = out_collective_end_ms;
  return kiln::profileSchedule(*session, 1, launchMs.data(), collectiveMs.data(), function,
                               &timeline);
}

} // extern "C"

namespace kiln {
const CudaSymbols &sessionSymbols(const kiln_session_t &session) { return *session.cu; }
CUcontext sessionContext(const kiln_session_t &session) { return session.context; }
void forgetStream(kiln_session_t &session, CUstream stream) {
  if (!stream || session.lastRunStream != stream || !session.cu)
    return;
  ContextScope scope(*session.cu, session.context);
  session.cu->cuStreamSynchronize(stream);
  session.lastRunStream = session.stream;
}
} // namespace kiln
