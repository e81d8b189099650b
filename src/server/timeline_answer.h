// The Timeline page's answer for one viewport (GET /api/runs/{id}/timeline, docs/dashboard.md):
// the level-of-detail view of analysis/timeline_view.h (at most 50,000 slices, narrow spans
// merged per pixel column) as compact JSON, with the tracks named as the exports name them
// (export/trace_names.h) and zoom-to-step through the one reading of "step N"
// (analysis/step_times.h FindStepSpan).
//
// Callers: dashboard_server.cc, with the run's lock held and the run's TimelineIndex built for
// the model as it is now. Pure function of its arguments.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "analysis/timeline_view.h"
#include "base/status.h"

namespace stepscope::server {

inline constexpr uint32_t kMaxTimelineWidthPx = 10'000;

struct TimelineQuery {
  int64_t from_ns = 0;          // 0: the run's first event
  int64_t to_ns = 0;            // 0: its last
  std::optional<int64_t> step;  // zoom to this step instead of [from_ns, to_ns]
  uint32_t width_px = 1000;     // the viewport's pixel columns, 1..kMaxTimelineWidthPx
};

// {"from_ns", "to_ns", "width_px", "ns_per_column", "widenings", "events",
//  "step"?: {"number", "start_ns", "end_ns"},
//  "tracks": [{"id", "process", "thread", "device", "lane"}], "names": [text],
//  "slices": [[track, depth, start_ns - from_ns, duration_ns, name index, count]],
//  "flows": [[from slice, to slice]]}
// NotFound when `step` names no step of the run (the message gives the run's range);
// InvalidArgument for an empty range or a width out of bounds.
StatusOr<nlohmann::json> TimelineAnswer(const analysis::Model& model, const analysis::TimelineIndex& index,
                                        const TimelineQuery& query);

}  // namespace stepscope::server
