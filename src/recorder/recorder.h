// The in-process recorder: per-thread buffers inside the stream's shared ring, a background
// flusher, fork handling and drop accounting. The C API (c_api.cc) and the Python binding sit
// on top of the inline hot path in Record().
//
// Hot path contract (STYLE.md §5): no locks, no allocation, no syscalls, no exceptions. When
// the recorder is off it is one relaxed load. When on: read the tick clock, store a 24-byte
// record into the thread's block in the MAP_SHARED ring, publish it with a release store of
// the block's count. A full block or a thread's first record takes the slow path
// (RefillThreadBuffer): seal the block, claim another; when none is free the record is
// dropped and counted, and claiming is retried only after a short back-off.
//
// Process model: one recording session per process, writing one stream under the node
// directory. A fork child starts over lazily: its first record creates its own stream
// (proc-<pid>-<random>), re-emits the name table, and starts its own flusher. stop is final
// for the process (record calls after it are no-ops).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "stepscope/stepscope.h"
#include "store/format.h"
#include "store/ring_file.h"

namespace stepscope::recorder {

// A thread's cursor into the block it owns. Lives in thread-local storage.
struct ThreadBuffer {
  store::RawRecord* next = nullptr;   // where the next record goes
  store::RawRecord* end = nullptr;    // one past the block's last slot
  store::RawRecord* first = nullptr;  // the block's first slot
  store::BlockHeader* block = nullptr;
  uint64_t retry_claim_at_ticks = 0;  // back-off while the ring is full
  uint64_t dropped_since_block = 0;
  uint32_t tid = 0;
};

// The thread's buffer. initial-exec TLS keeps the access a single %fs-relative load even in a
// dlopen'ed module (the Python extension); it costs one pointer of static TLS.
extern thread_local ThreadBuffer* t_thread_buffer __attribute__((tls_model("initial-exec")));

// Slow path: returns a buffer with room for one record, or nullptr (the record is dropped and
// already counted).
ThreadBuffer* RefillThreadBuffer(uint64_t ticks);

// Records with a timestamp taken earlier (ReadTicks()), for instrumentation that learns only
// afterwards that something began (a step begins when the loop asks for a batch, but is known
// to be a step only once the batch arrives).
// The caller has checked stepscope_enabled_fast(): one check per record keeps the disabled
// path a load and a branch (a second check here stops GCC from shrink-wrapping the prologue).
inline void RecordAt(uint64_t ticks, store::RecordKind kind, uint32_t name_id, uint8_t phase, uint64_t value) {
  ThreadBuffer* buffer = t_thread_buffer;
  if (__builtin_expect(buffer == nullptr || buffer->next == buffer->end, 0)) {
    buffer = RefillThreadBuffer(ticks);
    if (buffer == nullptr) return;
  }
  store::RawRecord* record = buffer->next++;
  record->ticks = ticks;
  record->name_id = name_id;
  record->kind = static_cast<uint8_t>(kind);
  record->phase = phase;
  record->reserved = 0;
  record->value = value;
  // Publish: a reader (or the compactor after a crash) sees exactly the records counted.
  buffer->block->count.store(static_cast<uint32_t>(buffer->next - buffer->first), std::memory_order_release);
}

inline void Record(store::RecordKind kind, uint32_t name_id, uint8_t phase, uint64_t value) {
  if (!stepscope_enabled_fast()) return;
  RecordAt(ReadTicks(), kind, name_id, phase, value);
}

struct StartOptions {
  std::string node_dir;          // <root>/<job>/<node>; created if needed
  uint32_t block_bytes = 32 * 1024;
  uint32_t block_count = 128;    // 4 MiB of ring per process by default
  uint32_t flush_interval_ms = 100;
};

// Starts recording in this process. Ok if already started.
Status Start(const StartOptions& options);
// Flushes everything and stops recording for good in this process.
void Stop();
// Compresses sealed blocks and snapshots open ones into the log now.
void Flush();
// Interns `name`; 0 when the recorder is off or the name could not be persisted.
uint32_t Intern(std::string_view name);
// Step numbers for STEPSCOPE_AUTO_STEP: 0, 1, 2, ... per phase in this process.
int64_t NextAutoStep(uint8_t phase);
void GetStats(stepscope_stats* out);

}  // namespace stepscope::recorder
