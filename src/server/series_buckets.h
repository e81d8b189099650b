// Time-bucketed downsampling of one system series for the dashboard's charts: a range of a
// 24 h run at 100 ms is cut into at most `points` equal time buckets, each answering its
// minimum, maximum and mean, so a chart draws the envelope (spikes survive) and the browser
// never receives more than it can draw. Distinct from the report's MinMaxDownsample
// (report/report_model_series.h), which keeps original samples for a fixed-size document; the
// dashboard asks again for every zoom.
//
// Callers: run_series.cc. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stepscope::server {

// The most buckets one series answers, whatever the client asks for.
inline constexpr size_t kMaxSeriesPoints = 4000;

struct Buckets {
  int64_t bucket_ns = 0;          // width of a bucket; 0 when the samples were returned as they are
  std::vector<int64_t> t_ns;      // a bucket's start (or the sample's time), ascending
  std::vector<double> min, max, mean;
};

// The samples of (time_ns, values) with from_ns <= t <= to_ns, in at most
// min(points, kMaxSeriesPoints) (and at least 1) entries: the samples themselves when that few
// are in range, else one entry per non-empty bucket of width ceil((to - from + 1) / points).
// NaN values are skipped. time_ns must be ascending (SystemSeries keeps it so).
Buckets BucketSamples(std::span<const int64_t> time_ns, std::span<const double> values, int64_t from_ns,
                      int64_t to_ns, size_t points);

}  // namespace stepscope::server
