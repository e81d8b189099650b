// Detail windows (SPEC §2.2): bounded stretches of a run in which the job's processes record
// operators, Python functions, per-batch data-loader timings, or every kind of GPU activity
// (the injected CUPTI tracer in its "everything" mode, gpu_tracing_injection.h). A window is given as
// (start_step, num_steps) — counting steps of its phase — or (start_unix_time, duration_s);
// never both. This file holds the window value, its parsing from "START:COUNT" text and from
// JSON objects (config files, control files), its validation and its normalised JSON form.
//
// The normalised JSON form is the contract with the Python side (python/stepscope/_config.py
// reads it from <node>/config.json and from control files):
//
//   {"kind": "operators"|"python"|"dataloader"|"gpu",
//    "start_step": int|null, "num_steps": int|null,          // a step window, or
//    "start_unix_time": float|null, "duration_s": float|null, // a time window
//    "phase": "TRAIN"|"EVAL"|"PREDICT"|"GLOBAL"|null,         // TRAIN for step windows unless given
//    "profiler": "cprofile"|"sampling"|null,                  // python windows only (default cprofile)
//    "timer": "total_time"|"cpu_time"|"off_cpu_time"|"cycle"|null}  // cprofile only (default cycle)
//
// Callers: run_config (the `detail` setting), ctl_command, control_watcher. Plain data, no
// threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace stepscope::launcher {

enum class DetailKind { kOperators, kPython, kDataloader, kGpu };
enum class PythonProfiler { kCProfile, kSampling };
// kCycle: total_time, cpu_time, off_cpu_time in turn, one per step of the window (SageMaker).
enum class PythonTimer { kTotalTime, kCpuTime, kOffCpuTime, kCycle };

struct DetailWindow {
  DetailKind kind = DetailKind::kOperators;
  std::optional<int64_t> start_step;       // >= 0
  std::optional<int64_t> num_steps;        // >= 1
  std::optional<double> start_unix_time;   // seconds since the Unix epoch, > 0
  std::optional<double> duration_s;        // > 0
  std::optional<std::string> phase;        // TRAIN, EVAL, PREDICT or GLOBAL
  std::optional<PythonProfiler> profiler;  // python windows only
  std::optional<PythonTimer> timer;        // python windows with the cprofile profiler only

  bool operator==(const DetailWindow&) const = default;
};

const char* DetailKindName(DetailKind kind);
const char* PythonProfilerName(PythonProfiler profiler);
const char* PythonTimerName(PythonTimer timer);

// Text to enum; `origin` names where the text came from ("--python-profiler", "config file
// 'x.toml': detail window 2") and starts the error message.
StatusOr<DetailKind> ParseDetailKind(std::string_view text, const std::string& origin);
StatusOr<PythonProfiler> ParsePythonProfiler(std::string_view text, const std::string& origin);
StatusOr<PythonTimer> ParsePythonTimer(std::string_view text, const std::string& origin);

// "START:COUNT" (e.g. "9:3" for steps 9, 10 and 11) as a step window of `kind`.
StatusOr<DetailWindow> ParseStepWindow(DetailKind kind, std::string_view text, const std::string& origin);

// Checks the rules of SPEC §2.2: exactly one of step or time form, positive counts and
// durations, start_step >= 0, a known phase, profiler/timer only where they apply.
Status ValidateDetailWindow(const DetailWindow& window, const std::string& origin);

// One window from a JSON object with the keys of the normalised form (null means absent).
// Types, unknown keys and the rules above are checked; the result is validated.
StatusOr<DetailWindow> DetailWindowFromJson(const nlohmann::json& json, const std::string& origin);
// A JSON array of such objects; errors name the window by its position (1-based).
StatusOr<std::vector<DetailWindow>> DetailWindowsFromJson(const nlohmann::json& json, const std::string& origin);

// Fills what a consumer would otherwise have to guess: phase TRAIN for step windows, profiler
// cprofile for python windows, timer cycle for cprofile. Idempotent.
DetailWindow NormalizeDetailWindow(DetailWindow window);
// The normalised JSON form above (all eight keys, nulls for unused).
nlohmann::json DetailWindowToJson(const DetailWindow& window);
nlohmann::json DetailWindowsToJson(const std::vector<DetailWindow>& windows);

// SageMaker's FrameworkProfile defaults: operators step 5 x1, data loader step 7 x1, Python
// steps 9-11 with cProfile cycling its timers.
std::vector<DetailWindow> DefaultDetailWindows();

// For people: "python steps 9-11 (TRAIN, cprofile, timer cycle)".
std::string DescribeDetailWindow(const DetailWindow& window);

}  // namespace stepscope::launcher
