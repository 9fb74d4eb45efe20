//===- TpRendezvous.cpp - How the processes of one group find each other ---===//
//
// Implements the process-mode half of tensor parallelism in the C API: one process per rank
// (torchrun, MPI, a job scheduler) reads its rank, world size and device from the environment
// (kiln_tp_rank_from_env: KILN_TP_RANK / KILN_TP_WORLD_SIZE, else torchrun's RANK / WORLD_SIZE;
// kiln_tp_device_from_env: LOCAL_RANK) and gets the group id that rank 0 created
// (kiln_tp_id_from_env: KILN_TP_ID, or KILN_TP_ID_FILE, which rank 0 writes atomically with
// kiln_tp_id_write_file and the other ranks poll for with kiln_tp_id_read_file).
//
// Nothing here touches a GPU or NCCL except kiln_tp_id_create on rank 0, so every error of the
// environment comes before the group forms, with a message naming the variable and its value.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "Status.h"
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace kiln {
namespace {

/// Largest rank or world size the rank variables may give (ranks are int in NCCL).
constexpr unsigned long kMaxRankValue = 0x7fffffff;
/// Largest LOCAL_RANK (a device ordinal).
constexpr unsigned long kMaxLocalRank = 1024;
/// How long a reader of the id file waits for a missing directory to appear before it concludes
/// that the file cannot (rank 0 creates no directories; a launcher may create it as ranks start).
constexpr long long kMissingDirectoryGraceMs = 5000;
/// Pause between two looks for the id file.
constexpr int kIdFilePollMs = 20;

/// Reads environment variable `name` as a decimal number in [0, max] into `out`; `set` says
/// whether it is set. KILN_INVALID_ARGUMENT when it is set but malformed.
kiln_status_t readEnvNumber(const char *name, unsigned long max, unsigned long &out, bool &set) {
  out = 0;
  const char *text = std::getenv(name);
  set = text != nullptr;
  if (!set)
    return nullptr;
  char *end = nullptr;
  errno = 0;
  out = std::strtoul(text, &end, 10);
  if (!*text || *end != '\0' || errno != 0 || out > max || text[0] == '-')
    return makeStatusF(KILN_INVALID_ARGUMENT,
                       "environment variable %s='%s' is not a number in [0, %lu]", name, text, max);
  return nullptr;
}

/// The directory `path` is in ("." for a bare name, "/" for a file in the root).
std::string parentDirectory(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Reads the whole file `path` into `text`; false when it cannot be opened.
bool readWholeFile(const std::string &path, std::string &text) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return false;
  char buffer[512];
  size_t count;
  text.clear();
  while ((count = std::fread(buffer, 1, sizeof(buffer), file)) > 0 && text.size() < (1 << 20))
    text.append(buffer, count);
  std::fclose(file);
  return true;
}

} // namespace
} // namespace kiln

extern "C" {

kiln_status_t kiln_tp_rank_from_env(kiln_tp_rank_env_t *out_env) {
  if (out_env) {
    std::memset(out_env, 0, sizeof(*out_env));
    out_env->world_size = 1;
  }
  if (!out_env)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_tp_rank_from_env: out_env is NULL");
  static const char *const kPairs[2][2] = {{"KILN_TP_RANK", "KILN_TP_WORLD_SIZE"},
                                           {"RANK", "WORLD_SIZE"}};
  for (const auto &pair : kPairs) {
    unsigned long rank = 0, world = 0;
    bool rankSet = false, worldSet = false;
    KILN_RETURN_IF_ERROR(kiln::readEnvNumber(pair[0], kiln::kMaxRankValue, rank, rankSet));
    KILN_RETURN_IF_ERROR(kiln::readEnvNumber(pair[1], kiln::kMaxRankValue, world, worldSet));
    if (!rankSet && !worldSet)
      continue;
    if (rankSet != worldSet)
      return kiln::makeStatusF(KILN_INVALID_ARGUMENT, "%s is set but %s is not; set both",
                               rankSet ? pair[0] : pair[1], rankSet ? pair[1] : pair[0]);
    if (world == 0 || rank >= world)
      return kiln::makeStatusF(KILN_INVALID_ARGUMENT, "%s=%lu is not a rank of %s=%lu", pair[0],
                               rank, pair[1], world);
    out_env->found = 1;
    out_env->rank = static_cast<uint32_t>(rank);
    out_env->world_size = static_cast<uint32_t>(world);
    std::snprintf(out_env->source, sizeof(out_env->source), "%s=%lu of %s=%lu", pair[0], rank,
                  pair[1], world);
    return nullptr;
  }
  return nullptr;
}

kiln_status_t kiln_tp_device_from_env(uint32_t rank, int *out_device) {
  if (out_device)
    *out_device = 0;
  if (!out_device)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_tp_device_from_env: out_device is NULL");
  unsigned long localRank = 0;
  bool set = false;
  KILN_RETURN_IF_ERROR(kiln::readEnvNumber("LOCAL_RANK", kiln::kMaxLocalRank, localRank, set));
  *out_device = set ? static_cast<int>(localRank) : static_cast<int>(rank);
  return nullptr;
}

kiln_status_t kiln_tp_id_write_file(const kiln_tp_id_t *id, const char *path) {
  if (!id || !path || !*path)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_id_write_file: id and a non-empty path must be given");
  const std::string temp = std::string(path) + ".tmp." + std::to_string(::getpid());
  char text[KILN_TP_ID_STRING_BYTES];
  kiln_tp_id_to_string(id, text);
  std::FILE *file = std::fopen(temp.c_str(), "w");
  bool ok = file != nullptr;
  int error = ok ? 0 : errno;
  if (ok && (std::fprintf(file, "%s\n", text) < 0 || std::fflush(file) != 0)) {
    ok = false;
    error = errno;
  }
  if (file && std::fclose(file) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    std::remove(temp.c_str());
    return kiln::makeStatusF(KILN_IO_ERROR,
                             "cannot write group id file '%s' (temporary file '%s'): %s", path,
                             temp.c_str(), std::strerror(error));
  }
  if (std::rename(temp.c_str(), path) != 0) {
    error = errno;
    std::remove(temp.c_str());
    return kiln::makeStatusF(KILN_IO_ERROR, "cannot rename '%s' to group id file '%s': %s",
                             temp.c_str(), path, std::strerror(error));
  }
  return nullptr;
}

kiln_status_t kiln_tp_id_read_file(const char *path, uint32_t timeout_ms, kiln_tp_id_t *out_id) {
  if (out_id)
    std::memset(out_id->bytes, 0, sizeof(out_id->bytes));
  if (!path || !*path || !out_id)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_id_read_file: a non-empty path and out_id must be given");
  const std::string directory = kiln::parentDirectory(path);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    struct stat info;
    if (::stat(path, &info) == 0 && S_ISDIR(info.st_mode))
      return kiln::makeStatusF(KILN_INVALID_ARGUMENT,
                               "group id file '%s' is a directory; give the path of a file (rank "
                               "0 writes the id to it)",
                               path);
    std::string text;
    if (kiln::readWholeFile(path, text))
      return kiln::annotateStatus(kiln_tp_id_from_string(text.c_str(), out_id),
                                  kiln::formatString("group id file '%s': ", path));
    const long long waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
    const bool timedOut = timeout_ms != 0 && waited >= static_cast<long long>(timeout_ms);
    const bool statOk = ::stat(directory.c_str(), &info) == 0;
    const bool noDirectory = statOk ? !S_ISDIR(info.st_mode) : errno == ENOENT || errno == ENOTDIR;
    if ((timedOut || waited >= kiln::kMissingDirectoryGraceMs) && noDirectory)
      return kiln::makeStatusF(KILN_IO_ERROR,
                               "group id file '%s' cannot appear: its directory '%s' %s (waited "
                               "%lld ms); rank 0 writes the id file there and creates no "
                               "directories: create it or use another path",
                               path, directory.c_str(),
                               statOk ? "is not a directory" : "does not exist", waited);
    if (timedOut)
      return kiln::makeStatusF(KILN_DEADLINE_EXCEEDED,
                               "group id file '%s' did not appear within %u ms: rank 0 writes "
                               "it; is rank 0 running, with the same file?",
                               path, timeout_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(kiln::kIdFilePollMs));
  }
}

kiln_status_t kiln_tp_id_file_remove(const char *path) {
  if (!path || !*path)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "kiln_tp_id_file_remove: a non-empty path must be given");
  if (std::remove(path) != 0 && errno != ENOENT)
    return kiln::makeStatusF(KILN_IO_ERROR, "cannot remove group id file '%s': %s", path,
                             std::strerror(errno));
  return nullptr;
}

kiln_status_t kiln_tp_id_from_env(uint32_t rank, uint32_t timeout_ms, kiln_tp_id_t *out_id,
                                  const char **out_written_file) {
  if (out_id)
    std::memset(out_id->bytes, 0, sizeof(out_id->bytes));
  if (out_written_file)
    *out_written_file = nullptr;
  if (!out_id)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT, "kiln_tp_id_from_env: out_id is NULL");
  const char *text = std::getenv("KILN_TP_ID");
  const char *file = std::getenv("KILN_TP_ID_FILE");
  if (text && file)
    return kiln::makeStatus(KILN_INVALID_ARGUMENT,
                            "both KILN_TP_ID and KILN_TP_ID_FILE are set; set one");
  if (text)
    return kiln::annotateStatus(kiln_tp_id_from_string(text, out_id), "KILN_TP_ID: ");
  if (!file || !*file)
    return kiln::makeStatus(KILN_NOT_FOUND,
                            "the group id is not in the environment: set KILN_TP_ID_FILE to a "
                            "path that rank 0 writes the id to and the other ranks read (or "
                            "KILN_TP_ID to an id's text form)");
  if (rank != 0)
    return kiln::annotateStatus(kiln_tp_id_read_file(file, timeout_ms, out_id),
                                "KILN_TP_ID_FILE: ");
  KILN_RETURN_IF_ERROR(kiln::annotateStatus(kiln_tp_id_create(out_id),
                                            "cannot create the tensor-parallel group id: "));
  if (kiln_status_t status =
          kiln::annotateStatus(kiln_tp_id_write_file(out_id, file), "KILN_TP_ID_FILE: ")) {
    std::memset(out_id->bytes, 0, sizeof(out_id->bytes));
    return status;
  }
  if (out_written_file)
    *out_written_file = file;
  return nullptr;
}

} // extern "C"
