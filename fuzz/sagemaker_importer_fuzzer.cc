// libFuzzer target for the SageMaker readers (STYLE.md §6: every reader of untrusted bytes).
// The first byte picks the reader: system-metrics JSON lines, a pevents Chrome-trace array, or
// a TF profiler trace (gzip or plain JSON, with and without metadata). Any input must give a
// value or a Status, never a crash, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "importers/sagemaker/sagemaker_system_reader.h"
#include "importers/sagemaker/sagemaker_trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace stepscope::analysis;
  switch (data[0] % 4) {
    case 0: {
      auto file = ParseSageMakerSystemText(bytes, "fuzz/1591160699.algo-1.json");
      (void)file;
      break;
    }
    case 1: {
      auto file = ParsePeventsText(bytes, "fuzz/1591160699000000_151-algo-1_pythontimeline.json");
      if (file.ok()) (void)TraceEventsOverlapping(file->events, 0, INT64_MAX / 2000);
      break;
    }
    case 2: {
      auto file = ParseTfProfilerTrace(bytes, std::nullopt, "fuzz/host.trace.json.gz");
      (void)file;
      break;
    }
    default: {
      auto file = ParseTfProfilerTrace(bytes, TfProfilerMetadata{"node", 1596659864545103, 1596659864854168},
                                       "fuzz/host.trace.json.gz");
      (void)file;
      break;
    }
  }
  return 0;
}
