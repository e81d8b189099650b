#include "importers/sagemaker/sagemaker_trace_reader.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <regex>
#include <unordered_map>

#include "base/file_system.h"
#include "base/json_fields.h"
#include "importers/common/gzip_text.h"
#include "importers/common/json_document.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kFix = "re-copy the file from the job's profiler output, or delete it to import the rest";
constexpr const char* kPeventsSuffixes[] = {"pythontimeline", "model_timeline", "horovod_timeline",
                                            "smdataparallel_timeline"};
// |time| in ns must stay far from INT64 limits after adding a base and a duration.
constexpr double kMaxAbsNs = 4.0e18;

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// An integer from a number or a numeric string ("step_num": "3"); nullopt otherwise.
std::optional<int64_t> IntegerOf(const nlohmann::json* value) {
  if (value == nullptr) return std::nullopt;
  if (value->is_number_integer()) return value->get<int64_t>();
  if (value->is_number_float()) {
    const double d = value->get<double>();
    if (std::isfinite(d) && std::fabs(d) < 9.0e18) return static_cast<int64_t>(d);
    return std::nullopt;
  }
  if (value->is_string()) return ParseInt(value->get_ref<const std::string&>());
  return std::nullopt;
}

std::vector<SageMakerTraceArg> ArgsOf(const nlohmann::json& args) {
  std::vector<SageMakerTraceArg> out;
  if (!args.is_object()) return out;
  for (auto it = args.begin(); it != args.end(); ++it) {
    SageMakerTraceArg arg;
    arg.key = it.key();
    const nlohmann::json& value = it.value();
    if (value.is_number_integer()) {
      arg.type = SageMakerTraceArg::Type::kInt;
      arg.int_value = value.get<int64_t>();
    } else if (value.is_number_float()) {
      arg.type = SageMakerTraceArg::Type::kDouble;
      arg.double_value = value.get<double>();
    } else if (value.is_string()) {
      arg.string_value = value.get<std::string>();
    } else if (value.is_boolean()) {
      arg.type = SageMakerTraceArg::Type::kBool;
      arg.bool_value = value.get<bool>();
    } else {
      // error_handler replace: invalid UTF-8 in a string must not throw from dump().
      arg.string_value = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    out.push_back(std::move(arg));
  }
  return out;
}

// ts/dur (µs, possibly fractional) relative to base_us, as epoch ns; nullopt when out of range.
std::optional<int64_t> EpochNs(int64_t base_us, double relative_us) {
  const double ns = static_cast<double>(base_us) * 1000.0 + std::round(relative_us * 1000.0);
  if (!std::isfinite(ns) || std::fabs(ns) > kMaxAbsNs) return std::nullopt;
  // Integer base plus rounded offset keeps whole µs exact for epoch-scale times.
  return base_us * 1000 + static_cast<int64_t>(std::round(relative_us * 1000.0));
}

Status EventError(std::string_view file_name, size_t index, std::string_view what) {
  return DataLossError(std::string(file_name) + ": trace event #" + std::to_string(index) + " " + std::string(what) +
                       "; " + std::string(kFix));
}

bool FitsBase(int64_t base_us) { return base_us > -4'000'000'000'000'000 && base_us < 4'000'000'000'000'000; }

}  // namespace

std::optional<PeventsFileName> ParsePeventsFileName(std::string_view file_name) {
  if (!file_name.ends_with(".json")) return std::nullopt;
  std::string_view stem = file_name.substr(0, file_name.size() - 5);
  PeventsFileName parsed;
  bool matched = false;
  for (const char* suffix : kPeventsSuffixes) {
    const std::string tail = std::string("_") + suffix;
    if (stem.ends_with(tail)) {
      parsed.suffix = suffix;
      matched = true;
      break;
    }
  }
  if (!matched) return std::nullopt;
  const size_t first = stem.find('_');
  const size_t second = stem.find('_', first + 1);
  if (first == std::string_view::npos || second == std::string_view::npos) return std::nullopt;
  auto end_us = ParseInt(stem.substr(0, first));
  if (!end_us) return std::nullopt;
  parsed.end_us = *end_us;
  parsed.node_id = RewriteSageMakerNodeId(stem.substr(first + 1, second - first - 1));
  return parsed;
}

std::string RewriteSageMakerNodeId(std::string_view node_id) {
  static const std::regex kPattern(R"(^(.+)-(algo-\d+)$)");
  std::match_results<std::string_view::const_iterator> match;
  if (std::regex_match(node_id.begin(), node_id.end(), match, kPattern)) {
    return match[2].str() + "-" + match[1].str();
  }
  return std::string(node_id);
}

std::optional<TfProfilerMetadata> ParseTfMetadataFileName(std::string_view file_name) {
  constexpr std::string_view kExtension = ".metadata";
  if (!file_name.ends_with(kExtension)) return std::nullopt;
  std::string_view stem = file_name.substr(0, file_name.size() - kExtension.size());
  const size_t last = stem.rfind('_');
  if (last == std::string_view::npos || last == 0) return std::nullopt;
  const size_t middle = stem.rfind('_', last - 1);
  if (middle == std::string_view::npos) return std::nullopt;
  auto start_us = ParseInt(stem.substr(middle + 1, last - middle - 1));
  auto end_us = ParseInt(stem.substr(last + 1));
  if (!start_us || !end_us || !FitsBase(*start_us)) return std::nullopt;
  return TfProfilerMetadata{std::string(stem.substr(0, middle)), *start_us, *end_us};
}

StatusOr<SageMakerTraceFile> ParseSageMakerTraceEvents(const nlohmann::json& events, std::string_view node_id,
                                                       int64_t base_us, std::string_view file_name) {
  if (!events.is_array()) {
    return DataLossError(std::string(file_name) + ": expected a JSON array of trace events; " + std::string(kFix));
  }
  SageMakerTraceFile file;
  file.node_id = std::string(node_id);
  file.base_us = base_us;

  // Metadata first: a process_name may follow events of its pid, and the time base is the first
  // start_time_since_epoch_in_micros anywhere in the file.
  bool base_known = false;
  for (const nlohmann::json& event : events) {
    if (JsonString(event, "ph") != "M" || JsonString(event, "name") != "process_name") continue;
    const nlohmann::json args = JsonObject(event, "args");
    auto pid = IntegerOf(JsonField(event, "pid"));
    if (pid) file.processes.emplace(*pid, JsonString(args, "name"));
    auto start = IntegerOf(JsonField(args, "start_time_since_epoch_in_micros"));
    if (start && !base_known && FitsBase(*start)) {
      file.base_us = *start;
      base_known = true;
    }
  }
  auto phase_of = [&](int64_t pid) -> std::string {
    auto it = file.processes.find(pid);
    return it == file.processes.end() ? std::string() : it->second;
  };
  auto fill = [&](SageMakerTraceEvent& out, const nlohmann::json& event, int64_t pid) {
    out.name = JsonString(event, "name");
    out.phase = phase_of(pid);
    out.node_id = file.node_id;
    const nlohmann::json args = JsonObject(event, "args");
    out.pid = IntegerOf(JsonField(args, "pid")).value_or(pid);
    out.tid = IntegerOf(JsonField(args, "thread_id")).value_or(IntegerOf(JsonField(event, "tid")).value_or(0));
    out.step = IntegerOf(JsonField(args, "step_num")).value_or(-1);
    out.args = ArgsOf(args);
  };

  struct Open {
    size_t index;
    int64_t start_ns;
  };
  std::unordered_map<int64_t, std::vector<Open>> open_by_pid;
  for (size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& event = events[i];
    if (!event.is_object()) return EventError(file_name, i, "is not a JSON object");
    const std::string ph = JsonString(event, "ph");
    if (ph != "X" && ph != "B" && ph != "E") continue;  // M handled above; i, C, s, f, ... ignored
    const nlohmann::json* ts = JsonField(event, "ts");
    if (ts == nullptr || !ts->is_number()) return EventError(file_name, i, "(ph " + ph + ") has no numeric \"ts\"");
    auto start_ns = EpochNs(file.base_us, ts->get<double>());
    if (!start_ns) return EventError(file_name, i, "has \"ts\" out of range");
    const int64_t pid = IntegerOf(JsonField(event, "pid")).value_or(0);
    if (ph == "X") {
      const double dur_us = JsonDouble(event, "dur", 0);
      const double end = static_cast<double>(*start_ns) + std::round(dur_us * 1000.0);
      if (!std::isfinite(end) || std::fabs(end) > kMaxAbsNs) return EventError(file_name, i, "has \"dur\" out of range");
      if (dur_us < 0) {
        ++file.negative_durations;
        continue;
      }
      SageMakerTraceEvent out;
      out.start_ns = *start_ns;
      out.end_ns = *start_ns + static_cast<int64_t>(std::round(dur_us * 1000.0));
      fill(out, event, pid);
      file.events.push_back(std::move(out));
    } else if (ph == "B") {
      open_by_pid[pid].push_back(Open{i, *start_ns});
    } else {
      auto it = open_by_pid.find(pid);
      if (it == open_by_pid.end() || it->second.empty()) {
        ++file.orphan_end_events;
        continue;
      }
      const Open begin = it->second.back();
      it->second.pop_back();
      if (*start_ns < begin.start_ns) {
        ++file.negative_durations;
        continue;
      }
      SageMakerTraceEvent out;
      out.start_ns = begin.start_ns;
      out.end_ns = *start_ns;
      fill(out, events[begin.index], pid);
      // The E event may carry args of its own (results); keep them after the B's.
      std::vector<SageMakerTraceArg> end_args = ArgsOf(JsonObject(event, "args"));
      out.args.insert(out.args.end(), end_args.begin(), end_args.end());
      file.events.push_back(std::move(out));
    }
  }
  for (const auto& [pid, open] : open_by_pid) file.unclosed_begin_events += static_cast<int64_t>(open.size());
  return file;
}

StatusOr<SageMakerTraceFile> ParsePeventsText(std::string_view text, std::string_view file_name) {
  const std::string base_name = std::filesystem::path(std::string(file_name)).filename().string();
  auto parsed_name = ParsePeventsFileName(base_name);
  std::string node_id;
  if (parsed_name) {
    node_id = parsed_name->node_id;
  } else {
    // Not the writer's pattern (a renamed copy): the second `_` field if there is one.
    const size_t first = base_name.find('_');
    const size_t second = first == std::string::npos ? std::string::npos : base_name.find('_', first + 1);
    if (second != std::string::npos) node_id = RewriteSageMakerNodeId(base_name.substr(first + 1, second - first - 1));
  }
  STEPSCOPE_ASSIGN_OR_RETURN(nlohmann::json document, ParseJsonDocument(text, file_name, kFix));
  return ParseSageMakerTraceEvents(document, node_id, 0, file_name);
}

StatusOr<SageMakerTraceFile> ReadPeventsFile(const std::string& path) {
  LocalFileSystem fs;
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return ParsePeventsText(text, path);
}

StatusOr<SageMakerTraceFile> ParseTfProfilerTrace(std::string_view bytes, const std::optional<TfProfilerMetadata>& metadata,
                                                  std::string_view file_name) {
  std::string inflated;
  // gzip magic 1f 8b: the writer's .gz; plain JSON is accepted too (a decompressed copy).
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b) {
    STEPSCOPE_ASSIGN_OR_RETURN(inflated, GunzipText(bytes, file_name));
    bytes = inflated;
  }
  STEPSCOPE_ASSIGN_OR_RETURN(nlohmann::json document, ParseJsonDocument(bytes, file_name, kFix));
  const nlohmann::json* events = JsonField(document, "traceEvents");
  if (events == nullptr || !events->is_array()) {
    return DataLossError(std::string(file_name) + ": not a TF profiler trace (no \"traceEvents\" array); " +
                         std::string(kFix));
  }
  const int64_t base_us = metadata ? metadata->start_us : 0;
  STEPSCOPE_ASSIGN_OR_RETURN(SageMakerTraceFile file,
                             ParseSageMakerTraceEvents(*events, metadata ? metadata->node_id : "", base_us, file_name));
  if (metadata) file.processes.emplace(0, "");
  return file;
}

StatusOr<SageMakerTraceFile> ReadTfProfilerTrace(const std::string& path) {
  LocalFileSystem fs;
  STEPSCOPE_ASSIGN_OR_RETURN(std::string bytes, fs.ReadFile(path));
  std::optional<TfProfilerMetadata> metadata;
  // <step>/plugins/profile/<date>/<host>.trace.json.gz: the step folder is four parents up.
  std::filesystem::path step_dir = std::filesystem::path(path).parent_path().parent_path().parent_path().parent_path();
  std::error_code error;
  for (std::filesystem::directory_iterator it(step_dir, error), end; !error && it != end; it.increment(error)) {
    metadata = ParseTfMetadataFileName(it->path().filename().string());
    if (metadata) break;
  }
  return ParseTfProfilerTrace(bytes, metadata, path);
}

std::vector<SageMakerTraceEvent> TraceEventsOverlapping(const std::vector<SageMakerTraceEvent>& events,
                                                        int64_t start_us, int64_t end_us) {
  std::vector<SageMakerTraceEvent> found;
  for (const SageMakerTraceEvent& event : events) {
    if (event.end_us() < start_us || event.start_us() > end_us) continue;
    found.push_back(event);
  }
  return found;
}

}  // namespace stepscope::analysis
