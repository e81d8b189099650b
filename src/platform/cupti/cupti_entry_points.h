// The CUPTI functions the tracer calls, as a table CuptiLibrary fills with dlsym.
//
// stepscope never links libcupti: the CUDA driver loads our tracer into the job
// (CUDA_INJECTION64_PATH), and the job may use any CUPTI, or none. The table is typed with
// <cupti.h>'s own declarations (the headers of CUDA 13's CUPTI, the version the tracer is built
// against; CMake builds the tracer only when they are found), so a signature that changes fails
// the build. Members are named exactly as the exported symbols.
//
// Callers: CuptiLibrary (fills), CuptiTracer (calls), fake/fake_cupti.cc (implements the same
// functions; it static_asserts them against this table). Only src/platform/cupti includes this.
#pragma once

#include <cupti.h>

namespace stepscope::cupti {

struct CuptiEntryPoints {
  CUptiResult (*cuptiGetVersion)(uint32_t* version) = nullptr;
  CUptiResult (*cuptiGetResultString)(CUptiResult result, const char** text) = nullptr;
  CUptiResult (*cuptiActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc requested,
                                                CUpti_BuffersCallbackCompleteFunc completed) = nullptr;
  CUptiResult (*cuptiActivityEnable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*cuptiActivityDisable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*cuptiActivityFlushAll)(uint32_t flag) = nullptr;
  CUptiResult (*cuptiActivityGetNextRecord)(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record) = nullptr;
  CUptiResult (*cuptiActivityGetNumDroppedRecords)(CUcontext context, uint32_t stream, size_t* dropped) = nullptr;
  CUptiResult (*cuptiGetTimestamp)(uint64_t* timestamp) = nullptr;
  CUptiResult (*cuptiGetCallbackName)(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) = nullptr;
};

}  // namespace stepscope::cupti
