#include "analysis/run_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "analysis/model_file.h"
#include "analysis/test_run_writer.h"
#include "base/file_system.h"

namespace stepscope::analysis {
namespace {

using testing::kTestEpochNs;

class RunLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/run-loader-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_TRUE(CreateDirectories(root_).ok());
  }
  std::string root_;
};

TEST_F(RunLoaderTest, LoadsAStepscopeJobOrNodeDirectory) {
  const std::string node = root_ + "/job/algo-1";
  ASSERT_TRUE(CreateDirectories(node).ok());
  ASSERT_TRUE(WriteFileAtomically(node + "/manifest.json", testing::TestManifest("algo-1", "exited")).ok());
  {
    testing::TestStream proc(node, "proc-7-aaaa", 7, false);
    ASSERT_TRUE(proc.ok());
    proc.StepBegin(1, 100, store::Phase::kTrain, 4);
    proc.StepEnd(1, 300, store::Phase::kTrain, 4);
  }
  for (const std::string& path : {root_ + "/job", node}) {
    auto model = LoadRun(path);
    ASSERT_TRUE(model.ok()) << model.status().message();
    EXPECT_EQ(model->source(), ModelSource::kStepscope);
    ASSERT_EQ(model->nodes().size(), 1u);
    EXPECT_EQ(model->nodes()[0].name, "algo-1");
    ASSERT_EQ(model->steps().size(), 1u);
    const FrameworkEvent& step = model->events()[model->steps()[0]];
    EXPECT_EQ(step.step, 4);
    EXPECT_EQ(step.start_ns, kTestEpochNs + 100);
    EXPECT_EQ(step.pid, 7);
  }
}

TEST_F(RunLoaderTest, LoadsAnImportedRunFromItsModelFile) {
  ModelBuilder builder(ModelSource::kSageMaker);
  NodeFacts facts;
  facts.name = "algo-1";
  const uint32_t node = builder.AddNode(facts);
  builder.AddSample(builder.SeriesFor(node, "cpu", "cpu0", "CPUUtilization"), 1000, 42.5);
  Model saved = std::move(builder).Finish();
  const std::string run = root_ + "/imported";
  ASSERT_TRUE(CreateDirectories(run).ok());
  // An imported run has a manifest too; the model file decides.
  ASSERT_TRUE(WriteFileAtomically(run + "/manifest.json", R"({"format_version":1,"source":"sagemaker"})").ok());
  ASSERT_TRUE(SaveModelFile(saved, run + "/" + kModelFileName).ok());

  for (const std::string& path : {run, run + "/" + kModelFileName}) {
    auto model = LoadRun(path);
    ASSERT_TRUE(model.ok()) << model.status().message();
    EXPECT_EQ(model->source(), ModelSource::kSageMaker);
    ASSERT_EQ(model->series().size(), 1u);
    EXPECT_EQ(model->series()[0].value, (std::vector<double>{42.5}));
    EXPECT_EQ(model->String(model->series()[0].dimension), "CPUUtilization");
  }
}

TEST_F(RunLoaderTest, ErrorsAreOneLineNamingThePathAndWhatToPass) {
  auto missing = LoadRun(root_ + "/nothing-here");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "'" + root_ + "/nothing-here' does not exist; pass the run directory that " +
                                            "`stepscope run` or `stepscope import` printed (<out>/<job>)");

  // The output root itself (jobs inside, but not a run).
  ASSERT_TRUE(CreateDirectories(root_ + "/out/job-a/empty").ok());
  auto not_a_run = LoadRun(root_ + "/out");
  ASSERT_FALSE(not_a_run.ok());
  EXPECT_EQ(not_a_run.status().message(), "'" + root_ + "/out' holds no stepscope run: no manifest.json or stream " +
                                              "files in it or in its subdirectories, and no model.stepscope; pass the " +
                                              "directory that `stepscope run` or `stepscope import` printed (<out>/<job>)");
  EXPECT_EQ(not_a_run.status().message().find('\n'), std::string::npos);
}

// Issue 12: a file of a run given instead of its directory was called a corrupt model file.
TEST_F(RunLoaderTest, AFileOfARunSaysWhichDirectoryToPass) {
  ASSERT_TRUE(CreateDirectories(root_ + "/job/n1").ok());
  ASSERT_TRUE(WriteFileAtomically(root_ + "/job/n1/manifest.json", "{}").ok());
  auto file = LoadRun(root_ + "/job/n1/manifest.json");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(), "'" + root_ + "/job/n1/manifest.json' is a file, not a run directory; pass the " +
                                         "directory that holds the run ('" + root_ +
                                         "/job/n1' if the file is in one), as `stepscope run` printed it");
}

// Issue 12: a random manifest.json beside garbage logs loaded as an empty run, and every command
// printed "NoIssuesFound" and "started 1970-01-01".
TEST_F(RunLoaderTest, ARandomManifestBesideGarbageLogsIsRefused) {
  const std::string node = root_ + "/job/algo-1";
  ASSERT_TRUE(CreateDirectories(node).ok());
  ASSERT_TRUE(WriteFileAtomically(node + "/manifest.json", R"({"name": "left-pad", "version": "1.0.0"})").ok());
  ASSERT_TRUE(WriteFileAtomically(node + "/system.log", std::string(1000, '\x5a')).ok());
  for (const std::string& path : {root_ + "/job", node}) {
    auto model = LoadRun(path);
    ASSERT_FALSE(model.ok()) << path;
    EXPECT_NE(model.status().message().find("holds no stepscope run: '" + node + "/manifest.json' is not a node " +
                                            "manifest (no schema_version, node, status, clock)"),
              std::string::npos)
        << model.status().message();
  }
}

TEST_F(RunLoaderTest, AModelFileInsideTheRunIsReadOnlyWhenItIsTheRunsOwn) {
  ModelBuilder builder(ModelSource::kSageMaker);
  const std::string elsewhere = root_ + "/elsewhere.stepscope";
  ASSERT_TRUE(SaveModelFile(std::move(builder).Finish(), elsewhere).ok());
  const std::string run = root_ + "/imported";
  ASSERT_TRUE(CreateDirectories(run).ok());
  ASSERT_EQ(symlink(elsewhere.c_str(), (run + "/" + kModelFileName).c_str()), 0);
  auto model = LoadRun(run);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("model.stepscope' is a symbolic link"), std::string::npos)
      << model.status().message();
  // Named directly, the file is the user's choice and is followed.
  EXPECT_TRUE(LoadRun(run + "/" + kModelFileName).ok());
}

}  // namespace
}  // namespace stepscope::analysis
