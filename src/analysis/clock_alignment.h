// How one node's clock is put on the job's time axis (docs/multi-node.md): from the offsets to
// the reference node its local rank 0 measured (store/clock_sync.h), the offset the analysis
// adds to every time of the node, and how far an aligned time can be from the reference clock.
//
// The offset applied is the middle of the range the bursts measured; the uncertainty is half
// that range (the clocks' drift over the job, which a constant offset cannot follow) plus half
// the slowest burst's round trip (within which each measurement holds, whatever the network's
// asymmetry).
//
// Threading: none.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "store/clock_sync.h"

namespace stepscope::analysis {

enum class ClockAlignmentState : uint8_t {
  kNone,       // nothing recorded: a job of one node, an imported run, a run from before this
  kReference,  // the node the others align to
  kAligned,
  kUnaligned,  // the exchange ran and failed, or its record is damaged: `reason` says which
};
const char* ClockAlignmentStateName(ClockAlignmentState state);  // "none", "reference", ...

struct ClockAlignment {
  ClockAlignmentState state = ClockAlignmentState::kNone;
  std::string reference_node;
  int64_t offset_ns = 0;       // added to every time of the node
  int64_t uncertainty_ns = 0;  // an aligned time is within this of the reference clock's
  int64_t drift_ns = 0;        // the last burst's offset − the first's
  int64_t samples = 0;
  std::string reason;          // kUnaligned: why, in words
};

// From a node's clock_sync.json as read (NotFound: kNone).
ClockAlignment AlignClock(const StatusOr<store::ClockSync>& sync);

// {"state", "reference_node", "offset_ns", "uncertainty_ns", "drift_ns", "samples", "reason",
// "description" (DescribeClockAlignment)}:
// the one JSON spelling (`stepscope info --json`, the report's nodes).
nlohmann::json ClockAlignmentToJson(const ClockAlignment& clock);
// "aligned to node 'a': +2499.984 ms ± 0.059 ms (3 exchanges, drift 0.012 ms)", "reference",
// "not aligned: <reason>"; "" for kNone.
std::string DescribeClockAlignment(const ClockAlignment& clock);

}  // namespace stepscope::analysis
