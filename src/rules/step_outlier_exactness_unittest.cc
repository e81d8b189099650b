// StepOutlier keeps its statistics incrementally (step_outlier_rule.cc "Cost"); these tests hold
// it to the direct computation the reference does in every window: numpy's mean and two-pass
// population σ over all steps so far, and the steps strictly above mean + stddev·σ.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/model.h"
#include "analysis/numerics.h"
#include "rules/builtin_rules.h"

namespace stepscope::rules {
namespace {

using analysis::FrameworkEvent;
using analysis::Model;
using analysis::ModelBuilder;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kScan = 60 * kSecond;
constexpr int64_t kT0 = 1'600'000'000 * kSecond;

Model StepsModel(const std::vector<int64_t>& durations_ns, int64_t first_number) {
  ModelBuilder builder(analysis::ModelSource::kSageMaker);
  analysis::NodeFacts facts;
  facts.name = "algo-1";
  const uint32_t node = builder.AddNode(facts);
  int64_t t = kT0;
  for (size_t i = 0; i < durations_ns.size(); ++i) {
    FrameworkEvent event;
    event.node = node;
    event.phase = builder.Intern("Step:ModeKeys.TRAIN");
    event.name = event.phase;
    event.start_ns = t;
    event.end_ns = t + durations_ns[i];
    event.step = first_number + static_cast<int64_t>(i);
    builder.AddEvent(event, {});
    t += durations_ns[i];
  }
  return std::move(builder).Finish();
}

struct Expected {
  int64_t violations = 0;
  int64_t triggered = 0;
  size_t last_outliers = 0;
  std::vector<int64_t> last_step_numbers;
};

// The reference's per-window computation, done directly.
Expected Oracle(const Model& model, const std::vector<int64_t>& durations_ns, double stddev_factor,
                int64_t n_outliers, int64_t first_number) {
  Expected expected;
  std::vector<double> seen;
  size_t next = 0;
  for (int64_t start = model.first_ns(); start <= model.last_ns(); start += kScan) {
    const auto [begin, end] = model.EventsStartingIn(start, start + kScan);
    for (size_t i = begin; i < end; ++i) seen.push_back(static_cast<double>(durations_ns[next++]) / 1e9);
    if (seen.size() <= 100) continue;
    const double threshold = analysis::Mean(seen) + analysis::StdDev(seen) * stddev_factor;
    std::vector<int64_t> numbers;
    for (size_t j = 0; j < seen.size(); ++j) {
      if (seen[j] > threshold) numbers.push_back(first_number + static_cast<int64_t>(j));
    }
    if (static_cast<int64_t>(numbers.size()) > n_outliers) {
      expected.violations += static_cast<int64_t>(numbers.size());
      expected.triggered += 1;
    }
    expected.last_outliers = numbers.size();
    expected.last_step_numbers = numbers;
  }
  return expected;
}

RuleReport Drive(Rule& rule, const Model& model) {
  size_t index = 0;
  for (int64_t start = model.first_ns(); start <= model.last_ns(); start += kScan) {
    Window window;
    window.model = &model;
    window.index = index++;
    window.start_ns = start;
    window.end_ns = start + kScan;
    window.events = model.EventsStartingIn(start, start + kScan);
    rule.Evaluate(window);
  }
  return rule.Report();
}

void ExpectMatchesOracle(const std::vector<int64_t>& durations_ns, const std::string& stddev, double factor,
                         int64_t first_number = 0) {
  const Model model = StepsModel(durations_ns, first_number);
  std::unique_ptr<Rule> rule = MakeStepOutlierRule();
  ASSERT_TRUE(rule->parameters().Set("StepOutlier", "stddev", stddev).ok());
  const RuleReport report = Drive(*rule, model);
  const Expected expected = Oracle(model, durations_ns, factor, 10, first_number);
  EXPECT_EQ(report.violations, expected.violations);
  EXPECT_EQ(report.triggered, expected.triggered);
  // One phase: the reference's shape, step_details[node] (RULES.md §5).
  const nlohmann::json& details = report.details["step_details"]["algo-1"];
  ASSERT_TRUE(details.is_object()) << report.details.dump();
  EXPECT_EQ(details["number_of_outliers"].get<size_t>(), expected.last_outliers);
  EXPECT_EQ(details["step_numbers"].get<std::vector<int64_t>>(), expected.last_step_numbers);
}

// `count` pseudo-random durations of 240-260 ms from `seed`, about one in `slow_every` of them
// `slow_extra_ns` longer.
std::vector<int64_t> RandomDurations(uint64_t seed, int count, uint64_t slow_every, int64_t slow_extra_ns) {
  std::vector<int64_t> durations_ns;
  uint64_t state = seed;
  for (int i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t jitter_ns = static_cast<int64_t>((state >> 33) % 20'000'000);
    const bool slow = (state >> 20) % slow_every == 0;
    durations_ns.push_back(240'000'000 + jitter_ns + (slow ? slow_extra_ns : 0));
  }
  return durations_ns;
}

// Pseudo-random durations around 250 ms with rare slow steps, over enough windows that the
// running statistics and the sorted runs are merged many times.
TEST(StepOutlierExactness, RandomDurationsMatchTheDirectComputation) {
  const std::vector<int64_t> durations_ns = RandomDurations(42, 6000, 300, 400'000'000);
  ExpectMatchesOracle(durations_ns, "3", 3.0);
  ExpectMatchesOracle(durations_ns, "1.5", 1.5);
}

// Equal durations: the incremental σ is exactly 0 while numpy's two-pass σ is not (the mean is
// rounded), so every step lies at the approximate threshold and the rule must decide with the
// exact one. A few long steps on top make it trigger.
TEST(StepOutlierExactness, TiesAtTheThresholdUseTheExactStatistics) {
  std::vector<int64_t> durations_ns(3000, 100'000'001);
  for (size_t i = 500; i < 3000; i += 150) durations_ns[i] = 900'000'007;
  ExpectMatchesOracle(durations_ns, "3", 3.0);
  const std::vector<int64_t> all_equal(2000, 250'000'007);
  ExpectMatchesOracle(all_equal, "3", 3.0);
}

// The rule packs a step into 16 bytes (a 32-bit duration in ns and a 32-bit number); steps over
// 4.29 s and numbers beyond int32 are kept whole beside. Both must count, list and number the
// outliers exactly as the packed ones.
TEST(StepOutlierExactness, StepsTooLongOrNumberedTooHighToPackMatchTheDirectComputation) {
  const std::vector<int64_t> durations_ns = RandomDurations(7, 3000, 150, 6 * kSecond);  // slow: > 4.29 s
  ExpectMatchesOracle(durations_ns, "3", 3.0);
  ExpectMatchesOracle(durations_ns, "3", 3.0, /*first_number=*/int64_t{5'000'000'000});
  ExpectMatchesOracle(durations_ns, "3", 3.0, /*first_number=*/int64_t{2'147'483'000});  // crosses int32's max
}

}  // namespace
}  // namespace stepscope::rules
