#include "gpu_tracer/gpu_stream_writer.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "base/clock.h"
#include "store/format.h"

namespace stepscope {
namespace {

using store::GpuDeviceTrack;
using store::GpuDeviceTrackId;
using store::GpuHostTrack;
using store::GpuHostTrackId;
using store::kGpuTrackDeviceUnknown;
using store::kGpuTrackStreamUnknown;

// A pair every 10 s, as the recorder writes: CUPTI's clock and CLOCK_MONOTONIC drift apart by
// parts per million at most, and readers interpolate between pairs.
constexpr uint64_t kCalibrationIntervalNs = 10'000'000'000;
// Kernel names are bounded by the program, but a hostile or odd job could make many; past this
// the table stops growing and events take the placeholder name.
constexpr size_t kMaxNames = 1u << 20;
constexpr size_t kMaxOpenRanges = 1u << 16;
// The most records one event takes (a kernel: begin, end and 10 arguments).
constexpr uint32_t kMaxRecordsPerEvent = 16;

// Kineto's spellings, so device events read the same whichever profiler recorded them.
const char* MemcpyKindName(GpuMemcpyKind kind) {
  static constexpr const char* kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  const auto index = static_cast<size_t>(kind);
  return index < std::size(kNames) ? kNames[index] : "Unknown";
}

const char* MemoryKindName(GpuMemoryKind kind) {
  static constexpr const char* kNames[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                           "Array",   "Managed",  "Device Static", "Managed Static"};
  const auto index = static_cast<size_t>(kind);
  return index < std::size(kNames) ? kNames[index] : "Unknown";
}

const char* SyncName(GpuSyncKind kind) {
  switch (kind) {
    case GpuSyncKind::kEventSync: return "Event Sync";
    case GpuSyncKind::kStreamWaitEvent: return "Stream Wait Event";
    case GpuSyncKind::kStreamSync: return "Stream Sync";
    case GpuSyncKind::kContextSync: return "Context Sync";
    case GpuSyncKind::kUnknown: break;
  }
  return "Unknown Sync";
}

const char* OverheadName(uint32_t kind) {
  switch (kind) {
    case 1: return "Driver Compiler";
    case 1u << 16: return "Buffer Flush";
    case 2u << 16: return "Instrumentation";
    case 3u << 16: return "Resource";
    case 4u << 16: return "Runtime Triggered Module Loading";
    case 5u << 16: return "Lazy Function Loading";
    case 6u << 16: return "Command Buffer Full";
    case 7u << 16: return "Activity Buffer Request";
    case 8u << 16: return "UVM Activity Init";
    default: return "Unknown Overhead";
  }
}

uint64_t IntBits(int64_t value) { return static_cast<uint64_t>(value); }

std::string ReadCommandLine() {
  FILE* file = std::fopen("/proc/self/cmdline", "rb");
  if (file == nullptr) return "";
  std::string raw;
  char chunk[4096];
  size_t read = 0;
  while ((read = std::fread(chunk, 1, sizeof chunk, file)) > 0 && raw.size() < 65536) raw.append(chunk, read);
  std::fclose(file);
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

}  // namespace

GpuStreamWriter::GpuStreamWriter(GpuStreamWriterOptions options) : options_(std::move(options)) {
  std::random_device entropy;
  char name[64];
  std::snprintf(name, sizeof name, "gpu-%d-%04x", static_cast<int>(options_.pid), entropy() & 0xFFFF);
  name_ = name;
}

GpuStreamWriter::~GpuStreamWriter() = default;

bool GpuStreamWriter::EnsureStream(uint64_t gpu_timestamp_ns) {
  if (stream_ != nullptr) return true;
  if (finished_ || !error_.empty()) return false;
  // The anchor pairs CUPTI's clock with the node's; taken together, they are apart by the two
  // clock reads only.
  const uint64_t gpu_now = gpu_timestamp_ns != 0 ? gpu_timestamp_ns
                           : options_.gpu_clock_ns ? options_.gpu_clock_ns()
                                                   : 0;
  const ClockPair anchor{gpu_now != 0 ? gpu_now : MonotonicNowNs(), MonotonicNowNs()};
  nlohmann::json meta = {
      {"kind", store::kGpuStreamKind},
      {"pid", static_cast<int64_t>(options_.pid)},
      {"ppid", static_cast<int64_t>(getppid())},
      {"command", ReadCommandLine()},
      {"format_version", store::kFormatVersion},
      {"tick_source", gpu_now != 0 ? "cupti" : "monotonic_ns"},
      {"ticks_per_ns", 1.0},
      {"clock_anchor", {{"monotonic_ns", anchor.monotonic_ns}, {"realtime_ns", RealtimeNowNs()}}},
      {"block_bytes", options_.block_bytes},
      {"block_count", options_.block_count},
  };
  for (const char* variable : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK"}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && value[0] != '\0') meta["ranks"][variable] = value;
  }
  if (options_.meta_extra.is_object()) meta.update(options_.meta_extra);
  store::StreamWriterOptions stream_options;
  stream_options.directory = options_.node_dir;
  stream_options.name = name_;
  stream_options.block_bytes = options_.block_bytes;
  stream_options.block_count = options_.block_count;
  stream_options.meta_json = meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  stream_options.clock_anchor = anchor;
  auto stream = store::StreamWriter::Create(stream_options);
  if (!stream.ok()) {
    error_ = "GPU records cannot be written into '" + options_.node_dir + "': " + stream.status().message();
    return false;
  }
  stream_ = std::move(*stream);
  next_calibration_ns_ = MonotonicNowNs() + kCalibrationIntervalNs;
  keys_.correlation = Intern("correlation");
  keys_.grid[0] = Intern("grid_x"), keys_.grid[1] = Intern("grid_y"), keys_.grid[2] = Intern("grid_z");
  keys_.block[0] = Intern("block_x"), keys_.block[1] = Intern("block_y"), keys_.block[2] = Intern("block_z");
  keys_.registers = Intern("registers per thread");
  keys_.shared_memory = Intern("shared memory");
  keys_.bytes = Intern("bytes");
  keys_.cbid = Intern("cbid");
  keys_.device = Intern("device");
  keys_.stream = Intern("stream");
  return true;
}

uint32_t GpuStreamWriter::Intern(std::string_view text) {
  auto it = names_.find(text);
  if (it != names_.end()) return it->second;
  if (names_.size() >= kMaxNames) {
    ++names_over_limit_;
    text = "<too many names>";
    it = names_.find(text);
    if (it != names_.end()) return it->second;
  }
  const auto id = static_cast<uint32_t>(names_.size() + 1);
  // In the log before any record can use it (the ring is the file: a reader may see the record
  // at once).
  if (Status status = stream_->AppendStrings({{id, std::string(text)}}); !status.ok()) return 0;
  names_.emplace(std::string(text), id);
  return id;
}

uint32_t GpuStreamWriter::InternCString(const char* text) {
  auto known = names_by_address_.find(text);
  if (known != names_by_address_.end() && std::strncmp(text, known->second.text.data(), known->second.text.size()) == 0 &&
      text[known->second.text.size()] == '\0') {
    return known->second.id;
  }
  const uint32_t id = Intern(text);
  auto stored = names_.find(std::string_view(text));
  if (id != 0 && stored != names_.end() && names_by_address_.size() < kMaxNames) {
    names_by_address_[text] = {stored->first, id};  // the map's key: stable while the map lives
  }
  return id;
}

GpuStreamWriter::Track* GpuStreamWriter::Reserve(uint32_t track_id, uint32_t records) {
  Track& track = tracks_[track_id];
  if (track.block != nullptr && static_cast<uint32_t>(track.end - track.next) >= records) return &track;
  store::RingFile& ring = stream_->ring();
  if (track.block != nullptr) {
    ring.Seal(track.block);
    track.block = nullptr;
  }
  store::BlockHeader* block = ring.Claim(track_id, track.dropped_since_block);
  if (block == nullptr) {
    // Every block is sealed and waiting (the log is slow or failing) or open on other tracks.
    FlushAndMaybeCalibrate(false);
    block = ring.Claim(track_id, track.dropped_since_block);
  }
  if (block == nullptr || block->capacity < records) {
    if (block != nullptr) ring.Seal(block);
    const auto cause = log_write_failing_ ? store::RingFile::DropCause::kWriteFailed
                                          : store::RingFile::DropCause::kBuffersFull;
    ring.CountDropped(1, cause);
    (log_write_failing_ ? dropped_write_failed_ : dropped_store_full_)++;
    ++track.dropped_since_block;
    return nullptr;
  }
  track.block = block;
  track.first = track.next = store::RingFile::Records(block);
  track.end = track.first + block->capacity;
  track.dropped_since_block = 0;
  return &track;
}

void GpuStreamWriter::Put(Track& track, uint64_t ticks, store::RecordKind kind, uint32_t name_id, uint64_t value) {
  store::RawRecord* record = track.next++;
  record->ticks = ticks;
  record->name_id = name_id;
  record->kind = static_cast<uint8_t>(kind);
  record->phase = 0;
  record->reserved = 0;
  record->value = value;
}

void GpuStreamWriter::Publish(Track& track) {
  track.block->count.store(static_cast<uint32_t>(track.next - track.first), std::memory_order_release);
}

void GpuStreamWriter::OnRecord(const GpuActivityRecord& r) {
  if (!EnsureStream(r.start_ns)) return;
  // Names first (strings frames), then the event's records into its track's block.
  struct Arg {
    uint32_t key;
    int64_t value;
  };
  Arg args[kMaxRecordsPerEvent];
  uint32_t arg_count = 0;
  auto arg = [&](uint32_t key, int64_t value) { args[arg_count++] = {key, value}; };
  uint32_t name_id = 0;
  uint32_t track_id = 0;
  bool device_work = true;
  GpuDeviceTrack device_track = GpuDeviceTrack::kKernel;
  switch (r.kind) {
    case GpuActivityKind::kKernel:
      name_id = r.name != nullptr ? InternCString(r.name) : Intern("<unnamed kernel>");
      device_track = GpuDeviceTrack::kKernel;
      arg(keys_.correlation, r.correlation);
      arg(keys_.grid[0], r.grid[0]);
      if (r.grid[1] != 1) arg(keys_.grid[1], r.grid[1]);
      if (r.grid[2] != 1) arg(keys_.grid[2], r.grid[2]);
      arg(keys_.block[0], r.block[0]);
      if (r.block[1] != 1) arg(keys_.block[1], r.block[1]);
      if (r.block[2] != 1) arg(keys_.block[2], r.block[2]);
      arg(keys_.registers, r.registers_per_thread);
      arg(keys_.shared_memory, r.shared_memory_bytes);
      break;
    case GpuActivityKind::kMemcpy:
      name_id = Intern(std::string("Memcpy ") + MemcpyKindName(r.memcpy_kind) + " (" + MemoryKindName(r.src_memory) +
                       " -> " + MemoryKindName(r.dst_memory) + ")");
      device_track = GpuDeviceTrack::kMemcpy;
      arg(keys_.correlation, r.correlation);
      arg(keys_.bytes, static_cast<int64_t>(r.bytes));
      break;
    case GpuActivityKind::kMemset:
      name_id = Intern(std::string("Memset (") + MemoryKindName(r.src_memory) + ")");
      device_track = GpuDeviceTrack::kMemset;
      arg(keys_.correlation, r.correlation);
      arg(keys_.bytes, static_cast<int64_t>(r.bytes));
      break;
    case GpuActivityKind::kSync:
      name_id = Intern(SyncName(r.sync_kind));
      device_track = GpuDeviceTrack::kSync;
      if (r.correlation != 0) arg(keys_.correlation, r.correlation);
      break;
    case GpuActivityKind::kRuntimeApi:
    case GpuActivityKind::kDriverApi:
      device_work = false;
      name_id = r.name != nullptr ? InternCString(r.name) : Intern("<unnamed call>");
      track_id = GpuHostTrackId(r.kind == GpuActivityKind::kRuntimeApi ? GpuHostTrack::kRuntime : GpuHostTrack::kDriver,
                                r.thread_id);
      arg(keys_.correlation, r.correlation);
      arg(keys_.cbid, r.callback_id);
      break;
    case GpuActivityKind::kOverhead:
      device_work = false;
      name_id = Intern(OverheadName(r.id));
      track_id = GpuHostTrackId(GpuHostTrack::kOverhead, r.thread_id);
      break;
    case GpuActivityKind::kMarker: {
      const uint32_t marker_track = GpuHostTrackId(GpuHostTrack::kMarker, r.thread_id);
      if (r.marker_flags & kGpuMarkerEnd) {
        auto open = open_ranges_.find(r.id);
        if (open == open_ranges_.end()) return;  // its start was never seen (before tracing began)
        const auto [name_id, track] = open->second;
        open_ranges_.erase(open);
        if (Track* t = Reserve(track, 1)) {
          Put(*t, r.start_ns, store::RecordKind::kEnd, name_id, 0);
          Publish(*t);
          ++events_written_;
        }
        return;
      }
      const uint32_t range_name = r.name != nullptr ? InternCString(r.name) : Intern("<unnamed range>");
      const bool start = (r.marker_flags & kGpuMarkerStart) != 0;
      if (start && open_ranges_.size() >= kMaxOpenRanges) return;
      if (Track* t = Reserve(marker_track, 1)) {
        Put(*t, r.start_ns, start ? store::RecordKind::kBegin : store::RecordKind::kInstant, range_name, 0);
        Publish(*t);
        if (start) open_ranges_[r.id] = {range_name, marker_track};
        ++events_written_;
      }
      return;
    }
  }
  if (device_work) {
    const bool device_fits = r.device < kGpuTrackDeviceUnknown;
    const bool stream_fits = r.stream < kGpuTrackStreamUnknown;
    track_id = GpuDeviceTrackId(device_track, device_fits ? r.device : kGpuTrackDeviceUnknown,
                                stream_fits ? r.stream : kGpuTrackStreamUnknown);
    if (!device_fits && r.device != kGpuNoValue) arg(keys_.device, r.device);
    if (!stream_fits && r.stream != kGpuNoValue) arg(keys_.stream, r.stream);
  }
  Track* track = Reserve(track_id, 2 + arg_count);
  if (track == nullptr) return;
  Put(*track, r.start_ns, store::RecordKind::kBegin, name_id, 0);
  Put(*track, r.end_ns, store::RecordKind::kEnd, name_id, 0);
  for (uint32_t i = 0; i < arg_count; ++i) Put(*track, r.end_ns, store::RecordKind::kArgInt, args[i].key, IntBits(args[i].value));
  Publish(*track);
  ++events_written_;
}

void GpuStreamWriter::OnCuptiDropped(uint64_t records) {
  if (!EnsureStream(0)) return;
  dropped_cupti_ += records;
  stream_->ring().CountDropped(records);
}

void GpuStreamWriter::OnStateChange(uint64_t timestamp_ns, GpuTracerState state, std::string_view reason) {
  if (!EnsureStream(timestamp_ns)) return;
  state_ = GpuTracerStateName(state);
  reason_ = std::string(reason);
  const uint32_t name_id = Intern(std::string("GpuTracing:") + state_);
  const uint32_t reason_key = Intern("reason");
  const uint32_t reason_id = Intern(reason);
  const uint64_t ticks = timestamp_ns != 0 ? timestamp_ns : (options_.gpu_clock_ns ? options_.gpu_clock_ns() : 0);
  if (Track* track = Reserve(GpuHostTrackId(GpuHostTrack::kTracer, 0), 2)) {
    Put(*track, ticks, store::RecordKind::kInstant, name_id, 0);
    Put(*track, ticks, store::RecordKind::kArgString, reason_key, reason_id);
    Publish(*track);
  }
  // A state change is rare and says why records stop or start: it goes to the log at once.
  SealAll();
  FlushAndMaybeCalibrate(false);
}

void GpuStreamWriter::OnBufferDone() {
  if (stream_ == nullptr || finished_) return;
  // Each completed CUPTI buffer leaves the ring for the log: blocks do not linger open on idle
  // tracks, and the ring only ever holds about one buffer's worth.
  SealAll();
  FlushAndMaybeCalibrate(false);
}

void GpuStreamWriter::SealAll() {
  for (auto& [id, track] : tracks_) {
    if (track.block == nullptr) continue;
    stream_->ring().Seal(track.block);
    track.block = nullptr;
    track.next = track.end = track.first = nullptr;
  }
}

void GpuStreamWriter::FlushAndMaybeCalibrate(bool final) {
  auto flushed = stream_->FlushSealed();
  if (!flushed.ok() && !log_write_failing_) {
    std::fprintf(stderr, "stepscope: GPU records: %s; they are dropped and counted until it can be written\n",
                 flushed.status().message().c_str());
  }
  log_write_failing_ = !flushed.ok();
  const uint64_t now = MonotonicNowNs();
  if (!final && now < next_calibration_ns_) return;
  next_calibration_ns_ = now + kCalibrationIntervalNs;
  const uint64_t gpu_now = options_.gpu_clock_ns ? options_.gpu_clock_ns() : 0;
  if (gpu_now != 0) (void)stream_->AppendClockPair(ClockPair{gpu_now, MonotonicNowNs()});
  if (!final) (void)stream_->AppendStats(StatsJson(nullptr));  // Finish writes the last, fuller one
}

std::string GpuStreamWriter::StatsJson(const nlohmann::json* tracer_stats) const {
  const uint64_t dropped = dropped_cupti_ + dropped_store_full_ + dropped_write_failed_;
  nlohmann::json stats = {{"events_recorded", events_written_},
                          {"events_dropped", dropped},
                          {"events_dropped_write_failed", dropped_write_failed_},
                          {"bytes_written", stream_->log_bytes()},
                          {"blocks_flushed", stream_->blocks_flushed()},
                          {"gpu",
                           {{"state", state_},
                            {"reason", reason_},
                            {"dropped_by_cause",
                             {{"cupti", dropped_cupti_}, {"ring_full", dropped_store_full_},
                              {"write_failed", dropped_write_failed_}}},
                            {"names_over_limit", names_over_limit_}}}};
  if (tracer_stats != nullptr) stats["gpu"]["tracer"] = *tracer_stats;
  return stats.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void GpuStreamWriter::Finish(const nlohmann::json& tracer_stats) {
  if (finished_) return;
  finished_ = true;
  if (stream_ == nullptr) return;
  SealAll();
  FlushAndMaybeCalibrate(true);
  (void)stream_->AppendStats(StatsJson(&tracer_stats));
}

}  // namespace stepscope
