// A fake libcupti for tests: implements the CUPTI entry points stepscope's tracer resolves
// (cupti_entry_points.h) and, on the test's command (fake_cupti_control.h), asks the
// registered user for buffers, fills them with real CUDA 13 activity records and completes them
// through the user's callbacks, the way CUPTI's worker thread does. Tests load it by path
// through the real CuptiLibrary and CuptiTracer, so dlopen, dlsym, the version check,
// registration, buffer handling and conversion all run as they would against NVIDIA's library.
//
// Threading: every entry point takes one mutex, except that callbacks are invoked without it
// (CUPTI's user may call back into CUPTI from them, as the tracer does).
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "platform/cupti/cupti_entry_points.h"
#include "platform/cupti/fake/fake_cupti_control.h"

#define STEPSCOPE_FAKE_CUPTI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct PendingBuffer {
  uint8_t* buffer = nullptr;
  size_t size = 0;
  size_t valid = 0;
};

struct State {
  std::mutex mutex;
  std::map<std::string, CUptiResult> results;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  int owner = 0;
  std::map<int, bool> enabled;  // by CUPTI kind
  std::map<int, PendingBuffer> pending;
  int next_handle = 0;
  size_t dropped_for_next_completion = 0;
  size_t dropped_now = 0;  // what cuptiActivityGetNumDroppedRecords reports during a completion
  uint64_t timestamp = 0;
};

State& state() {
  static State* s = new State;
  return *s;
}

CUptiResult ResultOf(const char* function) {
  auto it = state().results.find(function);
  return it == state().results.end() ? CUPTI_SUCCESS : it->second;
}

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(CUpti_ActivityKernel11);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext4);
    default: return 0;
  }
}

constexpr size_t Aligned(size_t bytes) { return (bytes + 7) & ~size_t{7}; }

// The fields every record of device work (kernel, memcpy, memset) has under the same names.
template <typename Record>
void FillDeviceWork(const FakeCuptiActivity& a, CUpti_ActivityKind kind, Record& r) {
  r.kind = kind;
  r.start = a.start;
  r.end = a.end;
  r.deviceId = a.device;
  r.contextId = a.context;
  r.streamId = a.stream;
  r.correlationId = a.correlation;
}

// Writes one activity as CUPTI would at `out`; returns the bytes used (0: unknown kind).
size_t Build(const FakeCuptiActivity& a, uint8_t* out) {
  switch (a.kind) {
    case FAKE_CUPTI_KERNEL: {
      CUpti_ActivityKernel11 r{};
      FillDeviceWork(a, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, r);
      r.gridX = a.grid[0];
      r.gridY = a.grid[1];
      r.gridZ = a.grid[2];
      r.blockX = a.block[0];
      r.blockY = a.block[1];
      r.blockZ = a.block[2];
      r.staticSharedMemory = a.static_shared;
      r.dynamicSharedMemory = a.dynamic_shared;
      r.registersPerThread = a.registers;
      r.name = a.name;
      std::memcpy(out, &r, sizeof r);
      return Aligned(sizeof r);
    }
    case FAKE_CUPTI_MEMCPY: {
      CUpti_ActivityMemcpy6 r{};
      FillDeviceWork(a, CUPTI_ACTIVITY_KIND_MEMCPY, r);
      r.bytes = a.bytes;
      r.copyKind = a.copy_kind;
      r.srcKind = a.src_kind;
      r.dstKind = a.dst_kind;
      std::memcpy(out, &r, sizeof r);
      return Aligned(sizeof r);
    }
    case FAKE_CUPTI_MEMSET: {
      CUpti_ActivityMemset4 r{};
      FillDeviceWork(a, CUPTI_ACTIVITY_KIND_MEMSET, r);
      r.bytes = a.bytes;
      r.memoryKind = a.src_kind;
      std::memcpy(out, &r, sizeof r);
      return Aligned(sizeof r);
    }
    case FAKE_CUPTI_SYNC: {
      CUpti_ActivitySynchronization2 r{};
      r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
      r.type = static_cast<CUpti_ActivitySynchronizationType>(a.sync_type);
      r.start = a.start;
      r.end = a.end;
      r.contextId = a.context;
      r.streamId = a.stream;
      r.correlationId = a.correlation;
      std::memcpy(out, &r, sizeof r);
      return Aligned(sizeof r);
    }
    case FAKE_CUPTI_RUNTIME:
    case FAKE_CUPTI_DRIVER: {
      CUpti_ActivityAPI r{};
      r.kind = a.kind == FAKE_CUPTI_RUNTIME ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
      r.cbid = a.callback_id;
      r.start = a.start;
      r.end = a.end;
      r.threadId = a.thread_id;
      r.correlationId = a.correlation;
      std::memcpy(out, &r, sizeof r);
      return Aligned(sizeof r);
    }
    case FAKE_CUPTI_OVERHEAD: {
      CUpti_ActivityOverhead3 r{};
      r.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
      r.overheadKind = static_cast<CUpti_ActivityOverheadKind>(a.overhead_kind);
      r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
      r.objectId.pt.threadId = a.thread_id;
      r.start = a.start;
      r.end = a.end;
      std::memcpy(out, &r, sizeof r);
      return Aligned(sizeof r);
    }
    case FAKE_CUPTI_MARKER: {
      CUpti_ActivityMarker2 r{};
      r.kind = CUPTI_ACTIVITY_KIND_MARKER;
      r.flags = static_cast<CUpti_ActivityFlag>(a.marker_flags);
      r.timestamp = a.start;
      r.id = a.marker_id;
      r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
      r.objectId.pt.threadId = a.thread_id;
      r.name = a.name;
      std::memcpy(out, &r, sizeof r);
      return Aligned(sizeof r);
    }
    case FAKE_CUPTI_CONTEXT: {
      CUpti_ActivityContext4 r{};
      r.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
      r.contextId = a.context;
      r.deviceId = a.device;
      std::memcpy(out, &r, sizeof r);
      return Aligned(sizeof r);
    }
    default:
      return 0;
  }
}

int CuptiKindOf(int fake_kind) {
  switch (fake_kind) {
    case FAKE_CUPTI_KERNEL: return CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    case FAKE_CUPTI_MEMCPY: return CUPTI_ACTIVITY_KIND_MEMCPY;
    case FAKE_CUPTI_MEMSET: return CUPTI_ACTIVITY_KIND_MEMSET;
    case FAKE_CUPTI_SYNC: return CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    case FAKE_CUPTI_RUNTIME: return CUPTI_ACTIVITY_KIND_RUNTIME;
    case FAKE_CUPTI_DRIVER: return CUPTI_ACTIVITY_KIND_DRIVER;
    case FAKE_CUPTI_OVERHEAD: return CUPTI_ACTIVITY_KIND_OVERHEAD;
    case FAKE_CUPTI_MARKER: return CUPTI_ACTIVITY_KIND_MARKER;
    case FAKE_CUPTI_CONTEXT: return CUPTI_ACTIVITY_KIND_CONTEXT;
    default: return -1;
  }
}

// Names for the callbacks the tests use, as CUPTI spells them (with the API version).
const char* CallbackName(CUpti_CallbackDomain domain, uint32_t cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020: return "cudaGetDevice_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: return "cudaMemcpyAsync_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020: return "cudaMemsetAsync_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020: return "cudaStreamSynchronize_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: return "cudaLaunchKernel_v7000";
      default: return nullptr;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent: return "cuCtxGetCurrent";
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: return "cuLaunchKernel";
      default: return nullptr;
    }
  }
  return nullptr;
}

// Kineto's stand-in for fake_cupti_take_over: its own buffers, which it frees itself.
void CUPTIAPI OtherUserRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, 64 * 1024));
  *size = 64 * 1024;
  *max_records = 0;
}
void CUPTIAPI OtherUserCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

}  // namespace

// The CUPTI API version of the headers the fake was built with: what the tracer expects.
STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
  std::lock_guard lock(state().mutex);
  *version = CUPTI_API_VERSION;
  return ResultOf("cuptiGetVersion");
}

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** text) {
  switch (result) {
    case CUPTI_SUCCESS: *text = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *text = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *text = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *text = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_UNKNOWN: *text = "CUPTI_ERROR_UNKNOWN"; break;
    default: *text = "CUPTI_ERROR_(fake)"; break;
  }
  return CUPTI_SUCCESS;
}

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                                      CUpti_BuffersCallbackCompleteFunc completed) {
  std::lock_guard lock(state().mutex);
  const CUptiResult result = ResultOf("cuptiActivityRegisterCallbacks");
  if (result != CUPTI_SUCCESS) return result;
  if (requested == nullptr || completed == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  state().requested = requested;
  state().completed = completed;
  state().owner = requested == OtherUserRequested ? 2 : 1;
  return CUPTI_SUCCESS;
}

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  std::lock_guard lock(state().mutex);
  const CUptiResult result = ResultOf("cuptiActivityEnable");
  if (result != CUPTI_SUCCESS) return result;
  state().enabled[kind] = true;
  return CUPTI_SUCCESS;
}

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  std::lock_guard lock(state().mutex);
  state().enabled[kind] = false;
  return ResultOf("cuptiActivityDisable");
}

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_bytes,
                                                                  CUpti_Activity** record) {
  size_t offset = 0;
  if (*record != nullptr) {
    const size_t size = RecordSize((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + Aligned(size);
  }
  if (offset >= valid_bytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  std::lock_guard lock(state().mutex);
  *dropped = state().dropped_now;
  state().dropped_now = 0;
  return ResultOf("cuptiActivityGetNumDroppedRecords");
}

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  std::lock_guard lock(state().mutex);
  if (state().timestamp != 0) {
    *timestamp = state().timestamp;
  } else {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    *timestamp = static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
  }
  return ResultOf("cuptiGetTimestamp");
}

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                                            const char** name) {
  *name = CallbackName(domain, cbid);
  return *name != nullptr ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

STEPSCOPE_FAKE_CUPTI_EXPORT void fake_cupti_complete_buffer(int handle, size_t dropped);

STEPSCOPE_FAKE_CUPTI_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  std::vector<int> handles;
  {
    std::lock_guard lock(state().mutex);
    const CUptiResult result = ResultOf("cuptiActivityFlushAll");
    if (result != CUPTI_SUCCESS) return result;
    // A forced flush completes the buffers CUPTI is still filling; an ordinary one only full
    // ones, and the fake's buffers are never full.
    if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == 0) return CUPTI_SUCCESS;
    for (const auto& [handle, buffer] : state().pending) handles.push_back(handle);
  }
  for (int handle : handles) fake_cupti_complete_buffer(handle, 0);
  return CUPTI_SUCCESS;
}

// Static assertions that the fake implements the table's signatures exactly.
namespace {
[[maybe_unused]] constexpr stepscope::cupti::CuptiEntryPoints kSignatures = {
    cuptiGetVersion, cuptiGetResultString, cuptiActivityRegisterCallbacks, cuptiActivityEnable,
    cuptiActivityDisable, cuptiActivityFlushAll, cuptiActivityGetNextRecord, cuptiActivityGetNumDroppedRecords,
    cuptiGetTimestamp, cuptiGetCallbackName};
}  // namespace

STEPSCOPE_FAKE_CUPTI_EXPORT void fake_cupti_reset(void) {
  std::lock_guard lock(state().mutex);
  state().pending.clear();  // their memory is the user's that gave them
  state().results.clear();
  state().requested = nullptr;
  state().completed = nullptr;
  state().owner = 0;
  state().enabled.clear();
  state().dropped_for_next_completion = 0;
  state().dropped_now = 0;
  state().timestamp = 0;
}

STEPSCOPE_FAKE_CUPTI_EXPORT void fake_cupti_set_result(const char* function, int code) {
  std::lock_guard lock(state().mutex);
  if (code == 0) {
    state().results.erase(function);
  } else {
    state().results[function] = static_cast<CUptiResult>(code);
  }
}

STEPSCOPE_FAKE_CUPTI_EXPORT int fake_cupti_enabled(int kind) {
  std::lock_guard lock(state().mutex);
  auto it = state().enabled.find(CuptiKindOf(kind));
  return it != state().enabled.end() && it->second ? 1 : 0;
}

STEPSCOPE_FAKE_CUPTI_EXPORT int fake_cupti_callbacks_owner(void) {
  std::lock_guard lock(state().mutex);
  return state().owner;
}

STEPSCOPE_FAKE_CUPTI_EXPORT int fake_cupti_fill_buffer(const FakeCuptiActivity* activities, size_t count) {
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  {
    std::lock_guard lock(state().mutex);
    requested = state().requested;
  }
  if (requested == nullptr) return -1;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  requested(&buffer, &size, &max_records);  // without the lock, as CUPTI's own thread would
  std::lock_guard lock(state().mutex);
  if (buffer == nullptr || size == 0) {
    state().dropped_for_next_completion += count;
    return -1;
  }
  size_t used = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t needed = Aligned(RecordSize(static_cast<CUpti_ActivityKind>(CuptiKindOf(activities[i].kind))));
    if (needed == 0 || used + needed > size) return -2;
    used += Build(activities[i], buffer + used);
  }
  const int handle = state().next_handle++;
  state().pending[handle] = PendingBuffer{buffer, size, used};
  return handle;
}

STEPSCOPE_FAKE_CUPTI_EXPORT void fake_cupti_complete_buffer(int handle, size_t dropped) {
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  PendingBuffer buffer;
  {
    std::lock_guard lock(state().mutex);
    auto it = state().pending.find(handle);
    if (it == state().pending.end() || state().completed == nullptr) return;
    buffer = it->second;
    state().pending.erase(it);
    completed = state().completed;
    state().dropped_now = dropped + state().dropped_for_next_completion;
    state().dropped_for_next_completion = 0;
  }
  completed(nullptr, 0, buffer.buffer, buffer.size, buffer.valid);
}

STEPSCOPE_FAKE_CUPTI_EXPORT size_t fake_cupti_pending_buffers(void) {
  std::lock_guard lock(state().mutex);
  return state().pending.size();
}

STEPSCOPE_FAKE_CUPTI_EXPORT void fake_cupti_set_timestamp(uint64_t ns) {
  std::lock_guard lock(state().mutex);
  state().timestamp = ns;
}

STEPSCOPE_FAKE_CUPTI_EXPORT void fake_cupti_take_over(void) {
  (void)cuptiActivityRegisterCallbacks(OtherUserRequested, OtherUserCompleted);
}
