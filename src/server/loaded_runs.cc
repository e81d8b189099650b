#include "server/loaded_runs.h"

#include <sys/stat.h>

#include "analysis/run_loader.h"
#include "base/clock.h"
#include "rules/profiler_report.h"

namespace stepscope::server {
namespace {

int64_t NowNs() { return static_cast<int64_t>(RealtimeNowNs()); }

bool DirectoryExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

nlohmann::json LiveStateJson(const LiveState& live) {
  nlohmann::json json = {{"following", live.following},
                         {"complete_until_ns", live.complete_until_ns},
                         {"refreshed_at_ns", live.refreshed_at_ns}};
  if (!live.problem.empty()) json["problem"] = live.problem;
  return json;
}

Status LoadedRuns::Load(const std::string& id, const std::string& directory) {
  if (IsLoaded(id)) return OkStatus();
  STEPSCOPE_ASSIGN_OR_RETURN(analysis::Model model, analysis::LoadRun(directory));
  auto run = std::make_shared<Run>();
  run->directory = directory;
  run->model = std::move(model);
  // Priced by the built-in catalogue, as the report the server builds is.
  run->rules = std::make_unique<LiveRules>(rules::DefaultRulesOutputDir(directory) + "/rules.json");
  run->live.following = run->model.CanGrow();
  run->live.complete_until_ns = run->model.complete_until_ns();
  run->live.refreshed_at_ns = NowNs();
  std::lock_guard<std::mutex> lock(mutex_);
  runs_.emplace(id, std::move(run));  // a concurrent load of the same run: the first one stays
  return OkStatus();
}

bool LoadedRuns::Unload(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return runs_.erase(id) > 0;
}

bool LoadedRuns::IsLoaded(const std::string& id) const { return Find(id) != nullptr; }

std::optional<std::string> LoadedRuns::Directory(const std::string& id) const {
  std::shared_ptr<Run> run = Find(id);
  if (!run) return std::nullopt;
  return run->directory;  // set before the run is published, never changed
}

std::vector<std::string> LoadedRuns::Ids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> ids;
  for (const auto& [id, run] : runs_) ids.push_back(id);
  return ids;
}

std::shared_ptr<LoadedRuns::Run> LoadedRuns::Find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = runs_.find(id);
  return it == runs_.end() ? nullptr : it->second;
}

Status LoadedRuns::Read(const std::string& id,
                        const std::function<void(const analysis::Model&, const LiveState&)>& read) const {
  std::shared_ptr<Run> run = Find(id);
  if (!run) return NotFoundError("run '" + id + "' is not loaded; load it first");
  std::lock_guard<std::mutex> lock(run->mutex);
  read(run->model, run->live);
  return OkStatus();
}

Status LoadedRuns::ReadTimeline(
    const std::string& id, const std::function<void(const analysis::Model&, const analysis::TimelineIndex&)>& read) const {
  std::shared_ptr<Run> run = Find(id);
  if (!run) return NotFoundError("run '" + id + "' is not loaded; load it first");
  std::lock_guard<std::mutex> lock(run->mutex);
  if (!run->timeline) run->timeline = std::make_unique<analysis::TimelineIndex>(run->model);
  read(run->model, *run->timeline);
  return OkStatus();
}

Status LoadedRuns::ReadWithRules(
    const std::string& id,
    const std::function<void(const analysis::Model&, const LiveState&, const LiveRules&)>& read) {
  std::shared_ptr<Run> run = Find(id);
  if (!run) return NotFoundError("run '" + id + "' is not loaded; load it first");
  std::lock_guard<std::mutex> lock(run->mutex);
  StatusOr<bool> changed = run->rules->Update(run->model);
  if (changed.ok() && *changed) ++run->live.generation;
  read(run->model, run->live, *run->rules);
  return OkStatus();
}

void LoadedRuns::RefreshAll() {
  for (const std::string& id : Ids()) {
    std::shared_ptr<Run> run = Find(id);
    if (!run) continue;  // unloaded meanwhile
    std::unique_lock<std::mutex> lock(run->mutex);
    if (!DirectoryExists(run->directory)) {
      run->live.problem = "the run's directory '" + run->directory + "' is gone; showing the data read before";
      continue;
    }
    if (!run->model.CanGrow()) {
      run->live.following = false;
      run->live.problem.clear();
      continue;
    }
    auto refreshed = run->model.Refresh();
    run->timeline.reset();
    run->live.refreshed_at_ns = NowNs();
    run->live.following = run->model.CanGrow();
    if (!refreshed.ok()) {
      run->live.problem = refreshed.status().message() + "; showing the data read before";
      continue;
    }
    run->live.problem.clear();
    // Every refresh re-reads the provisional events (open spans), so replaced_provisional says
    // nothing; a span that ended moves complete_until_ns, and a stalled job moves nothing.
    const int64_t previous_until_ns = run->live.complete_until_ns;
    run->live.complete_until_ns = run->model.complete_until_ns();
    if (refreshed->new_events == 0 && refreshed->new_samples == 0 &&
        run->live.complete_until_ns == previous_until_ns) {
      continue;
    }
    ++run->live.generation;
    nlohmann::json event = {{"id", id},
                            {"new_events", refreshed->new_events},
                            {"new_samples", refreshed->new_samples},
                            {"complete_until_ns", run->live.complete_until_ns}};
    lock.unlock();
    events_->Publish("run", std::move(event));
  }
}

bool LoadedRuns::LastValue(const std::string& id, nlohmann::json* value, uint64_t* generation) const {
  std::shared_ptr<Run> run = Find(id);
  if (!run) return false;
  std::lock_guard<std::mutex> lock(run->mutex);
  if (run->cached_generation == UINT64_MAX) return false;
  *value = run->cached;
  *generation = run->cached_generation;
  return true;
}

void LoadedRuns::StoreValue(const std::string& id, uint64_t generation, nlohmann::json value) {
  std::shared_ptr<Run> run = Find(id);
  if (!run) return;
  std::lock_guard<std::mutex> lock(run->mutex);
  run->cached_generation = generation;
  run->cached = std::move(value);
}

}  // namespace stepscope::server
