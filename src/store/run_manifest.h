// The node manifest (<root>/<job>/<node>/manifest.json; docs/formats.md "Node manifest"): what
// ran on a node, with which configuration and capabilities, what stepscope cost and how it ended.
//
// One type, one writer and one reader. The launcher fills a RunManifest and writes it with
// ManifestText (atomically, at start, once the job runs, after each control file and at the
// end); every reader — the analysis loader (into the model's node facts), `stepscope ctl`, the
// run-directory check — parses it with ParseRunManifest. A manifest comes from disk: the reader
// trusts no field's type, keeps what it can read and says what it could not.
//
// Opaque JSON is kept only where the manifest holds a document whose shape another component
// owns and stepscope only shows it: the launcher's config entries ({value, from} per setting,
// launcher/run_config.h), versions and each control entry's changes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace stepscope::store {

// The launcher's status (docs/formats.md): where it got to. kUnknown: a value no launcher writes.
enum class ManifestStatus : uint8_t { kStarting, kRunning, kExited, kKilled, kFailedToStart, kUnknown };
const char* ManifestStatusName(ManifestStatus status);  // "starting", ..., "unknown"
// The launcher wrote its last word: the job ended or never started.
bool IsFinal(ManifestStatus status);
// The launcher got as far as starting its system sampler.
bool SamplerStarted(ManifestStatus status);

struct ManifestCapabilities {
  bool gpu_available = false;
  std::string gpu_reason;
  std::string gpu_driver_version;
  std::vector<std::string> gpus;          // GPU names
  std::vector<int64_t> gpu_memory_bytes;  // per GPU when the launcher knew it, else empty
  // The GPU metrics NVML left out and why, one sentence each (NvmlGpuSource::AbsentMetrics():
  // a driver without the entry point, a GPU that does not support it); "metrics_absent".
  std::vector<std::string> gpu_metrics_absent;
  bool nvml_available = false;
  std::string nvml_reason;
  bool cupti_library_found = false;
  std::string cupti_library;
  std::string cupti_version;
  bool cupti_usable = false;
  std::string cupti_reason;
  // What `stepscope run` asked of the injected CUPTI tracer: "whole_job", "everything" or "off",
  // and why it is off when it is.
  std::string gpu_tracing;
  std::string gpu_tracing_reason;
  // CPU performance counters (platform/perf/perf_counter_set.h). available: some event is
  // counted; paranoid: kernel.perf_event_paranoid (-1 also when unreadable); reason: what is
  // counted where and why the rest is not, in one line. perf_scope ("per_cpu", "job", "none")
  // and perf_events are empty in runs recorded before stepscope counted events.
  bool perf_counters_available = false;
  int64_t perf_paranoid = 0;
  std::string perf_reason;
  std::string perf_scope;
  struct PerfEvent {
    std::string name;  // perf's: "cycles", "context-switches", ...
    bool counted = false;
    bool user_only = false;  // counted in user space only (kernel.perf_event_paranoid=2)
    std::string reason;      // why not counted
  };
  std::vector<PerfEvent> perf_events;
  std::string tick_clock;  // "tsc" | "monotonic_ns"
};

// How the job ended, once it did.
struct ManifestExit {
  bool known = false;
  bool signaled = false;
  int exit_code = 0;          // !signaled
  int signal = 0;             // signaled
  std::string signal_name;
  bool core_dumped = false;
  int launcher_exit_code = 0;
};

// The system sampler's own cost, written at the end.
struct ManifestSampler {
  bool known = false;
  uint64_t polls = 0;
  uint64_t missed_polls = 0;
  uint64_t samples_written = 0;
  uint64_t samples_dropped = 0;
  uint64_t cpu_ns = 0;
  int64_t final_interval_ns = 0;
};

// One control file the launcher applied or refused (launcher/control_watcher.h).
struct ManifestControl {
  int64_t sequence = -1;
  int64_t time_ns = 0;           // when `stepscope ctl` wrote it
  int64_t applied_at_ns = 0;     // when the launcher applied it
  int64_t interval_ns = 0;       // the new sampling interval, 0 when it did not change it
  int64_t previous_interval_ns = 0;
  nlohmann::json changes = nlohmann::json::object();  // as written (interval and detail changes)
  std::string error;             // not empty: refused, and why
};

struct RunManifest {
  int schema_version = 1;
  int format_version = 0;
  std::string job;
  std::string node;
  std::vector<std::string> hosts;
  std::vector<std::string> command;
  nlohmann::json config = nlohmann::json::object();    // {setting: {value, from, ...}}
  nlohmann::json versions = nlohmann::json::object();  // {stepscope, kernel, machine}
  ManifestCapabilities capabilities;
  // Every timestamp of the node is CLOCK_MONOTONIC + (realtime - monotonic) of this anchor.
  bool has_clock = false;
  int64_t clock_monotonic_ns = 0;
  int64_t clock_realtime_ns = 0;
  int64_t start_time_ns = 0;
  int64_t end_time_ns = 0;  // 0 until the job ended
  int launcher_pid = 0;     // 0 until the job started
  int job_pid = 0;
  ManifestStatus status = ManifestStatus::kStarting;
  ManifestExit exit;
  std::string ended;        // how it ended, in words
  ManifestSampler sampler;
  std::vector<ManifestControl> control;
  std::string instance_type;  // --instance, "" when not given
  int32_t instance_count = 0; // --count, 0 when not given
  int32_t cpu_cores = 0;      // 0 when not given
  // The job's shape as its launch command said (torchrun --nnodes N --node-rank R): how many
  // nodes the job needs (0 when unknown) and which one this is (-1 when unknown).
  int32_t nodes_expected = 0;
  int32_t node_rank = -1;
  // Where the node's Prometheus endpoint served while the job ran (--metrics-port); "" when off.
  std::string metrics_url;
  // The sampling interval at the start (config "interval"), in ns; 0 when unknown.
  int64_t interval_ns = 0;
  // Every stream of the node when the job ended (file stems); empty before.
  bool streams_listed = false;
  std::vector<std::string> streams;
  std::vector<std::string> streams_still_written;

  // Offset from the node's CLOCK_MONOTONIC to Unix time, when the anchor is known.
  std::optional<int64_t> ClockOffsetNs() const;
  // The sampling interval in force at `time_ns` (Unix ns): the start's, changed by each applied
  // control entry from its applied_at_ns on. 0 when unknown.
  int64_t IntervalAt(int64_t time_ns) const;
};

// A control entry as the launcher's control watcher records it (launcher/control_watcher.h).
ManifestControl ManifestControlFromJson(const nlohmann::json& entry);

// The manifest as written to manifest.json (invalid UTF-8 in the user's command replaced).
std::string ManifestText(const RunManifest& manifest);
nlohmann::json ManifestToJson(const RunManifest& manifest);

// Reads a manifest's text. Fails (one line, naming `path`) only when it is not a JSON object;
// fields of the wrong type read as absent. Whether it has what every node manifest needs is
// store/run_directory.h's ManifestDefect.
StatusOr<RunManifest> ParseRunManifest(std::string_view text, const std::string& path);

// Reads <node_dir>/manifest.json: a regular file of the run only (no link out of it, no FIFO),
// at most kMaxManifestBytes. NotFound when there is none.
StatusOr<RunManifest> ReadRunManifest(const std::string& node_dir);

}  // namespace stepscope::store
