//===- RuntimeModule.cpp - kiln._runtime: nanobind bindings of the runtime C API -===//
//
// The extension module under the `kiln` package's runtime half (python/kiln/_artifact.py and
// _session.py build the public API on it). It is a thin layer over kiln/runtime.h:
//   - Artifact, Session and Generator own their C handles (released in the destructor);
//   - every failed kiln_status_t becomes a StatusError, which the translator below raises as the
//     kiln.Error subclass of its code (python/kiln/_errors.py) with the runtime's exact message;
//   - tensors arrive as nb::ndarray (DLPack: numpy, torch, CuPy, JAX, ...). Host arrays are copied
//     (kiln_session_set_input / _get_output); device arrays are bound in place
//     (kiln_session_bind_input / _bind_output), no copy and no host round trip, and the session
//     keeps a reference to each bound array until it is unbound, rebound or the session is freed,
//     so a bound buffer can never be freed under a run;
//   - calls that wait for the GPU release the GIL.
// Shape, dtype, device and layout checks happen here, once, for every kind of tensor.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// A failed runtime call (or a check of this module), raised in Python as the kiln.Error subclass
/// of `code` carrying `message` unchanged.
struct StatusError : std::exception {
  StatusError(kiln_status_code_t code, std::string message)
      : code(code), message(std::move(message)) {}
  const char *what() const noexcept override { return message.c_str(); }
  kiln_status_code_t code;
  std::string message;
};

/// Throws StatusError for a non-NULL `status` (and frees it).
void check(kiln_status_t status) {
  if (!status)
    return;
  StatusError error(kiln_status_code(status), kiln_status_message(status));
  kiln_status_free(status);
  throw error;
}

[[noreturn]] void fail(kiln_status_code_t code, std::string message) {
  throw StatusError(code, std::move(message));
}

/// Raises a StatusError as kiln._errors.error_class(code name)(message).
void translateStatusError(const std::exception_ptr &error, void *) {
  try {
    std::rethrow_exception(error);
  } catch (const StatusError &e) {
    nb::object cls;
    try {
      cls = nb::module_::import_("kiln._errors").attr("error_class")(kiln_status_code_name(e.code));
    } catch (nb::python_error &) {
      PyErr_SetString(PyExc_RuntimeError, e.message.c_str());
      return;
    }
    nb::object instance = cls(e.message);
    PyErr_SetObject(cls.ptr(), instance.ptr());
  }
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// "[1, 8]" for a shape.
template <typename T> std::string formatShape(const T *dims, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i)
    s += (i ? ", " : "") + std::to_string(static_cast<long long>(dims[i]));
  return s + "]";
}

/// The kiln dtype of a DLPack dtype, if kiln has one (single-lane only).
std::optional<kiln_dtype_t> kilnDtype(nb::dlpack::dtype t) {
  using Code = nb::dlpack::dtype_code;
  if (t.lanes != 1)
    return std::nullopt;
  switch (static_cast<Code>(t.code)) {
  case Code::Float:
    if (t.bits == 32)
      return KILN_DTYPE_F32;
    if (t.bits == 16)
      return KILN_DTYPE_F16;
    break;
  case Code::Bfloat:
    if (t.bits == 16)
      return KILN_DTYPE_BF16;
    break;
  case Code::Int:
    switch (t.bits) {
    case 64:
      return KILN_DTYPE_I64;
    case 32:
      return KILN_DTYPE_I32;
    case 16:
      return KILN_DTYPE_I16;
    case 8:
      return KILN_DTYPE_I8;
    }
    break;
  case Code::UInt:
    switch (t.bits) {
    case 64:
      return KILN_DTYPE_U64;
    case 32:
      return KILN_DTYPE_U32;
    case 16:
      return KILN_DTYPE_U16;
    case 8:
      return KILN_DTYPE_U8;
    }
    break;
  case Code::Bool:
    if (t.bits == 8)
      return KILN_DTYPE_BOOL;
    break;
  default:
    break;
  }
  return std::nullopt;
}

/// Readable name of a DLPack dtype: kiln's name when kiln has it ("i32"), else NumPy's style
/// ("float64", "complex128", "int128"; "x4" appended for 4 lanes).
std::string dtypeName(nb::dlpack::dtype t) {
  using Code = nb::dlpack::dtype_code;
  if (std::optional<kiln_dtype_t> d = kilnDtype(t))
    return kiln_dtype_name(*d);
  std::string base;
  switch (static_cast<Code>(t.code)) {
  case Code::Int:
    base = "int";
    break;
  case Code::UInt:
    base = "uint";
    break;
  case Code::Float:
    base = "float";
    break;
  case Code::Bfloat:
    base = "bfloat";
    break;
  case Code::Complex:
    base = "complex";
    break;
  case Code::Bool:
    base = "bool";
    break;
  default:
    return "DLPack type code " + std::to_string(t.code) + " (" + std::to_string(t.bits) +
           " bits)";
  }
  return base + std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

/// NumPy's name of a kiln dtype ("i64" -> "int64", "bf16" -> "bfloat16"): what a caller holding a
/// tensor kiln does not take should convert it to.
std::string numpyName(kiln_dtype_t dtype) {
  const std::string name = kiln_dtype_name(dtype);
  if (name == "bool")
    return name;
  if (name == "bf16")
    return "bfloat16";
  const std::string bits = name.substr(1);
  return (name[0] == 'f' ? "float" : name[0] == 'i' ? "int" : "uint") + bits;
}

/// An array that is only read: inputs, and every array while it is checked. nanobind's default
/// nb::ndarray<> refuses read-only memory (np.load(mmap_mode="r"), np.frombuffer, arrays with
/// writeable=False); inputs are copied from or read in place, never written, so they take any.
/// Outputs stay nb::ndarray<> (writable).
using ReadOnlyArray = nb::ndarray<nb::ro>;

/// Where a tensor lives, as far as kiln is concerned.
enum class Residence { Host, Device };

/// Classifies `array`'s DLPack device: CPU and CUDA pinned host memory are host memory; CUDA and
/// CUDA managed memory are device memory; anything else (ROCm, Metal, ...) is an error.
Residence residence(const ReadOnlyArray &array, const std::string &what) {
  switch (array.device_type()) {
  case nb::device::cpu::value:
  case nb::device::cuda_host::value:
    return Residence::Host;
  case nb::device::cuda::value:
  case nb::device::cuda_managed::value:
    return Residence::Device;
  default:
    fail(KILN_INVALID_ARGUMENT, what + ": the tensor is on DLPack device type " +
                                    std::to_string(array.device_type()) +
                                    "; kiln takes host (CPU) or CUDA tensors");
  }
}

/// Checks that `array` can stand for the graph tensor `info` (input or output; `what` is
/// "input 'x'" or "output 'y'"): same dtype (`bf16Bits`: a host uint16 array carrying bfloat16
/// bits, what python/kiln/_dtypes.py passes for NumPy's ml_dtypes.bfloat16, matches bf16), same
/// shape, row-major contiguous. KILN_INVALID_ARGUMENT naming the tensor otherwise.
void checkTensor(const ReadOnlyArray &array, const kiln_tensor_info_t &info,
                 const std::string &what, bool bf16Bits) {
  const std::string want =
      std::string(kiln_dtype_name(info.dtype)) + formatShape(info.shape, info.rank);
  std::vector<int64_t> shape(array.ndim());
  for (size_t i = 0; i < array.ndim(); ++i)
    shape[i] = array.shape(i);
  std::optional<kiln_dtype_t> dtype = kilnDtype(array.dtype());
  if (bf16Bits && dtype == KILN_DTYPE_U16)
    dtype = KILN_DTYPE_BF16;
  const std::string got =
      (dtype ? std::string(kiln_dtype_name(*dtype)) : dtypeName(array.dtype())) +
      formatShape(shape.data(), shape.size());
  if (dtype != info.dtype || shape.size() != info.rank ||
      !std::equal(shape.begin(), shape.end(), info.shape))
    fail(KILN_INVALID_ARGUMENT,
         what + " is " + want + ", but the tensor given is " + got +
             (dtype ? "" : ", a dtype kiln does not take: convert it to " + numpyName(info.dtype)));
  // Row-major contiguous: each stride (in elements) is the product of the dims after it; dims of
  // size 1 may have any stride.
  int64_t expected = 1;
  for (size_t i = array.ndim(); i-- > 0;) {
    if (shape[i] != 1 && array.stride(i) != expected)
      fail(KILN_INVALID_ARGUMENT, what + ": the tensor is not row-major contiguous (dim " +
                                      std::to_string(i) + " has stride " +
                                      std::to_string(array.stride(i)) + " elements, expected " +
                                      std::to_string(expected) +
                                      "); pass a contiguous copy (numpy.ascontiguousarray, "
                                      "torch.Tensor.contiguous)");
    expected *= shape[i];
  }
}

//===----------------------------------------------------------------------===//
// Artifact
//===----------------------------------------------------------------------===//

/// One reference to a kiln_artifact_t (an artifact or one of its programs).
class Artifact {
public:
  /// Takes over the reference `handle` holds.
  explicit Artifact(kiln_artifact_t *handle) : handle(handle) {}
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;
  ~Artifact() { kiln_artifact_release(handle); }
  kiln_artifact_t *get() const { return handle; }

private:
  kiln_artifact_t *handle;
};

/// (name, dtype name, shape, byte_size) of a tensor info.
using TensorTuple = std::tuple<std::string, std::string, std::vector<int64_t>, uint64_t>;

TensorTuple tensorTuple(const kiln_tensor_info_t &info) {
  return {info.name, kiln_dtype_name(info.dtype),
          std::vector<int64_t>(info.shape, info.shape + info.rank), info.byte_size};
}

/// Every input: (name, dtype, shape, byte_size, role, value range or None).
nb::list artifactInputs(const Artifact &a) {
  nb::list inputs;
  for (size_t i = 0, n = kiln_artifact_input_count(a.get()); i < n; ++i) {
    kiln_tensor_info_t info;
    check(kiln_artifact_input_info(a.get(), i, &info));
    kiln_input_role_t role;
    check(kiln_artifact_input_role(a.get(), i, &role));
    int hasRange = 0;
    int64_t lo = 0, hi = 0;
    check(kiln_artifact_input_value_range(a.get(), i, &hasRange, &lo, &hi));
    nb::object range = hasRange ? nb::object(nb::make_tuple(lo, hi)) : nb::none();
    // kiln_artifact_input_role reports unknown roles as data, so a name always exists.
    const char *roleName = kiln_input_role_name(role);
    TensorTuple t = tensorTuple(info);
    inputs.append(nb::make_tuple(std::get<0>(t), std::get<1>(t), std::get<2>(t), std::get<3>(t),
                                 roleName ? roleName : "data", range));
  }
  return inputs;
}

std::vector<TensorTuple> artifactOutputs(const Artifact &a) {
  std::vector<TensorTuple> outputs;
  for (size_t i = 0, n = kiln_artifact_output_count(a.get()); i < n; ++i) {
    kiln_tensor_info_t info;
    check(kiln_artifact_output_info(a.get(), i, &info));
    outputs.push_back(tensorTuple(info));
  }
  return outputs;
}

/// Every launch of the schedule as a dict (what kiln_artifact_launch_* report).
nb::list artifactLaunches(const Artifact &a) {
  nb::list launches;
  kiln_artifact_t *h = a.get();
  for (size_t i = 0, n = kiln_artifact_launch_count(h); i < n; ++i) {
    kiln_launch_info_t info;
    check(kiln_artifact_launch_info(h, i, &info));
    kiln_launch_cost_t cost;
    check(kiln_artifact_launch_cost(h, i, &cost));
    std::vector<std::string> ops, nodes;
    for (size_t k = 0, m = kiln_artifact_launch_op_count(h, i); k < m; ++k)
      ops.push_back(kiln_artifact_launch_op(h, i, k));
    for (size_t k = 0, m = kiln_artifact_launch_node_count(h, i); k < m; ++k)
      nodes.push_back(kiln_artifact_launch_node(h, i, k));
    nb::dict d;
    d["index"] = i;
    d["name"] = kiln_artifact_launch_name(h, i);
    d["layer"] = kiln_artifact_launch_layer(h, i);
    d["module"] = info.module_name;
    d["function"] = info.function_name;
    d["grid"] = nb::make_tuple(info.grid[0], info.grid[1], info.grid[2]);
    d["block"] = nb::make_tuple(info.block[0], info.block[1], info.block[2]);
    d["shared_mem_bytes"] = info.shared_mem_bytes;
    d["ops"] = ops;
    d["nodes"] = nodes;
    d["node_total"] = kiln_artifact_launch_node_total(h, i);
    d["flops"] = cost.flops;
    d["bytes_read"] = cost.bytes_read;
    d["bytes_written"] = cost.bytes_written;
    d["programmatic"] = kiln_artifact_launch_programmatic(h, i) != 0;
    launches.append(d);
  }
  return launches;
}

/// Every CUDA module: (name, PTX bytes, [(SASS arch, bytes), ...]).
nb::list artifactModules(const Artifact &a) {
  nb::list modules;
  for (size_t i = 0, n = kiln_artifact_module_count(a.get()); i < n; ++i) {
    kiln_module_info_t info;
    check(kiln_artifact_module_info(a.get(), i, &info));
    std::vector<std::pair<uint32_t, uint64_t>> cubins;
    for (size_t c = 0; c < info.cubin_count; ++c) {
      uint32_t arch = 0;
      uint64_t bytes = 0;
      check(kiln_artifact_module_cubin(a.get(), i, c, &arch, &bytes));
      cubins.emplace_back(arch, bytes);
    }
    modules.append(nb::make_tuple(info.name, info.ptx_bytes, cubins));
  }
  return modules;
}

/// The info of input (`input`) or output `name` of `a`; KILN_NOT_FOUND listing the names.
kiln_tensor_info_t tensorInfo(kiln_artifact_t *a, bool input, const std::string &name) {
  size_t index = 0;
  kiln_tensor_info_t info;
  if (input) {
    check(kiln_artifact_find_input(a, name.c_str(), &index));
    check(kiln_artifact_input_info(a, index, &info));
  } else {
    check(kiln_artifact_find_output(a, name.c_str(), &index));
    check(kiln_artifact_output_info(a, index, &info));
  }
  return info;
}

/// What Session checks before it copies or binds a tensor, without a session (no GPU needed):
/// the name, dtype, shape, layout and kind of memory. Returns "host" or "device".
std::string checkTensorFor(const Artifact &a, bool input, const std::string &name,
                           const ReadOnlyArray &array, bool bf16Bits) {
  kiln_tensor_info_t info = tensorInfo(a.get(), input, name);
  const std::string what = (input ? "input '" : "output '") + name + "'";
  checkTensor(array, info, what, bf16Bits);
  return residence(array, what) == Residence::Host ? "host" : "device";
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

/// A kiln_session_t plus the caller's arrays bound to it (kept alive while bound).
class Session {
public:
  Session(const Artifact &artifact, int device, bool useCudaGraph, bool poisonArena) {
    kiln_session_params_t params;
    kiln_session_params_initialize(&params);
    params.device_ordinal = device;
    params.use_cuda_graph = useCudaGraph ? 1 : 0;
    params.poison_arena = poisonArena ? 1 : 0;
    kiln_status_t status;
    {
      nb::gil_scoped_release release;
      status = kiln_session_create(artifact.get(), &params, &handle);
    }
    check(status);
    this->device = device;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  /// Waits for the session's work, then releases it; the bound arrays are dropped after that.
  ~Session() {
    nb::gil_scoped_release release;
    kiln_session_release(handle);
  }

  /// Sets input `name` from `array`: a host array is copied (kiln_session_set_input, after
  /// unbinding a previously bound buffer); a device array is bound in place
  /// (kiln_session_bind_input; skipped when the same buffer is bound already).
  void setInput(const std::string &name, ReadOnlyArray array, bool bf16Bits) {
    kiln_tensor_info_t info = inputInfo(name);
    const std::string what = "input '" + name + "'";
    checkTensor(array, info, what, bf16Bits);
    if (residence(array, what) == Residence::Host) {
      unbindInput(name);
      nb::gil_scoped_release release;
      check(kiln_session_set_input(handle, name.c_str(), array.data(), info.byte_size));
      return;
    }
    bindDevice(boundInputs, name, what, array, info, /*input=*/true);
  }

  /// Binds output `name` to the device array `array` (kiln_session_bind_output): every later run
  /// writes it there.
  void bindOutput(const std::string &name, nb::ndarray<> array) {
    kiln_tensor_info_t info = outputInfo(name);
    const std::string what = "output '" + name + "'";
    ReadOnlyArray view(array);
    checkTensor(view, info, what, false);
    if (residence(view, what) != Residence::Device)
      fail(KILN_INVALID_ARGUMENT, what + ": bind_output takes a CUDA tensor; host arrays are "
                                         "filled by get_output");
    bindDevice(boundOutputs, name, what, view, info, /*input=*/false);
  }

  void unbindInput(const std::string &name) {
    if (boundInputs.count(name)) {
      check(kiln_session_unbind_input(handle, name.c_str()));
      boundInputs.erase(name);
    }
  }

  void unbindOutput(const std::string &name) {
    if (boundOutputs.count(name)) {
      check(kiln_session_unbind_output(handle, name.c_str()));
      boundOutputs.erase(name);
    }
  }

  /// Names of the inputs bound to caller buffers.
  std::vector<std::string> boundInputNames() const {
    std::vector<std::string> names;
    for (const auto &entry : boundInputs)
      names.push_back(entry.first);
    return names;
  }

  /// Names of the outputs bound to caller buffers.
  std::vector<std::string> boundOutputNames() const {
    std::vector<std::string> names;
    for (const auto &entry : boundOutputs)
      names.push_back(entry.first);
    return names;
  }

  /// Waits for the session's work and copies output `name` into the host array `array`.
  void getOutput(const std::string &name, nb::ndarray<> array, bool bf16Bits) {
    kiln_tensor_info_t info = outputInfo(name);
    const std::string what = "output '" + name + "'";
    checkTensor(ReadOnlyArray(array), info, what, bf16Bits);
    if (residence(ReadOnlyArray(array), what) != Residence::Host)
      fail(KILN_INVALID_ARGUMENT,
           what + ": get_output copies into host memory; bind a CUDA tensor with bind_output");
    nb::gil_scoped_release release;
    check(kiln_session_get_output(handle, name.c_str(), array.data(), info.byte_size));
  }

  /// kiln_session_run on `stream` (a CUstream; 0 = the session's own stream).
  void run(uintptr_t stream) {
    kiln_status_t status;
    {
      nb::gil_scoped_release release;
      status = kiln_session_run(handle, reinterpret_cast<void *>(stream));
    }
    check(status);
  }

  void synchronize() {
    kiln_status_t status;
    {
      nb::gil_scoped_release release;
      status = kiln_session_synchronize(handle);
    }
    check(status);
  }

  std::vector<float> benchmark(size_t warmup, size_t iterations) {
    if (iterations == 0)
      fail(KILN_INVALID_ARGUMENT, "benchmark: iterations must be > 0");
    std::vector<float> ms(iterations);
    kiln_status_t status;
    {
      nb::gil_scoped_release release;
      status = kiln_session_benchmark(handle, warmup, iterations, ms.data());
    }
    check(status);
    return ms;
  }

  std::vector<float> profile(size_t iterations) {
    std::vector<float> ms(kiln_artifact_launch_count(kiln_session_artifact(handle)));
    kiln_status_t status;
    {
      nb::gil_scoped_release release;
      status = kiln_session_profile(handle, iterations, ms.data());
    }
    check(status);
    return ms;
  }

  std::pair<std::vector<float>, std::vector<float>> timeline() {
    kiln_artifact_t *a = kiln_session_artifact(handle);
    std::vector<float> start(kiln_artifact_launch_count(a)), end(start.size());
    std::vector<float> cstart(kiln_artifact_collective_count(a)), cend(cstart.size());
    kiln_status_t status;
    {
      nb::gil_scoped_release release;
      status = kiln_session_profile_timeline(handle, start.data(), end.data(),
                                             cstart.empty() ? nullptr : cstart.data(),
                                             cend.empty() ? nullptr : cend.data());
    }
    check(status);
    return {start, end};
  }

  uint64_t inputDevicePtr(const std::string &name) {
    uint64_t ptr = 0;
    check(kiln_session_input_device_ptr(handle, name.c_str(), &ptr));
    return ptr;
  }

  uint64_t outputDevicePtr(const std::string &name) {
    uint64_t ptr = 0;
    check(kiln_session_output_device_ptr(handle, name.c_str(), &ptr));
    return ptr;
  }

  bool hasCudaGraph() const { return kiln_session_has_cuda_graph(handle) != 0; }
  int deviceOrdinal() const { return device; }

private:
  struct Binding {
    ReadOnlyArray array; ///< keeps the caller's buffer alive while bound
    uint64_t pointer;
  };

  kiln_tensor_info_t inputInfo(const std::string &name) {
    return tensorInfo(kiln_session_artifact(handle), true, name);
  }

  kiln_tensor_info_t outputInfo(const std::string &name) {
    return tensorInfo(kiln_session_artifact(handle), false, name);
  }

  void bindDevice(std::map<std::string, Binding> &bound, const std::string &name,
                  const std::string &what, const ReadOnlyArray &array,
                  const kiln_tensor_info_t &info,
                  bool input) {
    if (array.device_id() != device)
      fail(KILN_INVALID_ARGUMENT, what + ": the tensor is on CUDA device " +
                                      std::to_string(array.device_id()) +
                                      " but the session runs on device " + std::to_string(device));
    const uint64_t pointer = reinterpret_cast<uintptr_t>(array.data());
    auto it = bound.find(name);
    if (it != bound.end() && it->second.pointer == pointer) {
      it->second.array = array; // the same buffer: nothing to rebind
      return;
    }
    check(input ? kiln_session_bind_input(handle, name.c_str(), pointer, info.byte_size)
                : kiln_session_bind_output(handle, name.c_str(), pointer, info.byte_size));
    bound[name] = Binding{array, pointer};
  }

  kiln_session_t *handle = nullptr;
  int device = 0;
  std::map<std::string, Binding> boundInputs, boundOutputs;
};

//===----------------------------------------------------------------------===//
// Generation
//===----------------------------------------------------------------------===//

/// A kiln_generator_t (the programs of a --kv-cache artifact, their KV cache, sampling).
class Generator {
public:
  Generator(const Artifact &artifact, int device) {
    kiln_status_t status;
    {
      nb::gil_scoped_release release;
      status = kiln_generator_create(artifact.get(), device, &handle);
    }
    check(status);
  }
  Generator(const Generator &) = delete;
  Generator &operator=(const Generator &) = delete;
  ~Generator() {
    nb::gil_scoped_release release;
    kiln_generator_release(handle);
  }

  size_t maxBatch() const { return kiln_generator_max_batch(handle); }
  size_t maxSeqLen() const { return kiln_generator_max_seq_len(handle); }

  /// One request of generate(): prompt ids, max new tokens, stop ids, temperature, top_k, top_p,
  /// seed.
  using Request = std::tuple<std::vector<int64_t>, size_t, std::vector<int64_t>, float, int32_t,
                             float, uint64_t>;

  /// kiln_generate over `requests`; `callback(sequence, token)` (or None) is called for every
  /// token with the GIL held, and a true result cancels the call (kiln_token_callback_t). An
  /// exception in the callback cancels too and is raised when kiln_generate returns. Returns one
  /// (tokens, finish reason, time to first token in ms) per request.
  std::vector<std::tuple<std::vector<int64_t>, std::string, double>>
  generate(const std::vector<Request> &requests, nb::object callback) {
    std::vector<kiln_generate_request_t> cRequests(requests.size());
    std::vector<kiln_generate_result_t> results(requests.size());
    std::vector<std::vector<int64_t>> tokens(requests.size());
    for (size_t r = 0; r < requests.size(); ++r) {
      const Request &q = requests[r];
      kiln_generate_request_t &c = cRequests[r];
      c.prompt = std::get<0>(q).data();
      c.prompt_length = std::get<0>(q).size();
      c.max_new_tokens = std::get<1>(q);
      c.stop_tokens = std::get<2>(q).data();
      c.stop_token_count = std::get<2>(q).size();
      kiln_sampling_params_initialize(&c.sampling);
      c.sampling.temperature = std::get<3>(q);
      c.sampling.top_k = std::get<4>(q);
      c.sampling.top_p = std::get<5>(q);
      c.sampling.seed = std::get<6>(q);
      // kiln_generate checks the request after this: a sequence holds at most maxSeqLen()
      // tokens, so no accepted request writes more (max_new_tokens = 10**10 must not allocate
      // 80 GB before it is refused).
      tokens[r].resize(std::min(c.max_new_tokens, maxSeqLen()));
      results[r].tokens = tokens[r].data();
    }
    struct CallbackState {
      nb::object callback;
      std::optional<nb::python_error> error;
    } state{std::move(callback), std::nullopt};
    auto trampoline = [](void *userData, size_t sequence, int64_t token) -> int {
      auto *s = static_cast<CallbackState *>(userData);
      nb::gil_scoped_acquire acquire;
      try {
        return nb::cast<bool>(nb::bool_(s->callback(sequence, token))) ? 1 : 0;
      } catch (nb::python_error &e) {
        s->error.emplace(std::move(e));
        return 1;
      }
    };
    const bool hasCallback = !state.callback.is_none();
    kiln_status_t status;
    {
      nb::gil_scoped_release release;
      status = kiln_generate(handle, cRequests.data(), cRequests.size(), results.data(),
                             hasCallback ? +trampoline : nullptr, hasCallback ? &state : nullptr);
    }
    if (state.error) {
      kiln_status_free(status);
      throw std::move(*state.error);
    }
    check(status);
    static const char *const kReasons[] = {"length", "stop", "cancelled"};
    std::vector<std::tuple<std::vector<int64_t>, std::string, double>> out;
    for (size_t r = 0; r < requests.size(); ++r) {
      tokens[r].resize(results[r].length);
      out.emplace_back(std::move(tokens[r]), kReasons[results[r].finish_reason],
                       results[r].time_to_first_token_ms);
    }
    return out;
  }

  nb::dict lastStats() const {
    kiln_generate_stats_t s;
    check(kiln_generator_last_stats(handle, &s));
    nb::dict d;
    d["prefill_ms"] = s.prefill_ms;
    d["prefill_steps"] = s.prefill_steps;
    d["decode_ms"] = s.decode_ms;
    d["decode_steps"] = s.decode_steps;
    d["decode_step_p50_ms"] = s.decode_step_p50_ms;
    d["decode_step_p99_ms"] = s.decode_step_p99_ms;
    d["generated_tokens"] = s.generated_tokens;
    return d;
  }

private:
  kiln_generator_t *handle = nullptr;
};

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "kiln runtime C API bindings (use the `kiln` package, not this module)";
  nb::register_exception_translator(translateStatusError);

  m.def(
      "version", [] { return std::string(kiln_version()); },
      "Version of the runtime library (\"MAJOR.MINOR.PATCH\").");
  m.def("dtype_size", [](int dtype) { return kiln_dtype_size(static_cast<kiln_dtype_t>(dtype)); });
  m.def("dtype_names", [] {
    std::vector<std::string> names;
    for (int d = 0; d < KILN_DTYPE_COUNT; ++d)
      names.push_back(kiln_dtype_name(static_cast<kiln_dtype_t>(d)));
    return names;
  });

  nb::class_<Artifact>(m, "Artifact")
      .def(
          "__init__",
          [](Artifact *self, const std::string &path) {
            kiln_artifact_t *handle = nullptr;
            kiln_status_t status;
            {
              nb::gil_scoped_release release;
              status = kiln_artifact_open(path.c_str(), &handle);
            }
            check(status);
            new (self) Artifact(handle);
          },
          nb::arg("path"))
      .def_prop_ro("path",
                   [](const Artifact &a) { return std::string(kiln_artifact_path(a.get())); })
      .def_prop_ro("producer",
                   [](const Artifact &a) { return std::string(kiln_artifact_producer(a.get())); })
      .def_prop_ro("arena_bytes",
                   [](const Artifact &a) { return kiln_artifact_arena_bytes(a.get()); })
      .def_prop_ro("weights_bytes",
                   [](const Artifact &a) { return kiln_artifact_weights_bytes(a.get()); })
      .def_prop_ro("tp_world_size",
                   [](const Artifact &a) { return kiln_artifact_tp_world_size(a.get()); })
      .def_prop_ro("tp_rank", [](const Artifact &a) { return kiln_artifact_tp_rank(a.get()); })
      .def_prop_ro("collective_count",
                   [](const Artifact &a) { return kiln_artifact_collective_count(a.get()); })
      .def_prop_ro("program_count",
                   [](const Artifact &a) { return kiln_artifact_program_count(a.get()); })
      .def_prop_ro(
          "program_name",
          [](const Artifact &a) { return std::string(kiln_artifact_program_name(a.get())); })
      .def("inputs", &artifactInputs)
      .def("outputs", &artifactOutputs)
      .def("launches", &artifactLaunches)
      .def("modules", &artifactModules)
      .def(
          "program",
          [](const Artifact &a, size_t index) {
            kiln_artifact_t *p = nullptr;
            check(kiln_artifact_program(a.get(), index, &p));
            return new Artifact(p);
          },
          nb::rv_policy::take_ownership)
      .def(
          "find_program",
          [](const Artifact &a, const std::string &name) {
            kiln_artifact_t *p = nullptr;
            check(kiln_artifact_find_program(a.get(), name.c_str(), &p));
            return new Artifact(p);
          },
          nb::rv_policy::take_ownership)
      .def(
          "check_input",
          [](const Artifact &a, const std::string &name, ReadOnlyArray array, bool bits) {
            return checkTensorFor(a, true, name, array, bits);
          },
          nb::arg("name"), nb::arg("array"), nb::arg("bf16_bits") = false)
      .def(
          "check_output",
          [](const Artifact &a, const std::string &name, nb::ndarray<> array, bool bits) {
            return checkTensorFor(a, false, name, ReadOnlyArray(array), bits);
          },
          nb::arg("name"), nb::arg("array"), nb::arg("bf16_bits") = false)
      .def(
          "check_input_values",
          [](const Artifact &a, size_t index, nb::bytes data) {
            check(kiln_artifact_check_input_values(a.get(), index, data.c_str(), data.size()));
          },
          nb::arg("index"), nb::arg("data"))
      .def_prop_ro("estimated_us",
                   [](const Artifact &a) { return kiln_artifact_program_estimated_us(a.get()); })
      .def("generator_prefill_by_time",
           [](const Artifact &a) {
             int byTime = 0;
             check(kiln_generator_prefill_by_time(a.get(), &byTime));
             return byTime != 0;
           })
      .def("generator_prefill_padding_price",
           [](const Artifact &a) {
             double us = 0;
             check(kiln_generator_prefill_padding_price(a.get(), &us));
             return us;
           })
      .def(
          "generator_prefill_waste",
          [](const Artifact &a, size_t maxPromptLength) {
            double mean = 0, tokens = 0;
            check(kiln_generator_prefill_waste(a.get(), maxPromptLength, &mean, &tokens));
            return nb::make_tuple(mean, tokens);
          },
          nb::arg("max_prompt_length"))
      .def("generator_limits", [](const Artifact &a) {
        size_t maxBatch = 0, maxSeqLen = 0;
        int hasRange = 0;
        int64_t lo = 0, hi = 0;
        check(kiln_generator_limits(a.get(), &maxBatch, &maxSeqLen, &hasRange, &lo, &hi));
        size_t blocks = 0, blockSize = 0, fullSequences = 0;
        check(kiln_generator_kv_blocks(a.get(), &blocks, &blockSize, &fullSequences));
        nb::object range = hasRange ? nb::object(nb::make_tuple(lo, hi)) : nb::none();
        return nb::make_tuple(maxBatch, maxSeqLen, range, blocks, blockSize, fullSequences);
      });

  nb::class_<Session>(m, "Session")
      .def(nb::init<const Artifact &, int, bool, bool>(), nb::arg("artifact"), nb::arg("device"),
           nb::arg("use_cuda_graph"), nb::arg("poison_arena"))
      .def("set_input", &Session::setInput, nb::arg("name"), nb::arg("array"),
           nb::arg("bf16_bits") = false)
      .def("bind_output", &Session::bindOutput, nb::arg("name"), nb::arg("array"))
      .def("unbind_input", &Session::unbindInput, nb::arg("name"))
      .def("unbind_output", &Session::unbindOutput, nb::arg("name"))
      .def("bound_inputs", &Session::boundInputNames)
      .def("bound_outputs", &Session::boundOutputNames)
      .def("get_output", &Session::getOutput, nb::arg("name"), nb::arg("array"),
           nb::arg("bf16_bits") = false)
      .def("run", &Session::run, nb::arg("stream"))
      .def("synchronize", &Session::synchronize)
      .def("benchmark", &Session::benchmark, nb::arg("warmup"), nb::arg("iterations"))
      .def("profile", &Session::profile, nb::arg("iterations"))
      .def("timeline", &Session::timeline)
      .def("input_device_ptr", &Session::inputDevicePtr, nb::arg("name"))
      .def("output_device_ptr", &Session::outputDevicePtr, nb::arg("name"))
      .def_prop_ro("has_cuda_graph", &Session::hasCudaGraph)
      .def_prop_ro("device", &Session::deviceOrdinal);

  nb::class_<Generator>(m, "Generator")
      .def(nb::init<const Artifact &, int>(), nb::arg("artifact"), nb::arg("device"))
      .def_prop_ro("max_batch", &Generator::maxBatch)
      .def_prop_ro("max_seq_len", &Generator::maxSeqLen)
      .def("generate", &Generator::generate, nb::arg("requests"), nb::arg("callback").none())
      .def("last_stats", &Generator::lastStats);
}
