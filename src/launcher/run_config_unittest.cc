#include "launcher/run_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "rules/configured_profiler_report.h"

namespace stepscope::launcher {
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
  EXPECT_TRUE(config.torch);
  std::vector<DetailWindow> defaults = DefaultDetailWindows();
  for (DetailWindow& window : defaults) window = NormalizeDetailWindow(window);
  EXPECT_EQ(ResolvedDetailWindows(config), defaults);
  for (const ConfiguredWindow& window : config.detail) EXPECT_EQ(window.from, ConfigSource::kDefault);
}

TEST(RunConfig, PrecedenceIsFileThenEnvironmentThenFlags) {
  char env_interval[] = "STEPSCOPE_INTERVAL=200ms";
  char env_job[] = "STEPSCOPE_JOB=from-env";
  char other[] = "PATH=/bin";
  char* environ[] = {other, env_interval, env_job, nullptr};
  auto config = ResolveRunConfig({WriteTemp("r.toml", "interval = \"1s\"\njob = \"from-file\"\nnode = \"algo-9\"\n"),
                                  environ, {{"interval", "100ms"}}});
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->interval_ns, 100'000'000);
  EXPECT_EQ(config->job, "from-env");
  EXPECT_EQ(config->node, "algo-9");
  EXPECT_EQ(config->sources["interval"], ConfigSource::kFlag);
  EXPECT_EQ(config->sources["job"], ConfigSource::kEnvironment);
  EXPECT_EQ(config->sources["node"], ConfigSource::kFile);

  char bad_interval[] = "STEPSCOPE_INTERVAL=5ms";
  char* bad_environ[] = {bad_interval, nullptr};
  auto refused = ResolveRunConfig({"", bad_environ, {}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().rfind("STEPSCOPE_INTERVAL: ", 0), 0u) << refused.status().message();
  EXPECT_EQ(refused.status().message().find('\n'), std::string::npos);
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
      {"i.toml", "torch = \"maybe\"\n", "torch must be true or false"},
      {"j.toml", "python_steps = \"9-11\"\n", "is not START:COUNT"},
      {"k.toml", "python_profiler = \"perf\"\n", "unknown Python profiler 'perf'"},
      {"l.toml", "[[detail]]\nkind = \"python\"\nstart_step = 1\nnum_steps = 1\nstart_unix_time = 5.0\nduration_s = 1\n",
       "detail window 1: a window is steps or time, not both"},
      {"m.toml", "[[detail]]\nkind = \"operators\"\nstart_step = 1\nnum_steps = 1\ntimer = \"cpu_time\"\n",
       "python windows only"},
      {"n.toml", "[detail]\nkind = \"python\"\n", "detail must be a list of windows"},
      {"o.json", R"({"detail": [{"kind": "python", "start_step": -2, "num_steps": 1}]})", "is negative"},
      {"p.toml", "detailed_steps = \"5:0\"\n", "at least 1"},
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

TEST(RunConfig, MalformedJsonSaysWhereWithLineAndColumn) {
  RunConfig config;
  const std::string path = WriteTemp("malformed.json", "{\n  \"interval\": \"1s\",\n  \"torch\": tru\n}\n");
  Status status = ApplyRunConfigFile(config, path);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "config file '" + path + "' is not valid JSON at line 3, column 14: syntax error while parsing value - "
            "invalid literal; last read: '\"torch\": tru<U+000A>'; fix it there (docs/user-guide.md lists the "
            "settings)");
  // A trailing comma, the usual slip when a line is deleted: the position of the closing brace.
  status = ApplyRunConfigFile(config, WriteTemp("comma.json", "{\"interval\": \"1s\",\n}"));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("not valid JSON at line 2, column 1: "), std::string::npos) << status.message();
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
  status = ApplyRunConfigFile(config, WriteTemp("empty.json", ""));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("line 1, column 1"), std::string::npos) << status.message();
}

TEST(RunConfig, ErrorsQuotingTheFileStayOneLine) {
  // Found by run_config_fuzzer: toml++ quotes the character it saw, here a newline; quoted TOML
  // keys can hold control characters too, and unknown keys are echoed.
  struct Case {
    std::string file, text, expected;
  } cases[] = {
      {"newline.toml", "q=i\n", "expected 'inf', saw 'i\\n'"},
      {"key.toml", "\"a\\nb\\u0001\" = 1\n", "unknown setting 'a\\nb\\x01'"},
  };
  for (const Case& c : cases) {
    RunConfig config;
    Status status = ApplyRunConfigFile(config, WriteTemp(c.file, c.text));
    ASSERT_FALSE(status.ok()) << c.file;
    EXPECT_NE(status.message().find(c.expected), std::string::npos) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
  }
}

TEST(RunConfig, AcceptsTheIntervalBounds) {
  RunConfig config;
  EXPECT_TRUE(SetRunConfigValue(config, "interval", "10ms", ConfigSource::kFlag, "--interval").ok());
  EXPECT_TRUE(SetRunConfigValue(config, "interval", "60s", ConfigSource::kFlag, "--interval").ok());
  EXPECT_FALSE(SetRunConfigValue(config, "interval", "61s", ConfigSource::kFlag, "--interval").ok());
  EXPECT_FALSE(SetRunConfigValue(config, "interval", "9ms", ConfigSource::kFlag, "--interval").ok());
}

TEST(RunConfig, TomlDetailTablesReplaceTheDefaults) {
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFile(config, WriteTemp("d.toml", R"(
torch = false
[[detail]]
kind = "python"
start_step = 20
num_steps = 2
profiler = "sampling"
[[detail]]
kind = "operators"
start_unix_time = 1790000000.0
duration_s = 10
phase = "EVAL"
)")).ok());
  EXPECT_FALSE(config.torch);
  std::vector<DetailWindow> windows = ResolvedDetailWindows(config);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(DescribeDetailWindow(windows[0]), "python steps 20-21 (TRAIN, sampling)");
  EXPECT_EQ(DescribeDetailWindow(windows[1]), "operators from Unix time 1790000000 for 10 s (EVAL)");
  EXPECT_EQ(config.sources["detail"], ConfigSource::kFile);
  EXPECT_EQ(config.sources["torch"], ConfigSource::kFile);
  EXPECT_EQ(config.detail[0].from, ConfigSource::kFile);
}

TEST(RunConfig, JsonFilesTakeDetailListsAndBooleans) {
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFile(config, WriteTemp("d.json", R"({"torch": true, "detail": [
      {"kind": "dataloader", "start_step": 2, "num_steps": 4}]})")).ok());
  ASSERT_EQ(config.detail.size(), 1u);
  EXPECT_EQ(DescribeDetailWindow(config.detail[0].window), "dataloader steps 2-5 (TRAIN)");
  ASSERT_TRUE(ApplyRunConfigFile(config, WriteTemp("none.json", R"({"detail": "none"})")).ok());
  EXPECT_TRUE(config.detail.empty());
}

TEST(RunConfig, EachLayerReplacesOnlyTheKindsItNames) {
  // File: two python windows and one operators window. Environment: the data-loader window.
  // Flags: the python window. Operators keeps the file's, data loader the environment's.
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFile(config, WriteTemp("layers.json", R"({"detail": [
      {"kind": "python", "start_step": 1, "num_steps": 1},
      {"kind": "operators", "start_step": 2, "num_steps": 1},
      {"kind": "python", "start_step": 3, "num_steps": 1}]})")).ok());
  char env_loader[] = "STEPSCOPE_DATALOADER_STEPS=30:2";
  char* environ[] = {env_loader, nullptr};
  ASSERT_TRUE(ApplyRunConfigEnvironment(config, environ).ok());
  ASSERT_TRUE(ApplyRunConfigFlags(config, {{"python_steps", "40:1"}}).ok());
  ASSERT_EQ(config.detail.size(), 3u);
  EXPECT_EQ(DescribeDetailWindow(config.detail[0].window), "python step 40 (TRAIN, cprofile, timer cycle)");
  EXPECT_EQ(config.detail[0].from, ConfigSource::kFlag);
  EXPECT_EQ(DescribeDetailWindow(config.detail[1].window), "operators step 2 (TRAIN)");
  EXPECT_EQ(config.detail[1].from, ConfigSource::kFile);
  EXPECT_EQ(DescribeDetailWindow(config.detail[2].window), "dataloader steps 30-31 (TRAIN)");
  EXPECT_EQ(config.detail[2].from, ConfigSource::kEnvironment);
  EXPECT_EQ(config.sources["detail"], ConfigSource::kFlag);
}

TEST(RunConfig, NoDetailClearsAndStepFlagsStillAddWhateverTheirOrder) {
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFlags(config, {{"python_steps", "3:1"}, {"detail", "none"}}).ok());
  ASSERT_EQ(config.detail.size(), 1u);
  EXPECT_EQ(config.detail[0].window.kind, DetailKind::kPython);
  RunConfig none;
  ASSERT_TRUE(ApplyRunConfigFlags(none, {{"detail", "none"}}).ok());
  EXPECT_TRUE(ResolvedDetailWindows(none).empty());
  RunConfig one_kind_off;
  ASSERT_TRUE(ApplyRunConfigFlags(one_kind_off, {{"dataloader_steps", "none"}}).ok());
  EXPECT_EQ(one_kind_off.detail.size(), 2u);
}

TEST(RunConfig, GpuStepsAddAGpuWindowBesideTheDefaultsAndTheTracingModeIsChecked) {
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFlags(config, {{"gpu_steps", "30:2"}, {"gpu_tracing", "everything"}}).ok());
  ASSERT_EQ(config.detail.size(), 4u);
  EXPECT_EQ(config.detail[3].window.kind, DetailKind::kGpu);
  EXPECT_EQ(config.detail[3].window.start_step, 30);
  EXPECT_EQ(config.gpu_tracing, "everything");
  RunConfig dashed;
  ASSERT_TRUE(ApplyRunConfigFlags(dashed, {{"gpu_tracing", "whole-job"}}).ok());
  EXPECT_EQ(dashed.gpu_tracing, "whole_job");
  RunConfig bad;
  Status refused = ApplyRunConfigFlags(bad, {{"gpu_tracing", "kernels"}});
  EXPECT_NE(refused.message().find("--gpu-tracing: gpu_tracing must be whole-job, everything or off"),
            std::string::npos)
      << refused.message();
}

TEST(RunConfig, PythonProfilerAppliesToEveryPythonWindowFromAnyLayer) {
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFile(config, WriteTemp("prof.toml", "python_profiler = \"sampling\"\n")).ok());
  char env_python[] = "STEPSCOPE_PYTHON_STEPS=50:2";
  char* environ[] = {env_python, nullptr};
  ASSERT_TRUE(ApplyRunConfigEnvironment(config, environ).ok());
  std::vector<DetailWindow> windows = ResolvedDetailWindows(config);
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(DescribeDetailWindow(windows[2]), "python steps 50-51 (TRAIN, sampling)");
  EXPECT_FALSE(windows[2].timer.has_value());
  ASSERT_TRUE(ApplyRunConfigFlags(config, {{"python_profiler", "cprofile"}}).ok());
  EXPECT_EQ(ResolvedDetailWindows(config)[2].timer, PythonTimer::kCycle);
  EXPECT_EQ(config.sources["python_profiler"], ConfigSource::kFlag);
}

TEST(RunConfig, EnvironmentSetsTorchAndDetail) {
  RunConfig config;
  char env_torch[] = "STEPSCOPE_TORCH=0";
  char env_detail[] = "STEPSCOPE_DETAIL=[{\"kind\": \"operators\", \"start_step\": 8, \"num_steps\": 2}]";
  char* environ[] = {env_torch, env_detail, nullptr};
  ASSERT_TRUE(ApplyRunConfigEnvironment(config, environ).ok());
  EXPECT_FALSE(config.torch);
  ASSERT_EQ(config.detail.size(), 1u);
  EXPECT_EQ(config.detail[0].from, ConfigSource::kEnvironment);
  char bad[] = "STEPSCOPE_DETAIL=[{\"kind\": \"operators\"}";
  char* bad_environ[] = {bad, nullptr};
  Status status = ApplyRunConfigEnvironment(config, bad_environ);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("STEPSCOPE_DETAIL: ", 0), 0u) << status.message();
}

TEST(RunConfig, FlagErrorsNameTheFlag) {
  struct Case {
    const char* key;
    const char* value;
    const char* expected;
  } cases[] = {
      {"python_steps", "-1:2", "--python-steps: "},
      {"detailed_steps", "5", "--detailed-steps: "},
      {"dataloader_steps", "5:0", "--dataloader-steps: "},
      {"python_profiler", "gprof", "--python-profiler: "},
      {"interval", "1ms", "--interval: "},
  };
  for (const Case& c : cases) {
    RunConfig config;
    Status status = ApplyRunConfigFlags(config, {{c.key, c.value}});
    ASSERT_FALSE(status.ok()) << c.key;
    EXPECT_EQ(status.message().rfind(c.expected, 0), 0u) << status.message();
  }
}

TEST(RunConfig, PricesAreReadWhenSetFromAFileOrAFlag) {
  const std::string prices = WriteTemp("prices.json", R"({"instances": [{"name": "ml.g5.2xlarge", "price_per_hour": 1.2}]})");
  auto config = ResolveRunConfig({WriteTemp("p.toml", "prices = \"" + prices + "\"\n"), nullptr, {}});
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->prices, prices);
  EXPECT_EQ(config->sources["prices"], ConfigSource::kFile);
  ASSERT_EQ(config->price_catalog.size(), 1u);
  EXPECT_EQ(config->price_catalog[0].name, "g5.2xlarge");
  EXPECT_EQ(config->price_catalog[0].vcpus, 8) << "a known type's capacities are filled in";

  // A catalogue that cannot be used stops the run while the flags are read, naming both.
  const std::string unknown = WriteTemp("unknown.json", R"({"instances": [{"name": "g5.3xlarge", "price_per_hour": 1}]})");
  for (const std::string& path : {unknown, std::string("/nonexistent/prices.toml")}) {
    auto refused = ResolveRunConfig({"", nullptr, {{"prices", path}}});
    ASSERT_FALSE(refused.ok()) << path;
    const std::string& message = refused.status().message();
    EXPECT_EQ(message.rfind("--prices: price catalogue " + path, 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(RunConfig, ConfigJsonAndManifestEntriesCarryValuesAndSources) {
  RunConfig config;
  ASSERT_TRUE(ApplyRunConfigFlags(config, {{"torch", "false"}, {"python_steps", "12:1"}, {"interval", "200ms"}}).ok());
  nlohmann::json json = RunConfigToJson(config, "job-1", "algo-1");
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["job"], "job-1");
  EXPECT_EQ(json["node"], "algo-1");
  EXPECT_EQ(json["interval"], "200ms");
  EXPECT_EQ(json["interval_ns"], 200'000'000);
  EXPECT_EQ(json["torch"], false);
  EXPECT_TRUE(json["python_profiler"].is_null());
  ASSERT_EQ(json["detail"].size(), 3u);
  EXPECT_EQ(json["detail"][2]["start_step"], 12);
  EXPECT_EQ(json["detail"][2]["timer"], "cycle");
  EXPECT_EQ(json["sources"]["torch"], "flag");
  EXPECT_EQ(json["sources"]["detail"], "flag");
  EXPECT_EQ(json["sources"]["out"], "default");
  nlohmann::json manifest = RunConfigManifestEntries(config);
  EXPECT_EQ(manifest["torch"]["value"], false);
  EXPECT_EQ(manifest["torch"]["from"], "flag");
  EXPECT_EQ(manifest["detail"]["value"], json["detail"]);
  EXPECT_EQ(manifest["detail"]["windows_from"], nlohmann::json({"default", "default", "flag"}));
  EXPECT_EQ(manifest["python_profiler"]["from"], "default");
}

TEST(RunConfigRules, FlagsAndTablesAreValidatedAndMerged) {
  RunConfig config;
  ASSERT_TRUE(SetRunConfigValue(config, "rules", "CPUBottleneck.threshold=40", ConfigSource::kFlag, "--rule").ok());
  ASSERT_TRUE(SetRunConfigValue(config, "rules", "StepOutlier_stddev=4", ConfigSource::kFlag, "--rule").ok());
  EXPECT_EQ(config.rule_overrides, (std::vector<std::string>{"CPUBottleneck.threshold=40", "StepOutlier_stddev=4"}));
  EXPECT_EQ(SetRunConfigValue(config, "rules", "CPUBottleneck.threshold=140", ConfigSource::kFlag, "--rule").message(),
            "--rule: CPUBottleneck.threshold: 140 is not a percentage in [0, 100]");
  EXPECT_EQ(config.rule_overrides.size(), 2u);  // the bad one was not kept
  ASSERT_TRUE(SetRunConfigValue(config, "rules", R"({"CPUBottleneck": {"patience": 5}, "scan_interval_us": 30000000})",
                                ConfigSource::kEnvironment, "STEPSCOPE_RULES")
                  .ok());
  ASSERT_TRUE(SetRunConfigRules(config, nlohmann::json::parse(R"({"CPUBottleneck": {"threshold": 30}})"),
                                ConfigSource::kFlag, "x")
                  .ok());
  EXPECT_EQ(config.rules, nlohmann::json::parse(
                              R"({"CPUBottleneck": {"patience": 5, "threshold": 30}, "scan_interval_us": 30000000})"));
  EXPECT_EQ(SetRunConfigValue(config, "rules", "{nope", ConfigSource::kEnvironment, "STEPSCOPE_RULES").message(),
            "STEPSCOPE_RULES: rules must be RULE.PARAM=VALUE or a JSON object like {\"CPUBottleneck\": {\"threshold\": 40}}");
  EXPECT_EQ(FlagForKey("rules"), "--rule");

  auto report = rules::MakeConfiguredProfilerReport("CPUBottleneck", config.rules, config.rule_overrides);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ((*report)->scan_interval_us(), 30000000);
  ASSERT_EQ((*report)->rules().size(), 1u);
  // The table first, then the flags: threshold 40 from --rule wins over the table's 30.
  EXPECT_EQ((*report)->rules()[0]->parameters().Text("threshold"), "40");
  EXPECT_EQ((*report)->rules()[0]->parameters().Text("patience"), "5");
}

TEST(RunConfigRules, TomlRulesTable) {
  char pattern[] = "/tmp/run_config_rules_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string path = std::string(pattern) + "/stepscope.toml";
  std::ofstream(path) << "[rules]\nscan_interval_us = 10000000\n[rules.CPUBottleneck]\nthreshold = 45\n";
  RunConfig config;
  Status applied = ApplyRunConfigFile(config, path);
  ASSERT_TRUE(applied.ok()) << applied.message();
  EXPECT_EQ(config.rules, nlohmann::json::parse(R"({"CPUBottleneck": {"threshold": 45}, "scan_interval_us": 10000000})"));
  std::ofstream(path) << "[rules.CPUBottleneck]\nthreshold = 450\n";
  EXPECT_EQ(ApplyRunConfigFile(config, path).message(),
            "config file '" + path + "': rules: CPUBottleneck.threshold: 450 is not a percentage in [0, 100]");
  std::remove(path.c_str());
  rmdir(pattern);
}

}  // namespace
}  // namespace stepscope::launcher
