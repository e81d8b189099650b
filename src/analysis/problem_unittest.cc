#include "analysis/problem.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

Problem Make(const std::string& name, ProblemSeverity severity, const std::string& sentence) {
  return Problem{name, severity, 1, sentence};
}

TEST(FormatRunProblemsTest, ShowsDataLossAndErrorsButNotInfo) {
  const std::vector<Problem> problems = {
      Make("missing_process_log", ProblemSeverity::kDataLoss, "node 'n' has no proc-7.log"),
      Make("frames_skipped", ProblemSeverity::kInfo, "nothing lost"),
      Make("no_clock_anchor", ProblemSeverity::kError, "times are guessed"),
  };
  EXPECT_EQ(FormatRunProblems(problems, "stepscope rules: ", "runs/j"),
            "stepscope rules: data loss: node 'n' has no proc-7.log [missing_process_log]\n"
            "stepscope rules: error: times are guessed [no_clock_anchor]\n");
}

TEST(FormatRunProblemsTest, NothingForACleanRun) {
  EXPECT_EQ(FormatRunProblems({}, "stepscope info: ", "runs/j"), "");
  EXPECT_EQ(FormatRunProblems({Make("note", ProblemSeverity::kInfo, "fine")}, "stepscope info: ", "runs/j"), "");
}

TEST(FormatRunProblemsTest, BoundedWithACountOfTheRest) {
  std::vector<Problem> problems;
  for (int i = 0; i < 13; ++i) {
    problems.push_back(Make("p" + std::to_string(i), ProblemSeverity::kDataLoss, "lost " + std::to_string(i)));
  }
  problems.push_back(Make("quiet", ProblemSeverity::kInfo, "not counted among the hidden"));
  const std::string text = FormatRunProblems(problems, "x: ", "runs/j");
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, kShownProblemLines + 1) << text;
  EXPECT_NE(text.find("x: data loss: lost 9 [p9]\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("[p10]"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("x: ... and 3 more problems; `stepscope info runs/j` lists them\n")) << text;
}

TEST(FormatRunProblemsTest, ASentenceWithANewlineStaysOneLine) {
  const std::string text =
      FormatRunProblems({Make("missing_process_log", ProblemSeverity::kDataLoss, "file 'a\nb' is gone")}, "", "r");
  EXPECT_EQ(text, "data loss: file 'a b' is gone [missing_process_log]\n");
}

}  // namespace
}  // namespace stepscope::analysis
