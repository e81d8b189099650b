#include "cli/summary_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "analysis/numerics.h"
#include "analysis/run_loader.h"
#include "base/file_system.h"
#include "cli/rules_command.h"
#include "cli/run_problems.h"
#include "rules/profiler_report.h"
#include "compare/compare_text.h"
#include "analysis/run_facts.h"
#include "report/report_model.h"
#include "report/run_info.h"
#include "rules/rank_step_times.h"
#include "base/json_fields.h"

namespace stepscope::cli {
namespace {

using nlohmann::json;

constexpr int kExitError = 1;

// Exception-free reads of a rules.json that came from disk.
const json& Field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}


class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string Heading(const std::string& text) const { return Wrap(text, "\033[1m"); }
  std::string Severity(const std::string& severity) const {
    const char* code = severity == "critical" ? "\033[1;31m" : severity == "warning" ? "\033[33m" : "\033[36m";
    return Wrap("[" + severity + "]", code);
  }

 private:
  std::string Wrap(const std::string& text, const char* code) const {
    return color_ ? std::string(code) + text + "\033[0m" : text;
  }
  bool color_;
};

// Word-wraps `text` to kSummaryWidth: the first line starts with `first`, the others with
// `rest` (both counted in the width; `first` may hold colour codes of `first_visible` columns).
std::string WrapText(const std::string& text, const std::string& first, size_t first_visible, const std::string& rest) {
  std::string clean = compare::FitText(text, text.size());
  std::string out = first, line;
  size_t used = first_visible;
  size_t start = 0;
  bool line_has_word = false;
  while (start < clean.size()) {
    size_t space = clean.find(' ', start);
    if (space == std::string::npos) space = clean.size();
    std::string word = clean.substr(start, space - start);
    start = space + 1;
    if (word.empty()) continue;
    // A word longer than a line is cut so no line exceeds the width.
    if (word.size() > kSummaryWidth - rest.size()) word = compare::FitText(word, kSummaryWidth - rest.size());
    if (line_has_word && used + 1 + word.size() > kSummaryWidth) {
      out += "\n" + rest;
      used = rest.size();
      line_has_word = false;
    }
    if (line_has_word) {
      out += " ";
      ++used;
    }
    out += word;
    used += word.size();
    line_has_word = true;
  }
  return out + "\n";
}

std::string UtcTime(int64_t ns) {
  const time_t seconds = static_cast<time_t>(ns / 1'000'000'000);
  struct tm utc;
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

std::string Seconds(int64_t ns) { return compare::HumanDuration(static_cast<double>(ns) / 1e9); }

std::string JobSection(const analysis::RunFacts& facts, const Painter& paint) {
  std::string text = paint.Heading("Job") + "\n";
  std::string line = "started " + UtcTime(facts.start_ns) + ", ran " + Seconds(facts.end_ns - facts.start_ns);
  if (!facts.ended.empty()) line += "; " + facts.ended;
  text += WrapText(line, "  ", 2, "  ");
  std::string where = std::to_string(facts.nodes.size()) + (facts.nodes.size() == 1 ? " node" : " nodes");
  if (!facts.instance_type.empty()) {
    where += ", " + std::to_string(facts.instance_count) + " x " + facts.instance_type;
  }
  where += " (source: " + facts.source + ")";
  text += WrapText(where, "  ", 2, "  ");
  if (facts.phases.empty()) return text + "  No steps were recorded, so the training loop cannot be told apart.\n";
  const double total_ns = static_cast<double>(std::max<int64_t>(1, facts.end_ns - facts.start_ns));
  std::string phases;
  for (const analysis::JobPhaseSpan& phase : facts.phases) {
    std::string name = phase.name == "training_loop" ? "training loop" : std::string(phase.name);
    phases += (phases.empty() ? "" : " | ") + name + " " + Seconds(phase.end_ns - phase.start_ns) +
              compare::FormatLine(" (%.0f %%)", static_cast<double>(phase.end_ns - phase.start_ns) / total_ns * 100.0);
  }
  return text + WrapText(phases, "  ", 2, "  ");
}

// Per rank, for nodes that ran several (torchrun --nproc-per-node > 1); "" when none did.
std::string RankSteps(const analysis::Model& model, const Painter& paint) {
  const std::vector<rules::RankStepTimes> ranks = rules::CollectRankStepTimes(model);
  if (ranks.empty()) return "";
  std::string text = "\n" + paint.Heading("Step time per rank (ms)") + "\n";
  text += compare::FormatLine("  %-20s %5s %-8s %-6s %7s %9s %9s %12s %12s\n", "node", "rank", "pid", "phase", "count",
                              "p50", "p95", "backward p50", "outside p50");
  for (const rules::RankStepTimes& rank : ranks) {
    text += compare::FormatLine("  %-20s %5d %-8d %-6s %7zu %9.2f %9.2f %12.2f %12.2f\n",
                                compare::FitText(model.nodes()[rank.node].name, 20).c_str(), rank.rank, rank.pid,
                                compare::FitText(rank.phase, 6).c_str(), rank.step_ms.size(),
                                analysis::SortedQuantile(rank.step_ms, 0.50),
                                analysis::SortedQuantile(rank.step_ms, 0.95),
                                analysis::SortedQuantile(rank.backward_ms, 0.50),
                                analysis::SortedQuantile(rank.outside_backward_ms, 0.50));
  }
  return text + WrapText("DDP ranks wait for each other in backward (the gradient all-reduce), so their step times "
                         "agree; the rank the others wait for spends the most time outside backward.",
                         "  ", 2, "  ");
}

std::string StepsSection(const analysis::Model& model, const Painter& paint) {
  std::string text = "\n" + paint.Heading("Step time (ms)") + "\n";
  if (model.steps().empty()) {
    return text + "  No steps: mark them with stepscope.step() or train with PyTorch's automatic instrumentation.\n";
  }
  text += compare::FormatLine("  %-32s %-8s %8s %10s %10s %10s %10s\n", "node", "phase", "count", "mean", "p50", "p95", "max");
  for (uint32_t node = 0; node < model.nodes().size(); ++node) {
    for (const auto& [phase, durations] : analysis::StepDurationsMs(model, static_cast<int>(node))) {
      text += compare::FormatLine("  %-32s %-8s %8zu %10.2f %10.2f %10.2f %10.2f\n",
                     compare::FitText(model.nodes()[node].name, 32).c_str(), compare::FitText(phase, 8).c_str(),
                     durations.size(), analysis::Mean(durations), analysis::Median(durations),
                     analysis::Quantile(durations, 0.95), *std::max_element(durations.begin(), durations.end()));
    }
  }
  if (const size_t disturbed = analysis::DisturbedStepCount(model); disturbed > 0) {
    text += compare::FormatLine("  %zu step%s that stepscope's detail windows ran in %s left out.\n", disturbed,
                   disturbed == 1 ? "" : "s", disturbed == 1 ? "is" : "are");
  }
  return text + RankSteps(model, paint);
}

int SeverityRank(const std::string& severity) {
  return severity == "critical" ? 0 : severity == "warning" ? 1 : 2;
}

std::string FindingsSection(const json& rules_json, const std::string& source, const std::string& run_path,
                            const Painter& paint) {
  std::string text = "\n" + paint.Heading("Findings") + " (" + source + ")\n";
  std::vector<const json*> findings;
  const json& rules = Field(rules_json, "rules");
  if (rules.is_array()) {
    for (const json& rule : rules) {
      const json& list = Field(rule, "findings");
      if (!list.is_array()) continue;
      for (const json& finding : list) {
        if (finding.is_object()) findings.push_back(&finding);
      }
    }
  }
  auto text_of = [](const json& object, const char* key) { return JsonString(object, key); };
  // Severity first, then the larger estimated saving (unknown savings last), as the report.
  std::stable_sort(findings.begin(), findings.end(), [&](const json* x, const json* y) {
    const int rank_x = SeverityRank(text_of(*x, "severity")), rank_y = SeverityRank(text_of(*y, "severity"));
    if (rank_x != rank_y) return rank_x < rank_y;
    return JsonDouble(*x, "estimated_saving", -1) > JsonDouble(*y, "estimated_saving", -1);
  });
  if (findings.empty()) return text + "  None: no rule found anything to improve.\n";
  for (size_t i = 0; i < findings.size() && i < kSummaryFindings; ++i) {
    const json& finding = *findings[i];
    const std::string severity = text_of(finding, "severity");
    std::string title = text_of(finding, "rule") + ": " + text_of(finding, "title");
    const double saving = JsonDouble(finding, "estimated_saving", -1);
    if (saving > 0) title += compare::FormatLine(" (up to %.0f %% saving)", saving * 100.0);
    text += WrapText(title, "  " + paint.Severity(severity) + " ", 2 + severity.size() + 3, "      ");
    const std::string recommendation = text_of(finding, "recommendation");
    if (!recommendation.empty()) text += WrapText(recommendation, "      -> ", 9, "         ");
  }
  if (findings.size() > kSummaryFindings) {
    text += WrapText(compare::FormatLine("%zu more: ", findings.size() - kSummaryFindings) + "stepscope rules " + run_path, "  ",
                     2, "  ");
  }
  return text;
}

// The recorder's drops, by cause (analysis/recording_losses.h names them): a full disk and a
// job that records faster than stepscope writes need different fixes, so each is said apart.
std::string DroppedEventsLine(const analysis::Model& model) {
  if (model.source() != analysis::ModelSource::kStepscope) {
    return "  dropped events: not recorded by stepscope (imported run)\n";
  }
  uint64_t buffers_full = 0, write_failed = 0;
  for (const analysis::Problem& problem : model.problems()) {
    if (problem.name == "events_dropped_buffers_full") buffers_full += problem.count;
    if (problem.name == "events_dropped_write_failed") write_failed += problem.count;
  }
  std::string causes;
  if (buffers_full > 0) {
    causes += std::to_string(buffers_full) + " while buffers were full: the job recorded faster than stepscope flushed";
  }
  if (write_failed > 0) {
    causes += (causes.empty() ? "" : "; ") + std::to_string(write_failed) +
              " while the log could not be written: disk full or I/O error";
  }
  return WrapText("dropped events: " + std::to_string(buffers_full + write_failed) +
                      (causes.empty() ? "" : " (" + causes + ")"),
                  "  ", 2, "    ");
}

std::string OverheadSection(const analysis::Model& model, const Painter& paint) {
  std::string text = "\n" + paint.Heading("stepscope's overhead") + "\n";
  text += DroppedEventsLine(model);
  // The job waits in these spans while a detail window stops its profiler and writes its output.
  for (const char* name : {"DetailWindowStop", "DetailWindowWrite"}) {
    const analysis::StringId id = model.FindString(name);
    size_t count = 0;
    int64_t total_ns = 0;
    if (id != analysis::kEmptyString) {
      for (const analysis::FrameworkEvent& event : model.events()) {
        if (event.name == id && event.kind == analysis::EventKind::kSpan) {
          ++count;
          total_ns += event.duration_ns();
        }
      }
    }
    text += compare::FormatLine("  %s spans: %zu, %.1f ms in all\n", name, count, static_cast<double>(total_ns) / 1e6);
  }
  return text;
}

// A headline figure as the report's first screen shows it (web/src/sections/verdict.ts).
std::string FigureText(const json& figure) {
  const json* value = JsonField(figure, "value");
  if (value == nullptr || !value->is_number()) return "–";
  const double v = value->get<double>();
  const std::string unit = JsonString(figure, "unit");
  if (unit == "ms") return v >= 1000 ? compare::FormatLine("%.3g s", v / 1000) : compare::FormatLine("%.3g ms", v);
  if (unit == "%") return compare::FormatLine("%.3g %%", v);
  if (unit == "steps/s") return compare::FormatLine("%.3g steps/s", v);
  if (unit == "samples/s") return compare::FormatLine("%.4g samples/s", v);
  if (unit == "USD") return compare::FormatLine("$%.2f", v);
  if (unit == "USD/h") return compare::FormatLine("$%.2f/h", v);
  return compare::FormatLine("%.0f", v);
}

// The report's verdict (report/report_sections_verdict.h), first: the same sentence and figures
// as the first screen of report.html.
std::string VerdictSection(const json& verdict, const Painter& paint) {
  std::string text = "\n" + paint.Heading("Verdict") + "\n";
  text += WrapText(JsonString(verdict, "sentence"), "  ", 2, "  ");
  for (const json& group : JsonArray(verdict, "groups")) {
    if (const std::string next = JsonString(group, "next_step"); !next.empty()) {
      text += WrapText("Next step: " + next, "  ", 2, "  ");
    }
    break;  // the top cause's; the Findings below list the rest
  }
  for (const json& figure : JsonArray(verdict, "figures")) {
    text += compare::FormatLine("  %-32s %s\n", JsonString(figure, "label").c_str(), FigureText(figure).c_str());
  }
  return text + "\n";
}

// <RUN>/<name> for a run directory, else beside the file (an imported model.stepscope).
std::string BesideRun(const std::string& run_path, const std::string& name) {
  const std::string rules_dir = rules::DefaultRulesOutputDir(run_path);  // ".../rules"
  return rules_dir.substr(0, rules_dir.size() - 5) + name;
}

}  // namespace

std::string FormatRunSummary(const analysis::Model& model, const std::string& run_path, const SummaryOptions& options) {
  const Painter paint(options.color);
  const analysis::RunFacts facts = analysis::ComputeRunFacts(model, run_path);
  std::string text = WrapText("stepscope summary of " + facts.job + " (" + run_path + ")", "", 0, "  ");
  const size_t header_end = text.size();  // the verdict goes here, once the rules are known
  text += JobSection(facts, paint);
  text += StepsSection(model, paint);
  json rules_json = options.rules_json;
  std::string source = "from " + BesideRun(run_path, "rules/rules.json");
  if (rules_json.is_null()) {
    source = "evaluated now";
    auto report = MakeConfiguredProfilerReport("", json(), {}, options.catalog);
    if (report.ok()) {
      (*report)->Finish(model);
      rules_json = (*report)->RulesJson();
    }
  }
  // The report model's verdict, built from the same inputs the report uses (run facts included),
  // so the summary's sentence and figures are the report's.
  report::ReportInputs inputs;
  inputs.model = &model;
  inputs.path = run_path;
  inputs.rules = rules_json.is_object() ? rules_json : json::object();
  inputs.catalog = options.catalog;
  if (model.source() == analysis::ModelSource::kStepscope) inputs.run_info = report::BuildRunInfo(run_path, model);
  const json document = report::BuildReportModel(inputs);
  text.insert(header_end, VerdictSection(JsonObject(document, "verdict"), paint));
  text += FindingsSection(rules_json, source, run_path, paint);
  text += OverheadSection(model, paint);
  text += "\n" + paint.Heading("Report") + "\n";
  text += options.report_exists ? WrapText(options.report_path, "  ", 2, "  ")
                                : WrapText(options.report_path + " is not written yet: stepscope report " + run_path,
                                           "  ", 2, "  ");
  return text;
}

int PrintRunSummary(const std::string& run_path, FILE* out, const std::vector<rules::InstanceType>* catalog) {
  auto model = analysis::LoadRun(run_path);
  if (!model.ok()) {
    std::fprintf(stderr, "stepscope summary: %s\n", model.status().message().c_str());
    return kExitError;
  }
  PrintRunProblems(model->problems(), "stepscope summary: ", run_path);
  SummaryOptions options;
  options.catalog = catalog;
  // Read once here: the colour choice follows the output and the user's NO_COLOR.
  const char* no_color = std::getenv("NO_COLOR");
  options.color = isatty(fileno(out)) == 1 && (no_color == nullptr || *no_color == '\0');
  if (auto text = ReadRegularFile(BesideRun(run_path, "rules/rules.json"), Symlinks::kRefuse); text.ok()) {
    json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    // A damaged rules.json is ignored: the rules are evaluated again instead.
    if (!parsed.is_discarded() && parsed.is_object()) options.rules_json = std::move(parsed);
  }
  options.report_path = BesideRun(run_path, "report.html");
  options.report_exists = access(options.report_path.c_str(), R_OK) == 0;
  std::fputs(FormatRunSummary(*model, run_path, options).c_str(), out);
  return 0;
}

int SummaryCommand(const std::string& run_path) { return PrintRunSummary(run_path, stdout); }

}  // namespace stepscope::cli
