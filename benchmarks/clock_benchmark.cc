// How closely the recorder's tick clock maps onto CLOCK_MONOTONIC (base/clock.h): a
// TickConverter built as the recorder builds one (a ReadClockPair() anchor and a
// MeasureTicksPerNs() rate) converts a later pair's ticks, and the distance to that pair's own
// monotonic reading is the error. It depends on the hardware and on how loaded the machine is,
// so it is measured here rather than asserted in base/clock_unittest.cc.
//
//   clock_benchmark [google benchmark flags]
//
// Counters: error_ns_p50 and error_ns_max over the iterations of one run (one iteration = one
// calibration over `spin_ns` of busy waiting, the argument).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "base/clock.h"

namespace {

using stepscope::ClockPair;

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void BM_TickConversionError(benchmark::State& state) {
  const uint64_t spin_ns = static_cast<uint64_t>(state.range(0));
  std::vector<double> errors;
  for (auto _ : state) {
    const ClockPair anchor = stepscope::ReadClockPair();
    const stepscope::TickConverter converter(anchor, stepscope::MeasureTicksPerNs(spin_ns));
    const ClockPair later = stepscope::ReadClockPair();
    const int64_t error_ns =
        static_cast<int64_t>(converter.ToMonotonicNs(later.ticks)) - static_cast<int64_t>(later.monotonic_ns);
    errors.push_back(static_cast<double>(std::llabs(error_ns)));
  }
  state.counters["error_ns_p50"] = Median(errors);
  state.counters["error_ns_max"] = errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end());
}
// The recorder calibrates over 2 ms, the launcher over 2 ms, the store benchmark over 20 ms.
BENCHMARK(BM_TickConversionError)->Arg(2'000'000)->Arg(20'000'000)->Iterations(50)->Unit(benchmark::kMillisecond);

// What one ReadClockPair() (five bracketed reads) costs: the recorder takes one per flush.
void BM_ReadClockPair(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(stepscope::ReadClockPair());
}
BENCHMARK(BM_ReadClockPair);

}  // namespace

BENCHMARK_MAIN();
