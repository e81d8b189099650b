// Writes a traced process's GPU activity as one stream of the run, gpu-<pid>-<rand>, in the
// store's format (store/format.h, version 2), so the crash-safe readers read it like any other
// stream. docs/formats.md ("GPU streams") is the normative encoding; in short:
//
//   clock      ticks are CUPTI timestamps (ns); the stream's clock frames pair them with
//              CLOCK_MONOTONIC, the node's clock, so readers convert them like TSC ticks
//   activity   kernels, memcpy, memset, sync, runtime/driver calls and CUPTI's overhead: one row
//              each in a GPU activity frame (store/gpu_activity_frame.h) per completed CUPTI
//              buffer, appended to the log with one write when the buffer is done; names and
//              launch configurations are declared in the frame that first uses them
//   the rest   NVTX ranges and marks and the tracer's state changes ("GpuTracing:<state>" with
//              "reason") are begin/end/instant records on the ring's tracks (store/gpu_tracks.h)
//   drops      CUPTI's dropped records, records the ring had no room for and rows whose frame
//              could not be written are counted in the ring header; the stats frame splits them
//
// Cost: a row is a few varints appended to preallocated columns; a name is found by CUPTI's
// C-string address (its text compared once per buffer), a launch configuration by its kernel's name, so
// no string is built and nothing allocated per record. zstd runs per completed buffer, with the stream
// writer's context.
//
// Callers: GpuTracingSession, as the CuptiTracer's sink. Threading: the sink calls are
// serialised by the tracer and run on CUPTI's completion thread (never a training thread); the
// writer compresses and writes there, once per completed buffer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "platform/cupti/gpu_activity_record.h"
#include "store/gpu_activity_frame.h"
#include "store/gpu_tracks.h"
#include "store/stream_writer.h"

namespace stepscope {

// Kineto's spellings of copy and memory kinds ("HtoD", "Pageable"; "Unknown" for any other
// value), from which the writer names copies and sets ("Memcpy HtoD (Pageable -> Device)"), so
// device events read the same whichever profiler recorded them.
const char* MemcpyKindName(GpuMemcpyKind kind);
const char* MemoryKindName(GpuMemoryKind kind);

struct GpuStreamWriterOptions {
  std::string node_dir;         // <root>/<job>/<node>; must exist
  pid_t pid = 0;                // the traced process
  // The ring holds NVTX records and state changes only (activity goes to the log in frames),
  // and is emptied at every completed buffer.
  uint32_t block_bytes = 16 * 1024;
  uint32_t block_count = 16;
  // The activity frames' zstd level: 1 keeps them within 8 bytes a kernel in less time than 3
  // (docs/benchmarks.md).
  int zstd_level = 1;
  nlohmann::json meta_extra;    // merged into the meta frame ("cupti": library, version, mode)
  // CUPTI's clock now, for the periodic calibration pairs (0: unknown, no pair).
  std::function<uint64_t()> gpu_clock_ns;
};

class GpuStreamWriter final : public GpuActivitySink {
 public:
  // The stream's files are created by the first sink call (it brings the first CUPTI
  // timestamp, the stream's clock anchor).
  explicit GpuStreamWriter(GpuStreamWriterOptions options);
  ~GpuStreamWriter() override;

  void OnRecord(const GpuActivityRecord& record) override;
  void OnCuptiDropped(uint64_t records) override;
  void OnBufferDone() override;
  void OnStateChange(uint64_t timestamp_ns, GpuTracerState state, std::string_view reason) override;

  // Writes what is left, a last calibration pair and the final stats (with `tracer_stats`
  // under "tracer"). Later sink calls are ignored. Serialised with the sink calls by the caller.
  void Finish(const nlohmann::json& tracer_stats);

  // Why the stream could not be created or written, "" while it can.
  const std::string& error() const { return error_; }
  std::string stream_name() const { return name_; }
  // Events in the log or the ring (rows of frames written, NVTX records, state changes).
  uint64_t records_written() const { return events_written_; }

 private:
  struct Track {
    store::BlockHeader* block = nullptr;
    store::RawRecord* next = nullptr;
    store::RawRecord* end = nullptr;
    store::RawRecord* first = nullptr;
    uint64_t dropped_since_block = 0;
  };
  bool EnsureStream(uint64_t gpu_timestamp_ns) { return stream_ != nullptr || CreateStream(gpu_timestamp_ns); }
  bool CreateStream(uint64_t gpu_timestamp_ns);
  void OnMarker(const GpuActivityRecord& record);
  // A record of device work, an API call or CUPTI's overhead as a row of the frame being built.
  template <store::GpuRowKind kKind>
  void AddRow(const GpuActivityRecord& record);
  // Room for `records` more on `track`: its block, or a new one; nullptr (event dropped, counted).
  Track* Reserve(uint32_t track_id, uint32_t records);
  void Put(Track& track, uint64_t ticks, store::RecordKind kind, uint32_t name_id, uint64_t value);
  void Publish(Track& track);
  // A name's id, made if new (the placeholder's past kMaxNames); not yet written anywhere.
  uint32_t NameId(std::string_view text);
  // A name for ring records: in a strings frame before any record can use it.
  uint32_t Intern(std::string_view text);
  // A name for activity rows: declared in the frame being built unless the log has it.
  uint32_t FrameName(uint32_t id);
  uint32_t DeclareFrameName(uint32_t id);  // FrameName's first use in the frame
  uint32_t FrameNameOf(const char* text);  // by address, checked against the text
  uint32_t MemcpyNameId(GpuMemcpyKind kind, GpuMemoryKind src, GpuMemoryKind dst);
  uint32_t MemsetNameId(GpuMemoryKind memory);
  uint32_t LaunchConfigId(uint32_t name_id, const store::GpuLaunchConfig& config);
  // LaunchConfigId's slow path: a configuration not among the name's recent ones, by value.
  struct RecentConfigs;
  uint32_t FindLaunchConfig(RecentConfigs& recent, const store::GpuLaunchConfig& config);
  // Appends the frame being built to the log (nothing when empty).
  void WriteFrame();
  void SealAll();
  void FlushAndMaybeCalibrate(bool final);
  std::string StatsJson(const nlohmann::json* tracer_stats) const;

  GpuStreamWriterOptions options_;
  std::string name_;
  std::unique_ptr<store::StreamWriter> stream_;
  bool finished_ = false;
  bool log_write_failing_ = false;
  bool frame_write_failing_ = false;  // said once per failing spell
  std::string error_;
  // Looked up by string_view: no string is built to find a name.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> names_;
  std::vector<std::string_view> name_text_;  // by id: the map's keys, stable while it lives
  // Where a name is written, by id: kInStrings (a strings frame), kInFrames (a written frame or
  // the one being built).
  static constexpr uint8_t kInStrings = 1, kInFrames = 2;
  std::vector<uint8_t> name_logged_;
  // Kernel and call names are C strings CUPTI keeps for the module's life, met again and again:
  // a direct-mapped cache by address. A hit's text is compared with the name's once per
  // completed buffer (an address freed and reused for another name between buffers misses);
  // within one buffer an address is one name: every record of the buffer is read while the
  // buffer is handed over, so all the names they point to are alive together, at distinct
  // addresses (and Kineto, which keeps the pointers past the buffer, relies on more).
  struct AddressSlot {
    const char* address = nullptr;
    std::string_view text;
    uint32_t id = 0;
    uint64_t checked_in = 0;  // the buffer (buffer_serial_) the text was last compared in
  };
  static constexpr uint32_t kAddressSlots = 4096;
  std::unique_ptr<AddressSlot[]> by_address_;
  uint64_t buffer_serial_ = 1;  // the buffer being handed over; slots start unchecked (0)
  uint32_t CheckNameOf(const char* text, AddressSlot& slot);  // FrameNameOf's slow path
  // Memcpy and memset names by their kinds (Kineto's spelling, built once).
  uint32_t memcpy_names_[11][8][8] = {};
  uint32_t memset_names_[8] = {};
  // Launch configurations: the last few per kernel name, and all of them by value. A name's
  // kernels mostly run with one configuration or cycle through a few (an elementwise kernel on
  // a step's tensors of a few sizes): in a real trace the last one was the next one's for half
  // the kernels, one of the last four for nine in ten, each a hash and a table search saved.
  struct ConfigHash {
    size_t operator()(const store::GpuLaunchConfig& config) const;
  };
  struct RecentConfigs {
    static constexpr uint32_t kSlots = 4;
    store::GpuLaunchConfig configs[kSlots];
    uint32_t ids[kSlots] = {};  // 0: an empty slot
    uint32_t newest = 0;        // the slot filled last; the next one is replaced next
  };
  std::vector<RecentConfigs> recent_configs_;  // by name id
  std::unordered_map<store::GpuLaunchConfig, uint32_t, ConfigHash> configs_;
  std::vector<uint8_t> config_logged_;  // by id: in a written frame or the one being built
  // Declared in the frame being built: undone if it cannot be written.
  std::vector<uint32_t> frame_names_;
  std::vector<uint32_t> frame_configs_;
  store::GpuActivityFrameEncoder frame_;
  std::unordered_map<uint32_t, Track> tracks_;
  // NVTX ranges open by id: their name and track, for the end record (which has no name).
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> open_ranges_;
  uint64_t events_written_ = 0;
  uint64_t dropped_cupti_ = 0;
  uint64_t dropped_store_full_ = 0;
  uint64_t dropped_write_failed_ = 0;
  uint64_t names_over_limit_ = 0;
  uint64_t configs_over_limit_ = 0;
  uint64_t next_calibration_ns_ = 0;
  std::string state_ = "off";
  std::string reason_;
};

}  // namespace stepscope
