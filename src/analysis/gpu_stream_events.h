// How the stepscope loader reads a GPU stream (gpu-<pid>-<rand>, written by src/gpu_tracer;
// docs/formats.md "GPU streams"): each decoded event becomes what the Kineto importer makes of
// the same CUPTI record, so gpu_activity, kernel precision, the timeline, the Chrome export and
// the report read both alike:
// - device work (kernels, memcpy, memset, sync): device = the GPU, tid = the CUDA stream,
//   category "kernel" / "gpu_memcpy" / "gpu_memset" / "cuda_sync", phase "gpu_functions-dev:<n>",
//   args "device", "stream", "correlation", "grid" and "block" ("[x, y, z]" as Kineto writes
//   them), "registers per thread", "shared memory", "bytes";
// - host side: runtime and driver calls on their thread, category "cuda_runtime" / "cuda_driver"
//   (phase "cuda_runtime"), args "correlation", "cbid"; CUPTI's overhead ("overhead"), NVTX
//   ranges and marks ("nvtx"), and the tracer's state changes (phase "stepscope");
// - launch -> device work: an "ac2g" flow per device operation whose launch (same process and
//   correlation) was read in the same read (GpuFlowLinker).
// Version 2 streams hold device work and API calls as rows of GPU activity frames
// (store/gpu_activity_frame.h): the run decoder turns each row into the span and args the
// version-1 records (begin, end, one argument each) decoded to (GpuRowArgs), so everything above
// reads both versions alike.
// Callers: stepscope_loader.cc, run_decoder.cc. Threading: the loader's.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/model.h"
#include "analysis/run_decoder.h"
#include "store/gpu_activity_frame.h"

namespace stepscope::analysis {

// Whether a stream was written by the GPU tracer (its meta frame's kind).
bool IsGpuStream(const StreamFacts& stream);

struct GpuStreamArg {
  std::string key;
  int64_t value = 0;
  std::string text;  // a string arg when not empty
};

enum class GpuFlowRole : uint8_t { kNone, kLaunch, kDeviceWork };

struct GpuStreamEvent {
  int32_t device = -1;  // -1: host side (or a sync whose device CUPTI did not say)
  int64_t tid = 0;      // the CUDA stream for device work, the thread otherwise
  std::string_view category;
  std::string phase;
  std::vector<GpuStreamArg> args;
  int64_t correlation = 0;
  GpuFlowRole role = GpuFlowRole::kNone;
  bool tracing_off = false;  // a GpuTracing:off instant
  std::string reason;        // its reason
};

// The argument keys of GPU rows, as the caller's name ids.
struct GpuRowArgKeys {
  uint32_t correlation = 0, grid[3] = {}, block[3] = {}, registers = 0, shared_memory = 0, bytes = 0, cbid = 0,
           device = 0, stream = 0;
};

// Appends the args the version-1 encoding recorded for `row`, in its order: kernels
// "correlation", "grid_x|y|z" and "block_x|y|z" (y and z only when not 1), "registers per
// thread", "shared memory" (all from `config`; none when it is nullptr: declared in a lost
// frame); memcpy and memset "correlation", "bytes"; sync "correlation" when not 0; API calls
// "correlation", "cbid"; device work "device" / "stream" when too large for its track's field.
void GpuRowArgs(const store::GpuActivityRow& row, const store::GpuLaunchConfig* config, const GpuRowArgKeys& keys,
                std::vector<RecordedArg>& args);

// `name` is the event's name; `name_of` turns an arg's string id into its text.
GpuStreamEvent DecodeGpuStreamEvent(uint32_t track, std::string_view name, std::span<const RecordedArg> args,
                                    const std::function<std::string_view(uint32_t)>& name_of);

// Pairs launches with their device work by (node, process, correlation) within one read and adds
// the "ac2g" flows. A pair whose halves arrive in different reads of a live run stays unlinked.
class GpuFlowLinker {
 public:
  void Add(uint32_t node, int32_t pid, int64_t correlation, GpuFlowRole role, uint32_t event_index);
  // Adds the flows and forgets this read's events.
  void Link(ModelBuilder& builder);

 private:
  struct Key {
    uint32_t node;
    int32_t pid;
    int64_t correlation;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<int64_t>()(key.correlation) ^ (std::hash<int64_t>()((int64_t{key.node} << 32) | uint32_t(key.pid)) << 1);
    }
  };
  std::unordered_map<Key, uint32_t, KeyHash> launches_;
  std::vector<std::pair<Key, uint32_t>> device_work_;
};

}  // namespace stepscope::analysis
