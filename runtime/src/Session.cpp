//===- Session.cpp - Running an artifact on one CUDA device ---------------===//
//
// Implements kiln_session_*: a session instantiates a verified artifact on one device.
// Creation, in order:
//   1. load the CUDA driver with dlopen (CudaSymbols), cuInit, find the device;
//   2. retain the device's primary context (made current only around each API call);
//   3. load every module: the cubin whose arch equals the device's compute capability, else the
//      PTX through the driver JIT (its error log goes into the status);
//   4. resolve every launch's kernel; raise the dynamic shared memory limit where a launch needs
//      more than the default 48 KiB;
//   5. allocate the arena, the weight segment (uploaded once) and one buffer per input, and
//      precompute each launch's argument array (segment base + offset).
// A run enqueues the launch list on a stream: with use_cuda_graph (the default) the first run
// captures the list into a CUDA graph on the session's own stream and instantiates it, and every
// run is one cuGraphLaunch of that graph; otherwise one cuLaunchKernel per launch. All device
// resources are released by kiln_session_release, also after a failed creation.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "CudaSymbols.h"
#include "DType.h"
#include "Status.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

namespace kiln {
namespace {

/// Dynamic shared memory a kernel may use without opting in (CU_FUNC_ATTRIBUTE_...).
constexpr uint32_t kDefaultSharedMemLimit = 48 * 1024;

/// Size of the JIT error log buffer captured when loading PTX.
constexpr size_t kJitLogBytes = 16 * 1024;

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

} // namespace
} // namespace kiln

/// The object behind kiln_session_t.
struct kiln_session {
  kiln_artifact_t *artifact = nullptr;
  std::unique_ptr<kiln::CudaSymbols> cu;
  CUdevice device = 0;
  bool contextRetained = false;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  /// Stream of the last run: the session's own stream until a kiln_session_run uses another.
  CUstream lastRunStream = nullptr;
  std::vector<CUmodule> modules;
  /// One kernel per launch.
  std::vector<CUfunction> functions;
  CUdeviceptr arena = 0;
  CUdeviceptr weights = 0;
  std::vector<CUdeviceptr> inputs;
  /// Per launch: the argument values (device addresses) and the pointers to them that
  /// cuLaunchKernel takes as kernelParams.
  std::vector<std::vector<CUdeviceptr>> argValues;
  std::vector<std::vector<void *>> argPointers;
  /// kiln_session_params_t::use_cuda_graph.
  bool useCudaGraph = true;
  /// The launch list captured and instantiated by the first run (null before it, and always
  /// without useCudaGraph). The graph bakes in the argument values above, i.e. the addresses of the
  /// arena, weights and input buffers, which are session-owned and fixed for the session's life,
  /// so it never goes stale. NOTE: if the API ever lets the caller bind its own device pointers
  /// for inputs or outputs, argValues change with every binding and graphExec must then be
  /// destroyed (cuGraphExecDestroy, after waiting for pending runs) and reset to null so that the
  /// next run re-captures and re-instantiates it, or be patched with
  /// cuGraphExecKernelNodeSetParams.
  CUgraphExec graphExec = nullptr;

  ~kiln_session();
};

kiln_session::~kiln_session() {
  if (cu && context) {
    kiln::ContextScope scope(*cu, context);
    if (scope.ok()) {
      if (lastRunStream != stream)
        cu->cuStreamSynchronize(lastRunStream);
      if (stream) {
        cu->cuStreamSynchronize(stream);
        cu->cuStreamDestroy(stream);
      }
      if (graphExec)
        cu->cuGraphExecDestroy(graphExec);
      for (CUdeviceptr input : inputs)
        if (input)
          cu->cuMemFree(input);
      if (weights)
        cu->cuMemFree(weights);
      if (arena)
        cu->cuMemFree(arena);
      for (CUmodule module : modules)
        if (module)
          cu->cuModuleUnload(module);
    }
  }
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
    return session.inputs[ref.index] + ref.offset;
  }
  return 0;
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

/// Steps 1-5 of session creation (see the file comment).
kiln_status_t initialize(kiln_session &session, const kiln_session_params_t &params) {
  int ordinal = params.device_ordinal;
  KILN_RETURN_IF_ERROR(CudaSymbols::load(kCudaDriverLibrary, session.cu));
  const CudaSymbols &cu = *session.cu;
  const kiln_artifact &artifact = *session.artifact;

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

  // 5. Memory, weights upload, argument arrays.
  KILN_RETURN_IF_ERROR(allocate(cu, artifact.arenaBytes, "activation arena", session.arena));
  KILN_RETURN_IF_ERROR(allocate(cu, artifact.weights.size, "weight segment", session.weights));
  session.inputs.assign(artifact.inputs.size(), 0);
  for (size_t i = 0; i < artifact.inputs.size(); ++i) {
    std::string what = "input '" + artifact.inputs[i].name + "'";
    KILN_RETURN_IF_ERROR(
        allocate(cu, artifact.inputs[i].byteSize, what.c_str(), session.inputs[i]));
  }
  if (artifact.weights.size) {
    KILN_CU_RETURN_IF_ERROR(
        cu, cuMemcpyHtoDAsync(session.weights, artifact.data + artifact.weights.offset,
                              static_cast<size_t>(artifact.weights.size), session.stream));
    KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session.stream));
  }
  if (params.poison_arena && session.arena) {
    KILN_CU_RETURN_IF_ERROR(cu, cuMemsetD8Async(session.arena, 0xFF,
                                                static_cast<size_t>(artifact.arenaBytes),
                                                session.stream));
    KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session.stream));
  }
  session.argValues.resize(artifact.launches.size());
  session.argPointers.resize(artifact.launches.size());
  for (size_t i = 0; i < artifact.launches.size(); ++i) {
    const LaunchDesc &launch = artifact.launches[i];
    std::vector<CUdeviceptr> &values = session.argValues[i];
    std::vector<void *> &pointers = session.argPointers[i];
    values.resize(launch.args.size());
    pointers.resize(launch.args.size());
    for (size_t a = 0; a < launch.args.size(); ++a) {
      values[a] = resolve(session, launch.args[a]);
      pointers[a] = &values[a];
    }
  }
  return nullptr;
}

/// Waits for the last run's stream and the session's stream. Context must be current.
kiln_status_t waitForRuns(kiln_session &session) {
  const CudaSymbols &cu = *session.cu;
  if (session.lastRunStream != session.stream)
    KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session.lastRunStream));
  KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session.stream));
  return nullptr;
}

/// Enqueues launch number `i` on `stream`. Context must be current.
kiln_status_t enqueueLaunch(kiln_session &session, size_t i, CUstream stream) {
  const CudaSymbols &cu = *session.cu;
  const LaunchDesc &launch = session.artifact->launches[i];
  CUresult result = cu.cuLaunchKernel(
      session.functions[i], launch.grid[0], launch.grid[1], launch.grid[2], launch.block[0],
      launch.block[1], launch.block[2], launch.sharedMemBytes, stream,
      session.argPointers[i].empty() ? nullptr : session.argPointers[i].data(), nullptr);
  if (result != CUDA_SUCCESS)
    return cu.makeError(result, "cuLaunchKernel", __FILE__, __LINE__,
                        formatString("launch %zu ('%s')", i, launch.function.c_str()));
  return nullptr;
}

/// Enqueues every launch on `stream`. Context must be current.
kiln_status_t enqueueLaunches(kiln_session &session, CUstream stream) {
  for (size_t i = 0; i < session.artifact->launches.size(); ++i)
    KILN_RETURN_IF_ERROR(enqueueLaunch(session, i, stream));
  return nullptr;
}

/// Captures the launch list into a CUDA graph and instantiates it into session.graphExec. The
/// capture runs on the session's own non-blocking stream (never the caller's stream, which may be
/// the legacy NULL stream or a stream the caller is itself capturing) in thread-local mode, so
/// other threads' CUDA calls are unaffected; nothing is executed. Context must be current.
kiln_status_t captureGraph(kiln_session &session) {
  const CudaSymbols &cu = *session.cu;
  KILN_CU_RETURN_IF_ERROR(
      cu, cuStreamBeginCapture(session.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  kiln_status_t launchStatus = enqueueLaunches(session, session.stream);
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
  // The executable graph is independent of the graph it was instantiated from.
  cu.cuGraphDestroy(graph);
  if (result != CUDA_SUCCESS)
    return cu.makeError(result, "cuGraphInstantiateWithFlags(&exec, graph, 0)", __FILE__, __LINE__,
                        formatString("while instantiating the CUDA graph of %zu launches",
                                     session.artifact->launches.size()));
  session.graphExec = exec;
  return nullptr;
}

/// Makes sure the graph exists when the session uses one (captures it on first use).
kiln_status_t prepareRun(kiln_session &session) {
  if (session.useCudaGraph && !session.graphExec)
    KILN_RETURN_IF_ERROR(captureGraph(session));
  return nullptr;
}

/// Enqueues one run on `stream`: one cuGraphLaunch, or every launch. Context must be current
/// and prepareRun must have succeeded (every caller prepares before its bookkeeping).
kiln_status_t enqueueRun(kiln_session &session, CUstream stream) {
  if (!session.useCudaGraph)
    return enqueueLaunches(session, stream);
  KILN_CU_RETURN_IF_ERROR(*session.cu, cuGraphLaunch(session.graphExec, stream));
  return nullptr;
}

/// Validates the common arguments of the per-tensor session calls.
kiln_status_t checkSession(const kiln_session *session, const char *function) {
  if (!session)
    return makeStatusF(KILN_INVALID_ARGUMENT, "%s: session must be non-NULL", function);
  return nullptr;
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

} // namespace
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
  kiln_status_t status = kiln::initialize(*session, *params);
  if (status) {
    delete session;
    return status;
  }
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
  if (bytes == 0)
    return nullptr;
  if (!host_data)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_session_set_input: host_data is NULL");
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::waitForRuns(*session));
  KILN_CU_RETURN_IF_ERROR(
      cu, cuMemcpyHtoDAsync(session->inputs[index], host_data, bytes, session->stream));
  KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session->stream));
  return nullptr;
}

kiln_status_t kiln_session_run(kiln_session_t *session, void *stream) {
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_run"));
  CUstream target = stream ? static_cast<CUstream>(stream) : session->stream;
  kiln::ContextScope scope(*session->cu, session->context);
  // A run on a different stream than the previous one must not overlap it (shared arena).
  if (session->lastRunStream != target)
    KILN_CU_RETURN_IF_ERROR(*session->cu, cuStreamSynchronize(session->lastRunStream));
  // Capture (first run only) before the bookkeeping below, so a failed capture leaves no run
  // recorded.
  KILN_RETURN_IF_ERROR(kiln::prepareRun(*session));
  session->lastRunStream = target;
  return kiln::enqueueRun(*session, target);
}

int kiln_session_has_cuda_graph(const kiln_session_t *session) {
  return session && session->graphExec ? 1 : 0;
}

kiln_status_t kiln_session_synchronize(kiln_session_t *session) {
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_synchronize"));
  kiln::ContextScope scope(*session->cu, session->context);
  return kiln::waitForRuns(*session);
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
  KILN_RETURN_IF_ERROR(kiln::waitForRuns(*session));
  CUdeviceptr source = kiln::resolve(*session, session->artifact->outputs[index].location);
  KILN_CU_RETURN_IF_ERROR(cu, cuMemcpyDtoHAsync(host_data, source, bytes, session->stream));
  KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session->stream));
  return nullptr;
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
  *out_device_ptr = session->inputs[index];
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
  *out_device_ptr = kiln::resolve(*session, session->artifact->outputs[index].location);
  return nullptr;
}

kiln_status_t kiln_session_benchmark(kiln_session_t *session, size_t warmup_iterations,
                                     size_t iterations, float *out_ms_per_iteration) {
  if (out_ms_per_iteration)
    std::memset(out_ms_per_iteration, 0, iterations * sizeof(float));
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_benchmark"));
  if (iterations == 0 || !out_ms_per_iteration)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_session_benchmark: iterations must be > 0 and out_ms_per_iteration "
                      "non-NULL");
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::waitForRuns(*session));
  // Capture the graph first (if used) so that no timed run includes the capture.
  KILN_RETURN_IF_ERROR(kiln::prepareRun(*session));
  session->lastRunStream = session->stream;
  for (size_t i = 0; i < warmup_iterations; ++i)
    KILN_RETURN_IF_ERROR(kiln::enqueueRun(*session, session->stream));
  KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session->stream));

  CUevent events[2] = {nullptr, nullptr};
  struct EventGuard {
    const kiln::CudaSymbols &cu;
    CUevent *events;
    ~EventGuard() {
      for (int i = 0; i < 2; ++i)
        if (events[i])
          cu.cuEventDestroy(events[i]);
    }
  } guard{cu, events};
  KILN_CU_RETURN_IF_ERROR(cu, cuEventCreate(&events[0], CU_EVENT_DEFAULT));
  KILN_CU_RETURN_IF_ERROR(cu, cuEventCreate(&events[1], CU_EVENT_DEFAULT));
  for (size_t i = 0; i < iterations; ++i) {
    KILN_CU_RETURN_IF_ERROR(cu, cuEventRecord(events[0], session->stream));
    KILN_RETURN_IF_ERROR(kiln::enqueueRun(*session, session->stream));
    KILN_CU_RETURN_IF_ERROR(cu, cuEventRecord(events[1], session->stream));
    KILN_CU_RETURN_IF_ERROR(cu, cuEventSynchronize(events[1]));
    KILN_CU_RETURN_IF_ERROR(cu, cuEventElapsedTime(&out_ms_per_iteration[i], events[0], events[1]));
  }
  return nullptr;
}

kiln_status_t kiln_session_profile(kiln_session_t *session, size_t iterations,
                                   float *out_ms_per_launch) {
  KILN_RETURN_IF_ERROR(kiln::checkSession(session, "kiln_session_profile"));
  const size_t launches = session->artifact->launches.size();
  if (out_ms_per_launch)
    std::memset(out_ms_per_launch, 0, launches * sizeof(float));
  if (iterations == 0 || !out_ms_per_launch)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_session_profile: iterations must be > 0 and out_ms_per_launch "
                      "non-NULL");
  const kiln::CudaSymbols &cu = *session->cu;
  kiln::ContextScope scope(cu, session->context);
  KILN_RETURN_IF_ERROR(kiln::waitForRuns(*session));
  // Plain launches only: profiling never captures or uses the CUDA graph.
  session->lastRunStream = session->stream;
  KILN_RETURN_IF_ERROR(kiln::enqueueLaunches(*session, session->stream)); // warm-up
  KILN_CU_RETURN_IF_ERROR(cu, cuStreamSynchronize(session->stream));

  // One event before the first launch and one after each launch.
  std::vector<CUevent> events(launches + 1, nullptr);
  struct EventGuard {
    const kiln::CudaSymbols &cu;
    std::vector<CUevent> &events;
    ~EventGuard() {
      for (CUevent e : events)
        if (e)
          cu.cuEventDestroy(e);
    }
  } guard{cu, events};
  for (CUevent &e : events)
    KILN_CU_RETURN_IF_ERROR(cu, cuEventCreate(&e, CU_EVENT_DEFAULT));
  std::vector<std::vector<float>> samples(launches, std::vector<float>(iterations));
  for (size_t it = 0; it < iterations; ++it) {
    KILN_CU_RETURN_IF_ERROR(cu, cuEventRecord(events[0], session->stream));
    for (size_t i = 0; i < launches; ++i) {
      KILN_RETURN_IF_ERROR(kiln::enqueueLaunch(*session, i, session->stream));
      KILN_CU_RETURN_IF_ERROR(cu, cuEventRecord(events[i + 1], session->stream));
    }
    KILN_CU_RETURN_IF_ERROR(cu, cuEventSynchronize(events[launches]));
    for (size_t i = 0; i < launches; ++i)
      KILN_CU_RETURN_IF_ERROR(cu, cuEventElapsedTime(&samples[i][it], events[i], events[i + 1]));
  }
  for (size_t i = 0; i < launches; ++i) {
    std::sort(samples[i].begin(), samples[i].end());
    out_ms_per_launch[i] = samples[i][iterations / 2];
  }
  return nullptr;
}

} // extern "C"
