// A source of system metrics polled by the SystemSampler at a fixed interval.
//
// Sources are pull-based and stateful: rates (bytes/s, CPU %) are computed from the difference
// between two consecutive polls, so the first poll of a rate metric yields nothing. Sources are
// called from the sampler's one thread only.
//
// Metric names are '/'-separated, lowercase, with the unit as suffix (see docs/formats.md):
//   cpu/<core>/user_pct  cpu/<core>/system_pct  cpu/<core>/util_pct  cpu/<core>/iowait_pct
//       (<core> = cpu0, cpu1, ...; cpu/total/... for the whole machine)
//   memory/used_pct  memory/used_bytes  memory/total_bytes
//   disk/read_bytes_per_s  disk/write_bytes_per_s  disk/read_iops  disk/write_iops  disk/iops
//   network/rx_bytes_per_s  network/tx_bytes_per_s
//   gpu/<gpuN>/util_pct  gpu/<gpuN>/memory_used_bytes  gpu/<gpuN>/memory_total_bytes
//   gpu/<gpuN>/memory_used_pct  gpu/<gpuN>/power_w  gpu/<gpuN>/temperature_c
//   gpu/<gpuN>/sm_clock_mhz
//   gpu/<gpuN>/{pcie_tx_bytes_per_s,pcie_rx_bytes_per_s,throttle_<reason>,ecc_corrected_errors,
//       ecc_uncorrected_errors,xid,sm_activity_pct,tensor_activity_pct}
//   gpu/<gpuN>/pid<P>/{sm_util_pct,memory_used_bytes}   (where NVML offers them: nvml_gpu_source.h)
//   process/cpu_pct  process/rss_bytes  process/count   (the job's process tree)
//   perf/<cpuN|total|job>/{cycles_per_s,instructions_per_s,ipc,cache_misses_per_s,...}
//       (CPU performance counters, perf_counter_source.h)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stepscope {

struct MetricSample {
  std::string name;  // e.g. "cpu/cpu0/user_pct"
  double value = 0;
};

class MetricSource {
 public:
  virtual ~MetricSource() = default;
  // Short name for messages and capabilities ("cpu", "nvml").
  virtual std::string_view name() const = 0;
  // Appends this poll's samples to `out`. `monotonic_ns` is the poll time (CLOCK_MONOTONIC).
  // An error is reported once by the sampler and the source is polled again next interval;
  // it must not throw or crash on malformed input.
  virtual Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) = 0;
};

// Where a sampler delivers each poll's samples (all stamped with the same time).
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  // `ticks` is the poll time on the recorder's tick clock (base/clock.h ReadTicks()).
  virtual void WriteSamples(uint64_t ticks, const std::vector<MetricSample>& samples) = 0;
};

}  // namespace stepscope
