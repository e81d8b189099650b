#include "analysis/gpu_stream_events.h"

#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "store/gpu_tracks.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kDeviceCategories[] = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"};
constexpr std::string_view kHostCategories[] = {"cuda_runtime", "cuda_driver", "overhead", "nvtx", ""};
constexpr std::string_view kHostPhases[] = {"cuda_runtime", "cuda_runtime", "overhead", "nvtx", "stepscope"};

// "[x, y, z]", as Kineto writes grid and block (the importer keeps them as that text).
std::string Dim3(const int64_t (&xyz)[3]) {
  return "[" + std::to_string(xyz[0]) + ", " + std::to_string(xyz[1]) + ", " + std::to_string(xyz[2]) + "]";
}

}  // namespace

bool IsGpuStream(const StreamFacts& stream) {
  if (stream.is_system || stream.meta_json.empty()) return false;
  const nlohmann::json meta = nlohmann::json::parse(stream.meta_json, nullptr, /*allow_exceptions=*/false);
  return JsonString(meta, "kind") == store::kGpuStreamKind;
}

void GpuRowArgs(const store::GpuActivityRow& row, const store::GpuLaunchConfig* config, const GpuRowArgKeys& keys,
                std::vector<RecordedArg>& args) {
  auto arg = [&args](uint32_t key, int64_t value) {
    RecordedArg out;
    out.type = RecordedArg::Type::kInt;
    out.key = key;
    out.int_value = value;
    args.push_back(out);
  };
  switch (row.kind) {
    case store::GpuRowKind::kKernel:
      arg(keys.correlation, row.correlation);
      if (config != nullptr) {
        for (int d = 0; d < 3; ++d) {
          if (d == 0 || config->grid[d] != 1) arg(keys.grid[d], config->grid[d]);
        }
        for (int d = 0; d < 3; ++d) {
          if (d == 0 || config->block[d] != 1) arg(keys.block[d], config->block[d]);
        }
        arg(keys.registers, config->registers_per_thread);
        arg(keys.shared_memory, config->shared_memory_bytes);
      }
      break;
    case store::GpuRowKind::kMemcpy:
    case store::GpuRowKind::kMemset:
      arg(keys.correlation, row.correlation);
      arg(keys.bytes, static_cast<int64_t>(row.bytes));
      break;
    case store::GpuRowKind::kSync:
      if (row.correlation != 0) arg(keys.correlation, row.correlation);
      break;
    case store::GpuRowKind::kRuntimeApi:
    case store::GpuRowKind::kDriverApi:
      arg(keys.correlation, row.correlation);
      arg(keys.cbid, row.callback_id);
      break;
    case store::GpuRowKind::kOverhead:
      break;
  }
  if (store::IsGpuDeviceRow(row.kind)) {
    if (row.device >= store::kGpuTrackDeviceUnknown && row.device != store::kGpuRowNoValue) arg(keys.device, row.device);
    if (row.stream >= store::kGpuTrackStreamUnknown && row.stream != store::kGpuRowNoValue) arg(keys.stream, row.stream);
  }
}

GpuStreamEvent DecodeGpuStreamEvent(uint32_t track, std::string_view name, std::span<const RecordedArg> args,
                                    const std::function<std::string_view(uint32_t)>& name_of) {
  GpuStreamEvent out;
  const bool device_work = store::IsGpuDeviceTrack(track);
  const uint8_t kind = store::GpuTrackKind(track);
  int64_t device = -1, stream = -1;
  int64_t grid[3] = {0, 1, 1}, block[3] = {0, 1, 1};
  bool has_grid = false, has_block = false;
  for (const RecordedArg& arg : args) {
    const std::string_view key = name_of(arg.key);
    if (arg.type == RecordedArg::Type::kString) {
      if (key == "reason") out.reason = std::string(name_of(arg.string_value));
      continue;
    }
    const int64_t value = arg.type == RecordedArg::Type::kInt ? arg.int_value : static_cast<int64_t>(arg.double_value);
    if (key == "device") device = value;
    else if (key == "stream") stream = value;
    else if (key.starts_with("grid_") && key.size() == 6 && key[5] >= 'x' && key[5] <= 'z') grid[key[5] - 'x'] = value, has_grid = true;
    else if (key.starts_with("block_") && key.size() == 7 && key[6] >= 'x' && key[6] <= 'z') block[key[6] - 'x'] = value, has_block = true;
    else {
      if (key == "correlation") out.correlation = value;
      out.args.push_back({std::string(key), value, ""});
    }
  }
  if (device_work) {
    if (device < 0 && store::GpuTrackDevice(track) != store::kGpuTrackDeviceUnknown) device = store::GpuTrackDevice(track);
    if (stream < 0 && store::GpuTrackStream(track) != store::kGpuTrackStreamUnknown) stream = store::GpuTrackStream(track);
    out.category = kind < std::size(kDeviceCategories) ? kDeviceCategories[kind] : "kernel";
    out.device = device >= 0 && device <= INT32_MAX ? static_cast<int32_t>(device) : -1;
    out.tid = stream;
    out.phase = out.device >= 0 ? "gpu_functions-dev:" + std::to_string(out.device) : std::string(out.category);
    if (out.device >= 0) out.args.push_back({"device", out.device, ""});
    out.args.push_back({"stream", stream, ""});
    if (has_grid) out.args.push_back({"grid", 0, Dim3(grid)});
    if (has_block) out.args.push_back({"block", 0, Dim3(block)});
    out.role = out.category != "cuda_sync" ? GpuFlowRole::kDeviceWork : GpuFlowRole::kNone;
    return out;
  }
  const size_t host_kind = kind < std::size(kHostCategories) ? kind : std::size(kHostCategories) - 1;
  out.category = kHostCategories[host_kind];
  out.phase = kHostPhases[host_kind];
  out.tid = store::GpuTrackThread(track);
  out.role = host_kind <= 1 ? GpuFlowRole::kLaunch : GpuFlowRole::kNone;
  if (static_cast<store::GpuHostTrack>(host_kind) == store::GpuHostTrack::kTracer) {
    out.tracing_off = name == "GpuTracing:off";
    if (!out.reason.empty()) out.args.push_back({"reason", 0, out.reason});
  }
  return out;
}

void GpuFlowLinker::Add(uint32_t node, int32_t pid, int64_t correlation, GpuFlowRole role, uint32_t event_index) {
  const Key key{node, pid, correlation};
  if (role == GpuFlowRole::kLaunch) launches_.emplace(key, event_index);
  else if (role == GpuFlowRole::kDeviceWork) device_work_.emplace_back(key, event_index);
}

void GpuFlowLinker::Link(ModelBuilder& builder) {
  if (!device_work_.empty() && !launches_.empty()) {
    const StringId ac2g = builder.Intern("ac2g");
    for (const auto& [key, index] : device_work_) {
      const auto launch = launches_.find(key);
      if (launch != launches_.end()) builder.AddFlow(launch->second, index, ac2g, key.correlation);
    }
  }
  launches_.clear();
  device_work_.clear();
}

}  // namespace stepscope::analysis
