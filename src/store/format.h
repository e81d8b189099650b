// The stepscope on-disk format, version 2: what every stream's two files contain. Version 2
// added the GPU activity frame (FrameType::kGpuActivity, store/gpu_activity_frame.h), written by
// GPU streams only; everything else is as in version 1, which readers still accept.
//
// A run is <root>/<job>/<node>/ holding manifest.json and, per recording process (and one
// for the system sampler), a *stream*: two files sharing a name.
//
//   <stream>.ring  A fixed-size pool of raw blocks, MAP_SHARED by the writer. Threads append
//                  24-byte RawRecords straight into "their" block and publish each with a
//                  release store of the block's count. Because the mapping is shared with the
//                  page cache, whatever a record call wrote is in the file the moment the call
//                  returns, even if the process is SIGKILLed next. Blocks are reused once
//                  their contents are safely in the log, so memory is bounded.
//
//       +-------------+---------------------------+---------------------------+---
//       | RingHeader  | BlockHeader | RawRecord.. | BlockHeader | RawRecord.. | ...
//       | (4096 B)    | (64 B)      | capacity x  |             |             |
//       +-------------+---------------------------+---------------------------+---
//
//   <stream>.log   Append-only frames, each written with one write(2): a string-table frame
//                  when a name is first interned (before any record can refer to it), block
//                  frames holding a sealed block's records column-encoded and zstd-compressed,
//                  GPU activity frames (a GPU stream's rows, written straight to the log),
//                  clock calibration pairs, a JSON meta frame and JSON stats frames. Every
//                  frame carries an xxh64 checksum; a torn or corrupt frame is skipped and the
//                  reader resynchronises on the next frame magic.
//
//       +------------+--------------------------------+--------------------------------+--
//       | LogHeader  | FrameHeader (24 B) | payload   | FrameHeader (24 B) | payload   | ..
//       +------------+--------------------------------+--------------------------------+--
//
// Every block has a sequence number unique within its stream. A block may be read twice (from
// the ring and from the log, if a reader catches it mid-flush); readers keep, per sequence
// number, the copy with the most records. After the process is gone `stepscope run` compacts
// each stream: remaining ring blocks are appended to the log and the ring file is removed.
//
// Version policy: readers accept kFormatVersion and kFormatVersion - 1 and name both in the
// error for anything else.
#pragma once

#include <atomic>
#include <cstdint>

namespace stepscope::store {

inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kOldestReadableFormatVersion = 1;

inline constexpr char kRingMagic[8] = {'S', 'T', 'P', 'S', 'R', 'I', 'N', 'G'};
inline constexpr char kLogMagic[8] = {'S', 'T', 'P', 'S', 'L', 'O', 'G', '\0'};
inline constexpr uint32_t kFrameMagic = 0x46535053;  // "SPSF" little-endian

inline constexpr const char* kRingSuffix = ".ring";
inline constexpr const char* kLogSuffix = ".log";

// What a RawRecord is. Argument records attach to the closest earlier non-argument record of
// the same thread.
enum class RecordKind : uint8_t {
  kBegin = 1,      // span begins; name_id = span name
  kEnd = 2,        // span ends; name_id = span name
  kInstant = 3,    // name_id = event name
  kCounter = 4,    // name_id = counter name; value = double bits
  kStepBegin = 5,  // phase = Phase; value = step number (int64)
  kStepEnd = 6,    // phase = Phase; value = step number (int64)
  kArgInt = 7,     // name_id = key; value = int64
  kArgDouble = 8,  // name_id = key; value = double bits
  kArgString = 9,  // name_id = key; value = string id
  kSample = 10,    // system metric; name_id = metric name; value = double bits
};
inline constexpr uint8_t kMaxRecordKind = 10;

enum class Phase : uint8_t { kTrain = 0, kEval = 1, kPredict = 2, kGlobal = 3 };
inline constexpr uint8_t kMaxPhase = 3;
// "TRAIN", "EVAL", "PREDICT", "GLOBAL"; an unknown value reads as GLOBAL.
constexpr const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kTrain: return "TRAIN";
    case Phase::kEval: return "EVAL";
    case Phase::kPredict: return "PREDICT";
    case Phase::kGlobal: return "GLOBAL";
  }
  return "GLOBAL";
}

// One recorded fact, as written on the hot path. Fixed size, no pointers.
struct RawRecord {
  uint64_t ticks;    // base/clock.h ReadTicks()
  uint32_t name_id;  // interned string id (0 = none)
  uint8_t kind;      // RecordKind
  uint8_t phase;     // Phase, for step records
  uint16_t reserved;
  uint64_t value;    // see RecordKind
};
static_assert(sizeof(RawRecord) == 24, "RawRecord is part of the on-disk format");

enum class BlockState : uint32_t {
  kFree = 0,      // reusable; its previous contents are in the log
  kOpen = 1,      // a thread is appending records
  kSealed = 2,    // full or abandoned; waiting for the flusher
  kClaiming = 3,  // a thread is initialising the header; readers skip it
};

struct BlockHeader {
  std::atomic<uint32_t> state;  // BlockState
  uint32_t tid;                 // kernel thread id of the writer
  uint64_t seq;                 // unique per stream
  std::atomic<uint32_t> count;  // records published (release) by the writer
  uint32_t capacity;            // records that fit after this header
  uint64_t dropped_before;      // records this thread dropped since its previous block
  uint64_t check;               // BlockHeaderCheck(tid, seq, capacity): detects garbage
  uint8_t reserved[24];
};
static_assert(sizeof(BlockHeader) == 64, "BlockHeader is part of the on-disk format");
static_assert(std::atomic<uint32_t>::is_always_lock_free);

inline uint64_t BlockHeaderCheck(uint32_t tid, uint64_t seq, uint32_t capacity) {
  // Cheap mix; only needs to make a random header unlikely to validate.
  uint64_t x = (seq * 0x9E3779B97F4A7C15ull) ^ (uint64_t{tid} << 32 | capacity) ^ 0x5354505343484B31ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 32);
}

inline constexpr uint32_t kRingHeaderBytes = 4096;

struct RingHeader {
  char magic[8];                        // kRingMagic
  uint32_t version;                     // kFormatVersion
  uint32_t header_bytes;                // kRingHeaderBytes
  uint32_t block_bytes;                 // including the BlockHeader
  uint32_t block_count;
  uint64_t stream_id;                   // random; matches the log's
  std::atomic<uint64_t> next_seq;       // next block sequence number
  std::atomic<uint64_t> dropped_events; // records dropped because no block was free (all causes)
  std::atomic<uint64_t> records_written;  // records in blocks sealed so far
  // The part of dropped_events lost while the log could not be written (disk full, I/O
  // error): sealed blocks then stay in the ring, so the ring fills however fast the flusher
  // is. Added after version 1 shipped, in space that was zero: older rings read as 0.
  std::atomic<uint64_t> dropped_write_failed;
};
static_assert(sizeof(RingHeader) <= kRingHeaderBytes);

struct LogHeader {
  char magic[8];      // kLogMagic
  uint32_t version;   // kFormatVersion
  uint32_t header_bytes;
  uint64_t stream_id;
  uint64_t reserved;
};
static_assert(sizeof(LogHeader) == 32);

enum class FrameType : uint8_t {
  kStrings = 1,  // repeated {varint id, varint length, bytes}
  kBlock = 2,    // BlockFramePrefix + zstd(columns); see block_codec.h
  kClock = 3,    // {u64 ticks, u64 monotonic_ns}
  kMeta = 4,     // JSON object: pid, ppid, node, kind, command, tick source, ticks_per_ns...
  kStats = 5,    // JSON object: events_recorded, events_dropped, bytes_written, ...
  kGpuActivity = 6,  // version 2: GPU activity rows; see gpu_activity_frame.h
};
inline constexpr uint8_t kMaxFrameType = 6;

struct FrameHeader {
  uint32_t magic;          // kFrameMagic
  uint8_t type;            // FrameType
  uint8_t reserved[3];
  uint32_t payload_bytes;
  uint32_t reserved2;
  uint64_t checksum;       // XXH64(payload, seed = type): covers the type byte too
};
static_assert(sizeof(FrameHeader) == 24);

inline constexpr uint32_t kMaxFramePayloadBytes = 64u << 20;

}  // namespace stepscope::store
