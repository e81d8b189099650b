#include "launcher/control_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/file_system.h"

namespace stepscope::launcher {
namespace {

class ControlFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = ::testing::TempDir() + "/control-file-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(node_);
    ASSERT_TRUE(CreateDirectories(node_).ok());
  }
  void TearDown() override { std::filesystem::remove_all(node_); }

  static nlohmann::json ReadJson(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in, nullptr, false);
  }

  std::string node_;
};

TEST_F(ControlFileTest, WritesNumberedControlFilesAtomically) {
  EXPECT_EQ(HighestControlSequence(node_ + "/control"), 0);
  ControlRequest request;
  request.interval_ns = 100'000'000;
  auto first = WriteControlFile(node_, request, 1'000);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, 1);
  EXPECT_EQ(ReadJson(node_ + "/control/1.json"),
            nlohmann::json({{"sequence", 1}, {"time_ns", 1'000}, {"interval_ns", 100'000'000}}));

  // Stray names do not count; the next sequence follows the highest, gaps included.
  std::ofstream(node_ + "/control/7.json") << "{}";
  std::ofstream(node_ + "/control/.ctl-1-9") << "{}";
  std::ofstream(node_ + "/control/notes.json") << "{}";
  ControlRequest windows;
  auto parsed = ParseStepWindow(DetailKind::kPython, "300:2", "--python-steps");
  ASSERT_TRUE(parsed.ok());
  windows.detail.push_back(*parsed);
  auto next = WriteControlFile(node_, windows, 2'000);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 8);
  nlohmann::json body = ReadJson(node_ + "/control/8.json");
  EXPECT_FALSE(body.contains("interval_ns"));
  ASSERT_EQ(body["detail"].size(), 1u);
  EXPECT_EQ(body["detail"][0]["start_step"], 300);
  EXPECT_EQ(body["detail"][0]["profiler"], "cprofile");
  // Nothing temporary is left behind: 1, 7, 8, notes.json and the stray .ctl-1-9 only.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(node_ + "/control")) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".ctl-1-9", "1.json", "7.json", "8.json", "notes.json"}));
}

TEST_F(ControlFileTest, SequenceNamesAreDigitsDotJsonOnly) {
  EXPECT_EQ(ControlSequenceOfName("12.json"), 12);
  EXPECT_FALSE(ControlSequenceOfName("12.json.tmp.5").has_value());
  EXPECT_FALSE(ControlSequenceOfName(".json").has_value());
  EXPECT_FALSE(ControlSequenceOfName("-1.json").has_value());
  EXPECT_FALSE(ControlSequenceOfName("1a.json").has_value());
}

}  // namespace
}  // namespace stepscope::launcher
