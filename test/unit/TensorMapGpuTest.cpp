//===- TensorMapGpuTest.cpp - Tensor-map kernels on a real GPU (label gpu) -===//
//
// Runs the TMA copy model (kiln::test::buildTmaCopyModel: a kernel that reads x and writes y only
// through two tensor maps passed after its pointer parameters) on device 0, with the CUDA graph
// and with plain launches: the session encodes the maps at creation, so y equals x; binding other
// input and output buffers re-encodes the maps of the launch and patches the instantiated graph,
// so the next runs read and write the new buffers; unbinding returns to the session's own.
// The kernel is test/unit/tma_copy_kernel.cu, built to sm_90 PTX by nvcc at build time; the test
// skips without nvcc, without a GPU, and on devices older than sm_90 (no TMA).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include "TestArtifact.h"
#include "TestDriver.h"
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#ifdef KILN_TEST_HAVE_TMA_PTX
#include "tma_copy_kernel_sm90.inc" // defines kTmaCopyKernelPtx[]
#endif

namespace {

using kiln::test::DeviceBuffers;
using kiln::test::DriverForTest;

constexpr size_t kElements = kiln::test::kTmaRows * kiln::test::kTmaCols;
constexpr size_t kBytes = kElements * sizeof(uint16_t);

/// f16 bit patterns for a tensor, different for every `seed` and element, never 0 and never
/// 0xffff (the poisoned arena): TMA copies bits, so any pattern checks the copy exactly.
std::vector<uint16_t> pattern(uint32_t seed) {
  std::vector<uint16_t> values(kElements);
  for (size_t i = 0; i < kElements; ++i) {
    uint32_t mixed = (static_cast<uint32_t>(i) + 1) * 2654435761u ^ (seed * 40503u);
    values[i] = static_cast<uint16_t>(((mixed >> 13) & 0x7ffe) | 1);
  }
  return values;
}

/// Index of the first element where `actual` differs from `expected`, or -1.
long firstDifference(const std::vector<uint16_t> &actual, const std::vector<uint16_t> &expected) {
  for (size_t i = 0; i < expected.size(); ++i)
    if (actual[i] != expected[i])
      return static_cast<long>(i);
  return -1;
}

/// TMA tests run with the CUDA graph (1) and with plain launches (0).
class TensorMapSession : public testing::TestWithParam<int> {};

TEST_P(TensorMapSession, CopiesThroughMapsAndFollowsRebinding) {
#ifndef KILN_TEST_HAVE_TMA_PTX
  GTEST_SKIP() << "built without nvcc: no sm_90 PTX of the TMA copy kernel";
#else
  const int useGraph = GetParam();
  kiln::test::ArtifactBuilder builder;
  std::string ptx(reinterpret_cast<const char *>(kTmaCopyKernelPtx), sizeof(kTmaCopyKernelPtx));
  kiln::test::buildTmaCopyModel(builder, ptx);
  std::string path = kiln::test::writeTempFile("tma_copy.kiln", builder.build());
  kiln_artifact_t *artifact = nullptr;
  kiln_status_t status = kiln_artifact_open(path.c_str(), &artifact);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  params.poison_arena = 1;
  params.use_cuda_graph = useGraph;
  kiln_session_t *session = nullptr;
  status = kiln_session_create(artifact, &params, &session);
  kiln_artifact_release(artifact);
  if (status) {
    std::string why = kiln_status_message(status);
    kiln_status_code_t code = kiln_status_code(status);
    kiln_status_free(status);
    if (code == KILN_UNAVAILABLE)
      GTEST_SKIP() << "no GPU: " << why;
    if (why.find("JIT-compiling") != std::string::npos)
      GTEST_SKIP() << "device without TMA (the kernel is sm_90 PTX): " << why;
    FAIL() << why;
  }
  DriverForTest cu;
  ASSERT_TRUE(cu.ok()) << "driver calls for the test's device buffers";

  // 1. The maps encoded at creation: y = x through the session's own buffers.
  const std::vector<uint16_t> x0 = pattern(0);
  ASSERT_EQ(kiln_session_set_input(session, "x", x0.data(), kBytes), nullptr);
  status = kiln_session_run(session, nullptr);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  std::vector<uint16_t> y(kElements, 0);
  status = kiln_session_get_output(session, "y", y.data(), kBytes);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(firstDifference(y, x0), -1) << "y differs from x";
  EXPECT_EQ(kiln_session_has_cuda_graph(session), useGraph);

  // 2. Rebinding: each round binds another input buffer (map 0 re-encoded) and another output
  //    buffer (map 1 re-encoded, the output's arena range moves), poisoned before the run.
  DeviceBuffers buffers(cu);
  const uint64_t inputs[2] = {buffers.allocate(kBytes), buffers.allocate(kBytes)};
  const uint64_t outputs[2] = {buffers.allocate(kBytes), buffers.allocate(kBytes)};
  for (uint64_t pointer : {inputs[0], inputs[1], outputs[0], outputs[1]})
    ASSERT_NE(pointer, 0u);
  const std::vector<uint16_t> poison(kElements, 0xffff);
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const int b = round % 2;
    const std::vector<uint16_t> x = pattern(round + 1);
    ASSERT_EQ(cu.memcpyHtoD(inputs[b], x.data(), kBytes), 0);
    ASSERT_EQ(cu.memcpyHtoD(outputs[b], poison.data(), kBytes), 0);
    status = kiln_session_bind_input(session, "x", inputs[b], kBytes);
    ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    // Round 0 moves only the input: the output is still the arena's.
    if (round > 0) {
      status = kiln_session_bind_output(session, "y", outputs[b], kBytes);
      ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    }
    if (useGraph) {
      EXPECT_EQ(kiln_session_has_cuda_graph(session), 1)
          << "rebinding patches the instantiated graph instead of dropping it";
    }
    status = kiln_session_run(session, nullptr);
    ASSERT_EQ(status, nullptr) << kiln_status_message(status);
    ASSERT_EQ(kiln_session_synchronize(session), nullptr);
    std::fill(y.begin(), y.end(), 0);
    if (round == 0)
      ASSERT_EQ(kiln_session_get_output(session, "y", y.data(), kBytes), nullptr);
    else
      ASSERT_EQ(cu.memcpyDtoH(y.data(), outputs[b], kBytes), 0);
    EXPECT_EQ(firstDifference(y, x), -1) << "the run did not copy the bound input";
  }

  // 3. Unbound again: the session's own input buffer (still x0) and the arena.
  ASSERT_EQ(kiln_session_unbind_input(session, "x"), nullptr);
  ASSERT_EQ(kiln_session_unbind_output(session, "y"), nullptr);
  status = kiln_session_run(session, nullptr);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  std::fill(y.begin(), y.end(), 0);
  ASSERT_EQ(kiln_session_get_output(session, "y", y.data(), kBytes), nullptr);
  EXPECT_EQ(firstDifference(y, x0), -1) << "after unbinding, y must be the own input again";
  if (useGraph) {
    EXPECT_EQ(kiln_session_has_cuda_graph(session), 1);
  }
  kiln_session_release(session);
#endif
}

INSTANTIATE_TEST_SUITE_P(GraphAndPlain, TensorMapSession, testing::Values(1, 0),
                         [](const testing::TestParamInfo<int> &info) {
                           return info.param ? std::string("CudaGraph")
                                             : std::string("PlainLaunches");
                         });

} // namespace
