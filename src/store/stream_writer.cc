#include "store/stream_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <random>
#include <span>

#include "store/block_codec.h"
#include "store/varint.h"

namespace stepscope::store {

std::string EncodeStrings(const std::vector<std::pair<uint32_t, std::string>>& entries) {
  std::string payload;
  for (const auto& [id, text] : entries) {
    PutVarint(payload, id);
    PutVarint(payload, text.size());
    payload.append(text);
  }
  return payload;
}

StatusOr<std::unique_ptr<StreamWriter>> StreamWriter::Create(const StreamWriterOptions& options) {
  std::random_device entropy;
  uint64_t stream_id = (uint64_t{entropy()} << 32) ^ entropy() ^ static_cast<uint64_t>(getpid());
  std::string stem = options.directory + "/" + options.name;
  // The ring first: its lock says the stream is ours, and only then may its log be emptied.
  // A second writer of the same stream (two launchers in one node directory) stops here and
  // leaves both files of the live one alone.
  auto ring = RingFile::Create(stem + kRingSuffix, options.block_bytes, options.block_count, stream_id);
  if (!ring.ok()) {
    // A disk full from the start leaves no ring, and without a trace every event of the stream
    // would be lost uncounted. An empty log (it needs an inode, not a block) stays behind as
    // the marker readers report as process_log_unwritten. Never for a live writer's stream, and
    // O_EXCL never empties an existing log.
    if (ring.status().code() != StatusCode::kUnavailable) {
      const int marker = open((stem + kLogSuffix).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (marker >= 0) close(marker);
    }
    return ring.status();
  }
  auto log = LogWriter::Create(stem + kLogSuffix, stream_id);
  if (!log.ok()) {
    unlink((*ring)->path().c_str());  // still locked by us: no other writer uses it
    return log.status();
  }
  auto writer = std::unique_ptr<StreamWriter>(new StreamWriter(std::move(*ring), std::move(*log), options.zstd_level));
  if (!options.meta_json.empty()) STEPSCOPE_RETURN_IF_ERROR(writer->log_->Append(FrameType::kMeta, options.meta_json));
  STEPSCOPE_RETURN_IF_ERROR(writer->AppendClockPair(options.clock_anchor));
  return writer;
}

Status StreamWriter::AppendStrings(const std::vector<std::pair<uint32_t, std::string>>& entries) {
  std::string payload = EncodeStrings(entries);
  std::lock_guard lock(log_mutex_);
  return log_->Append(FrameType::kStrings, payload);
}

Status StreamWriter::AppendClockPair(const ClockPair& pair) {
  std::string payload;
  PutFixed<uint64_t>(payload, pair.ticks);
  PutFixed<uint64_t>(payload, pair.monotonic_ns);
  std::lock_guard lock(log_mutex_);
  return log_->Append(FrameType::kClock, payload);
}

Status StreamWriter::AppendStats(std::string_view json) {
  std::lock_guard lock(log_mutex_);
  return log_->Append(FrameType::kStats, json);
}

Status StreamWriter::AppendFrame(FrameType type, const FrameBuild& build) {
  std::lock_guard flush_lock(flush_mutex_);
  frame_payload_.clear();
  build(encoder_, zstd_level_, frame_payload_);
  std::lock_guard lock(log_mutex_);
  return log_->Append(type, frame_payload_);
}

Status StreamWriter::AppendBlockFrame(BlockHeader* block, uint32_t count) {
  // The first `count` records were published (count loaded with acquire) and are never
  // rewritten while the block is sealed or open, so they are encoded in place.
  std::span<const RawRecord> records(RingFile::Records(block), count);
  std::string payload = encoder_.Encode(block->seq, block->tid, block->dropped_before, records, zstd_level_);
  std::lock_guard lock(log_mutex_);
  return log_->Append(FrameType::kBlock, payload);
}

StatusOr<uint32_t> StreamWriter::FlushSealed() {
  std::lock_guard flush_lock(flush_mutex_);
  uint32_t flushed = 0;
  Status first_error;
  for (uint32_t i = 0; i < ring_->block_count(); ++i) {
    BlockHeader* block = ring_->block(i);
    if (block->state.load(std::memory_order_acquire) != static_cast<uint32_t>(BlockState::kSealed)) continue;
    uint32_t count = block->count.load(std::memory_order_acquire);
    Status status = AppendBlockFrame(block, count);
    if (!status.ok()) {
      if (first_error.ok()) first_error = status;
      continue;  // stays sealed; nothing is lost while the ring holds it
    }
    block->state.store(static_cast<uint32_t>(BlockState::kFree), std::memory_order_release);
    ++flushed;
    ++blocks_flushed_;
  }
  if (!first_error.ok() && flushed == 0) return first_error;
  return flushed;
}

Status StreamWriter::SnapshotOpenBlocks() {
  std::lock_guard flush_lock(flush_mutex_);
  for (uint32_t i = 0; i < ring_->block_count(); ++i) {
    BlockHeader* block = ring_->block(i);
    if (block->state.load(std::memory_order_acquire) != static_cast<uint32_t>(BlockState::kOpen)) continue;
    uint32_t count = block->count.load(std::memory_order_acquire);
    if (count == 0) continue;
    STEPSCOPE_RETURN_IF_ERROR(AppendBlockFrame(block, count));
  }
  return OkStatus();
}

uint64_t StreamWriter::log_bytes() const {
  std::lock_guard lock(log_mutex_);
  return log_->bytes_written();
}

void StreamWriter::AbandonAfterFork() {
  ring_->AbandonAfterFork();
  log_->AbandonAfterFork();
  // The parent's mutexes may have been held at fork time; this object is never used again in
  // the child, so they are left alone (and the object is deliberately leaked by the caller).
}

}  // namespace stepscope::store
