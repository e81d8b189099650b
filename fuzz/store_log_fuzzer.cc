// libFuzzer target: a stream's .log bytes -> ParseLog, and every frame's payload -> its decoder
// (DecodeBlock for block frames, DecodeGpuActivityFrame for GPU activity frames, the varint
// string table for string frames, clock pairs).
//
// Each input is tried three ways: as a whole log file; as a log whose frame checksums are
// recomputed first (so mutated payloads reach the decoders instead of stopping at the
// checksum); and as a bare block-frame payload and GPU-activity-frame payload. Besides "no crash, no ASan report" it checks
// properties a reader relies on, and traps when one fails:
//   - frames returned by ParseLog lie inside the input, in order, without overlap, with a valid
//     type and a matching checksum;
//   - a block that decodes has exactly the records its prefix announces, all valid;
//   - DecodeBlock(EncodeBlock(records)) succeeds for any decoded records and, after one
//     normalisation (sample values are kept in milli-units), reproduces them bit for bit.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fuzz_inputs.h"
#include "store/block_codec.h"
#include "store/format.h"
#include "store/gpu_activity_frame.h"
#include "store/log_file.h"
#include "store/varint.h"

namespace stepscope::fuzz {
namespace {

bool SameRecords(const store::DecodedBlock& a, const store::DecodedBlock& b) {
  if (a.seq != b.seq || a.tid != b.tid || a.dropped_before != b.dropped_before) return false;
  if (a.records.size() != b.records.size()) return false;
  return a.records.empty() || std::memcmp(a.records.data(), b.records.data(), a.records.size() * sizeof(store::RawRecord)) == 0;
}

void CheckBlock(std::string_view payload) {
  auto block = store::DecodeBlock(payload);
  if (!block.ok()) return;
  uint32_t announced;
  std::memcpy(&announced, payload.data() + 12, sizeof announced);  // prefix: seq u64, tid u32, count u32
  FUZZ_CHECK(block->records.size() == announced);
  for (const store::RawRecord& record : block->records) {
    FUZZ_CHECK(store::IsValidRecord(record));
    FUZZ_CHECK(record.reserved == 0);
  }
  // Encoding what was decoded must give a block the decoder accepts...
  auto normalised = store::DecodeBlock(store::EncodeBlock(block->seq, block->tid, block->dropped_before, block->records));
  FUZZ_CHECK(normalised.ok());
  FUZZ_CHECK(normalised->records.size() == block->records.size());
  // ...and from then on the round trip is exact.
  auto again = store::DecodeBlock(
      store::EncodeBlock(normalised->seq, normalised->tid, normalised->dropped_before, normalised->records));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(SameRecords(*normalised, *again));
}

bool SameRows(const std::vector<store::GpuActivityRow>& a, const std::vector<store::GpuActivityRow>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const store::GpuActivityRow &x = a[i], &y = b[i];
    if (x.kind != y.kind || x.start_ticks != y.start_ticks || x.end_ticks != y.end_ticks || x.name_id != y.name_id ||
        x.correlation != y.correlation || x.bytes != y.bytes || x.config_id != y.config_id ||
        x.callback_id != y.callback_id || x.device != y.device || x.stream != y.stream || x.thread_id != y.thread_id) {
      return false;
    }
  }
  return true;
}

void CheckGpuFrame(std::string_view payload) {
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint32_t, store::GpuLaunchConfig> configs;
  auto rows = store::DecodeGpuActivityFrame(payload, strings, configs);
  if (!rows.ok()) {
    FUZZ_CHECK(strings.empty() && configs.empty());  // a damaged frame declares nothing
    return;
  }
  uint32_t announced;
  std::memcpy(&announced, payload.data(), sizeof announced);
  FUZZ_CHECK(rows->size() == announced);
  store::GpuActivityFrameEncoder encoder;
  for (const auto& [id, text] : strings) encoder.DeclareName(id, text);
  for (const auto& [id, config] : configs) encoder.DeclareLaunchConfig(id, config);
  for (const store::GpuActivityRow& row : *rows) {
    FUZZ_CHECK(static_cast<uint8_t>(row.kind) >= 1 && static_cast<uint8_t>(row.kind) <= store::kMaxGpuRowKind);
    const uint32_t track = store::GpuRowTrack(row);
    if (!encoder.Fits(track)) return;  // more tracks than one frame of the writer's holds
    encoder.Add(row, track);
  }
  std::string again;
  store::BlockEncoder compressor;
  encoder.Finish(compressor, 1, again);
  std::unordered_map<uint32_t, std::string> strings_again;
  std::unordered_map<uint32_t, store::GpuLaunchConfig> configs_again;
  auto rows_again = store::DecodeGpuActivityFrame(again, strings_again, configs_again);
  FUZZ_CHECK(rows_again.ok());
  // The encoder writes rows grouped by kind (a frame in row order comes back so regrouped;
  // within a kind, and so on every track, the order is kept).
  std::vector<store::GpuActivityRow> grouped = *rows;
  std::stable_sort(grouped.begin(), grouped.end(),
                   [](const store::GpuActivityRow& a, const store::GpuActivityRow& b) { return a.kind < b.kind; });
  FUZZ_CHECK(SameRows(grouped, *rows_again));
  FUZZ_CHECK(strings_again == strings);
  FUZZ_CHECK(configs_again == configs);
}

void CheckStrings(std::string_view payload) {
  store::ByteReader reader(payload);
  while (reader.remaining() > 0) {
    uint64_t id, length;
    std::string_view text;
    if (!reader.ReadVarint(&id) || !reader.ReadVarint(&length) || !reader.ReadBytes(length, &text)) return;
    FUZZ_CHECK(text.data() >= payload.data() && text.data() + text.size() <= payload.data() + payload.size());
  }
}

void CheckLog(std::string_view bytes) {
  auto parsed = store::ParseLog(bytes);
  if (!parsed.ok()) return;
  uint64_t previous_end = 0;
  for (const store::LogFrame& frame : parsed->frames) {
    FUZZ_CHECK(frame.offset >= previous_end);
    FUZZ_CHECK(frame.offset + sizeof(store::FrameHeader) + frame.payload.size() <= bytes.size());
    FUZZ_CHECK(frame.payload.data() == bytes.data() + frame.offset + sizeof(store::FrameHeader));
    FUZZ_CHECK(static_cast<uint8_t>(frame.type) >= 1 && static_cast<uint8_t>(frame.type) <= store::kMaxFrameType);
    store::FrameHeader header;
    std::memcpy(&header, bytes.data() + frame.offset, sizeof header);
    FUZZ_CHECK(header.checksum == store::FrameChecksum(frame.type, frame.payload));
    previous_end = frame.offset + sizeof(store::FrameHeader) + frame.payload.size();
    switch (frame.type) {
      case store::FrameType::kBlock: CheckBlock(frame.payload); break;
      case store::FrameType::kStrings: CheckStrings(frame.payload); break;
      case store::FrameType::kGpuActivity: CheckGpuFrame(frame.payload); break;
      default: break;  // clock, meta, stats: read by ReadStream (store_stream_fuzzer)
    }
  }
}

// Recomputes the checksum of every plausible frame header (right magic, payload inside the
// input), walking like the parser does.
std::string WithRepairedChecksums(std::string_view bytes) {
  std::string out(bytes);
  size_t pos = sizeof(store::LogHeader);
  while (pos + sizeof(store::FrameHeader) <= out.size()) {
    store::FrameHeader header;
    std::memcpy(&header, out.data() + pos, sizeof header);
    if (header.magic != store::kFrameMagic || header.payload_bytes > out.size() - pos - sizeof header) {
      ++pos;
      continue;
    }
    header.checksum = store::FrameChecksum(static_cast<store::FrameType>(header.type),
                                           std::string_view(out.data() + pos + sizeof header, header.payload_bytes));
    std::memcpy(out.data() + pos, &header, sizeof header);
    pos += sizeof header + header.payload_bytes;
  }
  return out;
}

}  // namespace
}  // namespace stepscope::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::fuzz;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckLog(bytes);
  std::string repaired = WithRepairedChecksums(bytes);
  if (repaired != bytes) CheckLog(repaired);
  CheckBlock(bytes);
  CheckGpuFrame(bytes);
  return 0;
}
