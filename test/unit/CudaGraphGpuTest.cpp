//===- CudaGraphGpuTest.cpp - Runs as a CUDA graph vs plain launches (gpu) ===//
//
// kiln_session_params_t::use_cuda_graph: the same artifact run with and without the CUDA graph
// must give bit-identical outputs, and a graph captured once must re-read the inputs on every run.
// Uses a chain of add kernels built here and, when KILN_TEST_MODELS names compiled models
// (colon-separated .kiln paths, e.g. gpt2 and llama), those too; on those models also the two
// sessions' shared weights and runs through caller-owned buffers (kiln_session_bind_input /
// _output, rebinding between runs) against the host path. Every test calls GTEST_SKIP() when no
// driver or device is present.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "TestArtifact.h"
#include "TestDriver.h"
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace fb = kiln::artifact;

namespace {

/// Number of chained add launches of the chain model.
constexpr int kChainLength = 16;
/// Arena bytes per link of the chain (one f32[4] tensor, padded).
constexpr uint64_t kLinkBytes = 256;

/// The add model turned into a chain of kChainLength dependent launches:
/// t0 = x + w, t(i) = t(i-1) + w, y = t(n-1) = x + n*w (exact in f32 for the values used).
void buildAddChainModel(kiln::test::ArtifactBuilder &builder) {
  kiln::test::buildAddModel(builder);
  fb::ModelT &model = builder.model;
  const uint64_t bytes = kiln::test::kAddElements * sizeof(float);
  model.arena_bytes = kChainLength * kLinkBytes;
  model.outputs[0]->location =
      kiln::test::makeRef(fb::Segment::Arena, (kChainLength - 1) * kLinkBytes, bytes);
  for (int i = 1; i < kChainLength; ++i) {
    auto launch = std::make_unique<fb::LaunchT>();
    launch->module_ = 0;
    launch->function = "kiln_add";
    launch->grid = {1, 1, 1};
    launch->block = {static_cast<uint32_t>(kiln::test::kAddElements), 1, 1};
    launch->args.push_back(kiln::test::makeRef(fb::Segment::Arena, (i - 1) * kLinkBytes, bytes));
    launch->args.push_back(kiln::test::makeRef(fb::Segment::Weights, 0, bytes));
    launch->args.push_back(kiln::test::makeRef(fb::Segment::Arena, i * kLinkBytes, bytes));
    model.launches.push_back(std::move(launch));
  }
}

/// Owns an artifact and one session per mode.
struct Sessions {
  kiln_artifact_t *artifact = nullptr;
  kiln_session_t *graph = nullptr;
  kiln_session_t *plain = nullptr;
  ~Sessions() {
    kiln_session_release(graph);
    kiln_session_release(plain);
    kiln_artifact_release(artifact);
  }
};

/// Creates a session on device 0 with poisoning on and `useCudaGraph`.
kiln_status_t createSession(kiln_artifact_t *artifact, int useCudaGraph, kiln_session_t **out) {
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.poison_arena = 1;
  params.use_cuda_graph = useCudaGraph;
  return kiln_session_create(artifact, &params, out);
}

/// Opens `path` and creates both sessions; sets `skip` (with the reason) when there is no GPU.
/// The plain session is created with KILN_PROGRAMMATIC_LAUNCH=0 (every kernel in plain stream
/// order), the graph session with the default (programmatic dependent launch on sm_90+), so
/// "graph == plain" also checks that PDL changes no output bit.
void openBoth(const std::string &path, Sessions &sessions, bool &skip, std::string &why) {
  skip = false;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &sessions.artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  status = createSession(sessions.artifact, 1, &sessions.graph);
  if (kiln_status_code(status) == KILN_UNAVAILABLE) {
    why = kiln_status_message(status);
    kiln_status_free(status);
    skip = true;
    return;
  }
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  const char *previous = std::getenv("KILN_PROGRAMMATIC_LAUNCH");
  std::string saved = previous ? previous : "";
  setenv("KILN_PROGRAMMATIC_LAUNCH", "0", 1);
  status = createSession(sessions.artifact, 0, &sessions.plain);
  if (previous)
    setenv("KILN_PROGRAMMATIC_LAUNCH", saved.c_str(), 1);
  else
    unsetenv("KILN_PROGRAMMATIC_LAUNCH");
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
}

/// Sets every input of `session` from `inputs` (in artifact order), runs on `stream`, and returns
/// every output's bytes concatenated (in artifact order).
std::vector<uint8_t> runOnce(kiln_session_t *session,
                             const std::vector<std::vector<uint8_t>> &inputs,
                             void *stream = nullptr) {
  kiln_artifact_t *artifact = kiln_session_artifact(session);
  kiln_tensor_info_t info;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(kiln_artifact_input_info(artifact, i, &info), nullptr);
    kiln_status_t status =
        kiln_session_set_input(session, info.name, inputs[i].data(), inputs[i].size());
    EXPECT_EQ(status, nullptr) << kiln_status_message(status);
    kiln_status_free(status);
  }
  kiln_status_t status = kiln_session_run(session, stream);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  std::vector<uint8_t> all;
  for (size_t i = 0; i < kiln_artifact_output_count(artifact); ++i) {
    EXPECT_EQ(kiln_artifact_output_info(artifact, i, &info), nullptr);
    std::vector<uint8_t> bytes(static_cast<size_t>(info.byte_size), 0xEE);
    status = kiln_session_get_output(session, info.name, bytes.data(), bytes.size());
    EXPECT_EQ(status, nullptr) << kiln_status_message(status);
    kiln_status_free(status);
    all.insert(all.end(), bytes.begin(), bytes.end());
  }
  return all;
}

/// f32 values as bytes.
std::vector<uint8_t> f32Bytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// Reads f32 element `i` of `bytes`.
float f32At(const std::vector<uint8_t> &bytes, size_t i) {
  float value;
  std::memcpy(&value, bytes.data() + i * sizeof(float), sizeof(float));
  return value;
}

/// Index of the first differing byte, or -1 when equal (sizes must match).
long firstDifference(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b) {
  if (a.size() != b.size())
    return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return static_cast<long>(i);
  return -1;
}

/// The add-chain model opened twice (graph and plain sessions); skips without a GPU.
class CudaGraphChain : public ::testing::Test {
protected:
  void SetUp() override {
    kiln::test::ArtifactBuilder builder;
    buildAddChainModel(builder);
    std::string path = kiln::test::writeTempFile("chain.kiln", builder.build());
    bool skip = false;
    std::string why;
    ASSERT_NO_FATAL_FAILURE(openBoth(path, sessions, skip, why));
    if (skip)
      GTEST_SKIP() << "no GPU: " << why;
  }
  Sessions sessions;
};

TEST_F(CudaGraphChain, ChainModelGraphAndPlainAreBitIdenticalAndReReadInputs) {
  ASSERT_NE(sessions.graph, nullptr);
  ASSERT_NE(sessions.plain, nullptr);
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions.graph), 0) << "captured only by the first run";

  const std::vector<std::vector<float>> xs = {
      {1, 2, 3, 4}, {-5, 0.5f, 100, 7}, {0, 0, 0, 0}, {1, 2, 3, 4}};
  const float w[4] = {10, 20, 30, 40};
  for (const std::vector<float> &x : xs) {
    std::vector<uint8_t> graphOut = runOnce(sessions.graph, {f32Bytes(x)});
    std::vector<uint8_t> plainOut = runOnce(sessions.plain, {f32Bytes(x)});
    ASSERT_EQ(graphOut.size(), 16u);
    EXPECT_EQ(firstDifference(graphOut, plainOut), -1) << "graph and plain outputs differ";
    // Every run must see the new input: y = x + n*w.
    for (size_t i = 0; i < 4; ++i)
      EXPECT_EQ(f32At(graphOut, i), x[i] + kChainLength * w[i])
          << "element " << i << ", x[0]=" << x[0];
  }
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions.graph), 1);
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions.plain), 0);
}

TEST_F(CudaGraphChain, InputBufferIsFixedAndReReadEveryRun) {
  // The graph holds the input buffer's address, so it must read whatever is there at launch.
  std::vector<uint8_t> first = runOnce(sessions.graph, {f32Bytes({1, 1, 1, 1})});
  uint64_t before = 0, after = 0;
  ASSERT_EQ(kiln_session_input_device_ptr(sessions.graph, "x", &before), nullptr);
  std::vector<uint8_t> second = runOnce(sessions.graph, {f32Bytes({2, 2, 2, 2})});
  ASSERT_EQ(kiln_session_input_device_ptr(sessions.graph, "x", &after), nullptr);
  EXPECT_EQ(before, after) << "input buffers are fixed for the session's life";
  EXPECT_EQ(f32At(first, 0), 1 + kChainLength * 10.0f);
  EXPECT_EQ(f32At(second, 0), 2 + kChainLength * 10.0f);
}

TEST_F(CudaGraphChain, GraphLaunchesOnSpecialStreams) {
  // CU_STREAM_PER_THREAD (0x2) and CU_STREAM_LEGACY (0x1) cannot be captured; the capture happens
  // on the session's own stream and only the launch goes to these streams.
  void *perThread = reinterpret_cast<void *>(static_cast<uintptr_t>(0x2));
  void *legacy = reinterpret_cast<void *>(static_cast<uintptr_t>(0x1));
  std::vector<uint8_t> a = runOnce(sessions.graph, {f32Bytes({3, 3, 3, 3})}, perThread);
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions.graph), 1);
  std::vector<uint8_t> b = runOnce(sessions.graph, {f32Bytes({4, 4, 4, 4})}, legacy);
  std::vector<uint8_t> c = runOnce(sessions.graph, {f32Bytes({5, 5, 5, 5})}, nullptr);
  EXPECT_EQ(f32At(a, 3), 3 + kChainLength * 40.0f);
  EXPECT_EQ(f32At(b, 3), 4 + kChainLength * 40.0f);
  EXPECT_EQ(f32At(c, 3), 5 + kChainLength * 40.0f);
  EXPECT_EQ(kiln_session_synchronize(sessions.graph), nullptr);
}

TEST_F(CudaGraphChain, BenchmarkCapturesBeforeTiming) {
  // A benchmark needs every input set, like a run.
  const std::vector<uint8_t> x = f32Bytes({1, 1, 1, 1});
  ASSERT_EQ(kiln_session_set_input(sessions.graph, "x", x.data(), x.size()), nullptr);
  ASSERT_EQ(kiln_session_set_input(sessions.plain, "x", x.data(), x.size()), nullptr);
  float graphMs[20] = {}, plainMs[20] = {};
  kiln_status_t status = kiln_session_benchmark(sessions.graph, 0, 20, graphMs);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  status = kiln_session_benchmark(sessions.plain, 0, 20, plainMs);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions.graph), 1);
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions.plain), 0);
  for (int i = 0; i < 20; ++i) {
    EXPECT_GT(graphMs[i], 0.0f);
    // With warmup 0 the first timed run would include the capture if it were not done first.
    EXPECT_LT(graphMs[i], 50.0f) << "iteration " << i;
    EXPECT_GT(plainMs[i], 0.0f);
  }
  // A capture inside the timed loop would make the first iteration stand out (capture and
  // instantiation cost far more than one replay of 16 tiny kernels).
  std::vector<float> rest(graphMs + 1, graphMs + 20);
  std::nth_element(rest.begin(), rest.begin() + rest.size() / 2, rest.end());
  float median = rest[rest.size() / 2];
  EXPECT_LE(graphMs[0], 3.0f * median + 0.05f)
      << "first timed run " << graphMs[0] << " ms, median of the others " << median << " ms";
  // After a benchmark, runs still produce correct results.
  std::vector<uint8_t> out = runOnce(sessions.graph, {f32Bytes({1, 2, 3, 4})});
  EXPECT_EQ(f32At(out, 1), 2 + kChainLength * 20.0f);
}

TEST_F(CudaGraphChain, ProfileUsesPlainLaunchesAndCapturesNothing) {
  const std::vector<uint8_t> x = f32Bytes({1, 1, 1, 1});
  ASSERT_EQ(kiln_session_set_input(sessions.graph, "x", x.data(), x.size()), nullptr);
  std::vector<float> ms(kiln_artifact_launch_count(sessions.artifact), -1.0f);
  kiln_status_t status = kiln_session_profile(sessions.graph, 3, ms.data());
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions.graph), 0) << "profiling must not capture";
  for (float v : ms)
    EXPECT_GT(v, 0.0f);
  // A run afterwards captures and is correct.
  std::vector<uint8_t> out = runOnce(sessions.graph, {f32Bytes({1, 2, 3, 4})});
  EXPECT_EQ(f32At(out, 1), 2 + kChainLength * 20.0f);
  EXPECT_EQ(kiln_session_has_cuda_graph(sessions.graph), 1);
}

/// Deterministic test data for one input: token-like ids in [0, 1000) for integer types, values
/// in [-1, 1) for float types, 0/1 for bool and u8. `seed` selects the data set.
std::vector<uint8_t> makeInput(const kiln_tensor_info_t &info, uint32_t seed) {
  size_t count = static_cast<size_t>(info.byte_size / kiln_dtype_size(info.dtype));
  std::vector<uint8_t> bytes(static_cast<size_t>(info.byte_size));
  uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (size_t i = 0; i < count; ++i) {
    uint64_t r = next();
    double unit = static_cast<double>(r >> 11) / 9007199254740992.0; // [0, 1)
    float f = static_cast<float>(2 * unit - 1);
    switch (info.dtype) {
    case KILN_DTYPE_I64: {
      int64_t v = static_cast<int64_t>(r % 1000);
      std::memcpy(&bytes[i * 8], &v, 8);
      break;
    }
    case KILN_DTYPE_I32: {
      int32_t v = static_cast<int32_t>(r % 1000);
      std::memcpy(&bytes[i * 4], &v, 4);
      break;
    }
    case KILN_DTYPE_F32:
      std::memcpy(&bytes[i * 4], &f, 4);
      break;
    case KILN_DTYPE_BF16: {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t v = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&bytes[i * 2], &v, 2);
      break;
    }
    case KILN_DTYPE_F16: {
      // Halves in [1, 2): exponent 15, random mantissa.
      uint16_t v = static_cast<uint16_t>(0x3C00 | (r & 0x3FF));
      std::memcpy(&bytes[i * 2], &v, 2);
      break;
    }
    case KILN_DTYPE_I8:
    case KILN_DTYPE_U8:
    case KILN_DTYPE_BOOL:
      bytes[i] = static_cast<uint8_t>(r & 1);
      break;
    case KILN_DTYPE_I16:
    case KILN_DTYPE_U16: {
      uint16_t v = static_cast<uint16_t>(r % 1000);
      std::memcpy(&bytes[i * 2], &v, 2);
      break;
    }
    case KILN_DTYPE_U32: {
      uint32_t v = static_cast<uint32_t>(r % 1000);
      std::memcpy(&bytes[i * 4], &v, 4);
      break;
    }
    case KILN_DTYPE_U64: {
      uint64_t v = r % 1000;
      std::memcpy(&bytes[i * 8], &v, 8);
      break;
    }
    }
  }
  return bytes;
}

/// The .kiln paths of $KILN_TEST_MODELS (colon-separated).
std::vector<std::string> testModels() {
  std::vector<std::string> paths;
  const char *env = std::getenv("KILN_TEST_MODELS");
  std::string list = env ? env : "";
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos)
      end = list.size();
    if (end > start)
      paths.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return paths;
}

TEST(CudaGraph, CompiledModelsGraphAndPlainAreBitIdentical) {
  std::vector<std::string> models = testModels();
  if (models.empty())
    GTEST_SKIP() << "set KILN_TEST_MODELS=a.kiln:b.kiln to run compiled models";
  for (const std::string &path : models) {
    SCOPED_TRACE(path);
    Sessions sessions;
    bool skip = false;
    std::string why;
    openBoth(path, sessions, skip, why);
    if (skip)
      GTEST_SKIP() << "no GPU: " << why;
    ASSERT_NE(sessions.graph, nullptr);
    ASSERT_NE(sessions.plain, nullptr);
    kiln_artifact_t *artifact = sessions.artifact;
    std::vector<std::vector<uint8_t>> inputsA, inputsB;
    for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
      kiln_tensor_info_t info;
      ASSERT_EQ(kiln_artifact_input_info(artifact, i, &info), nullptr);
      inputsA.push_back(makeInput(info, 1));
      inputsB.push_back(makeInput(info, 2));
    }
    std::vector<uint8_t> plainA = runOnce(sessions.plain, inputsA);
    std::vector<uint8_t> plainB = runOnce(sessions.plain, inputsB);
    std::vector<uint8_t> plainA2 = runOnce(sessions.plain, inputsA);
    ASSERT_EQ(firstDifference(plainA, plainA2), -1)
        << "the plain path itself is not deterministic; bit-exact comparison is meaningless";
    ASSERT_NE(firstDifference(plainA, plainB), -1)
        << "different inputs give identical outputs; the input re-read check would prove nothing";
    std::vector<uint8_t> graphA = runOnce(sessions.graph, inputsA);
    EXPECT_EQ(kiln_session_has_cuda_graph(sessions.graph), 1);
    std::vector<uint8_t> graphB = runOnce(sessions.graph, inputsB);
    std::vector<uint8_t> graphA2 = runOnce(sessions.graph, inputsA);
    EXPECT_EQ(firstDifference(graphA, plainA), -1) << "input A: graph and plain differ";
    EXPECT_EQ(firstDifference(graphB, plainB), -1) << "input B: graph and plain differ";
    EXPECT_EQ(firstDifference(graphA2, plainA), -1) << "input A again: graph and plain differ";
    size_t floats = plainA.size() / sizeof(float);
    size_t programmatic = 0;
    for (size_t i = 0; i < kiln_artifact_launch_count(artifact); ++i)
      programmatic += size_t(kiln_artifact_launch_programmatic(artifact, i));
    std::printf("%s: %zu launches (%zu programmatic), %zu output bytes, graph (PDL on sm_90+) == "
                "plain (no PDL) bit-exact for 2 inputs (A[0]=%g B[0]=%g)\n",
                path.c_str(), kiln_artifact_launch_count(artifact), programmatic, plainA.size(),
                floats ? f32At(plainA, 0) : 0.0f, floats ? f32At(plainB, 0) : 0.0f);
  }
}

/// One set of caller-owned device buffers for every non-empty input and output of an artifact
/// (0 for empty tensors), allocated by `buffers`.
struct BoundSet {
  std::vector<uint64_t> inputs, outputs;
};

/// Allocates a BoundSet for `artifact`; false when an allocation fails.
bool allocateBoundSet(kiln_artifact_t *artifact, kiln::test::DeviceBuffers &buffers,
                      BoundSet &set) {
  kiln_tensor_info_t info;
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    if (kiln_artifact_input_info(artifact, i, &info))
      return false;
    set.inputs.push_back(info.byte_size ? buffers.allocate(info.byte_size) : 0);
    if (info.byte_size && !set.inputs.back())
      return false;
  }
  for (size_t i = 0; i < kiln_artifact_output_count(artifact); ++i) {
    if (kiln_artifact_output_info(artifact, i, &info))
      return false;
    set.outputs.push_back(info.byte_size ? buffers.allocate(info.byte_size) : 0);
    if (info.byte_size && !set.outputs.back())
      return false;
  }
  return true;
}

/// Binds every non-empty input and output of `session` to `set`, runs, waits, and returns the
/// outputs read back from the bound output buffers (concatenated in artifact order, as runOnce).
/// The output buffers are filled with 0xEE bytes first, so an output the run does not deliver
/// shows.
std::vector<uint8_t> runBound(kiln_session_t *session, const kiln::test::DriverForTest &cu,
                              const BoundSet &set) {
  kiln_artifact_t *artifact = kiln_session_artifact(session);
  kiln_tensor_info_t info;
  for (size_t i = 0; i < set.inputs.size(); ++i) {
    EXPECT_EQ(kiln_artifact_input_info(artifact, i, &info), nullptr);
    if (!set.inputs[i])
      continue;
    kiln_status_t status = kiln_session_bind_input(session, info.name, set.inputs[i],
                                                   static_cast<size_t>(info.byte_size));
    EXPECT_EQ(status, nullptr) << kiln_status_message(status);
    kiln_status_free(status);
  }
  for (size_t i = 0; i < set.outputs.size(); ++i) {
    EXPECT_EQ(kiln_artifact_output_info(artifact, i, &info), nullptr);
    if (!set.outputs[i])
      continue;
    std::vector<uint8_t> poison(static_cast<size_t>(info.byte_size), 0xEE);
    EXPECT_EQ(cu.memcpyHtoD(set.outputs[i], poison.data(), poison.size()), 0);
    kiln_status_t status = kiln_session_bind_output(session, info.name, set.outputs[i],
                                                    static_cast<size_t>(info.byte_size));
    EXPECT_EQ(status, nullptr) << kiln_status_message(status);
    kiln_status_free(status);
  }
  kiln_status_t status = kiln_session_run(session, nullptr);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  status = kiln_session_synchronize(session);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  std::vector<uint8_t> all;
  for (size_t i = 0; i < set.outputs.size(); ++i) {
    EXPECT_EQ(kiln_artifact_output_info(artifact, i, &info), nullptr);
    std::vector<uint8_t> bytes(static_cast<size_t>(info.byte_size), 0xEE);
    if (set.outputs[i]) {
      EXPECT_EQ(cu.memcpyDtoH(bytes.data(), set.outputs[i], bytes.size()), 0);
    }
    all.insert(all.end(), bytes.begin(), bytes.end());
  }
  return all;
}

/// Copies `inputs` (in artifact order) into the input buffers of `set`.
void writeInputs(const kiln::test::DriverForTest &cu, const BoundSet &set,
                 const std::vector<std::vector<uint8_t>> &inputs) {
  for (size_t i = 0; i < set.inputs.size(); ++i)
    if (set.inputs[i]) {
      EXPECT_EQ(cu.memcpyHtoD(set.inputs[i], inputs[i].data(), inputs[i].size()), 0);
    }
}

TEST(CudaGraph, CompiledModelsSharedWeightsAndBoundBuffersMatchTheHostPath) {
  std::vector<std::string> models = testModels();
  if (models.empty())
    GTEST_SKIP() << "set KILN_TEST_MODELS=a.kiln:b.kiln to run compiled models";
  kiln::test::DriverForTest cu;
  if (!cu.ok())
    GTEST_SKIP() << "no CUDA driver or device";
  for (const std::string &path : models) {
    SCOPED_TRACE(path);
    Sessions sessions;
    bool skip = false;
    std::string why;
    openBoth(path, sessions, skip, why);
    if (skip)
      GTEST_SKIP() << "no GPU: " << why;
    ASSERT_NE(sessions.graph, nullptr);
    ASSERT_NE(sessions.plain, nullptr);
    kiln_artifact_t *artifact = sessions.artifact;

    // The two sessions of one artifact on one device share the weights.
    uint64_t graphWeights = 1, plainWeights = 2;
    ASSERT_EQ(kiln_session_weights_device_ptr(sessions.graph, &graphWeights), nullptr);
    ASSERT_EQ(kiln_session_weights_device_ptr(sessions.plain, &plainWeights), nullptr);
    EXPECT_EQ(graphWeights, plainWeights);
    EXPECT_EQ(graphWeights != 0, kiln_artifact_weights_bytes(artifact) != 0);

    std::vector<std::vector<uint8_t>> inputsA, inputsB;
    for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
      kiln_tensor_info_t info;
      ASSERT_EQ(kiln_artifact_input_info(artifact, i, &info), nullptr);
      inputsA.push_back(makeInput(info, 1));
      inputsB.push_back(makeInput(info, 2));
    }
    // The host path (set_input / get_output) is the reference.
    std::vector<uint8_t> hostA = runOnce(sessions.plain, inputsA);
    std::vector<uint8_t> hostB = runOnce(sessions.plain, inputsB);
    ASSERT_NE(firstDifference(hostA, hostB), -1) << "inputs A and B give identical outputs";
    ASSERT_EQ(firstDifference(runOnce(sessions.graph, inputsA), hostA), -1);

    kiln::test::DeviceBuffers buffers(cu);
    BoundSet one, two;
    ASSERT_TRUE(allocateBoundSet(artifact, buffers, one));
    ASSERT_TRUE(allocateBoundSet(artifact, buffers, two));
    writeInputs(cu, one, inputsA);
    writeInputs(cu, two, inputsB);
    for (kiln_session_t *session : {sessions.graph, sessions.plain}) {
      const char *mode = session == sessions.graph ? "cuda graph" : "plain launches";
      SCOPED_TRACE(mode);
      EXPECT_EQ(firstDifference(runBound(session, cu, one), hostA), -1) << "bound set 1 (A)";
      EXPECT_EQ(firstDifference(runBound(session, cu, two), hostB), -1) << "rebound to set 2 (B)";
      EXPECT_EQ(firstDifference(runBound(session, cu, one), hostA), -1) << "back to set 1 (A)";
      if (session == sessions.graph) {
        EXPECT_EQ(kiln_session_has_cuda_graph(session), 1);
      }
    }
    std::printf("%s: shared weights at 0x%llx; bound input/output buffers == host path bit-exact, "
                "rebinding between runs, graph and plain\n",
                path.c_str(), static_cast<unsigned long long>(graphWeights));
  }
}

/// Free and total device memory of device 0 in bytes, read through the driver API (dlopen'ed like
/// the runtime does; the primary context is retained and made current for the query). Returns
/// false if the driver or a call is unavailable.
bool deviceMemory(size_t &freeBytes, size_t &totalBytes) {
  static void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return false;
  // CUresult is an int-sized enum, CUdevice an int, CUcontext a pointer.
  auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(lib, "cuInit"));
  auto deviceGet = reinterpret_cast<int (*)(int *, int)>(dlsym(lib, "cuDeviceGet"));
  auto retain = reinterpret_cast<int (*)(void **, int)>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
  auto push = reinterpret_cast<int (*)(void *)>(dlsym(lib, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<int (*)(void **)>(dlsym(lib, "cuCtxPopCurrent_v2"));
  auto memInfo = reinterpret_cast<int (*)(size_t *, size_t *)>(dlsym(lib, "cuMemGetInfo_v2"));
  if (!init || !deviceGet || !retain || !push || !pop || !memInfo)
    return false;
  int device = 0;
  void *context = nullptr;
  if (init(0u) != 0 || deviceGet(&device, 0) != 0 || retain(&context, device) != 0 ||
      push(context) != 0)
    return false;
  bool ok = memInfo(&freeBytes, &totalBytes) == 0;
  void *popped = nullptr;
  pop(&popped);
  return ok;
}

/// Soak: one session of the first $KILN_TEST_MODELS artifact runs $KILN_SOAK_RUNS times (default
/// 10,000) as a CUDA graph, with the inputs set and every output fetched each time. Every run's
/// outputs must equal the first run's bit for bit, and the device's free memory after the last run
/// must equal its value after the first (sampled every 1,000 runs and printed). Skips without
/// $KILN_TEST_MODELS or a GPU.
TEST(Soak, RunsKeepDeviceMemoryFlatAndOutputsBitIdentical) {
  std::vector<std::string> models = testModels();
  if (models.empty())
    GTEST_SKIP() << "set KILN_TEST_MODELS=a.kiln to soak a compiled model";
  const char *env = std::getenv("KILN_SOAK_RUNS");
  long runs = env ? std::strtol(env, nullptr, 10) : 10000;
  ASSERT_GT(runs, 1) << "KILN_SOAK_RUNS must be > 1";
  Sessions sessions;
  bool skip = false;
  std::string why;
  openBoth(models[0], sessions, skip, why);
  if (skip)
    GTEST_SKIP() << "no GPU: " << why;
  kiln_artifact_t *artifact = sessions.artifact;
  std::vector<std::vector<uint8_t>> inputs;
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_tensor_info_t info;
    ASSERT_EQ(kiln_artifact_input_info(artifact, i, &info), nullptr);
    inputs.push_back(makeInput(info, 1));
  }
  std::vector<uint8_t> first = runOnce(sessions.graph, inputs);
  size_t freeAfterFirst = 0, total = 0, freeNow = 0;
  ASSERT_TRUE(deviceMemory(freeAfterFirst, total)) << "cannot read device memory (cuMemGetInfo)";
  long mismatches = 0, firstMismatch = -1;
  for (long run = 1; run < runs; ++run) {
    std::vector<uint8_t> out = runOnce(sessions.graph, inputs);
    if (firstDifference(out, first) != -1 && mismatches++ == 0)
      firstMismatch = run;
    if ((run + 1) % 1000 == 0 && deviceMemory(freeNow, total))
      std::printf("soak %s: run %ld, device free %zu bytes (%+lld since run 1)\n",
                  models[0].c_str(), run + 1, freeNow,
                  static_cast<long long>(freeNow) - static_cast<long long>(freeAfterFirst));
  }
  ASSERT_TRUE(deviceMemory(freeNow, total));
  std::printf("soak %s: %ld runs, %zu output bytes each, %ld runs differ from run 1; device free "
              "%zu bytes after run 1, %zu after run %ld\n",
              models[0].c_str(), runs, first.size(), mismatches, freeAfterFirst, freeNow, runs);
  EXPECT_EQ(mismatches, 0) << "first differing run: " << firstMismatch;
  EXPECT_EQ(freeNow, freeAfterFirst) << "device memory changed over the soak";
}

} // namespace
