#include "platform/cupti/cupti_probe.h"

#include <dlfcn.h>

namespace stepscope {

CuptiCapability ProbeCupti(const std::string& cuda_root) {
  CuptiCapability capability;
  const std::string candidates[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12",
                                    cuda_root + "/lib64/libcupti.so", cuda_root + "/extras/CUPTI/lib64/libcupti.so"};
  std::string last_error;
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      last_error = error != nullptr ? error : "unknown dlopen error";
      continue;
    }
    capability.library_found = true;
    capability.library = candidate;
    // cuptiGetVersion needs no device: CUptiResult cuptiGetVersion(uint32_t*).
    using GetVersion = int (*)(unsigned*);
    auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "cuptiGetVersion"));
    if (get_version == nullptr || get_version(&capability.version) != 0) {
      capability.reason = "cuptiGetVersion failed; GPU tracing is off";
    }
    // Deliberately not dlclose'd: unloading CUDA libraries at run time is fragile and this
    // probe runs once.
    return capability;
  }
  capability.reason = "CUPTI not found (" + last_error + "); install the CUDA toolkit's CUPTI for GPU tracing";
  return capability;
}

}  // namespace stepscope
