//===- CppApiTest.cpp - Tests of the C++ wrappers in kiln/runtime.hpp -----===//
//
// The RAII wrappers open, query and release artifacts and propagate statuses; session creation
// without a GPU yields a status.
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
