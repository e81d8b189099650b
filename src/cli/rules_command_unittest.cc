#include "cli/rules_command.h"

#include <unistd.h>

#include <fstream>

#include <sstream>

#include <gtest/gtest.h>

#include "cli/run_config.h"

namespace stepscope::cli {
namespace {

class FixedRule : public rules::Rule {
 public:
  FixedRule(std::string name, int64_t triggered, std::string finding, bool reporting = false)
      : name_(std::move(name)), triggered_(triggered), finding_(std::move(finding)), reporting_(reporting) {}
  std::string_view name() const override { return name_; }
  bool Evaluate(const rules::Window&) override { return triggered_ > 0; }
  rules::RuleReport Report() const override {
    rules::RuleReport report;
    report.rule = name_;
    report.triggered = triggered_;
    report.violations = 12345;
    report.datapoints = 678;
    report.reporting = reporting_;
    if (!finding_.empty()) {
      rules::Finding finding;
      finding.title = finding_;
      report.findings.push_back(finding);
    }
    return report;
  }

 private:
  std::string name_;
  int64_t triggered_;
  std::string finding_;
  bool reporting_;
};

TEST(RulesCommand, TableFitsOneHundredColumns) {
  std::vector<std::unique_ptr<rules::Rule>> list;
  list.push_back(std::make_unique<FixedRule>("CPUBottleneck", 3,
                                             std::string("CPU bottleneck on algo-1: GPU under 10 % while CPU above 90 % ") +
                                                 "in 42 % of the snapshots, mostly in the data loader"));
  list.push_back(std::make_unique<FixedRule>("OverallSystemUsage", 0, "", /*reporting=*/true));
  list.push_back(std::make_unique<FixedRule>("StepOutlier", 0, ""));
  rules::ProfilerReport report(std::move(list));
  const std::string table = FormatRulesTable(report, "/runs/job/rules");
  std::istringstream lines(table);
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 100u) << line;
    all.push_back(line);
  }
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0], "rule                     triggered violations datapoints finding");
  EXPECT_EQ(all[1],
            "CPUBottleneck                    3      12345        678 CPU bottleneck on algo-1: GPU under 10 %...");
  EXPECT_EQ(all[1].size(), 100u);
  EXPECT_EQ(all[2], "OverallSystemUsage               0      12345        678 (reporting rule)");
  EXPECT_EQ(all[3], "StepOutlier                      0      12345        678 -");
  // CPUBottleneck reports 3 triggers with a finding: the status agrees with what the table shows.
  EXPECT_EQ(all[4], "status: IssuesFound; 0 windows of 60 s");
  EXPECT_EQ(all[5], "outputs: /runs/job/rules");
}

TEST(RulesCommand, DefaultOutputDirIsBesideTheRun) {
  EXPECT_EQ(DefaultRulesOutputDir("/tmp/"), "/tmp/rules");
  EXPECT_EQ(DefaultRulesOutputDir("/nonexistent/dir/model.stepscope"), "/nonexistent/dir/rules");
  EXPECT_EQ(DefaultRulesOutputDir("model.stepscope"), "rules");
}

TEST(RulesCommand, ConfiguredReportRejectsUnknownRulesAndBadOverrides) {
  auto unknown = MakeConfiguredProfilerReport("NoSuchRule", nlohmann::json(), {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message().rfind("unknown rule 'NoSuchRule'; known rules: ", 0), 0u)
      << unknown.status().message();
  auto bad = MakeConfiguredProfilerReport("", nlohmann::json(), {"NoSuchRule.threshold=3"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("unknown rule 'NoSuchRule' in NoSuchRule.threshold; known rules: ", 0), 0u);
  auto interval = MakeConfiguredProfilerReport("", nlohmann::json{{"scan_interval_us", 5000000}}, {});
  ASSERT_TRUE(interval.ok());
  EXPECT_EQ((*interval)->scan_interval_us(), 5000000);
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

  auto report = MakeConfiguredProfilerReport("CPUBottleneck", config.rules, config.rule_overrides);
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
}  // namespace stepscope::cli
