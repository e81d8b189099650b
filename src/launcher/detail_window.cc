#include "launcher/detail_window.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace stepscope::launcher {
namespace {

constexpr const char* kWindowKeys[] = {"kind",  "start_step", "num_steps", "start_unix_time",
                                       "duration_s", "phase", "profiler", "timer"};
constexpr const char* kPhases[] = {"TRAIN", "EVAL", "PREDICT", "GLOBAL"};
constexpr const char* kForms = "give start_step and num_steps, or start_unix_time and duration_s";

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool IsPhase(const std::string& phase) {
  for (const char* known : kPhases) {
    if (phase == known) return true;
  }
  return false;
}

// A non-negative whole number from text; nullopt for anything else ("", "-1", "3.5", "9x").
std::optional<int64_t> ParseCount(std::string_view text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

StatusOr<int64_t> JsonWholeNumber(const nlohmann::json& value, const std::string& origin, const char* key) {
  if (value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer() && !value.is_number_unsigned()) return value.get<int64_t>();
  return InvalidArgumentError(origin + ": " + key + " must be a whole number, not " + value.dump());
}

StatusOr<double> JsonNumber(const nlohmann::json& value, const std::string& origin, const char* key) {
  if (value.is_number() && std::isfinite(value.get<double>())) return value.get<double>();
  return InvalidArgumentError(origin + ": " + key + " must be a number, not " + value.dump());
}

StatusOr<std::string> JsonText(const nlohmann::json& value, const std::string& origin, const char* key) {
  if (value.is_string()) return value.get<std::string>();
  return InvalidArgumentError(origin + ": " + key + " must be a string, not " + value.dump());
}

std::string FormatNumber(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

}  // namespace

const char* DetailKindName(DetailKind kind) {
  switch (kind) {
    case DetailKind::kOperators: return "operators";
    case DetailKind::kPython: return "python";
    case DetailKind::kDataloader: return "dataloader";
    case DetailKind::kGpu: return "gpu";
  }
  return "operators";
}

const char* PythonProfilerName(PythonProfiler profiler) {
  return profiler == PythonProfiler::kSampling ? "sampling" : "cprofile";
}

const char* PythonTimerName(PythonTimer timer) {
  switch (timer) {
    case PythonTimer::kTotalTime: return "total_time";
    case PythonTimer::kCpuTime: return "cpu_time";
    case PythonTimer::kOffCpuTime: return "off_cpu_time";
    case PythonTimer::kCycle: return "cycle";
  }
  return "cycle";
}

StatusOr<DetailKind> ParseDetailKind(std::string_view text, const std::string& origin) {
  for (DetailKind kind : {DetailKind::kOperators, DetailKind::kPython, DetailKind::kDataloader, DetailKind::kGpu}) {
    if (text == DetailKindName(kind)) return kind;
  }
  return InvalidArgumentError(origin + ": unknown detail kind '" + std::string(text) +
                              "'; use operators, python, dataloader or gpu");
}

StatusOr<PythonProfiler> ParsePythonProfiler(std::string_view text, const std::string& origin) {
  if (text == "cprofile") return PythonProfiler::kCProfile;
  if (text == "sampling") return PythonProfiler::kSampling;
  return InvalidArgumentError(origin + ": unknown Python profiler '" + std::string(text) + "'; use cprofile or sampling");
}

StatusOr<PythonTimer> ParsePythonTimer(std::string_view text, const std::string& origin) {
  for (PythonTimer timer : {PythonTimer::kTotalTime, PythonTimer::kCpuTime, PythonTimer::kOffCpuTime, PythonTimer::kCycle}) {
    if (text == PythonTimerName(timer)) return timer;
  }
  return InvalidArgumentError(origin + ": unknown timer '" + std::string(text) +
                              "'; use total_time, cpu_time, off_cpu_time or cycle");
}

StatusOr<DetailWindow> ParseStepWindow(DetailKind kind, std::string_view text, const std::string& origin) {
  const size_t colon = text.find(':');
  std::optional<int64_t> start, count;
  if (colon != std::string_view::npos) {
    start = ParseCount(text.substr(0, colon));
    count = ParseCount(text.substr(colon + 1));
  }
  if (!start || !count) {
    return InvalidArgumentError(origin + ": '" + std::string(text) +
                                "' is not START:COUNT; use e.g. 9:3 for steps 9, 10 and 11");
  }
  DetailWindow window;
  window.kind = kind;
  window.start_step = *start;
  window.num_steps = *count;
  STEPSCOPE_RETURN_IF_ERROR(ValidateDetailWindow(window, origin));
  return window;
}

Status ValidateDetailWindow(const DetailWindow& w, const std::string& origin) {
  const bool any_step = w.start_step || w.num_steps;
  const bool any_time = w.start_unix_time || w.duration_s;
  if (any_step && any_time) {
    return InvalidArgumentError(origin + ": a window is steps or time, not both; " + kForms);
  }
  if (!any_step && !any_time) return InvalidArgumentError(origin + ": the window has no start; " + kForms);
  if (any_step && !(w.start_step && w.num_steps)) {
    return InvalidArgumentError(origin + ": start_step and num_steps go together; " + kForms);
  }
  if (any_time && !(w.start_unix_time && w.duration_s)) {
    return InvalidArgumentError(origin + ": start_unix_time and duration_s go together; " + kForms);
  }
  if (w.start_step && *w.start_step < 0) {
    return InvalidArgumentError(origin + ": start_step " + std::to_string(*w.start_step) + " is negative; steps count from 0");
  }
  if (w.num_steps && *w.num_steps < 1) {
    return InvalidArgumentError(origin + ": num_steps must be at least 1, not " + std::to_string(*w.num_steps));
  }
  if (w.start_unix_time && !(*w.start_unix_time > 0)) {
    return InvalidArgumentError(origin + ": start_unix_time must be seconds since 1970 (e.g. the output of `date +%s`)");
  }
  if (w.duration_s && !(*w.duration_s > 0)) {
    return InvalidArgumentError(origin + ": duration_s must be more than 0, not " + FormatNumber(*w.duration_s));
  }
  if (w.phase && !IsPhase(*w.phase)) {
    return InvalidArgumentError(origin + ": unknown phase '" + *w.phase + "'; use TRAIN, EVAL, PREDICT or GLOBAL");
  }
  if (w.kind != DetailKind::kPython && (w.profiler || w.timer)) {
    return InvalidArgumentError(origin + ": profiler and timer apply to python windows only, not to " +
                                DetailKindName(w.kind) + " windows");
  }
  if (w.timer && w.profiler == PythonProfiler::kSampling) {
    return InvalidArgumentError(origin + ": timer applies to the cprofile profiler only; drop it for sampling");
  }
  return OkStatus();
}

StatusOr<DetailWindow> DetailWindowFromJson(const nlohmann::json& json, const std::string& origin) {
  if (!json.is_object()) {
    return InvalidArgumentError(origin + ": a detail window must be a table with kind and start_step+num_steps "
                                "or start_unix_time+duration_s, not " + json.dump());
  }
  for (const auto& [key, value] : json.items()) {
    bool known = false;
    for (const char* k : kWindowKeys) known = known || key == k;
    if (!known) {
      return InvalidArgumentError(origin + ": unknown key '" + key + "' in a detail window; known keys: kind, "
                                  "start_step, num_steps, start_unix_time, duration_s, phase, profiler, timer");
    }
  }
  auto present = [&](const char* key) -> const nlohmann::json* {
    auto it = json.find(key);
    return it == json.end() || it->is_null() ? nullptr : &*it;
  };
  DetailWindow window;
  const nlohmann::json* kind = present("kind");
  if (kind == nullptr) return InvalidArgumentError(origin + ": the window has no kind; use operators, python, dataloader or gpu");
  STEPSCOPE_ASSIGN_OR_RETURN(std::string kind_text, JsonText(*kind, origin, "kind"));
  STEPSCOPE_ASSIGN_OR_RETURN(window.kind, ParseDetailKind(kind_text, origin));
  if (const auto* v = present("start_step")) {
    STEPSCOPE_ASSIGN_OR_RETURN(window.start_step, JsonWholeNumber(*v, origin, "start_step"));
  }
  if (const auto* v = present("num_steps")) {
    STEPSCOPE_ASSIGN_OR_RETURN(window.num_steps, JsonWholeNumber(*v, origin, "num_steps"));
  }
  if (const auto* v = present("start_unix_time")) {
    STEPSCOPE_ASSIGN_OR_RETURN(window.start_unix_time, JsonNumber(*v, origin, "start_unix_time"));
  }
  if (const auto* v = present("duration_s")) {
    STEPSCOPE_ASSIGN_OR_RETURN(window.duration_s, JsonNumber(*v, origin, "duration_s"));
  }
  if (const auto* v = present("phase")) {
    STEPSCOPE_ASSIGN_OR_RETURN(std::string phase, JsonText(*v, origin, "phase"));
    window.phase = Upper(phase);
  }
  if (const auto* v = present("profiler")) {
    STEPSCOPE_ASSIGN_OR_RETURN(std::string text, JsonText(*v, origin, "profiler"));
    STEPSCOPE_ASSIGN_OR_RETURN(window.profiler, ParsePythonProfiler(text, origin));
  }
  if (const auto* v = present("timer")) {
    STEPSCOPE_ASSIGN_OR_RETURN(std::string text, JsonText(*v, origin, "timer"));
    STEPSCOPE_ASSIGN_OR_RETURN(window.timer, ParsePythonTimer(text, origin));
  }
  STEPSCOPE_RETURN_IF_ERROR(ValidateDetailWindow(window, origin));
  return window;
}

StatusOr<std::vector<DetailWindow>> DetailWindowsFromJson(const nlohmann::json& json, const std::string& origin) {
  if (!json.is_array()) {
    return InvalidArgumentError(origin + ": detail must be a list of windows ([[detail]] tables in TOML), not " + json.dump());
  }
  std::vector<DetailWindow> windows;
  for (size_t i = 0; i < json.size(); ++i) {
    STEPSCOPE_ASSIGN_OR_RETURN(DetailWindow window,
                               DetailWindowFromJson(json[i], origin + ": detail window " + std::to_string(i + 1)));
    windows.push_back(std::move(window));
  }
  return windows;
}

DetailWindow NormalizeDetailWindow(DetailWindow window) {
  if (window.start_step && !window.phase) window.phase = "TRAIN";
  if (window.kind == DetailKind::kPython) {
    if (!window.profiler) window.profiler = PythonProfiler::kCProfile;
    if (*window.profiler == PythonProfiler::kCProfile && !window.timer) window.timer = PythonTimer::kCycle;
    if (*window.profiler == PythonProfiler::kSampling) window.timer.reset();
  }
  return window;
}

nlohmann::json DetailWindowToJson(const DetailWindow& window) {
  const DetailWindow w = NormalizeDetailWindow(window);
  auto or_null = [](const auto& value) { return value ? nlohmann::json(*value) : nlohmann::json(nullptr); };
  return {
      {"kind", DetailKindName(w.kind)},
      {"start_step", or_null(w.start_step)},
      {"num_steps", or_null(w.num_steps)},
      {"start_unix_time", or_null(w.start_unix_time)},
      {"duration_s", or_null(w.duration_s)},
      {"phase", or_null(w.phase)},
      {"profiler", w.profiler ? nlohmann::json(PythonProfilerName(*w.profiler)) : nlohmann::json(nullptr)},
      {"timer", w.timer ? nlohmann::json(PythonTimerName(*w.timer)) : nlohmann::json(nullptr)},
  };
}

nlohmann::json DetailWindowsToJson(const std::vector<DetailWindow>& windows) {
  nlohmann::json out = nlohmann::json::array();
  for (const DetailWindow& window : windows) out.push_back(DetailWindowToJson(window));
  return out;
}

std::vector<DetailWindow> DefaultDetailWindows() {
  DetailWindow operators;
  operators.kind = DetailKind::kOperators;
  operators.start_step = 5;
  operators.num_steps = 1;
  DetailWindow dataloader;
  dataloader.kind = DetailKind::kDataloader;
  dataloader.start_step = 7;
  dataloader.num_steps = 1;
  DetailWindow python;
  python.kind = DetailKind::kPython;
  python.start_step = 9;
  python.num_steps = 3;
  python.profiler = PythonProfiler::kCProfile;
  python.timer = PythonTimer::kCycle;
  return {operators, dataloader, python};
}

std::string DescribeDetailWindow(const DetailWindow& window) {
  const DetailWindow w = NormalizeDetailWindow(window);
  std::string text = DetailKindName(w.kind);
  if (w.start_step && w.num_steps) {
    text += *w.num_steps == 1 ? " step " + std::to_string(*w.start_step)
                              : " steps " + std::to_string(*w.start_step) + "-" +
                                    std::to_string(*w.start_step + *w.num_steps - 1);
  } else if (w.start_unix_time && w.duration_s) {
    text += " from Unix time " + FormatNumber(*w.start_unix_time) + " for " + FormatNumber(*w.duration_s) + " s";
  }
  std::string details = w.phase.value_or("");
  if (w.profiler) details += std::string(details.empty() ? "" : ", ") + PythonProfilerName(*w.profiler);
  if (w.timer) details += std::string(", timer ") + PythonTimerName(*w.timer);
  if (!details.empty()) text += " (" + details + ")";
  return text;
}

}  // namespace stepscope::launcher
