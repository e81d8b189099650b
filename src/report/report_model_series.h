// Series and table helpers shared by the report model's section builders (report_sections_*.h):
// min/max-preserving downsampling to limits.max_points_per_series, the JSON shape of a chart
// series, and rounding that keeps the embedded document small without changing what a chart
// shows. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace stepscope::report {

// The document's limits (docs/report-model.md "limits"): a chart never gets more points than
// this, and a table never more rows, so the HTML of a 24 h run stays within its 5 MB budget.
inline constexpr size_t kMaxPointsPerSeries = 2000;
inline constexpr size_t kMaxTableRows = 30;

// The indices of `values` to keep, ascending. All of them when values.size() <= max_points;
// otherwise the values are cut into max_points / 2 consecutive buckets and each bucket keeps its
// minimum and its maximum (first occurrence of each, in index order; one index when they
// coincide), so spikes and dips survive at any zoom. NaNs never win a bucket.
std::vector<size_t> MinMaxDownsample(std::span<const double> values, size_t max_points);

// {"t_s": [...], "values": [...], "downsampled": bool, "original_points": n}: times in seconds
// since `origin_ns` (rounded to the microsecond), values rounded by RoundForChart.
nlohmann::json TimeSeriesJson(std::span<const int64_t> time_ns, std::span<const double> values, int64_t origin_ns,
                              size_t max_points = kMaxPointsPerSeries);

// 4 decimals: below what a chart or a table shows, and a third of the digits of a full double.
double RoundForChart(double value);

// nanoseconds -> milliseconds / seconds as floats.
inline double NsToMs(int64_t ns) { return static_cast<double>(ns) / 1e6; }
inline double NsToS(int64_t ns) { return static_cast<double>(ns) / 1e9; }

// A copy of `details` (a rule's Details) where every object or array longer than `max_entries`
// keeps its first max_entries entries; *truncated is set when anything was cut. Bounds rules
// whose Details grow with the run (CPUBottleneck keeps one entry per bottleneck snapshot).
nlohmann::json BoundedDetails(const nlohmann::json& details, size_t max_entries, bool* truncated);

}  // namespace stepscope::report
