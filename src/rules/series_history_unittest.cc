// Tests of SeriesHistory (series_history.h): the values a rule has taken of one series equal the
// reference's kept list (every window's samples, a window-edge sample twice), read back from the
// model instead of a copy, also when each window comes with a fresh reload of the run.
#include "rules/series_history.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "rules/system_rules_test_util.h"

namespace stepscope::rules {
namespace {

using namespace system_test;  // NOLINT: the shared test helpers

// One GPU sampled every second for 10 s: values 9, 8, ..., 0 (t = 0 and t = 5 s lie on the
// edges of 5 s windows).
Model TenSeconds() {
  Data data;
  for (int i = 0; i < 10; ++i) data.Gpu("algo-1", 0, kT0 + i * kS, 9 - i);
  return data.Finish();
}

// What the reference keeps: each window's samples appended in turn.
std::vector<double> KeptByTheReference(const Model& model, int64_t scan_ns) {
  std::vector<double> kept;
  const analysis::SystemSeries& series = model.series()[0];
  for (int64_t start = model.first_ns(); start <= model.last_ns(); start += scan_ns) {
    const auto [begin, end] = Model::SamplesIn(series, start, start + scan_ns);
    kept.insert(kept.end(), series.value.begin() + begin, series.value.begin() + end);
  }
  return kept;
}

TEST(SeriesHistoryTest, TakesEveryWindowsSamplesWithEdgeSamplesTwice) {
  const Model model = TenSeconds();
  const std::vector<double> kept = KeptByTheReference(model, 5 * kS);
  ASSERT_EQ(kept.size(), 11u);  // the sample at 5 s belongs to both windows

  SeriesHistories histories("GPUUtilization");
  size_t index = 0;
  for (int64_t start = model.first_ns(); start <= model.last_ns(); start += 5 * kS) {
    histories.Take(MakeWindow(model, index++, start, 5 * kS), /*recent_capacity=*/3);
  }
  ASSERT_EQ(histories.all().size(), 1u);
  SeriesHistory& gpu = histories.mutable_all()[0];
  EXPECT_EQ(gpu.name(), "gpu0");
  EXPECT_EQ(gpu.size(), kept.size());
  EXPECT_EQ(std::vector<double>(gpu.Recent(3).begin(), gpu.Recent(3).end()),
            std::vector<double>(kept.end() - 3, kept.end()));
  EXPECT_EQ(gpu.last_taken().size(), 5u);  // the second window's samples, 5 s to 9 s
  std::vector<double> sorted = kept;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(gpu.Sorted(model), sorted);
}

TEST(SeriesHistoryTest, SortsFromAFreshReloadAndFromSamplesTakenOneAtATime) {
  const Model first_load = TenSeconds();
  const Model reload = TenSeconds();
  const Window first = MakeWindow(first_load, 0, kT0, 5 * kS);
  const Window second = MakeWindow(reload, 1, kT0 + 5 * kS, 5 * kS);

  SeriesHistory gpu(0, "gpu0", "GPUUtilization", /*recent_capacity=*/4);
  for (const Window* window : {&first, &second}) {
    const auto [begin, end] = window->samples[0];
    for (size_t k = begin; k < end; ++k) {
      gpu.Take(*window, 0, k, k + 1);
      // A violation in the middle of the second window: statistics over what was taken so far.
      if (window == &second && k == begin + 1) EXPECT_EQ(gpu.Sorted(reload), (std::vector<double>{3, 4, 4, 5, 6, 7, 8, 9}));
    }
  }
  EXPECT_EQ(gpu.size(), 11u);
  EXPECT_EQ(std::vector<double>(gpu.Recent(4).begin(), gpu.Recent(4).end()), (std::vector<double>{3, 2, 1, 0}));
  EXPECT_EQ(gpu.Sorted(reload), (std::vector<double>{0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 9}));
}

}  // namespace
}  // namespace stepscope::rules
