//===- TensorParallelGroupTest.cpp - Rank files, groups, rendezvous (no GPU) ===//
//
// The tensor-parallel orchestration of the C API that needs no GPU: finding and checking rank
// files (kiln_tp_artifact_check, _open, kiln_tp_artifacts_open: missing file, a rank file given
// instead of the base, files of different compiles, wrong world size or rank, different
// signatures), the argument checks of kiln_tp_group_create and how a group combines the
// failures of its ranks, a group's creation on a machine without a GPU (every rank fails
// cleanly), and the process-mode rendezvous: rank, world size and device from the environment
// (KILN_TP_*, torchrun's variables, LOCAL_RANK; malformed values), and the group id through
// KILN_TP_ID or an id file (round trip, waiting for a file another thread writes later, the
// timeout, a missing directory, a directory, bad content, rank 0 creating and writing the id).
// Every user-facing message of these functions is checked here.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include "TestArtifact.h"
#include "TpGroup.h"
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

/// Takes a status: "" for success, else "CODE: message".
std::string take(kiln_status_t status) {
  if (!status)
    return std::string();
  std::string text = std::string(kiln_status_code_name(kiln_status_code(status))) + ": " +
                     kiln_status_message(status);
  kiln_status_free(status);
  return text;
}

/// Expects `status` to have `code` and `fragment` in its message; frees it.
void expectStatus(kiln_status_t status, kiln_status_code_t code, const std::string &fragment) {
  ASSERT_NE(status, nullptr) << "expected " << kiln_status_code_name(code) << ": " << fragment;
  EXPECT_EQ(kiln_status_code(status), code) << kiln_status_message(status);
  EXPECT_NE(std::string(kiln_status_message(status)).find(fragment), std::string::npos)
      << "message: " << kiln_status_message(status) << "\nexpected: " << fragment;
  kiln_status_free(status);
}

/// Rank file `rank` of `base` ("x.kiln" -> "x.rank<rank>.kiln").
std::string rankPath(const std::string &base, uint32_t rank) {
  return kiln::tpRankArtifactPath(base, rank);
}

/// Writes `worldSize` rank files of the all-reduce model "<prefix>tp.rank<r>.kiln" (each after
/// `edit(r, model)`; ranks in `skip` are not written) and returns the base "<prefix>tp.kiln".
std::string
writeRankFiles(uint32_t worldSize,
               const std::function<void(uint32_t, kiln::artifact::ModelT &)> &edit = nullptr,
               const std::vector<uint32_t> &skip = {}) {
  std::string base;
  for (uint32_t r = 0; r < worldSize; ++r) {
    kiln::test::ArtifactBuilder builder;
    kiln::test::buildAllReduceModel(builder, r, worldSize);
    if (edit)
      edit(r, builder.model);
    std::string name = "tp.rank" + std::to_string(r) + ".kiln";
    std::string path = kiln::test::writeTempFile(name, builder.build());
    if (std::find(skip.begin(), skip.end(), r) != skip.end())
      std::remove(path.c_str());
    base = path.substr(0, path.size() - name.size()) + "tp.kiln";
  }
  return base;
}

/// Writes the single-GPU add model as `name`; returns its path.
std::string writeAddModel(const std::string &name) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  return kiln::test::writeTempFile(name, builder.build());
}

/// Opens `path`; fails the test when it cannot.
kiln_artifact_t *openArtifact(const std::string &path) {
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  EXPECT_EQ(status, nullptr) << take(status);
  return artifact;
}

/// The rank artifacts of a group, released at the end of the test.
struct Ranks {
  std::vector<kiln_artifact_t *> artifacts;
  explicit Ranks(uint32_t worldSize) : artifacts(worldSize, nullptr) {}
  ~Ranks() {
    for (kiln_artifact_t *artifact : artifacts)
      kiln_artifact_release(artifact);
  }
};

//===----------------------------------------------------------------------===//
// Rank files
//===----------------------------------------------------------------------===//

TEST(TpArtifactCheck, AcceptsTheRightRank) {
  std::string base = writeRankFiles(2);
  kiln_artifact_t *artifact = openArtifact(rankPath(base, 1));
  EXPECT_EQ(take(kiln_tp_artifact_check(artifact, 1, 2)), "");
  kiln_artifact_release(artifact);
}

TEST(TpArtifactCheck, RejectsASingleGpuArtifact) {
  std::string path = writeAddModel("add.kiln");
  kiln_artifact_t *artifact = openArtifact(path);
  expectStatus(kiln_tp_artifact_check(artifact, 0, 2), KILN_INVALID_ARGUMENT,
               "'" + path +
                   "' is a single-GPU artifact (no tensor_parallel table), not a rank file of "
                   "`kiln-compile --tensor-parallel 2`");
  kiln_artifact_release(artifact);
}

TEST(TpArtifactCheck, RejectsAnotherWorldSize) {
  std::string base = writeRankFiles(3);
  kiln_artifact_t *artifact = openArtifact(rankPath(base, 0));
  expectStatus(kiln_tp_artifact_check(artifact, 0, 2), KILN_INVALID_ARGUMENT,
               "'" + rankPath(base, 0) +
                   "' is a rank file of a 3-rank tensor-parallel compile, but the group has 2 "
                   "ranks");
  kiln_artifact_release(artifact);
}

TEST(TpArtifactCheck, RejectsAnotherRank) {
  std::string base = writeRankFiles(2);
  kiln_artifact_t *artifact = openArtifact(rankPath(base, 1));
  expectStatus(kiln_tp_artifact_check(artifact, 0, 2), KILN_INVALID_ARGUMENT,
               "'" + rankPath(base, 1) +
                   "' holds rank 1, expected rank 0 of 2; was the file renamed?");
  kiln_artifact_release(artifact);
}

TEST(TpArtifactCheck, RejectsBadArguments) {
  expectStatus(kiln_tp_artifact_check(nullptr, 0, 2), KILN_INVALID_ARGUMENT, "artifact is NULL");
  std::string base = writeRankFiles(2);
  kiln_artifact_t *artifact = openArtifact(rankPath(base, 0));
  expectStatus(kiln_tp_artifact_check(artifact, 0, 1), KILN_INVALID_ARGUMENT,
               "rank 0 of world size 1 (a group has at least 2 ranks");
  expectStatus(kiln_tp_artifact_check(artifact, 2, 2), KILN_INVALID_ARGUMENT,
               "rank 2 of world size 2");
  kiln_artifact_release(artifact);
}

TEST(TpArtifactOpen, OpensAndChecksTheRankFile) {
  std::string base = writeRankFiles(2);
  kiln_artifact_t *artifact = reinterpret_cast<kiln_artifact_t *>(1);
  ASSERT_EQ(take(kiln_tp_artifact_open(base.c_str(), 1, 2, &artifact)), "");
  ASSERT_NE(artifact, nullptr);
  EXPECT_EQ(std::string(kiln_artifact_path(artifact)), rankPath(base, 1));
  EXPECT_EQ(kiln_artifact_tp_rank(artifact), 1u);
  kiln_artifact_release(artifact);
}

TEST(TpArtifactOpen, MissingRankFileNamesTheCompileThatWritesIt) {
  std::string base = writeRankFiles(2, nullptr, {1});
  kiln_artifact_t *artifact = reinterpret_cast<kiln_artifact_t *>(1);
  expectStatus(kiln_tp_artifact_open(base.c_str(), 1, 2, &artifact), KILN_NOT_FOUND,
               "cannot open rank 1 artifact '" + rankPath(base, 1) +
                   "': No such file or directory; a 2-rank group opens the files that "
                   "`kiln-compile --tensor-parallel 2 -o " +
                   base + "` writes (" + rankPath(base, 0) + " ... " + rankPath(base, 1) + ")");
  EXPECT_EQ(artifact, nullptr) << "out_artifact is zeroed";
}

TEST(TpArtifactOpen, RankFileGivenInsteadOfTheBaseSaysWhichBaseToGive) {
  std::string base = writeRankFiles(2);
  kiln_artifact_t *artifact = nullptr;
  // The rank files of "tp.rank0.kiln" as a base would be "tp.rank0.rank0.kiln" ...: missing.
  expectStatus(kiln_tp_artifact_open(rankPath(base, 0).c_str(), 0, 2, &artifact), KILN_NOT_FOUND,
               "; '" + rankPath(base, 0) + "' is itself a rank file: give its base '" + base + "'");
  EXPECT_EQ(artifact, nullptr);
}

TEST(TpArtifactOpen, SingleGpuArtifactGivenAsTheBaseSaysSo) {
  std::string path = writeAddModel("add.kiln");
  kiln_artifact_t *artifact = nullptr;
  expectStatus(kiln_tp_artifact_open(path.c_str(), 0, 2, &artifact), KILN_NOT_FOUND,
               "writes (" + rankPath(path, 0) + " ... " + rankPath(path, 1) + "); '" + path +
                   "' is itself a single-GPU artifact");
}

TEST(TpArtifactOpen, RankFileOfAnotherCompileIsRejected) {
  std::string base = writeRankFiles(3);
  kiln_artifact_t *artifact = nullptr;
  expectStatus(kiln_tp_artifact_open(base.c_str(), 1, 2, &artifact), KILN_INVALID_ARGUMENT,
               "is a rank file of a 3-rank tensor-parallel compile, but the group has 2 ranks");
  EXPECT_EQ(artifact, nullptr);
}

TEST(TpArtifactOpen, InvalidRankFileGivesTheLoadersError) {
  std::string base = writeRankFiles(2);
  std::ofstream(rankPath(base, 1), std::ios::trunc) << "not an artifact";
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_tp_artifact_open(base.c_str(), 1, 2, &artifact);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::string(kiln_status_message(status)).find(rankPath(base, 1)), std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  EXPECT_EQ(artifact, nullptr);
}

TEST(TpArtifactOpen, RejectsBadArguments) {
  kiln_artifact_t *artifact = nullptr;
  expectStatus(kiln_tp_artifact_open(nullptr, 0, 2, &artifact), KILN_INVALID_ARGUMENT,
               "base_path and out_artifact must be non-NULL");
  expectStatus(kiln_tp_artifact_open("m.kiln", 0, 2, nullptr), KILN_INVALID_ARGUMENT,
               "base_path and out_artifact must be non-NULL");
  expectStatus(kiln_tp_artifact_open("m.kiln", 3, 2, &artifact), KILN_INVALID_ARGUMENT,
               "rank 3 of world size 2");
}

TEST(TpArtifactsOpen, OpensEveryRankInOrder) {
  std::string base = writeRankFiles(3);
  Ranks ranks(3);
  ASSERT_EQ(take(kiln_tp_artifacts_open(base.c_str(), 3, ranks.artifacts.data())), "");
  for (uint32_t r = 0; r < 3; ++r) {
    ASSERT_NE(ranks.artifacts[r], nullptr);
    EXPECT_EQ(kiln_artifact_tp_rank(ranks.artifacts[r]), r);
    EXPECT_EQ(std::string(kiln_artifact_path(ranks.artifacts[r])), rankPath(base, r));
  }
}

TEST(TpArtifactsOpen, MissingRankFileLeavesNoArtifacts) {
  std::string base = writeRankFiles(2, nullptr, {1});
  Ranks ranks(2);
  expectStatus(kiln_tp_artifacts_open(base.c_str(), 2, ranks.artifacts.data()), KILN_NOT_FOUND,
               "cannot open rank 1 artifact '" + rankPath(base, 1) + "'");
  EXPECT_EQ(ranks.artifacts[0], nullptr) << "rank 0's artifact is released on failure";
  EXPECT_EQ(ranks.artifacts[1], nullptr);
}

TEST(TpArtifactsOpen, RankFilesOfDifferentCompilesAreRejected) {
  std::string base = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    m.tensor_parallel->group_hash = r == 0 ? 0x1111 : 0x2222;
  });
  Ranks ranks(2);
  expectStatus(kiln_tp_artifacts_open(base.c_str(), 2, ranks.artifacts.data()),
               KILN_INVALID_ARGUMENT,
               "'" + rankPath(base, 1) +
                   "' has group hash 0x0000000000002222 but rank 0's file has 0x0000000000001111: "
                   "the rank files come from different compiles; recompile all of them with one "
                   "`kiln-compile --tensor-parallel 2`");
  EXPECT_EQ(ranks.artifacts[0], nullptr);
}

TEST(TpArtifactsOpen, MismatchedWorldSizeIsRejected) {
  std::string base = writeRankFiles(2);
  Ranks ranks(3);
  expectStatus(kiln_tp_artifacts_open(base.c_str(), 3, ranks.artifacts.data()),
               KILN_INVALID_ARGUMENT,
               "'" + rankPath(base, 0) +
                   "' is a rank file of a 2-rank tensor-parallel compile, but the group has 3 "
                   "ranks");
}

TEST(TpArtifactsOpen, SingleGpuFileAmongRankFilesIsRejected) {
  std::string base = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    if (r == 1) {
      m.tensor_parallel.reset();
      m.collectives.clear();
      m.format_version = 1;
    }
  });
  Ranks ranks(2);
  expectStatus(kiln_tp_artifacts_open(base.c_str(), 2, ranks.artifacts.data()),
               KILN_INVALID_ARGUMENT,
               "'" + rankPath(base, 1) + "' is a single-GPU artifact (no tensor_parallel table)");
}

TEST(TpArtifactsOpen, InputsAndOutputsMustMatchRankZero) {
  std::string renamed = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    if (r == 1)
      m.inputs[0]->name = "z";
  });
  Ranks ranks(2);
  expectStatus(kiln_tp_artifacts_open(renamed.c_str(), 2, ranks.artifacts.data()),
               KILN_INVALID_ARGUMENT,
               "'" + rankPath(renamed, 1) + "': input 0 is 'z' f32[4] but 'x' f32[4] in '" +
                   rankPath(renamed, 0) + "'");
  std::string reshaped = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    if (r == 1)
      m.outputs[0]->shape = {2, 2};
  });
  expectStatus(kiln_tp_artifacts_open(reshaped.c_str(), 2, ranks.artifacts.data()),
               KILN_INVALID_ARGUMENT,
               "'" + rankPath(reshaped, 1) + "': output 0 is 'y' f32[2x2] but 'y' f32[4] in '");
  std::string extra = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    if (r == 1) {
      auto second = std::make_unique<kiln::artifact::TensorDescT>();
      second->name = "y2";
      second->dtype = kiln::artifact::DType::F32;
      second->shape = {4};
      second->location = kiln::test::makeRef(kiln::artifact::Segment::Arena, 256, 16);
      m.outputs.push_back(std::move(second));
    }
  });
  expectStatus(kiln_tp_artifacts_open(extra.c_str(), 2, ranks.artifacts.data()),
               KILN_INVALID_ARGUMENT,
               "'" + rankPath(extra, 1) + "' has 2 outputs but '" + rankPath(extra, 0) + "' has 1");
}

TEST(TpArtifactsOpen, RejectsBadArguments) {
  Ranks ranks(2);
  expectStatus(kiln_tp_artifacts_open(nullptr, 2, ranks.artifacts.data()), KILN_INVALID_ARGUMENT,
               "base_path and out_artifacts must be non-NULL");
  expectStatus(kiln_tp_artifacts_open("m.kiln", 2, nullptr), KILN_INVALID_ARGUMENT,
               "base_path and out_artifacts must be non-NULL");
  expectStatus(kiln_tp_artifacts_open("m.kiln", 1, ranks.artifacts.data()), KILN_INVALID_ARGUMENT,
               "world size 1 (a group has at least 2 ranks)");
}

TEST(TpArtifactPaths, BaseIsTheInverseOfTheRankPath) {
  EXPECT_EQ(kiln::tpBaseArtifactPath("out/m.rank1.kiln", 1), "out/m.kiln");
  EXPECT_EQ(kiln::tpBaseArtifactPath(kiln::tpRankArtifactPath("a/b.kiln", 7), 7), "a/b.kiln");
  EXPECT_EQ(kiln::tpBaseArtifactPath("out/m.rank1.kiln", 0), "") << "not rank 0's file";
  EXPECT_EQ(kiln::tpBaseArtifactPath("m.kiln", 0), "");
  EXPECT_EQ(kiln::tpBaseArtifactPath(".rank0.kiln", 0), "") << "no stem";
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

TEST(TpGroup, ParamsDefaults) {
  kiln_tp_group_params_t params;
  std::memset(&params, 0xab, sizeof(params));
  kiln_tp_group_params_initialize(&params);
  EXPECT_EQ(params.session_params, nullptr);
  EXPECT_EQ(params.devices, nullptr);
  kiln_tp_group_params_initialize(nullptr); // no crash
}

TEST(TpGroup, NullGroupCallsAreRejected) {
  float data[4] = {};
  expectStatus(kiln_tp_group_set_input(nullptr, "x", data, sizeof(data)), KILN_INVALID_ARGUMENT,
               "kiln_tp_group_set_input: group is NULL");
  expectStatus(kiln_tp_group_run(nullptr), KILN_INVALID_ARGUMENT,
               "kiln_tp_group_run: group is NULL");
  expectStatus(kiln_tp_group_get_output(nullptr, "y", data, sizeof(data)), KILN_INVALID_ARGUMENT,
               "kiln_tp_group_get_output: group is NULL");
  expectStatus(kiln_tp_group_for_each_rank(
                   nullptr,
                   [](void *, uint32_t, kiln_session_t *) -> kiln_status_t { return nullptr; },
                   nullptr),
               KILN_INVALID_ARGUMENT, "group and callback must be non-NULL");
  EXPECT_EQ(kiln_tp_group_world_size(nullptr), 0u);
  EXPECT_EQ(kiln_tp_group_session(nullptr, 0), nullptr);
  kiln_tp_group_release(nullptr); // a no-op
}

/// Fixture: the two rank files of the all-reduce model, opened.
class TpGroupCreate : public testing::Test {
protected:
  void SetUp() override {
    base = writeRankFiles(2);
    ASSERT_EQ(take(kiln_tp_artifacts_open(base.c_str(), 2, ranks.artifacts.data())), "");
  }
  std::string base;
  Ranks ranks{2};
};

TEST_F(TpGroupCreate, RejectsBadArgumentsBeforeCreatingAnything) {
  kiln_tp_group_t *group = reinterpret_cast<kiln_tp_group_t *>(1);
  expectStatus(kiln_tp_group_create(nullptr, 2, nullptr, &group), KILN_INVALID_ARGUMENT,
               "artifacts and out_group must be non-NULL");
  EXPECT_EQ(group, nullptr) << "out_group is zeroed";
  expectStatus(kiln_tp_group_create(ranks.artifacts.data(), 2, nullptr, nullptr),
               KILN_INVALID_ARGUMENT, "artifacts and out_group must be non-NULL");
  expectStatus(kiln_tp_group_create(ranks.artifacts.data(), 1, nullptr, &group),
               KILN_INVALID_ARGUMENT, "world size 1 (a group has at least 2 ranks)");

  kiln_tp_id_t id;
  std::memset(&id, 0, sizeof(id));
  kiln_session_params_t sessionParams;
  kiln_session_params_initialize(&sessionParams);
  sessionParams.tp_id = &id;
  kiln_tp_group_params_t params;
  kiln_tp_group_params_initialize(&params);
  params.session_params = &sessionParams;
  expectStatus(kiln_tp_group_create(ranks.artifacts.data(), 2, &params, &group),
               KILN_INVALID_ARGUMENT,
               "session_params->tp_id must be NULL (the group creates its own id)");

  const int sameDevice[2] = {3, 3};
  kiln_tp_group_params_initialize(&params);
  params.devices = sameDevice;
  expectStatus(kiln_tp_group_create(ranks.artifacts.data(), 2, &params, &group),
               KILN_INVALID_ARGUMENT,
               "ranks 0 and 1 are both on device 3; every rank needs a GPU of its own");
  EXPECT_EQ(group, nullptr);
}

TEST_F(TpGroupCreate, ChecksTheArtifactsBelongTogether) {
  kiln_tp_group_t *group = nullptr;
  kiln_artifact_t *swapped[2] = {ranks.artifacts[1], ranks.artifacts[0]};
  expectStatus(kiln_tp_group_create(swapped, 2, nullptr, &group), KILN_INVALID_ARGUMENT,
               "'" + rankPath(base, 1) + "' holds rank 1, expected rank 0 of 2");
  kiln_artifact_t *missing[2] = {ranks.artifacts[0], nullptr};
  expectStatus(kiln_tp_group_create(missing, 2, nullptr, &group), KILN_INVALID_ARGUMENT,
               "the artifact of rank 1 is NULL");
  std::string other = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    m.tensor_parallel->group_hash = r == 0 ? 0x1111 : 0x2222;
  });
  kiln_artifact_t *mixed[2] = {ranks.artifacts[0], openArtifact(rankPath(other, 1))};
  expectStatus(kiln_tp_group_create(mixed, 2, nullptr, &group), KILN_INVALID_ARGUMENT,
               "the rank files come from different compiles");
  kiln_artifact_release(mixed[1]);
  EXPECT_EQ(group, nullptr);
}

TEST_F(TpGroupCreate, WithoutAGpuEveryRankFailsCleanly) {
  kiln_tp_group_t *group = nullptr;
  kiln_session_params_t sessionParams;
  kiln_session_params_initialize(&sessionParams);
  sessionParams.tp_timeout_ms = 5000;
  kiln_tp_group_params_t params;
  kiln_tp_group_params_initialize(&params);
  params.session_params = &sessionParams;
  kiln_status_t status = kiln_tp_group_create(ranks.artifacts.data(), 2, &params, &group);
  if (!status) {
    kiln_tp_group_release(group);
    GTEST_SKIP() << "two GPUs and NCCL are present";
  }
  std::string message = kiln_status_message(status);
  kiln_status_code_t code = kiln_status_code(status);
  kiln_status_free(status);
  EXPECT_EQ(group, nullptr);
  if (message.rfind("cannot create the tensor-parallel group id: ", 0) == 0)
    GTEST_SKIP() << "no NCCL: " << message;
  // Without a driver both ranks fail at once, each on its own line.
  if (message.find("CUDA driver not found") == std::string::npos)
    GTEST_SKIP() << "a driver is present: " << message;
  EXPECT_EQ(code, KILN_UNAVAILABLE) << message;
  EXPECT_EQ(message.rfind("rank 0: CUDA driver not found", 0), 0u) << message;
  EXPECT_NE(message.find("\nrank 1: CUDA driver not found"), std::string::npos) << message;
}

TEST(TpGroupCpp, OpenReportsMissingRankFiles) {
  std::string base = writeRankFiles(2, nullptr, {1});
  kiln::TpGroup group;
  kiln::Status status = kiln::TpGroup::open(base, 2, group);
  EXPECT_EQ(status.code(), KILN_NOT_FOUND);
  EXPECT_NE(std::string(status.message()).find("cannot open rank 1 artifact"), std::string::npos)
      << status.message();
  EXPECT_EQ(group.get(), nullptr);
  EXPECT_EQ(group.worldSize(), 0u);
}

TEST(TpGroupStatuses, AllSucceededIsNull) {
  std::vector<kiln_status_t> statuses(3, nullptr);
  EXPECT_EQ(kiln::combineRankStatuses(statuses), nullptr);
}

TEST(TpGroupStatuses, OneLinePerFailedRankInRankOrder) {
  std::vector<kiln_status_t> statuses = {nullptr, kiln_tp_artifact_check(nullptr, 0, 2), nullptr,
                                         kiln_tp_artifacts_open("m.kiln", 1, nullptr)};
  kiln_status_t combined = kiln::combineRankStatuses(statuses);
  ASSERT_NE(combined, nullptr);
  EXPECT_EQ(std::string(kiln_status_message(combined)),
            "rank 1: kiln_tp_artifact_check: artifact is NULL\n"
            "rank 3: kiln_tp_artifacts_open: base_path and out_artifacts must be non-NULL");
  EXPECT_EQ(kiln_status_code(combined), KILN_INVALID_ARGUMENT);
  kiln_status_free(combined);
  for (kiln_status_t status : statuses)
    EXPECT_EQ(status, nullptr) << "taken over";
}

TEST(TpGroupStatuses, TheCodeIsTheFirstRootCauseNotATimeout) {
  // Rank 0 timed out waiting for rank 1, whose own failure is the cause.
  std::string file = testing::TempDir() + "kiln_tp_no_such_id_" + std::to_string(::getpid());
  kiln_tp_id_t id;
  std::vector<kiln_status_t> statuses = {kiln_tp_id_read_file(file.c_str(), 1, &id),
                                         kiln_tp_artifact_open("m.kiln", 5, 2, nullptr)};
  ASSERT_EQ(kiln_status_code(statuses[0]), KILN_DEADLINE_EXCEEDED);
  kiln_status_t combined = kiln::combineRankStatuses(statuses);
  EXPECT_EQ(kiln_status_code(combined), KILN_INVALID_ARGUMENT) << kiln_status_message(combined);
  kiln_status_free(combined);
  // Only timeouts: the code is KILN_DEADLINE_EXCEEDED.
  statuses = {kiln_tp_id_read_file(file.c_str(), 1, &id),
              kiln_tp_id_read_file(file.c_str(), 1, &id)};
  combined = kiln::combineRankStatuses(statuses);
  EXPECT_EQ(kiln_status_code(combined), KILN_DEADLINE_EXCEEDED);
  kiln_status_free(combined);
}

//===----------------------------------------------------------------------===//
// Rendezvous: the environment
//===----------------------------------------------------------------------===//

/// Clears the variables the rendezvous reads for one test and restores them afterwards.
class TpEnv : public testing::Test {
protected:
  void SetUp() override {
    for (const char *name : kNames) {
      if (const char *value = std::getenv(name))
        saved[name] = value;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char *name : kNames) {
      ::unsetenv(name);
      auto it = saved.find(name);
      if (it != saved.end())
        ::setenv(name, it->second.c_str(), 1);
    }
  }
  static void set(const char *name, const std::string &value) { ::setenv(name, value.c_str(), 1); }

  static constexpr const char *kNames[] = {"KILN_TP_RANK",   "KILN_TP_WORLD_SIZE", "RANK",
                                           "WORLD_SIZE",     "LOCAL_RANK",         "KILN_TP_ID",
                                           "KILN_TP_ID_FILE"};
  std::map<std::string, std::string> saved;
};

TEST_F(TpEnv, NoVariablesIsASingleProcess) {
  kiln_tp_rank_env_t env;
  std::memset(&env, 0xab, sizeof(env));
  ASSERT_EQ(take(kiln_tp_rank_from_env(&env)), "");
  EXPECT_EQ(env.found, 0);
  EXPECT_EQ(env.rank, 0u);
  EXPECT_EQ(env.world_size, 1u);
  EXPECT_STREQ(env.source, "");
}

TEST_F(TpEnv, KilnVariablesComeBeforeTorchruns) {
  set("RANK", "0");
  set("WORLD_SIZE", "4");
  kiln_tp_rank_env_t env;
  ASSERT_EQ(take(kiln_tp_rank_from_env(&env)), "");
  EXPECT_EQ(env.found, 1);
  EXPECT_EQ(env.rank, 0u);
  EXPECT_EQ(env.world_size, 4u);
  EXPECT_STREQ(env.source, "RANK=0 of WORLD_SIZE=4");
  set("KILN_TP_RANK", "1");
  set("KILN_TP_WORLD_SIZE", "2");
  ASSERT_EQ(take(kiln_tp_rank_from_env(&env)), "");
  EXPECT_EQ(env.rank, 1u);
  EXPECT_EQ(env.world_size, 2u);
  EXPECT_STREQ(env.source, "KILN_TP_RANK=1 of KILN_TP_WORLD_SIZE=2");
}

TEST_F(TpEnv, LargestValuesFitTheSource) {
  set("KILN_TP_RANK", "2147483646");
  set("KILN_TP_WORLD_SIZE", "2147483647");
  kiln_tp_rank_env_t env;
  ASSERT_EQ(take(kiln_tp_rank_from_env(&env)), "");
  EXPECT_STREQ(env.source, "KILN_TP_RANK=2147483646 of KILN_TP_WORLD_SIZE=2147483647");
}

TEST_F(TpEnv, MalformedValuesAreRejected) {
  kiln_tp_rank_env_t env;
  const std::pair<const char *, const char *> bad[] = {
      {"abc", "environment variable KILN_TP_RANK='abc' is not a number in [0, 2147483647]"},
      {"", "environment variable KILN_TP_RANK='' is not a number in [0, 2147483647]"},
      {"-1", "environment variable KILN_TP_RANK='-1' is not a number in [0, 2147483647]"},
      {"1x", "environment variable KILN_TP_RANK='1x' is not a number"},
      {"2147483648", "environment variable KILN_TP_RANK='2147483648' is not a number"},
      {"99999999999999999999999", "is not a number in [0, 2147483647]"}};
  set("KILN_TP_WORLD_SIZE", "2");
  for (const auto &[value, message] : bad) {
    set("KILN_TP_RANK", value);
    std::memset(&env, 0xab, sizeof(env));
    expectStatus(kiln_tp_rank_from_env(&env), KILN_INVALID_ARGUMENT, message);
    EXPECT_EQ(env.found, 0) << "zeroed on entry";
  }
  ::unsetenv("KILN_TP_RANK");
  ::unsetenv("KILN_TP_WORLD_SIZE");
  set("RANK", "0");
  set("WORLD_SIZE", "-1");
  expectStatus(kiln_tp_rank_from_env(&env), KILN_INVALID_ARGUMENT,
               "environment variable WORLD_SIZE='-1' is not a number in [0, 2147483647]");
}

TEST_F(TpEnv, HalfAPairIsRejected) {
  kiln_tp_rank_env_t env;
  set("KILN_TP_RANK", "0");
  expectStatus(kiln_tp_rank_from_env(&env), KILN_INVALID_ARGUMENT,
               "KILN_TP_RANK is set but KILN_TP_WORLD_SIZE is not; set both");
  ::unsetenv("KILN_TP_RANK");
  set("WORLD_SIZE", "2");
  expectStatus(kiln_tp_rank_from_env(&env), KILN_INVALID_ARGUMENT,
               "WORLD_SIZE is set but RANK is not; set both");
}

TEST_F(TpEnv, RankMustBeBelowTheWorldSize) {
  kiln_tp_rank_env_t env;
  set("RANK", "2");
  set("WORLD_SIZE", "2");
  expectStatus(kiln_tp_rank_from_env(&env), KILN_INVALID_ARGUMENT,
               "RANK=2 is not a rank of WORLD_SIZE=2");
  set("RANK", "0");
  set("WORLD_SIZE", "0");
  expectStatus(kiln_tp_rank_from_env(&env), KILN_INVALID_ARGUMENT,
               "RANK=0 is not a rank of WORLD_SIZE=0");
  expectStatus(kiln_tp_rank_from_env(nullptr), KILN_INVALID_ARGUMENT, "out_env is NULL");
}

TEST_F(TpEnv, DeviceIsLocalRankElseTheRank) {
  int device = -1;
  ASSERT_EQ(take(kiln_tp_device_from_env(3, &device)), "");
  EXPECT_EQ(device, 3);
  set("LOCAL_RANK", "1");
  ASSERT_EQ(take(kiln_tp_device_from_env(3, &device)), "");
  EXPECT_EQ(device, 1);
  set("LOCAL_RANK", "one");
  expectStatus(kiln_tp_device_from_env(3, &device), KILN_INVALID_ARGUMENT,
               "environment variable LOCAL_RANK='one' is not a number in [0, 1024]");
  EXPECT_EQ(device, 0) << "zeroed on entry";
  set("LOCAL_RANK", "1025");
  expectStatus(kiln_tp_device_from_env(0, &device), KILN_INVALID_ARGUMENT,
               "LOCAL_RANK='1025' is not a number in [0, 1024]");
  expectStatus(kiln_tp_device_from_env(0, nullptr), KILN_INVALID_ARGUMENT, "out_device is NULL");
}

//===----------------------------------------------------------------------===//
// Rendezvous: the group id
//===----------------------------------------------------------------------===//

/// A group id with distinct bytes (no NCCL needed).
kiln_tp_id_t patternId(unsigned seed) {
  kiln_tp_id_t id;
  for (size_t i = 0; i < KILN_TP_ID_BYTES; ++i)
    id.bytes[i] = static_cast<unsigned char>(i * 7 + seed);
  return id;
}

/// A path for this test's id file, removed first.
std::string idFilePath() {
  std::string path = testing::TempDir() + "kiln_tp_group_test_id_" + std::to_string(::getpid()) +
                     "_" + testing::UnitTest::GetInstance()->current_test_info()->name();
  std::remove(path.c_str());
  return path;
}

TEST(TpIdFile, WriteThenReadRoundTrips) {
  std::string path = idFilePath();
  kiln_tp_id_t id = patternId(3), read;
  ASSERT_EQ(take(kiln_tp_id_write_file(&id, path.c_str())), "");
  ASSERT_EQ(take(kiln_tp_id_read_file(path.c_str(), 1000, &read)), "");
  EXPECT_EQ(std::memcmp(id.bytes, read.bytes, KILN_TP_ID_BYTES), 0);
  std::ifstream file(path);
  std::string text;
  std::getline(file, text);
  EXPECT_EQ(text, kiln::tpIdToString(id)) << "the text form, then a newline";
  EXPECT_NE(access((path + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), 0)
      << "no temporary file is left";
  ASSERT_EQ(take(kiln_tp_id_file_remove(path.c_str())), "");
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  EXPECT_EQ(take(kiln_tp_id_file_remove(path.c_str())), "") << "a missing file is no error";
}

TEST(TpIdFile, ReaderWaitsForAFileWrittenLater) {
  std::string path = idFilePath();
  kiln_tp_id_t id = patternId(5), read;
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    kiln_status_free(kiln_tp_id_write_file(&id, path.c_str()));
  });
  auto start = std::chrono::steady_clock::now();
  std::string error = take(kiln_tp_id_read_file(path.c_str(), 10000, &read));
  auto waited = std::chrono::steady_clock::now() - start;
  writer.join();
  ASSERT_EQ(error, "");
  EXPECT_GE(waited, std::chrono::milliseconds(140));
  EXPECT_EQ(std::memcmp(id.bytes, read.bytes, KILN_TP_ID_BYTES), 0);
  std::remove(path.c_str());
}

TEST(TpIdFile, WaitTimesOutWithAClearError) {
  std::string path = idFilePath();
  kiln_tp_id_t read = patternId(1);
  auto start = std::chrono::steady_clock::now();
  expectStatus(kiln_tp_id_read_file(path.c_str(), 200, &read), KILN_DEADLINE_EXCEEDED,
               "group id file '" + path +
                   "' did not appear within 200 ms: rank 0 writes it; is rank 0 running, with "
                   "the same file?");
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  EXPECT_LT(waited, std::chrono::milliseconds(5000));
  EXPECT_EQ(read.bytes[1], 0) << "out_id is zeroed on entry";
}

TEST(TpIdFile, MissingDirectoryFailsWithoutWaitingForever) {
  // With no limit (0) the reader still gives up after the 5 s grace period.
  std::string path =
      testing::TempDir() + "kiln_tp_no_such_dir_" + std::to_string(::getpid()) + "/sub/kiln.id";
  kiln_tp_id_t read;
  std::string fragment = "group id file '" + path + "' cannot appear: its directory '" +
                         path.substr(0, path.size() - 8) + "' does not exist (waited ";
  expectStatus(kiln_tp_id_read_file(path.c_str(), 100, &read), KILN_IO_ERROR, fragment);
  auto start = std::chrono::steady_clock::now();
  expectStatus(kiln_tp_id_read_file(path.c_str(), 0, &read), KILN_IO_ERROR,
               "ms); rank 0 writes the id file there and creates no directories: create it or "
               "use another path");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(TpIdFile, ParentThatIsAFileIsNotADirectory) {
  std::string parent = idFilePath();
  std::ofstream(parent) << "x";
  std::string path = parent + "/kiln.id";
  kiln_tp_id_t read;
  expectStatus(kiln_tp_id_read_file(path.c_str(), 50, &read), KILN_IO_ERROR,
               "its directory '" + parent + "' is not a directory");
  std::remove(parent.c_str());
}

TEST(TpIdFile, DirectoryAndBadContentAreRejected) {
  kiln_tp_id_t read;
  std::string directory = testing::TempDir();
  expectStatus(kiln_tp_id_read_file(directory.c_str(), 100, &read), KILN_INVALID_ARGUMENT,
               "group id file '" + directory +
                   "' is a directory; give the path of a file (rank 0 writes the id to it)");
  std::string path = idFilePath();
  std::ofstream(path) << "not an id\n";
  expectStatus(kiln_tp_id_read_file(path.c_str(), 100, &read), KILN_INVALID_ARGUMENT,
               "group id file '" + path +
                   "': invalid tensor-parallel group id: character 'n' at position 0 is not a "
                   "hex digit");
  std::remove(path.c_str());
}

TEST(TpIdFile, WriteIntoAMissingDirectoryFailsAndLeavesNothing) {
  kiln_tp_id_t id = patternId(0);
  std::string path =
      testing::TempDir() + "kiln_tp_no_such_dir_" + std::to_string(::getpid()) + "/kiln.id";
  expectStatus(kiln_tp_id_write_file(&id, path.c_str()), KILN_IO_ERROR,
               "cannot write group id file '" + path + "' (temporary file '" + path + ".tmp." +
                   std::to_string(::getpid()) + "'): No such file or directory");
}

TEST(TpIdFile, RenameOntoADirectoryFails) {
  std::string path = idFilePath();
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  std::ofstream(path + "/keep") << "x"; // a non-empty directory cannot be replaced
  kiln_tp_id_t id = patternId(0);
  expectStatus(kiln_tp_id_write_file(&id, path.c_str()), KILN_IO_ERROR,
               "to group id file '" + path + "': ");
  EXPECT_NE(access((path + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), 0);
  std::remove((path + "/keep").c_str());
  ::rmdir(path.c_str());
}

TEST(TpIdFile, BadArgumentsAreRejected) {
  kiln_tp_id_t id = patternId(0);
  expectStatus(kiln_tp_id_write_file(nullptr, "x"), KILN_INVALID_ARGUMENT,
               "id and a non-empty path must be given");
  expectStatus(kiln_tp_id_write_file(&id, ""), KILN_INVALID_ARGUMENT,
               "id and a non-empty path must be given");
  expectStatus(kiln_tp_id_read_file(nullptr, 0, &id), KILN_INVALID_ARGUMENT,
               "a non-empty path and out_id must be given");
  expectStatus(kiln_tp_id_read_file("x", 0, nullptr), KILN_INVALID_ARGUMENT,
               "a non-empty path and out_id must be given");
  expectStatus(kiln_tp_id_file_remove(""), KILN_INVALID_ARGUMENT, "a non-empty path");
  std::string directory = idFilePath();
  ASSERT_EQ(::mkdir(directory.c_str(), 0700), 0);
  std::ofstream(directory + "/keep") << "x";
  expectStatus(kiln_tp_id_file_remove(directory.c_str()), KILN_IO_ERROR,
               "cannot remove group id file '" + directory + "': ");
  std::remove((directory + "/keep").c_str());
  ::rmdir(directory.c_str());
}

TEST_F(TpEnv, IdFromTheIdVariableRoundTrips) {
  kiln_tp_id_t id = patternId(9), read;
  set("KILN_TP_ID", kiln::tpIdToString(id));
  const char *written = "stale";
  ASSERT_EQ(take(kiln_tp_id_from_env(1, 1000, &read, &written)), "");
  EXPECT_EQ(std::memcmp(id.bytes, read.bytes, KILN_TP_ID_BYTES), 0);
  EXPECT_EQ(written, nullptr) << "nothing was written";
  ASSERT_EQ(take(kiln_tp_id_from_env(0, 1000, &read, nullptr)), "") << "rank 0 reads it too";
  EXPECT_EQ(std::memcmp(id.bytes, read.bytes, KILN_TP_ID_BYTES), 0);
}

TEST_F(TpEnv, BadIdVariableNamesIt) {
  kiln_tp_id_t read;
  set("KILN_TP_ID", "abc");
  expectStatus(kiln_tp_id_from_env(1, 1000, &read, nullptr), KILN_INVALID_ARGUMENT,
               "KILN_TP_ID: invalid tensor-parallel group id: 3 characters, expected 256 hex "
               "digits");
}

TEST_F(TpEnv, BothOrNeitherIdVariableIsAnError) {
  kiln_tp_id_t read;
  expectStatus(kiln_tp_id_from_env(1, 1000, &read, nullptr), KILN_NOT_FOUND,
               "the group id is not in the environment: set KILN_TP_ID_FILE to a path that rank "
               "0 writes the id to and the other ranks read (or KILN_TP_ID to an id's text form)");
  set("KILN_TP_ID_FILE", "");
  expectStatus(kiln_tp_id_from_env(1, 1000, &read, nullptr), KILN_NOT_FOUND,
               "the group id is not in the environment");
  set("KILN_TP_ID", kiln::tpIdToString(patternId(0)));
  set("KILN_TP_ID_FILE", "shared/kiln.id");
  expectStatus(kiln_tp_id_from_env(1, 1000, &read, nullptr), KILN_INVALID_ARGUMENT,
               "both KILN_TP_ID and KILN_TP_ID_FILE are set; set one");
  expectStatus(kiln_tp_id_from_env(1, 1000, nullptr, nullptr), KILN_INVALID_ARGUMENT,
               "out_id is NULL");
}

TEST_F(TpEnv, OtherRanksReadTheIdFile) {
  std::string path = idFilePath();
  kiln_tp_id_t id = patternId(11), read;
  ASSERT_EQ(take(kiln_tp_id_write_file(&id, path.c_str())), "");
  set("KILN_TP_ID_FILE", path);
  const char *written = "stale";
  ASSERT_EQ(take(kiln_tp_id_from_env(1, 1000, &read, &written)), "");
  EXPECT_EQ(std::memcmp(id.bytes, read.bytes, KILN_TP_ID_BYTES), 0);
  EXPECT_EQ(written, nullptr) << "only rank 0 writes (and removes) the file";
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
  std::remove(path.c_str());
}

TEST_F(TpEnv, IdFileWaitTimesOutNamingTheVariable) {
  std::string path = idFilePath();
  set("KILN_TP_ID_FILE", path);
  kiln_tp_id_t read;
  expectStatus(kiln_tp_id_from_env(2, 100, &read, nullptr), KILN_DEADLINE_EXCEEDED,
               "KILN_TP_ID_FILE: group id file '" + path + "' did not appear within 100 ms");
}

TEST_F(TpEnv, RankZeroCreatesAndWritesTheId) {
  std::string path = idFilePath();
  set("KILN_TP_ID_FILE", path);
  kiln_tp_id_t id, read;
  const char *written = nullptr;
  kiln_status_t status = kiln_tp_id_from_env(0, 1000, &id, &written);
  if (status && std::string(kiln_status_message(status))
                        .rfind("cannot create the tensor-parallel group id: ", 0) == 0) {
    std::string message = take(status);
    EXPECT_EQ(written, nullptr);
    EXPECT_NE(access(path.c_str(), F_OK), 0) << "nothing written";
    GTEST_SKIP() << "no NCCL: " << message;
  }
  ASSERT_EQ(take(status), "");
  ASSERT_NE(written, nullptr);
  EXPECT_EQ(std::string(written), path);
  ASSERT_EQ(take(kiln_tp_id_read_file(path.c_str(), 1000, &read)), "");
  EXPECT_EQ(std::memcmp(id.bytes, read.bytes, KILN_TP_ID_BYTES), 0);
  EXPECT_EQ(take(kiln_tp_id_file_remove(written)), "");
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST_F(TpEnv, RankZeroThatCannotWriteTheFileSaysWhy) {
  std::string path =
      testing::TempDir() + "kiln_tp_no_such_dir_" + std::to_string(::getpid()) + "/kiln.id";
  set("KILN_TP_ID_FILE", path);
  kiln_tp_id_t id;
  const char *written = "stale";
  kiln_status_t status = kiln_tp_id_from_env(0, 1000, &id, &written);
  ASSERT_NE(status, nullptr);
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  EXPECT_EQ(written, nullptr);
  if (message.rfind("cannot create the tensor-parallel group id: ", 0) == 0)
    GTEST_SKIP() << "no NCCL: " << message;
  EXPECT_EQ(message.rfind("KILN_TP_ID_FILE: cannot write group id file '" + path + "'", 0), 0u)
      << message;
  EXPECT_EQ(id.bytes[0] | id.bytes[1] | id.bytes[2], 0) << "no id on failure";
}

} // namespace
