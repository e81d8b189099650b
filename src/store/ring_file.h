// The writer's side of a stream's .ring file: a MAP_SHARED pool of raw blocks (format.h).
//
// Callers: the recorder (one block per recording thread at a time) and the system sampler.
// Threading: Claim/Seal/CountDropped are lock-free and safe from any thread; a block's records
// are written only by the thread that claimed it. The file is flock()ed while the writer lives
// so a compactor can tell a dead writer from a live one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "store/format.h"

namespace stepscope::store {

class RingFile {
 public:
  // Locks `path` (creating it), then empties it and lays out `block_count` blocks of
  // `block_bytes` each, and maps it; the lock is held until destruction. Unavailable, with the
  // file untouched, when another live writer holds it: emptying a file that process has mapped
  // would kill it with SIGBUS.
  static StatusOr<std::unique_ptr<RingFile>> Create(const std::string& path, uint32_t block_bytes,
                                                    uint32_t block_count, uint64_t stream_id);
  ~RingFile();
  RingFile(const RingFile&) = delete;
  RingFile& operator=(const RingFile&) = delete;

  // Takes a free block for thread `tid`, or returns nullptr when every block is in use.
  BlockHeader* Claim(uint32_t tid, uint64_t dropped_before);
  // Hands a block to the flusher; its owner must not write to it afterwards.
  void Seal(BlockHeader* block);
  // Why records were dropped: every cause gets its own counter (RingHeader).
  enum class DropCause { kBuffersFull, kWriteFailed };
  void CountDropped(uint64_t records, DropCause cause = DropCause::kBuffersFull) {
    header_->dropped_events.fetch_add(records, std::memory_order_relaxed);
    if (cause == DropCause::kWriteFailed) header_->dropped_write_failed.fetch_add(records, std::memory_order_relaxed);
  }

  static RawRecord* Records(BlockHeader* block) { return reinterpret_cast<RawRecord*>(block + 1); }
  BlockHeader* block(uint32_t index) const {
    return reinterpret_cast<BlockHeader*>(base_ + kRingHeaderBytes + size_t{index} * header_->block_bytes);
  }
  uint32_t block_count() const { return header_->block_count; }
  RingHeader* header() const { return header_; }
  const std::string& path() const { return path_; }

  // In a forked child: forget the parent's mapping and descriptor without touching the file
  // (the parent still owns it). Only the fork handler calls this.
  void AbandonAfterFork();

 private:
  RingFile(std::string path, int fd, char* base, size_t size);

  std::string path_;
  int fd_;
  char* base_;
  size_t size_;
  RingHeader* header_;
  std::atomic<uint32_t> claim_hint_{0};
};

// Whether a process still writes <directory>/<stream>.ring: its writer holds the flock for its
// whole life. No ring (compacted) or a free lock: the writer is gone (exited or killed; the
// kernel releases a dead process's lock). Never blocks, a FIFO in the ring's place included.
bool RingWriterAlive(const std::string& directory, const std::string& stream);

}  // namespace stepscope::store
