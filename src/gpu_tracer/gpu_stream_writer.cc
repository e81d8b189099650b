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

using store::GpuHostTrack;
using store::GpuHostTrackId;

// A pair every 10 s, as the recorder writes: CUPTI's clock and CLOCK_MONOTONIC drift apart by
// parts per million at most, and readers interpolate between pairs.
constexpr uint64_t kCalibrationIntervalNs = 10'000'000'000;
// Kernel names are bounded by the program, but a hostile or odd job could make many; past this
// the table stops growing and events take the placeholder name.
constexpr size_t kMaxNames = 1u << 20;
constexpr size_t kMaxOpenRanges = 1u << 16;
// Launch configurations are bounded by the program too; past this kernels take id 0, which
// readers report as a lost configuration.
constexpr size_t kMaxLaunchConfigs = 1u << 20;
// Names of records CUPTI gave none: static, so the address cache finds them like CUPTI's.
constexpr char kUnnamedKernel[] = "<unnamed kernel>";
constexpr char kUnnamedCall[] = "<unnamed call>";

// Kineto's spellings, so device events read the same whichever profiler recorded them.
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

GpuStreamWriter::GpuStreamWriter(GpuStreamWriterOptions options)
    : options_(std::move(options)), by_address_(new AddressSlot[kAddressSlots]) {
  std::random_device entropy;
  char name[64];
  std::snprintf(name, sizeof name, "gpu-%d-%04x", static_cast<int>(options_.pid), entropy() & 0xFFFF);
  name_ = name;
  // Id 0 is "no name".
  name_text_.emplace_back();
  name_logged_.push_back(kInStrings);
  recent_configs_.emplace_back();
  config_logged_.push_back(1);
}

GpuStreamWriter::~GpuStreamWriter() = default;

size_t GpuStreamWriter::ConfigHash::operator()(const store::GpuLaunchConfig& config) const {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0xBF58476D1CE4E5B9ull; h ^= h >> 31; };
  for (int d = 0; d < 3; ++d) mix((uint64_t{static_cast<uint32_t>(config.grid[d])} << 32) | static_cast<uint32_t>(config.block[d]));
  mix((uint64_t{config.registers_per_thread} << 32) | config.shared_memory_bytes);
  return static_cast<size_t>(h);
}

bool GpuStreamWriter::CreateStream(uint64_t gpu_timestamp_ns) {
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
  stream_options.zstd_level = options_.zstd_level;
  stream_options.meta_json = meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  stream_options.clock_anchor = anchor;
  auto stream = store::StreamWriter::Create(stream_options);
  if (!stream.ok()) {
    error_ = "GPU records cannot be written into '" + options_.node_dir + "': " + stream.status().message();
    return false;
  }
  stream_ = std::move(*stream);
  next_calibration_ns_ = MonotonicNowNs() + kCalibrationIntervalNs;
  return true;
}

uint32_t GpuStreamWriter::NameId(std::string_view text) {
  auto it = names_.find(text);
  if (it != names_.end()) return it->second;
  if (names_.size() >= kMaxNames) {
    ++names_over_limit_;
    text = "<too many names>";
    it = names_.find(text);
    if (it != names_.end()) return it->second;
  }
  const auto id = static_cast<uint32_t>(name_text_.size());
  auto [stored, inserted] = names_.emplace(std::string(text), id);
  name_text_.push_back(stored->first);  // the map's key: stable while the map lives
  name_logged_.push_back(0);
  recent_configs_.emplace_back();
  return id;
}

uint32_t GpuStreamWriter::Intern(std::string_view text) {
  const uint32_t id = NameId(text);
  if (name_logged_[id] & kInStrings) return id;
  // In the log before any record can use it (the ring is the file: a reader may see the record
  // at once). A frame's declaration does not do: ring records are read before frames.
  if (Status status = stream_->AppendStrings({{id, std::string(name_text_[id])}}); !status.ok()) return 0;
  name_logged_[id] |= kInStrings;
  return id;
}

uint32_t GpuStreamWriter::DeclareFrameName(uint32_t id) {
  frame_.DeclareName(id, name_text_[id]);
  name_logged_[id] |= kInFrames;
  frame_names_.push_back(id);
  return id;
}

// Forced inline, as FrameNameOf and LaunchConfigId: once per record, where their calls cost 41
// of the writer's ~480 instructions a record (callgrind); their slow paths stay calls.
[[gnu::always_inline]] inline uint32_t GpuStreamWriter::FrameName(uint32_t id) {
  return (name_logged_[id] & (kInStrings | kInFrames)) != 0 ? id : DeclareFrameName(id);
}

[[gnu::always_inline]] inline uint32_t GpuStreamWriter::FrameNameOf(const char* text) {
  const auto address = reinterpret_cast<uintptr_t>(text);
  AddressSlot& slot = by_address_[((address >> 3) * 0x9E3779B97F4A7C15ull) >> (64 - 12)];
  static_assert(kAddressSlots == 1u << 12);
  if (slot.address == text && slot.checked_in == buffer_serial_) return FrameName(slot.id);
  return FrameName(CheckNameOf(text, slot));
}

uint32_t GpuStreamWriter::CheckNameOf(const char* text, AddressSlot& slot) {
  if (slot.address == text) {
    // First use in this buffer: the text is compared in full, as the address may have been
    // reused for another name. memcmp reads the stored length whatever the text holds, which
    // is safe when that stays in the page of its first byte; else strncmp, which stops at the
    // text's end.
    const size_t length = slot.text.size();
    const bool one_page = (reinterpret_cast<uintptr_t>(text) & 4095) + length + 1 <= 4096;
    const bool same = one_page ? std::memcmp(text, slot.text.data(), length) == 0
                               : std::strncmp(text, slot.text.data(), length) == 0;
    if (same && text[length] == '\0') {
      slot.checked_in = buffer_serial_;
      return slot.id;
    }
  }
  const uint32_t id = NameId(text);
  slot = {text, name_text_[id], id, buffer_serial_};
  return id;
}

uint32_t GpuStreamWriter::MemcpyNameId(GpuMemcpyKind kind, GpuMemoryKind src, GpuMemoryKind dst) {
  // Kinds beyond the tables spell "Unknown", as index 0 does.
  auto index = [](auto value, size_t size) {
    const auto i = static_cast<size_t>(value);
    return i < size ? i : 0;
  };
  uint32_t& id = memcpy_names_[index(kind, 11)][index(src, 8)][index(dst, 8)];
  if (id == 0) {
    id = NameId(std::string("Memcpy ") + MemcpyKindName(kind) + " (" + MemoryKindName(src) + " -> " +
                MemoryKindName(dst) + ")");
  }
  return FrameName(id);
}

uint32_t GpuStreamWriter::MemsetNameId(GpuMemoryKind memory) {
  const auto i = static_cast<size_t>(memory);
  uint32_t& id = memset_names_[i < 8 ? i : 0];
  if (id == 0) id = NameId(std::string("Memset (") + MemoryKindName(memory) + ")");
  return FrameName(id);
}

[[gnu::always_inline]] inline uint32_t GpuStreamWriter::LaunchConfigId(uint32_t name_id, const store::GpuLaunchConfig& config) {
  RecentConfigs& recent = recent_configs_[name_id];
  // Newest first: most kernels have their name's last configuration.
  uint32_t id = 0;
  for (uint32_t age = 0, slot = recent.newest; age < RecentConfigs::kSlots;
       ++age, slot = (slot + RecentConfigs::kSlots - 1) % RecentConfigs::kSlots) {
    if (recent.ids[slot] == 0) break;
    if (recent.configs[slot] == config) {
      id = recent.ids[slot];
      break;
    }
  }
  if (id == 0) id = FindLaunchConfig(recent, config);
  if (config_logged_[id] == 0) {  // id 0 (over the limit: none) counts as logged
    frame_.DeclareLaunchConfig(id, config);
    config_logged_[id] = 1;
    frame_configs_.push_back(id);
  }
  return id;
}

uint32_t GpuStreamWriter::FindLaunchConfig(RecentConfigs& recent, const store::GpuLaunchConfig& config) {
  auto it = configs_.find(config);
  if (it == configs_.end()) {
    if (configs_.size() >= kMaxLaunchConfigs) {
      ++configs_over_limit_;
      return 0;
    }
    it = configs_.emplace(config, static_cast<uint32_t>(config_logged_.size())).first;
    config_logged_.push_back(0);
  }
  recent.newest = (recent.newest + 1) % RecentConfigs::kSlots;
  recent.configs[recent.newest] = config;
  recent.ids[recent.newest] = it->second;
  return it->second;
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
  // One path per kind, the kind tested once here (a kind no tracer makes is left out).
  switch (r.kind) {
    case GpuActivityKind::kKernel: return AddRow<store::GpuRowKind::kKernel>(r);
    case GpuActivityKind::kMemcpy: return AddRow<store::GpuRowKind::kMemcpy>(r);
    case GpuActivityKind::kMemset: return AddRow<store::GpuRowKind::kMemset>(r);
    case GpuActivityKind::kSync: return AddRow<store::GpuRowKind::kSync>(r);
    case GpuActivityKind::kRuntimeApi: return AddRow<store::GpuRowKind::kRuntimeApi>(r);
    case GpuActivityKind::kDriverApi: return AddRow<store::GpuRowKind::kDriverApi>(r);
    case GpuActivityKind::kOverhead: return AddRow<store::GpuRowKind::kOverhead>(r);
    case GpuActivityKind::kMarker: return OnMarker(r);
  }
}

template <store::GpuRowKind kKind>
[[gnu::always_inline]] inline void GpuStreamWriter::AddRow(const GpuActivityRecord& r) {
  store::GpuActivityRow row;
  row.kind = kKind;
  row.start_ticks = r.start_ns;
  row.end_ticks = r.end_ns;
  row.correlation = r.correlation;
  if constexpr (store::IsGpuDeviceRow(kKind)) {
    row.device = r.device;
    row.stream = r.stream;
  } else {
    row.thread_id = r.thread_id;
  }
  const uint32_t track = store::GpuRowTrack(kKind, row.device, row.stream, row.thread_id);
  // Before any declaration: the row's names and configuration go into the frame that holds it.
  if (!frame_.Fits(track)) WriteFrame();
  if constexpr (kKind == store::GpuRowKind::kKernel) {
    row.name_id = FrameNameOf(r.name != nullptr ? r.name : kUnnamedKernel);
    store::GpuLaunchConfig config;
    for (int d = 0; d < 3; ++d) config.grid[d] = r.grid[d], config.block[d] = r.block[d];
    config.registers_per_thread = r.registers_per_thread;
    config.shared_memory_bytes = r.shared_memory_bytes;
    row.config_id = LaunchConfigId(row.name_id, config);
  } else if constexpr (kKind == store::GpuRowKind::kMemcpy) {
    row.name_id = MemcpyNameId(r.memcpy_kind, r.src_memory, r.dst_memory);
    row.bytes = r.bytes;
  } else if constexpr (kKind == store::GpuRowKind::kMemset) {
    row.name_id = MemsetNameId(r.src_memory);
    row.bytes = r.bytes;
  } else if constexpr (kKind == store::GpuRowKind::kSync) {
    row.name_id = FrameNameOf(SyncName(r.sync_kind));
  } else if constexpr (kKind == store::GpuRowKind::kRuntimeApi || kKind == store::GpuRowKind::kDriverApi) {
    row.name_id = FrameNameOf(r.name != nullptr ? r.name : kUnnamedCall);
    row.callback_id = r.callback_id;
  } else {
    row.name_id = FrameNameOf(OverheadName(r.id));
  }
  frame_.AddOf<kKind>(row, track);
}

void GpuStreamWriter::OnMarker(const GpuActivityRecord& r) {
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
  const uint32_t range_name = Intern(r.name != nullptr ? std::string_view(r.name) : "<unnamed range>");
  const bool start = (r.marker_flags & kGpuMarkerStart) != 0;
  if (start && open_ranges_.size() >= kMaxOpenRanges) return;
  if (Track* t = Reserve(marker_track, 1)) {
    Put(*t, r.start_ns, start ? store::RecordKind::kBegin : store::RecordKind::kInstant, range_name, 0);
    Publish(*t);
    if (start) open_ranges_[r.id] = {range_name, marker_track};
    ++events_written_;
  }
}

void GpuStreamWriter::WriteFrame() {
  const uint32_t rows = frame_.rows();
  if (rows == 0) return;
  const Status written = stream_->AppendFrame(
      store::FrameType::kGpuActivity,
      [this](store::BlockEncoder& compressor, int zstd_level, std::string& payload) {
        frame_.Finish(compressor, zstd_level, payload);
      });
  frame_.Clear();
  if (written.ok()) {
    events_written_ += rows;
  } else {
    if (!frame_write_failing_) {
      std::fprintf(stderr, "stepscope: GPU records: %s; they are dropped and counted until it can be written\n",
                   written.message().c_str());
    }
    dropped_write_failed_ += rows;
    stream_->ring().CountDropped(rows, store::RingFile::DropCause::kWriteFailed);
    // What this frame declared is not in the log: the next frame that uses it declares it.
    for (uint32_t id : frame_names_) name_logged_[id] &= static_cast<uint8_t>(~kInFrames);
    for (uint32_t id : frame_configs_) config_logged_[id] = 0;
  }
  frame_write_failing_ = !written.ok();
  frame_names_.clear();
  frame_configs_.clear();
}

void GpuStreamWriter::OnCuptiDropped(uint64_t records) {
  if (!EnsureStream(0)) return;
  dropped_cupti_ += records;
  stream_->ring().CountDropped(records);
}

void GpuStreamWriter::OnStateChange(uint64_t timestamp_ns, GpuTracerState state, std::string_view reason) {
  if (!EnsureStream(timestamp_ns)) return;
  // What was recorded before the change is in the log before it.
  WriteFrame();
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
  ++buffer_serial_;  // the next buffer's names are compared with their text again
  if (stream_ == nullptr || finished_) return;
  // Each completed CUPTI buffer is one frame in the log, so a record is on disk once its
  // buffer completed; the ring's NVTX blocks follow, so the ring only holds what came since.
  WriteFrame();
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
                            {"names_over_limit", names_over_limit_},
                            {"launch_configs_over_limit", configs_over_limit_}}}};
  if (tracer_stats != nullptr) stats["gpu"]["tracer"] = *tracer_stats;
  return stats.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void GpuStreamWriter::Finish(const nlohmann::json& tracer_stats) {
  if (finished_) return;
  finished_ = true;
  if (stream_ == nullptr) return;
  WriteFrame();
  SealAll();
  FlushAndMaybeCalibrate(true);
  (void)stream_->AppendStats(StatsJson(&tracer_stats));
}

}  // namespace stepscope
