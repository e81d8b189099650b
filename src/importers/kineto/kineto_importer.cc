#include "importers/kineto/kineto_importer.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "importers/common/trace_bytes.h"
#include "importers/kineto/kineto_flow_linker.h"

namespace stepscope::analysis {
namespace {

// Earlier than 2001-09-09 as Unix-epoch ns: such times are not wall-clock (legacy traces count
// from the profiler's start; a truncated Kineto trace may have lost baseTimeNanoseconds).
constexpr int64_t kEpochPlausibleNs = 1'000'000'000'000'000'000;

// "dir/name.pt.trace.json.gz" -> "name".
std::string FileStem(std::string_view name) {
  const size_t slash = name.find_last_of('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  for (std::string_view suffix : {".gz", ".json", ".pt.trace"}) {
    if (name.ends_with(suffix) && name.size() > suffix.size()) name.remove_suffix(suffix.size());
  }
  return std::string(name);
}

std::string ManifestJson(const KinetoFile& file, int64_t shift_ns) {
  nlohmann::json manifest = nlohmann::json::object();
  manifest["source"] = "kineto";
  manifest["file"] = file.name;
  manifest["format"] = file.legacy_array ? "autograd-profiler array" : "kineto chrome trace";
  manifest["time_shift_ns"] = shift_ns;
  if (file.has_base_time) manifest["baseTimeNanoseconds"] = file.base_time_ns;
  if (!file.distributed_info_json.empty()) {
    nlohmann::json info = nlohmann::json::parse(file.distributed_info_json, nullptr, /*allow_exceptions=*/false);
    manifest["distributedInfo"] = info.is_discarded() ? nlohmann::json(file.distributed_info_json) : info;
  }
  nlohmann::json processes = nlohmann::json::object();
  for (const auto& [pid, name] : file.process_names) processes[std::to_string(pid)] = name;
  manifest["processes"] = std::move(processes);
  // The GPU models (deviceProperties[].name): what the rules know of a stepscope run's GPUs from
  // its capabilities (LowPrecisionOpportunity's tensor cores).
  if (!file.gpu_names.empty()) manifest["gpus"] = file.gpu_names;
  nlohmann::json threads = nlohmann::json::object();
  for (const auto& [track, name] : file.thread_names) {
    threads[std::to_string(track.first) + "/" + std::to_string(track.second)] = name;
  }
  manifest["threads"] = std::move(threads);
  nlohmann::json string_ids = nlohmann::json::object();
  for (const auto& [text, id] : file.string_track_ids) string_ids[text] = id;
  manifest["string_track_ids"] = std::move(string_ids);
  // replace: trace names are not guaranteed UTF-8, and dump() must not throw.
  return manifest.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

KinetoImporter::KinetoImporter()
    : builder_(ModelSource::kKineto),
      parser_(builder_),
      ac2g_(builder_.Intern("ac2g")),
      legacy_ac2g_(builder_.Intern("async_cpu_to_gpu")) {}

Status KinetoImporter::AddFile(const std::string& path) {
  STEPSCOPE_ASSIGN_OR_RETURN(TraceBytes decoded, ReadTraceFile(path, simdjson::SIMDJSON_PADDING));
  return AddDecoded(path, decoded.bytes, decoded.truncated);
}

Status KinetoImporter::AddBytes(std::string_view name, std::string_view bytes) {
  STEPSCOPE_ASSIGN_OR_RETURN(TraceBytes decoded, DecodeTraceBytes(name, bytes, simdjson::SIMDJSON_PADDING));
  return AddDecoded(name, decoded.bytes, decoded.truncated);
}

Status KinetoImporter::AddText(std::string_view name, std::string text) {
  return AddDecoded(name, text, /*truncated=*/false);
}

Status KinetoImporter::AddDecoded(std::string_view name, std::string& bytes, bool truncated) {
  if (bytes.capacity() < bytes.size() + simdjson::SIMDJSON_PADDING) bytes.reserve(bytes.size() + simdjson::SIMDJSON_PADDING);
  KinetoFile file;
  STEPSCOPE_RETURN_IF_ERROR(
      parser_.Parse(name, simdjson::padded_string_view(bytes.data(), bytes.size(), bytes.capacity()), truncated, &file));
  Place(file);
  return OkStatus();
}

std::string KinetoImporter::NodeName(const KinetoFile& file) {
  std::string name = file.rank >= 0 ? "rank-" + std::to_string(file.rank) : FileStem(file.name);
  if (std::find(node_names_.begin(), node_names_.end(), name) != node_names_.end()) {
    // Two files claim one rank (traces of different runs, or a re-export): keep them apart.
    const std::string unique = name + ":" + FileStem(file.name);
    builder_.AddProblem("kineto_duplicate_node", ProblemSeverity::kInfo,
                        file.name + ": node '" + name + "' already came from another file; this one is '" + unique + "'");
    name = unique;
  }
  node_names_.push_back(name);
  return name;
}

void KinetoImporter::Place(KinetoFile& file) {
  // baseTimeNanoseconds: newer Kineto writes ts relative to it (ts ~1e12 µs; the fixtures with
  // the field all do). Older traces write absolute ts and no field. If a trace had both the
  // field and absolute ts, adding it again would land in the 2070s, so it is added only when
  // the earliest ts lies before it.
  int64_t min_start_ns = INT64_MAX;
  for (const StagedEvent& staged : file.events) min_start_ns = std::min(min_start_ns, staged.event.start_ns);
  const int64_t shift_ns = file.has_base_time && min_start_ns < file.base_time_ns ? file.base_time_ns : 0;

  NodeFacts facts;
  facts.name = NodeName(file);
  if (file.has_device_properties) {
    facts.gpu_count = static_cast<int32_t>(file.gpu_memory_bytes.size());
    facts.gpu_memory_bytes = file.gpu_memory_bytes;
  }
  facts.manifest_json = ManifestJson(file, shift_ns);
  const uint32_t node = builder_.AddNode(facts);

  if (!file.events.empty() && min_start_ns + shift_ns < kEpochPlausibleNs) {
    builder_.AddProblem("kineto_relative_times", ProblemSeverity::kError,
                        file.name + ": times are relative (to the profiler's start" +
                        std::string(file.legacy_array ? ", as the legacy autograd-profiler writes them" : "") +
                        "), not Unix-epoch; align them with other data by hand");
  }

  FlowLinkStats stats;
  const std::vector<StagedFlow> flows = LinkKinetoFlows(file, ac2g_, legacy_ac2g_, &stats);

  builder_.ReserveEvents(file.events.size(), file.args.size());
  const uint32_t first_index = static_cast<uint32_t>(builder_.event_count());
  int64_t saturated = 0;
  std::vector<int32_t> host_pids;  // the rank's processes, when the trace names its rank
  for (StagedEvent& staged : file.events) {
    FrameworkEvent& event = staged.event;
    event.node = node;
    if (file.rank >= 0 && event.device < 0 && (host_pids.empty() || host_pids.back() != event.pid)) {
      host_pids.push_back(event.pid);
    }
    // Hostile or broken files can put ts near INT64_MAX; clamp rather than wrap.
    if (__builtin_add_overflow(event.start_ns, shift_ns, &event.start_ns)) event.start_ns = INT64_MAX, ++saturated;
    if (__builtin_add_overflow(event.end_ns, shift_ns, &event.end_ns)) event.end_ns = INT64_MAX, ++saturated;
    builder_.AddEvent(event, std::span<const EventArg>(file.args.data() + event.first_arg, event.arg_count));
  }
  std::sort(host_pids.begin(), host_pids.end());
  host_pids.erase(std::unique(host_pids.begin(), host_pids.end()), host_pids.end());
  for (int32_t pid : host_pids) {
    ProcessFacts process;
    process.node = node;
    process.pid = pid;
    process.rank = static_cast<int32_t>(std::min<int64_t>(file.rank, INT32_MAX));
    process.world_size = static_cast<int32_t>(std::min<int64_t>(file.world_size, INT32_MAX));
    builder_.AddProcess(process);
  }
  if (saturated > 0) {
    builder_.AddProblem("kineto_timestamps_clamped", ProblemSeverity::kError,
                        file.name + ": " + std::to_string(saturated) +
                            " timestamps past the year 2262 after adding baseTimeNanoseconds were clamped",
                        static_cast<uint64_t>(saturated));
  }
  for (const StagedFlow& flow : flows) builder_.AddFlow(first_index + flow.from, first_index + flow.to, flow.category, flow.id);
  if (stats.unbound_points > 0) {
    builder_.AddProblem("kineto_unbound_flows", ProblemSeverity::kDataLoss,
                        file.name + ": " + std::to_string(stats.unbound_points) +
                            " flow pairs point at no slice on their track and were dropped",
                        static_cast<uint64_t>(stats.unbound_points));
  }
  for (Problem& problem : file.problems) builder_.AddProblem(std::move(problem));
}

Model KinetoImporter::Finish() && { return std::move(builder_).Finish(); }

StatusOr<Model> ImportKineto(const std::vector<std::string>& files) {
  KinetoImporter importer;
  for (const std::string& file : files) STEPSCOPE_RETURN_IF_ERROR(importer.AddFile(file));
  return std::move(importer).Finish();
}

}  // namespace stepscope::analysis
