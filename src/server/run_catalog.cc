#include "server/run_catalog.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "analysis/run_loader.h"
#include "base/file_system.h"
#include "store/format.h"
#include "store/ring_file.h"
#include "store/run_directory.h"
#include "store/run_manifest.h"

namespace stepscope::server {
namespace {

constexpr const char* kRootHint = "pass the --out directory of `stepscope run` (default ./stepscope-runs) or one run";

struct StatusName {
  RunStatus status;
  const char* name;
};
constexpr StatusName kStatusNames[] = {{RunStatus::kRunning, "running"},
                                       {RunStatus::kCompleted, "completed"},
                                       {RunStatus::kFailed, "failed"},
                                       {RunStatus::kKilled, "killed"},
                                       {RunStatus::kUnknown, "unknown"}};

std::string BaseName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A node manifest (what `stepscope run` writes), as opposed to an import's manifest or none.
bool HasNodeManifest(const std::string& directory) {
  auto text = ReadRegularFile(directory + "/" + store::kManifestFileName, Symlinks::kRefuse, store::kMaxManifestBytes);
  return text.ok() && store::ManifestDefect(*text).empty();
}

void AddProblem(RunEntry& run, const char* name, analysis::ProblemSeverity severity, std::string sentence) {
  run.problems.push_back(analysis::Problem{name, severity, 1, std::move(sentence)});
}

RunStatus NodeStatus(const store::RunManifest& manifest) {
  switch (manifest.status) {
    case store::ManifestStatus::kStarting:
    case store::ManifestStatus::kRunning:
      return RunStatus::kRunning;
    case store::ManifestStatus::kExited:
      return manifest.exit.known && manifest.exit.exit_code != 0 ? RunStatus::kFailed : RunStatus::kCompleted;
    case store::ManifestStatus::kKilled:
      return RunStatus::kKilled;
    case store::ManifestStatus::kFailedToStart:
      return RunStatus::kFailed;
    case store::ManifestStatus::kUnknown:
      break;
  }
  return RunStatus::kUnknown;
}

// A job's status from its nodes': one running node keeps the job running; then the worst end.
RunStatus JobStatus(const std::vector<RunStatus>& nodes) {
  for (RunStatus wanted : {RunStatus::kRunning, RunStatus::kKilled, RunStatus::kFailed, RunStatus::kUnknown}) {
    if (std::find(nodes.begin(), nodes.end(), wanted) != nodes.end()) return wanted;
  }
  return nodes.empty() ? RunStatus::kUnknown : RunStatus::kCompleted;
}

// An imported run: its manifest is `stepscope import`'s (src/cli/import_command.cc), not a node's.
void ReadImportedRun(RunEntry& run) {
  run.status = RunStatus::kCompleted;
  auto text = ReadRegularFile(run.directory + "/" + store::kManifestFileName, Symlinks::kRefuse,
                              store::kMaxManifestBytes);
  if (!text.ok()) {
    AddProblem(run, "import_manifest_unreadable", analysis::ProblemSeverity::kError,
               text.status().message() + "; import the data again with `stepscope import`");
    run.status = RunStatus::kUnknown;
    return;
  }
  const nlohmann::json manifest = nlohmann::json::parse(*text, nullptr, false);
  if (!manifest.is_object()) {
    AddProblem(run, "import_manifest_unreadable", analysis::ProblemSeverity::kError,
               "'" + run.directory + "/manifest.json' is not a JSON object; import the data again with `stepscope import`");
    run.status = RunStatus::kUnknown;
    return;
  }
  auto text_field = [&](const char* key) {
    auto it = manifest.find(key);
    return it != manifest.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (std::string job = text_field("job"); !job.empty()) run.job = job;
  run.source = text_field("source");
  if (auto nodes = manifest.find("nodes"); nodes != manifest.end() && nodes->is_array()) {
    for (const nlohmann::json& node : *nodes) {
      if (node.is_string()) run.nodes.push_back(node.get<std::string>());
    }
  }
  if (!Exists(run.directory + "/" + analysis::kModelFileName)) {
    AddProblem(run, "model_file_missing", analysis::ProblemSeverity::kError,
               "'" + run.directory + "/" + analysis::kModelFileName +
                   "' is missing: the import did not finish or the file was removed; import the data again");
    run.status = RunStatus::kUnknown;
  }
}

void ReadRecordedRun(RunEntry& run) {
  auto found = store::FindRunNodes(run.directory);
  if (!found.ok()) {
    AddProblem(run, "not_a_run", analysis::ProblemSeverity::kError, found.status().message());
    return;
  }
  for (const std::string& problem : found->problems) {
    AddProblem(run, "run_directory", analysis::ProblemSeverity::kInfo, problem);
  }
  std::vector<RunStatus> statuses;
  bool every_node_ended = true;
  for (const store::RunNode& node : found->nodes) {
    run.nodes.push_back(node.name);
    auto manifest = store::ReadRunManifest(node.path);
    if (!manifest.ok()) {
      AddProblem(run, "manifest_unreadable", analysis::ProblemSeverity::kError,
                 "node '" + node.name + "': " + manifest.status().message() +
                     "; its status and times are unknown (the run may still be starting, or was damaged)");
      statuses.push_back(RunStatus::kUnknown);
      every_node_ended = false;
      continue;
    }
    RunStatus status = NodeStatus(*manifest);
    // A launcher that died leaves its manifest saying it runs; its system sampler's ring, locked
    // for the launcher's whole life, is then free (analysis/job_nodes.h says since when).
    if (status == RunStatus::kRunning && store::SamplerStarted(manifest->status) &&
        Exists(node.path + "/system" + store::kRingSuffix) && !store::RingWriterAlive(node.path, "system")) {
      status = RunStatus::kKilled;
      AddProblem(run, "node_stopped_early", analysis::ProblemSeverity::kDataLoss,
                 "node '" + node.name + "''s launcher is gone while its manifest says the job runs (killed, crashed, "
                 "or its machine was lost); its data up to then is complete, and the run's overview says when it "
                 "stopped");
    }
    statuses.push_back(status);
    if (run.job == run.id && !manifest->job.empty()) run.job = manifest->job;
    if (run.instance_type.empty()) run.instance_type = manifest->instance_type;
    if (manifest->start_time_ns > 0 && (run.start_ns == 0 || manifest->start_time_ns < run.start_ns)) {
      run.start_ns = manifest->start_time_ns;
    }
    if (!store::IsFinal(manifest->status) || manifest->end_time_ns <= 0) every_node_ended = false;
    run.end_ns = std::max(run.end_ns, manifest->end_time_ns);
  }
  if (!every_node_ended) run.end_ns = 0;
  run.status = JobStatus(statuses);
}

RunEntry ReadRun(const std::string& directory, const std::string& id, const std::string& path) {
  RunEntry run;
  run.id = id;
  run.path = path;
  run.directory = directory;
  run.job = id;
  run.source = "stepscope";
  if (Exists(directory + "/" + analysis::kModelFileName) ||
      (Exists(directory + "/" + store::kManifestFileName) && !HasNodeManifest(directory))) {
    // No node manifest beside a manifest.json: an import's (the model file may be missing).
    ReadImportedRun(run);
  } else {
    ReadRecordedRun(run);
  }
  return run;
}

}  // namespace

const char* RunStatusName(RunStatus status) {
  for (const StatusName& entry : kStatusNames) {
    if (entry.status == status) return entry.name;
  }
  return "unknown";
}

std::optional<RunStatus> RunStatusFromName(const std::string& name) {
  for (const StatusName& entry : kStatusNames) {
    if (name == entry.name) return entry.status;
  }
  return std::nullopt;
}

StatusOr<ServeRoot> ResolveServeRoot(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return NotFoundError("runs directory '" + path + "' does not exist; " + kRootHint);
  }
  if (!S_ISDIR(st.st_mode)) return store::NotARunDirectoryError(path, S_ISREG(st.st_mode));
  LocalFileSystem fs;
  auto entries = fs.ListDirectory(path);
  if (!entries.ok()) {
    return IoError("cannot read runs directory '" + path + "': " + entries.status().message() +
                   "; check its permissions, or " + kRootHint);
  }
  ServeRoot root{path, false};
  // A run itself: an imported run, a node directory, or a job directory whose children are nodes.
  if (Exists(path + "/" + analysis::kModelFileName) || HasNodeManifest(path)) {
    root.single_run = true;
    return root;
  }
  for (const std::string& entry : *entries) {
    const std::string child = path + "/" + entry;
    if (!Exists(child + "/" + analysis::kModelFileName) && HasNodeManifest(child)) {
      root.single_run = true;
      break;
    }
  }
  return root;
}

StatusOr<std::vector<RunEntry>> ListRuns(const ServeRoot& root) {
  std::vector<RunEntry> runs;
  if (root.single_run) {
    runs.push_back(ReadRun(root.root, BaseName(root.root), "."));
    return runs;
  }
  LocalFileSystem fs;
  auto entries = fs.ListDirectory(root.root);
  if (!entries.ok()) {
    return IoError("cannot read runs directory '" + root.root + "': " + entries.status().message() +
                   "; check that it still exists and is readable");
  }
  for (const std::string& name : *entries) {
    if (name.empty() || name[0] == '.') continue;  // ctl's and writers' temporary files
    const std::string directory = root.root + "/" + name;
    struct stat st;
    if (lstat(directory.c_str(), &st) != 0) continue;  // removed since the directory was read
    if (S_ISLNK(st.st_mode)) {
      RunEntry link;
      link.id = link.job = link.path = name;
      link.directory = directory;
      AddProblem(link, "symlinked_run", analysis::ProblemSeverity::kError,
                 "'" + directory + "' is a symbolic link; the dashboard reads only directories under its root "
                 "(serve the link's target instead)");
      runs.push_back(std::move(link));
      continue;
    }
    if (!S_ISDIR(st.st_mode)) continue;
    runs.push_back(ReadRun(directory, name, name));
  }
  std::sort(runs.begin(), runs.end(), [](const RunEntry& a, const RunEntry& b) {
    return a.start_ns != b.start_ns ? a.start_ns > b.start_ns : a.id < b.id;
  });
  return runs;
}

const RunEntry* FindRun(const std::vector<RunEntry>& runs, const std::string& id) {
  for (const RunEntry& run : runs) {
    if (run.id == id) return &run;
  }
  return nullptr;
}

bool MatchesFilter(const RunEntry& run, const RunFilter& filter, int64_t now_ns) {
  if (filter.status && run.status != *filter.status) return false;
  if (!filter.query.empty()) {
    const std::string query = Lower(filter.query);
    if (Lower(run.job).find(query) == std::string::npos && Lower(run.id).find(query) == std::string::npos) {
      return false;
    }
  }
  if (filter.from_ns > 0 || filter.to_ns > 0) {
    if (run.start_ns <= 0) return false;  // when it ran is unknown
    const int64_t end_ns = run.end_ns > 0 ? run.end_ns : now_ns;
    if (filter.from_ns > 0 && end_ns < filter.from_ns) return false;
    if (filter.to_ns > 0 && run.start_ns > filter.to_ns) return false;
  }
  return true;
}

nlohmann::json RunEntryJson(const RunEntry& run, bool loaded) {
  nlohmann::json json = {
      {"id", run.id},
      {"job", run.job},
      {"path", run.path},
      {"status", RunStatusName(run.status)},
      {"start_ns", run.start_ns},
      {"end_ns", run.end_ns},
      {"duration_s", nullptr},
      {"nodes", run.nodes},
      {"source", run.source},
      {"instance_type", run.instance_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.instance_type)},
      {"loaded", loaded},
      {"problems", analysis::ProblemsToJson(run.problems)},
  };
  if (run.start_ns > 0 && run.end_ns >= run.start_ns) {
    json["duration_s"] = static_cast<double>(run.end_ns - run.start_ns) / 1e9;
  }
  return json;
}

}  // namespace stepscope::server
