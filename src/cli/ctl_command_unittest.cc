#include "cli/ctl_command.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/file_system.h"

namespace stepscope::cli {
namespace {

CtlInvocation Ctl(std::string run, std::string interval, std::string detailed = "", std::string python = "",
                  std::string dataloader = "") {
  CtlInvocation invocation;
  invocation.run = std::move(run);
  invocation.interval = std::move(interval);
  invocation.detailed_steps = std::move(detailed);
  invocation.python_steps = std::move(python);
  invocation.dataloader_steps = std::move(dataloader);
  return invocation;
}

class CtlCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/ctl-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    ASSERT_TRUE(CreateDirectories(root_).ok());
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // A node directory whose manifest says `status`; the launcher is this test process.
  std::string MakeNode(const std::string& job, const std::string& node, const std::string& status) {
    const std::string dir = root_ + "/" + job + "/" + node;
    EXPECT_TRUE(CreateDirectories(dir).ok());
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    nlohmann::json manifest = {{"status", status}, {"hosts", {host}}, {"pids", {{"launcher", getpid()}}}};
    if (status == "exited") manifest["ended"] = "exited with code 0";
    std::ofstream(dir + "/manifest.json") << manifest.dump();
    return dir;
  }

  static nlohmann::json ReadJson(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in, nullptr, false);
  }

  std::string root_;
};

TEST_F(CtlCommandTest, BuildsARequestFromEveryFlag) {
  CtlInvocation invocation;
  invocation.interval = "100ms";
  invocation.detailed_steps = "200:3";
  invocation.python_steps = "300:2";
  invocation.dataloader_steps = "250:1";
  auto request = BuildControlRequest(invocation);
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->interval_ns, 100'000'000);
  ASSERT_EQ(request->detail.size(), 3u);
  EXPECT_EQ(DescribeDetailWindow(request->detail[0]), "operators steps 200-202 (TRAIN)");
  EXPECT_EQ(DescribeDetailWindow(request->detail[1]), "python steps 300-301 (TRAIN, cprofile, timer cycle)");
  EXPECT_EQ(DescribeDetailWindow(request->detail[2]), "dataloader step 250 (TRAIN)");
}

TEST_F(CtlCommandTest, RejectsBadValuesAndEmptyRequests) {
  struct Case {
    CtlInvocation invocation;
    const char* expected;
  } cases[] = {
      {Ctl("r", "5ms"), "--interval: interval 5ms is out of range"},
      {Ctl("r", "fast"), "--interval: 'fast' is not a duration"},
      {Ctl("r", "", "200"), "--detailed-steps: '200' is not START:COUNT"},
      {Ctl("r", "", "", "-3:2"), "--python-steps: "},
      {Ctl("r", "", "", "", "1:0"), "--dataloader-steps: num_steps must be at least 1"},
      {Ctl("r", ""), "nothing to change"},
  };
  for (const Case& c : cases) {
    auto request = BuildControlRequest(c.invocation);
    ASSERT_FALSE(request.ok()) << c.expected;
    EXPECT_NE(request.status().message().find(c.expected), std::string::npos) << request.status().message();
    EXPECT_EQ(request.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(CtlCommandTest, FindsTheNodesOfAJobOrOneNode) {
  const std::string a = MakeNode("job", "algo-1", "running");
  const std::string b = MakeNode("job", "algo-2", "running");
  ASSERT_TRUE(CreateDirectories(root_ + "/job/not-a-node").ok());
  auto all = FindControlTargets(root_ + "/job", "");
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(*all, (std::vector<std::string>{a, b}));
  auto one = FindControlTargets(root_ + "/job", "algo-2");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, std::vector<std::string>{b});
  auto direct = FindControlTargets(a, "");
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(*direct, std::vector<std::string>{a});

  auto missing_node = FindControlTargets(root_ + "/job", "algo-9");
  ASSERT_FALSE(missing_node.ok());
  EXPECT_NE(missing_node.status().message().find("its nodes: algo-1, algo-2"), std::string::npos);
  auto wrong_node = FindControlTargets(a, "algo-2");
  ASSERT_FALSE(wrong_node.ok());
  auto no_run = FindControlTargets(root_ + "/nope", "");
  ASSERT_FALSE(no_run.ok());
  EXPECT_NE(no_run.status().message().find("does not exist"), std::string::npos);
  auto not_a_run = FindControlTargets(root_ + "/job/not-a-node", "");
  ASSERT_FALSE(not_a_run.ok());
  EXPECT_NE(not_a_run.status().message().find("is not a run directory"), std::string::npos);
}

TEST_F(CtlCommandTest, SaysWhyARunIsNotRunning) {
  EXPECT_EQ(WhyNotRunning(MakeNode("job", "live", "running")), "");
  EXPECT_EQ(WhyNotRunning(MakeNode("job", "starting", "starting")), "");
  EXPECT_NE(WhyNotRunning(MakeNode("job", "done", "exited")).find("already ended (exited with code 0)"), std::string::npos);
  EXPECT_NE(WhyNotRunning(root_ + "/job/absent").find("cannot be read"), std::string::npos);

  // A launcher that died without rewriting its manifest: a pid that no longer exists.
  const std::string dir = MakeNode("job", "orphan", "running");
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  waitpid(child, &status, 0);
  nlohmann::json manifest = ReadJson(dir + "/manifest.json");
  manifest["pids"]["launcher"] = child;
  std::ofstream(dir + "/manifest.json") << manifest.dump();
  EXPECT_NE(WhyNotRunning(dir).find("is gone"), std::string::npos);
}

TEST_F(CtlCommandTest, CommandExitCodes) {
  const std::string live = MakeNode("job", "live", "running");
  MakeNode("ended", "n", "exited");
  EXPECT_EQ(CtlCommand(Ctl(root_ + "/job", "1s")), 0);
  EXPECT_EQ(launcher::HighestControlSequence(live + "/control"), 1);
  EXPECT_EQ(CtlCommand(Ctl(root_ + "/ended", "1s")), 1);
  EXPECT_EQ(launcher::HighestControlSequence(root_ + "/ended/n/control"), 0);
  EXPECT_EQ(CtlCommand(Ctl(root_ + "/nope", "1s")), 1);
  EXPECT_EQ(CtlCommand(Ctl(root_ + "/job", "1ms")), 2);
  EXPECT_EQ(CtlCommand(Ctl(root_ + "/job", "")), 2);
}

}  // namespace
}  // namespace stepscope::cli
