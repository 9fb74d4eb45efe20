//===- CppApiTest.cpp - Tests of the C++ wrappers in kiln/runtime.hpp -----===//
//
// The RAII wrappers open, query and release artifacts (tensor-parallel queries included) and
// propagate statuses; session creation without a GPU yields a status; the session's binding and
// weight-pointer wrappers pass the C statuses through; the rank-file naming rule shared by
// kiln-compile and kiln-run; group-id helpers.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include "TestArtifact.h"
#include <gtest/gtest.h>

namespace {

TEST(CppApi, OpensAndQueriesArtifact) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("add.kiln", builder.build());
  kiln::Artifact artifact;
  kiln::Status status = kiln::Artifact::open(path, artifact);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(artifact.inputCount(), 1u);
  EXPECT_EQ(artifact.launchCount(), 1u);
  kiln_tensor_info_t info;
  ASSERT_TRUE(artifact.outputInfo(0, info));
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(artifact.inputInfo(3, info).code(), KILN_NOT_FOUND);

  kiln::Session session;
  kiln::Status created = kiln::Session::create(artifact, session);
  if (!created.ok()) {
    EXPECT_TRUE(created.code() == KILN_UNAVAILABLE || created.code() == KILN_CUDA_ERROR)
        << created.message();
  }
}

TEST(CppApi, TensorParallelQueries) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAllReduceModel(builder, 1, 2, 42);
  std::string path = kiln::test::writeTempFile("m.rank1.kiln", builder.build());
  kiln::Artifact artifact;
  kiln::Status status = kiln::Artifact::open(path, artifact);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_STREQ(artifact.path(), path.c_str());
  EXPECT_EQ(artifact.tpWorldSize(), 2u);
  EXPECT_EQ(artifact.tpRank(), 1u);
  EXPECT_EQ(artifact.tpGroupHash(), 42u);
  ASSERT_EQ(artifact.collectiveCount(), 1u);
  kiln_collective_info_t info;
  ASSERT_TRUE(artifact.collectiveInfo(0, info));
  EXPECT_STREQ(info.kind, "all_reduce_sum");
  EXPECT_EQ(artifact.collectiveInfo(1, info).code(), KILN_NOT_FOUND);
}

TEST(CppApi, RankArtifactPathRule) {
  EXPECT_EQ(kiln::tpRankArtifactPath("llama.kiln", 0), "llama.rank0.kiln");
  EXPECT_EQ(kiln::tpRankArtifactPath("out/llama.kiln", 3), "out/llama.rank3.kiln");
  EXPECT_EQ(kiln::tpRankArtifactPath("out/llama", 1), "out/llama.rank1.kiln");
  EXPECT_EQ(kiln::tpRankArtifactPath("a.kiln.tmp", 0), "a.kiln.tmp.rank0.kiln");
  EXPECT_EQ(kiln::tpRankArtifactPath("dir.kiln/m", 2), "dir.kiln/m.rank2.kiln");
  EXPECT_EQ(kiln::tpRankArtifactPath(".kiln", 0), ".rank0.kiln");
  EXPECT_EQ(kiln::tpRankArtifactPath("m.KILN", 0), "m.KILN.rank0.kiln") << "case-sensitive";
  EXPECT_EQ(kiln::tpRankArtifactPath("m.kiln", 12), "m.rank12.kiln");
}

TEST(CppApi, TpIdTextHelpers) {
  kiln_tp_id_t id;
  for (size_t i = 0; i < KILN_TP_ID_BYTES; ++i)
    id.bytes[i] = static_cast<unsigned char>(255 - i);
  std::string text = kiln::tpIdToString(id);
  EXPECT_EQ(text.size(), 2u * KILN_TP_ID_BYTES);
  EXPECT_EQ(text.substr(0, 4), "fffe");
  kiln_tp_id_t parsed;
  ASSERT_TRUE(kiln::tpIdFromString(text, parsed));
  EXPECT_EQ(parsed.bytes[5], 250);
  EXPECT_EQ(kiln::tpIdFromString("zz", parsed).code(), KILN_INVALID_ARGUMENT);
}

TEST(CppApi, SessionBindingWrappersPassStatusesThrough) {
  // An empty Session wrapper holds NULL: every call returns the C API's INVALID_ARGUMENT.
  kiln::Session session;
  EXPECT_EQ(session.bindInput("x", 0x1000, 16).code(), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(session.unbindInput("x").code(), KILN_INVALID_ARGUMENT);
  kiln::Status status = session.bindOutput("y", 0x1000, 16);
  EXPECT_EQ(status.code(), KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(status.message(), "kiln_session_bind_output: session must be non-NULL");
  EXPECT_EQ(session.unbindOutput("y").code(), KILN_INVALID_ARGUMENT);
  uint64_t pointer = 9;
  EXPECT_EQ(session.weightsDevicePtr(pointer).code(), KILN_INVALID_ARGUMENT);
  EXPECT_EQ(pointer, 0u);
}

TEST(CppApi, OpenFailureCarriesStatus) {
  kiln::Artifact artifact;
  kiln::Status status = kiln::Artifact::open("/nonexistent.kiln", artifact);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), KILN_IO_ERROR);
  EXPECT_EQ(artifact.get(), nullptr);
  kiln::Status moved = std::move(status);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(moved.code(), KILN_IO_ERROR);
}

} // namespace

TEST(CppApi, ProgramsAndGeneratorWrappersPassStatusesThrough) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder);
  std::string path = kiln::test::writeTempFile("cpp-generate.kiln", builder.build());
  kiln::Artifact artifact;
  ASSERT_TRUE(kiln::Artifact::open(path, artifact).ok());
  EXPECT_EQ(artifact.programCount(), 1u);
  EXPECT_EQ(artifact.programName(), "");
  kiln::Artifact program;
  ASSERT_TRUE(artifact.program(0, program).ok());
  EXPECT_EQ(program.get(), artifact.get());
  kiln::Status missing = artifact.findProgram("decode_b1", program);
  EXPECT_EQ(missing.code(), KILN_NOT_FOUND);
  EXPECT_NE(std::string(missing.message()).find("one unnamed program"), std::string::npos) << missing.message();

  kiln::Generator generator;
  kiln::Status status = kiln::Generator::create(artifact, 0, generator);
  EXPECT_EQ(status.code(), KILN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(status.message()).find("which a generation step does not fill"), std::string::npos)
      << status.message();
  EXPECT_EQ(generator.get(), nullptr);
  std::vector<kiln::GenerateResult> results;
  kiln::GenerateRequest request;
  request.prompt = {1, 2};
  status = generator.generate({request}, results);
  EXPECT_EQ(status.code(), KILN_INVALID_ARGUMENT);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].tokens.empty());
  EXPECT_EQ(generator.maxBatch(), 0u);
}
