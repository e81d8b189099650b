#include "platform/cupti/cupti_tracer.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "platform/cupti/cupti_library.h"
#include "platform/cupti/cupti_record_converter.h"

namespace stepscope {
namespace {

constexpr char kTracingOff[] = "; GPU tracing is off";

// CUPTI requires buffers aligned to 8 bytes (ACTIVITY_RECORD_ALIGNMENT).
constexpr size_t kBufferAlignment = 8;

constexpr CUpti_ActivityKind kWholeJobKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};
constexpr CUpti_ActivityKind kDetailKinds[] = {CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                               CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_MARKER,
                                               CUPTI_ACTIVITY_KIND_CONTEXT};

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's callback names carry the API version
// they were introduced in; Kineto's traces (and users) name the function.
std::string WithoutVersionSuffix(std::string name) {
  const size_t at = name.rfind("_v");
  if (at == std::string::npos || at + 2 >= name.size()) return name;
  for (size_t i = at + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  name.resize(at);
  return name;
}

// Whether a runtime or driver call launches device work (kernels, graphs, copies, sets): the
// calls whole-job mode keeps, so every kernel and copy has its launch.
bool LaunchesDeviceWork(std::string_view name) {
  if (name.find("Launch") != std::string_view::npos) return true;
  for (std::string_view prefix : {"cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemset"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

const char* GpuTracingModeName(GpuTracingMode mode) {
  return mode == GpuTracingMode::kEverything ? "everything" : "whole_job";
}

const char* GpuTracerStateName(GpuTracerState state) {
  switch (state) {
    case GpuTracerState::kTracing: return "tracing";
    case GpuTracerState::kYielded: return "yielded";
    case GpuTracerState::kOff: return "off";
  }
  return "off";
}

struct CuptiTracer::Impl {
  CuptiTracerOptions options;
  GpuActivitySink* sink = nullptr;
  std::unique_ptr<cupti::CuptiLibrary> library;
  pid_t pid = 0;

  // Buffer pool: a pop or push under a mutex held for nothing else (CUPTI asks for buffers on
  // the launching thread when one fills; that must stay short).
  std::mutex pool_mutex;
  std::vector<uint8_t*> free_buffers;
  size_t pool_bytes = 0;

  // Everything below changes under `mutex`, which also serialises the sink.
  mutable std::mutex mutex;
  cupti::CuptiRecordConverter converter;
  struct ApiName {
    std::string name;
    bool launches = false;
  };
  std::unordered_map<uint64_t, ApiName> api_names;  // (domain << 32 | cbid)
  GpuTracingMode mode = GpuTracingMode::kWholeJob;
  GpuTracerState state = GpuTracerState::kOff;
  std::string reason;
  std::vector<CUpti_ActivityKind> enabled;
  CuptiTracerStats stats;
  std::atomic<uint64_t> buffers_requested{0};
  std::atomic<uint64_t> buffers_refused{0};
  std::atomic<uint64_t> buffers_discarded_in_child{0};

  const cupti::CuptiEntryPoints& cupti() const { return library->entry_points(); }

  uint8_t* TakeBuffer() {
    buffers_requested.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(pool_mutex);
    if (!free_buffers.empty()) {
      uint8_t* buffer = free_buffers.back();
      free_buffers.pop_back();
      return buffer;
    }
    if (pool_bytes + options.buffer_bytes > options.max_pool_bytes) {
      buffers_refused.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    auto* buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, options.buffer_bytes));
    if (buffer == nullptr) {
      buffers_refused.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    pool_bytes += options.buffer_bytes;
    return buffer;
  }

  void GiveBuffer(uint8_t* buffer) {
    std::lock_guard lock(pool_mutex);
    free_buffers.push_back(buffer);  // capacity reserved for the whole pool: no allocation
  }

  // The runtime or driver function behind an API record, once per cbid. Caller holds `mutex`.
  const ApiName& ApiNameOf(GpuActivityKind kind, uint32_t cbid) {
    const CUpti_CallbackDomain domain =
        kind == GpuActivityKind::kRuntimeApi ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    const uint64_t key = (uint64_t{static_cast<uint32_t>(domain)} << 32) | cbid;
    auto it = api_names.find(key);
    if (it != api_names.end()) return it->second;
    const char* text = nullptr;
    ApiName name;
    if (cupti().cuptiGetCallbackName(domain, cbid, &text) == CUPTI_SUCCESS && text != nullptr) {
      name.name = WithoutVersionSuffix(text);
    } else {
      name.name = std::string(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cuda_runtime#" : "cuda_driver#") +
                  std::to_string(cbid);
    }
    name.launches = LaunchesDeviceWork(name.name);
    return api_names.emplace(key, std::move(name)).first->second;
  }

  void Complete(CUcontext context, uint32_t stream, uint8_t* buffer, size_t valid_bytes) {
    if (getpid() != pid) {
      // A forked child: its sink's files belong to the parent, and the pool's mutex may have
      // been held by a parent thread at fork time. The copy of the buffer is the child's own.
      buffers_discarded_in_child.fetch_add(1, std::memory_order_relaxed);
      std::free(buffer);
      return;
    }
    {
      std::lock_guard lock(mutex);
      ++stats.buffers_completed;
      CUpti_Activity* activity = nullptr;
      GpuActivityRecord record;
      while (valid_bytes > 0 && cupti().cuptiActivityGetNextRecord(buffer, valid_bytes, &activity) == CUPTI_SUCCESS) {
        if (!converter.Convert(activity, &record)) continue;
        if (record.kind == GpuActivityKind::kRuntimeApi || record.kind == GpuActivityKind::kDriverApi) {
          const ApiName& name = ApiNameOf(record.kind, record.callback_id);
          if (mode == GpuTracingMode::kWholeJob && !name.launches) {
            ++stats.records_filtered;
            continue;
          }
          record.name = name.name.c_str();
        }
        ++stats.records;
        sink->OnRecord(record);
      }
      size_t dropped = 0;
      if (cupti().cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS && dropped > 0) {
        stats.records_dropped_by_cupti += dropped;
        sink->OnCuptiDropped(dropped);
      }
      sink->OnBufferDone();
    }
    GiveBuffer(buffer);
  }

  uint64_t Timestamp() const {
    uint64_t now = 0;
    return cupti().cuptiGetTimestamp(&now) == CUPTI_SUCCESS ? now : 0;
  }

  // Caller holds `mutex`.
  void SetStateLocked(GpuTracerState new_state, const std::string& why) {
    state = new_state;
    reason = why;
    sink->OnStateChange(Timestamp(), new_state, why);
  }

  // Enables `kinds`; on a refusal disables what this call enabled. Caller holds `mutex`.
  Status EnableLocked(std::span<const CUpti_ActivityKind> kinds) {
    std::vector<CUpti_ActivityKind> now_enabled;
    for (CUpti_ActivityKind kind : kinds) {
      const CUptiResult result = cupti().cuptiActivityEnable(kind);
      if (result != CUPTI_SUCCESS) {
        for (CUpti_ActivityKind undo : now_enabled) (void)cupti().cuptiActivityDisable(undo);
        return UnavailableError(library->CallError("cuptiActivityEnable(kind " + std::to_string(static_cast<int>(kind)) + ")", result) + kTracingOff);
      }
      now_enabled.push_back(kind);
    }
    enabled.insert(enabled.end(), now_enabled.begin(), now_enabled.end());
    return OkStatus();
  }

  Status EnableModeLocked() {
    STEPSCOPE_RETURN_IF_ERROR(EnableLocked(kWholeJobKinds));
    if (mode == GpuTracingMode::kEverything) {
      Status status = EnableLocked(kDetailKinds);
      if (!status.ok()) {
        DisableAllLocked();
        return status;
      }
    }
    return OkStatus();
  }

  void DisableAllLocked() {
    for (CUpti_ActivityKind kind : enabled) (void)cupti().cuptiActivityDisable(kind);
    enabled.clear();
  }

  Status RegisterLocked();
};

namespace {

// The tracer CUPTI's callbacks reach (one per process: the callbacks carry no user data).
std::atomic<CuptiTracer::Impl*> g_tracer{nullptr};

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  CuptiTracer::Impl* tracer = g_tracer.load(std::memory_order_acquire);
  *max_records = 0;  // as many as fit
  *buffer = tracer != nullptr ? tracer->TakeBuffer() : nullptr;
  *size = *buffer != nullptr ? tracer->options.buffer_bytes : 0;
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid_bytes) {
  if (buffer == nullptr) return;
  CuptiTracer::Impl* tracer = g_tracer.load(std::memory_order_acquire);
  if (tracer == nullptr) {
    std::free(buffer);  // the tracer is gone: the buffer was its, allocated with aligned_alloc
    return;
  }
  tracer->Complete(context, stream, buffer, valid_bytes);
}

}  // namespace

Status CuptiTracer::Impl::RegisterLocked() {
  const CUptiResult result = cupti().cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  if (result != CUPTI_SUCCESS) {
    return UnavailableError(library->CallError("cuptiActivityRegisterCallbacks", result) + kTracingOff);
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<CuptiTracer>> CuptiTracer::Start(const CuptiTracerOptions& options, GpuActivitySink* sink) {
  if (options.buffer_bytes < 1024 || options.buffer_bytes % kBufferAlignment != 0 ||
      options.max_pool_bytes < options.buffer_bytes) {
    return InvalidArgumentError("CUPTI buffers of " + std::to_string(options.buffer_bytes) + " bytes in a pool of " +
                                std::to_string(options.max_pool_bytes) +
                                ": a buffer needs at least 1 KiB, a multiple of 8, and the pool room for one");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->sink = sink;
  impl->mode = options.mode;
  impl->pid = getpid();
  impl->free_buffers.reserve(options.max_pool_bytes / options.buffer_bytes);
  STEPSCOPE_ASSIGN_OR_RETURN(impl->library, cupti::CuptiLibrary::Load(options.library));
  Impl* expected = nullptr;
  if (!g_tracer.compare_exchange_strong(expected, impl.get())) {
    return UnavailableError("a GPU tracer already runs in this process; CUPTI serves one" + std::string(kTracingOff));
  }
  std::unique_ptr<CuptiTracer> tracer(new CuptiTracer(std::move(impl)));
  Impl& self = *tracer->impl_;
  std::lock_guard lock(self.mutex);
  Status status = self.RegisterLocked();
  if (status.ok()) status = self.EnableModeLocked();
  if (!status.ok()) {
    // Tell the sink too: the run then says why its GPU records are missing.
    self.SetStateLocked(GpuTracerState::kOff, status.message());
    return status;  // the destructor releases the process-wide slot
  }
  self.SetStateLocked(GpuTracerState::kTracing, std::string("started in ") + GpuTracingModeName(self.mode) + " mode");
  return tracer;
}

CuptiTracer::CuptiTracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CuptiTracer::~CuptiTracer() {
  Stop();
  Impl* self = impl_.get();
  g_tracer.compare_exchange_strong(self, nullptr);
  std::lock_guard lock(impl_->pool_mutex);
  for (uint8_t* buffer : impl_->free_buffers) std::free(buffer);
  impl_->free_buffers.clear();
}

Status CuptiTracer::Yield(const std::string& reason) {
  if (getpid() != impl_->pid) return OkStatus();
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->state != GpuTracerState::kTracing) return OkStatus();
  }
  // Every buffer comes back to us before the other user registers its callbacks (a buffer of
  // ours completed to Kineto's callback would be lost, and freed by the wrong owner).
  Flush(/*forced=*/true);
  std::lock_guard lock(impl_->mutex);
  impl_->DisableAllLocked();
  ++impl_->stats.yields;
  impl_->SetStateLocked(GpuTracerState::kYielded, reason);
  return OkStatus();
}

Status CuptiTracer::Resume(const std::string& reason) {
  if (getpid() != impl_->pid) return OkStatus();
  std::lock_guard lock(impl_->mutex);
  if (impl_->state != GpuTracerState::kYielded) return OkStatus();
  Status status = impl_->RegisterLocked();
  if (status.ok()) status = impl_->EnableModeLocked();
  if (!status.ok()) {
    impl_->SetStateLocked(GpuTracerState::kOff, "could not resume after '" + impl_->reason + "': " + status.message());
    return status;
  }
  ++impl_->stats.resumes;
  impl_->SetStateLocked(GpuTracerState::kTracing, reason);
  return OkStatus();
}

Status CuptiTracer::SetMode(GpuTracingMode mode) {
  if (getpid() != impl_->pid) return OkStatus();
  std::lock_guard lock(impl_->mutex);
  if (impl_->mode == mode) return OkStatus();
  impl_->mode = mode;
  if (impl_->state != GpuTracerState::kTracing) return OkStatus();
  if (mode == GpuTracingMode::kEverything) return impl_->EnableLocked(kDetailKinds);
  for (CUpti_ActivityKind kind : kDetailKinds) {
    (void)impl_->cupti().cuptiActivityDisable(kind);
    std::erase(impl_->enabled, kind);
  }
  return OkStatus();
}

void CuptiTracer::Flush(bool forced) {
  if (getpid() != impl_->pid) return;
  // Not under `mutex`: CUPTI completes buffers from inside this call, on this thread.
  (void)impl_->cupti().cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void CuptiTracer::Stop() {
  if (getpid() != impl_->pid) return;
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->state == GpuTracerState::kOff) return;
    if (impl_->state == GpuTracerState::kYielded) {
      // CUPTI is someone else's now: a flush would hand them their buffers early.
      impl_->SetStateLocked(GpuTracerState::kOff, "stopped while yielded (" + impl_->reason + ")");
      return;
    }
  }
  Flush(/*forced=*/true);
  std::lock_guard lock(impl_->mutex);
  impl_->DisableAllLocked();
  impl_->SetStateLocked(GpuTracerState::kOff, "stopped");
}

uint64_t CuptiTracer::TimestampNs() const { return impl_->Timestamp(); }

GpuTracerState CuptiTracer::state() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->state;
}

std::string CuptiTracer::reason() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->reason;
}

GpuTracingMode CuptiTracer::mode() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->mode;
}

CuptiTracerStats CuptiTracer::Stats() const {
  CuptiTracerStats stats;
  {
    std::lock_guard lock(impl_->mutex);
    stats = impl_->stats;
  }
  stats.buffers_requested = impl_->buffers_requested.load(std::memory_order_relaxed);
  stats.buffers_refused = impl_->buffers_refused.load(std::memory_order_relaxed);
  stats.buffers_discarded_in_child = impl_->buffers_discarded_in_child.load(std::memory_order_relaxed);
  std::lock_guard lock(impl_->pool_mutex);
  stats.pool_bytes = impl_->pool_bytes;
  return stats;
}

const std::string& CuptiTracer::library_path() const { return impl_->library->path(); }
uint32_t CuptiTracer::library_version() const { return impl_->library->version(); }

}  // namespace stepscope
