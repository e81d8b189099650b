#include "report/report_sections_job.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include "analysis/job_timeline.h"
#include "report/report_model_series.h"
#include "report/report_sections_cpu_counters.h"
#include "report/report_sections_heatmap.h"
#include "base/json_fields.h"

namespace stepscope::report {
namespace {

// OverallSystemUsage's Details keys in the reference's report order, with their units.
struct UsageMetric {
  const char* key;
  const char* unit;
};
constexpr std::array<UsageMetric, 6> kUsageMetrics = {{{"CPU", "%"},
                                                      {"CPU memory", "%"},
                                                      {"GPU", "%"},
                                                      {"GPU memory", "%"},
                                                      {"I/O", "%"},
                                                      {"Network", "bytes/s"}}};

std::string Percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", value);
  return text;
}

// The reference report's per-node sentences, from the p95 of each utilization.
std::vector<std::string> UsageSentences(const std::string& node, const nlohmann::json& metrics) {
  std::vector<std::string> sentences;
  auto p95 = [&](const char* metric) -> double {
    for (const nlohmann::json& m : metrics) {
      if (JsonString(m, "metric") == metric) return JsonDouble(m, "p95", NAN);
    }
    return NAN;
  };
  const double cpu = p95("CPU");
  if (!std::isnan(cpu)) {
    sentences.push_back("The 95th percentile of the total CPU utilization on node " + node + " is " +
                        (cpu < 50 ? "only " : "") + Percent(cpu) + ".");
  }
  const double gpu = p95("GPU");
  if (!std::isnan(gpu)) {
    sentences.push_back("The 95th percentile of the total GPU utilization on node " + node + " is " +
                        (gpu < 70 ? "only " + Percent(gpu) + ": the GPUs have room for more work per step" : Percent(gpu)) +
                        ".");
  }
  const double memory = p95("CPU memory");
  if (!std::isnan(memory)) {
    sentences.push_back("The 95th percentile of the host memory utilization on node " + node + " is " + Percent(memory) +
                        ".");
  }
  return sentences;
}

// One timeline of a node: a stepscope metric and the model series it is read from.
struct TimelineMetric {
  const char* metric;     // stepscope's name (docs/formats.md)
  const char* label;
  const char* unit;
  const char* type;       // the model series' key
  const char* name;       // "" = every series of `type` with `dimension` (averaged per timestamp)
  const char* dimension;
  const char* total;      // a stepscope total series preferred over the average ("" = none)
};
constexpr std::array<TimelineMetric, 14> kTimeline = {{
    {"cpu/total/util_pct", "CPU total", "%", "cpu", "", "CPUUtilization", "cpu/total/util_pct"},
    {"memory/used_pct", "Host memory", "%", "memory", "MemoryUsedPercent", "", ""},
    {"cpu/total/iowait_pct", "I/O wait", "%", "cpu", "", "I/OWaitPercentage", "cpu/total/iowait_pct"},
    {"network/rx_bytes_per_s", "Network receive", "bytes/s", "network", "ReceiveBytesPerSecond", "Algorithm", ""},
    {"network/tx_bytes_per_s", "Network transmit", "bytes/s", "network", "TransmitBytesPerSecond", "Algorithm", ""},
    {"disk/read_bytes_per_s", "Disk read", "bytes/s", "i/o", "ReadThroughputInBytesPerSecond", "", ""},
    {"disk/write_bytes_per_s", "Disk write", "bytes/s", "i/o", "WriteThroughputInBytesPerSecond", "", ""},
    {"process/cpu_pct", "Job processes CPU", "% of one core", "stepscope", "process/cpu_pct", "", ""},
    // CPU performance counters (report_sections_cpu_counters.h): the node's, or its job's.
    {"perf/total/ipc", "IPC", "instructions/cycle", "stepscope", "perf/total/ipc", "", ""},
    {"perf/job/ipc", "IPC of the job processes", "instructions/cycle", "stepscope", "perf/job/ipc", "", ""},
    {"perf/total/context_switches_per_s", "Context switches", "/s", "stepscope", "perf/total/context_switches_per_s", "", ""},
    {"perf/job/context_switches_per_s", "Context switches of the job processes", "/s", "stepscope",
     "perf/job/context_switches_per_s", "", ""},
    {"perf/total/page_faults_per_s", "Page faults", "/s", "stepscope", "perf/total/page_faults_per_s", "", ""},
    {"perf/job/page_faults_per_s", "Page faults of the job processes", "/s", "stepscope", "perf/job/page_faults_per_s", "",
     ""},
}};

}  // namespace

TimedValues MeanByTimestamp(std::span<const analysis::SystemSeries* const> series) {
  TimedValues out;
  if (series.size() == 1) {
    out.time_ns = series[0]->time_ns.ToVector();
    out.values = series[0]->value;
    return out;
  }
  std::vector<std::pair<int64_t, double>> samples;
  size_t total = 0;
  for (const analysis::SystemSeries* s : series) total += s->time_ns.size();
  samples.reserve(total);
  for (const analysis::SystemSeries* s : series) {
    for (size_t i = 0; i < s->time_ns.size() && i < s->value.size(); ++i) samples.emplace_back(s->time_ns[i], s->value[i]);
  }
  std::stable_sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < samples.size();) {
    size_t j = i;
    double sum = 0;
    while (j < samples.size() && samples[j].first == samples[i].first) sum += samples[j++].second;
    out.time_ns.push_back(samples[i].first);
    out.values.push_back(sum / static_cast<double>(j - i));
    i = j;
  }
  return out;
}

nlohmann::json BuildRunSection(const ReportContext& context, const std::string& job, const std::string& path) {
  const analysis::Model& model = *context.model;
  const nlohmann::json info = context.run_info != nullptr ? *context.run_info : nlohmann::json::object();
  nlohmann::json run;
  const std::string info_job = JsonString(info, "job");
  run["job"] = info_job.empty() ? job : info_job;
  run["path"] = path;
  run["source"] = analysis::ModelSourceName(model.source());
  run["command"] = JsonArray(info, "command");
  run["start_ns"] = context.start_ns;
  run["end_ns"] = context.end_ns;
  run["duration_s"] = NsToS(context.end_ns - context.start_ns);
  const nlohmann::json ended = JsonObject(info, "ended");
  if (context.run_info != nullptr && !ended.empty()) {
    run["ended"] = {{"code", ended.contains("code") ? ended["code"] : nlohmann::json()},
                    {"description", JsonString(ended, "description", JsonString(info, "status"))}};
  } else {
    run["ended"] = nullptr;
  }
  nlohmann::json nodes = nlohmann::json::array();
  std::string instance_type;
  int32_t instance_count = 0;
  for (const analysis::NodeFacts& node : model.nodes()) {
    nodes.push_back(node.name);
    if (instance_type.empty()) instance_type = node.instance_type;
    instance_count = std::max(instance_count, node.instance_count);
  }
  run["nodes"] = std::move(nodes);
  // Jobs of several nodes: where each node's clock sits against the reference node's, and how
  // well (docs/multi-node.md); absent when no node recorded an alignment.
  nlohmann::json clocks = nlohmann::json::array();
  for (const analysis::NodeFacts& node : model.nodes()) {
    if (node.clock.state == analysis::ClockAlignmentState::kNone) continue;
    clocks.push_back({{"node", node.name},
                      {"state", analysis::ClockAlignmentStateName(node.clock.state)},
                      {"description", analysis::DescribeClockAlignment(node.clock)}});
  }
  if (!clocks.empty()) run["node_clocks"] = std::move(clocks);
  run["instance_type"] = instance_type.empty() ? nlohmann::json() : nlohmann::json(instance_type);
  run["instance_count"] = instance_count > 0 ? nlohmann::json(instance_count) : nlohmann::json();
  run["dropped_events"] = JsonUint(info, "dropped_events", 0);
  // The model's problems include the store's (and info's are built from the model); a problem
  // is listed once.
  nlohmann::json problems = nlohmann::json::array();
  std::set<std::string> seen;
  for (const analysis::Problem& problem : model.problems()) {
    if (seen.insert(problem.sentence).second) problems.push_back(problem.sentence);
  }
  run["problems"] = std::move(problems);
  return run;
}

nlohmann::json BuildJobSummary(const ReportContext& context) {
  const analysis::JobTimeline timeline = analysis::ComputeJobTimeline(*context.model, context.start_ns, context.end_ns);
  nlohmann::json section = {{"available", true}, {"start_ns", context.start_ns}, {"end_ns", context.end_ns}};
  if (!timeline.has_steps) {
    section["available"] = false;
    section["why"] =
        "No training step was recorded, so the job cannot be split into initialization, training loop and "
        "finalization (mark steps with stepscope.step() or the torch integration).";
    return section;
  }
  const double duration_ns = static_cast<double>(timeline.end_ns - timeline.start_ns);
  nlohmann::json phases = nlohmann::json::array();
  for (const analysis::JobPhaseSpan& phase : timeline.phases) {
    phases.push_back({{"name", phase.name},
                      {"start_ns", phase.start_ns},
                      {"end_ns", phase.end_ns},
                      {"duration_s", NsToS(phase.duration_ns())},
                      {"share", duration_ns > 0 ? static_cast<double>(phase.duration_ns()) / duration_ns : 0.0}});
  }
  section["phases"] = std::move(phases);
  return section;
}

nlohmann::json BuildSystemUsage(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  const nlohmann::json details = context.Details("OverallSystemUsage");
  const nlohmann::json additions = context.StepscopeDetails("OverallSystemUsage");
  nlohmann::json nodes = nlohmann::json::array();
  for (const analysis::NodeFacts& node : model.nodes()) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const UsageMetric& metric : kUsageMetrics) {
      const nlohmann::json stats = JsonObject(JsonObject(details, metric.key), node.name.c_str());
      if (stats.empty()) continue;
      nlohmann::json row = {{"metric", metric.key}, {"unit", metric.unit}};
      for (const char* key : {"max", "p99", "p95", "p50", "min"}) row[key] = JsonDouble(stats, key, 0);
      // Rules output written before p90 existed lacks it; the table then shows the others.
      const nlohmann::json more = JsonObject(JsonObject(additions, metric.key), node.name.c_str());
      if (more.contains("p90")) row["p90"] = JsonDouble(more, "p90", 0);
      metrics.push_back(std::move(row));
    }
    std::vector<std::string> sentences = UsageSentences(node.name, metrics);
    const uint32_t node_index = static_cast<uint32_t>(&node - model.nodes().data());
    const bool sampled = std::any_of(model.series().begin(), model.series().end(), [&](const auto& series) {
      return series.node == node_index && !series.time_ns.empty();
    });
    // On imported SageMaker data the reference's window grid can leave a node's samples outside
    // every analysed window (RULES.md §0); say so rather than show an empty table.
    if (metrics.empty() && sampled) {
      sentences.push_back("None of node " + node.name +
                          "'s system samples fell in a window the rules analysed (see the rules' window grid), so "
                          "there are no percentiles for it.");
    }
    nlohmann::json entry = {{"node", node.name}, {"metrics", std::move(metrics)}, {"sentences", std::move(sentences)}};
    if (nlohmann::json counters = BuildCpuCounters(context, node_index); !counters.is_null()) {
      entry["cpu_counters"] = std::move(counters);
    }
    nodes.push_back(std::move(entry));
  }

  nlohmann::json timeline = nlohmann::json::array();
  for (uint32_t node = 0; node < model.nodes().size(); ++node) {
    for (const TimelineMetric& metric : kTimeline) {
      std::vector<const analysis::SystemSeries*> parts;
      const analysis::SystemSeries* total = nullptr;
      for (const analysis::SystemSeries& series : model.series()) {
        if (series.node != node || series.time_ns.empty()) continue;
        const std::string_view type = model.String(series.type), name = model.String(series.name);
        if (*metric.total != '\0' && type == "stepscope" && name == metric.total) total = &series;
        if (type != metric.type || model.String(series.dimension) != metric.dimension) continue;
        if (*metric.name == '\0' ? name.starts_with(metric.type) : name == metric.name) parts.push_back(&series);
      }
      if (total != nullptr) parts = {total};
      if (parts.empty()) continue;
      const TimedValues values = MeanByTimestamp(parts);
      nlohmann::json entry = {{"node", model.nodes()[node].name},
                              {"metric", metric.metric},
                              {"label", metric.label},
                              {"unit", metric.unit}};
      entry.update(TimeSeriesJson(values.time_ns, values.values, context.start_ns));
      timeline.push_back(std::move(entry));
    }
  }
  if (details.empty() && timeline.empty()) {
    return Unavailable("No system metric was recorded (" + SourceDescription(model) +
                       "): the system sampler was off or its streams are missing.");
  }
  return {{"available", true},
          {"nodes", std::move(nodes)},
          {"timeline", std::move(timeline)},
          {"heatmap", BuildUtilizationHeatmap(context)}};
}

}  // namespace stepscope::report
