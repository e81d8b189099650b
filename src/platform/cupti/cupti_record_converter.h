// Turns CUPTI activity records (CUDA 13's layouts: CUpti_ActivityKernel11, Memcpy6, Memset4,
// Synchronization2, API, Overhead3, Marker2, Context4) into stepscope's GpuActivityRecord.
//
// Pure apart from one fact it learns: which device each CUDA context belongs to (from context,
// kernel, memcpy and memset records), so that synchronization records, which name only a
// context, get their device. Kinds it does not convert (context records included) return false.
//
// Callers: CuptiTracer on CUPTI's completion thread (one converter per tracer, used under its
// lock), and the converter's unit test over synthetic records. Threading: not thread-safe.
#pragma once

#include <cupti.h>

#include <unordered_map>

#include "platform/cupti/gpu_activity_record.h"

namespace stepscope::cupti {

class CuptiRecordConverter {
 public:
  // Fills `out` and returns true for a record stepscope keeps. API records get no name here
  // (the tracer asks CUPTI for the callback's name once per cbid).
  bool Convert(const CUpti_Activity* activity, GpuActivityRecord* out);

 private:
  void LearnContext(uint32_t context, uint32_t device);
  std::unordered_map<uint32_t, uint32_t> device_of_context_;
};

}  // namespace stepscope::cupti
