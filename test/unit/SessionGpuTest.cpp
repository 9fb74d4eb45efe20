//===- SessionGpuTest.cpp - Session tests on a real GPU (label gpu) -------===//
//
// Runs the reference add model (y = x + w) through the full session API on device 0: PTX JIT and
// cubin paths, size and name errors, runs refused while an input was never set, stream-ordered
// asynchronous transfers, JIT error logs, device pointers, arena poisoning and benchmarking. Every test calls GTEST_SKIP() when no driver or device is present.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "TestArtifact.h"
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>

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

/// The few driver calls the asynchronous-transfer test makes itself (page-locked host memory and a
/// stream of its own), dlopen'ed like the runtime does, in device 0's primary context (retained
/// and made current while the object lives). ok() is false when any of it is unavailable.
class DriverForTest {
public:
  DriverForTest() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return;
    // CUresult is an int-sized enum, CUdevice an int; contexts, streams are pointers.
    auto init = sym<int (*)(unsigned)>("cuInit");
    auto deviceGet = sym<int (*)(int *, int)>("cuDeviceGet");
    auto retain = sym<int (*)(void **, int)>("cuDevicePrimaryCtxRetain");
    auto push = sym<int (*)(void *)>("cuCtxPushCurrent_v2");
    pop = sym<int (*)(void **)>("cuCtxPopCurrent_v2");
    release = sym<int (*)(int)>("cuDevicePrimaryCtxRelease_v2");
    hostAlloc = sym<int (*)(void **, size_t, unsigned)>("cuMemHostAlloc");
    freeHost = sym<int (*)(void *)>("cuMemFreeHost");
    streamCreate = sym<int (*)(void **, unsigned)>("cuStreamCreate");
    streamSynchronize = sym<int (*)(void *)>("cuStreamSynchronize");
    streamDestroy = sym<int (*)(void *)>("cuStreamDestroy_v2");
    if (!init || !deviceGet || !retain || !push || !pop || !release || !hostAlloc || !freeHost ||
        !streamCreate || !streamSynchronize || !streamDestroy)
      return;
    if (init(0u) != 0 || deviceGet(&device, 0) != 0 || retain(&context, device) != 0)
      return;
    retained = true;
    pushed = push(context) == 0;
  }
  ~DriverForTest() {
    void *popped = nullptr;
    if (pushed)
      pop(&popped);
    if (retained)
      release(device);
  }
  bool ok() const { return pushed; }

  int (*pop)(void **) = nullptr;
  int (*release)(int) = nullptr;
  int (*hostAlloc)(void **, size_t, unsigned) = nullptr;
  int (*freeHost)(void *) = nullptr;
  int (*streamCreate)(void **, unsigned) = nullptr;
  int (*streamSynchronize)(void *) = nullptr;
  int (*streamDestroy)(void *) = nullptr;

private:
  template <typename F> F sym(const char *name) {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
  void *lib = nullptr;
  int device = 0;
  void *context = nullptr;
  bool retained = false;
  bool pushed = false;
};

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

} // namespace
