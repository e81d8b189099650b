#include "launcher/detail_window.h"

#include <gtest/gtest.h>

namespace stepscope::launcher {
namespace {

nlohmann::json Parse(const char* text) { return nlohmann::json::parse(text); }

TEST(DetailWindow, DefaultsMirrorSageMaker) {
  std::vector<DetailWindow> windows = DefaultDetailWindows();
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(DescribeDetailWindow(windows[0]), "operators step 5 (TRAIN)");
  EXPECT_EQ(DescribeDetailWindow(windows[1]), "dataloader step 7 (TRAIN)");
  EXPECT_EQ(DescribeDetailWindow(windows[2]), "python steps 9-11 (TRAIN, cprofile, timer cycle)");
}

TEST(DetailWindow, ParsesStartColonCount) {
  auto window = ParseStepWindow(DetailKind::kPython, "200:3", "--python-steps");
  ASSERT_TRUE(window.ok()) << window.status().message();
  EXPECT_EQ(window->kind, DetailKind::kPython);
  EXPECT_EQ(window->start_step, 200);
  EXPECT_EQ(window->num_steps, 3);
  EXPECT_FALSE(window->start_unix_time.has_value());
  EXPECT_TRUE(ParseStepWindow(DetailKind::kOperators, "0:1", "--detailed-steps").ok());
}

TEST(DetailWindow, RejectsMalformedStepTextNamingTheFlag) {
  for (const char* text : {"", "5", "5:", ":3", "a:1", "5:x", "-1:2", "5:-2", "5:3:1", "5.5:1", " 5:1"}) {
    auto window = ParseStepWindow(DetailKind::kPython, text, "--python-steps");
    ASSERT_FALSE(window.ok()) << text;
    EXPECT_EQ(window.status().message().rfind("--python-steps: ", 0), 0u) << window.status().message();
    EXPECT_NE(window.status().message().find("START:COUNT"), std::string::npos);
  }
  auto zero = ParseStepWindow(DetailKind::kPython, "5:0", "--python-steps");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("num_steps must be at least 1"), std::string::npos);
}

TEST(DetailWindow, ReadsStepAndTimeWindowsFromJson) {
  auto step = DetailWindowFromJson(
      Parse(R"({"kind": "python", "start_step": 9, "num_steps": 3, "phase": "eval", "profiler": "cprofile",
                "timer": "cpu_time"})"),
      "test");
  ASSERT_TRUE(step.ok()) << step.status().message();
  EXPECT_EQ(step->phase, "EVAL");
  EXPECT_EQ(step->timer, PythonTimer::kCpuTime);
  auto time = DetailWindowFromJson(
      Parse(R"({"kind": "operators", "start_unix_time": 1790000000.5, "duration_s": 10, "start_step": null})"), "test");
  ASSERT_TRUE(time.ok()) << time.status().message();
  EXPECT_EQ(time->start_unix_time, 1790000000.5);
  EXPECT_EQ(time->duration_s, 10.0);
  EXPECT_FALSE(time->start_step.has_value());
}

TEST(DetailWindow, RejectsEveryRuleViolationInOneLine) {
  struct Case {
    const char* json;
    const char* expected;
  } cases[] = {
      {R"({"kind": "python", "start_step": 1, "num_steps": 1, "start_unix_time": 5, "duration_s": 1})", "not both"},
      {R"({"kind": "python"})", "has no start"},
      {R"({"kind": "python", "start_step": 1})", "start_step and num_steps go together"},
      {R"({"kind": "python", "duration_s": 3})", "start_unix_time and duration_s go together"},
      {R"({"kind": "python", "start_step": -1, "num_steps": 1})", "is negative"},
      {R"({"kind": "python", "start_step": 1, "num_steps": 0})", "at least 1"},
      {R"({"kind": "python", "start_step": 1, "num_steps": -4})", "at least 1"},
      {R"({"kind": "python", "start_unix_time": 1.0, "duration_s": 0})", "more than 0"},
      {R"({"kind": "python", "start_unix_time": -1.0, "duration_s": 1})", "seconds since 1970"},
      {R"({"kind": "tpu", "start_step": 1, "num_steps": 1})", "unknown detail kind 'tpu'"},
      {R"({"start_step": 1, "num_steps": 1})", "has no kind"},
      {R"({"kind": "python", "start_step": 1, "num_steps": 1, "timer": "wall"})", "unknown timer 'wall'"},
      {R"({"kind": "python", "start_step": 1, "num_steps": 1, "profiler": "perf"})", "unknown Python profiler 'perf'"},
      {R"({"kind": "operators", "start_step": 1, "num_steps": 1, "profiler": "cprofile"})", "python windows only"},
      {R"({"kind": "dataloader", "start_step": 1, "num_steps": 1, "timer": "cpu_time"})", "python windows only"},
      {R"({"kind": "python", "start_step": 1, "num_steps": 1, "profiler": "sampling", "timer": "cpu_time"})",
       "cprofile profiler only"},
      {R"({"kind": "python", "start_step": 1, "num_steps": 1, "phase": "WARMUP"})", "unknown phase 'WARMUP'"},
      {R"({"kind": "python", "start_step": 1.5, "num_steps": 1})", "whole number"},
      {R"({"kind": "python", "start_step": "1", "num_steps": 1})", "whole number"},
      {R"({"kind": "python", "start_step": 1, "num_steps": 1, "colour": "red"})", "unknown key 'colour'"},
      {R"({"kind": 3, "start_step": 1, "num_steps": 1})", "kind must be a string"},
      {R"([1])", "must be a table"},
  };
  for (const Case& c : cases) {
    auto window = DetailWindowFromJson(Parse(c.json), "config file 'x.toml': detail window 1");
    ASSERT_FALSE(window.ok()) << c.json;
    const std::string& message = window.status().message();
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.json << " -> " << message;
    EXPECT_EQ(message.rfind("config file 'x.toml': detail window 1: ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

TEST(DetailWindow, ListErrorsNameThePosition) {
  auto windows = DetailWindowsFromJson(
      Parse(R"([{"kind": "python", "start_step": 1, "num_steps": 1}, {"kind": "python", "start_step": 1}])"), "x");
  ASSERT_FALSE(windows.ok());
  EXPECT_NE(windows.status().message().find("x: detail window 2: "), std::string::npos);
  EXPECT_FALSE(DetailWindowsFromJson(Parse(R"({"kind": "python"})"), "x").ok());
  auto empty = DetailWindowsFromJson(Parse("[]"), "x");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(DetailWindow, NormalisedJsonHasAllEightKeysWithNullsForUnused) {
  DetailWindow window;
  window.kind = DetailKind::kPython;
  window.start_step = 9;
  window.num_steps = 3;
  EXPECT_EQ(DetailWindowToJson(window), Parse(R"({"kind": "python", "start_step": 9, "num_steps": 3,
      "start_unix_time": null, "duration_s": null, "phase": "TRAIN", "profiler": "cprofile", "timer": "cycle"})"));
  DetailWindow sampling = window;
  sampling.profiler = PythonProfiler::kSampling;
  EXPECT_TRUE(DetailWindowToJson(sampling)["timer"].is_null());
  DetailWindow time;
  time.kind = DetailKind::kDataloader;
  time.start_unix_time = 1790000000.0;
  time.duration_s = 2.5;
  EXPECT_EQ(DetailWindowToJson(time), Parse(R"({"kind": "dataloader", "start_step": null, "num_steps": null,
      "start_unix_time": 1790000000.0, "duration_s": 2.5, "phase": null, "profiler": null, "timer": null})"));
}

TEST(DetailWindow, NormalisedJsonReadsBackToTheSameWindow) {
  for (const DetailWindow& window : DefaultDetailWindows()) {
    auto back = DetailWindowFromJson(DetailWindowToJson(window), "round trip");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, NormalizeDetailWindow(window));
    EXPECT_EQ(NormalizeDetailWindow(*back), *back);
  }
}

}  // namespace
}  // namespace stepscope::launcher
