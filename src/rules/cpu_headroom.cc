#include "rules/cpu_headroom.h"

#include <cstdio>

#include "rules/system_totals.h"

namespace stepscope::rules {
namespace {

constexpr std::string_view kHostCpuMetric = "cpu/total/util_pct";
constexpr std::string_view kJobCpuMetric = "process/cpu_pct";

}  // namespace

bool CpuHeadroom::others_fill_it() const {
  if (!full() || job_cpu_pct < 0 || cores <= 0) return false;
  const double job_share_pct = job_cpu_pct / static_cast<double>(cores);  // % of all cores
  return job_share_pct < host_busy_pct / 2;
}

std::string CpuHeadroom::Describe() const {
  char text[160];
  if (job_cpu_pct >= 0 && cores > 0) {
    std::snprintf(text, sizeof text, "the host's CPU is %.0f %% busy and this job uses %.1f %% of one core (of %lld cores)",
                  host_busy_pct, job_cpu_pct, static_cast<long long>(cores));
  } else {
    std::snprintf(text, sizeof text, "the host's CPU is %.0f %% busy", host_busy_pct);
  }
  return text;
}

bool AdviseOnAFullHost(const CpuHeadroom& cpu, const std::string& node_name, Finding& finding) {
  if (cpu.others_fill_it()) {
    finding.recommendation = "Other processes fill this host: " + cpu.Describe() +
                             ". More workers would only queue for the same cores. Stop or move the other work, or "
                             "give the job its own cores (taskset, a cgroup, a dedicated node), then look at the "
                             "data loader again.";
    finding.next_step = "Find what else runs on " + node_name + " (top -o %CPU) and stop or move it; then compare "
                        "the step time.";
    return true;
  }
  if (cpu.full()) {
    finding.recommendation = "There is no CPU to spare: " + cpu.Describe() +
                             ", so more workers would not load faster. Make each batch cheaper (decode and augment "
                             "once and cache, move augmentation to the GPU, use a faster decoder) or use an "
                             "instance with more cores.";
    finding.next_step = "Profile a worker with a python detail window (stepscope run --python-steps START:COUNT) "
                        "to see where a batch's CPU time goes.";
    return true;
  }
  return false;
}

void CpuHeadroomTally::Add(const Window& window) {
  if (window.model == nullptr) return;
  const analysis::Model& model = *window.model;
  for (size_t i = 0; i < model.series().size(); ++i) {
    const analysis::SystemSeries& series = model.series()[i];
    const std::string_view name = model.String(series.name);
    const bool host = name == kHostCpuMetric, job = name == kJobCpuMetric;
    if (!host && !job) continue;
    const auto [begin, end] = SampleRange(window, i);
    Sums& sums = nodes_[series.node];
    if (series.node < model.nodes().size()) sums.cores = model.nodes()[series.node].cpu_cores;
    for (size_t k = begin; k < end; ++k) {
      // Windows are closed at both edges: a sample on the edge is counted in the window it ends.
      if (series.time_ns[k] == window.start_ns && window.index > 0) continue;
      (host ? sums.host : sums.job) += series.value[k];
      ++(host ? sums.host_samples : sums.job_samples);
    }
  }
}

CpuHeadroom CpuHeadroomTally::Of(uint32_t node) const {
  CpuHeadroom headroom;
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return headroom;
  const Sums& sums = it->second;
  if (sums.host_samples > 0) headroom.host_busy_pct = sums.host / static_cast<double>(sums.host_samples);
  if (sums.job_samples > 0) headroom.job_cpu_pct = sums.job / static_cast<double>(sums.job_samples);
  headroom.cores = sums.cores;
  return headroom;
}

}  // namespace stepscope::rules
