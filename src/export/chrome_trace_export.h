// Writes a Model as Chrome Trace Event Format JSON that opens in Perfetto UI and
// chrome://tracing (shared/FORMATS.md §3; docs/exports.md says what goes where):
//
//   {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[
//     metadata (M: process_name, process_sort_index, thread_name, thread_sort_index),
//     slices (X) per track, instants (i), framework counters (C),
//     system-metric counters (C) per node, flows (s / f with bp "e"): the model's (launch ->
//     kernel) and step -> what ran in it]}
//
// Trace processes: each host process, each GPU and each node's system metrics, named as
// trace_names.h says; threads and GPU streams are threads; slices that would overlap without
// nesting go to overflow tracks (thread_tracks.h). An ExportRange keeps what overlaps it.
// Timestamps are microseconds since the job's start (otherData.time_origin_unix_ns: run_facts.h's
// start, the time every other front end counts from; an event before it has a negative ts)
// written from integer nanoseconds with exactly three decimals, so no precision is lost and a
// double holds them exactly enough for a 24 h run.
//
// The document is streamed through a buffer to a TextSink; memory is the layout's per-event
// track index, not the JSON. Callers: `stepscope export --format chrome`, tests.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/model.h"
#include "base/status.h"
#include "export/export_range.h"
#include "export/output_file.h"

namespace stepscope::exporting {

struct ChromeTraceStats {
  uint64_t slices = 0;           // X events
  uint64_t overflow_slices = 0;  // of them, on overflow lanes
  uint64_t instants = 0;
  uint64_t counter_events = 0;   // C events (framework counters and system samples)
  uint64_t flows = 0;            // s/f pairs of the model's flows
  uint64_t step_flows = 0;       // s/f pairs from a step to what ran in it
  uint64_t skipped_samples = 0;  // NaN or infinite values JSON cannot hold
  uint64_t skipped_flows = 0;    // an end that is not a span (nothing to bind to)
};

// "12.345": microseconds from integer nanoseconds, three decimals, exact.
std::string MicrosFromNanos(int64_t ns);

struct ChromeTraceOptions {
  ExportRange range;  // default: the whole run
};

StatusOr<ChromeTraceStats> WriteChromeTrace(const analysis::Model& model, TextSink& sink,
                                            const ChromeTraceOptions& options = {});

// Writes to `path` through a temporary file (output_file.h).
StatusOr<ChromeTraceStats> ExportChromeTrace(const analysis::Model& model, const std::string& path,
                                             const ChromeTraceOptions& options = {});

}  // namespace stepscope::exporting
