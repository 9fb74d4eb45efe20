//===- TpGroup.cpp - Rank files and tensor-parallel groups in one process --===//
//
// Implements the C API's rank-file functions (kiln_tp_artifact_check, kiln_tp_artifact_open,
// kiln_tp_artifacts_open: find the N files of a `kiln-compile --tensor-parallel N` and check that
// they belong together, before any GPU is touched) and kiln_tp_group_*: all ranks of a group in
// the calling process, one session and one persistent worker thread per rank.
//
// Why workers: every call that involves the other ranks (kiln_session_create joining the NCCL
// communicator, a run's all-reduces, benchmark and profile runs) blocks until the peers reach the
// same point, so the ranks' calls must be made concurrently. A worker per rank, started with the
// group and stopped at its release, takes one job at a time (RankWorker::post) and the group waits
// for all of them (TpGroup::onEveryRank); the same thread serves a rank for the group's life, so
// its session is only ever used by one thread at a time. Failures of several ranks are combined
// into one status (combineRankStatuses): one line per failed rank, the first root cause's code.
//
//===----------------------------------------------------------------------===//

#include "TpGroup.h"

#include "kiln/runtime.hpp"

#include "Status.h"

#include <sys/stat.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kiln {
namespace {

/// True if `path` names an existing file system entry.
bool pathExists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

/// "f32[1x128]" ("f32[scalar]" for rank 0), as messages show a tensor.
std::string describeTensor(const kiln_tensor_info_t &info) {
  std::string shape;
  for (size_t i = 0; i < info.rank; ++i)
    shape += (i ? "x" : "") + std::to_string(info.shape[i]);
  const char *dtype = kiln_dtype_name(info.dtype);
  return std::string(dtype ? dtype : "?") + "[" + (info.rank ? shape : "scalar") + "]";
}

/// The group hash as messages print it: "0x0000000000001111".
std::string formatHash(uint64_t hash) {
  return formatString("0x%016llx", static_cast<unsigned long long>(hash));
}

/// Checks that `artifact` has rank 0's group hash and the inputs and outputs of `first` (rank 0's
/// file): a group feeds every rank the same inputs. `worldSize` is for the message.
kiln_status_t checkSameGroup(const kiln_artifact_t *artifact, const kiln_artifact_t *first,
                             uint32_t worldSize) {
  const char *path = kiln_artifact_path(artifact);
  const char *firstPath = kiln_artifact_path(first);
  if (kiln_artifact_tp_group_hash(artifact) != kiln_artifact_tp_group_hash(first))
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "'%s' has group hash %s but rank 0's file has %s: the rank files come "
                       "from different compiles; recompile all of them with one `kiln-compile "
                       "--tensor-parallel %u`",
                       path, formatHash(kiln_artifact_tp_group_hash(artifact)).c_str(),
                       formatHash(kiln_artifact_tp_group_hash(first)).c_str(), worldSize);
  for (int outputs = 0; outputs < 2; ++outputs) {
    auto count = outputs ? kiln_artifact_output_count : kiln_artifact_input_count;
    auto info = outputs ? kiln_artifact_output_info : kiln_artifact_input_info;
    const char *kind = outputs ? "output" : "input";
    if (count(artifact) != count(first))
      return makeStatusF(KILN_INVALID_ARGUMENT, "'%s' has %zu %ss but '%s' has %zu", path,
                         count(artifact), kind, firstPath, count(first));
    for (size_t i = 0; i < count(artifact); ++i) {
      kiln_tensor_info_t a, b;
      KILN_RETURN_IF_ERROR(info(artifact, i, &a));
      KILN_RETURN_IF_ERROR(info(first, i, &b));
      if (std::strcmp(a.name, b.name) != 0 || describeTensor(a) != describeTensor(b))
        return makeStatusF(KILN_INVALID_ARGUMENT, "'%s': %s %zu is '%s' %s but '%s' %s in '%s'",
                           path, kind, i, a.name, describeTensor(a).c_str(), b.name,
                           describeTensor(b).c_str(), firstPath);
    }
  }
  return nullptr;
}

/// Checks the artifacts of a group: artifacts[r] is rank r of one worldSize-rank compile.
kiln_status_t checkGroupArtifacts(kiln_artifact_t *const *artifacts, uint32_t worldSize) {
  for (uint32_t r = 0; r < worldSize; ++r) {
    if (!artifacts[r])
      return makeStatusF(KILN_INVALID_ARGUMENT, "the artifact of rank %u is NULL", r);
    KILN_RETURN_IF_ERROR(kiln_tp_artifact_check(artifacts[r], r, worldSize));
    if (r > 0)
      KILN_RETURN_IF_ERROR(checkSameGroup(artifacts[r], artifacts[0], worldSize));
  }
  return nullptr;
}

} // namespace

kiln_status_t combineRankStatuses(std::vector<kiln_status_t> &statuses) {
  std::string message;
  kiln_status_code_t code = KILN_OK;
  for (size_t r = 0; r < statuses.size(); ++r) {
    kiln_status_t status = statuses[r];
    if (!status)
      continue;
    kiln_status_code_t rankCode = kiln_status_code(status);
    if (code == KILN_OK || (code == KILN_DEADLINE_EXCEEDED && rankCode != KILN_DEADLINE_EXCEEDED))
      code = rankCode;
    message +=
        (message.empty() ? "" : "\n") + formatString("rank %zu: ", r) + kiln_status_message(status);
    kiln_status_free(status);
    statuses[r] = nullptr;
  }
  return code == KILN_OK ? nullptr : makeStatus(code, message);
}

namespace {

/// One rank's worker thread: runs the jobs the group posts, one at a time, in order.
class RankWorker {
public:
  RankWorker() : thread([this] { loop(); }) {}
  ~RankWorker() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    thread.join();
  }
  RankWorker(const RankWorker &) = delete;
  RankWorker &operator=(const RankWorker &) = delete;

  /// Starts `job` on the worker; the previous job must have been waited for.
  void post(std::function<kiln_status_t()> job) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      pending = std::move(job);
      hasJob = true;
      finished = false;
    }
    wake.notify_all();
  }

  /// Waits for the posted job and returns its status (owned by the caller).
  kiln_status_t wait() {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [this] { return finished; });
    return std::exchange(result, nullptr);
  }

private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      wake.wait(lock, [this] { return hasJob || stopping; });
      if (!hasJob)
        return;
      std::function<kiln_status_t()> job = std::move(pending);
      hasJob = false;
      lock.unlock();
      kiln_status_t status = job();
      lock.lock();
      result = status;
      finished = true;
      done.notify_all();
    }
  }

  std::mutex mutex;
  std::condition_variable wake, done;
  std::function<kiln_status_t()> pending;
  bool hasJob = false, finished = false, stopping = false;
  kiln_status_t result = nullptr;
  std::thread thread; // last: started once the members above exist
};

} // namespace
} // namespace kiln

/// See kiln_tp_group_create. The workers are created first and destroyed last (members in that
/// order), so every session is created and released on its rank's worker.
struct kiln_tp_group {
  std::vector<std::unique_ptr<kiln::RankWorker>> workers;
  std::vector<kiln_session_t *> sessions;

  /// Runs `job(rank)` on every rank's worker at once, waits for all, and combines the failures.
  kiln_status_t onEveryRank(const std::function<kiln_status_t(uint32_t)> &job) {
    for (size_t r = 0; r < workers.size(); ++r)
      workers[r]->post([&job, r] { return job(static_cast<uint32_t>(r)); });
    std::vector<kiln_status_t> statuses(workers.size(), nullptr);
    for (size_t r = 0; r < workers.size(); ++r)
      statuses[r] = workers[r]->wait();
    return kiln::combineRankStatuses(statuses);
  }

  /// Releases every session at once on the workers (a rank's communicator teardown may wait for
  /// its peers').
  void releaseSessions() {
    kiln_status_free(onEveryRank([this](uint32_t r) {
      kiln_session_release(sessions[r]);
      sessions[r] = nullptr;
      return kiln_status_t(nullptr);
    }));
  }
};

extern "C" {

kiln_status_t kiln_tp_artifact_check(const kiln_artifact_t *artifact, uint32_t rank,
                                     uint32_t world_size) {
  if (!artifact)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_tp_artifact_check: artifact is NULL");
  if (world_size < 2 || rank >= world_size)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "kiln_tp_artifact_check: rank %u of world size %u (a group has at "
                             "least 2 ranks, each below the world size)",
                             rank, world_size);
  const char *path = kiln_artifact_path(artifact);
  uint32_t fileWorld = kiln_artifact_tp_world_size(artifact);
  uint32_t fileRank = kiln_artifact_tp_rank(artifact);
  if (fileWorld <= 1)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "'%s' is a single-GPU artifact (no tensor_parallel table), not a "
                             "rank file of `kiln-compile --tensor-parallel %u`",
                             path, world_size);
  if (fileWorld != world_size)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "'%s' is a rank file of a %u-rank tensor-parallel compile, but the "
                             "group has %u ranks",
                             path, fileWorld, world_size);
  if (fileRank != rank)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "'%s' holds rank %u, expected rank %u of %u; was the file renamed?",
                             path, fileRank, rank, world_size);
  return nullptr;
}

kiln_status_t kiln_tp_artifact_open(const char *base_path, uint32_t rank, uint32_t world_size,
                                    kiln_artifact_t **out_artifact) {
  if (out_artifact)
    *out_artifact = nullptr;
  if (!base_path || !out_artifact)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_artifact_open: base_path and out_artifact must be non-NULL");
  if (world_size < 2 || rank >= world_size)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "kiln_tp_artifact_open: rank %u of world size %u (a group has at "
                             "least 2 ranks, each below the world size)",
                             rank, world_size);
  const std::string base = base_path;
  const std::string path = kiln::tpRankArtifactPath(base, rank);
  if (!kiln::pathExists(path)) {
    std::string message = kiln::formatString(
        "cannot open rank %u artifact '%s': %s; a %u-rank group opens the files that "
        "`kiln-compile --tensor-parallel %u -o %s` writes (%s ... %s)",
        rank, path.c_str(), std::strerror(ENOENT), world_size, world_size, base_path,
        kiln::tpRankArtifactPath(base, 0).c_str(),
        kiln::tpRankArtifactPath(base, world_size - 1).c_str());
    // What the base path is instead, when it exists: say what to give.
    kiln_artifact_t *given = nullptr;
    if (kiln::pathExists(base))
      kiln_status_free(kiln_artifact_open(base_path, &given));
    if (given && kiln_artifact_tp_world_size(given) > 1) {
      std::string baseOfGiven = kiln::tpBaseArtifactPath(base, kiln_artifact_tp_rank(given));
      message += "; '" + base + "' is itself a rank file" +
                 (baseOfGiven.empty() ? std::string() : ": give its base '" + baseOfGiven + "'");
    } else if (given) {
      message += "; '" + base + "' is itself a single-GPU artifact";
    }
    kiln_artifact_release(given);
    return kiln::makeStatus(KILN_NOT_FOUND, message);
  }
  kiln_artifact_t *artifact = nullptr;
  KILN_RETURN_IF_ERROR(kiln_artifact_open(path.c_str(), &artifact));
  if (kiln_status_t status = kiln_tp_artifact_check(artifact, rank, world_size)) {
    kiln_artifact_release(artifact);
    return status;
  }
  *out_artifact = artifact;
  return nullptr;
}

kiln_status_t kiln_tp_artifacts_open(const char *base_path, uint32_t world_size,
                                     kiln_artifact_t **out_artifacts) {
  if (out_artifacts)
    for (uint32_t r = 0; r < world_size; ++r)
      out_artifacts[r] = nullptr;
  if (!base_path || !out_artifacts)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_artifacts_open: base_path and out_artifacts must be non-NULL");
  if (world_size < 2)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "kiln_tp_artifacts_open: world size %u (a group has at least 2 ranks)",
                             world_size);
  auto releaseAll = [&] {
    for (uint32_t r = 0; r < world_size; ++r) {
      kiln_artifact_release(out_artifacts[r]);
      out_artifacts[r] = nullptr;
    }
  };
  for (uint32_t r = 0; r < world_size; ++r) {
    kiln_status_t status = kiln_tp_artifact_open(base_path, r, world_size, &out_artifacts[r]);
    if (!status && r > 0)
      status = kiln::checkSameGroup(out_artifacts[r], out_artifacts[0], world_size);
    if (status) {
      releaseAll();
      return status;
    }
  }
  return nullptr;
}

void kiln_tp_group_params_initialize(kiln_tp_group_params_t *params) {
  if (!params)
    return;
  params->session_params = nullptr;
  params->devices = nullptr;
}

kiln_status_t kiln_tp_group_create(kiln_artifact_t *const *artifacts, uint32_t world_size,
                                   const kiln_tp_group_params_t *params,
                                   kiln_tp_group_t **out_group) {
  if (out_group)
    *out_group = nullptr;
  if (!artifacts || !out_group)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_group_create: artifacts and out_group must be non-NULL");
  if (world_size < 2)
    return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                             "kiln_tp_group_create: world size %u (a group has at least 2 ranks)",
                             world_size);
  kiln_tp_group_params_t groupParams;
  kiln_tp_group_params_initialize(&groupParams);
  if (params)
    groupParams = *params;
  kiln_session_params_t sessionParams;
  kiln_session_params_initialize(&sessionParams);
  if (groupParams.session_params)
    sessionParams = *groupParams.session_params;
  if (sessionParams.tp_id)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_group_create: session_params->tp_id must be NULL (the group "
                            "creates its own id)");
  std::vector<int> devices(world_size);
  for (uint32_t r = 0; r < world_size; ++r) {
    devices[r] = groupParams.devices ? groupParams.devices[r]
                                     : sessionParams.device_ordinal + static_cast<int>(r);
    for (uint32_t q = 0; q < r; ++q)
      if (devices[q] == devices[r])
        return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                                 "kiln_tp_group_create: ranks %u and %u are both on device %d; "
                                 "every rank needs a GPU of its own",
                                 q, r, devices[r]);
  }
  KILN_RETURN_IF_ERROR(kiln::checkGroupArtifacts(artifacts, world_size));

  kiln_tp_id_t id;
  KILN_RETURN_IF_ERROR(
      kiln::annotateStatus(kiln_tp_id_create(&id), "cannot create the tensor-parallel group id: "));
  std::unique_ptr<kiln_tp_group> group(new (std::nothrow) kiln_tp_group);
  if (!group)
    return kiln::makeStatus(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  try {
    group->sessions.assign(world_size, nullptr);
    for (uint32_t r = 0; r < world_size; ++r)
      group->workers.push_back(std::make_unique<kiln::RankWorker>());
  } catch (const std::exception &error) {
    // std::bad_alloc, or std::system_error when a thread cannot be started.
    return kiln::makeStatusF(KILN_RESOURCE_EXHAUSTED,
                             "kiln_tp_group_create: cannot start %u worker threads: %s", world_size,
                             error.what());
  }
  // Every rank joins the communicator at once: each kiln_session_create waits for the others.
  kiln_status_t status = group->onEveryRank([&](uint32_t r) {
    kiln_session_params_t rankParams = sessionParams;
    rankParams.device_ordinal = devices[r];
    rankParams.tp_id = &id;
    return kiln_session_create(artifacts[r], &rankParams, &group->sessions[r]);
  });
  if (status) {
    group->releaseSessions();
    return status;
  }
  *out_group = group.release();
  return nullptr;
}

void kiln_tp_group_release(kiln_tp_group_t *group) {
  if (!group)
    return;
  group->releaseSessions();
  delete group;
}

uint32_t kiln_tp_group_world_size(const kiln_tp_group_t *group) {
  return group ? static_cast<uint32_t>(group->sessions.size()) : 0;
}

kiln_session_t *kiln_tp_group_session(const kiln_tp_group_t *group, uint32_t rank) {
  if (!group || rank >= group->sessions.size())
    return nullptr;
  return group->sessions[rank];
}

kiln_status_t kiln_tp_group_set_input(kiln_tp_group_t *group, const char *name,
                                      const void *host_data, size_t bytes) {
  if (!group)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_tp_group_set_input: group is NULL");
  return group->onEveryRank([&](uint32_t r) {
    return kiln_session_set_input(group->sessions[r], name, host_data, bytes);
  });
}

kiln_status_t kiln_tp_group_run(kiln_tp_group_t *group) {
  if (!group)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_tp_group_run: group is NULL");
  return group->onEveryRank([&](uint32_t r) {
    KILN_RETURN_IF_ERROR(kiln_session_run(group->sessions[r], nullptr));
    return kiln_session_synchronize(group->sessions[r]);
  });
}

kiln_status_t kiln_tp_group_get_output(kiln_tp_group_t *group, const char *name, void *host_data,
                                       size_t bytes) {
  if (!group)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_tp_group_get_output: group is NULL");
  return kiln_session_get_output(group->sessions[0], name, host_data, bytes);
}

kiln_status_t kiln_tp_group_for_each_rank(kiln_tp_group_t *group, kiln_tp_rank_callback_t callback,
                                          void *user_data) {
  if (!group || !callback)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_group_for_each_rank: group and callback must be non-NULL");
  return group->onEveryRank([&](uint32_t r) { return callback(user_data, r, group->sessions[r]); });
}

} // extern "C"
