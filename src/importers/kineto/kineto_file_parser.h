// Parses one PyTorch profiler trace (a Kineto Chrome trace object, or the legacy
// autograd-profiler bare array; shared/FORMATS.md §2) into a staged KinetoFile: events already
// in the model's vocabulary (phase, category, name, args), but with times as written (µs text ->
// ns, before baseTimeNanoseconds) and no node, because Kineto writes distributedInfo and
// baseTimeNanoseconds on either side of traceEvents and simdjson On-Demand reads forward only.
// kineto_importer.cc places the staged file into the model; kineto_flow_linker.cc pairs flows.
//
// Strings are interned through the caller's ModelBuilder. One parser per thread; simdjson's
// buffers are kept per thread, between files and importers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "analysis/model.h"
#include "base/status.h"

namespace stepscope::analysis {

// What an event is for flow linking.
enum class KinetoRole : uint8_t { kOther, kLaunch /* cuda_runtime, cuda_driver */, kGpuOp /* kernel, memcpy, memset */ };

struct StagedEvent {
  FrameworkEvent event;      // first_arg indexes KinetoFile::args; node unset; times unshifted
  int64_t track_pid = 0;     // the trace's pid/tid (string ids mapped to negative numbers):
  int64_t track_tid = 0;     // flow endpoints bind to slices on the same track
  int64_t correlation = -1;  // args.correlation, -1 when absent
  KinetoRole role = KinetoRole::kOther;
};

struct FlowEndpoint {
  StringId category = 0;
  int64_t id = 0;
  int64_t track_pid = 0;
  int64_t track_tid = 0;
  int64_t ts_ns = 0;
  bool is_start = false;  // "s" (else "f")
};

struct KinetoFile {
  std::string name;
  bool legacy_array = false;
  std::vector<StagedEvent> events;
  std::vector<EventArg> args;
  std::vector<FlowEndpoint> flow_endpoints;
  bool has_base_time = false;
  int64_t base_time_ns = 0;
  int64_t rank = -1;                       // distributedInfo.rank
  int64_t world_size = -1;                 // distributedInfo.world_size
  std::string distributed_info_json;       // raw, "" when absent
  std::vector<int64_t> gpu_memory_bytes;   // deviceProperties[].totalGlobalMem
  std::vector<std::string> gpu_names;      // deviceProperties[].name ("" when absent)
  bool has_device_properties = false;
  std::map<int64_t, std::string> process_names;                   // M process_name / process_labels
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;  // M thread_name ("stream 7 ")
  std::map<std::string, int64_t> string_track_ids;               // "Spans" -> -1, ...
  bool truncated = false;
  size_t parsed_bytes = 0;                 // where a truncated file's kept events end
  std::vector<Problem> problems;
};

class KinetoFileParser {
 public:
  explicit KinetoFileParser(ModelBuilder& builder);

  // `bytes` must have simdjson::SIMDJSON_PADDING readable bytes past its end. `input_truncated`
  // says the bytes are known to be cut short (a gzip stream without its end). Errors are one
  // line naming the file and the byte offset.
  Status Parse(std::string_view name, simdjson::padded_string_view bytes, bool input_truncated, KinetoFile* out);

 private:
  struct Keys;
  simdjson::error_code ParseDocument(simdjson::padded_string_view bytes, KinetoFile* out, size_t* error_offset);
  simdjson::error_code ParseTraceEvents(simdjson::ondemand::array events, KinetoFile* out);
  simdjson::error_code ParseEvent(simdjson::ondemand::object object, KinetoFile* out);
  simdjson::error_code ParseDeviceProperties(simdjson::ondemand::array devices, KinetoFile* out);
  simdjson::error_code ParseDistributedInfo(simdjson::ondemand::object info, KinetoFile* out);
  int64_t TrackId(simdjson::ondemand::value value, KinetoFile* out, bool* ok);
  StringId GpuPhase(int32_t device);
  StringId PhaseFromText(std::string_view text, StringId id);

  ModelBuilder& builder_;
  simdjson::ondemand::document document_;
  const char* buffer_begin_ = nullptr;
  size_t document_bytes_ = 0;
  std::vector<StringId> gpu_phase_by_device_;
  // Per file: events skipped and why ("ph 'B'", "X without ts"), reported once each.
  std::map<std::string, int64_t> skipped_;
  std::vector<std::pair<std::string_view, double>> counter_values_;  // scratch for C events
  std::vector<EventArg> arg_scratch_;
  std::vector<StringId> kept_arg_ids_;  // interned once: one hash lookup less per kept arg
  struct Ids {
    StringId cpu_functions, step_train, user_annotation, python_function, cuda_runtime, instant, counter_series,
        counter_value, step_num, annotation;
  } ids_;
};

}  // namespace stepscope::analysis
