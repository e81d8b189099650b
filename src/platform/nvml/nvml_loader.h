// Loads NVML at run time: dlopen of libnvidia-ml, dlsym of every entry point in
// NvmlEntryPoints (a missing optional one is only noted), nvmlInit_v2, then the driver version
// and each GPU's handle and name.
//
// stepscope is never linked against NVML, so it starts on machines without a driver; there
// Load() fails with kUnavailable and a message saying GPU metrics are off (see
// gpu_capability.h for what the run manifest records). The loaded object owns the library:
// its destructor calls nvmlShutdown and dlclose, so handles and entry points must not be used
// after it is gone.
//
// Callers: the CLI (`stepscope run`) at start-up, which hands the loader to NvmlGpuSource.
// Threading: Load() may run on any thread; the loaded object is immutable, and NVML's entry
// points are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/nvml/nvml_entry_points.h"

namespace stepscope {

// The soname the NVIDIA driver installs; found through the dynamic loader's search path.
inline constexpr char kDefaultNvmlLibrary[] = "libnvidia-ml.so.1";

// One GPU as NVML enumerates it at load time.
struct NvmlGpu {
  unsigned int index = 0;                // NVML index (PCI bus order): the N in gpu/gpuN/...
  nvml::nvmlDevice_t handle = nullptr;   // null when `status` is not ok
  std::string name;                      // e.g. "NVIDIA H100 80GB HBM3"; "unknown" if NVML fails
  Status status;                         // why no handle could be obtained (GPU lost at start)
};

class NvmlLoader {
 public:
  // Opens `library_path` (a soname searched the usual way, or a path), resolves every entry
  // point, initializes NVML and enumerates the GPUs. Errors (all kUnavailable) name the step
  // that failed, keep dlerror()/NVML's code and text, and say what to do next. Zero GPUs is
  // not an error here; DescribeGpuCapability() reports it. A GPU whose handle cannot be
  // obtained is kept in gpus() with a non-ok status.
  static StatusOr<std::unique_ptr<NvmlLoader>> Load(std::string library_path = kDefaultNvmlLibrary);

  // nvmlShutdown (when nvmlInit succeeded) and dlclose.
  ~NvmlLoader();

  NvmlLoader(const NvmlLoader&) = delete;
  NvmlLoader& operator=(const NvmlLoader&) = delete;

  // All non-null. Valid while this object lives.
  const nvml::NvmlEntryPoints& entry_points() const { return entry_points_; }
  const std::string& library_path() const { return library_path_; }
  // e.g. "550.54.15"; "unknown" when nvmlSystemGetDriverVersion fails.
  const std::string& driver_version() const { return driver_version_; }
  // The optional entry points (nvml_entry_points.h) the library lacks, in resolution order;
  // their table slots are null and NvmlGpuSource leaves the metrics they feed out.
  const std::vector<std::string>& missing_optional() const { return missing_optional_; }
  // In NVML index order; gpus()[i].index == i.
  const std::vector<NvmlGpu>& gpus() const { return gpus_; }

 private:
  NvmlLoader(std::string library_path, void* library);

  Status ResolveEntryPoints();
  Status Initialize();
  Status DiscoverGpus();

  std::string library_path_;
  void* library_ = nullptr;  // dlopen handle, owned
  bool initialized_ = false;  // nvmlInit_v2 succeeded, so nvmlShutdown is owed
  nvml::NvmlEntryPoints entry_points_;
  std::string driver_version_;
  std::vector<NvmlGpu> gpus_;
  std::vector<std::string> missing_optional_;
};

}  // namespace stepscope
