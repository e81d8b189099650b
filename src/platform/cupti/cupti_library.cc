#include "platform/cupti/cupti_library.h"

#include <dlfcn.h>

#include <utility>

namespace stepscope::cupti {
namespace {

constexpr char kTracingOff[] = "; GPU tracing is off";

std::string DlErrorText() {
  const char* text = dlerror();
  return text != nullptr ? text : "no error text from the dynamic loader";
}

template <typename Fn>
Status Resolve(void* handle, const std::string& path, const char* symbol, Fn* slot) {
  dlerror();
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    return UnavailableError("CUPTI at " + path + " lacks " + symbol + " (dlsym: " + DlErrorText() +
                            "): it is not a CUDA 13 CUPTI; install the nvidia-cuda-cupti wheel that matches torch" +
                            kTracingOff);
  }
  *slot = reinterpret_cast<Fn>(address);
  return OkStatus();
}

// The CUPTI sonames of the CUDA major the tracer's headers belong to, then the unversioned link.
constexpr const char* kSonames[] = {"libcupti.so.13", "libcupti.so"};

}  // namespace

const char* CuptiNextStep(CUptiResult result) {
  switch (result) {
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_NOT_INITIALIZED:
      return "no NVIDIA GPU or driver is usable in this process (check nvidia-smi)";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "the driver restricts GPU profiling to administrators: set the nvidia module option "
             "NVreg_RestrictProfilingToAdminUsers=0 or run as root";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "another profiler (Nsight Systems, DCGM profiling) holds CUPTI in this process: run without it";
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_API_NOT_IMPLEMENTED:
      return "this driver or GPU does not support CUPTI's activity API: update the NVIDIA driver";
    default:
      return "update the NVIDIA driver or the CUPTI wheel (nvidia-cuda-cupti)";
  }
}

StatusOr<std::unique_ptr<CuptiLibrary>> CuptiLibrary::Load(const std::string& path) {
  void* handle = nullptr;
  std::string loaded;
  std::string last_error;
  if (!path.empty()) {
    dlerror();
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      return UnavailableError("CUPTI not found (dlopen " + path + ": " + DlErrorText() + "): check the path" +
                              kTracingOff);
    }
    loaded = path;
  } else {
    // The copy the process already holds first (RTLD_NOLOAD opens nothing new), then a search.
    for (int flags : {RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD, RTLD_NOW | RTLD_LOCAL}) {
      for (const char* soname : kSonames) {
        dlerror();
        handle = dlopen(soname, flags);
        if (handle != nullptr) {
          loaded = soname;
          break;
        }
        last_error = DlErrorText();
      }
      if (handle != nullptr) break;
    }
    if (handle == nullptr) {
      return UnavailableError("CUPTI not found (dlopen libcupti.so.13: " + last_error +
                              "): the job has not loaded it (torch with CUDA 13 does) and it is not on the loader path; "
                              "install torch's CUDA build or the nvidia-cuda-cupti wheel" + kTracingOff);
    }
  }
  std::unique_ptr<CuptiLibrary> library(new CuptiLibrary(std::move(loaded), handle));
  STEPSCOPE_RETURN_IF_ERROR(library->Resolve());
  return library;
}

Status CuptiLibrary::Resolve() {
  CuptiEntryPoints& e = entry_points_;
  void* h = handle_;
  const std::string& p = path_;
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiGetResultString", &e.cuptiGetResultString));
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiGetVersion", &e.cuptiGetVersion));
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiActivityRegisterCallbacks", &e.cuptiActivityRegisterCallbacks));
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiActivityEnable", &e.cuptiActivityEnable));
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiActivityDisable", &e.cuptiActivityDisable));
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiActivityFlushAll", &e.cuptiActivityFlushAll));
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiActivityGetNextRecord", &e.cuptiActivityGetNextRecord));
  STEPSCOPE_RETURN_IF_ERROR(
      cupti::Resolve(h, p, "cuptiActivityGetNumDroppedRecords", &e.cuptiActivityGetNumDroppedRecords));
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiGetTimestamp", &e.cuptiGetTimestamp));
  STEPSCOPE_RETURN_IF_ERROR(cupti::Resolve(h, p, "cuptiGetCallbackName", &e.cuptiGetCallbackName));
  const CUptiResult result = e.cuptiGetVersion(&version_);
  if (result != CUPTI_SUCCESS) {
    return UnavailableError("CUPTI found at " + path_ + " but " + CallError("cuptiGetVersion", result) + kTracingOff);
  }
  // Activity record layouts change between CUPTI majors; CUDA 13 numbers its API 13xxyy.
  if (version_ / 10000 != CUPTI_API_VERSION / 10000) {
    return UnavailableError("CUPTI at " + path_ + " has API version " + std::to_string(version_) +
                            ", stepscope's tracer reads the records of API " + std::to_string(CUPTI_API_VERSION) +
                            " (CUDA 13): use torch's CUDA 13 build or install nvidia-cuda-cupti 13" + kTracingOff);
  }
  return OkStatus();
}

std::string CuptiLibrary::CallError(const std::string& call, CUptiResult result) const {
  const char* text = nullptr;
  if (entry_points_.cuptiGetResultString == nullptr ||
      entry_points_.cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    text = "no text from CUPTI";
  }
  return call + " failed: " + text + " (" + std::to_string(static_cast<int>(result)) + "): " + CuptiNextStep(result);
}

}  // namespace stepscope::cupti
