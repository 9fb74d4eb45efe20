//===- TensorParallelGpuTest.cpp - Tensor-parallel sessions on GPUs (gpu) -===//
//
// Runs the 2-rank all-reduce model of TestArtifact.h (launch, all-reduce of f32[4], launch) with
// one session per rank in two threads of this process, on devices 0 and 1: with and without the
// CUDA graph, checking the exact summed result for two inputs, then benchmark and
// profile_collectives on both ranks at once; the same through a kiln_tp_group (C API and the
// C++ TpGroup). Also the timeouts: a rank whose peer never creates
// its session gets KILN_DEADLINE_EXCEEDED from kiln_session_create, and a rank whose peer stops
// running gets it from kiln_session_get_output, after which the session is aborted. And kiln-run
// end to end in threads mode and in process mode (two kiln-run processes).
//
// Skips (GTEST_SKIP with the reason) without NCCL, without a GPU, and, for the tests needing two
// ranks, with fewer than two GPUs.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include "Npy.h"
#include "TestArtifact.h"
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

/// Returns "" when NCCL and `devices` GPUs are usable, else why the test must be skipped.
std::string skipReason(int devices) {
  kiln_tp_id_t id;
  kiln_status_t status = kiln_tp_id_create(&id);
  if (status) {
    std::string why = std::string("no NCCL: ") + kiln_status_message(status);
    kiln_status_free(status);
    return why;
  }
  // A single-GPU session on the highest device needed tells whether it exists.
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("probe.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  status = kiln_artifact_open(path.c_str(), &artifact);
  if (status) {
    std::string why = kiln_status_message(status);
    kiln_status_free(status);
    return "cannot open the probe artifact: " + why;
  }
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.device_ordinal = devices - 1;
  kiln_session_t *session = nullptr;
  status = kiln_session_create(artifact, &params, &session);
  std::string why;
  if (kiln_status_code(status) == KILN_UNAVAILABLE) {
    std::string message = kiln_status_message(status);
    why = (message.find("does not exist") != std::string::npos
               ? "needs " + std::to_string(devices) + " GPUs: "
               : std::string("no GPU: ")) +
          message;
  }
  kiln_status_free(status);
  kiln_session_release(session);
  kiln_artifact_release(artifact);
  return why;
}

/// Rank files of the 2-rank all-reduce model, opened.
struct RankArtifacts {
  kiln_artifact_t *ranks[2] = {nullptr, nullptr};
  std::string base;
  ~RankArtifacts() {
    for (kiln_artifact_t *artifact : ranks)
      kiln_artifact_release(artifact);
  }
  /// Writes "<prefix>tp.rank{0,1}.kiln" and opens them.
  void create() {
    for (uint32_t r = 0; r < 2; ++r) {
      kiln::test::ArtifactBuilder builder;
      kiln::test::buildAllReduceModel(builder, r, 2);
      std::string name = "tp.rank" + std::to_string(r) + ".kiln";
      std::string path = kiln::test::writeTempFile(name, builder.build());
      base = path.substr(0, path.size() - name.size()) + "tp.kiln";
      kiln_status_t status = kiln_artifact_open(path.c_str(), &ranks[r]);
      ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    }
  }
};

/// Session parameters of rank `rank`: device = rank, arena poisoned.
kiln_session_params_t rankParams(int rank, const kiln_tp_id_t *id, int useCudaGraph,
                                 uint32_t timeoutMs) {
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.device_ordinal = rank;
  params.poison_arena = 1;
  params.use_cuda_graph = useCudaGraph;
  params.tp_id = id;
  params.tp_timeout_ms = timeoutMs;
  return params;
}

/// Takes a status: "" for success, else "CODE: message".
std::string take(kiln_status_t status) {
  if (!status)
    return std::string();
  std::string text = std::string(kiln_status_code_name(kiln_status_code(status))) + ": " +
                     kiln_status_message(status);
  kiln_status_free(status);
  return text;
}

/// Sets x, runs, reads y; returns "" or the first failure.
std::string runOnce(kiln_session_t *session, const std::vector<float> &x, std::vector<float> &y) {
  y.assign(x.size(), -1.0f);
  std::string error = take(kiln_session_set_input(session, "x", x.data(), x.size() * 4));
  if (error.empty())
    error = take(kiln_session_run(session, nullptr));
  if (error.empty())
    error = take(kiln_session_get_output(session, "y", y.data(), y.size() * 4));
  return error;
}

class TensorParallelThreads : public testing::TestWithParam<int> {};

TEST_P(TensorParallelThreads, TwoRanksSumExactlyAndAgree) {
  const int useCudaGraph = GetParam();
  std::string why = skipReason(2);
  if (!why.empty())
    GTEST_SKIP() << why;
  RankArtifacts artifacts;
  ASSERT_NO_FATAL_FAILURE(artifacts.create());
  kiln_tp_id_t id;
  ASSERT_EQ(take(kiln_tp_id_create(&id)), "");

  const std::vector<std::vector<float>> inputs = {{1, 2, 3, 4}, {-7.5f, 0.25f, 1000, 3}};
  std::vector<std::vector<std::vector<float>>> outputs(2); // [rank][input] -> y
  std::string errors[2];
  int hadGraph[2] = {-1, -1};
  std::vector<float> benchMs[2], launchMs[2], collectiveMs[2];
  std::thread threads[2];
  for (int r = 0; r < 2; ++r)
    threads[r] = std::thread([&, r] {
      kiln_session_params_t params = rankParams(r, &id, useCudaGraph, 120000);
      kiln_session_t *session = nullptr;
      std::string &error = errors[r];
      error = take(kiln_session_create(artifacts.ranks[r], &params, &session));
      for (size_t i = 0; error.empty() && i < inputs.size(); ++i) {
        std::vector<float> y;
        error = runOnce(session, inputs[i], y);
        outputs[r].push_back(y);
      }
      if (error.empty())
        hadGraph[r] = kiln_session_has_cuda_graph(session);
      benchMs[r].assign(5, 0.0f);
      if (error.empty())
        error = take(kiln_session_benchmark(session, 1, 5, benchMs[r].data()));
      launchMs[r].assign(2, 0.0f);
      collectiveMs[r].assign(1, 0.0f);
      if (error.empty())
        error = take(kiln_session_profile_collectives(session, 3, launchMs[r].data(),
                                                      collectiveMs[r].data()));
      // A run after benchmarking and profiling is still correct.
      if (error.empty()) {
        std::vector<float> y;
        error = runOnce(session, inputs[0], y);
        outputs[r].push_back(y);
      }
      kiln_session_release(session);
    });
  for (std::thread &thread : threads)
    thread.join();
  ASSERT_EQ(errors[0], "") << "rank 0";
  ASSERT_EQ(errors[1], "") << "rank 1";

  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(outputs[r].size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      std::vector<float> expected = kiln::test::allReduceModelExpected(inputs[i == 2 ? 0 : i], 2);
      for (size_t e = 0; e < expected.size(); ++e)
        EXPECT_EQ(outputs[r][i][e], expected[e])
            << "rank " << r << ", run " << i << ", element " << e;
    }
    EXPECT_EQ(hadGraph[r], useCudaGraph) << "rank " << r;
    for (float ms : benchMs[r])
      EXPECT_GT(ms, 0.0f) << "rank " << r;
    for (float ms : launchMs[r])
      EXPECT_GT(ms, 0.0f) << "rank " << r;
    EXPECT_GT(collectiveMs[r][0], 0.0f) << "rank " << r;
  }
  EXPECT_EQ(outputs[0], outputs[1]) << "every rank holds the all-reduced result";
  std::printf("2 ranks, %s: y = %g %g %g %g; bench p0 %.4f ms; all-reduce %.4f ms\n",
              useCudaGraph ? "cuda graph" : "plain launches", outputs[0][0][0], outputs[0][0][1],
              outputs[0][0][2], outputs[0][0][3], benchMs[0][0], collectiveMs[0][0]);
}

INSTANTIATE_TEST_SUITE_P(GraphAndPlain, TensorParallelThreads, testing::Values(1, 0),
                         [](const testing::TestParamInfo<int> &info) {
                           return std::string(info.param ? "CudaGraph" : "PlainLaunches");
                         });

/// The same model through a kiln_tp_group: the group creates the id, the sessions and the
/// workers; runs, benchmarks and profiles go to every rank at once.
TEST_P(TensorParallelThreads, GroupRunsEveryRankAndReturnsRankZerosOutput) {
  const int useCudaGraph = GetParam();
  std::string why = skipReason(2);
  if (!why.empty())
    GTEST_SKIP() << why;
  RankArtifacts artifacts;
  ASSERT_NO_FATAL_FAILURE(artifacts.create());
  kiln_session_params_t sessionParams = rankParams(0, nullptr, useCudaGraph, 120000);
  kiln_tp_group_params_t params;
  kiln_tp_group_params_initialize(&params);
  params.session_params = &sessionParams;
  kiln_tp_group_t *group = nullptr;
  ASSERT_EQ(take(kiln_tp_group_create(artifacts.ranks, 2, &params, &group)), "");
  ASSERT_EQ(kiln_tp_group_world_size(group), 2u);
  ASSERT_NE(kiln_tp_group_session(group, 1), nullptr);
  EXPECT_EQ(kiln_tp_group_session(group, 2), nullptr);

  const std::vector<std::vector<float>> inputs = {{1, 2, 3, 4}, {-7.5f, 0.25f, 1000, 3}};
  for (const std::vector<float> &x : inputs) {
    ASSERT_EQ(take(kiln_tp_group_set_input(group, "x", x.data(), x.size() * 4)), "");
    ASSERT_EQ(take(kiln_tp_group_run(group)), "");
    std::vector<float> y(x.size(), -1.0f), y1(x.size(), -1.0f);
    ASSERT_EQ(take(kiln_tp_group_get_output(group, "y", y.data(), y.size() * 4)), "");
    EXPECT_EQ(y, kiln::test::allReduceModelExpected(x, 2));
    ASSERT_EQ(take(kiln_session_get_output(kiln_tp_group_session(group, 1), "y", y1.data(),
                                           y1.size() * 4)),
              "");
    EXPECT_EQ(y1, y) << "rank 1 holds the same all-reduced result";
  }
  // Benchmark and profile every rank at once; each callback writes its own rank's slot.
  struct PerRank {
    std::vector<float> benchMs[2], collectiveMs[2];
  } perRank;
  ASSERT_EQ(take(kiln_tp_group_for_each_rank(
                group,
                [](void *user, uint32_t rank, kiln_session_t *session) -> kiln_status_t {
                  PerRank &p = *static_cast<PerRank *>(user);
                  p.benchMs[rank].assign(5, 0.0f);
                  if (kiln_status_t status =
                          kiln_session_benchmark(session, 1, 5, p.benchMs[rank].data()))
                    return status;
                  std::vector<float> launchMs(2);
                  p.collectiveMs[rank].assign(1, 0.0f);
                  return kiln_session_profile_collectives(session, 3, launchMs.data(),
                                                          p.collectiveMs[rank].data());
                },
                &perRank)),
            "");
  for (int r = 0; r < 2; ++r) {
    for (float ms : perRank.benchMs[r])
      EXPECT_GT(ms, 0.0f) << "rank " << r;
    EXPECT_GT(perRank.collectiveMs[r][0], 0.0f) << "rank " << r;
  }
  // A failing callback on one rank: the status names it.
  kiln_status_t status = kiln_tp_group_for_each_rank(
      group,
      [](void *, uint32_t rank, kiln_session_t *session) -> kiln_status_t {
        return rank == 1 ? kiln_session_set_input(session, "no_such_input", nullptr, 0) : nullptr;
      },
      nullptr);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(std::string(kiln_status_message(status)).rfind("rank 1: ", 0), 0u)
      << kiln_status_message(status);
  kiln_status_free(status);
  // Still healthy: run again.
  ASSERT_EQ(take(kiln_tp_group_run(group)), "");
  kiln_tp_group_release(group);
}

/// The C++ wrapper opens the rank files by their base and runs them.
TEST(TensorParallelGroup, CppWrapperOpensByBasePath) {
  std::string why = skipReason(2);
  if (!why.empty())
    GTEST_SKIP() << why;
  RankArtifacts artifacts;
  ASSERT_NO_FATAL_FAILURE(artifacts.create());
  kiln::TpGroup group;
  kiln::Status status = kiln::TpGroup::open(artifacts.base, 2, group);
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<float> x = {1, 2, 3, 4}, y(4, -1.0f);
  ASSERT_TRUE(group.setInput("x", x.data(), 16).ok());
  ASSERT_TRUE(group.run().ok());
  ASSERT_TRUE(group.getOutput("y", y.data(), 16).ok());
  EXPECT_EQ(y, kiln::test::allReduceModelExpected(x, 2));
  std::vector<float> ms[2];
  status = group.forEachRank([&](uint32_t rank, kiln_session_t *session) {
    ms[rank].assign(3, 0.0f);
    return kiln::Status(kiln_session_benchmark(session, 1, 3, ms[rank].data()));
  });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_GT(ms[1][2], 0.0f);
}

TEST(TensorParallelTimeout, CreateGivesDeadlineExceededWhenAPeerNeverJoins) {
  std::string why = skipReason(1);
  if (!why.empty())
    GTEST_SKIP() << why;
  RankArtifacts artifacts;
  ASSERT_NO_FATAL_FAILURE(artifacts.create());
  kiln_tp_id_t id;
  ASSERT_EQ(take(kiln_tp_id_create(&id)), "");
  kiln_session_params_t params = rankParams(0, &id, 1, 2000);
  kiln_session_t *session = reinterpret_cast<kiln_session_t *>(0x1);
  auto start = std::chrono::steady_clock::now();
  kiln_status_t status = kiln_session_create(artifacts.ranks[0], &params, &session);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(kiln_status_code(status), KILN_DEADLINE_EXCEEDED) << kiln_status_message(status);
  EXPECT_EQ(session, nullptr);
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  EXPECT_NE(message.find("rank 0 of 2 (device 0)"), std::string::npos) << message;
  EXPECT_NE(message.find("was not complete after 2000 ms (tp_timeout_ms): a peer rank did not "
                         "join"),
            std::string::npos)
      << message;
  EXPECT_GE(seconds, 1.9);
  EXPECT_LT(seconds, 20.0) << "the 2 s timeout plus module loading and the abort";
  std::printf("create timed out after %.2f s: %s\n", seconds, message.c_str());
}

TEST(TensorParallelTimeout, RunAbortsTheSessionWhenAPeerStops) {
  std::string why = skipReason(2);
  if (!why.empty())
    GTEST_SKIP() << why;
  RankArtifacts artifacts;
  ASSERT_NO_FATAL_FAILURE(artifacts.create());
  kiln_tp_id_t id;
  ASSERT_EQ(take(kiln_tp_id_create(&id)), "");
  // Generous enough for NCCL's initialization; the run's wait then takes this long too.
  const uint32_t timeoutMs = 10000;
  kiln_session_t *sessions[2] = {nullptr, nullptr};
  std::string errors[2];
  std::thread threads[2];
  for (int r = 0; r < 2; ++r)
    threads[r] = std::thread([&, r] {
      kiln_session_params_t params = rankParams(r, &id, 1, timeoutMs);
      errors[r] = take(kiln_session_create(artifacts.ranks[r], &params, &sessions[r]));
    });
  for (std::thread &thread : threads)
    thread.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");

  // Only rank 0 runs: its all-reduce waits for rank 1 forever, so get_output must time out.
  std::vector<float> x = {1, 2, 3, 4}, y(4);
  ASSERT_EQ(take(kiln_session_set_input(sessions[0], "x", x.data(), 16)), "");
  ASSERT_EQ(take(kiln_session_run(sessions[0], nullptr)), "");
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions[0]), 1);
  auto start = std::chrono::steady_clock::now();
  kiln_status_t status = kiln_session_get_output(sessions[0], "y", y.data(), 16);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(kiln_status_code(status), KILN_DEADLINE_EXCEEDED) << kiln_status_message(status);
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  EXPECT_NE(message.find("rank 0 of 2 (device 0): kiln_session_get_output waited 10000 ms "
                         "(tp_timeout_ms)"),
            std::string::npos)
      << message;
  EXPECT_GE(seconds, 9.9);
  EXPECT_LT(seconds, 30.0);
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions[0]), 0) << "the graph goes with the abort";

  // Aborted: everything but release fails.
  status = kiln_session_run(sessions[0], nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_FAILED_PRECONDITION);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("kiln_session_run: session aborted after kiln_session_get_output timed out "
                      "after 10000 ms"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  status = kiln_session_synchronize(sessions[0]);
  EXPECT_EQ(kiln_status_code(status), KILN_FAILED_PRECONDITION);
  kiln_status_free(status);

  start = std::chrono::steady_clock::now();
  kiln_session_release(sessions[0]);
  kiln_session_release(sessions[1]);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0) << "releasing an aborted group must not hang";
}

/// Writes a f32 vector as .npy; returns its path.
std::string writeF32(const std::string &name, const std::vector<float> &values) {
  std::vector<uint8_t> image;
  std::string error;
  EXPECT_TRUE(kiln::npy::encodeNpy(KILN_DTYPE_F32, {static_cast<int64_t>(values.size())},
                                   values.data(), values.size() * 4, image, error))
      << error;
  return kiln::test::writeTempFile(name, image);
}

/// Reads a f32 .npy; empty on failure.
std::vector<float> readF32(const std::string &path) {
  kiln::npy::NpyArray array;
  std::string error;
  if (!kiln::npy::readNpyFile(path, array, error)) {
    ADD_FAILURE() << error;
    return {};
  }
  std::vector<float> values(array.data.size() / 4);
  std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

TEST(TensorParallelKilnRun, ThreadsModeRunsComparesBenchmarksAndProfiles) {
  std::string why = skipReason(2);
  if (!why.empty())
    GTEST_SKIP() << why;
  RankArtifacts artifacts;
  ASSERT_NO_FATAL_FAILURE(artifacts.create());
  std::vector<float> x = {1, 2, 3, 4};
  std::string input = writeF32("x.npy", x);
  std::string reference = writeF32("ref.npy", kiln::test::allReduceModelExpected(x, 2));
  std::string output = testing::TempDir() + "kiln_tp_threads_y.npy";
  for (const char *graphFlag : {"", " --no-cuda-graph"}) {
    SCOPED_TRACE(graphFlag);
    kiln::test::CommandResult result = kiln::test::runKilnRun(
        "--tensor-parallel 2 '" + artifacts.base + "' --input x='" + input + "' --output y='" +
        output + "' --compare y='" + reference + "' --bench 5 --profile 3" + graphFlag);
    EXPECT_EQ(result.exitCode, 0) << result.output;
    EXPECT_NE(result.output.find("compare y: max_abs_err=0 max_rel_err=0"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find(*graphFlag ? "kernel launches, tensor-parallel 2)"
                                            : "cuda graph, tensor-parallel 2)"),
              std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("rank 0 of 2):"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("    c0  all_reduce_sum f32 x 4 (16 B)"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("total "), std::string::npos) << result.output;
    EXPECT_NE(result.output.find(" over 2 launches and 1 collectives"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("  collectives: 1 per run, "), std::string::npos) << result.output;
    EXPECT_EQ(readF32(output), kiln::test::allReduceModelExpected(x, 2));
    std::printf("%s\n", result.output.c_str());
  }
}

TEST(TensorParallelKilnRun, ThreadsModeTraceHasACollectivesTrack) {
  std::string why = skipReason(2);
  if (!why.empty())
    GTEST_SKIP() << why;
  RankArtifacts artifacts;
  ASSERT_NO_FATAL_FAILURE(artifacts.create());
  std::string trace = testing::TempDir() + "kiln_tp_threads_trace.json";
  std::remove(trace.c_str());
  kiln::test::CommandResult result = kiln::test::runKilnRun(
      "--tensor-parallel 2 '" + artifacts.base + "' --inputs-generate random:1 --trace '" +
      trace + "'");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  std::ifstream file(trace);
  std::stringstream text;
  text << file.rdbuf();
  for (const char *fragment :
       {"(rank 0 of 2)", "\"name\":\"collectives\"",
        "\"name\":\"all_reduce_sum\",\"cat\":\"collective\",\"ph\":\"X\"",
        "\"name\":\"kiln_add\",\"cat\":\"kernel\""})
    EXPECT_NE(text.str().find(fragment), std::string::npos) << fragment << "\n" << text.str();
}

TEST(TensorParallelKilnRun, ProcessModeTwoProcesses) {
  std::string why = skipReason(2);
  if (!why.empty())
    GTEST_SKIP() << why;
  RankArtifacts artifacts;
  ASSERT_NO_FATAL_FAILURE(artifacts.create());
  std::vector<float> x = {5, 6, 7, 8};
  std::string input = writeF32("x.npy", x);
  std::string output = testing::TempDir() + "kiln_tp_process_y.npy";
  std::string idFile = testing::TempDir() + "kiln_tp_process_" + std::to_string(::getpid()) + ".id";
  std::remove(idFile.c_str());
  std::remove(output.c_str());
  std::string common = "KILN_TP_WORLD_SIZE=2 KILN_TP_ID_FILE='" + idFile + "'";
  std::string arguments = "'" + artifacts.base + "' --input x='" + input + "' --bench 3";
  // Rank 1 in the background (its output to a file), rank 0 in the foreground; then both exit
  // codes.
  std::string rank1Log = testing::TempDir() + "kiln_tp_process_rank1.log";
  std::string command = kiln::test::kilnRunCommand(common + " KILN_TP_RANK=1") + " " + arguments +
                        " > '" + rank1Log + "' 2>&1 & pid=$!; " +
                        kiln::test::kilnRunCommand(common + " KILN_TP_RANK=0") + " " + arguments +
                        " --output y='" + output + "' 2>&1; rank0=$?; wait $pid; rank1=$?; " +
                        "echo \"exit rank0=$rank0 rank1=$rank1\"; cat '" + rank1Log + "'";
  kiln::test::CommandResult result = kiln::test::runShell(command);
  EXPECT_NE(result.output.find("exit rank0=0 rank1=0"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("(3 iterations, cuda graph, tensor-parallel 2)"), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("latency_ms", result.output.find("latency_ms") + 1),
            std::string::npos)
      << "only rank 0 prints: " << result.output;
  EXPECT_EQ(readF32(output), kiln::test::allReduceModelExpected(x, 2));
  EXPECT_NE(access(idFile.c_str(), F_OK), 0) << "rank 0 deletes the id file";
}

} // namespace
