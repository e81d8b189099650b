// The part of a run an export writes: the whole run, a time range (`--from`/`--to`) or the
// steps numbered A to B (`--steps A:B`), so a long run exports a slice a trace viewer can load
// (a 24 h run is gigabytes whole; docs/exports.md gives the size per hour).
//
//   --from/--to  a time since the job's start (run_facts.h: what the report's axes count from) ("90s", "2h", "1500ms") or a UTC time
//                ("2026-11-21T10:15:00Z", fractions of a second allowed); either may be left out
//   --steps A:B  the TRAIN steps numbered A to B, both included, on every node and rank (the
//                steps of any phase when the run has no TRAIN step); the range runs from the
//                earliest of them to start to the latest to end
//
// A range never cuts an event in two: what overlaps it is written whole. Callers: the export
// command; the Chrome trace exporter reads the resolved range.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/model.h"
#include "base/status.h"

namespace stepscope::exporting {

struct ExportRange {
  bool whole = true;            // no range asked for
  int64_t start_ns = INT64_MIN;  // Unix ns, closed
  int64_t end_ns = INT64_MAX;
  std::string description;       // "the whole run", "steps 100 to 120 (TRAIN)", "from 1h to 1h5m"

  bool Overlaps(int64_t start_ns_, int64_t end_ns_) const { return end_ns_ >= start_ns && start_ns_ <= end_ns; }
  bool Contains(int64_t time_ns) const { return time_ns >= start_ns && time_ns <= end_ns; }
};

struct ExportRangeRequest {
  std::string from;   // "" when not given
  std::string to;
  std::string steps;  // "A:B"
};

// Resolves a request against `model`. Errors (InvalidArgument) are one sentence naming the
// flag, the text and what is accepted, or a range that holds none of the run.
StatusOr<ExportRange> ResolveExportRange(const analysis::Model& model, const ExportRangeRequest& request);

// "2026-11-21T10:15:00Z" or "2026-11-21T10:15:00.25Z" -> Unix ns; InvalidArgument otherwise.
StatusOr<int64_t> ParseUtcTimeNs(std::string_view text);

}  // namespace stepscope::exporting
