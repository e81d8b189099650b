// Writes a traced process's GPU activity as one stream of the run, gpu-<pid>-<rand>, in the
// store's format (store/format.h), so the crash-safe readers read it like any other stream.
// docs/formats.md ("GPU streams") is the normative encoding; in short:
//
//   clock      ticks are CUPTI timestamps (ns); the stream's clock frames pair them with
//              CLOCK_MONOTONIC, the node's clock, so readers convert them like TSC ticks
//   tracks     one block "thread" per (kind, device, stream) and per (kind, host thread), laid
//              out in store/gpu_tracks.h
//   an event   begin(start) + end(end) with its name, then its arguments: kernels "correlation",
//              "grid_x|y|z", "block_x|y|z" (y and z only when not 1), "registers per thread",
//              "shared memory"; memcpy/memset "correlation", "bytes"; API calls "correlation",
//              "cbid"; the tracer's state changes are instants "GpuTracing:<state>" with "reason"
//   drops      CUPTI's dropped records and records the ring had no room for are counted in the
//              ring header; the stats frame splits them by cause
//
// Callers: GpuTracingSession, as the CuptiTracer's sink. Threading: the sink calls are
// serialised by the tracer and run on CUPTI's completion thread (never a training thread); the
// writer compresses and writes there, once per completed buffer, so memory is the ring's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "platform/cupti/gpu_activity_record.h"
#include "store/gpu_tracks.h"
#include "store/stream_writer.h"

namespace stepscope {

struct GpuStreamWriterOptions {
  std::string node_dir;         // <root>/<job>/<node>; must exist
  pid_t pid = 0;                // the traced process
  uint32_t block_bytes = 32 * 1024;
  uint32_t block_count = 128;   // 4 MiB of ring
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
  uint64_t records_written() const { return events_written_; }

 private:
  struct Track {
    store::BlockHeader* block = nullptr;
    store::RawRecord* next = nullptr;
    store::RawRecord* end = nullptr;
    store::RawRecord* first = nullptr;
    uint64_t dropped_since_block = 0;
  };
  bool EnsureStream(uint64_t gpu_timestamp_ns);
  // Room for `records` more on `track`: its block, or a new one; nullptr (event dropped, counted).
  Track* Reserve(uint32_t track_id, uint32_t records);
  void Put(Track& track, uint64_t ticks, store::RecordKind kind, uint32_t name_id, uint64_t value);
  void Publish(Track& track);
  uint32_t Intern(std::string_view text);
  void SealAll();
  void FlushAndMaybeCalibrate(bool final);
  std::string StatsJson(const nlohmann::json* tracer_stats) const;

  GpuStreamWriterOptions options_;
  std::string name_;
  std::unique_ptr<store::StreamWriter> stream_;
  bool finished_ = false;
  bool log_write_failing_ = false;
  std::string error_;
  // Looked up by string_view: no string is built to find a name.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
  };
  // Kernel and call names are C strings CUPTI keeps for the module's life, met again and again:
  // by address first, checked against the text (an address reused for another name misses).
  struct KnownName {
    std::string_view text;
    uint32_t id = 0;
  };
  uint32_t InternCString(const char* text);
  // The argument keys every event uses, interned once.
  struct Keys {
    uint32_t correlation, grid[3], block[3], registers, shared_memory, bytes, cbid, device, stream;
  };
  Keys keys_{};
  std::unordered_map<uint32_t, Track> tracks_;
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> names_;
  std::unordered_map<const char*, KnownName> names_by_address_;
  // NVTX ranges open by id: their name and track, for the end record (which has no name).
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> open_ranges_;
  uint64_t events_written_ = 0;
  uint64_t dropped_cupti_ = 0;
  uint64_t dropped_store_full_ = 0;
  uint64_t dropped_write_failed_ = 0;
  uint64_t names_over_limit_ = 0;
  uint64_t next_calibration_ns_ = 0;
  std::string state_ = "off";
  std::string reason_;
};

}  // namespace stepscope
