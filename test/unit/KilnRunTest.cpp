//===- KilnRunTest.cpp - kiln-run command-line errors (no GPU needed) -----===//
//
// Runs the kiln-run binary on hand-built artifacts and .npy files and checks exit codes and
// messages of every usage and file error, --info output, and the clean no-GPU error.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"
#include "TestArtifact.h"
#include <gtest/gtest.h>

namespace {

using kiln::test::runKilnRun;

/// Fixture with a valid add-model artifact and a matching input file.
class KilnRun : public testing::Test {
protected:
  void SetUp() override {
    kiln::test::ArtifactBuilder builder;
    kiln::test::buildAddModel(builder);
    model = kiln::test::writeTempFile("add.kiln", builder.build());
    input = writeNpy("x.npy", KILN_DTYPE_F32, {4}, 16);
  }

  /// Writes an .npy of `dtype`/`shape` filled with 1.0f-ish bytes; returns its path.
  std::string writeNpy(const std::string &name, kiln_dtype_t dtype, std::vector<int64_t> shape,
                       size_t bytes) {
    std::vector<uint8_t> data(bytes, 0);
    std::vector<uint8_t> image;
    std::string error;
    EXPECT_TRUE(kiln::npy::encodeNpy(dtype, shape, data.data(), data.size(), image, error))
        << error;
    return kiln::test::writeTempFile(name, image);
  }

  /// Expects exit code 2 and `fragment` in the output.
  void expectError(const std::string &arguments, const std::string &fragment,
                   bool usageLine = false) {
    kiln::test::CommandResult result = runKilnRun(arguments);
    EXPECT_EQ(result.exitCode, 2) << result.output;
    EXPECT_NE(result.output.find(fragment), std::string::npos)
        << "output: " << result.output << "\nexpected: " << fragment;
    if (usageLine) {
      EXPECT_NE(result.output.find("usage: kiln-run"), std::string::npos) << result.output;
    }
  }

  std::string model, input;
};

TEST_F(KilnRun, NoArgumentsPrintsUsage) { expectError("", "no model file given", true); }

TEST_F(KilnRun, NothingToDo) { expectError("'" + model + "'", "nothing to do", true); }

TEST_F(KilnRun, UnknownOption) {
  expectError("'" + model + "' --frobnicate 3", "unknown option '--frobnicate'", true);
}

TEST_F(KilnRun, OptionWithoutValue) {
  expectError("'" + model + "' --input", "option '--input' needs a value", true);
}

TEST_F(KilnRun, MalformedBinding) {
  expectError("'" + model + "' --input x.npy", "expects NAME=FILE.npy, got 'x.npy'", true);
}

TEST_F(KilnRun, BadTolerance) {
  expectError("'" + model + "' --info --rtol abc", "'--rtol' expects a non-negative number", true);
}

TEST_F(KilnRun, BadBenchCount) {
  expectError("'" + model + "' --bench 0", "'--bench' expects an iteration count", true);
}

TEST_F(KilnRun, SecondPositionalArgument) {
  expectError("'" + model + "' other.kiln", "unexpected argument 'other.kiln'", true);
}

TEST_F(KilnRun, MissingModel) {
  expectError("/nonexistent/m.kiln --info", "cannot open artifact '/nonexistent/m.kiln'");
}

TEST_F(KilnRun, InvalidModel) {
  std::string bad = kiln::test::writeTempFile("bad.kiln", std::vector<uint8_t>(100, 7));
  expectError("'" + bad + "' --info", "bad magic");
}

TEST_F(KilnRun, NoCudaGraphIsAFlagWithoutValue) {
  // Must not swallow the next argument as its value.
  kiln::test::CommandResult result = runKilnRun("'" + model + "' --no-cuda-graph --info");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("kernels: 1 launches"), std::string::npos) << result.output;
  result = runKilnRun("--help");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("[--no-cuda-graph]"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("--profile N          per-kernel device time"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("Exit status: 0 ok, 1 a --compare failed"), std::string::npos)
      << result.output;
}

TEST_F(KilnRun, InfoNeedsNoGpu) {
  kiln::test::CommandResult result = runKilnRun("'" + model + "' --info");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("x: f32[4] (16 bytes)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("y: f32[4] (16 bytes)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("kernels: 1 launches in 1 modules"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("0: kiln_add (module add) grid=(1,1,1) block=(4,1,1) smem=0 "
                               "args=3"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("arena_bytes: 1024"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("module add: PTX "), std::string::npos) << result.output;
}

TEST_F(KilnRun, InfoListsSassTargets) {
  kiln::test::ArtifactBuilder builder;
  kiln::test::buildAddModel(builder, {{90, std::vector<uint8_t>(100, 1)},
                                      {100, std::vector<uint8_t>(60, 2)}});
  std::string withSass = kiln::test::writeTempFile("add_sass.kiln", builder.build());
  kiln::test::CommandResult result = runKilnRun("'" + withSass + "' --info");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find(", SASS sm_90 100 bytes, SASS sm_100 60 bytes"), std::string::npos)
      << result.output;
}

TEST_F(KilnRun, UnknownInputName) {
  expectError("'" + model + "' --input z='" + input + "'", "has no input named 'z' (inputs: 'x')");
}

TEST_F(KilnRun, MissingInput) {
  expectError("'" + model + "' --output y=/tmp/y.npy", "missing --input for 'x' (f32[4])", true);
}

TEST_F(KilnRun, DuplicateInput) {
  expectError("'" + model + "' --input x='" + input + "' --input x='" + input + "'",
              "input 'x' given twice", true);
}

TEST_F(KilnRun, InputFileMissing) {
  expectError("'" + model + "' --input x=/nonexistent/x.npy", "cannot open '/nonexistent/x.npy'");
}

TEST_F(KilnRun, InputWrongDType) {
  std::string wrong = writeNpy("x_i32.npy", KILN_DTYPE_I32, {4}, 16);
  expectError("'" + model + "' --input x='" + wrong + "'", "input 'x' expects f32[4], got i32[4]");
}

TEST_F(KilnRun, InputWrongShape) {
  std::string wrong = writeNpy("x_2x2.npy", KILN_DTYPE_F32, {2, 2}, 16);
  expectError("'" + model + "' --input x='" + wrong + "'",
              "input 'x' expects f32[4], got f32[2x2]");
}

TEST_F(KilnRun, InputNotNpy) {
  std::string wrong = kiln::test::writeTempFile("x.txt", {'h', 'i'});
  expectError("'" + model + "' --input x='" + wrong + "'", "not a .npy file");
}

TEST_F(KilnRun, UnknownOutputName) {
  expectError("'" + model + "' --input x='" + input + "' --output q=/tmp/q.npy",
              "has no output named 'q' (outputs: 'y')");
}

TEST_F(KilnRun, InputIsADirectory) {
  // Regression: reading a directory threw from iostreams and aborted kiln-run.
  expectError("'" + model + "' --input x='" + testing::TempDir() + "'", "Is a directory");
}

TEST_F(KilnRun, UnknownOptionAsLastArgument) {
  expectError("'" + model + "' --info --bogus", "unknown option '--bogus'", true);
}

TEST_F(KilnRun, OutputGivenTwice) {
  expectError("'" + model + "' --input x='" + input + "' --output y=/tmp/a.npy --output y=/tmp/b.npy",
              "output 'y' is given to --output twice", true);
}

TEST_F(KilnRun, OutputDirectoryMissingFailsBeforeTheRun) {
  expectError("'" + model + "' --input x='" + input + "' --output y=/nonexistent/dir/y.npy",
              "cannot write '/nonexistent/dir/y.npy'");
}

TEST_F(KilnRun, CompareReferenceWrongShape) {
  std::string ref = writeNpy("ref.npy", KILN_DTYPE_F32, {5}, 20);
  expectError("'" + model + "' --input x='" + input + "' --compare y='" + ref + "'",
              "reference for output 'y' expects f32[4], got f32[5]");
}

TEST_F(KilnRun, NoGpuGivesCleanError) {
  kiln::test::CommandResult result =
      runKilnRun("'" + model + "' --input x='" + input + "' --output y=/dev/null");
  if (result.exitCode == 0)
    GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("kiln-run: error: "), std::string::npos) << result.output;
  if (result.output.find("CUDA driver not found") == std::string::npos) {
    EXPECT_NE(result.output.find("cuInit"), std::string::npos) << result.output;
  }
}

} // namespace
