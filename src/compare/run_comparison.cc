#include "compare/run_comparison.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "analysis/numerics.h"
#include "analysis/vocabulary.h"
#include "compare/compare_text.h"
#include "compare/mann_whitney.h"
#include "rules/run_cost.h"
#include "analysis/run_facts.h"
#include "compare/utilization.h"

namespace stepscope::compare {
namespace {

using nlohmann::json;

const char* const kLabels[2] = {"A", "B"};

json Unavailable(const std::string& why) { return {{"available", false}, {"why", why}}; }

// (b - a) / a; null when a is 0 (no baseline to be relative to).
json DeltaShare(double a, double b) { return a > 0 ? json((b - a) / a) : json(nullptr); }

// The step phases in the recorder's order, then any other (imported) phase by name.
int PhaseRank(const std::string& phase) {
  static const char* const kOrder[] = {"TRAIN", "EVAL", "PREDICT", "GLOBAL"};
  for (int i = 0; i < 4; ++i) {
    if (phase == kOrder[i]) return i;
  }
  return 4;
}

json StepSide(const std::vector<double>& durations_ms, const std::vector<double>& edges) {
  if (durations_ms.empty()) return {{"count", 0}};
  const analysis::Histogram histogram = analysis::EdgeHistogram(durations_ms, edges);
  json counts = json::array();
  for (double count : histogram.counts) counts.push_back(static_cast<int64_t>(count));
  return {{"count", durations_ms.size()},
          {"mean_ms", analysis::Mean(durations_ms)},
          {"p50_ms", analysis::Median(durations_ms)},
          {"p95_ms", analysis::Quantile(durations_ms, 0.95)},
          {"max_ms", *std::max_element(durations_ms.begin(), durations_ms.end())},
          {"histogram", {{"bin_edges_ms", edges}, {"counts", counts}}}};
}

json StepsSection(const analysis::Model* models[2]) {
  std::map<std::string, std::vector<double>> durations[2] = {analysis::StepDurationsMs(*models[0]), analysis::StepDurationsMs(*models[1])};
  std::set<std::string> names;
  for (const auto& side : durations) {
    for (const auto& [phase, values] : side) names.insert(phase);
  }
  if (names.empty()) {
    return Unavailable("Neither run has steps: mark them with stepscope.step() or run PyTorch training "
                       "with automatic instrumentation (docs/pytorch.md).");
  }
  std::vector<std::string> ordered(names.begin(), names.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const std::string& x, const std::string& y) { return PhaseRank(x) < PhaseRank(y); });
  json phases = json::array();
  for (const std::string& phase : ordered) {
    const std::vector<double>& a = durations[0][phase];
    const std::vector<double>& b = durations[1][phase];
    // One set of edges over both runs, so the histograms overlay bin for bin.
    std::vector<double> both = a;
    both.insert(both.end(), b.begin(), b.end());
    const std::vector<double> edges = analysis::EqualBinHistogram(both, kHistogramBins).edges;
    json row = {{"phase", phase}, {"a", StepSide(a, edges)}, {"b", StepSide(b, edges)}};
    row["delta_p50_share"] = a.empty() || b.empty() ? json(nullptr) : DeltaShare(analysis::Median(a), analysis::Median(b));
    const MannWhitneyResult test = MannWhitneyU(a, b);
    row["test"] = test.valid ? json{{"name", "Mann-Whitney U"},
                                    {"u", test.u},
                                    {"z", test.z},
                                    {"p_value", test.p_value},
                                    {"alpha", kSignificanceLevel},
                                    {"significant", test.p_value < kSignificanceLevel}}
                             : json(nullptr);
    phases.push_back(std::move(row));
  }
  return {{"available", true}, {"phases", phases}};
}

enum class ActivityKind { kPhase, kCpuOperator, kGpuOperator, kSkip };

// The buckets of rules/framework_activity.h: a phase naming "cpu" holds CPU operators, "gpu" GPU
// operators; steps and stepscope's own events are not activity; the rest are framework phases.
ActivityKind KindOf(std::string_view phase) {
  if (phase.starts_with("Step:") || phase == analysis::kStepscopePhase) return ActivityKind::kSkip;
  std::string lower(phase);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("cpu") != std::string::npos) return ActivityKind::kCpuOperator;
  if (lower.find("gpu") != std::string::npos) return ActivityKind::kGpuOperator;
  return ActivityKind::kPhase;
}

struct Totals {
  double total_ns = 0;
  int64_t calls = 0;
};

struct Activity {
  std::map<std::string, Totals> phases;
  std::map<std::pair<std::string, std::string>, Totals> operators;  // (kind, name)
};

Activity CollectActivity(const analysis::Model& model) {
  Activity activity;
  for (const analysis::FrameworkEvent& event : model.events()) {
    if (event.kind != analysis::EventKind::kSpan) continue;
    const std::string_view phase = model.String(event.phase);
    const double duration_ns = static_cast<double>(event.duration_ns());
    switch (KindOf(phase)) {
      case ActivityKind::kPhase: {
        Totals& totals = activity.phases[std::string(phase)];
        totals.total_ns += duration_ns;
        ++totals.calls;
        break;
      }
      case ActivityKind::kCpuOperator:
      case ActivityKind::kGpuOperator: {
        const char* kind = KindOf(phase) == ActivityKind::kCpuOperator ? "cpu" : "gpu";
        Totals& totals = activity.operators[{kind, std::string(model.String(event.name))}];
        totals.total_ns += duration_ns;
        ++totals.calls;
        break;
      }
      case ActivityKind::kSkip:
        break;
    }
  }
  return activity;
}

// Rows of names present in either run, largest of the two first, at most `limit`.
template <typename Key>
std::vector<Key> TopKeys(const std::map<Key, Totals>& a, const std::map<Key, Totals>& b, double scale_a,
                         double scale_b, size_t limit) {
  std::map<Key, double> largest;
  for (const auto& [key, totals] : a) largest[key] = std::max(largest[key], totals.total_ns * scale_a);
  for (const auto& [key, totals] : b) largest[key] = std::max(largest[key], totals.total_ns * scale_b);
  std::vector<std::pair<Key, double>> sorted(largest.begin(), largest.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::vector<Key> keys;
  for (size_t i = 0; i < sorted.size() && i < limit; ++i) keys.push_back(sorted[i].first);
  return keys;
}

template <typename Key>
Totals Find(const std::map<Key, Totals>& totals, const Key& key) {
  auto it = totals.find(key);
  return it == totals.end() ? Totals{} : it->second;
}

json PhasesSection(const analysis::Model* models[2], const Activity activity[2]) {
  if (activity[0].phases.empty() && activity[1].phases.empty()) {
    return Unavailable("Neither run recorded framework phases (Forward, Backward, DataLoaderIter, ...): run "
                       "PyTorch training with automatic instrumentation or annotate with stepscope.annotate().");
  }
  // Per step when both runs have steps, so runs of different lengths compare; else per run.
  const size_t steps[2] = {models[0]->steps().size(), models[1]->steps().size()};
  const bool per_step = steps[0] > 0 && steps[1] > 0;
  const double scale[2] = {per_step ? 1e-6 / static_cast<double>(steps[0]) : 1e-6,
                           per_step ? 1e-6 / static_cast<double>(steps[1]) : 1e-6};
  json rows = json::array();
  for (const std::string& name : TopKeys(activity[0].phases, activity[1].phases, scale[0], scale[1], kMaxPhaseRows)) {
    const double a_ms = Find(activity[0].phases, name).total_ns * scale[0];
    const double b_ms = Find(activity[1].phases, name).total_ns * scale[1];
    rows.push_back({{"name", name}, {"a_ms", a_ms}, {"b_ms", b_ms}, {"delta_share", DeltaShare(a_ms, b_ms)}});
  }
  return {{"available", true}, {"per", per_step ? "step" : "run"}, {"rows", rows}};
}

json OperatorsSection(const Activity activity[2]) {
  if (activity[0].operators.empty() && activity[1].operators.empty()) {
    return Unavailable("Neither run has operator profiles: they come from the detail windows of "
                       "`stepscope run` (--detailed-steps, docs/detail-windows.md) or a PyTorch profiler trace.");
  }
  json rows = json::array();
  for (const auto& key : TopKeys(activity[0].operators, activity[1].operators, 1e-6, 1e-6, kMaxOperatorRows)) {
    const Totals a = Find(activity[0].operators, key);
    const Totals b = Find(activity[1].operators, key);
    const double a_ms = a.total_ns / 1e6, b_ms = b.total_ns / 1e6;
    rows.push_back({{"name", key.second}, {"kind", key.first}, {"a_ms", a_ms}, {"b_ms", b_ms},
                    {"a_calls", a.calls}, {"b_calls", b.calls}, {"delta_share", DeltaShare(a_ms, b_ms)}});
  }
  return {{"available", true}, {"rows", rows}};
}

json UtilizationSection(const analysis::Model* models[2]) {
  const std::vector<UtilizationP95> sides[2] = {ComputeUtilizationP95(*models[0]), ComputeUtilizationP95(*models[1])};
  json rows = json::array();
  for (size_t i = 0; i < sides[0].size(); ++i) {
    if (!sides[0][i].p95 && !sides[1][i].p95) continue;
    auto value = [](const std::optional<double>& p95) { return p95 ? json(*p95) : json(nullptr); };
    rows.push_back({{"metric", sides[0][i].metric}, {"a_p95", value(sides[0][i].p95)}, {"b_p95", value(sides[1][i].p95)}});
  }
  if (rows.empty()) return Unavailable("Neither run has system samples (CPU, GPU or memory utilization).");
  return {{"available", true}, {"rows", rows}};
}

// Rule -> its findings' titles, for the rules that found something.
std::map<std::string, std::vector<std::string>> TriggeredRules(const json& rules) {
  std::map<std::string, std::vector<std::string>> triggered;
  const json* list = rules.is_object() && rules.contains("rules") ? &rules["rules"] : nullptr;
  if (list == nullptr || !list->is_array()) return triggered;
  for (const json& rule : *list) {
    if (!rule.is_object() || !rule.contains("findings") || !rule["findings"].is_array()) continue;
    for (const json& finding : rule["findings"]) {
      if (!finding.is_object()) continue;
      const std::string name = rule.value("Rule", finding.value("rule", std::string("?")));
      triggered[name].push_back(finding.value("title", std::string()));
    }
  }
  return triggered;
}

// What triggered in A and not in B, the reverse, and what both found.
json FindingsSection(const json& rules_a, const json& rules_b) {
  if (!rules_a.is_object() || !rules_b.is_object()) {
    return Unavailable("The rules of " + std::string(!rules_a.is_object() ? "RUN_A" : "RUN_B") +
                       " could not be read or evaluated, so their findings cannot be compared.");
  }
  const auto a = TriggeredRules(rules_a), b = TriggeredRules(rules_b);
  json only_a = json::array(), only_b = json::array(), both = json::array();
  for (const auto& [rule, titles] : a) {
    json entry = {{"rule", rule}, {"titles", titles}};
    if (b.count(rule)) {
      entry = {{"rule", rule}, {"a", titles}, {"b", b.at(rule)}};
      both.push_back(std::move(entry));
    } else {
      only_a.push_back(std::move(entry));
    }
  }
  for (const auto& [rule, titles] : b) {
    if (!a.count(rule)) only_b.push_back({{"rule", rule}, {"titles", titles}});
  }
  return {{"available", true}, {"only_a", only_a}, {"only_b", only_b}, {"both", both}};
}

std::string Names(const json& entries) {
  std::string text;
  for (size_t i = 0; i < entries.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == entries.size() ? " and " : ", ") + entries[i]["rule"].get<std::string>();
  }
  return text;
}

// One sentence: how B's steps, cost and findings compare with A's.
std::string VerdictSentence(const json& steps, const json& cost, const json& findings) {
  std::vector<std::string> parts;
  for (const json& row : steps.value("phases", json::array())) {
    const json& a = row["a"];
    const json& b = row["b"];
    if (!a.contains("p50_ms") || !b.contains("p50_ms")) continue;
    const double pa = a["p50_ms"].get<double>(), pb = b["p50_ms"].get<double>();
    const std::string phase = row["phase"].get<std::string>();
    const bool significant = row.contains("test") && row["test"].is_object() && row["test"].value("significant", false);
    if (!significant || pa <= 0) {
      parts.push_back(FormatLine("%s step times do not differ significantly (p50 %.3g ms vs %.3g ms)", phase.c_str(), pa, pb));
    } else {
      const double change = (pb - pa) / pa * 100;
      parts.push_back(FormatLine("B's %s steps are %.0f %% %s (p50 %.3g ms vs %.3g ms, p = %.2g)", phase.c_str(),
                                 std::fabs(change), change < 0 ? "faster" : "slower", pa, pb,
                                 row["test"]["p_value"].get<double>()));
    }
    break;  // the first phase (TRAIN when there is one)
  }
  if (cost.value("available", false) && cost["cheaper"].is_string()) {
    parts.push_back(FormatLine("%s costs %s less (%.1f %%)", cost["cheaper"].get<std::string>() == "A" ? "A" : "B",
                               rules::FormatDollars(std::llround(cost["saving"].get<double>() * 100)).c_str(),
                               cost["saving_share"].get<double>() * 100));
  }
  if (findings.value("available", false)) {
    if (!findings["only_a"].empty()) parts.push_back("B no longer triggers " + Names(findings["only_a"]));
    if (!findings["only_b"].empty()) parts.push_back("B newly triggers " + Names(findings["only_b"]));
    if (findings["only_a"].empty() && findings["only_b"].empty()) parts.push_back("both trigger the same rules");
  }
  if (parts.empty()) return "The runs have no steps, cost or findings to compare.";
  std::string sentence;
  for (size_t i = 0; i < parts.size(); ++i) sentence += (i == 0 ? "" : "; ") + parts[i];
  sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
  return sentence + ".";
}

json NullIfEmpty(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }
json NullIfZero(int64_t value) { return value == 0 ? json(nullptr) : json(value); }

}  // namespace

json BuildComparison(const ComparedRun& a, const ComparedRun& b, const std::vector<rules::InstanceType>& catalog,
                     const std::string& generated_by) {
  const ComparedRun* inputs[2] = {&a, &b};
  const analysis::Model* models[2] = {a.model, b.model};
  rules::RunCost costs[2];
  json runs = json::array();
  for (int i = 0; i < 2; ++i) {
    analysis::RunFacts facts = analysis::ComputeRunFacts(*models[i], inputs[i]->path);
    if (!inputs[i]->instance_type.empty()) facts.instance_type = inputs[i]->instance_type;
    if (inputs[i]->instance_count > 0) facts.instance_count = inputs[i]->instance_count;
    if (facts.instance_count == 0 && !facts.instance_type.empty()) facts.instance_count = 1;
    costs[i] = rules::PriceRun(catalog, facts.instance_type, facts.instance_count, facts.duration_s, kLabels[i]);
    runs.push_back({{"label", kLabels[i]},
                    {"job", facts.job},
                    {"path", facts.path},
                    {"source", facts.source},
                    {"nodes", facts.nodes},
                    {"start_ns", facts.start_ns},
                    {"end_ns", facts.end_ns},
                    {"duration_s", facts.duration_s},
                    {"instance_type", NullIfEmpty(facts.instance_type)},
                    {"instance_count", NullIfZero(facts.instance_count)},
                    {"price_per_hour", costs[i].priced ? json(costs[i].price_per_hour) : json(nullptr)},
                    {"cost", costs[i].priced ? json(static_cast<double>(costs[i].cost_cents) / 100.0) : json(nullptr)}});
  }
  const rules::CostComparison saving = rules::CompareCosts(costs[0], costs[1]);
  json cost = saving.available ? json{{"available", true},
                                      {"saving", static_cast<double>(saving.saving_cents) / 100.0},
                                      {"saving_share", saving.saving_share},
                                      {"cheaper", NullIfEmpty(saving.cheaper)}}
                               : Unavailable(saving.why);
  const Activity activity[2] = {CollectActivity(*models[0]), CollectActivity(*models[1])};
  json steps = StepsSection(models);
  json findings = FindingsSection(a.rules, b.rules);
  const std::string verdict = VerdictSentence(steps, cost, findings);
  return {{"schema", "stepscope.report"},
          {"version", 1},
          {"kind", "compare"},
          {"generated_by", generated_by},
          {"verdict", {{"sentence", verdict}}},
          {"runs", runs},
          {"cost", cost},
          {"findings", std::move(findings)},
          {"steps", std::move(steps)},
          {"phases", PhasesSection(models, activity)},
          {"operators", OperatorsSection(activity)},
          {"utilization", UtilizationSection(models)}};
}

}  // namespace stepscope::compare
