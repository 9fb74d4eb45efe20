//===- kiln/runtime.hpp - C++ RAII wrappers over the kiln C API -*- C++ -*-===//
//
// Header-only convenience layer over kiln/runtime.h for C++ applications: owning wrappers for
// status, artifact and session handles (move-only, released in the destructor) that keep the C
// API's error model — every fallible call returns a kiln::Status, no exceptions are thrown. Also
// the naming rule of tensor-parallel rank files (tpRankArtifactPath), shared by kiln-compile,
// which writes them, and the runtime, which finds them, helpers for group ids, and a
// tensor-parallel group of every rank in one process (TpGroup).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_HPP
#define KILN_RUNTIME_HPP

#include "kiln/runtime.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// Owning wrapper of kiln_status_t. A default-constructed or NULL status is OK.
class Status {
public:
  Status() = default;
  /// Takes ownership of `status`.
  explicit Status(kiln_status_t status) : status(status) {}
  Status(Status &&other) noexcept : status(std::exchange(other.status, nullptr)) {}
  Status &operator=(Status &&other) noexcept {
    std::swap(status, other.status);
    return *this;
  }
  Status(const Status &) = delete;
  Status &operator=(const Status &) = delete;
  ~Status() { kiln_status_free(status); }

  /// True if the call succeeded.
  bool ok() const { return status == nullptr; }
  explicit operator bool() const { return ok(); }
  /// The status code (KILN_OK when ok()).
  kiln_status_code_t code() const { return kiln_status_code(status); }
  /// The message ("" when ok()).
  const char *message() const { return kiln_status_message(status); }
  /// Gives up ownership of the C status.
  kiln_status_t release() { return std::exchange(status, nullptr); }

private:
  kiln_status_t status = nullptr;
};

/// Returns the path of rank `rank`'s artifact for the output path `base` of
/// `kiln-compile --tensor-parallel N -o base`: "model.kiln" gives "model.rank0.kiln",
/// "model.rank1.kiln", ...; a path that does not end in ".kiln" gets ".rank<r>.kiln" appended
/// ("out/m" gives "out/m.rank0.kiln"). kiln-compile writes the N files under these names and
/// `kiln-run --tensor-parallel N base` (or one kiln-run per rank) opens them.
inline std::string tpRankArtifactPath(const std::string &base, uint32_t rank) {
  static const std::string kSuffix = ".kiln";
  std::string stem = base;
  if (stem.size() >= kSuffix.size() &&
      stem.compare(stem.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
    stem.resize(stem.size() - kSuffix.size());
  return stem + ".rank" + std::to_string(rank) + kSuffix;
}

/// The inverse of tpRankArtifactPath for rank `rank`: "model.rank1.kiln" gives "model.kiln" for
/// rank 1; a path that is not rank `rank`'s file name gives "". Used to tell the user which base
/// to give when a rank file was given instead.
inline std::string tpBaseArtifactPath(const std::string &rankPath, uint32_t rank) {
  const std::string suffix = ".rank" + std::to_string(rank) + ".kiln";
  if (rankPath.size() > suffix.size() &&
      rankPath.compare(rankPath.size() - suffix.size(), suffix.size(), suffix) == 0)
    return rankPath.substr(0, rankPath.size() - suffix.size()) + ".kiln";
  return std::string();
}

/// Creates a new tensor-parallel group id in `id` (see kiln_tp_id_create: the calling process
/// must stay alive until every rank has created its session).
inline Status createTpId(kiln_tp_id_t &id) { return Status(kiln_tp_id_create(&id)); }

/// Returns the text form of `id` (2 * KILN_TP_ID_BYTES lowercase hex digits).
inline std::string tpIdToString(const kiln_tp_id_t &id) {
  char text[KILN_TP_ID_STRING_BYTES];
  kiln_tp_id_to_string(&id, text);
  return text;
}

/// Parses the text form of a group id into `id` (see kiln_tp_id_from_string).
inline Status tpIdFromString(const std::string &text, kiln_tp_id_t &id) {
  return Status(kiln_tp_id_from_string(text.c_str(), &id));
}

/// Owning reference to a verified artifact.
class Artifact {
public:
  Artifact() = default;
  Artifact(Artifact &&other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
  Artifact &operator=(Artifact &&other) noexcept {
    std::swap(handle, other.handle);
    return *this;
  }
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;
  ~Artifact() { kiln_artifact_release(handle); }

  /// Opens and verifies the .kiln file at `path` (see kiln_artifact_open).
  static Status open(const std::string &path, Artifact &out) {
    Artifact artifact;
    Status status(kiln_artifact_open(path.c_str(), &artifact.handle));
    if (status.ok())
      out = std::move(artifact);
    return status;
  }

  /// The C handle (borrowed).
  kiln_artifact_t *get() const { return handle; }
  size_t inputCount() const { return kiln_artifact_input_count(handle); }
  size_t outputCount() const { return kiln_artifact_output_count(handle); }
  Status inputInfo(size_t index, kiln_tensor_info_t &info) const {
    return Status(kiln_artifact_input_info(handle, index, &info));
  }
  Status outputInfo(size_t index, kiln_tensor_info_t &info) const {
    return Status(kiln_artifact_output_info(handle, index, &info));
  }
  uint64_t arenaBytes() const { return kiln_artifact_arena_bytes(handle); }
  size_t launchCount() const { return kiln_artifact_launch_count(handle); }
  /// The path the artifact was opened from.
  const char *path() const { return kiln_artifact_path(handle); }
  /// Tensor parallelism: world size (1 for a single-GPU artifact), this file's rank and the
  /// group hash shared by the rank files of one compile (see kiln_artifact_tp_world_size).
  uint32_t tpWorldSize() const { return kiln_artifact_tp_world_size(handle); }
  uint32_t tpRank() const { return kiln_artifact_tp_rank(handle); }
  uint64_t tpGroupHash() const { return kiln_artifact_tp_group_hash(handle); }
  /// Number of collectives in the schedule, and one collective's description.
  size_t collectiveCount() const { return kiln_artifact_collective_count(handle); }
  Status collectiveInfo(size_t index, kiln_collective_info_t &info) const {
    return Status(kiln_artifact_collective_info(handle, index, &info));
  }
  /// What launch `index` computes (see kiln_artifact_launch_name): its readable name and layer
  /// ("" when not recorded or out of range), fused op names and ONNX node names (empty then).
  std::string launchName(size_t index) const {
    const char *name = kiln_artifact_launch_name(handle, index);
    return name ? name : "";
  }
  std::string launchLayer(size_t index) const {
    const char *layer = kiln_artifact_launch_layer(handle, index);
    return layer ? layer : "";
  }
  std::vector<std::string> launchOps(size_t index) const {
    std::vector<std::string> ops;
    for (size_t i = 0; i < kiln_artifact_launch_op_count(handle, index); ++i)
      ops.push_back(kiln_artifact_launch_op(handle, index, i));
    return ops;
  }
  std::vector<std::string> launchNodes(size_t index) const {
    std::vector<std::string> nodes;
    for (size_t i = 0; i < kiln_artifact_launch_node_count(handle, index); ++i)
      nodes.push_back(kiln_artifact_launch_node(handle, index, i));
    return nodes;
  }

  /// Programs (see kiln_artifact_program_count): their count, this one's name ("" in an
  /// artifact of one program), and program `index` / `name` as an Artifact of its own.
  size_t programCount() const { return kiln_artifact_program_count(handle); }
  std::string programName() const { return kiln_artifact_program_name(handle); }
  Status program(size_t index, Artifact &out) const {
    Artifact program;
    Status status(kiln_artifact_program(handle, index, &program.handle));
    if (status.ok())
      out = std::move(program);
    return status;
  }
  Status findProgram(const std::string &name, Artifact &out) const {
    Artifact program;
    Status status(kiln_artifact_find_program(handle, name.c_str(), &program.handle));
    if (status.ok())
      out = std::move(program);
    return status;
  }

private:
  kiln_artifact_t *handle = nullptr;
};

/// Owning wrapper of a session.
class Session {
public:
  Session() = default;
  Session(Session &&other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
  Session &operator=(Session &&other) noexcept {
    std::swap(handle, other.handle);
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { kiln_session_release(handle); }

  /// Creates a session for `artifact` on `params.device_ordinal` (see kiln_session_create).
  static Status create(const Artifact &artifact, const kiln_session_params_t &params,
                       Session &out) {
    Session session;
    Status status(kiln_session_create(artifact.get(), &params, &session.handle));
    if (status.ok())
      out = std::move(session);
    return status;
  }
  /// Creates a session with default parameters (device 0).
  static Status create(const Artifact &artifact, Session &out) {
    kiln_session_params_t params;
    kiln_session_params_initialize(&params);
    return create(artifact, params, out);
  }

  /// The C handle (borrowed).
  kiln_session_t *get() const { return handle; }
  /// Copies `bytes` bytes of host data into input `name`.
  Status setInput(const char *name, const void *data, size_t bytes) {
    return Status(kiln_session_set_input(handle, name, data, bytes));
  }
  /// Enqueues the launch list on `stream` (a CUstream; nullptr = the session's stream).
  Status run(void *stream = nullptr) { return Status(kiln_session_run(handle, stream)); }
  /// True if runs replay an instantiated CUDA graph (see kiln_session_has_cuda_graph).
  bool hasCudaGraph() const { return kiln_session_has_cuda_graph(handle) != 0; }
  /// Waits for the session's work.
  Status synchronize() { return Status(kiln_session_synchronize(handle)); }
  /// Waits, then copies output `name` into host memory.
  Status getOutput(const char *name, void *data, size_t bytes) {
    return Status(kiln_session_get_output(handle, name, data, bytes));
  }
  /// Runs read input `name` from the caller's device buffer `devicePtr` (a CUdeviceptr) of
  /// `bytes` bytes, without copies (see kiln_session_bind_input).
  Status bindInput(const char *name, uint64_t devicePtr, size_t bytes) {
    return Status(kiln_session_bind_input(handle, name, devicePtr, bytes));
  }
  /// Runs read input `name` from the session's own buffer again.
  Status unbindInput(const char *name) { return Status(kiln_session_unbind_input(handle, name)); }
  /// Every run ends by copying output `name` into the caller's device buffer `devicePtr` (device
  /// to device, stream-ordered; see kiln_session_bind_output).
  Status bindOutput(const char *name, uint64_t devicePtr, size_t bytes) {
    return Status(kiln_session_bind_output(handle, name, devicePtr, bytes));
  }
  /// Stops the copies into the buffer bound to output `name`.
  Status unbindOutput(const char *name) { return Status(kiln_session_unbind_output(handle, name)); }
  /// The device address of the weight segment, shared by the sessions of one artifact on one
  /// device (see kiln_session_weights_device_ptr).
  Status weightsDevicePtr(uint64_t &devicePtr) const {
    return Status(kiln_session_weights_device_ptr(handle, &devicePtr));
  }

private:
  kiln_session_t *handle = nullptr;
};

/// Owning wrapper of a tensor-parallel group: every rank of a `kiln-compile --tensor-parallel N`
/// in this process, one session and worker thread per rank (see kiln_tp_group_create).
class TpGroup {
public:
  TpGroup() = default;
  TpGroup(TpGroup &&other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
  TpGroup &operator=(TpGroup &&other) noexcept {
    std::swap(handle, other.handle);
    return *this;
  }
  TpGroup(const TpGroup &) = delete;
  TpGroup &operator=(const TpGroup &) = delete;
  ~TpGroup() { kiln_tp_group_release(handle); }

  /// Opens the `worldSize` rank files of `basePath` (kiln_tp_artifacts_open) and creates the
  /// group from them (kiln_tp_group_create with `params`, nullptr for the defaults: rank r on
  /// device r).
  static Status open(const std::string &basePath, uint32_t worldSize, TpGroup &out,
                     const kiln_tp_group_params_t *params = nullptr) {
    std::vector<kiln_artifact_t *> artifacts(worldSize, nullptr);
    Status status(kiln_tp_artifacts_open(basePath.c_str(), worldSize, artifacts.data()));
    if (!status.ok())
      return status;
    TpGroup group;
    status = Status(kiln_tp_group_create(artifacts.data(), worldSize, params, &group.handle));
    for (kiln_artifact_t *artifact : artifacts)
      kiln_artifact_release(artifact); // the sessions hold their own references
    if (status.ok())
      out = std::move(group);
    return status;
  }

  /// The C handle (borrowed).
  kiln_tp_group_t *get() const { return handle; }
  uint32_t worldSize() const { return kiln_tp_group_world_size(handle); }
  /// Rank `rank`'s session (borrowed; see kiln_tp_group_session for what may be called on it).
  kiln_session_t *session(uint32_t rank) const { return kiln_tp_group_session(handle, rank); }
  /// Copies host data into input `name` of every rank.
  Status setInput(const char *name, const void *data, size_t bytes) {
    return Status(kiln_tp_group_set_input(handle, name, data, bytes));
  }
  /// Runs every rank once and waits for all of them.
  Status run() { return Status(kiln_tp_group_run(handle)); }
  /// Copies rank 0's output `name` into host memory.
  Status getOutput(const char *name, void *data, size_t bytes) {
    return Status(kiln_tp_group_get_output(handle, name, data, bytes));
  }
  /// Calls `fn(rank, session)` on every rank's worker at once (see kiln_tp_group_for_each_rank);
  /// each call returns a Status, and the failures are combined.
  Status forEachRank(const std::function<Status(uint32_t, kiln_session_t *)> &fn) {
    auto trampoline = [](void *user, uint32_t rank, kiln_session_t *session) -> kiln_status_t {
      return (*static_cast<const std::function<Status(uint32_t, kiln_session_t *)> *>(user))(
                 rank, session)
          .release();
    };
    return Status(kiln_tp_group_for_each_rank(
        handle, +trampoline, const_cast<std::function<Status(uint32_t, kiln_session_t *)> *>(&fn)));
  }

private:
  kiln_tp_group_t *handle = nullptr;
};

/// One sequence for Generator::generate: the prompt, at most `maxNewTokens` new tokens, the ids
/// that end it, and how tokens are picked (greedy by default; see kiln_sampling_params_t).
struct GenerateRequest {
  std::vector<int64_t> prompt;
  size_t maxNewTokens = 1;
  std::vector<int64_t> stopTokens;
  kiln_sampling_params_t sampling = {0.0f, 0, 1.0f, 0};
};

/// What Generator::generate produced for one request.
struct GenerateResult {
  std::vector<int64_t> tokens;
  kiln_finish_reason_t finishReason = KILN_FINISH_LENGTH;
  double timeToFirstTokenMs = 0;
};

/// Owning wrapper of a generator (kiln_generator_create): the text-generation loop over the
/// programs of a --kv-cache artifact.
class Generator {
public:
  Generator() = default;
  Generator(Generator &&other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
  Generator &operator=(Generator &&other) noexcept {
    std::swap(handle, other.handle);
    return *this;
  }
  Generator(const Generator &) = delete;
  Generator &operator=(const Generator &) = delete;
  ~Generator() { kiln_generator_release(handle); }

  /// A generator for `artifact`'s programs on CUDA device `device` (see kiln_generator_create).
  static Status create(const Artifact &artifact, int device, Generator &out) {
    Generator generator;
    Status status(kiln_generator_create(artifact.get(), device, &generator.handle));
    if (status.ok())
      out = std::move(generator);
    return status;
  }

  /// The C handle (borrowed).
  kiln_generator_t *get() const { return handle; }
  size_t maxBatch() const { return kiln_generator_max_batch(handle); }
  size_t maxSeqLen() const { return kiln_generator_max_seq_len(handle); }

  /// Generates for every request together (see kiln_generate); `onToken(sequence, token)`
  /// streams each token and returns true to cancel.
  Status generate(const std::vector<GenerateRequest> &requests,
                  std::vector<GenerateResult> &results,
                  const std::function<bool(size_t, int64_t)> &onToken = {}) {
    std::vector<kiln_generate_request_t> c(requests.size());
    std::vector<kiln_generate_result_t> r(requests.size());
    results.assign(requests.size(), GenerateResult());
    for (size_t i = 0; i < requests.size(); ++i) {
      const GenerateRequest &q = requests[i];
      c[i] = {q.prompt.data(), q.prompt.size(),     q.maxNewTokens,
              q.stopTokens.data(), q.stopTokens.size(), q.sampling};
      results[i].tokens.resize(q.maxNewTokens);
      r[i].tokens = results[i].tokens.data();
    }
    auto trampoline = [](void *user, size_t sequence, int64_t token) -> int {
      return (*static_cast<const std::function<bool(size_t, int64_t)> *>(user))(sequence, token)
                 ? 1
                 : 0;
    };
    Status status(kiln_generate(handle, c.data(), c.size(), r.data(),
                                onToken ? +trampoline : nullptr,
                                const_cast<std::function<bool(size_t, int64_t)> *>(&onToken)));
    for (size_t i = 0; i < requests.size(); ++i) {
      results[i].tokens.resize(status.ok() ? r[i].length : 0);
      results[i].finishReason = r[i].finish_reason;
      results[i].timeToFirstTokenMs = r[i].time_to_first_token_ms;
    }
    return status;
  }
  /// The timings of the last generate.
  Status lastStats(kiln_generate_stats_t &stats) const {
    return Status(kiln_generator_last_stats(handle, &stats));
  }

private:
  kiln_generator_t *handle = nullptr;
};

} // namespace kiln

#endif // KILN_RUNTIME_HPP
