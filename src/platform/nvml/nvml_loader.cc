#include "platform/nvml/nvml_loader.h"

#include <dlfcn.h>

#include <cstring>
#include <utility>

#include "platform/nvml/nvml_errors.h"

namespace stepscope {
namespace {

// More than any single machine has; a larger count means NVML misbehaves, and it would
// otherwise size an allocation.
constexpr unsigned int kMaxGpus = 1024;

constexpr char kGpuMetricsOff[] = "; GPU metrics are off";

std::string DlErrorText() {
  const char* text = dlerror();
  return text ? text : "no error text from the dynamic loader";
}

// dlsym into a typed function pointer. POSIX guarantees a function pointer survives the
// round trip through void*.
template <typename Fn>
Status Resolve(void* library, const std::string& library_path, const char* symbol, Fn* slot) {
  dlerror();  // clear any stale error so the text below belongs to this lookup
  void* address = dlsym(library, symbol);
  if (address == nullptr) {
    return UnavailableError("NVML at " + library_path + " lacks " + symbol + " (dlsym: " +
                            DlErrorText() +
                            "): the library is too old or not NVIDIA's; update the NVIDIA "
                            "driver" + kGpuMetricsOff);
  }
  *slot = reinterpret_cast<Fn>(address);
  return OkStatus();
}

// dlsym of an optional entry point: a missing one leaves the slot null and is named in `missing`.
template <typename Fn>
void ResolveOptional(void* library, const char* symbol, Fn* slot, std::vector<std::string>& missing) {
  dlerror();
  void* address = dlsym(library, symbol);
  *slot = reinterpret_cast<Fn>(address);
  if (address == nullptr) missing.emplace_back(symbol);
}

// NVML writes a NUL-terminated string into `buffer`; never trust that it did.
std::string FromBuffer(const char* buffer, size_t size) {
  return std::string(buffer, strnlen(buffer, size));
}

}  // namespace

StatusOr<std::unique_ptr<NvmlLoader>> NvmlLoader::Load(std::string library_path) {
  dlerror();
  void* library = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::string message = "NVML not found (dlopen " + library_path + ": " + DlErrorText() + "): ";
    if (library_path.find('/') == std::string::npos) {
      message += "no NVIDIA driver is installed on this machine, or its libraries are not on "
                 "the loader path (see `ldconfig -p | grep nvidia-ml`)";
    } else {
      message += "check the path";
    }
    return UnavailableError(message + kGpuMetricsOff);
  }
  // From here on the destructor undoes whatever succeeded (dlclose, nvmlShutdown).
  std::unique_ptr<NvmlLoader> loader(new NvmlLoader(std::move(library_path), library));
  STEPSCOPE_RETURN_IF_ERROR(loader->ResolveEntryPoints());
  STEPSCOPE_RETURN_IF_ERROR(loader->Initialize());
  STEPSCOPE_RETURN_IF_ERROR(loader->DiscoverGpus());
  return loader;
}

NvmlLoader::NvmlLoader(std::string library_path, void* library)
    : library_path_(std::move(library_path)), library_(library) {}

NvmlLoader::~NvmlLoader() {
  // Nothing useful can be done with a failing nvmlShutdown at teardown.
  if (initialized_) (void)entry_points_.nvmlShutdown();
  if (library_ != nullptr) dlclose(library_);
}

Status NvmlLoader::ResolveEntryPoints() {
  nvml::NvmlEntryPoints& e = entry_points_;
  const std::string& p = library_path_;
  // nvmlErrorString first, so every later failure can carry NVML's own text.
  STEPSCOPE_RETURN_IF_ERROR(Resolve(library_, p, "nvmlErrorString", &e.nvmlErrorString));
  STEPSCOPE_RETURN_IF_ERROR(Resolve(library_, p, "nvmlInit_v2", &e.nvmlInit_v2));
  STEPSCOPE_RETURN_IF_ERROR(Resolve(library_, p, "nvmlShutdown", &e.nvmlShutdown));
  STEPSCOPE_RETURN_IF_ERROR(
      Resolve(library_, p, "nvmlSystemGetDriverVersion", &e.nvmlSystemGetDriverVersion));
  STEPSCOPE_RETURN_IF_ERROR(
      Resolve(library_, p, "nvmlDeviceGetCount_v2", &e.nvmlDeviceGetCount_v2));
  STEPSCOPE_RETURN_IF_ERROR(
      Resolve(library_, p, "nvmlDeviceGetHandleByIndex_v2", &e.nvmlDeviceGetHandleByIndex_v2));
  STEPSCOPE_RETURN_IF_ERROR(Resolve(library_, p, "nvmlDeviceGetName", &e.nvmlDeviceGetName));
  STEPSCOPE_RETURN_IF_ERROR(
      Resolve(library_, p, "nvmlDeviceGetUtilizationRates", &e.nvmlDeviceGetUtilizationRates));
  STEPSCOPE_RETURN_IF_ERROR(
      Resolve(library_, p, "nvmlDeviceGetMemoryInfo", &e.nvmlDeviceGetMemoryInfo));
  STEPSCOPE_RETURN_IF_ERROR(
      Resolve(library_, p, "nvmlDeviceGetPowerUsage", &e.nvmlDeviceGetPowerUsage));
  STEPSCOPE_RETURN_IF_ERROR(
      Resolve(library_, p, "nvmlDeviceGetTemperature", &e.nvmlDeviceGetTemperature));
  STEPSCOPE_RETURN_IF_ERROR(
      Resolve(library_, p, "nvmlDeviceGetClockInfo", &e.nvmlDeviceGetClockInfo));

  std::vector<std::string>& m = missing_optional_;
  ResolveOptional(library_, "nvmlDeviceGetComputeRunningProcesses_v3", &e.nvmlDeviceGetComputeRunningProcesses_v3, m);
  ResolveOptional(library_, "nvmlDeviceGetComputeRunningProcesses_v2", &e.nvmlDeviceGetComputeRunningProcesses_v2, m);
  ResolveOptional(library_, "nvmlDeviceGetProcessUtilization", &e.nvmlDeviceGetProcessUtilization, m);
  ResolveOptional(library_, "nvmlDeviceGetPcieThroughput", &e.nvmlDeviceGetPcieThroughput, m);
  ResolveOptional(library_, "nvmlDeviceGetCurrentClocksEventReasons", &e.nvmlDeviceGetCurrentClocksEventReasons, m);
  ResolveOptional(library_, "nvmlDeviceGetCurrentClocksThrottleReasons", &e.nvmlDeviceGetCurrentClocksThrottleReasons,
                  m);
  ResolveOptional(library_, "nvmlDeviceGetTotalEccErrors", &e.nvmlDeviceGetTotalEccErrors, m);
  ResolveOptional(library_, "nvmlEventSetCreate", &e.nvmlEventSetCreate, m);
  ResolveOptional(library_, "nvmlDeviceRegisterEvents", &e.nvmlDeviceRegisterEvents, m);
  ResolveOptional(library_, "nvmlEventSetWait_v2", &e.nvmlEventSetWait_v2, m);
  ResolveOptional(library_, "nvmlEventSetFree", &e.nvmlEventSetFree, m);
  ResolveOptional(library_, "nvmlGpmQueryDeviceSupport", &e.nvmlGpmQueryDeviceSupport, m);
  ResolveOptional(library_, "nvmlGpmSampleAlloc", &e.nvmlGpmSampleAlloc, m);
  ResolveOptional(library_, "nvmlGpmSampleFree", &e.nvmlGpmSampleFree, m);
  ResolveOptional(library_, "nvmlGpmSampleGet", &e.nvmlGpmSampleGet, m);
  ResolveOptional(library_, "nvmlGpmMetricsGet", &e.nvmlGpmMetricsGet, m);
  return OkStatus();
}

Status NvmlLoader::Initialize() {
  nvml::nvmlReturn_t rc = entry_points_.nvmlInit_v2();
  if (rc != nvml::kSuccess) {
    return UnavailableError("NVML found at " + library_path_ + " but " +
                            FormatNvmlCallError(entry_points_, "nvmlInit_v2", rc) + ": " +
                            std::string(NvmlErrorNextStep(rc)) + kGpuMetricsOff);
  }
  initialized_ = true;

  char version[nvml::kSystemDriverVersionBufferSize] = {};
  rc = entry_points_.nvmlSystemGetDriverVersion(version, sizeof(version));
  // The version only labels the run; a failure here is not worth turning GPU metrics off.
  driver_version_ = rc == nvml::kSuccess ? FromBuffer(version, sizeof(version)) : "unknown";
  return OkStatus();
}

Status NvmlLoader::DiscoverGpus() {
  unsigned int count = 0;
  nvml::nvmlReturn_t rc = entry_points_.nvmlDeviceGetCount_v2(&count);
  if (rc != nvml::kSuccess) {
    return UnavailableError(FormatNvmlCallError(entry_points_, "nvmlDeviceGetCount_v2", rc) + ": " +
                            std::string(NvmlErrorNextStep(rc)) + kGpuMetricsOff);
  }
  if (count > kMaxGpus) {
    return UnavailableError("nvmlDeviceGetCount_v2 reported " + std::to_string(count) +
                            " GPUs, more than the " + std::to_string(kMaxGpus) +
                            " stepscope accepts; check `nvidia-smi -L`" + kGpuMetricsOff);
  }
  gpus_.resize(count);
  for (unsigned int i = 0; i < count; ++i) {
    NvmlGpu& gpu = gpus_[i];
    gpu.index = i;
    gpu.name = "unknown";
    const std::string subject = "(gpu" + std::to_string(i) + ")";
    rc = entry_points_.nvmlDeviceGetHandleByIndex_v2(i, &gpu.handle);
    if (rc != nvml::kSuccess || gpu.handle == nullptr) {
      gpu.handle = nullptr;
      if (rc == nvml::kSuccess) rc = nvml::kErrorUnknown;  // success without a handle
      gpu.status = UnavailableError(
          FormatNvmlCallError(entry_points_, "nvmlDeviceGetHandleByIndex_v2" + subject, rc) +
          ": " + std::string(NvmlErrorNextStep(rc)) + "; gpu" + std::to_string(i) +
          " has no metrics in this run");
      continue;
    }
    char name[nvml::kDeviceNameBufferSize] = {};
    // A missing name only makes labels vaguer; the GPU is still sampled.
    if (entry_points_.nvmlDeviceGetName(gpu.handle, name, sizeof(name)) == nvml::kSuccess) {
      gpu.name = FromBuffer(name, sizeof(name));
    }
  }
  return OkStatus();
}

}  // namespace stepscope
