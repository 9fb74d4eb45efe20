//===- SessionTest.cpp - Session behaviour that needs no GPU --------------===//
//
// kiln_session_create and the CUDA symbol loader on machines without a driver: the result must be
// a clean status (never a crash), with the documented message. Also the argument checks that
// fail before any driver call.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "CudaSymbols.h"
#if KILN_HAVE_NCCL
#include "NcclSymbols.h"
#endif
#include "TestArtifact.h"
#include <gtest/gtest.h>

namespace {

TEST(CudaSymbols, MissingLibraryGivesUnavailable) {
  std::unique_ptr<kiln::CudaSymbols> symbols;
  kiln_status_t status = kiln::CudaSymbols::load("libkiln-no-such-driver.so.1", symbols);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("CUDA driver not found (libkiln-no-such-driver.so.1): "),
            std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(symbols, nullptr);
  kiln_status_free(status);
}

TEST(CudaSymbols, LibraryWithoutDriverSymbolsIsRejected) {
  // libdl/libc load fine but have no cuInit: must report the missing symbol.
  std::unique_ptr<kiln::CudaSymbols> symbols;
  kiln_status_t status = kiln::CudaSymbols::load("libc.so.6", symbols);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_NE(std::string(kiln_status_message(status)).find("lacks symbol"), std::string::npos)
      << kiln_status_message(status);
  kiln_status_free(status);
}

#if KILN_HAVE_NCCL
TEST(NcclSymbols, MissingLibraryGivesUnavailable) {
  std::unique_ptr<kiln::NcclSymbols> symbols;
  kiln_status_t status = kiln::NcclSymbols::load("libkiln-no-such-nccl.so.2", symbols);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_NE(std::string(kiln_status_message(status))
                .find("NCCL not found (libkiln-no-such-nccl.so.2): "),
            std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(symbols, nullptr);
  kiln_status_free(status);
}

TEST(NcclSymbols, LibraryWithoutNcclSymbolsIsRejected) {
  std::unique_ptr<kiln::NcclSymbols> symbols;
  kiln_status_t status = kiln::NcclSymbols::load("libc.so.6", symbols);
  EXPECT_EQ(kiln_status_code(status), KILN_UNAVAILABLE);
  EXPECT_NE(std::string(kiln_status_message(status)).find("lacks symbol ncclGetVersion"),
            std::string::npos)
      << kiln_status_message(status);
  EXPECT_EQ(symbols, nullptr);
  kiln_status_free(status);
}

TEST(NcclSymbols, LoadsInstalledNcclAndFormatsErrors) {
  // NCCL needs no GPU to load, report its version or describe an error code.
  std::unique_ptr<kiln::NcclSymbols> symbols;
  kiln_status_t status = kiln::NcclSymbols::load(kiln::kNcclLibrary, symbols);
  if (status) {
    std::string message = kiln_status_message(status);
    kiln_status_free(status);
    GTEST_SKIP() << "no NCCL on the loader path: " << message;
  }
  ASSERT_NE(symbols, nullptr);
  EXPECT_GE(symbols->version(), 20000) << "NCCL 2.x encodes its version as 2xxyy";
  kiln_status_t error =
      symbols->makeError(ncclInvalidArgument, "ncclAllReduce(...)", __FILE__, 42, "rank 1 of 2");
  EXPECT_EQ(kiln_status_code(error), KILN_INVALID_ARGUMENT);
  std::string message = kiln_status_message(error);
  EXPECT_NE(message.find("ncclAllReduce(...) failed: "), std::string::npos) << message;
  EXPECT_NE(message.find("[ncclResult 4]"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1 of 2"), std::string::npos) << message;
  kiln_status_free(error);
  kiln_status_t remote = symbols->makeError(ncclRemoteError, "ncclGroupEnd()", __FILE__, 7);
  EXPECT_EQ(kiln_status_code(remote), KILN_UNAVAILABLE);
  kiln_status_free(remote);
}
#endif // KILN_HAVE_NCCL

TEST(Session, CreateGivesCleanStatusOrSession) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("add.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  ASSERT_EQ(kiln_artifact_open(path.c_str(), &artifact), nullptr);
  kiln_session_t *session = reinterpret_cast<kiln_session_t *>(0x1);
  kiln_status_t status = kiln_session_create(artifact, nullptr, &session);
  if (status) {
    // No GPU here: the driver is missing (dlopen fails) or present without a device.
    EXPECT_EQ(session, nullptr);
    kiln_status_code_t code = kiln_status_code(status);
    EXPECT_TRUE(code == KILN_UNAVAILABLE || code == KILN_CUDA_ERROR) << kiln_status_message(status);
    EXPECT_STRNE(kiln_status_message(status), "");
    std::printf("session_create without a GPU: %s: %s\n", kiln_status_code_name(code),
                kiln_status_message(status));
    kiln_status_free(status);
  }
  kiln_session_release(session == reinterpret_cast<kiln_session_t *>(0x1) ? nullptr : session);
  kiln_artifact_release(artifact);
}

TEST(Session, CreateRejectsNullArguments) {
  kiln_session_t *session = reinterpret_cast<kiln_session_t *>(0x1);
  kiln_status_t status = kiln_session_create(nullptr, nullptr, &session);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  kiln_status_free(status);
}

TEST(Session, CallsRejectNullSession) {
  kiln_status_t status = kiln_session_run(nullptr, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  float value = 0;
  status = kiln_session_set_input(nullptr, "x", &value, 4);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_session_get_output(nullptr, "y", &value, 4);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  status = kiln_session_synchronize(nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  kiln_status_free(status);
  float times[2] = {1, 1};
  status = kiln_session_benchmark(nullptr, 0, 2, times);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(times[0], 0.0f) << "out array must be zeroed on entry";
  kiln_status_free(status);
  uint64_t pointer = 5;
  status = kiln_session_input_device_ptr(nullptr, "x", &pointer);
  EXPECT_EQ(kiln_status_code(status), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(pointer, 0u);
  kiln_status_free(status);
  kiln_session_release(nullptr);
}

TEST(Session, ParamsDefaults) {
  kiln_session_params_t params;
  params.device_ordinal = 7;
  params.poison_arena = 7;
  params.use_cuda_graph = 7;
  kiln_session_params_initialize(&params);
  EXPECT_EQ(params.device_ordinal, 0);
  EXPECT_EQ(params.poison_arena, 0);
  EXPECT_EQ(params.use_cuda_graph, 1) << "CUDA graphs are on by default";
}

TEST(Session, HasCudaGraphOfNullIsZero) { EXPECT_EQ(kiln_session_has_cuda_graph(nullptr), 0); }

} // namespace
