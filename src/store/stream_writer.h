// Writes one stream (format.h): owns its ring and log, and turns sealed ring blocks into
// compressed log frames.
//
// Callers: the recorder (one per recording process) and the system sampler. Threading: ring()
// is used lock-free by recording threads; AppendStrings may be called from any thread; the
// Flush* functions are serialised internally and meant for one background flusher.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/block_codec.h"
#include "store/log_file.h"
#include "store/ring_file.h"

namespace stepscope::store {

struct StreamWriterOptions {
  std::string directory;  // the node directory; must exist
  std::string name;       // file name stem: <directory>/<name>.ring and .log
  uint32_t block_bytes = 32 * 1024;
  uint32_t block_count = 128;
  int zstd_level = 3;
  std::string meta_json;  // a JSON object describing the stream (pid, command, ...)
  ClockPair clock_anchor;  // the first calibration pair (the one meta_json's anchor used)
};

class StreamWriter {
 public:
  static StatusOr<std::unique_ptr<StreamWriter>> Create(const StreamWriterOptions& options);

  RingFile& ring() { return *ring_; }

  // Records string-table entries; returns once they are in the log.
  Status AppendStrings(const std::vector<std::pair<uint32_t, std::string>>& entries);
  Status AppendClockPair(const ClockPair& pair);
  Status AppendStats(std::string_view json);
  // Appends a frame of `type` whose payload `build` makes with the writer's zstd context and
  // level (the GPU activity frame). Serialised with the flushes.
  using FrameBuild = std::function<void(BlockEncoder& compressor, int zstd_level, std::string& payload)>;
  Status AppendFrame(FrameType type, const FrameBuild& build);

  // Compresses every sealed block into the log and frees it. Returns how many were flushed.
  // A block whose frame could not be written stays sealed and is retried next time.
  StatusOr<uint32_t> FlushSealed();
  // Compresses the records published so far in open blocks without freeing them (readers keep
  // the larger copy of a block), so a clean exit leaves everything compact in the log.
  Status SnapshotOpenBlocks();

  uint64_t log_bytes() const;
  uint64_t blocks_flushed() const { return blocks_flushed_; }

  // In a forked child: drop mappings and descriptors without writing (the parent owns them).
  void AbandonAfterFork();

 private:
  StreamWriter(std::unique_ptr<RingFile> ring, std::unique_ptr<LogWriter> log, int zstd_level)
      : ring_(std::move(ring)), log_(std::move(log)), zstd_level_(zstd_level) {}
  Status AppendBlockFrame(BlockHeader* block, uint32_t count);  // under flush_mutex_

  std::unique_ptr<RingFile> ring_;
  std::unique_ptr<LogWriter> log_;
  int zstd_level_;
  mutable std::mutex log_mutex_;    // serialises log writes
  std::mutex flush_mutex_;          // one flusher at a time
  BlockEncoder encoder_;            // used under flush_mutex_
  std::string frame_payload_;       // AppendFrame's, reused; under flush_mutex_
  uint64_t blocks_flushed_ = 0;
};

// Encodes string-table entries as a kStrings frame payload.
std::string EncodeStrings(const std::vector<std::pair<uint32_t, std::string>>& entries);

}  // namespace stepscope::store
