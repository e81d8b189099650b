// Reader of SageMaker Debugger framework traces (shared/FORMATS.md §1): the Chrome-trace arrays
// under framework/pevents/ (python timeline, model timeline, Horovod and smdataparallel
// timelines) and TF profiler traces (trace.json.gz with a .metadata file naming node and start).
//
// What a trace becomes: `X` events are complete; `B`/`E` pair per pid through a stack (an `E`
// with no open `B` is skipped and counted); negative durations are dropped and counted; `i`, `C`
// and other phases are ignored. The phase of an event is the args.name of the process_name
// metadata event with the same pid ("" when that pid has none). args.step_num (a string, or a
// number) is the step; args.pid / args.thread_id override pid / tid.
//
// Times: ts/dur are microseconds relative to the file's base (pevents: the
// start_time_since_epoch_in_micros of the first metadata event; TF: the .metadata file's start),
// kept here as Unix-epoch nanoseconds.
//
// Callers: sagemaker_importer.cc, tests, the fuzzer. Stateless; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace stepscope::analysis {

struct SageMakerTraceArg {
  enum class Type : uint8_t { kInt, kDouble, kString, kBool };
  std::string key;
  Type type = Type::kString;
  int64_t int_value = 0;
  double double_value = 0;
  bool bool_value = false;
  std::string string_value;  // strings as written; objects and arrays as compact JSON
};

struct SageMakerTraceEvent {
  int64_t start_ns = 0;  // Unix epoch
  int64_t end_ns = 0;
  std::string name;
  std::string phase;     // the process name of the event's pid
  std::string node_id;   // rewritten: "algo-1-151", "0001", "" when unknown
  int64_t pid = 0;       // args.pid when present, else the event's pid
  int64_t tid = 0;       // args.thread_id when present, else the event's tid (0 when none)
  int64_t step = -1;     // args.step_num when present
  std::vector<SageMakerTraceArg> args;

  int64_t start_us() const { return start_ns / 1000; }
  int64_t end_us() const { return end_ns / 1000; }
};

struct SageMakerTraceFile {
  std::string node_id;
  int64_t base_us = 0;                       // time base of ts
  std::map<int64_t, std::string> processes;  // pid -> process name, from process_name metadata
  std::vector<SageMakerTraceEvent> events;   // X events, and B/E pairs at their E, in file order
  int64_t orphan_end_events = 0;             // E with no open B, skipped
  int64_t negative_durations = 0;            // dropped
  int64_t unclosed_begin_events = 0;         // B never closed, dropped
};

// `<ts_us>_<node>_<suffix>.json` with suffix pythontimeline | model_timeline | horovod_timeline |
// smdataparallel_timeline; node is the second `_` field (rewritten by RewriteSageMakerNodeId).
struct PeventsFileName {
  int64_t end_us = 0;  // the end time of the file's last event (as written)
  std::string node_id;
  std::string suffix;  // "pythontimeline", "model_timeline", ...
};
std::optional<PeventsFileName> ParsePeventsFileName(std::string_view file_name);

// `<x>-algo-<n>` -> `algo-<n>-<x>` (so the host comes first); anything else unchanged.
std::string RewriteSageMakerNodeId(std::string_view node_id);

// `<node>_<start_us>_<end_us>.metadata` (node may contain `_`: the last two fields are times).
struct TfProfilerMetadata {
  std::string node_id;
  int64_t start_us = 0;
  int64_t end_us = 0;
};
std::optional<TfProfilerMetadata> ParseTfMetadataFileName(std::string_view file_name);

// Turns a Chrome-trace event array into events. `base_us` is the time base when the array has
// no start_time_since_epoch_in_micros metadata. `file_name` names the file in errors.
StatusOr<SageMakerTraceFile> ParseSageMakerTraceEvents(const nlohmann::json& events, std::string_view node_id,
                                                       int64_t base_us, std::string_view file_name);

// One pevents file: a JSON array; node from the file name (verbatim when the name does not
// follow the pattern).
StatusOr<SageMakerTraceFile> ParsePeventsText(std::string_view text, std::string_view file_name);
StatusOr<SageMakerTraceFile> ReadPeventsFile(const std::string& path);

// One TF profiler trace (a JSON object with traceEvents, gzip-compressed or not). With metadata,
// ts is relative to its start and events get its node; without, base 0 and node "". The
// metadata's time base counts as process pid 0 (as the pevents writer's base record does).
StatusOr<SageMakerTraceFile> ParseTfProfilerTrace(std::string_view bytes, const std::optional<TfProfilerMetadata>& metadata,
                                                  std::string_view file_name);
// Reads `path` (*.trace.json.gz) and looks for the .metadata file in the step folder three
// levels up (<step>/plugins/profile/<date>/<host>.trace.json.gz).
StatusOr<SageMakerTraceFile> ReadTfProfilerTrace(const std::string& path);

// Events overlapping the closed interval [start_us, end_us]: end >= start_us and start <= end_us.
std::vector<SageMakerTraceEvent> TraceEventsOverlapping(const std::vector<SageMakerTraceEvent>& events,
                                                        int64_t start_us, int64_t end_us);

}  // namespace stepscope::analysis
