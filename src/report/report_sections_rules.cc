#include "report/report_sections_rules.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/numerics.h"
#include "report/phase_display_names.h"
#include "report/report_model_series.h"
#include "report/report_rule_charts.h"
#include "base/json_fields.h"

namespace stepscope::report {
namespace {

// Bins of the bottleneck band over the job.
constexpr int kBottleneckBands = 60;

// "threshold:50\ncpu_threshold:90" -> {"threshold": "50", "cpu_threshold": "90"} (texts as given).
nlohmann::json ParametersObject(const std::string& text) {
  nlohmann::json out = nlohmann::json::object();
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    const size_t colon = line.find(':');
    if (colon != std::string::npos && colon > 0) out[line.substr(0, colon)] = line.substr(colon + 1);
    begin = end + 1;
  }
  return out;
}

int SeverityRank(const std::string& severity) {
  if (severity == "critical") return 2;
  if (severity == "warning") return 1;
  return 0;
}

const nlohmann::json& RuleEntries(const ReportContext& context) {
  static const nlohmann::json kNone = nlohmann::json::array();
  const nlohmann::json* list = context.rules != nullptr ? JsonField(*context.rules, "rules") : nullptr;
  return list != nullptr && list->is_array() ? *list : kNone;
}

// {"available": true, "details": Details} when the rule ran and said something, else why not.
nlohmann::json DetailsSection(const ReportContext& context, const char* rule, const std::string& why_empty) {
  if (context.Rule(rule) == nullptr) return Unavailable(std::string(rule) + " was not evaluated for this run.");
  const nlohmann::json details = context.Details(rule);
  if (details.empty()) return Unavailable(why_empty);
  bool truncated = false;
  nlohmann::json section = {{"available", true}, {"details", BoundedDetails(details, kMaxDetailEntries, &truncated)}};
  if (truncated) section["details_truncated"] = true;
  return section;
}

// CPUBottleneck's and IOBottleneck's Details hold one entry per bottleneck snapshot, keyed by its
// time in seconds (thousands on a long run): the section leads with what they add up to, the
// share of the rule's snapshots and when, and the times as a histogram over the job (a band).
void AddBottleneckSummary(const ReportContext& context, const char* rule, const char* what, nlohmann::json& section) {
  if (!JsonBool(section, "available", false)) return;
  const nlohmann::json details = context.Details(rule);
  const nlohmann::json* bottlenecks = JsonField(details, "bottlenecks");
  const int64_t datapoints = JsonInt(*context.Rule(rule), "Datapoints", 0);
  std::vector<double> offsets_s;
  if (bottlenecks != nullptr && bottlenecks->is_object()) {
    for (const auto& [key, entry] : bottlenecks->items()) {
      char* end = nullptr;
      const double seconds = std::strtod(key.c_str(), &end);
      if (end == key.c_str()) continue;
      offsets_s.push_back(seconds - static_cast<double>(context.start_ns) / 1e9);
    }
  }
  std::sort(offsets_s.begin(), offsets_s.end());
  const size_t count = offsets_s.size();
  char sentence[256];
  if (count == 0 && datapoints == 0) {
    std::snprintf(sentence, sizeof sentence, "%s counted no system snapshot in the windows it analysed.", rule);
  } else if (count == 0) {
    std::snprintf(sentence, sizeof sentence, "No %s bottleneck in %lld system snapshots.", what,
                  static_cast<long long>(datapoints));
  } else {
    std::snprintf(sentence, sizeof sentence,
                  "The %s was the bottleneck in %zu of %lld system snapshots (%.1f %%), between %.0f s and %.0f s "
                  "after the start.",
                  what, count, static_cast<long long>(datapoints),
                  datapoints > 0 ? 100.0 * static_cast<double>(count) / static_cast<double>(datapoints) : 0.0,
                  offsets_s.front(), offsets_s.back());
  }
  nlohmann::json summary = {{"snapshots", count}, {"datapoints", datapoints}, {"sentence", sentence}};
  summary.update(BottleneckCauses(details));
  if (count > 0) {
    // Over the whole job, so the band lines up with the utilization charts' time axis.
    const double job_s = std::max(static_cast<double>(context.end_ns - context.start_ns) / 1e9, offsets_s.back());
    std::vector<double> edges;
    for (int i = 0; i <= kBottleneckBands; ++i) edges.push_back(job_s * i / kBottleneckBands);
    const analysis::Histogram band = analysis::EdgeHistogram(offsets_s, edges);
    nlohmann::json counts = nlohmann::json::array();
    for (double c : band.counts) counts.push_back(static_cast<int64_t>(c));
    summary["band"] = {{"bin_edges_s", band.edges}, {"counts", counts}};
  }
  section["summary"] = std::move(summary);
}

// LoadBalancing writes every node's workload histograms, as the reference does (RULES.md §0), even
// for a node with one GPU; the section compares loads, so it needs two GPUs on a node or two nodes.
bool HasWorkloadsToCompare(const nlohmann::json& details) {
  if (!details.is_object()) return false;
  size_t nodes_with_workloads = 0;
  for (const auto& [node, entry] : details.items()) {
    const nlohmann::json* workloads = JsonField(entry, "workloads");
    if (workloads == nullptr || !workloads->is_object() || workloads->empty()) continue;
    if (workloads->size() >= 2) return true;
    ++nodes_with_workloads;
  }
  return nodes_with_workloads >= 2;
}

}  // namespace

nlohmann::json BuildRulesList(const ReportContext& context) {
  std::vector<const nlohmann::json*> entries;
  for (const nlohmann::json& entry : RuleEntries(context)) {
    if (entry.is_object()) entries.push_back(&entry);
  }
  // Most triggered first; rules.json's order (RULES.md order) otherwise.
  std::stable_sort(entries.begin(), entries.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
    return JsonInt(*a, "RuleTriggered", 0) > JsonInt(*b, "RuleTriggered", 0);
  });
  nlohmann::json rules = nlohmann::json::array();
  for (const nlohmann::json* entry : entries) {
    bool truncated = false;
    nlohmann::json rule = {{"rule", JsonString(*entry, "Rule")},
                           {"description", JsonString(*entry, "description")},
                           {"recommendation", JsonString(*entry, "recommendation")},
                           {"triggered", JsonInt(*entry, "RuleTriggered", 0)},
                           {"violations", JsonInt(*entry, "Violations", 0)},
                           {"datapoints", JsonInt(*entry, "Datapoints", 0)},
                           {"reporting", JsonBool(*entry, "reporting", false)},
                           {"parameters", ParametersObject(JsonString(*entry, "RuleParameters"))},
                           {"last_trigger_ns", JsonInt(*entry, "last_trigger_ns", -1)},
                           {"details", BoundedDetails(JsonObject(*entry, "Details"), kMaxDetailEntries, &truncated)}};
    if (truncated) rule["details_truncated"] = true;
    rules.push_back(std::move(rule));
  }
  return rules;
}

nlohmann::json BuildFindings(const ReportContext& context) {
  std::vector<nlohmann::json> findings;
  for (const nlohmann::json& entry : RuleEntries(context)) {
    for (const nlohmann::json& finding : JsonArray(entry, "findings")) {
      if (!finding.is_object()) continue;
      nlohmann::json out = {{"id", JsonString(finding, "id")},
                            {"rule", JsonString(finding, "rule", JsonString(entry, "Rule"))},
                            {"severity", JsonString(finding, "severity", "info")},
                            {"title", JsonString(finding, "title")},
                            {"recommendation", JsonString(finding, "recommendation")},
                            {"next_step", JsonString(finding, "next_step")},
                            {"estimated_saving", nullptr},
                            {"saving_basis", JsonString(finding, "saving_basis")}};
      if (const nlohmann::json* saving = JsonField(finding, "estimated_saving");
          saving != nullptr && saving->is_number()) {
        out["estimated_saving"] = *saving;
      }
      const nlohmann::json evidence = JsonArray(finding, "evidence");
      nlohmann::json kept = nlohmann::json::array();
      for (size_t i = 0; i < evidence.size() && i < kMaxEvidencePerFinding; ++i) {
        kept.push_back(evidence[i]);
        // Framework phases in the activity read as the framework section names them.
        nlohmann::json& item = kept.back();
        if (!item.is_object() || !item.contains("top_activity") || !item["top_activity"].is_array()) continue;
        for (nlohmann::json& activity : item["top_activity"]) {
          if (JsonString(activity, "kind") == "phase") activity["name"] = PhaseDisplayName(JsonString(activity, "name"));
        }
      }
      out["evidence"] = std::move(kept);
      out["evidence_total"] = evidence.size();
      findings.push_back(std::move(out));
    }
  }
  // Severity, then estimated saving (unknown last), then id: a stable order for the same data.
  std::sort(findings.begin(), findings.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    const auto key = [](const nlohmann::json& f) {
      return std::make_tuple(-SeverityRank(f["severity"].get<std::string>()),
                             -JsonDouble(f, "estimated_saving", -1.0), f["id"].get<std::string>());
    };
    return key(a) < key(b);
  });
  nlohmann::json out = nlohmann::json::array();
  for (nlohmann::json& finding : findings) out.push_back(std::move(finding));
  return out;
}

void AddRuleDetailSections(const ReportContext& context, nlohmann::json& document) {
  const bool gpus = context.HasGpuSeries();
  const std::string no_gpu = "no GPU utilization was recorded (" + SourceDescription(*context.model) + ")";
  const std::string one_gpu = "Only one GPU was seen, or too few samples: there is no load to compare between GPUs.";
  document["workload_balancing"] =
      !gpus ? Unavailable("Workload balancing compares GPUs, and " + no_gpu + ".")
      : context.Rule("LoadBalancing") != nullptr && !HasWorkloadsToCompare(context.Details("LoadBalancing"))
          ? Unavailable(one_gpu)
          : DetailsSection(context, "LoadBalancing", one_gpu);
  if (JsonBool(document["workload_balancing"], "available", false)) {
    document["workload_balancing"]["histograms"] = WorkloadHistograms(context.Details("LoadBalancing"));
  }

  const bool has_dataloader = context.Rule("Dataloader") != nullptr, has_starvation = context.Rule("DataloaderStarvation") != nullptr;
  const nlohmann::json dataloader = context.Details("Dataloader"), starvation = context.Details("DataloaderStarvation");
  if ((!has_dataloader && !has_starvation) || (dataloader.empty() && starvation.empty())) {
    document["data_loading"] = Unavailable(
        "No data-loading event was recorded: the data loader's iterations and workers are seen through the torch "
        "integration (or SageMaker's DataLoader events).");
  } else {
    bool truncated = false;
    document["data_loading"] = {{"available", true},
                                {"dataloader", BoundedDetails(dataloader, kMaxDetailEntries, &truncated)},
                                {"starvation", BoundedDetails(starvation, kMaxDetailEntries, &truncated)}};
    if (truncated) document["data_loading"]["details_truncated"] = true;
  }
  document["batch_size"] =
      gpus ? DetailsSection(context, "BatchSize", "BatchSize needs GPU and GPU memory utilization together on a node.")
           : Unavailable("The batch-size check looks for idle GPUs with free memory, and " + no_gpu + ".");
  if (JsonBool(document["batch_size"], "available", false)) {
    const nlohmann::json boxes = BatchSizeBoxes(context.Details("BatchSize"), context.start_ns);
    if (!boxes.is_null()) document["batch_size"].update(boxes);
  }
  document["cpu_bottlenecks"] =
      gpus ? DetailsSection(context, "CPUBottleneck", "CPUBottleneck saw no system snapshot to count.")
           : Unavailable("A CPU bottleneck is a GPU left idle by a busy CPU, and " + no_gpu + ".");
  document["io_bottlenecks"] =
      gpus ? DetailsSection(context, "IOBottleneck", "IOBottleneck saw no system snapshot to count.")
           : Unavailable("An I/O bottleneck is a GPU left idle by I/O wait, and " + no_gpu + ".");
  AddBottleneckSummary(context, "CPUBottleneck", "CPU", document["cpu_bottlenecks"]);
  AddBottleneckSummary(context, "IOBottleneck", "I/O", document["io_bottlenecks"]);
  document["step_time_breakdown"] = DetailsSection(
      context, "StepTimeBreakdown", "No step with framework activity was recorded, so there is no step time to split.");
}

}  // namespace stepscope::report
