// Finds out whether CUPTI (NVIDIA's profiling library, used later for GPU tracing) can be
// loaded here, without linking it and without touching a GPU. Callers: `stepscope run`, for
// the capabilities recorded in the manifest. Threading: any thread.
#pragma once

#include <string>

namespace stepscope {

struct CuptiCapability {
  bool library_found = false;
  std::string library;  // the soname or path that loaded
  unsigned version = 0;  // cuptiGetVersion(), e.g. 130001 for CUDA 13.0.1
  std::string reason;    // why it is not usable, when it is not
};

// Tries the usual sonames, then <cuda_root>/lib64/libcupti.so*.
CuptiCapability ProbeCupti(const std::string& cuda_root = "/usr/local/cuda");

}  // namespace stepscope
