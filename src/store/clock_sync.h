// <job>/<node>/clock_sync.json: what one node measured of its clock against the job's reference
// node (docs/formats.md, "Clock alignment"), written whole by the node's local rank 0 after each
// burst of exchanges (python/stepscope/torch/_clock_sync.py). Read here, in one place, for the
// analysis (analysis/clock_alignment.h turns it into the offset applied to the node's times).
//
// Threading: none; reads one file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stepscope::store {

inline constexpr const char* kClockSyncFileName = "clock_sync.json";
inline constexpr uint64_t kMaxClockSyncBytes = 4 << 20;  // 1,000 samples are ~100 KB

// One burst's fastest exchange. Times are the node's own (Unix ns by its manifest's anchor).
struct ClockSyncSample {
  int64_t at_ns = 0;          // when the node sent its ping
  int64_t offset_ns = 0;      // reference clock − this node's clock
  int64_t round_trip_ns = 0;  // network time of the exchange: the offset is within half of it
};

struct ClockSync {
  std::string node;
  int32_t node_rank = -1;
  int32_t nodes = 0;
  std::string reference_node;  // empty until the reference named itself
  std::vector<ClockSyncSample> samples;  // the reference node has none
  std::string error;           // the last burst's failure, empty when it succeeded
  bool IsReference() const { return node_rank == 0 || (!node.empty() && node == reference_node); }
};

// Parses the file's text; fails (one line naming `path`) only when it is not a JSON object.
// Samples of the wrong shape or with a negative round trip are left out.
StatusOr<ClockSync> ParseClockSync(std::string_view text, const std::string& path);

// Reads <node_dir>/clock_sync.json, a regular file of the run only. NotFound when there is none.
StatusOr<ClockSync> ReadClockSync(const std::string& node_dir);

}  // namespace stepscope::store
