#include "cli/rules_command.h"

#include <gtest/gtest.h>

#include <sstream>

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

}  // namespace
}  // namespace stepscope::cli
