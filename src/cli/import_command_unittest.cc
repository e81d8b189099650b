#include "cli/import_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace stepscope::cli {
namespace {

class ImportCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/import-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  std::string root_;
};

TEST_F(ImportCommandTest, SageMakerFolderWithNoRecognisedFileFailsAndNamesWhatItSkipped) {
  Write("output/system/notes.txt", "not a metrics file\n");
  Write("output/framework/pevents/trace.json", "[]");
  Write("output/framework/training_job_end.ts", "");
  const ImportInvocation invocation{"sagemaker", {root_ + "/output"}, root_ + "/runs", "job"};
  ::testing::internal::CaptureStderr();
  const int exit_code = ImportCommand(invocation);
  const std::string error = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(error, "stepscope import: '" + root_ + "/output' holds no SageMaker profiler file (skipped 2 "
                   "unrecognised: framework/pevents/trace.json, system/notes.txt); system files are "
                   "system/**/<10 digits>.algo-<N>.json, framework files "
                   "framework/pevents/**/<time>_<node>_<timeline>.json or framework/**/*.trace.json.gz; "
                   "check that it is the job's profiler-output directory\n");
  EXPECT_FALSE(std::filesystem::exists(root_ + "/runs/job")) << "no run may be written";
}

TEST_F(ImportCommandTest, SageMakerFolderWithEmptyPartsSaysSo) {
  std::filesystem::create_directories(root_ + "/output/system");
  std::filesystem::create_directories(root_ + "/output/framework");
  ::testing::internal::CaptureStderr();
  const int exit_code = ImportCommand({"sagemaker", {root_ + "/output"}, root_ + "/runs", "job"});
  const std::string error = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(exit_code, 1);
  EXPECT_NE(error.find("holds no SageMaker profiler file (system/ and framework/ hold no files)"), std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), error.size() - 1) << error;
}

TEST_F(ImportCommandTest, ListOfSkippedFilesStaysOneShortLine) {
  for (int i = 0; i < 8; ++i) Write("output/system/junk-" + std::to_string(i), "x");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(ImportCommand({"sagemaker", {root_ + "/output"}, root_ + "/runs", "job"}), 1);
  const std::string error = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(error.find("skipped 8 unrecognised: system/junk-0, system/junk-1, system/junk-2, system/junk-3, "
                       "system/junk-4 and 3 more)"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace stepscope::cli
