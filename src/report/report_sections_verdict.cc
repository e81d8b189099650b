#include "report/report_sections_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/numerics.h"
#include "analysis/run_facts.h"
#include "base/json_fields.h"
#include "rules/cpu_headroom.h"
#include "rules/rule.h"
#include "rules/run_cost.h"

namespace stepscope::report {
namespace {

// Evidence a card shows on the first screen; the Findings section keeps all of it.
constexpr size_t kEvidencePerCard = 3;

nlohmann::json Figure(const std::string& key, const std::string& label, double value, const std::string& unit) {
  return {{"key", key}, {"label", label}, {"value", std::isfinite(value) ? nlohmann::json(value) : nlohmann::json()},
          {"unit", unit}};
}

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f %%", fraction * 100);
  return text;
}

// Findings of the same rule that recommend the same thing are one cause: a card lists where it
// happened instead of repeating itself once per node, rank or GPU.
nlohmann::json GroupFindings(const nlohmann::json& findings) {
  std::vector<nlohmann::json> groups;
  std::map<std::string, size_t> index_of;
  for (const nlohmann::json& finding : findings) {
    const std::string key = JsonString(finding, "rule") + '\x1f' + JsonString(finding, "severity") + '\x1f' +
                            JsonString(finding, "recommendation") + '\x1f' + JsonString(finding, "next_step");
    auto [it, inserted] = index_of.try_emplace(key, groups.size());
    if (inserted) {
      // Findings arrive most severe and most costly first: the first of a cause speaks for it.
      nlohmann::json evidence = nlohmann::json::array();
      for (const nlohmann::json& item : JsonArray(finding, "evidence")) {
        if (evidence.size() == kEvidencePerCard) break;
        evidence.push_back(item);
      }
      groups.push_back({{"rule", JsonString(finding, "rule")},
                        {"severity", JsonString(finding, "severity", "info")},
                        {"title", JsonString(finding, "title")},
                        {"nodes", nlohmann::json::array()},
                        {"ranks", nlohmann::json::array()},
                        {"findings", 0},
                        {"finding_ids", nlohmann::json::array()},
                        {"estimated_saving", finding.value("estimated_saving", nlohmann::json())},
                        {"saving_basis", JsonString(finding, "saving_basis")},
                        {"recommendation", JsonString(finding, "recommendation")},
                        {"next_step", JsonString(finding, "next_step")},
                        {"evidence", std::move(evidence)}});
    }
    nlohmann::json& group = groups[it->second];
    group["findings"] = group["findings"].get<int>() + 1;
    group["finding_ids"].push_back(JsonString(finding, "id"));
    for (const nlohmann::json& item : JsonArray(finding, "evidence")) {
      if (const std::string node = JsonString(item, "node"); !node.empty() &&
          std::find(group["nodes"].begin(), group["nodes"].end(), node) == group["nodes"].end()) {
        group["nodes"].push_back(node);
      }
      if (const nlohmann::json* rank = JsonField(item, "rank"); rank != nullptr && rank->is_number_integer() &&
          std::find(group["ranks"].begin(), group["ranks"].end(), *rank) == group["ranks"].end()) {
        group["ranks"].push_back(*rank);
      }
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (nlohmann::json& group : groups) {
    std::sort(group["nodes"].begin(), group["nodes"].end());
    std::sort(group["ranks"].begin(), group["ranks"].end());
    out.push_back(std::move(group));
  }
  return out;
}

// The batch size of the DataLoader iterator that started last before the first TRAIN step (the
// training loader, not an evaluation one started later); -1 when none says.
int64_t TrainingBatchSize(const analysis::Model& model, int64_t first_train_ns) {
  const analysis::StringId initialize = model.FindString("DataLoaderIterInitialize");
  if (initialize == analysis::kEmptyString || first_train_ns == INT64_MAX) return -1;
  int64_t batch = -1;
  for (const analysis::FrameworkEvent& event : model.events()) {
    if (event.start_ns > first_train_ns) break;  // events are in start order
    if (event.phase != initialize) continue;
    if (const analysis::EventArg* arg = model.FindArg(event, "batch_size"); arg != nullptr) batch = arg->int_value;
  }
  return batch;
}

// The headline figures, each taken from where the report computes it.
nlohmann::json Figures(const ReportContext& context, const nlohmann::json& document) {
  const analysis::Model& model = *context.model;
  nlohmann::json figures = nlohmann::json::array();
  // Step time per phase, every node and rank pooled, the steps stepscope disturbed left out.
  // Sorted in place: analysis::Quantile would sort a copy per quantile (millions of steps a day).
  std::map<std::string, std::vector<double>> durations = analysis::StepDurationsMs(model);
  for (const char* phase : {"TRAIN", "EVAL", "PREDICT", "GLOBAL"}) {
    auto it = durations.find(phase);
    if (it == durations.end() || it->second.empty()) continue;
    std::sort(it->second.begin(), it->second.end());
    const std::string name = phase;
    figures.push_back(Figure("step_time_" + name + "_p50", name + " step time p50",
                             analysis::SortedQuantile(it->second, 0.5), "ms"));
    figures.push_back(Figure("step_time_" + name + "_p95", name + " step time p95",
                             analysis::SortedQuantile(it->second, 0.95), "ms"));
  }
  durations.clear();
  // TRAIN steps per second of the training loop: distinct step numbers, so ranks that run the
  // same step together count it once.
  const analysis::JobTimeline timeline = analysis::ComputeJobTimeline(model, context.start_ns, context.end_ns);
  // Step numbers, counted distinct once collected: a set's node per step would hold ~40 bytes
  // for each of a day's millions of steps, a vector 8.
  std::vector<int64_t> train_steps;
  std::set<std::pair<uint32_t, int32_t>> train_processes;  // (node, pid): the ranks that train
  int64_t first_train_ns = INT64_MAX;
  for (uint32_t index : model.steps()) {
    const analysis::FrameworkEvent& step = model.events()[index];
    if (model.StepPhaseOf(step) != analysis::StepPhase::kTrain) continue;
    train_steps.push_back(step.step);
    train_processes.emplace(step.node, step.pid);
    first_train_ns = std::min(first_train_ns, step.start_ns);
  }
  std::sort(train_steps.begin(), train_steps.end());
  train_steps.erase(std::unique(train_steps.begin(), train_steps.end()), train_steps.end());
  for (const analysis::JobPhaseSpan& phase : timeline.phases) {
    if (!timeline.has_steps || phase.name != "training_loop" || phase.duration_ns() <= 0 || train_steps.empty()) continue;
    const double steps_per_s = static_cast<double>(train_steps.size()) / (static_cast<double>(phase.duration_ns()) / 1e9);
    figures.push_back(Figure("train_steps_per_s", "TRAIN steps per second", steps_per_s, "steps/s"));
    // Samples per second when the training DataLoader's batch size is known (the torch
    // integration records it when an iterator starts): every training rank loads its own batch.
    if (const int64_t batch = TrainingBatchSize(model, first_train_ns); batch > 0) {
      figures.push_back(Figure("train_samples_per_s", "TRAIN samples per second",
                               steps_per_s * static_cast<double>(batch) * static_cast<double>(train_processes.size()),
                               "samples/s"));
    }
  }
  // Share of TRAIN step time spent waiting for data, every node: DataloaderStarvation's
  // measurement (data_loading.starvation), the one its finding and the verdict sentence quote.
  double wait_ns = 0, step_ns = 0;
  // A named copy: items() of a temporary would walk freed memory.
  const nlohmann::json starvation = JsonObject(JsonObject(document, "data_loading"), "starvation");
  for (const auto& [node, phases] : starvation.items()) {
    const nlohmann::json train = JsonObject(phases, "TRAIN");
    const double total_ns = JsonDouble(train, "mean_step_ns", 0) * JsonDouble(train, "steps", 0);
    wait_ns += JsonDouble(train, "data_wait_share", 0) * total_ns;
    step_ns += total_ns;
  }
  if (step_ns > 0) figures.push_back(Figure("data_wait_pct", "TRAIN time waiting for data", 100 * wait_ns / step_ns, "%"));
  // CPU and GPU utilization p95: the busiest node's (system_usage).
  for (const auto& [metric, key, label] : {std::tuple{"CPU", "cpu_p95", "CPU utilization p95"},
                                          std::tuple{"GPU", "gpu_p95", "GPU utilization p95"}}) {
    double busiest = NAN;
    for (const nlohmann::json& node : JsonArray(JsonObject(document, "system_usage"), "nodes")) {
      for (const nlohmann::json& row : JsonArray(node, "metrics")) {
        if (JsonString(row, "metric") != metric) continue;
        const double p95 = JsonDouble(row, "p95", NAN);
        if (std::isfinite(p95) && !(busiest >= p95)) busiest = p95;
      }
    }
    if (std::isfinite(busiest)) figures.push_back(Figure(key, label, busiest, "%"));
  }
  // What the run cost and costs per hour, when its instance type is known and priced.
  const analysis::RunFacts facts = analysis::ComputeRunFacts(model, context.path);
  const std::vector<rules::InstanceType> builtin = context.catalog == nullptr ? rules::BuiltinInstanceCatalog()
                                                                              : std::vector<rules::InstanceType>();
  const rules::RunCost cost = rules::PriceRun(context.catalog != nullptr ? *context.catalog : builtin,
                                              facts.instance_type, facts.instance_count, facts.duration_s, "the run");
  if (cost.priced) {
    figures.push_back(Figure("run_cost_usd", "cost of the run", static_cast<double>(cost.cost_cents) / 100, "USD"));
    figures.push_back(Figure("cost_per_hour_usd", "cost per hour",
                             cost.price_per_hour * static_cast<double>(cost.instance_count), "USD/h"));
  }
  // stepscope's own cost: what it dropped and the time the job spent in its profiling.
  const nlohmann::json overhead = JsonObject(document, "overhead");
  if (JsonBool(overhead, "available", false)) {
    figures.push_back(Figure("dropped_events", "events stepscope dropped", JsonDouble(overhead, "dropped_events", 0),
                             "events"));
    double profiling_ms = 0;
    for (const nlohmann::json& span : JsonArray(overhead, "spans")) profiling_ms += JsonDouble(span, "total_ms", 0);
    figures.push_back(Figure("profiling_ms", "time in stepscope's profiling", profiling_ms, "ms"));
    if (const double sampler = JsonDouble(overhead, "sampler_cpu_pct", NAN); std::isfinite(sampler)) {
      figures.push_back(Figure("sampler_cpu_pct", "system sampler CPU (one core)", sampler, "%"));
    }
  }
  return figures;
}

// "Other processes fill the host's CPU on vm: ..." for every node where they do, over the whole
// run (rules/cpu_headroom.h, the data-loading rules' test): said before anything else, since no
// change to the job helps while they do.
std::string HostContention(const analysis::Model& model) {
  rules::Window whole;
  whole.model = &model;
  whole.start_ns = model.first_ns();
  whole.end_ns = model.last_ns();
  for (const analysis::SystemSeries& series : model.series()) whole.samples.emplace_back(0, series.time_ns.size());
  rules::CpuHeadroomTally tally;
  tally.Add(whole);
  std::string text;
  for (uint32_t node = 0; node < model.nodes().size(); ++node) {
    const rules::CpuHeadroom cpu = tally.Of(node);
    if (!cpu.others_fill_it()) continue;
    text += "Other processes fill the CPU of " + model.nodes()[node].name + ": " + cpu.Describe() + ". ";
  }
  return text;
}

}  // namespace

nlohmann::json BuildVerdict(const ReportContext& context, const nlohmann::json& document) {
  nlohmann::json verdict;
  verdict["figures"] = Figures(context, document);
  const std::string contention = HostContention(*context.model);
  verdict["host_contention"] = contention.empty() ? nlohmann::json() : nlohmann::json(contention);
  verdict["groups"] = GroupFindings(JsonArray(document, "findings"));
  const nlohmann::json& groups = verdict["groups"];
  if (groups.empty()) {
    verdict["severity"] = "ok";
    verdict["top_group"] = nullptr;
    verdict["expected_saving"] = nullptr;
    verdict["sentence"] = contention + (JsonArray(document, "rules").empty()
                              ? "No rule was evaluated on this run, so nothing can be said about what holds it back."
                              : "No rule found a problem in the job itself.");
    return verdict;
  }
  const nlohmann::json& top = groups[0];
  verdict["severity"] = top["severity"];
  verdict["top_group"] = 0;
  verdict["expected_saving"] = top["estimated_saving"];
  std::string sentence = JsonString(top, "title");
  if (top["nodes"].size() > 1) {
    sentence += " (the same on " + std::to_string(top["nodes"].size()) + " nodes)";
  } else if (top["ranks"].size() > 1) {
    sentence += " (the same on " + std::to_string(top["ranks"].size()) + " ranks)";
  }
  if (top["estimated_saving"].is_number()) {
    sentence += "; fixing it could save about " + Percent(top["estimated_saving"].get<double>()) + " of step time";
  }
  verdict["sentence"] = contention + sentence + ".";
  return verdict;
}

}  // namespace stepscope::report
