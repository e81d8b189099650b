// Compact, self-contained encoding of one block's records for the log.
//
// A block frame's payload is a fixed prefix followed by a zstd frame of five columns:
//
//   prefix: u64 seq | u32 tid | u32 record_count | u64 dropped_before | u32 columns_bytes
//   columns (before zstd):
//     kinds[n]   u8 each
//     phases[n]  u8 each (all zero except step records: long zero runs, free after zstd)
//     ticks      zigzag varint of the delta to the previous record's ticks
//     names      varint name ids
//     values     per kind: counters and double args as 8 raw bytes; step numbers as zigzag
//                delta to the previous step number; int args zigzag; string args varint;
//                system samples as milli-units (value x 1000, rounded) delta-coded against the
//                previous sample of the same metric in this block (escaped to 8 raw bytes when
//                out of range or not finite); begin/end/instant carry no value.
//
// Splitting columns lets zstd see runs of equal kinds and ids; delta coding keeps timestamps
// and slowly moving metrics to one or two bytes. Samples therefore keep 0.001 of their unit
// (0.001 % for utilisation, 1 mB/s for rates): far below what the sources resolve.
//
// Decoding validates every field and never reads outside the payload.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/format.h"

namespace stepscope::store {

struct BlockFramePrefix {
  uint64_t seq = 0;
  uint32_t tid = 0;
  uint32_t record_count = 0;
  uint64_t dropped_before = 0;
  uint32_t columns_bytes = 0;
};
inline constexpr size_t kBlockFramePrefixBytes = 28;
inline constexpr uint32_t kMaxRecordsPerBlock = 1u << 22;

struct DecodedBlock {
  uint64_t seq = 0;
  uint32_t tid = 0;
  uint64_t dropped_before = 0;
  std::vector<RawRecord> records;
};

// Encodes records (copied out of a ring block) into a block frame payload.
std::string EncodeBlock(uint64_t seq, uint32_t tid, uint64_t dropped_before,
                        std::span<const RawRecord> records, int zstd_level = 3);

// The same encoding with a zstd compression context kept between blocks: making and freeing one
// per block (as EncodeBlock does) costs more than compressing a 32 KiB block. Owned by one
// writer and used by one thread at a time (StreamWriter's flushes are serialised); not a
// thread_local, whose destructor may run before a library's atexit flush.
class BlockEncoder {
 public:
  BlockEncoder();
  ~BlockEncoder();
  BlockEncoder(const BlockEncoder&) = delete;
  BlockEncoder& operator=(const BlockEncoder&) = delete;

  std::string Encode(uint64_t seq, uint32_t tid, uint64_t dropped_before, std::span<const RawRecord> records,
                     int zstd_level);
  // One zstd frame of `input`, a small stream of a frame's columns (the GPU activity frame's: a
  // few KiB of skewed bytes), in the first bytes of `scratch`, with the same context: its size, 0
  // when it could not be made. `scratch` only grows, so one kept across calls is not zero-filled
  // up to the bound each time. The level's match finder is narrowed for such streams (matches of
  // 7 bytes or more within 16 KiB, a 1,024-entry table): 14 % fewer instructions and 2 % fewer
  // bytes than the level's own on a real trace's streams, which are short and mostly literals.
  // `literals_only`: for bytes that are skewed but do not repeat (the high planes of times), whose
  // matches save little: the match finder steps far over the input and zstd Huffman-codes what
  // it leaves as literals, ~16 instructions a byte where the narrowed finder's cost ~25 (on a
  // real trace, 3 % more bytes in all: what matches there were in such streams). Plain narrowed
  // parameters where the zstd library refuses to code literals with an accelerated finder (an
  // experimental parameter): never the raw literals that an accelerated finder alone would leave.
  size_t CompressInto(std::string_view input, int zstd_level, std::string& scratch, bool literals_only = false);

 private:
  struct Context;
  Context* context_;  // nullptr when zstd could not make one: every block then uses EncodeBlock's way
};

// Decodes a block frame payload; DataLoss with what was wrong on any inconsistency.
StatusOr<DecodedBlock> DecodeBlock(std::string_view payload);

// True when `record` is structurally valid (known kind and phase). Used on raw ring blocks.
bool IsValidRecord(const RawRecord& record);

}  // namespace stepscope::store
