#include "store/stream_reader.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "base/file_system.h"
#include "base/json_fields.h"
#include "store/log_file.h"
#include "store/stream_writer.h"
#include "store/varint.h"

namespace stepscope::store {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

struct RingSnapshot {
  std::vector<DecodedBlock> blocks;
  uint64_t dropped_events = 0;
  uint64_t dropped_write_failed = 0;
  uint64_t bytes = 0;
};

// Copies the published records of every non-free block out of a ring file.
StatusOr<RingSnapshot> ReadRing(const std::string& path, std::vector<std::string>& problems) {
  // A run's own regular file only: a FIFO would block the open, a device has no end.
  STEPSCOPE_ASSIGN_OR_RETURN(ScopedFd fd, OpenRegularFile(path, Symlinks::kRefuse));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError("stat '" + path + "'", errno);
  size_t size = static_cast<size_t>(st.st_size);
  if (size < kRingHeaderBytes) return DataLossError("'" + path + "' is shorter than a ring header");
  void* mapping = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (mapping == MAP_FAILED) return ErrnoError("map '" + path + "'", errno);
  const char* base = static_cast<const char*>(mapping);
  const auto* header = reinterpret_cast<const RingHeader*>(base);
  RingSnapshot snapshot;
  snapshot.bytes = size;
  auto unmap = [&] { munmap(mapping, size); };
  if (std::memcmp(header->magic, kRingMagic, sizeof kRingMagic) != 0) {
    unmap();
    return DataLossError("'" + path + "' is not a stepscope ring (bad magic)");
  }
  if (header->version < kOldestReadableFormatVersion || header->version > kFormatVersion) {
    const uint32_t version = header->version;  // read before the mapping goes away
    unmap();
    return UnimplementedError("'" + path + "' has format version " + std::to_string(version) +
                              "; this stepscope reads versions " + std::to_string(kOldestReadableFormatVersion) +
                              " to " + std::to_string(kFormatVersion));
  }
  if (header->block_bytes < sizeof(BlockHeader) + sizeof(RawRecord) || header->block_bytes % 64 != 0 ||
      header->block_count == 0) {
    unmap();
    return DataLossError("'" + path + "' has an inconsistent block layout");
  }
  // A ring cut short (a partial copy) still holds the blocks before the cut.
  uint64_t blocks_present = (size - kRingHeaderBytes) / header->block_bytes;
  uint32_t block_count = header->block_count;
  if (blocks_present < block_count) {
    problems.push_back(path + ": file holds " + std::to_string(blocks_present) + " of its " +
                       std::to_string(block_count) + " blocks (truncated); the missing ones are lost");
    block_count = static_cast<uint32_t>(blocks_present);
  }
  snapshot.dropped_events = header->dropped_events.load(std::memory_order_relaxed);
  snapshot.dropped_write_failed =
      std::min(snapshot.dropped_events, header->dropped_write_failed.load(std::memory_order_relaxed));
  const uint32_t capacity = static_cast<uint32_t>((header->block_bytes - sizeof(BlockHeader)) / sizeof(RawRecord));
  for (uint32_t i = 0; i < block_count; ++i) {
    const char* at = base + kRingHeaderBytes + size_t{i} * header->block_bytes;
    // The block may be changing under us: only atomic loads on the header, then re-check.
    auto* block = reinterpret_cast<const BlockHeader*>(at);
    // The writer gives every block its capacity before the ring's magic is written, and never
    // changes it: any other value (a zeroed page, say) is damage, whatever the state says.
    if (block->capacity != capacity) {
      problems.push_back(path + ": block " + std::to_string(i) + " has a corrupt header; skipped");
      continue;
    }
    uint32_t state = block->state.load(std::memory_order_acquire);
    if (state != static_cast<uint32_t>(BlockState::kOpen) && state != static_cast<uint32_t>(BlockState::kSealed)) {
      if (state > static_cast<uint32_t>(BlockState::kClaiming)) {
        problems.push_back(path + ": block " + std::to_string(i) + " has an invalid state; skipped");
      }
      continue;
    }
    uint64_t seq = block->seq;
    uint32_t tid = block->tid;
    if (block->check != BlockHeaderCheck(tid, seq, block->capacity)) {
      problems.push_back(path + ": block " + std::to_string(i) + " has a corrupt header; skipped");
      continue;
    }
    uint32_t count = block->count.load(std::memory_order_acquire);
    if (count > capacity) {
      problems.push_back(path + ": block " + std::to_string(i) + " claims more records than fit; skipped");
      continue;
    }
    DecodedBlock copy;
    copy.seq = seq;
    copy.tid = tid;
    copy.dropped_before = block->dropped_before;
    copy.records.resize(count);
    if (count > 0) std::memcpy(copy.records.data(), at + sizeof(BlockHeader), size_t{count} * sizeof(RawRecord));
    std::atomic_thread_fence(std::memory_order_acquire);
    if (block->seq != seq || block->state.load(std::memory_order_acquire) == static_cast<uint32_t>(BlockState::kClaiming) ||
        block->state.load(std::memory_order_relaxed) == static_cast<uint32_t>(BlockState::kFree)) {
      continue;  // flushed (so it is in the log, read next) or reused while we copied
    }
    size_t valid = 0;
    while (valid < copy.records.size() && IsValidRecord(copy.records[valid])) ++valid;
    if (valid < copy.records.size()) {
      problems.push_back(path + ": block " + std::to_string(i) + " has " +
                         std::to_string(copy.records.size() - valid) + " invalid records; kept the " +
                         std::to_string(valid) + " before them");
      copy.records.resize(valid);
    }
    snapshot.blocks.push_back(std::move(copy));
  }
  unmap();
  return snapshot;
}

void ParseStrings(std::string_view payload, std::unordered_map<uint32_t, std::string>& strings, bool* ok) {
  ByteReader reader(payload);
  while (reader.remaining() > 0) {
    uint64_t id, length;
    std::string_view text;
    if (!reader.ReadVarint(&id) || !reader.ReadVarint(&length) || id > UINT32_MAX ||
        !reader.ReadBytes(length, &text)) {
      *ok = false;
      return;
    }
    strings[static_cast<uint32_t>(id)] = std::string(text);
  }
}

// One copy of a block: from the ring (already decoded) or a log frame (decoded when its turn
// comes). `order` is the order ReadStream used to meet the copies: ring first, then the log.
struct BlockCopy {
  uint64_t seq = 0;
  uint32_t records = 0;  // as the header says
  uint32_t order = 0;
  size_t ring_index = SIZE_MAX;  // into the ring snapshot, or SIZE_MAX for a log frame
  std::string_view payload;
  uint64_t offset = 0;  // of the log frame
};

// seq and record count from a block frame's prefix without decompressing it.
bool PeekBlockPrefix(std::string_view payload, uint64_t* seq, uint32_t* records) {
  ByteReader reader(payload);
  uint32_t tid;
  return reader.ReadFixed(seq) && reader.ReadFixed(&tid) && reader.ReadFixed(records);
}

}  // namespace

Status FollowStream(const std::string& directory, StreamContents& contents, StreamCursor& cursor, LogTail tail,
                    const StreamBlockCallback& on_block, const StreamGpuRowsCallback& on_gpu_rows) {
  const std::string& name = contents.name;
  contents.problems.clear();
  const std::string stem = directory + "/" + name;
  const std::string ring_path = stem + kRingSuffix;
  const std::string log_path = stem + kLogSuffix;
  std::vector<BlockCopy> copies;
  RingSnapshot ring_blocks;

  contents.has_ring = false;
  contents.ring_bytes = 0;
  if (access(ring_path.c_str(), F_OK) == 0) {
    auto ring = ReadRing(ring_path, contents.problems);
    if (ring.ok()) {
      contents.has_ring = true;
      contents.ring_bytes = ring->bytes;
      contents.dropped_events = std::max(contents.dropped_events, ring->dropped_events);
      contents.dropped_write_failed = std::max(contents.dropped_write_failed, ring->dropped_write_failed);
      ring_blocks = std::move(*ring);
      for (size_t i = 0; i < ring_blocks.blocks.size(); ++i) {
        BlockCopy copy;
        copy.seq = ring_blocks.blocks[i].seq;
        copy.records = static_cast<uint32_t>(ring_blocks.blocks[i].records.size());
        copy.order = static_cast<uint32_t>(copies.size());
        copy.ring_index = i;
        copies.push_back(copy);
      }
    } else {
      contents.problems.push_back(ring.status().message() + "; its unflushed events are lost");
    }
  }

  // Problems of single frames, reported in file order whatever order they are found in.
  std::vector<std::pair<uint64_t, std::string>> frame_problems;
  std::vector<LogFrame> gpu_frames;  // decoded after the blocks, in log order
  const bool first_read = cursor.log_offset == 0;
  auto log_bytes = ReadRegularFile(log_path, Symlinks::kRefuse, kNoSizeLimit, cursor.log_offset);
  if (!log_bytes.ok()) {
    if (!contents.has_ring && first_read) return log_bytes.status();
    contents.problems.push_back(log_bytes.status().message());
  } else {
    contents.log_bytes = cursor.log_offset + log_bytes->size();
    StatusOr<LogParseResult> parsed = first_read ? ParseLog(*log_bytes, tail)
                                                 : StatusOr<LogParseResult>(ParseLogTail(*log_bytes, cursor.log_offset, tail));
    if (!parsed.ok() && log_bytes->size() < sizeof(LogHeader) && !contents.has_ring) {
      // A log shorter than its header: the writer could not write it (said once, as such, by the
      // caller), or, while it may grow, has not written its header yet.
      if (tail == LogTail::kFinal) contents.unwritten = true;
    } else if (!parsed.ok()) {
      contents.problems.push_back("'" + log_path + "': " + parsed.status().message());
    } else {
      cursor.log_offset = parsed->parsed_until;
      contents.unwritten = false;
      for (const std::string& problem : parsed->problems) contents.problems.push_back("'" + log_path + "': " + problem);
      for (const LogFrame& frame : parsed->frames) {
        contents.frame_bytes[static_cast<size_t>(frame.type)] += sizeof(FrameHeader) + frame.payload.size();
        switch (frame.type) {
          case FrameType::kStrings: {
            bool ok = true;
            ParseStrings(frame.payload, contents.strings, &ok);
            if (!ok) {
              frame_problems.emplace_back(frame.offset, "'" + log_path + "': a string table frame is malformed; kept its first entries");
            }
            break;
          }
          case FrameType::kBlock: {
            BlockCopy copy;
            copy.order = static_cast<uint32_t>(copies.size());
            copy.payload = frame.payload;
            copy.offset = frame.offset;
            // A prefix that does not even parse fails DecodeBlock below, which says why.
            if (!PeekBlockPrefix(frame.payload, &copy.seq, &copy.records)) copy.seq = copy.records = 0;
            copies.push_back(copy);
            break;
          }
          case FrameType::kClock: {
            ByteReader reader(frame.payload);
            ClockPair pair;
            if (reader.ReadFixed(&pair.ticks) && reader.ReadFixed(&pair.monotonic_ns)) contents.clock_pairs.push_back(pair);
            break;
          }
          case FrameType::kMeta:
            contents.meta_json = std::string(frame.payload);
            break;
          case FrameType::kStats:
            contents.last_stats_json = std::string(frame.payload);
            break;
          case FrameType::kGpuActivity:
            gpu_frames.push_back(frame);
            break;
        }
      }
    }
  }
  if (!contents.last_stats_json.empty()) {
    auto stats = nlohmann::json::parse(contents.last_stats_json, nullptr, /*allow_exceptions=*/false);
    contents.dropped_events = std::max(contents.dropped_events, JsonUint(stats, "events_dropped", 0));
    contents.dropped_write_failed =
        std::max(contents.dropped_write_failed, JsonUint(stats, "events_dropped_write_failed", 0));
  }
  contents.dropped_write_failed = std::min(contents.dropped_write_failed, contents.dropped_events);
  if (tail == LogTail::kFinal && contents.meta_json.empty() && copies.empty() && gpu_frames.empty() &&
      !contents.has_ring && cursor.delivered.empty()) {
    contents.unwritten = true;
  }
  std::sort(contents.clock_pairs.begin(), contents.clock_pairs.end(),
            [](const ClockPair& a, const ClockPair& b) { return a.ticks < b.ticks; });

  std::sort(copies.begin(), copies.end(), [](const BlockCopy& a, const BlockCopy& b) {
    return a.seq != b.seq ? a.seq < b.seq : a.order < b.order;
  });
  auto already_delivered = [&](uint64_t seq) -> uint32_t {
    auto it = cursor.delivered.find(seq);
    return it == cursor.delivered.end() ? 0 : it->second;
  };
  contents.block_records = 0;
  for (size_t i = 0; i < copies.size();) {
    uint32_t largest = 0;
    size_t j = i;
    for (; j < copies.size() && copies[j].seq == copies[i].seq; ++j) largest = std::max(largest, copies[j].records);
    const uint32_t delivered = already_delivered(copies[i].seq);
    contents.block_records += largest > delivered ? largest - delivered : 0;
    i = j;
  }

  // Per sequence number, decode every copy that holds records not handed over yet (a damaged
  // one is reported) and hand over the new records of the first of those with the most records.
  std::vector<DecodedBlock> decoded;
  for (size_t i = 0; i < copies.size();) {
    decoded.clear();
    size_t j = i;
    const uint32_t delivered = already_delivered(copies[i].seq);
    for (; j < copies.size() && copies[j].seq == copies[i].seq; ++j) {
      const BlockCopy& copy = copies[j];
      // A copy no larger than what was handed over adds nothing (and was checked before).
      if (delivered > 0 && copy.records <= delivered) continue;
      if (copy.ring_index != SIZE_MAX) {
        decoded.push_back(std::move(ring_blocks.blocks[copy.ring_index]));
        continue;
      }
      auto block = DecodeBlock(copy.payload);
      if (block.ok()) {
        decoded.push_back(std::move(*block));
      } else {
        frame_problems.emplace_back(copy.offset, "'" + log_path + "': block at offset " + std::to_string(copy.offset) +
                                                     " skipped: " + block.status().message());
      }
    }
    // Copies that decoded keep their seq; one whose prefix did not parse never gets here.
    DecodedBlock* best = nullptr;
    for (DecodedBlock& block : decoded) {
      if (best == nullptr || block.records.size() > best->records.size()) best = &block;
    }
    if (best != nullptr && best->records.size() > delivered) {
      const uint64_t seq = best->seq;
      const auto total = static_cast<uint32_t>(best->records.size());
      if (delivered > 0) best->records.erase(best->records.begin(), best->records.begin() + delivered);
      on_block(contents, *best);
      cursor.delivered[seq] = total;
    }
    i = j;
  }
  for (const LogFrame& frame : gpu_frames) {
    auto rows = DecodeGpuActivityFrame(frame.payload, contents.strings, contents.gpu_launch_configs);
    if (!rows.ok()) {
      frame_problems.emplace_back(frame.offset, "'" + log_path + "': GPU activity frame at offset " +
                                                    std::to_string(frame.offset) + " skipped: " + rows.status().message());
      continue;
    }
    if (on_gpu_rows) on_gpu_rows(contents, *rows);
  }
  std::stable_sort(frame_problems.begin(), frame_problems.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [offset, problem] : frame_problems) contents.problems.push_back(std::move(problem));
  return OkStatus();
}

StatusOr<StreamContents> ScanStream(const std::string& directory, const std::string& name,
                                    const StreamBlockCallback& on_block, const StreamGpuRowsCallback& on_gpu_rows) {
  StreamContents contents;
  contents.name = name;
  StreamCursor cursor;
  STEPSCOPE_RETURN_IF_ERROR(FollowStream(directory, contents, cursor, LogTail::kFinal, on_block, on_gpu_rows));
  return contents;
}

StatusOr<StreamContents> ReadStream(const std::string& directory, const std::string& name) {
  std::vector<DecodedBlock> blocks;
  std::vector<GpuActivityRow> gpu_rows;
  STEPSCOPE_ASSIGN_OR_RETURN(
      StreamContents contents,
      ScanStream(
          directory, name, [&](const StreamContents&, const DecodedBlock& block) { blocks.push_back(block); },
          [&](const StreamContents&, std::span<const GpuActivityRow> rows) {
            gpu_rows.insert(gpu_rows.end(), rows.begin(), rows.end());
          }));
  contents.blocks = std::move(blocks);
  contents.gpu_rows = std::move(gpu_rows);
  return contents;
}

StatusOr<std::vector<std::string>> ListStreams(const std::string& directory) {
  LocalFileSystem fs;
  STEPSCOPE_ASSIGN_OR_RETURN(auto entries, fs.ListDirectory(directory));
  std::vector<std::string> names;
  for (const std::string& entry : entries) {
    for (const char* suffix : {kLogSuffix, kRingSuffix}) {
      if (EndsWith(entry, suffix)) names.push_back(entry.substr(0, entry.size() - std::strlen(suffix)));
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Records per block sequence number that the log holds in decodable form. An unreadable log
// is an error: compaction must then leave the ring alone rather than trust it.
static StatusOr<std::map<uint64_t, uint32_t>> LoggedBlockCounts(const std::string& log_path) {
  std::map<uint64_t, uint32_t> counts;
  STEPSCOPE_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(log_path, Symlinks::kRefuse));
  auto parsed = ParseLog(bytes);
  if (!parsed.ok()) return parsed.status().WithContext("'" + log_path + "'");
  for (const LogFrame& frame : parsed->frames) {
    if (frame.type != FrameType::kBlock) continue;
    auto block = DecodeBlock(frame.payload);
    if (!block.ok()) continue;  // a copy that does not decode does not count as kept
    uint32_t& count = counts[block->seq];
    count = std::max(count, static_cast<uint32_t>(block->records.size()));
  }
  return counts;
}

Status CompactStream(const std::string& directory, const std::string& name) {
  const std::string stem = directory + "/" + name;
  const std::string ring_path = stem + kRingSuffix;
  const std::string log_path = stem + kLogSuffix;
  auto ring_file = OpenRegularFile(ring_path, Symlinks::kRefuse);
  if (!ring_file.ok()) {
    if (ring_file.status().code() == StatusCode::kNotFound) return OkStatus();  // already compacted
    return ring_file.status();
  }
  const int fd = ring_file->get();  // closed (and the lock released) when ring_file goes
  // The writer holds an exclusive flock for its whole life; getting it means it is gone. We
  // keep it until the ring is removed so a second compactor waits its turn.
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return UnavailableError("'" + ring_path + "' is still being written by a live process");
  }
  std::vector<std::string> problems;
  auto ring = ReadRing(ring_path, problems);
  if (!ring.ok()) {
    return ring.status().WithContext("compacting stream '" + name + "' (left as it is)");
  }
  auto logged_or = LoggedBlockCounts(log_path);
  if (!logged_or.ok()) {
    return logged_or.status().WithContext("compacting stream '" + name + "' (ring kept)");
  }
  const std::map<uint64_t, uint32_t>& logged = *logged_or;
  auto log = LogWriter::OpenForAppend(log_path);
  if (!log.ok()) {
    return log.status();
  }
  Status status = OkStatus();
  for (const DecodedBlock& block : ring->blocks) {
    auto it = logged.find(block.seq);
    if (block.records.empty() || (it != logged.end() && it->second >= block.records.size())) continue;
    status = (*log)->Append(FrameType::kBlock, EncodeBlock(block.seq, block.tid, block.dropped_before, block.records));
    if (!status.ok()) break;
  }
  if (status.ok()) {
    std::string stats = "{\"events_dropped\":" + std::to_string(ring->dropped_events) +
                        ",\"events_dropped_write_failed\":" + std::to_string(ring->dropped_write_failed) +
                        ",\"compacted\":true}";
    status = (*log)->Append(FrameType::kStats, stats);
  }
  if (status.ok()) status = (*log)->Sync();
  // Only a fully written log may replace the ring; otherwise both stay and readers merge them.
  if (status.ok() && unlink(ring_path.c_str()) != 0) status = ErrnoError("remove '" + ring_path + "'", errno);
  return status;
}

StreamClock::StreamClock(std::vector<ClockPair> pairs, double ticks_per_ns)
    : pairs_(std::move(pairs)), default_rate_(ticks_per_ns > 0 ? ticks_per_ns : 1.0) {
  for (size_t i = 0; i + 1 < pairs_.size(); ++i) {
    double dt = static_cast<double>(pairs_[i + 1].ticks - pairs_[i].ticks);
    double dns = static_cast<double>(pairs_[i + 1].monotonic_ns - pairs_[i].monotonic_ns);
    // Pairs closer than 10 ms give a noisy rate; keep the default for those segments.
    rates_.push_back(dns > 1e7 && dt > 0 ? dt / dns : default_rate_);
  }
}

int64_t StreamClock::ToMonotonicNs(uint64_t ticks) const {
  if (pairs_.empty()) return static_cast<int64_t>(static_cast<double>(ticks) / default_rate_);
  // Segment whose start is the last pair at or before `ticks` (the first one if none).
  auto it = std::upper_bound(pairs_.begin(), pairs_.end(), ticks,
                             [](uint64_t t, const ClockPair& p) { return t < p.ticks; });
  size_t index = it == pairs_.begin() ? 0 : static_cast<size_t>(it - pairs_.begin()) - 1;
  double rate = default_rate_;
  if (index < rates_.size()) rate = rates_[index];
  else if (!rates_.empty()) rate = rates_.back();
  const ClockPair& anchor = pairs_[index];
  double delta = static_cast<double>(static_cast<int64_t>(ticks - anchor.ticks));
  // Damaged calibration can make the offset absurd; clamp before converting (the conversion of
  // an out-of-range double is undefined).
  double offset_ns = std::clamp(delta / rate, -4.0e18, 4.0e18);
  return static_cast<int64_t>(anchor.monotonic_ns) + static_cast<int64_t>(offset_ns);
}

}  // namespace stepscope::store
