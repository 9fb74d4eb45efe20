//===- KilnRunTest.cpp - kiln-run command-line errors (no GPU needed) -----===//
//
// Runs the kiln-run binary on hand-built artifacts and .npy files and checks exit codes and
// messages of every usage and file error, --info output, and the clean no-GPU error. For tensor
// parallelism: threads mode's rank-file checks (missing file, wrong world size, rank, group hash,
// signature), process mode's environment (rank variables, group id from KILN_TP_ID /
// KILN_TP_ID_FILE, quiet ranks), --info of rank files; everything that needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"
#include "TestArtifact.h"
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>

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

  /// Expects exit code 2 and `fragment` in the output (kiln-run run with `environment`).
  void expectError(const std::string &arguments, const std::string &fragment,
                   bool usageLine = false, const std::string &environment = "") {
    kiln::test::CommandResult result = runKilnRun(arguments, environment);
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
  kiln::test::buildAddModel(
      builder, {{90, std::vector<uint8_t>(100, 1)}, {100, std::vector<uint8_t>(60, 2)}});
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
  expectError("'" + model + "' --input x='" + input +
                  "' --output y=/tmp/a.npy --output y=/tmp/b.npy",
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

TEST_F(KilnRun, HelpDescribesTensorParallelModes) {
  kiln::test::CommandResult result = runKilnRun("--help");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  for (const char *fragment :
       {"[--tensor-parallel N] [--tp-timeout MS]", "--tensor-parallel N  run the N rank files",
        "KILN_TP_ID_FILE=/tmp/kiln.id torchrun --nproc-per-node 2 --no-python",
        "KILN_TP_RANK=1 kiln-run llama.kiln", "LOCAL_RANK"})
    EXPECT_NE(result.output.find(fragment), std::string::npos) << fragment;
}

TEST_F(KilnRun, BadTensorParallelCount) {
  expectError("'" + model + "' --tensor-parallel 1 --info",
              "option '--tensor-parallel' expects the number of ranks in [2, 1024], got '1'", true);
  expectError("'" + model + "' --tensor-parallel two --info", "got 'two'", true);
}

TEST_F(KilnRun, BadTpTimeout) {
  expectError("'" + model + "' --tp-timeout -5 --info",
              "option '--tp-timeout' expects milliseconds in [0, 4294967295] (0 = no limit), got "
              "'-5'",
              true);
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

/// Rank files of the 2-rank all-reduce model and helpers for the tensor-parallel tests.
class KilnRunTp : public KilnRun {
protected:
  /// Writes `worldSize` rank files "<prefix>tp.rank<r>.kiln" (rank r of worldSize, after
  /// `edit(r, model)`; ranks in `skip` are not written) and returns the base "<prefix>tp.kiln".
  std::string
  writeRankFiles(uint32_t worldSize,
                 const std::function<void(uint32_t, kiln::artifact::ModelT &)> &edit = nullptr,
                 const std::vector<uint32_t> &skip = {}) {
    std::string base;
    for (uint32_t r = 0; r < worldSize; ++r) {
      kiln::test::ArtifactBuilder builder;
      kiln::test::buildAllReduceModel(builder, r, worldSize);
      if (edit)
        edit(r, builder.model);
      std::string name = "tp.rank" + std::to_string(r) + ".kiln";
      std::string path = kiln::test::writeTempFile(name, builder.build());
      if (std::find(skip.begin(), skip.end(), r) != skip.end())
        std::remove(path.c_str());
      base = path.substr(0, path.size() - name.size()) + "tp.kiln";
    }
    return base;
  }

  /// Rank file `rank` of `base`.
  static std::string rankPath(const std::string &base, uint32_t rank) {
    return base.substr(0, base.size() - 5) + ".rank" + std::to_string(rank) + ".kiln";
  }

  /// A syntactically valid group id (no group behind it).
  static std::string someId() { return std::string(256, 'a'); }

  /// Path of a group-id file for this test (removed first).
  static std::string idFile() {
    std::string path = testing::TempDir() + "kiln_tp_id_" + std::to_string(::getpid()) + "_" +
                       testing::UnitTest::GetInstance()->current_test_info()->name();
    std::remove(path.c_str());
    return path;
  }
};

TEST_F(KilnRunTp, InfoOfRankFileShowsGroupAndCollectives) {
  std::string base = writeRankFiles(2);
  kiln::test::CommandResult result = runKilnRun("'" + rankPath(base, 1) + "' --info");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("tensor_parallel: world_size 2, rank 1, group_hash "
                               "0x6b696c6e2d747031"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("collectives: 1\n  0: all_reduce_sum f32 x 4 (16 B) before "
                               "launch 1"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("kernels: 2 launches in 1 modules"), std::string::npos)
      << result.output;
}

TEST_F(KilnRunTp, InfoOfSingleGpuModelHasNoTensorParallelSection) {
  kiln::test::CommandResult result = runKilnRun("'" + model + "' --info");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output.find("tensor_parallel"), std::string::npos) << result.output;
}

TEST_F(KilnRunTp, ThreadsModeInfoPrintsEveryRank) {
  std::string base = writeRankFiles(2);
  kiln::test::CommandResult result = runKilnRun("--tensor-parallel 2 '" + base + "' --info");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("artifact: " + rankPath(base, 0)), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("artifact: " + rankPath(base, 1)), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("world_size 2, rank 0,"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("world_size 2, rank 1,"), std::string::npos) << result.output;
}

TEST_F(KilnRunTp, ThreadsModeMissingRankFile) {
  std::string base = writeRankFiles(2, nullptr, {1});
  expectError("--tensor-parallel 2 '" + base + "' --info",
              "cannot open rank 1 artifact '" + rankPath(base, 1) +
                  "': No such file or directory; a 2-rank group opens the files that "
                  "`kiln-compile --tensor-parallel 2 -o " +
                  base + "` writes (" + rankPath(base, 0) + " ... " + rankPath(base, 1) + ")");
}

TEST_F(KilnRunTp, ThreadsModeGivenARankFileSaysToGiveTheBase) {
  std::string base = writeRankFiles(2);
  expectError("--tensor-parallel 2 '" + rankPath(base, 0) + "' --info",
              "'" + rankPath(base, 0) + "' is itself a rank file: give its base '" + base + "'");
}

TEST_F(KilnRunTp, ThreadsModeWrongWorldSize) {
  std::string base = writeRankFiles(3);
  expectError("--tensor-parallel 2 '" + base + "' --info",
              "'" + rankPath(base, 0) +
                  "' is a rank file of a 3-rank tensor-parallel compile, but the group has 2 "
                  "ranks");
}

TEST_F(KilnRunTp, ThreadsModeWrongRank) {
  std::string base =
      writeRankFiles(2, [](uint32_t, kiln::artifact::ModelT &m) { m.tensor_parallel->rank = 0; });
  expectError("--tensor-parallel 2 '" + base + "' --info",
              "'" + rankPath(base, 1) +
                  "' holds rank 0, expected rank 1 of 2; was the file renamed?");
}

TEST_F(KilnRunTp, ThreadsModeGroupHashMismatch) {
  std::string base = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    m.tensor_parallel->group_hash = r == 0 ? 0x1111 : 0x2222;
  });
  expectError("--tensor-parallel 2 '" + base + "' --info",
              "'" + rankPath(base, 1) +
                  "' has group hash 0x0000000000002222 but rank 0's file has 0x0000000000001111: "
                  "the rank files come from different compiles");
}

TEST_F(KilnRunTp, ThreadsModeSingleGpuFileAmongRanks) {
  std::string base = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    if (r == 1) {
      m.tensor_parallel.reset();
      m.collectives.clear();
      m.format_version = 1;
    }
  });
  expectError("--tensor-parallel 2 '" + base + "' --info",
              "'" + rankPath(base, 1) +
                  "' is a single-GPU artifact (no tensor_parallel table), not a rank file of "
                  "`kiln-compile --tensor-parallel 2`");
}

TEST_F(KilnRunTp, ThreadsModeInputSignatureMismatch) {
  std::string base = writeRankFiles(2, [](uint32_t r, kiln::artifact::ModelT &m) {
    if (r == 1)
      m.inputs[0]->name = "z";
  });
  expectError("--tensor-parallel 2 '" + base + "' --info",
              "'" + rankPath(base, 1) + "': input 0 is 'z' f32[4] but 'x' f32[4] in '" +
                  rankPath(base, 0) + "'");
}

TEST_F(KilnRunTp, ThreadsModeRefusesProcessModeVariables) {
  std::string base = writeRankFiles(2);
  expectError("--tensor-parallel 2 '" + base + "' --info",
              "--tensor-parallel runs every rank in this process, but KILN_TP_RANK / "
              "KILN_TP_WORLD_SIZE ask for one rank per process",
              true, "KILN_TP_RANK=0 KILN_TP_WORLD_SIZE=2");
}

TEST_F(KilnRunTp, ThreadsModeChecksInputsAgainstRankZero) {
  std::string base = writeRankFiles(2);
  std::string wrong = writeNpy("x5.npy", KILN_DTYPE_F32, {5}, 20);
  expectError("--tensor-parallel 2 '" + base + "' --input x='" + wrong + "'",
              "input 'x' expects f32[4], got f32[5]");
}

/// Adds input "ids" i64[4] with value range [0, 49] (token ids of a 50-row table) to a rank.
void addTokenIds(uint32_t, kiln::artifact::ModelT &model) {
  auto ids = std::make_unique<kiln::artifact::TensorDescT>();
  ids->name = "ids";
  ids->dtype = kiln::artifact::DType::I64;
  ids->shape = {4};
  ids->value_range = std::make_unique<kiln::artifact::ValueRange>(0, 49);
  model.inputs.push_back(std::move(ids));
}

/// Writes ids.npy: i64[4] {0, 1, 2, 50}; returns its path.
std::string writeOutsideIds() {
  int64_t ids[4] = {0, 1, 2, 50};
  std::vector<uint8_t> image;
  std::string error;
  EXPECT_TRUE(kiln::npy::encodeNpy(KILN_DTYPE_I64, {4}, ids, sizeof(ids), image, error)) << error;
  return kiln::test::writeTempFile("ids_outside.npy", image);
}

TEST_F(KilnRunTp, ThreadsModeChecksValueRangesBeforeTheGroupForms) {
  std::string base = writeRankFiles(2, addTokenIds);
  std::string ids = writeOutsideIds();
  expectError("--tensor-parallel 2 '" + base + "' --input x='" + input + "' --input ids='" + ids +
                  "'",
              "'" + ids + "': input 'ids' element [3] is 50, outside [0, 49]");
}

TEST_F(KilnRunTp, ProcessModeChecksValueRangesOnEveryRank) {
  std::string base = writeRankFiles(2, addTokenIds);
  std::string ids = writeOutsideIds();
  // Rank 1 prints nothing but errors, and this one comes before the group id is looked for.
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "' --input ids='" + ids + "'",
              "'" + ids + "': input 'ids' element [3] is 50, outside [0, 49]");
}

TEST_F(KilnRunTp, ThreadsModeWithoutGpuReportsEveryRank) {
  std::string base = writeRankFiles(2);
  kiln::test::CommandResult result = runKilnRun("--tensor-parallel 2 '" + base + "' --input x='" +
                                                input + "' --output y=/dev/null --tp-timeout 5000");
  if (result.exitCode == 0)
    GTEST_SKIP() << "two GPUs are present: " << result.output;
  EXPECT_EQ(result.exitCode, 2) << result.output;
  if (result.output.find("cannot create the tensor-parallel group id") != std::string::npos)
    GTEST_SKIP() << "no NCCL: " << result.output;
  EXPECT_NE(result.output.find("kiln-run: error: rank 0: "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("kiln-run: error: rank 1: "), std::string::npos) << result.output;
}

TEST_F(KilnRunTp, ProcessModeRankVariablesMustMatchTheRankFile) {
  std::string base = writeRankFiles(2);
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "'",
              "kiln-run: error: KILN_TP_RANK=0 of KILN_TP_WORLD_SIZE=2: '" + rankPath(base, 1) +
                  "' holds rank 1, expected rank 0 of 2; was the file renamed?",
              false, "KILN_TP_RANK=0 KILN_TP_WORLD_SIZE=2");
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "'",
              "kiln-run: error: RANK=1 of WORLD_SIZE=4: '" + rankPath(base, 1) +
                  "' is a rank file of a 2-rank tensor-parallel compile, but the group has 4 ranks",
              false, "RANK=1 WORLD_SIZE=4");
}

TEST_F(KilnRunTp, ProcessModeMalformedRankVariables) {
  expectError("'" + model + "' --info",
              "environment variable KILN_TP_RANK='abc' is not a number in [0, 2147483647]", false,
              "KILN_TP_RANK=abc KILN_TP_WORLD_SIZE=2");
  expectError("'" + model + "' --info",
              "KILN_TP_RANK is set but KILN_TP_WORLD_SIZE is not; set both", false,
              "KILN_TP_RANK=0");
  expectError("'" + model + "' --info", "RANK=2 is not a rank of WORLD_SIZE=2", false,
              "RANK=2 WORLD_SIZE=2");
  expectError("'" + model + "' --info", "environment variable WORLD_SIZE='-1' is not a number",
              false, "RANK=0 WORLD_SIZE=-1");
}

TEST_F(KilnRunTp, ProcessModeSingleWorldRunsTheModelItself) {
  // torchrun with one process sets RANK=0 WORLD_SIZE=1: a single-GPU run of MODEL.
  kiln::test::CommandResult result = runKilnRun("'" + model + "' --info", "RANK=0 WORLD_SIZE=1");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("artifact: " + model), std::string::npos) << result.output;
}

TEST_F(KilnRunTp, ProcessModeBaseOpensTheRankFile) {
  std::string base = writeRankFiles(2);
  kiln::test::CommandResult result =
      runKilnRun("'" + base + "' --info", "KILN_TP_RANK=1 KILN_TP_WORLD_SIZE=2");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("artifact: " + rankPath(base, 1)), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("world_size 2, rank 1,"), std::string::npos) << result.output;
}

TEST_F(KilnRunTp, ProcessModeBaseWithMissingRankFile) {
  std::string base = writeRankFiles(2, nullptr, {1});
  expectError("'" + base + "' --input x='" + input + "'",
              "kiln-run: error: RANK=1 of WORLD_SIZE=2: cannot open rank 1 artifact '" +
                  rankPath(base, 1) +
                  "': No such file or directory; a 2-rank group opens the files that "
                  "`kiln-compile --tensor-parallel 2 -o " +
                  base + "` writes",
              false, "RANK=1 WORLD_SIZE=2");
}

TEST_F(KilnRunTp, ProcessModeSingleGpuBaseWithRankVariables) {
  expectError("'" + model + "' --input x='" + input + "'",
              "; '" + model +
                  "' is itself a single-GPU artifact: run it without the rank variables",
              false, "KILN_TP_RANK=0 KILN_TP_WORLD_SIZE=2");
}

TEST_F(KilnRunTp, ProcessModeNeedsAGroupId) {
  std::string base = writeRankFiles(2);
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "'",
              "rank 1 of 2 ('" + rankPath(base, 1) +
                  "'): the group id is not in the environment: set KILN_TP_ID_FILE to a path "
                  "that rank 0 writes the id to and the other ranks read (or KILN_TP_ID to an "
                  "id's text form), or run all ranks in one process with `kiln-run "
                  "--tensor-parallel 2 " +
                  base + "`");
}

TEST_F(KilnRunTp, ProcessModeBadGroupIdText) {
  std::string base = writeRankFiles(2);
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "'",
              "KILN_TP_ID: invalid tensor-parallel group id: 3 characters, expected 256 hex "
              "digits",
              false, "KILN_TP_ID=abc");
  std::string id = someId();
  id[10] = 'q';
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "'",
              "KILN_TP_ID: invalid tensor-parallel group id: character 'q' at position 10 is not "
              "a hex digit",
              false, "KILN_TP_ID=" + id);
}

TEST_F(KilnRunTp, ProcessModeBothIdSources) {
  std::string base = writeRankFiles(2);
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "'",
              "both KILN_TP_ID and KILN_TP_ID_FILE are set; set one", false,
              "KILN_TP_ID=" + someId() + " KILN_TP_ID_FILE=/tmp/x");
}

TEST_F(KilnRunTp, ProcessModeIdFileNeverWritten) {
  std::string base = writeRankFiles(2);
  std::string file = idFile();
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "' --tp-timeout 200",
              "kiln-run: error: rank 1: KILN_TP_ID_FILE: group id file '" + file +
                  "' did not appear within 200 ms: rank 0 writes it; is rank 0 running, with the "
                  "same file?",
              false, "KILN_TP_ID_FILE='" + file + "'");
}

TEST_F(KilnRunTp, ProcessModeIdFileInMissingDirectoryFailsEarly) {
  // Rank 0 creates no directories, so the file can never appear: rank 1 says so (after a grace
  // period of 5 s, or at --tp-timeout if that is sooner) instead of waiting the whole
  // --tp-timeout, even with --tp-timeout 0 (no limit). `timeout 60` turns a regression into exit
  // 124 instead of a hung test.
  std::string base = writeRankFiles(2);
  std::string file =
      testing::TempDir() + "kiln_no_such_dir_" + std::to_string(::getpid()) + "/sub/kiln.id";
  std::string message = "rank 1: KILN_TP_ID_FILE: group id file '" + file +
                        "' cannot appear: its directory '" + file.substr(0, file.size() - 8) +
                        "' does not exist (waited ";
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "' --tp-timeout 200", message,
              false, "KILN_TP_ID_FILE='" + file + "'");
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "' --tp-timeout 0", message,
              false, "KILN_TP_ID_FILE='" + file + "' timeout 60");
}

TEST_F(KilnRunTp, ProcessModeIdFileIsADirectory) {
  std::string base = writeRankFiles(2);
  std::string directory = testing::TempDir();
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "' --tp-timeout 200",
              "rank 1: KILN_TP_ID_FILE: group id file '" + directory +
                  "' is a directory; give the path of a file (rank 0 writes the id to it)",
              false, "KILN_TP_ID_FILE='" + directory + "'");
}

TEST_F(KilnRunTp, ProcessModeIdFileWithBadContent) {
  std::string base = writeRankFiles(2);
  std::string file = idFile();
  std::ofstream(file) << "not an id\n";
  expectError("'" + rankPath(base, 1) + "' --input x='" + input + "'",
              "rank 1: KILN_TP_ID_FILE: group id file '" + file +
                  "': invalid tensor-parallel group id: character 'n' at position 0",
              false, "KILN_TP_ID_FILE='" + file + "'");
  std::remove(file.c_str());
}

TEST_F(KilnRunTp, ProcessModeRankZeroCannotWriteIdFile) {
  std::string base = writeRankFiles(2);
  kiln::test::CommandResult result =
      runKilnRun("'" + rankPath(base, 0) + "' --input x='" + input + "'",
                 "KILN_TP_ID_FILE=/nonexistent/dir/kiln.id");
  EXPECT_EQ(result.exitCode, 2) << result.output;
  if (result.output.find("cannot create the tensor-parallel group id") != std::string::npos)
    GTEST_SKIP() << "no NCCL: " << result.output;
  EXPECT_NE(result.output.find("kiln-run: error: rank 0: KILN_TP_ID_FILE: cannot write group id "
                               "file '/nonexistent/dir/kiln.id' (temporary file "
                               "'/nonexistent/dir/kiln.id.tmp."),
            std::string::npos)
      << result.output;
}

TEST_F(KilnRunTp, ProcessModeRankZeroWritesThenDeletesIdFile) {
  // Rank 0 creates the id, writes the file and creates its session, which fails here (no GPU)
  // or times out (no rank 1); either way the file is gone afterwards.
  std::string base = writeRankFiles(2);
  std::string file = idFile();
  kiln::test::CommandResult result =
      runKilnRun("'" + base + "' --input x='" + input + "' --tp-timeout 1000",
                 "KILN_TP_RANK=0 KILN_TP_WORLD_SIZE=2 KILN_TP_ID_FILE='" + file + "'");
  EXPECT_EQ(result.exitCode, 2) << result.output;
  if (result.output.find("cannot create the tensor-parallel group id") != std::string::npos)
    GTEST_SKIP() << "no NCCL: " << result.output;
  EXPECT_NE(result.output.find("kiln-run: error: rank 0: "), std::string::npos) << result.output;
  EXPECT_NE(access(file.c_str(), F_OK), 0) << "rank 0 must delete " << file;
  EXPECT_NE(access((file + ".tmp.").c_str(), F_OK), 0);
}

TEST_F(KilnRunTp, ProcessModeOtherRankReadsIdFileAndStaysQuiet) {
  // Rank 1 reads the id rank 0 would have written, prints no --info and checks no --output path
  // (rank 0 writes the files), and fails only at the session (no GPU, or no peer within 1 s).
  std::string base = writeRankFiles(2);
  std::string file = idFile();
  std::ofstream(file) << someId() << "\n";
  kiln::test::CommandResult result =
      runKilnRun("'" + base + "' --info --input x='" + input +
                     "' --output y=/nonexistent/dir/y.npy --tp-timeout 1000",
                 "RANK=1 WORLD_SIZE=2 KILN_TP_ID_FILE='" + file + "'");
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_EQ(result.output.find("artifact:"), std::string::npos) << "rank 1 must stay quiet";
  EXPECT_EQ(result.output.find("cannot write"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("kiln-run: error: rank 1: "), std::string::npos) << result.output;
  EXPECT_EQ(access(file.c_str(), F_OK), 0) << "only rank 0 deletes the id file";
  std::remove(file.c_str());
}

TEST_F(KilnRunTp, ProcessModeGroupIdFromEnvironment) {
  std::string base = writeRankFiles(2);
  kiln::test::CommandResult result =
      runKilnRun("'" + rankPath(base, 1) + "' --input x='" + input + "' --tp-timeout 1000",
                 "KILN_TP_ID=" + someId());
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("kiln-run: error: rank 1: "), std::string::npos) << result.output;
}

} // namespace
