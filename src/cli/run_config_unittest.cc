#include "cli/run_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace stepscope::cli {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(RunConfig, DefaultsMatchTheSpec) {
  RunConfig config;
  EXPECT_EQ(config.out, "stepscope-runs");
  EXPECT_EQ(config.interval_ns, 500'000'000);
}

TEST(RunConfig, PrecedenceIsFileThenEnvironmentThenFlags) {
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFile(config, WriteTemp("c.toml", "interval = \"1s\"\njob = \"from-file\"\nnode = \"algo-9\"\n")).ok());
  char env_interval[] = "STEPSCOPE_INTERVAL=200ms";
  char env_job[] = "STEPSCOPE_JOB=from-env";
  char other[] = "PATH=/bin";
  char* environ[] = {other, env_interval, env_job, nullptr};
  ASSERT_TRUE(ApplyRunConfigEnvironment(config, environ).ok());
  ASSERT_TRUE(SetRunConfigValue(config, "interval", "100ms", ConfigSource::kFlag, "--interval").ok());
  EXPECT_EQ(config.interval_ns, 100'000'000);
  EXPECT_EQ(config.job, "from-env");
  EXPECT_EQ(config.node, "algo-9");
  EXPECT_EQ(config.sources["interval"], ConfigSource::kFlag);
  EXPECT_EQ(config.sources["job"], ConfigSource::kEnvironment);
  EXPECT_EQ(config.sources["node"], ConfigSource::kFile);
}

TEST(RunConfig, ReadsJsonFiles) {
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFile(config, WriteTemp("c.json", R"({"interval": "5s", "out": "/tmp/x"})")).ok());
  EXPECT_EQ(config.interval_ns, 5'000'000'000);
  EXPECT_EQ(config.out, "/tmp/x");
}

TEST(RunConfig, RejectsBadInputWithOneLineNamingTheProblem) {
  struct Case {
    std::string file, text, expected;
  } cases[] = {
      {"a.toml", "colour = \"red\"\n", "unknown setting 'colour'"},
      {"b.toml", "interval = \"5ms\"\n", "out of range; use 10ms to 60s"},
      {"c.toml", "interval = \"2 minutes\"\n", "not a duration"},
      {"d.toml", "interval = [1]\n", "must be a string or number"},
      {"e.toml", "interval = \n", "line 1"},
      {"f.json", "[1,2]", "not a JSON object"},
      {"g.yaml", "interval: 1s", "must end in .toml or .json"},
      {"h.toml", "node = \"a/b\"\n", "cannot be a directory name"},
  };
  for (const Case& c : cases) {
    RunConfig config;
    Status status = ApplyRunConfigFile(config, WriteTemp(c.file, c.text));
    ASSERT_FALSE(status.ok()) << c.file;
    EXPECT_NE(status.message().find(c.expected), std::string::npos) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos);
  }
  RunConfig config;
  EXPECT_FALSE(ApplyRunConfigFile(config, "/nonexistent/stepscope.toml").ok());
}

TEST(RunConfig, AcceptsTheIntervalBounds) {
  RunConfig config;
  EXPECT_TRUE(SetRunConfigValue(config, "interval", "10ms", ConfigSource::kFlag, "--interval").ok());
  EXPECT_TRUE(SetRunConfigValue(config, "interval", "60s", ConfigSource::kFlag, "--interval").ok());
  EXPECT_FALSE(SetRunConfigValue(config, "interval", "61s", ConfigSource::kFlag, "--interval").ok());
  EXPECT_FALSE(SetRunConfigValue(config, "interval", "9ms", ConfigSource::kFlag, "--interval").ok());
}

}  // namespace
}  // namespace stepscope::cli
