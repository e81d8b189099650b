// The rules' outputs of one run the dashboard has loaded, kept up to date as its model grows
// (loaded_runs.h holds one per run). Evaluating every rule over the whole model for each new
// model of a live run would cost the machine the job trains on a full evaluation per refresh;
// instead one ProfilerReport driver (rules/profiler_report.h) lives as long as the loaded run
// and evaluates only the windows whose data became complete since it last looked
// (EvaluateAvailable), then concludes once the model cannot grow (Finish). The driver's
// contract makes that sequence equal to one evaluation of the final data, which is what the
// report would compute (report::LoadOrEvaluateRules): the same rules and parameters
// (report::MakeReportRules).
//
// The run's own finished <RUN>/rules/rules.json (written at the end of `stepscope run` with the
// run's rule settings, or by `stepscope rules`) wins whenever it appears, before or after this
// evaluation concluded; the evaluation is never started over.
//
// Threading: not thread-safe; LoadedRuns calls it under the run's lock, with the run's model.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"
#include "rules/instance_catalog.h"
#include "rules/profiler_report.h"

namespace stepscope::server {

class LiveRules {
 public:
  // `rules_json_path`: where the run's finished rules.json is written (<RUN>/rules/rules.json).
  // `catalog` prices RightSizing (not owned; must outlive this object); null: the built-in one.
  explicit LiveRules(std::string rules_json_path, const std::vector<rules::InstanceType>* catalog = nullptr);

  // Brings document() up to date with `model`, which is the same run's model each call (grown by
  // Model::Refresh, or reloaded). True when document() changed in a way the report shows (new
  // windows, the conclusion, the finished file); cheap when nothing did: a stat of rules.json.
  // Errors: a rule failed (the JSON library threw); every later call returns the same error
  // until the finished rules.json appears.
  StatusOr<bool> Update(const analysis::Model& model);

  // A rules document of ProfilerReport::RulesJson's shape (null before the first Update).
  const nlohmann::json& document() const { return document_; }
  // How document() was obtained (the report's run.rules.source): "rules.json" (the finished
  // file), "live" (evaluated here window by window while the run grew) or "evaluated" (the run
  // could not grow when first evaluated: one evaluation, as `stepscope report` does it).
  const std::string& source() const { return source_; }
  // Why document() stopped following the run (Update's error); OK while it follows.
  const Status& failure() const { return failure_; }

 private:
  // What tells one version of rules.json from the next: a live run's file is rewritten (renamed
  // over) every scan interval, and need not be parsed on every report.
  struct FileIdentity {
    uint64_t inode = 0;
    int64_t size_bytes = -1;
    int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  // The finished rules.json when the file changed since the last look and is finished; nullopt
  // otherwise.
  std::optional<nlohmann::json> ChangedFinishedFile();

  std::string rules_json_path_;
  const std::vector<rules::InstanceType>* catalog_;
  std::unique_ptr<rules::ProfilerReport> driver_;  // null until the first evaluation
  bool followed_growth_ = false;                   // some evaluation saw a model that could grow
  Status failure_ = OkStatus();
  nlohmann::json document_;
  std::string source_;
  FileIdentity file_seen_;  // rules.json as last parsed; size -1: none was
};

}  // namespace stepscope::server
