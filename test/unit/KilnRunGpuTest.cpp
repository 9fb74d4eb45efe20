//===- KilnRunGpuTest.cpp - kiln-run end to end on a GPU (label gpu) ------===//
//
// Runs kiln-run on the add model: output file contents, --compare pass (exit 0) and mismatch
// (exit 1), the --bench latency line in both modes (CUDA graph and --no-cuda-graph) and equal
// outputs in both, a generated input (const:1) with --trace, --json with generated inputs, bench
// and profile; and kiln_session_profile_timeline directly. Skipped when kiln-run reports no
// driver or device.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"
#include "TestArtifact.h"
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

namespace {

using kiln::test::runKilnRun;

/// Fixture: add model, x = {1, 2, 3, 4}, references.
class KilnRunGpu : public testing::Test {
protected:
  void SetUp() override {
    kiln::test::ArtifactBuilder builder;
    kiln::test::buildAddModel(builder);
    model = kiln::test::writeTempFile("add.kiln", builder.build());
    input = writeF32("x.npy", {1, 2, 3, 4});
  }

  /// Writes a f32 vector as .npy; returns its path.
  std::string writeF32(const std::string &name, std::vector<float> values) {
    std::vector<uint8_t> image;
    std::string error;
    EXPECT_TRUE(kiln::npy::encodeNpy(KILN_DTYPE_F32, {static_cast<int64_t>(values.size())},
                                     values.data(), values.size() * 4, image, error));
    return kiln::test::writeTempFile(name, image);
  }

  /// Runs kiln-run; skips the test when it reports a missing GPU.
  kiln::test::CommandResult run(const std::string &arguments) {
    kiln::test::CommandResult result = runKilnRun(arguments);
    if (result.exitCode == 2 && (result.output.find("CUDA driver not found") != std::string::npos ||
                                 result.output.find("CUDA_ERROR_NO_DEVICE") != std::string::npos))
      skip = true;
    return result;
  }

  std::string model, input;
  bool skip = false;
};

TEST_F(KilnRunGpu, WritesOutputAndComparesPass) {
  std::string out = testing::TempDir() + "kiln_run_gpu_y.npy";
  std::string ref = writeF32("ref.npy", {11, 22, 33, 44});
  kiln::test::CommandResult result = run("'" + model + "' --input x='" + input + "' --output y='" +
                                         out + "' --compare y='" + ref + "'");
  if (skip)
    GTEST_SKIP() << result.output;
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("compare y: max_abs_err=0 max_rel_err=0"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("PASS"), std::string::npos) << result.output;
  kiln::npy::NpyArray array;
  std::string error;
  ASSERT_TRUE(kiln::npy::readNpyFile(out, array, error)) << error;
  ASSERT_EQ(array.data.size(), 16u);
  float y[4];
  std::memcpy(y, array.data.data(), 16);
  EXPECT_EQ(y[3], 44.0f);
}

TEST_F(KilnRunGpu, CompareMismatchExitsOne) {
  std::string ref = writeF32("ref_bad.npy", {11, 22, 33, 45});
  kiln::test::CommandResult result =
      run("'" + model + "' --input x='" + input + "' --compare y='" + ref + "'");
  if (skip)
    GTEST_SKIP() << result.output;
  EXPECT_EQ(result.exitCode, 1) << result.output;
  EXPECT_NE(result.output.find("max_abs_err=1 "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("FAIL"), std::string::npos) << result.output;
}

TEST_F(KilnRunGpu, LooseToleranceAcceptsSmallError) {
  std::string ref = writeF32("ref_close.npy", {11, 22, 33, 44.001f});
  kiln::test::CommandResult result =
      run("'" + model + "' --input x='" + input + "' --compare y='" + ref + "' --rtol 1e-3");
  if (skip)
    GTEST_SKIP() << result.output;
  EXPECT_EQ(result.exitCode, 0) << result.output;
}

TEST_F(KilnRunGpu, BenchPrintsPercentiles) {
  kiln::test::CommandResult result = run("'" + model + "' --input x='" + input + "' --bench 20");
  if (skip)
    GTEST_SKIP() << result.output;
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("latency_ms p50="), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("(20 iterations, cuda graph)"), std::string::npos) << result.output;
}

TEST_F(KilnRunGpu, BenchWithoutCudaGraphPrintsMode) {
  kiln::test::CommandResult result =
      run("'" + model + "' --input x='" + input + "' --bench 20 --no-cuda-graph");
  if (skip)
    GTEST_SKIP() << result.output;
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("(20 iterations, kernel launches)"), std::string::npos)
      << result.output;
}

TEST_F(KilnRunGpu, ProfilePrintsEveryLaunch) {
  kiln::test::CommandResult result = run("'" + model + "' --input x='" + input + "' --profile 5");
  if (skip)
    GTEST_SKIP() << result.output;
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("profile (median of 5 runs"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(" over 1 launches"), std::string::npos) << result.output;
}

TEST_F(KilnRunGpu, NoCudaGraphGivesSameOutput) {
  std::string graphOut = testing::TempDir() + "kiln_run_gpu_graph_y.npy";
  std::string plainOut = testing::TempDir() + "kiln_run_gpu_plain_y.npy";
  kiln::test::CommandResult result =
      run("'" + model + "' --input x='" + input + "' --output y='" + graphOut + "'");
  if (skip)
    GTEST_SKIP() << result.output;
  ASSERT_EQ(result.exitCode, 0) << result.output;
  result = run("'" + model + "' --no-cuda-graph --input x='" + input + "' --output y='" + plainOut +
               "'");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  kiln::npy::NpyArray graph, plain;
  std::string error;
  ASSERT_TRUE(kiln::npy::readNpyFile(graphOut, graph, error)) << error;
  ASSERT_TRUE(kiln::npy::readNpyFile(plainOut, plain, error)) << error;
  EXPECT_EQ(graph.data, plain.data);
}

} // namespace

//===----------------------------------------------------------------------===//
// Generated inputs, --json and --trace on a device.
//===----------------------------------------------------------------------===//

TEST_F(KilnRunGpu, ConstantInputRunsAndTraceHasTheKernel) {
  std::string out = testing::TempDir() + "kiln_run_gpu_const_y.npy";
  std::string trace = testing::TempDir() + "kiln_run_gpu_trace.json";
  std::remove(trace.c_str());
  kiln::test::CommandResult result =
      run("'" + model + "' --input x=const:1 --output y='" + out + "' --trace '" + trace + "'");
  if (skip)
    GTEST_SKIP() << result.output;
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("trace: wrote " + trace), std::string::npos) << result.output;
  // y = x + weights = 1 + {10, 20, 30, 40}.
  kiln::npy::NpyArray array;
  std::string error;
  ASSERT_TRUE(kiln::npy::readNpyFile(out, array, error)) << error;
  float y[4];
  std::memcpy(y, array.data.data(), 16);
  EXPECT_EQ(y[0], 11.0f);
  EXPECT_EQ(y[3], 41.0f);
  std::vector<uint8_t> bytes;
  FILE *file = std::fopen(trace.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  std::fclose(file);
  std::string text(bytes.begin(), bytes.end());
  EXPECT_EQ(text.rfind("{\"traceEvents\":[", 0), 0u) << text;
  EXPECT_NE(text.find("\"name\":\"kiln_add\",\"cat\":\"kernel\",\"ph\":\"X\""), std::string::npos)
      << text;
  EXPECT_EQ(text.find("\"dur\":0,"), std::string::npos) << "a kernel takes time: " << text;
}

TEST_F(KilnRunGpu, JsonHasGeneratedInputsBenchAndProfile) {
  kiln::test::CommandResult result =
      run("'" + model + "' --inputs-generate random:3 --bench 5 --profile 3 --json");
  if (skip)
    GTEST_SKIP() << result.output;
  ASSERT_EQ(result.exitCode, 0) << result.output;
  for (const char *fragment :
       {"{\"artifact\":{\"path\":", "\"generated_inputs\":{\"x\":\"random:3\"}", "\"bench\":{",
        "\"p50_ms\":", "\"profile\":{\"iterations\":3", "\"layers\":[{\"layer\":\"\""})
    EXPECT_NE(result.output.find(fragment), std::string::npos) << fragment << "\n" << result.output;
  EXPECT_EQ(result.output.find("latency_ms"), std::string::npos) << "no text with --json";
}

TEST(SessionTimelineGpu, StartsAndEndsAreOrderedAndArgumentsChecked) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("timeline.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_session_t *session = nullptr;
  kiln_status_t status = kiln_session_create(artifact, nullptr, &session);
  kiln_artifact_release(artifact);
  if (status) {
    std::string message = kiln_status_message(status);
    kiln_status_free(status);
    GTEST_SKIP() << message;
  }
  float x[4] = {1, 2, 3, 4};
  ASSERT_EQ(kiln_session_set_input(session, "x", x, sizeof(x)), nullptr);
  float start = -1, end = -1;
  status = kiln_session_profile_timeline(session, &start, nullptr, nullptr, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  ASSERT_EQ(kiln_session_profile_timeline(session, &start, &end, nullptr, nullptr), nullptr);
  EXPECT_EQ(start, 0.0f) << "the first launch starts at the run's first event";
  EXPECT_GT(end, start);
  EXPECT_LT(end, 1000.0f);
  kiln_session_release(session);
}

TEST_F(KilnRunGpu, ProfileRowsCarryNamesAndLayers) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  builder.model.launches[0]->name = "h.3.attn: add";
  builder.model.launches[0]->layer = "h.3.attn";
  std::string named = kiln::test::writeTempFile("named_add.kiln", builder.build());
  kiln::test::CommandResult result = run("'" + named + "' --inputs-generate random:1 --profile 3");
  if (skip)
    GTEST_SKIP() << result.output;
  ASSERT_EQ(result.exitCode, 0) << result.output;
  for (const char *fragment : {"  kernel\n", "  h.3.attn: add\n", "per layer (sum of its kernels",
                               "    h.3.attn    "})
    EXPECT_NE(result.output.find(fragment), std::string::npos) << fragment << "\n"
                                                               << result.output;
}
