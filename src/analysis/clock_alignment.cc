#include "analysis/clock_alignment.h"

#include <algorithm>
#include <cstdio>

namespace stepscope::analysis {

const char* ClockAlignmentStateName(ClockAlignmentState state) {
  switch (state) {
    case ClockAlignmentState::kNone: return "none";
    case ClockAlignmentState::kReference: return "reference";
    case ClockAlignmentState::kAligned: return "aligned";
    case ClockAlignmentState::kUnaligned: return "unaligned";
  }
  return "none";
}

ClockAlignment AlignClock(const StatusOr<store::ClockSync>& sync) {
  ClockAlignment alignment;
  if (!sync.ok()) {
    if (sync.status().code() == StatusCode::kNotFound) return alignment;
    alignment.state = ClockAlignmentState::kUnaligned;
    alignment.reason = sync.status().message();
    return alignment;
  }
  alignment.reference_node = sync->reference_node;
  if (sync->IsReference()) {
    alignment.state = ClockAlignmentState::kReference;
    return alignment;
  }
  if (sync->samples.empty()) {
    alignment.state = ClockAlignmentState::kUnaligned;
    alignment.reason = !sync->error.empty() ? sync->error : "no exchange with the reference node finished";
    return alignment;
  }
  int64_t lowest = sync->samples.front().offset_ns, highest = lowest, slowest_round_trip = 0;
  for (const store::ClockSyncSample& sample : sync->samples) {
    lowest = std::min(lowest, sample.offset_ns);
    highest = std::max(highest, sample.offset_ns);
    slowest_round_trip = std::max(slowest_round_trip, sample.round_trip_ns);
  }
  alignment.state = ClockAlignmentState::kAligned;
  alignment.offset_ns = lowest + (highest - lowest) / 2;
  alignment.uncertainty_ns = (highest - lowest + 1) / 2 + (slowest_round_trip + 1) / 2;
  alignment.drift_ns = sync->samples.back().offset_ns - sync->samples.front().offset_ns;
  alignment.samples = static_cast<int64_t>(sync->samples.size());
  return alignment;
}

nlohmann::json ClockAlignmentToJson(const ClockAlignment& clock) {
  return {{"state", ClockAlignmentStateName(clock.state)}, {"reference_node", clock.reference_node},
          {"offset_ns", clock.offset_ns},          {"uncertainty_ns", clock.uncertainty_ns},
          {"drift_ns", clock.drift_ns},            {"samples", clock.samples},
          {"reason", clock.reason},                {"description", DescribeClockAlignment(clock)}};
}

std::string DescribeClockAlignment(const ClockAlignment& clock) {
  switch (clock.state) {
    case ClockAlignmentState::kNone: return "";
    case ClockAlignmentState::kReference: return "the job's reference clock";
    case ClockAlignmentState::kUnaligned: return "not aligned: " + clock.reason;
    case ClockAlignmentState::kAligned: break;
  }
  char text[256];
  std::snprintf(text, sizeof text, "aligned to node '%s': %+.3f ms \u00b1 %.3f ms (%lld exchange%s, drift %.3f ms)",
                clock.reference_node.c_str(), static_cast<double>(clock.offset_ns) / 1e6,
                static_cast<double>(clock.uncertainty_ns) / 1e6, static_cast<long long>(clock.samples),
                clock.samples == 1 ? "" : "s", static_cast<double>(clock.drift_ns) / 1e6);
  return text;
}

}  // namespace stepscope::analysis
