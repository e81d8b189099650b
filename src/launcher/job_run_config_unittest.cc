#include "launcher/job_run_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "launcher/run_config.h"

namespace stepscope::launcher {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + "-job-" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(JobRunConfig, WithoutAConfigItIsTheLaunchersDefaultsAndEnvironment) {
  char python_steps[] = "STEPSCOPE_PYTHON_STEPS=20:2";
  char interval[] = "STEPSCOPE_INTERVAL=200ms";
  char* environ[] = {python_steps, interval, nullptr};
  auto job = ResolveJobRunConfig({"", environ, {}});
  ASSERT_TRUE(job.ok()) << job.status().message();
  auto launcher = ResolveRunConfig({"", environ, {}});
  ASSERT_TRUE(launcher.ok());
  EXPECT_EQ(*job, RunConfigToJson(*launcher, "", ""));
  EXPECT_EQ((*job)["sources"]["detail"], "environment");
}

TEST(JobRunConfig, TheLaunchersFileIsReadAsWrittenWithoutTheEnvironment) {
  auto launcher = ResolveRunConfig({"", nullptr, {{"python_profiler", "sampling"}, {"detailed_steps", "none"},
                                                  {"interval", "2s"}, {"torch", "false"}}});
  ASSERT_TRUE(launcher.ok());
  const nlohmann::json written = RunConfigToJson(*launcher, "job-1", "algo-1");
  const std::string path = WriteTemp("config.json", written.dump(2));
  char python_steps[] = "STEPSCOPE_PYTHON_STEPS=77:7";  // folded in by the launcher already
  char* environ[] = {python_steps, nullptr};
  auto job = ResolveJobRunConfig({path, environ, {}});
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(*job, written);
}

TEST(JobRunConfig, AConfigFileIsLayeredBelowTheEnvironmentAsForTheLauncher) {
  const std::string path = WriteTemp("stepscope.toml", "interval = \"1s\"\n[[detail]]\nkind = \"python\"\n"
                                                       "start_step = 4\nnum_steps = 1\n");
  char dataloader[] = "STEPSCOPE_DATALOADER_STEPS=6:1";
  char* environ[] = {dataloader, nullptr};
  auto job = ResolveJobRunConfig({path, environ, {}});
  ASSERT_TRUE(job.ok()) << job.status().message();
  auto launcher = ResolveRunConfig({path, environ, {}});
  ASSERT_TRUE(launcher.ok());
  EXPECT_EQ(*job, RunConfigToJson(*launcher, "", ""));
}

TEST(JobRunConfig, KeywordArgumentsComeLastInKeyOrder) {
  // python_steps replaces the default python window; the profiler (given first) applies after it.
  auto job = ResolveJobRunConfig({"", nullptr, {{"python_profiler", "sampling"}, {"python_steps", "30:1"},
                                                {"torch", "false"}}});
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ((*job)["torch"], false);
  EXPECT_EQ((*job)["detail"][2]["start_step"], 30);
  EXPECT_EQ((*job)["detail"][2]["profiler"], "sampling");
  EXPECT_TRUE((*job)["detail"][2]["timer"].is_null());
  EXPECT_EQ((*job)["sources"]["detail"], "keyword argument");
  EXPECT_EQ((*job)["sources"]["torch"], "keyword argument");
}

TEST(JobRunConfig, RefusalsAreOneLineNamingTheSettingAndWhatToUse) {
  struct Case {
    JobRunConfigRequest request;
    std::string expected;
  } cases[] = {
      {{"", nullptr, {{"interval", "1s"}}},
       "keyword argument 'interval': unknown setting; settings a Python process may change: torch, detail, "
       "detailed_steps, python_steps, dataloader_steps, gpu_steps, python_profiler"},
      {{"", nullptr, {{"python_steps", "9-11"}}},
       "keyword argument python_steps: '9-11' is not START:COUNT; use e.g. 9:3 for steps 9, 10 and 11"},
      {{"/nonexistent/config.json", nullptr, {}}, "STEPSCOPE_CONFIG '/nonexistent/config.json' cannot be read ("},
      {{WriteTemp("broken.json", R"({"schema_version": 1, "detail": "x"})"), nullptr, {}},
       ": detail must be a list of windows"},
      {{WriteTemp("newer.json", R"({"schema_version": 99, "detail": []})"), nullptr, {}},
       "written by a newer stepscope (schema 99); run the job with the stepscope that launched it"},
  };
  for (const Case& c : cases) {
    auto job = ResolveJobRunConfig(c.request);
    ASSERT_FALSE(job.ok()) << c.expected;
    EXPECT_NE(job.status().message().find(c.expected), std::string::npos) << job.status().message();
    EXPECT_EQ(job.status().message().find('\n'), std::string::npos) << job.status().message();
  }
}

}  // namespace
}  // namespace stepscope::launcher
