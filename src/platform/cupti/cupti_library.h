// Loads CUPTI at run time for the tracer: dlopen, then dlsym of every entry point in
// CuptiEntryPoints, then a version check against the headers the tracer was built with.
//
// Which library: an explicit path when given (tests: the fake); otherwise a CUPTI the process
// already loaded (torch's libtorch_cpu.so needs libcupti.so.13, from the nvidia-cuda-cupti wheel
// beside it, so in a PyTorch job Kineto and this tracer share one CUPTI — two copies would fight
// over the same driver hooks), then the loader's search path. The handle is never dlclose'd:
// CUPTI may still call into the tracer while the process exits.
//
// Callers: CuptiTracer. Threading: Load() on any thread; the result is immutable.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "platform/cupti/cupti_entry_points.h"

namespace stepscope::cupti {

class CuptiLibrary {
 public:
  // `path` empty: the already-loaded or searchable CUPTI (above). Errors are kUnavailable, name
  // the step that failed and what to do, and end with "; GPU tracing is off".
  static StatusOr<std::unique_ptr<CuptiLibrary>> Load(const std::string& path = "");

  const CuptiEntryPoints& entry_points() const { return entry_points_; }
  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }  // cuptiGetVersion(), e.g. 130202

  // "cuptiActivityEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35, <CUPTI's text>): <next
  // step>": a failed call, its code, CUPTI's own text and what to do next.
  std::string CallError(const std::string& call, CUptiResult result) const;

 private:
  CuptiLibrary(std::string path, void* handle) : path_(std::move(path)), handle_(handle) {}
  Status Resolve();

  std::string path_;
  void* handle_;
  uint32_t version_ = 0;
  CuptiEntryPoints entry_points_;
};

// What to do about a failing CUPTI call, by code: CUPTI_ERROR_UNKNOWN (999, what CUPTI answers
// without a driver or GPU) says "no GPU", insufficient privileges names the driver setting, a
// second subscriber names the other profiler.
const char* CuptiNextStep(CUptiResult result);

}  // namespace stepscope::cupti
