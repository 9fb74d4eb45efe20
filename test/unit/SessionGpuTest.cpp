//===- SessionGpuTest.cpp - Session tests on a real GPU (label gpu) -------===//
//
// Runs the reference add model (y = x + w) through the full session API on device 0: PTX JIT and
// cubin paths, size and name errors, runs refused while an input was never set, stream-ordered
// asynchronous transfers, JIT error logs, device pointers, arena poisoning and benchmarking;
// sessions of one artifact sharing one device copy of the weights (device memory measured with
// cuMemGetInfo, sessions on threads, both release orders); caller-owned device buffers bound to
// inputs and outputs (with and without the CUDA graph, rebinding between runs, binding errors).
// Every test calls GTEST_SKIP() when no driver or device is present.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "TestArtifact.h"
#include "TestDriver.h"
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#ifdef KILN_TEST_HAVE_CUBIN_SM90
#include "add_kernel_sm90.inc" // defines kAddKernelCubinSm90[]
#endif

namespace fb = kiln::artifact;

namespace {

/// Opens an artifact built by `build` and creates a session, skipping the test without a GPU.
class GpuSession : public testing::Test {
protected:
  /// Builds, opens and instantiates the artifact (arena poisoned unless `poison` is 0); returns
  /// the create status (owned by caller).
  kiln_status_t create(kiln::test::ArtifactBuilder &builder, int poison = 1) {
    std::string path = kiln::test::writeTempFile("gpu.kiln", builder.build());
    kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
    if (status)
      return status;
    kiln_session_params_t params;
    kiln_session_params_initialize(&params);
    params.poison_arena = poison;
    return kiln_session_create(artifact, &params, &session);
  }

  void TearDown() override {
    kiln_session_release(session);
    kiln_artifact_release(artifact);
  }

  kiln_artifact_t *artifact = nullptr;
  kiln_session_t *session = nullptr;
};

/// Skips the current test if `status` reports a missing driver or device, else asserts success.
#define CREATE_OR_SKIP(expr)                                                                       \
  do {                                                                                             \
    kiln_status_t createStatus_ = (expr);                                                          \
    if (kiln_status_code(createStatus_) == KILN_UNAVAILABLE) {                                     \
      std::string why = kiln_status_message(createStatus_);                                        \
      kiln_status_free(createStatus_);                                                             \
      GTEST_SKIP() << "no GPU: " << why;                                                           \
    }                                                                                              \
    ASSERT_EQ(createStatus_, nullptr) << kiln_status_message(createStatus_);                       \
  } while (0)

/// Sets x = base * {1, 2, 3, 4}, runs, and checks y = x + {10, 20, 30, 40} (the add model's
/// weights). Sessions poison their arena, so a kernel that writes nothing cannot pass, and
/// successive calls with different `base` cannot pass on a previous run's output.
void runAndCheckAdd(kiln_session_t *session, float base = 1.0f) {
  float x[4];
  for (int i = 0; i < 4; ++i)
    x[i] = base * float(i + 1);
  ASSERT_EQ(kiln_session_set_input(session, "x", x, sizeof(x)), nullptr);
  ASSERT_EQ(kiln_session_run(session, nullptr), nullptr);
  float y[4];
  for (float &v : y)
    v = std::nanf("");
  kiln_status_t status = kiln_session_get_output(session, "y", y, sizeof(y));
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(y[i], x[i] + 10.0f * float(i + 1)) << "element " << i << ", base " << base;
}

TEST_F(GpuSession, RunsAddModelThroughPtx) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  runAndCheckAdd(session);
  // A second run with different inputs reuses everything.
  runAndCheckAdd(session, -3.5f);
  EXPECT_EQ(kiln_session_synchronize(session), nullptr);
  EXPECT_EQ(kiln_session_artifact(session), artifact);
}

#ifdef KILN_TEST_HAVE_CUBIN_SM90
TEST_F(GpuSession, RunsAddModelThroughCubinWhenArchMatches) {
  kiln::test::ArtifactBuilder builder;
  std::vector<uint8_t> cubin(std::begin(kAddKernelCubinSm90), std::end(kAddKernelCubinSm90));
  kiln::test::buildAddModel(builder, {{90, cubin}});
  // Break the PTX so that only the cubin can work on sm_90.
  std::string brokenPtx = "this is not PTX";
  builder.setBlob(builder.model.modules[0]->ptx,
                  std::vector<uint8_t>(brokenPtx.begin(), brokenPtx.end()));
  kiln_status_t status = create(builder);
  if (status && std::string(kiln_status_message(status)).find("JIT") != std::string::npos) {
    std::string why = kiln_status_message(status);
    kiln_status_free(status);
    GTEST_SKIP() << "device is not sm_90, PTX path taken: " << why;
  }
  CREATE_OR_SKIP(status);
  runAndCheckAdd(session);
}
#endif

TEST_F(GpuSession, ReleasingArtifactEarlyIsSafe) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  kiln_artifact_release(artifact);
  artifact = nullptr;
  runAndCheckAdd(session);
}

TEST_F(GpuSession, SetInputRejectsWrongSize) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  float x[3] = {};
  kiln_status_t status = kiln_session_set_input(session, "x", x, sizeof(x));
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("input 'x' is 16 bytes (f32, 4 elements) but 12 bytes were given"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
}

TEST_F(GpuSession, UnknownNamesAreNotFound) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  float buffer[4] = {};
  kiln_status_t status = kiln_session_set_input(session, "nope", buffer, sizeof(buffer));
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  kiln_status_free(status);
  status = kiln_session_get_output(session, "x", buffer, sizeof(buffer));
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  EXPECT_NE(std::string(kiln_status_message(status)).find("outputs: 'y'"), std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  status = kiln_session_get_output(session, "y", buffer, 8);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
}

/// Expects `status` to be KILN_FAILED_PRECONDITION from `function` naming input 'x' as never set.
void expectInputXUnset(kiln_status_t status, const char *function) {
  EXPECT_EQ(kiln_status_code(status), KILN_FAILED_PRECONDITION) << function;
  EXPECT_EQ(std::string(kiln_status_message(status)),
            std::string(function) +
                ": input 'x' was never set; set every input with kiln_session_set_input, bind "
                "it with kiln_session_bind_input or write it through "
                "kiln_session_input_device_ptr before running");
  kiln_status_free(status);
}

TEST_F(GpuSession, RunWithUnsetInputIsFailedPrecondition) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  expectInputXUnset(kiln_session_run(session, nullptr), "kiln_session_run");
  float ms[2] = {};
  expectInputXUnset(kiln_session_benchmark(session, 0, 2, ms), "kiln_session_benchmark");
  expectInputXUnset(kiln_session_profile(session, 1, ms), "kiln_session_profile");
  expectInputXUnset(kiln_session_profile_collectives(session, 1, ms, nullptr),
                    "kiln_session_profile_collectives");
  EXPECT_EQ(kiln_session_has_cuda_graph(session), 0) << "nothing was captured";
  // A set_input that fails (wrong size) does not count as setting the input.
  float small[2] = {1, 2};
  kiln_status_t status = kiln_session_set_input(session, "x", small, sizeof(small));
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  expectInputXUnset(kiln_session_run(session, nullptr), "kiln_session_run");
  // Once set, the session runs normally.
  runAndCheckAdd(session);
}

TEST_F(GpuSession, UnsetInputsAreAllNamedAndZeroSizeInputsNeedNoSetting) {
  // The add model plus two inputs no launch reads: "mask" i64[2] and the empty "none" f32[0].
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  auto mask = std::make_unique<fb::TensorDescT>();
  mask->name = "mask";
  mask->dtype = fb::DType::I64;
  mask->shape = {2};
  builder.model.inputs.push_back(std::move(mask));
  auto none = std::make_unique<fb::TensorDescT>();
  none->name = "none";
  none->dtype = fb::DType::F32;
  none->shape = {0};
  builder.model.inputs.push_back(std::move(none));
  CREATE_OR_SKIP(create(builder));
  kiln_status_t status = kiln_session_run(session, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_FAILED_PRECONDITION);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("kiln_session_run: inputs 'x', 'mask' were never set;"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
  const int64_t maskValues[2] = {1, 0};
  ASSERT_EQ(kiln_session_set_input(session, "mask", maskValues, sizeof(maskValues)), nullptr);
  runAndCheckAdd(session);
}

TEST_F(GpuSession, InputDevicePointerCountsAsSettingTheInput) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  uint64_t input = 0;
  ASSERT_EQ(kiln_session_input_device_ptr(session, "x", &input), nullptr);
  kiln_status_t status = kiln_session_run(session, nullptr);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  EXPECT_EQ(kiln_session_synchronize(session), nullptr);
}

using kiln::test::DriverForTest;

TEST_F(GpuSession, AsyncTransfersAreStreamOrderedOnTheCallersStream) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  DriverForTest cu;
  ASSERT_TRUE(cu.ok()) << "driver calls for the test's pinned memory and stream";
  float *x = nullptr, *y = nullptr;
  ASSERT_EQ(cu.hostAlloc(reinterpret_cast<void **>(&x), 4 * sizeof(float), 0), 0);
  ASSERT_EQ(cu.hostAlloc(reinterpret_cast<void **>(&y), 4 * sizeof(float), 0), 0);
  void *stream = nullptr;
  ASSERT_EQ(cu.streamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */), 0);

  // Set (only asynchronously: it counts as set), run and read back on the caller's stream, with
  // one host synchronization at the end; new values each round, output poisoned before each.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) {
      x[i] = float(round * 100 + i + 1);
      y[i] = std::nanf("");
    }
    kiln_status_t status = kiln_session_set_input_async(session, "x", x, 16, stream);
    ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    status = kiln_session_run(session, stream);
    ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    status = kiln_session_get_output_async(session, "y", y, 16, stream);
    ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    ASSERT_EQ(cu.streamSynchronize(stream), 0);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(y[i], x[i] + 10.0f * float(i + 1)) << "round " << round << ", element " << i;
  }

  // An asynchronous set on the caller's stream, then a run on the session's own stream: the run
  // waits for the copy.
  for (int i = 0; i < 4; ++i)
    x[i] = -float(i + 1);
  ASSERT_EQ(kiln_session_set_input_async(session, "x", x, 16, stream), nullptr);
  ASSERT_EQ(kiln_session_run(session, nullptr), nullptr);
  ASSERT_EQ(kiln_session_get_output_async(session, "y", y, 16, nullptr), nullptr);
  ASSERT_EQ(kiln_session_synchronize(session), nullptr);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(y[i], 9.0f * float(i + 1)) << "element " << i;

  // Errors, before anything is enqueued.
  kiln_status_t status = kiln_session_set_input_async(session, "x", x, 8, stream);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status),
               "input 'x' is 16 bytes (f32, 4 elements) but 8 bytes were given");
  kiln_status_free(status);
  status = kiln_session_set_input_async(session, "x", nullptr, 16, stream);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status), "kiln_session_set_input_async: host_data is NULL");
  kiln_status_free(status);
  status = kiln_session_get_output_async(session, "y", nullptr, 16, stream);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_message(status), "kiln_session_get_output_async: host_data is NULL");
  kiln_status_free(status);
  status = kiln_session_get_output_async(session, "x", y, 16, stream);
  EXPECT_EQ(kiln_status_code(status), KILN_NOT_FOUND);
  kiln_status_free(status);

  ASSERT_EQ(kiln_session_synchronize(session), nullptr);
  cu.streamDestroy(stream);
  cu.freeHost(x);
  cu.freeHost(y);
}

TEST_F(GpuSession, DevicePointers) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  uint64_t input = 0, output = 0;
  ASSERT_EQ(kiln_session_input_device_ptr(session, "x", &input), nullptr);
  ASSERT_EQ(kiln_session_output_device_ptr(session, "y", &output), nullptr);
  EXPECT_NE(input, 0u);
  EXPECT_NE(output, 0u);
  EXPECT_NE(input, output);
}

TEST_F(GpuSession, PoisonedArenaShowsUnwrittenOutput) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder, /*poison=*/1));
  float y[4] = {};
  ASSERT_EQ(kiln_session_get_output(session, "y", y, sizeof(y)), nullptr);
  for (float v : y)
    EXPECT_TRUE(std::isnan(v));
}

TEST_F(GpuSession, BenchmarkReportsPositiveTimes) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  const float x[4] = {1, 2, 3, 4};
  ASSERT_EQ(kiln_session_set_input(session, "x", x, sizeof(x)), nullptr);
  float ms[5] = {};
  kiln_status_t status = kiln_session_benchmark(session, 2, 5, ms);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  for (float v : ms) {
    EXPECT_GT(v, 0.0f);
    EXPECT_LT(v, 1000.0f);
  }
  status = kiln_session_benchmark(session, 0, 0, ms);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
}

TEST_F(GpuSession, BadDeviceOrdinalIsUnavailable) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("gpu.kiln", builder.build());
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.device_ordinal = 999;
  kiln_status_t status = kiln_session_create(artifact, &params, &session);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  if (message.find("CUDA driver not found") != std::string::npos)
    GTEST_SKIP() << message;
  EXPECT_NE(message.find("CUDA device 999 does not exist"), std::string::npos) << message;
}

TEST_F(GpuSession, PtxSyntaxErrorReportsJitLog) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string ptx = std::string(kiln::test::kAddKernelPtx);
  ptx.replace(ptx.find("add.f32"), 7, "bogus.f32");
  builder.setBlob(builder.model.modules[0]->ptx, std::vector<uint8_t>(ptx.begin(), ptx.end()));
  kiln_status_t status = create(builder);
  if (kiln_status_code(status) == KILN_UNAVAILABLE) {
    std::string why = kiln_status_message(status);
    kiln_status_free(status);
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(kiln_status_code(status), KILN_CUDA_ERROR);
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  EXPECT_NE(message.find("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX"), std::string::npos)
      << message;
  EXPECT_NE(message.find("JIT log:"), std::string::npos) << message;
  EXPECT_NE(message.find("bogus"), std::string::npos) << message;
  EXPECT_NE(message.find("runtime/src/Session.cpp:"), std::string::npos) << message;
}

TEST_F(GpuSession, MissingKernelIsReported) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  builder.model.launches[0]->function = "kiln_missing";
  kiln_status_t status = create(builder);
  if (kiln_status_code(status) == KILN_UNAVAILABLE) {
    std::string why = kiln_status_message(status);
    kiln_status_free(status);
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(kiln_status_code(status), KILN_CUDA_ERROR);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("kernel 'kiln_missing' of launch 0 not found in module 'add'"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
}

TEST_F(GpuSession, ModuleWithoutMatchingCode) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder, {{10, std::vector<uint8_t>(64, 0)}});
  builder.model.modules[0]->ptx.reset();
  // buildAddModel registered the PTX payload for the ptx field; drop it by pointing it at nothing.
  builder.setBlob(builder.model.modules[0]->ptx, {});
  kiln_status_t status = create(builder);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  if (message.find("CUDA driver not found") != std::string::npos)
    GTEST_SKIP() << message;
  EXPECT_NE(message.find("module 'add' has no cubin for this device"), std::string::npos)
      << message;
  EXPECT_NE(message.find("cubins: sm_10"), std::string::npos) << message;
}

/// Weight segment size of the shared-weights tests: large against what a session allocates
/// besides (arena, input buffer, module code: a few MiB), so that device memory shows how many
/// copies exist.
constexpr size_t kBigWeightBytes = size_t(256) << 20;

/// Writes the add model with a kBigWeightBytes weight segment ({10, 20, 30, 40}, then zeros; the
/// kernel reads the first four floats) and opens it; returns nullptr after a test failure.
kiln_artifact_t *openBigWeightsAddModel() {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::vector<uint8_t> weights = kiln::test::addModelWeights();
  weights.resize(kBigWeightBytes, 0);
  builder.setBlob(builder.model.weights, std::move(weights));
  std::string path = kiln::test::writeTempFile("big_weights.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  return artifact;
}

/// Creates a session of `artifact` on device 0 (arena poisoned, CUDA graph per `useGraph`).
kiln_status_t createSession(kiln_artifact_t *artifact, kiln_session_t **session, int useGraph = 1) {
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.poison_arena = 1;
  params.use_cuda_graph = useGraph;
  return kiln_session_create(artifact, &params, session);
}

/// Returns the weights pointer of `session` (0 after a test failure).
uint64_t weightsOf(const kiln_session_t *session) {
  uint64_t pointer = 0;
  kiln_status_t status = kiln_session_weights_device_ptr(session, &pointer);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  return pointer;
}

/// Device memory taken between two cuMemGetInfo readings (negative: freed).
int64_t taken(size_t freeBefore, size_t freeAfter) {
  return static_cast<int64_t>(freeBefore) - static_cast<int64_t>(freeAfter);
}

/// Declares `cu`, a DriverForTest that keeps device 0's primary context alive for the whole test
/// (so that releasing sessions never resets it), skips the test when the driver or the device is
/// missing, and runs a probe session of the small add model, whose creation initializes the
/// driver's per-context state: later cuMemGetInfo differences are the sessions' own allocations.
#define SKIP_WITHOUT_GPU_OR_WARM_UP()                                                              \
  DriverForTest cu;                                                                                \
  if (!cu.ok())                                                                                    \
    GTEST_SKIP() << "no CUDA driver or device";                                                    \
  do {                                                                                             \
    kiln::test::ArtifactBuilder probeBuilder_;                                                     \
    kiln::test::buildAddModel(probeBuilder_);                                                      \
    std::string probePath_ = kiln::test::writeTempFile("probe.kiln", probeBuilder_.build());       \
    kiln_artifact_t *probe_ = nullptr;                                                             \
    ASSERT_EQ(kiln_artifact_open(probePath_.c_str(), &probe_), nullptr);                           \
    kiln_session_t *probeSession_ = nullptr;                                                       \
    kiln_status_t probeStatus_ = createSession(probe_, &probeSession_);                            \
    kiln_artifact_release(probe_);                                                                 \
    if (probeStatus_ == nullptr)                                                                   \
      runAndCheckAdd(probeSession_, 2.0f);                                                         \
    kiln_session_release(probeSession_);                                                           \
    CREATE_OR_SKIP(probeStatus_);                                                                  \
  } while (0)

TEST(SharedWeights, TwoSessionsShareOneUploadFreedOnceInEitherReleaseOrder) {
  SKIP_WITHOUT_GPU_OR_WARM_UP();
  const int64_t weightBytes = static_cast<int64_t>(kBigWeightBytes);
  const int64_t half = weightBytes / 2;
  for (int releaseFirst = 0; releaseFirst < 2; ++releaseFirst) {
    SCOPED_TRACE(releaseFirst == 0 ? "first session released first"
                                   : "second session released first");
    kiln_artifact_t *artifact = openBigWeightsAddModel();
    ASSERT_NE(artifact, nullptr);
    size_t baseline = cu.freeBytes();
    ASSERT_GT(baseline, 2 * kBigWeightBytes) << "too little free device memory for the test";

    kiln_session_t *sessions[2] = {nullptr, nullptr};
    ASSERT_EQ(createSession(artifact, &sessions[0]), nullptr);
    size_t afterOne = cu.freeBytes();
    EXPECT_GE(taken(baseline, afterOne), weightBytes) << "the first session uploads the weights";
    ASSERT_EQ(createSession(artifact, &sessions[1]), nullptr);
    size_t afterTwo = cu.freeBytes();
    EXPECT_LT(taken(afterOne, afterTwo), half) << "the second session must not upload them again";
    // The sessions hold the artifact.
    kiln_artifact_release(artifact);

    uint64_t weights = weightsOf(sessions[0]);
    EXPECT_NE(weights, 0u);
    EXPECT_EQ(weightsOf(sessions[1]), weights) << "one device copy for both sessions";
    runAndCheckAdd(sessions[0], 1.0f);
    runAndCheckAdd(sessions[1], -2.0f);

    // Releasing one session leaves the copy to the other, which still computes with it.
    kiln_session_release(sessions[releaseFirst]);
    size_t afterRelease = cu.freeBytes();
    EXPECT_LT(taken(afterRelease, afterTwo), half)
        << "weights freed while a session still uses them";
    kiln_session_t *survivor = sessions[1 - releaseFirst];
    runAndCheckAdd(survivor, 3.0f);
    runAndCheckAdd(survivor, -4.5f);
    // The last one frees it: device memory returns to the baseline.
    kiln_session_release(survivor);
    size_t afterAll = cu.freeBytes();
    EXPECT_GE(taken(afterAll, afterRelease), weightBytes) << "the last session frees the weights";
    EXPECT_LT(std::abs(taken(baseline, afterAll)), half)
        << "device memory back to the baseline: baseline " << baseline << ", now " << afterAll;
  }
}

TEST(SharedWeights, EightSessionsOnThreadsUploadOnceAndMatchASingleSession) {
  SKIP_WITHOUT_GPU_OR_WARM_UP();
  const int64_t weightBytes = static_cast<int64_t>(kBigWeightBytes);
  kiln_artifact_t *artifact = openBigWeightsAddModel();
  ASSERT_NE(artifact, nullptr);
  constexpr int kSessions = 8;
  constexpr int kRuns = 20;
  auto inputOf = [](int thread, int run, int i) {
    return float(thread * 1000 + run * 10 + i) * 0.25f - 7.0f;
  };

  // The reference: one session alone computes every thread's inputs.
  std::vector<std::vector<float>> expected(kSessions * kRuns, std::vector<float>(4));
  {
    kiln_session_t *single = nullptr;
    ASSERT_EQ(createSession(artifact, &single), nullptr);
    for (int t = 0; t < kSessions; ++t)
      for (int r = 0; r < kRuns; ++r) {
        float x[4];
        for (int i = 0; i < 4; ++i)
          x[i] = inputOf(t, r, i);
        ASSERT_EQ(kiln_session_set_input(single, "x", x, sizeof(x)), nullptr);
        ASSERT_EQ(kiln_session_run(single, nullptr), nullptr);
        std::vector<float> &y = expected[t * kRuns + r];
        ASSERT_EQ(kiln_session_get_output(single, "y", y.data(), 16), nullptr);
        for (int i = 0; i < 4; ++i)
          ASSERT_EQ(y[i], x[i] + 10.0f * float(i + 1));
      }
    kiln_session_release(single);
  }
  size_t baseline = cu.freeBytes();

  // Eight threads create their sessions at the same moment (they race for the upload).
  std::vector<kiln_session_t *> sessions(kSessions, nullptr);
  std::vector<std::string> errors(kSessions);
  std::atomic<int> ready{0};
  auto inThreads = [&](const std::function<void(int)> &body) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kSessions; ++t)
      threads.emplace_back(body, t);
    for (std::thread &thread : threads)
      thread.join();
  };
  inThreads([&](int t) {
    ready.fetch_add(1);
    while (ready.load() < kSessions)
      std::this_thread::yield();
    kiln_status_t status = createSession(artifact, &sessions[t]);
    if (status)
      errors[t] = kiln_status_message(status);
    kiln_status_free(status);
  });
  for (int t = 0; t < kSessions; ++t)
    ASSERT_EQ(errors[t], "") << "session " << t;
  size_t afterCreate = cu.freeBytes();
  EXPECT_GE(taken(baseline, afterCreate), weightBytes);
  EXPECT_LT(taken(baseline, afterCreate), 2 * weightBytes)
      << "8 sessions took " << taken(baseline, afterCreate) << " bytes: more than one weight copy";
  uint64_t weights = weightsOf(sessions[0]);
  EXPECT_NE(weights, 0u);
  for (int t = 1; t < kSessions; ++t)
    EXPECT_EQ(weightsOf(sessions[t]), weights) << "session " << t;

  // Every thread runs its own session; outputs equal the single session's bit for bit.
  std::vector<int> mismatches(kSessions, 0);
  inThreads([&](int t) {
    for (int r = 0; r < kRuns; ++r) {
      float x[4], y[4];
      for (int i = 0; i < 4; ++i) {
        x[i] = inputOf(t, r, i);
        y[i] = std::nanf("");
      }
      kiln_status_t status = kiln_session_set_input(sessions[t], "x", x, sizeof(x));
      if (!status)
        status = kiln_session_run(sessions[t], nullptr);
      if (!status)
        status = kiln_session_get_output(sessions[t], "y", y, sizeof(y));
      if (status) {
        errors[t] = kiln_status_message(status);
        kiln_status_free(status);
        return;
      }
      if (std::memcmp(y, expected[t * kRuns + r].data(), sizeof(y)) != 0)
        ++mismatches[t];
    }
  });
  for (int t = 0; t < kSessions; ++t) {
    EXPECT_EQ(errors[t], "") << "session " << t;
    EXPECT_EQ(mismatches[t], 0) << "session " << t;
  }

  // Released concurrently, the copy is freed once: memory back to the baseline.
  kiln_artifact_release(artifact);
  inThreads([&](int t) { kiln_session_release(sessions[t]); });
  size_t afterAll = cu.freeBytes();
  EXPECT_GE(taken(afterAll, afterCreate), weightBytes);
  EXPECT_LT(std::abs(taken(baseline, afterAll)), weightBytes / 2)
      << "baseline " << baseline << ", now " << afterAll;
}

using kiln::test::DeviceBuffers;

TEST(SharedWeights, SessionsOnTwoDevicesHaveACopyEach) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("two_devices.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.poison_arena = 1;
  kiln_session_t *first = nullptr, *second = nullptr, *again = nullptr;
  kiln_status_t status = kiln_session_create(artifact, &params, &first);
  if (kiln_status_code(status) == KILN_UNAVAILABLE) {
    kiln_artifact_release(artifact);
    CREATE_OR_SKIP(status);
  }
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  params.device_ordinal = 1;
  status = kiln_session_create(artifact, &params, &second);
  if (kiln_status_code(status) == KILN_UNAVAILABLE) {
    std::string why = kiln_status_message(status);
    kiln_status_free(status);
    kiln_session_release(first);
    kiln_artifact_release(artifact);
    GTEST_SKIP() << "needs 2 GPUs: " << why;
  }
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  params.device_ordinal = 0;
  ASSERT_EQ(kiln_session_create(artifact, &params, &again), nullptr);
  kiln_artifact_release(artifact);
  EXPECT_NE(weightsOf(first), weightsOf(second)) << "one copy per device";
  EXPECT_EQ(weightsOf(first), weightsOf(again)) << "device 0's copy is shared";
  runAndCheckAdd(first, 1.0f);
  runAndCheckAdd(second, 2.0f);
  // Releasing device 1's session leaves device 0's copy alone.
  kiln_session_release(second);
  runAndCheckAdd(first, 3.0f);
  runAndCheckAdd(again, 4.0f);
  kiln_session_release(first);
  kiln_session_release(again);
}

/// Bound-buffer tests run with the CUDA graph (1) and with plain launches (0).
class BoundBuffers : public testing::TestWithParam<int> {};

TEST_P(BoundBuffers, RunsReadAndWriteCallerBuffersAndFollowRebinding) {
  const int useGraph = GetParam();
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("bound.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_session_t *session = nullptr;
  kiln_status_t created = createSession(artifact, &session, useGraph);
  kiln_artifact_release(artifact);
  CREATE_OR_SKIP(created);
  DriverForTest cu;
  ASSERT_TRUE(cu.ok()) << "driver calls for the test's device buffers";
  DeviceBuffers buffers(cu);
  const uint64_t inputs[2] = {buffers.allocate(16), buffers.allocate(16)};
  const uint64_t outputs[2] = {buffers.allocate(16), buffers.allocate(16)};
  for (uint64_t pointer : {inputs[0], inputs[1], outputs[0], outputs[1]})
    ASSERT_NE(pointer, 0u);

  // The host path first, as the reference.
  const float x0[4] = {1.5f, -2.0f, 3.25f, 8.0f};
  ASSERT_EQ(kiln_session_set_input(session, "x", x0, sizeof(x0)), nullptr);
  ASSERT_EQ(kiln_session_run(session, nullptr), nullptr);
  float reference[4];
  ASSERT_EQ(kiln_session_get_output(session, "y", reference, sizeof(reference)), nullptr);

  // Rounds alternate between the two input and the two output buffers, new values each time;
  // outputs are poisoned (NaN) before each run.
  const float nan4[4] = {std::nanf(""), std::nanf(""), std::nanf(""), std::nanf("")};
  float previous[4] = {};
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const int b = round % 2;
    float x[4];
    for (int i = 0; i < 4; ++i)
      x[i] = round == 0 ? x0[i] : float(round * 100 + i) - 0.5f;
    ASSERT_EQ(cu.memcpyHtoD(inputs[b], x, sizeof(x)), 0);
    ASSERT_EQ(cu.memcpyHtoD(outputs[b], nan4, sizeof(nan4)), 0);
    kiln_status_t status = kiln_session_bind_input(session, "x", inputs[b], 16);
    ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    status = kiln_session_bind_output(session, "y", outputs[b], 16);
    ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    if (useGraph) {
      EXPECT_EQ(kiln_session_has_cuda_graph(session), 1)
          << "rebinding patches the instantiated graph instead of dropping it";
    }
    status = kiln_session_run(session, nullptr);
    ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    ASSERT_EQ(kiln_session_synchronize(session), nullptr);
    float y[4];
    ASSERT_EQ(cu.memcpyDtoH(y, outputs[b], sizeof(y)), 0);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(y[i], x[i] + 10.0f * float(i + 1)) << "element " << i;
    if (round == 0) {
      EXPECT_EQ(std::memcmp(y, reference, sizeof(y)), 0) << "same as set_input/get_output";
    }
    if (round > 0) {
      // The other output buffer still holds the previous round's result.
      float other[4];
      ASSERT_EQ(cu.memcpyDtoH(other, outputs[1 - b], sizeof(other)), 0);
      EXPECT_EQ(std::memcmp(other, previous, sizeof(other)), 0);
    }
    std::memcpy(previous, y, sizeof(y));
    // get_output and output_device_ptr read the bound buffer.
    float viaGet[4];
    ASSERT_EQ(kiln_session_get_output(session, "y", viaGet, sizeof(viaGet)), nullptr);
    EXPECT_EQ(std::memcmp(viaGet, y, sizeof(y)), 0);
    uint64_t address = 0;
    ASSERT_EQ(kiln_session_output_device_ptr(session, "y", &address), nullptr);
    EXPECT_EQ(address, outputs[b]);
    ASSERT_EQ(kiln_session_input_device_ptr(session, "x", &address), nullptr);
    EXPECT_EQ(address, inputs[b]);
  }

  // While bound, set_input is refused (runs would not read what it writes).
  kiln_status_t status = kiln_session_set_input(session, "x", x0, sizeof(x0));
  EXPECT_EQ(kiln_status_code(status), KILN_FAILED_PRECONDITION);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("kiln_session_set_input: input 'x' is bound to the caller's device buffer"),
            std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);

  // Unbound again, the session's own buffer (still x0) and the arena are used.
  ASSERT_EQ(kiln_session_unbind_input(session, "x"), nullptr);
  ASSERT_EQ(kiln_session_unbind_output(session, "y"), nullptr);
  ASSERT_EQ(kiln_session_unbind_output(session, "y"), nullptr) << "unbinding twice is a no-op";
  float sentinel[4];
  ASSERT_EQ(cu.memcpyDtoH(sentinel, outputs[1], sizeof(sentinel)), 0);
  ASSERT_EQ(kiln_session_run(session, nullptr), nullptr);
  float y[4];
  ASSERT_EQ(kiln_session_get_output(session, "y", y, sizeof(y)), nullptr);
  EXPECT_EQ(std::memcmp(y, reference, sizeof(y)), 0);
  float untouched[4];
  ASSERT_EQ(cu.memcpyDtoH(untouched, outputs[1], sizeof(untouched)), 0);
  EXPECT_EQ(std::memcmp(untouched, sentinel, sizeof(sentinel)), 0)
      << "an unbound output buffer is no longer written";
  kiln_session_release(session);
}

INSTANTIATE_TEST_SUITE_P(GraphAndPlain, BoundBuffers, testing::Values(1, 0),
                         [](const testing::TestParamInfo<int> &info) {
                           return info.param ? std::string("CudaGraph")
                                             : std::string("PlainLaunches");
                         });

TEST_F(GpuSession, BoundOutputsThatCannotBeWrittenInPlaceAreCopied) {
  // The add model plus two outputs a bound buffer cannot stand in for (kiln::planOutputRedirect):
  // "y_again" at y's own location (two outputs share the range) and "x_echo", the input itself.
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  for (const char *name : {"y_again", "x_echo"}) {
    auto output = std::make_unique<fb::TensorDescT>();
    output->name = name;
    output->dtype = fb::DType::F32;
    output->shape = {kiln::test::kAddElements};
    output->location = std::string(name) == "x_echo"
                           ? kiln::test::makeRef(fb::Segment::Input, 0, 16, 0)
                           : kiln::test::makeRef(fb::Segment::Arena, 0, 16);
    builder.model.outputs.push_back(std::move(output));
  }
  CREATE_OR_SKIP(create(builder));
  DriverForTest cu;
  ASSERT_TRUE(cu.ok());
  DeviceBuffers buffers(cu);
  const char *names[3] = {"y", "y_again", "x_echo"};
  uint64_t outputs[3];
  const float nan4[4] = {std::nanf(""), std::nanf(""), std::nanf(""), std::nanf("")};
  for (int o = 0; o < 3; ++o) {
    outputs[o] = buffers.allocate(16);
    ASSERT_NE(outputs[o], 0u);
  }
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const float x[4] = {float(round) + 0.5f, -1.0f, 2.0f, float(7 * round)};
    ASSERT_EQ(kiln_session_set_input(session, "x", x, sizeof(x)), nullptr);
    for (int o = 0; o < 3; ++o) {
      ASSERT_EQ(cu.memcpyHtoD(outputs[o], nan4, sizeof(nan4)), 0);
      kiln_status_t status = kiln_session_bind_output(session, names[o], outputs[o], 16);
      ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    }
    ASSERT_EQ(kiln_session_run(session, nullptr), nullptr);
    ASSERT_EQ(kiln_session_synchronize(session), nullptr);
    float y[3][4];
    for (int o = 0; o < 3; ++o)
      ASSERT_EQ(cu.memcpyDtoH(y[o], outputs[o], sizeof(y[o])), 0);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(y[0][i], x[i] + 10.0f * float(i + 1)) << "y, element " << i;
      EXPECT_EQ(y[1][i], y[0][i]) << "y_again, element " << i;
      EXPECT_EQ(y[2][i], x[i]) << "x_echo, element " << i;
    }
  }
}

TEST_F(GpuSession, BoundInputCountsAsSetUntilUnbound) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  DriverForTest cu;
  ASSERT_TRUE(cu.ok());
  DeviceBuffers buffers(cu);
  uint64_t input = buffers.allocate(16);
  ASSERT_NE(input, 0u);
  const float x[4] = {4, 3, 2, 1};
  ASSERT_EQ(cu.memcpyHtoD(input, x, sizeof(x)), 0);
  ASSERT_EQ(kiln_session_bind_input(session, "x", input, 16), nullptr);
  kiln_status_t status = kiln_session_run(session, nullptr);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  float y[4];
  ASSERT_EQ(kiln_session_get_output(session, "y", y, sizeof(y)), nullptr);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(y[i], x[i] + 10.0f * float(i + 1));
  // The session's own buffer was never set: unbound, the input is unset again.
  ASSERT_EQ(kiln_session_unbind_input(session, "x"), nullptr);
  expectInputXUnset(kiln_session_run(session, nullptr), "kiln_session_run");
}

TEST_F(GpuSession, BindingErrorsNameTheTensorAndChangeNothing) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  CREATE_OR_SKIP(create(builder));
  DriverForTest cu;
  ASSERT_TRUE(cu.ok());
  DeviceBuffers buffers(cu);
  // 264 bytes: an aligned 16-byte tensor fits at the start, not at offset 256.
  uint64_t buffer = buffers.allocate(264);
  ASSERT_NE(buffer, 0u);

  auto expectError = [&](kiln_status_t status, kiln_status_code_t code,
                         const std::string &fragment) {
    EXPECT_EQ(kiln_status_code(status), code) << kiln_status_message(status);
    EXPECT_NE(std::string(kiln_status_message(status)).find(fragment), std::string::npos)
        << kiln_status_message(status);
    kiln_status_free(status);
  };
  expectError(kiln_session_bind_input(session, "x", buffer, 12), KILN_INVALID_ARGUMENT,
              "kiln_session_bind_input: input 'x' is 16 bytes (f32, 4 elements) but 12 bytes "
              "were given");
  expectError(kiln_session_bind_output(session, "y", buffer + 16, 16), KILN_INVALID_ARGUMENT,
              "output 'y': device pointer 0x");
  expectError(kiln_session_bind_input(session, "nope", buffer, 16), KILN_NOT_FOUND,
              "has no input named 'nope'");
  // Pageable host memory is not device memory the driver knows (unless the driver reports it as
  // addressable, e.g. with heterogeneous memory management; then the binding is valid).
  alignas(256) static float host[64];
  kiln_status_t hostStatus =
      kiln_session_bind_input(session, "x", reinterpret_cast<uint64_t>(host), 16);
  if (hostStatus)
    expectError(hostStatus, KILN_INVALID_ARGUMENT, "is not device memory known to the CUDA driver");
  else {
    std::printf("the driver reports pageable host memory as device-addressable\n");
    ASSERT_EQ(kiln_session_unbind_input(session, "x"), nullptr);
  }
  // Past the end of an allocation, when the driver reports its exact size.
  uint64_t base = 0;
  size_t size = 0;
  ASSERT_EQ(cu.memGetAddressRange(&base, &size, buffer), 0);
  if (base == buffer && size == 264)
    expectError(kiln_session_bind_output(session, "y", buffer + 256, 16), KILN_INVALID_ARGUMENT,
                "output 'y' needs 16 bytes at 0x");
  // Nothing was bound: the input is still unset, and the output is read from the arena.
  expectInputXUnset(kiln_session_run(session, nullptr), "kiln_session_run");
  uint64_t address = 0;
  ASSERT_EQ(kiln_session_input_device_ptr(session, "x", &address), nullptr);
  EXPECT_NE(address, buffer);
  runAndCheckAdd(session);
}

} // namespace
