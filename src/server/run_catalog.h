// The dashboard's job list: the runs under a root directory, read from their manifests only
// (never their streams or models), so that a root of hundreds of runs lists in well under a
// second and a corrupt, partial, foreign or vanishing run is an entry with problems, not an
// error. Run ids come only from here: an id is a directory name the last listing found, never a
// path a client sent (FindRun refuses anything else).
//
// Layout (docs/formats.md, SPEC §3): <root>/<job>/<node>/manifest.json for stepscope's own runs
// (store/run_directory.h decides which directories are nodes), <root>/<job>/manifest.json +
// model.stepscope for imported ones. `stepscope serve RUN` lists that one run.
//
// Callers: the dashboard server (dashboard_server.h), the listing benchmark. Plain functions
// over the file system; each call reads afresh, so calls may run on any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/problem.h"
#include "base/status.h"

namespace stepscope::server {

// How a run ended, as the job list filters it (issue 14 §2).
enum class RunStatus : uint8_t { kRunning, kCompleted, kFailed, kKilled, kUnknown };
const char* RunStatusName(RunStatus status);  // "running", "completed", "failed", "killed", "unknown"
std::optional<RunStatus> RunStatusFromName(const std::string& name);

struct RunEntry {
  std::string id;            // the run's directory name under the root: the API's only handle on it
  std::string path;          // relative to the root: the id, or "." when the root is the run
  std::string directory;     // root + "/" + path, as read
  std::string job;           // the manifests' job; else the directory name
  RunStatus status = RunStatus::kUnknown;
  int64_t start_ns = 0;      // earliest node start (Unix ns); 0 when unknown
  int64_t end_ns = 0;        // latest node end; 0 while running or unknown
  std::vector<std::string> nodes;
  std::string source;        // "stepscope", or an import's "sagemaker" / "kineto"
  std::string instance_type; // "" when none is named
  std::vector<analysis::Problem> problems;  // what makes the entry doubtful; empty when fine
};

// Where `stepscope serve` reads runs from.
struct ServeRoot {
  std::string root;        // the directory listed
  bool single_run = false; // `root` is itself one run (a job, node or imported run directory)
};

// `path` is a root of runs or one run directory. Errors are one line naming the path and what
// to pass: it does not exist, is not a directory, or cannot be read.
StatusOr<ServeRoot> ResolveServeRoot(const std::string& path);

// Every run under `root`, sorted by start time, newest first (then by id). Only a root that
// cannot be listed at all is an error; every other defect becomes an entry's problems.
StatusOr<std::vector<RunEntry>> ListRuns(const ServeRoot& root);

// The listing entry with this id, or nullptr. Matches ids exactly: a path ("..", "a/b") never is one.
const RunEntry* FindRun(const std::vector<RunEntry>& runs, const std::string& id);

// The job list's search: `query` is matched case-insensitively against the job name and the
// id; `status` (empty: any) exactly; a run is kept when [start_ns, end_ns or now] overlaps
// [from_ns, to_ns] (0: unbounded).
struct RunFilter {
  std::string query;
  std::optional<RunStatus> status;
  int64_t from_ns = 0;
  int64_t to_ns = 0;
};
bool MatchesFilter(const RunEntry& run, const RunFilter& filter, int64_t now_ns);

// The API's listing entry (docs/dashboard.md "GET /api/runs"), with `loaded` as given.
nlohmann::json RunEntryJson(const RunEntry& run, bool loaded);

}  // namespace stepscope::server
