// The runs the dashboard has loaded: one analysis model per run (analysis::LoadRun), kept
// until unloaded and followed while it can grow (Model::Refresh), so every page of a live run
// reads one model refreshed incrementally instead of reading the store again. Each run's rules
// follow its model the same way (live_rules.h) instead of being evaluated again per report.
//
// A loaded run whose files vanish or turn unreadable keeps its last model and says why in its
// LiveState::problem; it is never dropped behind the user's back.
//
// Threading: every method may be called from any thread. Each run has its own lock, held while
// the follower refreshes it and while a request reads it (Read), so a request never sees a
// half-refreshed model; loading happens outside every lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "analysis/timeline_view.h"
#include "base/status.h"
#include "server/event_hub.h"
#include "server/live_rules.h"

namespace stepscope::server {

// What the dashboard says about a loaded run's freshness (the report's top-level "live").
struct LiveState {
  bool following = false;        // the model can still grow and the follower refreshes it
  int64_t complete_until_ns = 0; // Model::complete_until_ns()
  int64_t refreshed_at_ns = 0;   // Unix ns of the last refresh (or the load)
  uint64_t generation = 0;       // +1 each time the model grew or its rules changed: caches key on it
  std::string problem;           // the last refresh's failure; "" when fine
};
nlohmann::json LiveStateJson(const LiveState& live);

class LoadedRuns {
 public:
  explicit LoadedRuns(EventHub* events) : events_(events) {}

  // Loads the run at `directory` as `id` unless it is loaded already. Errors are LoadRun's.
  Status Load(const std::string& id, const std::string& directory);
  // False when it was not loaded.
  bool Unload(const std::string& id);
  bool IsLoaded(const std::string& id) const;
  // The directory a loaded run was read from; nullopt when it is not loaded.
  std::optional<std::string> Directory(const std::string& id) const;
  std::vector<std::string> Ids() const;

  // Calls `read` with the run's model and state under the run's lock; NotFound when not loaded.
  Status Read(const std::string& id, const std::function<void(const analysis::Model&, const LiveState&)>& read) const;
  // The same with the run's timeline index (analysis/timeline_view.h), built on first use and
  // again after each refresh: a refresh may rewrite the events the index points into.
  Status ReadTimeline(const std::string& id,
                      const std::function<void(const analysis::Model&, const analysis::TimelineIndex&)>& read) const;

  // The same with the run's rules (live_rules.h), first brought up to date with its model (so
  // the rules are evaluated when a report is asked for, never by the follower): a change of
  // them is a new generation, as a grown model is. A failed update is in LiveRules::failure().
  Status ReadWithRules(const std::string& id,
                       const std::function<void(const analysis::Model&, const LiveState&, const LiveRules&)>& read);

  // One pass of the follower: refreshes every loaded run that can grow and publishes a "run"
  // event {"id", "new_events", "new_samples", "complete_until_ns"} for each that grew; notes in
  // LiveState::problem when a loaded run's directory is gone.
  void RefreshAll();

  // A value computed from a run at one generation (the report document): repeated requests of
  // an unchanged run reuse it, and when the run's files vanish it is the last one there was.
  // LastValue is false when none was stored.
  bool LastValue(const std::string& id, nlohmann::json* value, uint64_t* generation) const;
  void StoreValue(const std::string& id, uint64_t generation, nlohmann::json value);

 private:
  struct Run {
    mutable std::mutex mutex;
    std::string directory;
    analysis::Model model;
    LiveState live;
    mutable std::unique_ptr<analysis::TimelineIndex> timeline;  // of `model` as it is; null: not built
    std::unique_ptr<LiveRules> rules;  // never reset: it evaluates each window of the run once
    uint64_t cached_generation = UINT64_MAX;
    nlohmann::json cached;
  };
  std::shared_ptr<Run> Find(const std::string& id) const;

  EventHub* events_;
  mutable std::mutex mutex_;  // guards runs_ (the map, not the runs)
  std::map<std::string, std::shared_ptr<Run>> runs_;
};

}  // namespace stepscope::server
