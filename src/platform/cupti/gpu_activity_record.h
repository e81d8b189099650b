// What stepscope keeps of one CUPTI activity record, as a plain fixed-size struct: the converter
// (cupti_record_converter.h) fills it from CUpti_Activity* records, the tracer hands it to a
// GpuActivitySink, and nothing outside src/platform/cupti ever sees a CUPTI type.
//
// Callers: the tracer (producer, on CUPTI's buffer-completion thread) and the sinks that
// consume it (src/gpu_tracer's stream writer, tests). Threading: plain data. `name` points into
// CUPTI's memory and is valid only during the sink call that receives the record.
#pragma once

#include <cstdint>
#include <string_view>

namespace stepscope {

enum class GpuActivityKind : uint8_t {
  kKernel = 1,
  kMemcpy = 2,
  kMemset = 3,
  kSync = 4,        // cudaStreamSynchronize and friends, as the device saw them
  kRuntimeApi = 5,  // a CUDA runtime call on a host thread
  kDriverApi = 6,   // a CUDA driver call on a host thread
  kOverhead = 7,    // CUPTI's (or the driver's) own cost
  kMarker = 8,      // an NVTX mark, or the start or end of an NVTX range
};

// CUPTI's memcpy kinds, same numbers (CUpti_ActivityMemcpyKind).
enum class GpuMemcpyKind : uint8_t {
  kUnknown = 0, kHtoD = 1, kDtoH = 2, kHtoA = 3, kAtoH = 4, kAtoA = 5, kAtoD = 6, kDtoA = 7, kDtoD = 8,
  kHtoH = 9, kPtoP = 10,
};
// CUPTI's memory kinds, same numbers (CUpti_ActivityMemoryKind).
enum class GpuMemoryKind : uint8_t {
  kUnknown = 0, kPageable = 1, kPinned = 2, kDevice = 3, kArray = 4, kManaged = 5, kDeviceStatic = 6,
  kManagedStatic = 7,
};
// CUPTI's synchronization types, same numbers (CUpti_ActivitySynchronizationType).
enum class GpuSyncKind : uint8_t { kUnknown = 0, kEventSync = 1, kStreamWaitEvent = 2, kStreamSync = 3, kContextSync = 4 };

// Marker flags (CUpti_ActivityFlag's marker bits, same values).
inline constexpr uint8_t kGpuMarkerInstant = 1 << 0;
inline constexpr uint8_t kGpuMarkerStart = 1 << 1;
inline constexpr uint8_t kGpuMarkerEnd = 1 << 2;

// A device, stream or context the record does not name.
inline constexpr uint32_t kGpuNoValue = 0xFFFFFFFFu;

struct GpuActivityRecord {
  uint64_t start_ns = 0;      // CUPTI timestamps (cuptiGetTimestamp's clock); markers: end == start
  uint64_t end_ns = 0;
  const char* name = nullptr;  // kernels, NVTX starts and marks; API calls: filled by the tracer
  uint64_t bytes = 0;          // memcpy, memset
  uint32_t device = kGpuNoValue;
  uint32_t context = kGpuNoValue;
  uint32_t stream = kGpuNoValue;
  uint32_t correlation = 0;    // links a runtime/driver call to the device work it launched; 0: none
  uint32_t thread_id = 0;      // API calls, markers: the calling thread as CUPTI reports it
  uint32_t callback_id = 0;    // API calls: CUPTI's cbid in the runtime or driver domain
  int32_t grid[3] = {0, 0, 0};   // kernels
  int32_t block[3] = {0, 0, 0};
  uint32_t shared_memory_bytes = 0;  // kernels: static + dynamic per block
  uint32_t id = 0;             // markers: the range id pairing start and end; overhead: its kind
  uint16_t registers_per_thread = 0;
  GpuActivityKind kind = GpuActivityKind::kKernel;
  GpuMemcpyKind memcpy_kind = GpuMemcpyKind::kUnknown;
  GpuMemoryKind src_memory = GpuMemoryKind::kUnknown;  // memcpy source; memset: the memory set
  GpuMemoryKind dst_memory = GpuMemoryKind::kUnknown;
  GpuSyncKind sync_kind = GpuSyncKind::kUnknown;
  uint8_t marker_flags = 0;
};
static_assert(sizeof(GpuActivityRecord) == 96, "a fixed-size record: keep the layout when adding fields");

// Whether the tracer records: tracing, yielded to another CUPTI user (torch's profiler), or off.
enum class GpuTracerState : uint8_t { kTracing = 0, kYielded = 1, kOff = 2 };
const char* GpuTracerStateName(GpuTracerState state);  // "tracing", "yielded", "off"

// Receives the tracer's records. The tracer serialises every call (one buffer at a time), on
// CUPTI's completion thread or the thread that flushed; an implementation must not block for
// long (CUPTI waits for the buffer) and must never call back into the tracer.
class GpuActivitySink {
 public:
  virtual ~GpuActivitySink() = default;
  virtual void OnRecord(const GpuActivityRecord& record) = 0;
  // CUPTI lost `records` (its count for the buffer just completed: records it had no buffer
  // for, or that overflowed the device's buffers).
  virtual void OnCuptiDropped(uint64_t records) = 0;
  // The end of one completed buffer: a good moment to make what was written visible.
  virtual void OnBufferDone() = 0;
  // The tracer started, yielded, resumed or stopped at `timestamp_ns` (CUPTI's clock; 0 when
  // CUPTI could not say), and why.
  virtual void OnStateChange(uint64_t timestamp_ns, GpuTracerState state, std::string_view reason) = 0;
};

}  // namespace stepscope
