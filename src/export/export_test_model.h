// A small hand-built model shared by the export unit tests. Times in ns from kT0:
//
//   node "n1", pid 10 tid 11 (host):
//     Step:ModeKeys.TRAIN step 0   [1000, 9000]
//       forward                    [2000, 5000]
//         launch (cudaLaunch)      [2500, 3000]   -- flow "ac2g" id 77 -->  kernel
//       overlap                    [4000, 6000]   crosses forward's end: lane 1
//       backward                   [6000, 8000]   fits lane 0 again
//     marker (instant)             4500
//   node "n1", device 0 stream 7:   kernel [3500, 4200]
//   node "n1", system: cpu/cpu0/CPUUtilization 50.5 at 1000, 75.25 at 2000, NaN at 3000
//   node "n2": no events, memory/MemoryUsedPercent/MemoryUsedPercent 12 at 1500
#pragma once

#include <cmath>
#include <limits>

#include "analysis/model.h"

namespace stepscope::exporting::testing {

inline constexpr int64_t kT0 = 1'700'000'000'000'000'000;

inline analysis::Model MakeExportTestModel() {
  using analysis::EventKind;
  using analysis::FrameworkEvent;
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts facts;
  facts.name = "n1";
  facts.cpu_cores = 4;
  const uint32_t n1 = builder.AddNode(facts);
  facts = {};
  facts.name = "n2";
  const uint32_t n2 = builder.AddNode(facts);

  auto span = [&](int64_t start, int64_t end, const char* name, const char* phase, int64_t step = -1) {
    FrameworkEvent event;
    event.start_ns = kT0 + start;
    event.end_ns = kT0 + end;
    event.pid = 10;
    event.tid = 11;
    event.node = n1;
    event.name = builder.Intern(name);
    event.phase = builder.Intern(phase);
    event.step = step;
    return event;
  };
  builder.AddEvent(span(1000, 9000, "Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", 0));
  builder.AddEvent(span(2000, 5000, "forward", "Forward"));
  FrameworkEvent launch = span(2500, 3000, "cudaLaunchKernel", "cpu_functions");
  launch.category = builder.Intern("cuda_runtime");
  const uint32_t launch_index = builder.AddEvent(launch, std::vector{builder.IntArg("correlation", 77),
                                                                      builder.StringArg("note", "say \"hi\", ok")});
  builder.AddEvent(span(4000, 6000, "overlap", "DataLoaderIter"));
  builder.AddEvent(span(6000, 8000, "backward", "Backward"));
  FrameworkEvent marker = span(4500, 4500, "marker", "stepscope");
  marker.kind = EventKind::kInstant;
  builder.AddEvent(marker);
  FrameworkEvent kernel = span(3500, 4200, "gemm_kernel", "gpu_functions");
  kernel.device = 0;
  kernel.pid = 0;
  kernel.tid = 7;
  kernel.category = builder.Intern("kernel");
  const uint32_t kernel_index = builder.AddEvent(kernel, std::vector{builder.DoubleArg("occupancy", 0.5)});
  builder.AddFlow(launch_index, kernel_index, builder.Intern("ac2g"), 77);

  const uint32_t cpu = builder.SeriesFor(n1, "cpu", "cpu0", "CPUUtilization");
  builder.AddSample(cpu, kT0 + 1000, 50.5);
  builder.AddSample(cpu, kT0 + 2000, 75.25);
  builder.AddSample(cpu, kT0 + 3000, std::numeric_limits<double>::quiet_NaN());
  const uint32_t memory = builder.SeriesFor(n2, "memory", "MemoryUsedPercent", "MemoryUsedPercent");
  builder.AddSample(memory, kT0 + 1500, 12);
  return std::move(builder).Finish();
}

}  // namespace stepscope::exporting::testing
