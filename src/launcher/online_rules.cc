#include "launcher/online_rules.h"

#include <exception>

#include "analysis/run_loader.h"
#include "rules/configured_profiler_report.h"

namespace stepscope::launcher {

OnlineRules::OnlineRules(std::string job_dir, std::unique_ptr<rules::ProfilerReport> report, Loader loader, Log log,
                         WaitClock* clock)
    : job_dir_(std::move(job_dir)),
      output_dir_(job_dir_ + "/rules"),
      report_(std::move(report)),
      loader_(std::move(loader)),
      log_(std::move(log)),
      clock_(clock) {
  if (!loader_) loader_ = [](const std::string& path) { return analysis::LoadRun(path); };
  if (!log_) log_ = [](const std::string&) {};
}

OnlineRules::~OnlineRules() { StopThread(); }

Status OnlineRules::Start(int64_t period_ns) {
  if (thread_.joinable()) return InternalError("online rule evaluation already started");
  if (period_ns <= 0) period_ns = report_->scan_interval_us() * 1000;
  thread_ = std::thread([this, period_ns] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!clock_->WaitUntil(lock, wake_, clock_->MonotonicNs() + period_ns, [this] { return stop_; })) {
      lock.unlock();
      Pass(/*final_pass=*/false);
      lock.lock();
    }
  });
  return OkStatus();
}

void OnlineRules::StopThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OnlineRules::EvaluateNow() { Pass(/*final_pass=*/false); }

void OnlineRules::Finish(const std::string& also_output_dir) {
  StopThread();
  Pass(/*final_pass=*/true);
  if (also_output_dir.empty() || disabled_ || !report_->finished()) return;
  if (Status written = report_->WriteOutputs(also_output_dir); !written.ok()) {
    Problem("rules: cannot write " + also_output_dir + ": " + written.message());
  }
}

void OnlineRules::Problem(const std::string& message) {
  // A live run is reloaded every interval: say a recurring problem once.
  if (message == last_problem_) return;
  last_problem_ = message;
  log_(message);
}

void OnlineRules::Pass(bool final_pass) {
  if (disabled_ || report_->finished()) return;
  auto model = loader_(job_dir_);
  if (!model.ok()) {
    // Early in a job there may be nothing to load yet; only the final pass must succeed.
    if (final_pass) Problem("rules: cannot load the run: " + model.status().message());
    return;
  }
  // Rules are ours and exception-free by design, but the JSON library they use can throw on a
  // programming error; that must cost the rules, never the job being recorded.
  try {
    if (final_pass) {
      report_->Finish(*model);
    } else {
      report_->EvaluateAvailable(*model);
    }
  } catch (const std::exception& error) {
    disabled_ = true;
    Problem(std::string("rules: evaluation stopped (a rule failed: ") + error.what() +
            "); run `stepscope rules " + job_dir_ + "` after the job");
    return;
  }
  if (Status written = report_->WriteOutputs(output_dir_); !written.ok()) {
    Problem("rules: cannot write " + output_dir_ + ": " + written.message());
  }
  if (observer_) observer_(*model, *report_);
}

std::unique_ptr<OnlineRules> StartOnlineRules(const std::string& job_dir, const nlohmann::json& section,
                                              const std::vector<std::string>& overrides,
                                              const std::vector<rules::InstanceType>* catalog, OnlineRules::Log log,
                                              OnlineRules::PassObserver observer) {
  auto report = rules::MakeConfiguredProfilerReport("", section, overrides, catalog);
  if (!report.ok()) {
    if (log) log("rules: online evaluation is off: " + report.status().message());
    return nullptr;
  }
  auto online = std::make_unique<OnlineRules>(job_dir, std::move(*report), nullptr, log);
  online->SetPassObserver(std::move(observer));
  if (Status started = online->Start(); !started.ok()) {
    if (log) log("rules: online evaluation is off: " + started.message());
    return nullptr;
  }
  return online;
}

Status EvaluateRulesOnce(const std::string& run_dir, const nlohmann::json& section,
                         const std::vector<std::string>& overrides, const std::vector<rules::InstanceType>* catalog) {
  STEPSCOPE_ASSIGN_OR_RETURN(auto report, rules::MakeConfiguredProfilerReport("", section, overrides, catalog));
  STEPSCOPE_ASSIGN_OR_RETURN(analysis::Model model, analysis::LoadRun(run_dir));
  try {
    report->Finish(model);
  } catch (const std::exception& error) {
    return InternalError(std::string("a rule failed: ") + error.what());
  }
  return report->WriteOutputs(run_dir + "/rules");
}

}  // namespace stepscope::launcher
