#include "rules/system_snapshots.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "rules/system_totals.h"

namespace stepscope::rules {
namespace {

// The reference resets its bottleneck dictionary past this size (a memory bound); kept.
constexpr size_t kMaxBottlenecks = 1'000'000;
// Evidence kept per rule: the latest triggered windows (bounded output, STYLE.md §8.3).
constexpr size_t kMaxEvidence = 20;

struct SampleRef {
  int64_t time_ns;
  uint32_t series;
  uint32_t sample;
};

}  // namespace

std::string SecondsKey(int64_t time_ns) {
  // The double nearest to time_ns / 1e9: whole seconds (exact) plus the fraction, one rounding.
  // (Converting time_ns to double first would round it to 256 ns and can land on the
  // neighbouring double: "...761.2345002" for the reference's "...761.2345".)
  int64_t whole = time_ns / 1'000'000'000;
  int64_t fraction_ns = time_ns % 1'000'000'000;
  if (fraction_ns < 0) {
    whole -= 1;
    fraction_ns += 1'000'000'000;
  }
  const double seconds = static_cast<double>(whole) + static_cast<double>(fraction_ns) / 1e9;
  // The shortest round-trip digits (as Python's repr), laid out the way repr lays them out:
  // positional for decimal exponents in [-4, 16), scientific otherwise.
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), seconds, std::chars_format::scientific);
  if (error != std::errc()) return "0.0";
  const std::string scientific(buffer, end);
  const size_t e = scientific.find('e');
  if (e == std::string::npos) return scientific;  // inf, nan
  int exponent = 0;
  std::from_chars(scientific.data() + e + (scientific[e + 1] == '+' ? 2 : 1), scientific.data() + scientific.size(),
                  exponent);
  if (exponent < -4 || exponent >= 16) return scientific;
  std::string sign, digits;
  for (size_t i = 0; i < e; ++i) {
    const char c = scientific[i];
    if (c == '-') sign = "-";
    if (c >= '0' && c <= '9') digits += c;
  }
  if (exponent < 0) return sign + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  const auto integral = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= integral) return sign + digits + std::string(integral - digits.size(), '0') + ".0";
  return sign + digits.substr(0, integral) + "." + digits.substr(integral);
}

std::vector<BottleneckTracker::Bottleneck> BottleneckTracker::Walk(const Window& window, double gpu_threshold_pct,
                                                                   double high_threshold_pct) {
  std::vector<Bottleneck> found;
  if (window.model == nullptr) return found;
  const analysis::Model& model = *window.model;
  if (bottlenecks_.size() > kMaxBottlenecks) bottlenecks_.clear();
  if (anchor_ns_.size() < model.nodes().size()) anchor_ns_.resize(model.nodes().size());
  if (low_gpu_counted_ns_.size() < model.nodes().size()) low_gpu_counted_ns_.resize(model.nodes().size());
  const analysis::StringId gpu_dimension = model.FindString("GPUUtilization");
  const analysis::StringId high_dimension = model.FindString(high_dimension_);

  // Per node: the window's samples of all its series in time order (every metric moves the
  // anchor, as the reference counts snapshots over all system events).
  std::vector<std::vector<SampleRef>> per_node(model.nodes().size());
  for (size_t i = 0; i < model.series().size(); ++i) {
    const analysis::SystemSeries& series = model.series()[i];
    if (series.node >= per_node.size()) continue;
    const auto [begin, end] = SampleRange(window, i);
    for (size_t k = begin; k < end; ++k) {
      per_node[series.node].push_back({series.time_ns[k], static_cast<uint32_t>(i), static_cast<uint32_t>(k)});
    }
  }

  for (uint32_t node = 0; node < per_node.size(); ++node) {
    std::vector<SampleRef>& samples = per_node[node];
    std::stable_sort(samples.begin(), samples.end(),
                     [](const SampleRef& a, const SampleRef& b) { return a.time_ns < b.time_ns; });
    // Window-local, as the reference's gpu_values / cpu_values: anchor -> samples counted.
    std::map<int64_t, int64_t> low_gpu;
    std::map<int64_t, int64_t> high;
    std::optional<int64_t>& anchor = anchor_ns_[node];
    for (const SampleRef& ref : samples) {
      if (!anchor || std::llabs(ref.time_ns - *anchor) > kSnapshotWindowNs) {
        anchor = ref.time_ns;
        ++datapoints_;
      }
      const analysis::SystemSeries& series = model.series()[ref.series];
      const double value = series.value[ref.sample];
      if (series.dimension == gpu_dimension && gpu_dimension != analysis::kEmptyString) {
        if (value < gpu_threshold_pct) {
          ++low_gpu[*anchor];
          // Each snapshot once, however many GPUs are low and whichever windows see it.
          if (low_gpu_counted_ns_[node] != anchor) {
            low_gpu_counted_ns_[node] = anchor;
            ++low_gpu_;
          }
        }
      } else if (series.dimension == high_dimension && high_dimension != analysis::kEmptyString) {
        if (value > high_threshold_pct) ++high[*anchor];
      }
    }
    for (const auto& [anchor_ns, high_count] : high) {
      auto gpu = low_gpu.find(anchor_ns);
      if (gpu == low_gpu.end()) continue;
      bottlenecks_[{node, anchor_ns}] = {gpu->second, high_count};
      found.push_back({node, anchor_ns, gpu->second, high_count});
    }
  }
  return found;
}

nlohmann::json BottleneckTracker::BottlenecksJson() const {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [key, counts] : bottlenecks_) {
    nlohmann::json& entry = json[SecondsKey(key.second)];
    if (entry.is_null()) entry = {{"GPUs", 0}, {"CPUs", 0}};
    entry["GPUs"] = entry["GPUs"].get<int64_t>() + counts.first;
    entry["CPUs"] = entry["CPUs"].get<int64_t>() + counts.second;
  }
  return json;
}

std::map<uint32_t, int64_t> BottleneckTracker::BottlenecksPerNode() const {
  std::map<uint32_t, int64_t> counts;
  for (const auto& [key, unused] : bottlenecks_) ++counts[key.first];
  return counts;
}

bool BottleneckRuleCore::Evaluate(const Window& window, const RuleParameters& parameters) {
  if (window.model != nullptr && node_names_.size() < window.model->nodes().size()) {
    node_names_.clear();
    for (const analysis::NodeFacts& facts : window.model->nodes()) node_names_.push_back(facts.name);
  }
  const std::vector<BottleneckTracker::Bottleneck> found =
      tracker_.Walk(window, parameters.Number("gpu_threshold"), parameters.Number(texts_.high_parameter));
  const int64_t datapoints = tracker_.datapoints();
  if (datapoints <= static_cast<int64_t>(parameters.Number("patience"))) return false;
  const double bottleneck_pct =
      static_cast<double>(tracker_.bottleneck_count()) / static_cast<double>(datapoints) * 100.0;
  if (!(bottleneck_pct > parameters.Number("threshold"))) return false;

  ++triggered_;
  last_trigger_ns_ = window.start_ns;
  for (const BottleneckTracker::Bottleneck& bottleneck : found) {
    // Only the bottleneck's node (the reference pools every node's events: RULES.md §12).
    activity_.AddAt(*window.model, bottleneck.node, bottleneck.anchor_ns);
  }
  // Evidence: one entry per node that had bottlenecks in this triggered window.
  std::map<uint32_t, WindowEvidence> per_node;
  for (const BottleneckTracker::Bottleneck& bottleneck : found) {
    auto [it, inserted] = per_node.try_emplace(bottleneck.node);
    if (inserted) it->second = {bottleneck.node, window.start_ns, window.end_ns, 0, bottleneck.anchor_ns};
    ++it->second.bottlenecks;
  }
  for (const auto& [node, evidence] : per_node) evidence_.push_back(evidence);
  if (evidence_.size() > kMaxEvidence) evidence_.erase(evidence_.begin(), evidence_.end() - kMaxEvidence);
  return true;
}

RuleReport BottleneckRuleCore::Report(const RuleParameters& parameters) const {
  RuleReport report;
  report.rule = texts_.rule;
  report.description = texts_.description;
  report.recommendation = texts_.recommendation;
  report.triggered = triggered_;
  report.violations = tracker_.bottleneck_count();
  report.datapoints = tracker_.datapoints();
  report.last_trigger_ns = last_trigger_ns_;
  report.parameters = parameters.ReportString();
  // The framework activity keys appear once a window triggered, as in the reference.
  if (triggered_ > 0) report.details = activity_.ToJson();
  report.details["low_gpu_utilization"] = tracker_.low_gpu_snapshots();
  report.details["bottlenecks"] = tracker_.BottlenecksJson();
  if (triggered_ == 0) return report;

  auto node_name = [&](uint32_t node) { return node < node_names_.size() ? node_names_[node] : std::to_string(node); };
  for (const auto& [node, count] : tracker_.BottlenecksPerNode()) {
    Finding finding;
    finding.id = texts_.rule + "/" + node_name(node) + "/gpu-starved";
    finding.rule = texts_.rule;
    const double share_pct = 100.0 * static_cast<double>(count) / static_cast<double>(tracker_.datapoints());
    finding.severity = share_pct > 2 * parameters.Number("threshold") ? Severity::kCritical : Severity::kWarning;
    char title[256];
    std::snprintf(title, sizeof(title),
                  "%s: GPU utilization below %s %% while %s was above %s %% in %lld of %lld snapshots",
                  node_name(node).c_str(), parameters.Text("gpu_threshold").c_str(), texts_.high_label.c_str(),
                  parameters.Text(texts_.high_parameter).c_str(), static_cast<long long>(count),
                  static_cast<long long>(tracker_.datapoints()));
    finding.title = title;
    finding.recommendation = texts_.recommendation;
    finding.next_step = texts_.next_step;
    for (const WindowEvidence& window : evidence_) {
      if (window.node != node) continue;
      Evidence evidence;
      evidence.node = node_name(node);
      evidence.start_ns = window.start_ns;
      evidence.end_ns = window.end_ns;
      evidence.what = std::to_string(window.bottlenecks) + " bottleneck snapshot(s) in this window, the first at " +
                      SecondsKey(window.first_anchor_ns) + " s";
      finding.evidence.push_back(std::move(evidence));
    }
    report.findings.push_back(std::move(finding));
  }
  return report;
}

}  // namespace stepscope::rules
