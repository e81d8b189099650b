#include "rules/configured_profiler_report.h"

#include <gtest/gtest.h>

namespace stepscope::rules {
namespace {

TEST(ConfiguredProfilerReport, RejectsUnknownRulesAndBadOverrides) {
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

TEST(ConfiguredProfilerReport, OnlyTakesACommaSeparatedListOfRules) {
  auto two = MakeConfiguredProfilerReport(" CPUBottleneck, StepOutlier ,", nlohmann::json(), {});
  ASSERT_TRUE(two.ok()) << two.status().message();
  ASSERT_EQ((*two)->rules().size(), 2u);
  EXPECT_EQ((*two)->rules()[0]->name(), "CPUBottleneck");
  EXPECT_EQ((*two)->rules()[1]->name(), "StepOutlier");
}

}  // namespace
}  // namespace stepscope::rules
