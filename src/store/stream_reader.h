// Reads one stream (format.h) from untrusted files, also while it is being written.
//
// The ring is read first, then the log, so a block that moves from ring to log between the
// two reads is seen at least once; per sequence number the copy with the most records wins.
// Everything intact is returned; everything skipped is described in `problems`.
//
// ScanStream hands the blocks to a callback one at a time, in sequence order, and drops each
// after the call: a reader of a long run (the analysis loader) then holds one decoded block at a
// time, not the whole stream. ReadStream is ScanStream collecting every block.
//
// Also here: CompactStream, which folds a dead writer's ring into its log and removes the
// ring, so finished runs are compact at rest.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/block_codec.h"
#include "store/gpu_activity_frame.h"
#include "store/log_file.h"

namespace stepscope::store {

struct StreamContents {
  std::string name;
  std::string meta_json;        // the kMeta frame ("" when lost)
  std::string last_stats_json;  // the latest kStats frame
  std::unordered_map<uint32_t, std::string> strings;
  std::vector<ClockPair> clock_pairs;  // sorted by ticks
  std::vector<DecodedBlock> blocks;    // one per sequence number, sorted by it (ReadStream only)
  // GPU activity rows (version 2 GPU streams), in log order (ReadStream only).
  std::vector<GpuActivityRow> gpu_rows;
  // Launch configurations the GPU activity frames declared so far (their names are in `strings`).
  std::unordered_map<uint32_t, GpuLaunchConfig> gpu_launch_configs;
  // Records of the blocks to come, as their headers say (largest copy per sequence number),
  // known before the first block is handed over: a size hint for callers that preallocate.
  uint64_t block_records = 0;
  uint64_t dropped_events = 0;  // from the ring header, or the stats once compacted (all causes)
  uint64_t dropped_write_failed = 0;  // the part of dropped_events lost while the log was unwritable
  // Neither a description, nor a block, nor a ring: the writer could not write its stream at
  // all (a full disk when the process started), so whatever that process did is lost uncounted.
  bool unwritten = false;
  uint64_t log_bytes = 0;
  uint64_t frame_bytes[kMaxFrameType + 1] = {};  // log bytes per FrameType, headers included
  uint64_t ring_bytes = 0;      // 0 once compacted
  bool has_ring = false;
  std::vector<std::string> problems;  // what was skipped and why, each naming the file
};

// Reads <directory>/<name>.log and .ring (either may be missing, not both).
StatusOr<StreamContents> ReadStream(const std::string& directory, const std::string& name);

// Called once per block (one per sequence number, ascending). `stream` holds everything but
// the blocks: strings, clock pairs (sorted), meta, stats and dropped_events are final; problems
// are complete only once ScanStream returns. The block is destroyed after the call.
using StreamBlockCallback = std::function<void(const StreamContents& stream, const DecodedBlock& block)>;
// Called once per GPU activity frame, in log order, after the blocks of the same read; `stream`
// already holds the names and launch configurations the frame declared.
using StreamGpuRowsCallback =
    std::function<void(const StreamContents& stream, std::span<const GpuActivityRow> rows)>;

// ReadStream without keeping the blocks: the returned contents have `blocks` empty. Which copy of
// a block wins and which problems are reported are exactly as in ReadStream.
StatusOr<StreamContents> ScanStream(const std::string& directory, const std::string& name,
                                    const StreamBlockCallback& on_block,
                                    const StreamGpuRowsCallback& on_gpu_rows = nullptr);

// Where a reader that follows a stream while it is written stands (FollowStream): what the
// log held the last time, and how many records of each block it has handed over.
struct StreamCursor {
  uint64_t log_offset = 0;  // the log is parsed up to here (whole frames only)
  std::unordered_map<uint64_t, uint32_t> delivered;  // block seq -> records handed over
};

// ScanStream for a stream that may still be written, resumable: each call reads only what the
// log gained since `cursor` (and the ring, which is bounded) and hands over only records not
// handed over before, each block's new records in order (a block read half-written from the ring
// hands the rest over once the log holds it). `contents` accumulates across calls (strings,
// clock pairs, meta, stats, bytes per frame type); the drop counts, ring and log sizes are the
// latest; `problems` holds only what this call found. `tail`: LogTail::kMayGrow while the writer
// may be appending (a frame it has not finished is left for the next call), kFinal once it is
// gone. The first call with a fresh cursor and kFinal is exactly ScanStream.
// GPU activity frames live in the log only, so each is handed over once (on_gpu_rows, when set);
// a frame that does not decode is reported and costs only its rows (and the names and
// configurations it declared).
Status FollowStream(const std::string& directory, StreamContents& contents, StreamCursor& cursor, LogTail tail,
                    const StreamBlockCallback& on_block, const StreamGpuRowsCallback& on_gpu_rows = nullptr);

// Names of the streams in a node directory (stems of *.log and *.ring files), sorted.
StatusOr<std::vector<std::string>> ListStreams(const std::string& directory);

// Appends the ring's remaining blocks to the log, records the final drop count and removes
// the ring. Unavailable when the writer still holds the ring (it is alive); Ok when there is
// no ring (already compacted).
Status CompactStream(const std::string& directory, const std::string& name);

// Converts a stream's ticks to CLOCK_MONOTONIC ns: piecewise linear through its calibration
// pairs, extrapolated with the last segment's rate (or `ticks_per_ns` with one pair).
class StreamClock {
 public:
  StreamClock(std::vector<ClockPair> pairs, double ticks_per_ns);
  int64_t ToMonotonicNs(uint64_t ticks) const;

 private:
  std::vector<ClockPair> pairs_;
  std::vector<double> rates_;  // ticks per ns of segment i (pairs_[i] .. pairs_[i+1])
  double default_rate_;
};

}  // namespace stepscope::store
