// Online rule evaluation during `stepscope run` (SPEC.md §4 "Online"): a background thread
// that, every scan interval, reloads the node's directory (the launcher's own node: nodes of a
// multi-node job never read each other's data while it grows), lets the ProfilerReport driver
// evaluate the windows whose data is now complete, and rewrites <job>/<node>/rules/. Finish()
// does the last pass after the job ended: reload, evaluate the remaining windows, Rule::Finish,
// write, so the final files equal what `stepscope rules <job>/<node>` computes offline on the
// same data. The job's own rules (<job>/rules/, finished_outputs.h) come from EvaluateRulesOnce,
// or from Finish's second output directory when the node is the job's only one.
//
// A rule or loading problem never fails the job: it is logged as one line and evaluation goes on
// (a rule that throws turns online evaluation off for the rest of the run; `stepscope rules`
// can still evaluate it offline).
//
// Callers: the run command (Start after the job started, Finish after its manifest is final).
// The period runs on a WaitClock (base/wait_clock.h): the system's, or a manual one in tests.
// Threading: Start/Finish from one thread; between them only the background thread touches the
// driver.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"
#include "base/wait_clock.h"
#include "rules/instance_catalog.h"
#include "rules/profiler_report.h"

namespace stepscope::launcher {

class OnlineRules {
 public:
  using Loader = std::function<StatusOr<analysis::Model>(const std::string& job_dir)>;
  using Log = std::function<void(const std::string& line)>;

  // `loader` defaults to analysis::LoadRun when empty; outputs go to <job_dir>/rules. `clock`
  // (not owned) must outlive this object.
  OnlineRules(std::string job_dir, std::unique_ptr<rules::ProfilerReport> report, Loader loader, Log log,
              WaitClock* clock = &SystemWaitClock());
  ~OnlineRules();  // stops the thread (without the final pass) if Finish() was not called
  OnlineRules(const OnlineRules&) = delete;
  OnlineRules& operator=(const OnlineRules&) = delete;

  // Starts the thread: a pass every `period_ns` (the driver's scan interval when <= 0).
  Status Start(int64_t period_ns = 0);
  // One pass: reload, evaluate the complete windows, write the outputs.
  void EvaluateNow();
  // Stops the thread and does the final pass; its outputs also go to `also_output_dir` when not
  // empty (a job of one node: its rules are the job's).
  void Finish(const std::string& also_output_dir = "");

  // Called after each pass that evaluated, on the rules' thread, with the model it read (the
  // Prometheus endpoint's framework figures). Set before Start.
  using PassObserver = std::function<void(const analysis::Model& model, const rules::ProfilerReport& report)>;
  void SetPassObserver(PassObserver observer) { observer_ = std::move(observer); }

  const std::string& output_dir() const { return output_dir_; }
  const rules::ProfilerReport& report() const { return *report_; }
  bool disabled() const { return disabled_; }

 private:
  void Pass(bool final_pass);
  void Problem(const std::string& message);
  void StopThread();

  std::string job_dir_;
  std::string output_dir_;
  std::unique_ptr<rules::ProfilerReport> report_;
  Loader loader_;
  Log log_;
  PassObserver observer_;
  WaitClock* const clock_;
  bool disabled_ = false;
  std::string last_problem_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mutex_
  std::thread thread_;
};

// The run command's entry point: the built-in rules with the config's `rules` section and
// overrides and RightSizing's `catalog` (the config's --prices; null: the built-in example),
// evaluating <job_dir> in the background; `observer` (may be empty) sees each pass. nullptr (after
// one logged line) when they cannot be set up; the job runs either way.
std::unique_ptr<OnlineRules> StartOnlineRules(const std::string& job_dir, const nlohmann::json& section,
                                              const std::vector<std::string>& overrides,
                                              const std::vector<rules::InstanceType>* catalog, OnlineRules::Log log,
                                              OnlineRules::PassObserver observer = {});

// The rules of a finished run, evaluated once with the same configuration, into <run_dir>/rules/
// (a multi-node job's, by the launcher that finished last).
Status EvaluateRulesOnce(const std::string& run_dir, const nlohmann::json& section,
                         const std::vector<std::string>& overrides, const std::vector<rules::InstanceType>* catalog);

}  // namespace stepscope::launcher
