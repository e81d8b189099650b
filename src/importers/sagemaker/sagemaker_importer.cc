#include "importers/sagemaker/sagemaker_importer.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <optional>
#include <regex>
#include <string_view>
#include <unordered_map>

#include "base/file_system.h"
#include "importers/sagemaker/sagemaker_system_reader.h"

namespace stepscope::analysis {
namespace {

namespace fs = std::filesystem;

// Recursive listing of regular files under `dir` (absent: empty), sorted. Never throws.
StatusOr<std::vector<fs::path>> ListFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return files;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    std::error_code type_error;
    if (it->is_regular_file(type_error)) files.push_back(it->path());
  }
  if (error) return IoError("cannot list '" + dir.string() + "': " + error.message() + "; check the permissions");
  std::sort(files.begin(), files.end());
  return files;
}

// Maps a system record's (node, type, name, dimension) to its model series without building
// a key per record: a node writes the same series in the same order at every poll, so the
// entry after the last hit is tried first, with a hash map behind it. A 24 h job has tens of
// millions of records; the per-record key string and node lookup were most of its import.
class SystemSeriesCache {
 public:
  explicit SystemSeriesCache(ModelBuilder& builder) : builder_(builder) {}

  uint32_t SeriesFor(std::string_view node_name, const SageMakerSystemRecordView& record) {
    if (next_ < entries_.size() && entries_[next_].Matches(node_name, record)) return entries_[next_++].series;
    scratch_.assign(node_name).append(1, '\0').append(record.type).append(1, '\0').append(record.name);
    scratch_.append(1, '\0').append(record.dimension);
    auto [it, inserted] = index_.try_emplace(scratch_, entries_.size());
    if (inserted) {
      const uint32_t node = builder_.AddNode(NodeFacts{.name = std::string(node_name)});
      entries_.push_back(Entry{std::string(node_name), std::string(record.type), std::string(record.name),
                               std::string(record.dimension),
                               builder_.SeriesFor(node, record.type, record.name, record.dimension)});
    }
    next_ = it->second + 1;
    return entries_[it->second].series;
  }

 private:
  struct Entry {
    std::string node, type, name, dimension;
    uint32_t series;
    bool Matches(std::string_view node_name, const SageMakerSystemRecordView& record) const {
      return name == record.name && dimension == record.dimension && type == record.type && node == node_name;
    }
  };
  ModelBuilder& builder_;
  std::vector<Entry> entries_;
  size_t next_ = 0;
  std::unordered_map<std::string, size_t> index_;
  std::string scratch_;
};

// A writer's node id names the node whose system metrics it shares: smdebug names each writing
// process "<rank or pid>-algo-<n>" (read as "algo-<n>-<x>", RewriteSageMakerNodeId), and only
// "algo-<n>" writes system metrics. "" when `node_id` is a node's own name or no such writer.
std::string_view HostOfWriter(std::string_view node_id) {
  static const std::regex kWriter(R"(^(algo-\d+)-\d+$)");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_match(node_id.begin(), node_id.end(), match, kWriter)) return {};
  return node_id.substr(0, static_cast<size_t>(match.length(1)));
}

void AddTraceEvents(ModelBuilder& builder, const SageMakerTraceFile& file) {
  const std::string_view host = HostOfWriter(file.node_id);
  const uint32_t node = builder.AddNode(NodeFacts{.name = std::string(host.empty() ? file.node_id : host)});
  const StringId writer = host.empty() ? kEmptyString : builder.Intern(file.node_id);
  const StringId pid_key = builder.Intern("pid");
  std::vector<EventArg> args;
  int64_t last_writer_pid = -1;
  for (const SageMakerTraceEvent& event : file.events) {
    FrameworkEvent out;
    out.start_ns = event.start_ns;
    out.end_ns = event.end_ns;
    out.tid = event.tid;
    out.step = event.step;
    out.pid = static_cast<int32_t>(std::clamp<int64_t>(event.pid, std::numeric_limits<int32_t>::min(),
                                                       std::numeric_limits<int32_t>::max()));
    out.node = node;
    out.phase = builder.Intern(event.phase);
    out.name = builder.Intern(event.name);
    args.clear();
    for (const SageMakerTraceArg& arg : event.args) {
      switch (arg.type) {
        case SageMakerTraceArg::Type::kInt: args.push_back(builder.IntArg(arg.key, arg.int_value)); break;
        case SageMakerTraceArg::Type::kDouble: args.push_back(builder.DoubleArg(arg.key, arg.double_value)); break;
        case SageMakerTraceArg::Type::kString: args.push_back(builder.StringArg(arg.key, arg.string_value)); break;
        case SageMakerTraceArg::Type::kBool: args.push_back(builder.BoolArg(arg.key, arg.bool_value)); break;
      }
    }
    // The processes a rank's writer recorded (args.pid: steps, data-loader workers) keep the
    // writer's id; other events carry only the timeline's own pid numbering.
    const bool real_pid = std::any_of(args.begin(), args.end(), [&](const EventArg& arg) { return arg.key == pid_key; });
    if (writer != kEmptyString && real_pid && out.pid != last_writer_pid) {
      builder.AddProcess(ProcessFacts{.node = node, .pid = out.pid, .writer = writer});
      last_writer_pid = out.pid;
    }
    builder.AddEvent(out, args);
  }
}

// The reference's file timestamps (µs): a system file's is the minute in its name, a pevents
// file's the end of its last event, as its name says.
int64_t SystemFileTimeUs(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  int64_t seconds = 0;
  std::from_chars(name.data(), name.data() + 10, seconds);  // IsSageMakerSystemFileName: 10 digits
  return seconds * 1'000'000;
}

// RULES.md §0: origin at the first system file (an earlier framework file moves it), evaluation
// up to the earlier of the latest system and the latest framework file; one kind alone when the
// other is missing.
FileGrid FileGridOf(const SageMakerFiles& files) {
  std::optional<std::pair<int64_t, int64_t>> system, framework;  // (first, latest) µs
  auto see = [](std::optional<std::pair<int64_t, int64_t>>& range, int64_t t_us) {
    if (!range) range.emplace(t_us, t_us);
    range->first = std::min(range->first, t_us);
    range->second = std::max(range->second, t_us);
  };
  for (const std::string& path : files.system) see(system, SystemFileTimeUs(path));
  for (const std::string& path : files.pevents) {
    if (auto name = ParsePeventsFileName(fs::path(path).filename().string())) see(framework, name->end_us);
  }
  FileGrid grid;
  if (!system && !framework) return grid;
  int64_t origin_us = 0, stop_us = 0;
  if (system && framework) {
    origin_us = std::min(system->first, framework->first);
    stop_us = std::min(system->second, framework->second);
  } else {
    const auto& only = system ? *system : *framework;
    origin_us = only.first;
    stop_us = only.second;
  }
  grid.known = true;
  grid.origin_ns = origin_us * 1000;
  grid.stop_ns = stop_us * 1000;
  return grid;
}

void NoteSkipped(ModelBuilder& builder, const std::string& path, const SageMakerTraceFile& file) {
  if (file.orphan_end_events > 0) {
    builder.AddProblem("sagemaker_orphan_end_events", ProblemSeverity::kDataLoss,
                       path + ": skipped " + std::to_string(file.orphan_end_events) + " E event(s) with no open B",
                       file.orphan_end_events);
  }
  if (file.negative_durations > 0) {
    builder.AddProblem("sagemaker_negative_durations", ProblemSeverity::kDataLoss,
                       path + ": dropped " + std::to_string(file.negative_durations) + " event(s) with a negative duration",
                       file.negative_durations);
  }
  if (file.unclosed_begin_events > 0) {
    builder.AddProblem("sagemaker_unclosed_begin_events", ProblemSeverity::kDataLoss,
                       path + ": dropped " + std::to_string(file.unclosed_begin_events) + " B event(s) never closed",
                       file.unclosed_begin_events);
  }
}

}  // namespace

StatusOr<SageMakerFiles> FindSageMakerFiles(const std::string& root_dir) {
  std::error_code error;
  const fs::path root(root_dir);
  if (!fs::is_directory(root, error)) {
    return NotFoundError("'" + root_dir + "' is not a directory; pass the job's profiler-output directory");
  }
  const bool has_system = fs::is_directory(root / "system", error);
  const bool has_framework = fs::is_directory(root / "framework", error);
  if (!has_system && !has_framework) {
    return NotFoundError("'" + root_dir + "' holds neither system/ nor framework/; pass the profiler-output directory "
                         "(s3://<bucket>/<job>/profiler-output copied locally)");
  }
  SageMakerFiles files;
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<fs::path> system, ListFiles(root / "system"));
  for (const fs::path& path : system) {
    const std::string name = path.filename().string();
    if (IsSageMakerSystemFileName(name)) files.system.push_back(path.string());
    if (name == "training_job_end.ts") files.end_markers.push_back(path.string());
  }
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<fs::path> framework, ListFiles(root / "framework"));
  const fs::path pevents_dir = root / "framework" / "pevents";
  for (const fs::path& path : framework) {
    const std::string name = path.filename().string();
    const std::string text = path.string();
    if (name == "training_job_end.ts") {
      files.end_markers.push_back(text);
    } else if (text.starts_with(pevents_dir.string() + "/") && ParsePeventsFileName(name)) {
      files.pevents.push_back(text);
    } else if (name.ends_with(".trace.json.gz")) {
      files.tf_traces.push_back(text);
    }
  }
  return files;
}

StatusOr<std::vector<SageMakerTraceEvent>> ReadPeventsEvents(const std::string& root_dir, const std::string& suffix,
                                                             int64_t start_us, int64_t end_us) {
  STEPSCOPE_ASSIGN_OR_RETURN(SageMakerFiles files, FindSageMakerFiles(root_dir));
  std::vector<SageMakerTraceEvent> events;
  for (const std::string& path : files.pevents) {
    auto name = ParsePeventsFileName(fs::path(path).filename().string());
    if (!suffix.empty() && (!name || name->suffix != suffix)) continue;
    STEPSCOPE_ASSIGN_OR_RETURN(SageMakerTraceFile file, ReadPeventsFile(path));
    for (SageMakerTraceEvent& event : TraceEventsOverlapping(file.events, start_us, end_us)) {
      events.push_back(std::move(event));
    }
  }
  return events;
}

StatusOr<std::vector<SageMakerTraceEvent>> MergeSageMakerTraces(const std::string& root_dir, int64_t start_us,
                                                                int64_t end_us) {
  std::vector<SageMakerTraceEvent> merged;
  for (const char* suffix : {"pythontimeline", "model_timeline", "horovod_timeline", "smdataparallel_timeline"}) {
    STEPSCOPE_ASSIGN_OR_RETURN(std::vector<SageMakerTraceEvent> part, ReadPeventsEvents(root_dir, suffix, start_us, end_us));
    merged.insert(merged.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const SageMakerTraceEvent& a, const SageMakerTraceEvent& b) { return a.start_ns < b.start_ns; });
  return merged;
}

StatusOr<Model> ImportSageMaker(const std::string& root_dir, SageMakerImportStats* stats) {
  SageMakerImportStats local;
  SageMakerImportStats& counts = stats != nullptr ? *stats : local;
  counts = SageMakerImportStats{};
  STEPSCOPE_ASSIGN_OR_RETURN(SageMakerFiles files, FindSageMakerFiles(root_dir));
  ModelBuilder builder(ModelSource::kSageMaker);

  SystemSeriesCache series_cache(builder);
  LocalFileSystem local_files;
  for (const std::string& path : files.system) {
    STEPSCOPE_ASSIGN_OR_RETURN(const std::string text, local_files.ReadFile(path));
    // Records name their node; a record without one belongs to the node in the file name.
    const std::string file_name = fs::path(path).filename().string();
    const std::string file_node = file_name.substr(11, file_name.size() - 11 - 5);  // "<10 digits>." ... ".json"
    bool truncated = false;
    STEPSCOPE_RETURN_IF_ERROR(VisitSageMakerSystemText(
        text, path,
        [&](const SageMakerSystemRecordView& record) {
          const std::string_view node_name = record.node_id.empty() ? std::string_view(file_node) : record.node_id;
          builder.AddSample(series_cache.SeriesFor(node_name, record), record.time_ns, record.value);
          ++counts.system_records;
        },
        &truncated));
    ++counts.system_files;
    if (truncated) {
      ++counts.truncated_system_files;
      builder.AddProblem("sagemaker_truncated_line", ProblemSeverity::kDataLoss, path + ": skipped a truncated last line");
    }
  }
  for (const std::string& path : files.pevents) {
    STEPSCOPE_ASSIGN_OR_RETURN(SageMakerTraceFile file, ReadPeventsFile(path));
    ++counts.pevents_files;
    counts.events += static_cast<int64_t>(file.events.size());
    NoteSkipped(builder, path, file);
    AddTraceEvents(builder, file);
  }
  for (const std::string& path : files.tf_traces) {
    STEPSCOPE_ASSIGN_OR_RETURN(SageMakerTraceFile file, ReadTfProfilerTrace(path));
    ++counts.tf_trace_files;
    counts.events += static_cast<int64_t>(file.events.size());
    if (file.node_id.empty()) {
      builder.AddProblem("sagemaker_relative_times", ProblemSeverity::kError,
                         path + ": no .metadata file in its step folder; times are relative (base 0)");
    }
    NoteSkipped(builder, path, file);
    AddTraceEvents(builder, file);
  }
  builder.SetFileGrid(FileGridOf(files));
  counts.job_end_marker = !files.end_markers.empty();
  if (!counts.job_end_marker && (!files.system.empty() || !files.pevents.empty())) {
    builder.AddProblem("sagemaker_no_job_end_marker", ProblemSeverity::kInfo,
                       "no training_job_end.ts: the job may still have been running when this copy was made");
  }
  return std::move(builder).Finish();
}

StatusOr<Model> ImportSageMaker(const std::string& root_dir) { return ImportSageMaker(root_dir, nullptr); }

}  // namespace stepscope::analysis
