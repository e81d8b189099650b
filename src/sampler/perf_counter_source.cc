#include "sampler/perf_counter_source.h"

#include <utility>

namespace stepscope {
namespace {

constexpr double kNone = -1;  // a delta unknown this interval

// The scaled count of one counter over the interval, or kNone.
double ScaledDelta(const PerfCounterValue& previous, const PerfCounterValue& current) {
  if (!previous.valid || !current.valid) return kNone;
  const PerfEventReading& a = previous.reading;
  const PerfEventReading& b = current.reading;
  if (b.value < a.value || b.time_enabled_ns < a.time_enabled_ns || b.time_running_ns < a.time_running_ns) {
    return kNone;
  }
  const uint64_t enabled = b.time_enabled_ns - a.time_enabled_ns;
  const uint64_t running = b.time_running_ns - a.time_running_ns;
  const double value = static_cast<double>(b.value - a.value);
  // A task-bound counter is enabled only while its task runs: 0 of 0 is a job that slept.
  if (running == 0) return enabled == 0 ? value : kNone;
  if (running >= enabled) return value;
  return value * static_cast<double>(enabled) / static_cast<double>(running);
}

}  // namespace

PerfCounterSource::PerfCounterSource(PerfCounterSet set) : set_(std::move(set)) {
  if (set_.scope() == PerfScope::kPerCpu) {
    for (int32_t cpu : set_.cpus()) names_.push_back(NamesFor("cpu" + std::to_string(cpu)));
    names_.push_back(NamesFor("total"));
  } else if (set_.scope() == PerfScope::kJob) {
    names_.push_back(NamesFor("job"));
  }
}

PerfCounterSource::Names PerfCounterSource::NamesFor(std::string_view scope) {
  const std::string prefix = "perf/" + std::string(scope) + "/";
  Names names;
  names[kCyclesPerS] = prefix + "cycles_per_s";
  names[kInstructionsPerS] = prefix + "instructions_per_s";
  names[kIpc] = prefix + "ipc";
  names[kCacheMissesPerS] = prefix + "cache_misses_per_s";
  names[kBranchMissesPerS] = prefix + "branch_misses_per_s";
  names[kTaskClockPct] = prefix + "task_clock_pct";
  names[kContextSwitchesPerS] = prefix + "context_switches_per_s";
  names[kPageFaultsPerS] = prefix + "page_faults_per_s";
  names[kCpuMigrationsPerS] = prefix + "cpu_migrations_per_s";
  return names;
}

void PerfCounterSource::Emit(const Names& names, const std::array<double, kPerfEventCount>& deltas, double seconds,
                             std::vector<MetricSample>& out) const {
  auto delta = [&](PerfEvent event) { return deltas[static_cast<size_t>(event)]; };
  auto rate = [&](PerfEvent event, Metric metric) {
    if (delta(event) >= 0) out.push_back({names[metric], delta(event) / seconds});
  };
  rate(PerfEvent::kCycles, kCyclesPerS);
  rate(PerfEvent::kInstructions, kInstructionsPerS);
  if (delta(PerfEvent::kInstructions) >= 0 && delta(PerfEvent::kCycles) > 0) {
    out.push_back({names[kIpc], delta(PerfEvent::kInstructions) / delta(PerfEvent::kCycles)});
  }
  rate(PerfEvent::kCacheMisses, kCacheMissesPerS);
  rate(PerfEvent::kBranchMisses, kBranchMissesPerS);
  if (delta(PerfEvent::kTaskClock) >= 0) {
    out.push_back({names[kTaskClockPct], delta(PerfEvent::kTaskClock) / (seconds * 1e9) * 100.0});
  }
  rate(PerfEvent::kContextSwitches, kContextSwitchesPerS);
  rate(PerfEvent::kPageFaults, kPageFaultsPerS);
  rate(PerfEvent::kCpuMigrations, kCpuMigrationsPerS);
}

Status PerfCounterSource::Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) {
  const size_t slots = set_.slots();
  if (slots == 0) return OkStatus();
  set_.Read(current_);
  const bool first = !has_previous_ || monotonic_ns <= previous_ns_;
  const double seconds = static_cast<double>(monotonic_ns - previous_ns_) / 1e9;
  if (!first) {
    std::array<double, kPerfEventCount> totals{};
    for (size_t slot = 0; slot < slots; ++slot) {
      std::array<double, kPerfEventCount> deltas;
      for (size_t event = 0; event < kPerfEventCount; ++event) {
        const size_t i = event * slots + slot;
        deltas[event] = ScaledDelta(previous_[i], current_[i]);
        // One CPU unknown makes the node's total unknown, not smaller.
        totals[event] = deltas[event] < 0 || totals[event] < 0 ? kNone : totals[event] + deltas[event];
      }
      Emit(names_[slot], deltas, seconds, out);
    }
    if (set_.scope() == PerfScope::kPerCpu) Emit(names_.back(), totals, seconds, out);
  }
  std::swap(previous_, current_);
  previous_ns_ = monotonic_ns;
  has_previous_ = true;
  return OkStatus();
}

}  // namespace stepscope
