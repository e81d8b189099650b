#include "export/export_range.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "analysis/run_facts.h"
#include "analysis/step_times.h"
#include "base/duration.h"

namespace stepscope::exporting {
namespace {

constexpr const char* kTimeForms =
    "a time since the run's start (\"90s\", \"2h\", \"1500ms\") or a UTC time (\"2026-11-21T10:15:00Z\")";

// One end of a time range: absolute when it reads as a UTC time, else a duration since `origin_ns`.
StatusOr<int64_t> ParseRangeEnd(std::string_view flag, const std::string& text, int64_t origin_ns) {
  if (text.find('T') != std::string::npos && text.find('-') != std::string::npos) {
    auto absolute = ParseUtcTimeNs(text);
    if (!absolute.ok()) return InvalidArgumentError(std::string(flag) + " '" + text + "': " + absolute.status().message());
    return *absolute;
  }
  auto offset = ParseDurationNs(text);
  if (!offset.ok() || *offset < 0) {
    return InvalidArgumentError(std::string(flag) + " '" + text + "' is not " + kTimeForms);
  }
  int64_t time_ns = 0;
  if (__builtin_add_overflow(origin_ns, *offset, &time_ns)) time_ns = INT64_MAX;
  return time_ns;
}

bool ParseStepNumber(std::string_view text, int64_t& out) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && out >= 0;
}

std::string RunSpan(const analysis::Model& model, int64_t origin_ns) {
  char text[96];
  std::snprintf(text, sizeof text, "the run's data lies %.3fs to %.3fs from the job's start",
                static_cast<double>(model.first_ns() - origin_ns) / 1e9,
                static_cast<double>(model.last_ns() - origin_ns) / 1e9);
  return text;
}

StatusOr<ExportRange> StepRange(const analysis::Model& model, const std::string& text) {
  const size_t colon = text.find(':');
  int64_t first = 0, last = 0;
  if (colon == std::string::npos || !ParseStepNumber(std::string_view(text).substr(0, colon), first) ||
      !ParseStepNumber(std::string_view(text).substr(colon + 1), last) || first > last) {
    return InvalidArgumentError("--steps '" + text + "' is not A:B with step numbers 0 <= A <= B (e.g. --steps 100:120)");
  }
  const analysis::StepSpan span = analysis::FindStepSpan(model, first, last);
  const std::string kind = span.train_only ? "TRAIN steps" : "steps";
  if (!span.found) {
    if (span.lowest < 0) return InvalidArgumentError("--steps: the run has no steps; use --from/--to for a time range");
    return InvalidArgumentError("--steps " + text + ": no " + kind + " numbered " + std::to_string(first) + " to " +
                                std::to_string(last) + "; the run's " + kind + " are numbered " +
                                std::to_string(span.lowest) + " to " + std::to_string(span.highest));
  }
  ExportRange range;
  range.whole = false;
  range.start_ns = span.start_ns;
  range.end_ns = span.end_ns;
  range.description = kind + " " + std::to_string(first) + " to " + std::to_string(last);
  return range;
}

}  // namespace

StatusOr<int64_t> ParseUtcTimeNs(std::string_view text) {
  std::tm parts{};
  int consumed = 0;
  const std::string copy(text);
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &parts.tm_year, &parts.tm_mon, &parts.tm_mday,
                  &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &consumed) != 6) {
    return InvalidArgumentError("expected a UTC time like 2026-11-21T10:15:00Z");
  }
  std::string_view rest = std::string_view(copy).substr(static_cast<size_t>(consumed));
  int64_t fraction_ns = 0;
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    int64_t scale = 100'000'000;
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
      if (scale > 0) fraction_ns += (rest[digits] - '0') * scale;
      scale /= 10;
      ++digits;
    }
    if (digits == 0) return InvalidArgumentError("expected digits after the decimal point, as in 10:15:00.25Z");
    rest.remove_prefix(digits);
  }
  if (rest != "Z" || parts.tm_mon < 1 || parts.tm_mon > 12 || parts.tm_mday < 1 || parts.tm_mday > 31 ||
      parts.tm_hour > 23 || parts.tm_min > 59 || parts.tm_sec > 60) {
    return InvalidArgumentError("expected a UTC time like 2026-11-21T10:15:00Z (ending in Z)");
  }
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  const time_t seconds = timegm(&parts);
  if (seconds < 0 || seconds > INT64_MAX / 1'000'000'000 - 1) return InvalidArgumentError("the time is outside 1970-2262");
  return static_cast<int64_t>(seconds) * 1'000'000'000 + fraction_ns;
}

StatusOr<ExportRange> ResolveExportRange(const analysis::Model& model, const ExportRangeRequest& request) {
  ExportRange range;
  range.description = "the whole run";
  const bool timed = !request.from.empty() || !request.to.empty();
  if (!request.steps.empty() && timed) {
    return InvalidArgumentError("give either --steps or --from/--to, not both");
  }
  if (!request.steps.empty()) return StepRange(model, request.steps);
  if (!timed) return range;

  range.whole = false;
  // The job's start, as the trace's origin and every other front end's time axis.
  const int64_t origin_ns = analysis::ComputeRunFacts(model, "").start_ns;
  if (!request.from.empty()) {
    STEPSCOPE_ASSIGN_OR_RETURN(range.start_ns, ParseRangeEnd("--from", request.from, origin_ns));
  }
  if (!request.to.empty()) {
    STEPSCOPE_ASSIGN_OR_RETURN(range.end_ns, ParseRangeEnd("--to", request.to, origin_ns));
  }
  if (range.start_ns > range.end_ns) {
    return InvalidArgumentError("--from " + request.from + " is after --to " + request.to + "; swap them");
  }
  if (range.end_ns < model.first_ns() || range.start_ns > model.last_ns()) {
    return InvalidArgumentError("--from/--to select none of the run: " + RunSpan(model, origin_ns));
  }
  range.description = "from " + (request.from.empty() ? std::string("the start") : request.from) + " to " +
                      (request.to.empty() ? std::string("the end") : request.to);
  return range;
}

}  // namespace stepscope::exporting
