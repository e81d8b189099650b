#include "platform/cupti/cupti_record_converter.h"

#include <algorithm>

namespace stepscope::cupti {
namespace {

// A handful of contexts per process; a bound keeps a misbehaving CUPTI from growing the map.
constexpr size_t kMaxContexts = 4096;

GpuMemoryKind MemoryKind(uint32_t kind) {
  return kind <= static_cast<uint32_t>(GpuMemoryKind::kManagedStatic) ? static_cast<GpuMemoryKind>(kind)
                                                                      : GpuMemoryKind::kUnknown;
}

// The fields every record of device work (kernel, memcpy, memset) has under the same names.
template <typename Record>
void CopyDeviceWork(const Record& record, GpuActivityKind kind, GpuActivityRecord* out) {
  out->kind = kind;
  out->start_ns = record.start;
  out->end_ns = record.end;
  out->device = record.deviceId;
  out->context = record.contextId;
  out->stream = record.streamId;
  out->correlation = record.correlationId;
}

uint32_t Clamp32(int64_t value) { return static_cast<uint32_t>(std::clamp<int64_t>(value, 0, UINT32_MAX)); }

}  // namespace

void CuptiRecordConverter::LearnContext(uint32_t context, uint32_t device) {
  if (device_of_context_.size() < kMaxContexts || device_of_context_.count(context) != 0) {
    device_of_context_[context] = device;
  }
}

bool CuptiRecordConverter::Convert(const CUpti_Activity* activity, GpuActivityRecord* out) {
  *out = GpuActivityRecord{};
  switch (activity->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel11*>(activity);
      CopyDeviceWork(*kernel, GpuActivityKind::kKernel, out);
      out->name = kernel->name;
      out->grid[0] = kernel->gridX;
      out->grid[1] = kernel->gridY;
      out->grid[2] = kernel->gridZ;
      out->block[0] = kernel->blockX;
      out->block[1] = kernel->blockY;
      out->block[2] = kernel->blockZ;
      out->registers_per_thread = kernel->registersPerThread;
      out->shared_memory_bytes =
          Clamp32(int64_t{kernel->staticSharedMemory} + int64_t{kernel->dynamicSharedMemory});
      LearnContext(kernel->contextId, kernel->deviceId);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(activity);
      CopyDeviceWork(*copy, GpuActivityKind::kMemcpy, out);
      out->bytes = copy->bytes;
      out->memcpy_kind = copy->copyKind <= static_cast<uint8_t>(GpuMemcpyKind::kPtoP)
                             ? static_cast<GpuMemcpyKind>(copy->copyKind)
                             : GpuMemcpyKind::kUnknown;
      out->src_memory = MemoryKind(copy->srcKind);
      out->dst_memory = MemoryKind(copy->dstKind);
      LearnContext(copy->contextId, copy->deviceId);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* set = reinterpret_cast<const CUpti_ActivityMemset4*>(activity);
      CopyDeviceWork(*set, GpuActivityKind::kMemset, out);
      out->bytes = set->bytes;
      out->src_memory = MemoryKind(set->memoryKind);
      LearnContext(set->contextId, set->deviceId);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* sync = reinterpret_cast<const CUpti_ActivitySynchronization2*>(activity);
      out->kind = GpuActivityKind::kSync;
      out->start_ns = sync->start;
      out->end_ns = sync->end;
      out->context = sync->contextId;
      out->stream = sync->streamId;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE (== kGpuNoValue) for a context sync
      out->correlation = sync->correlationId;
      const auto type = static_cast<uint32_t>(sync->type);
      out->sync_kind = type <= static_cast<uint32_t>(GpuSyncKind::kContextSync) ? static_cast<GpuSyncKind>(type)
                                                                               : GpuSyncKind::kUnknown;
      const auto device = device_of_context_.find(sync->contextId);
      if (device != device_of_context_.end()) out->device = device->second;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(activity);
      out->kind = activity->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? GpuActivityKind::kRuntimeApi
                                                                : GpuActivityKind::kDriverApi;
      out->start_ns = api->start;
      out->end_ns = api->end;
      out->thread_id = api->threadId;
      out->correlation = api->correlationId;
      out->callback_id = api->cbid;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* overhead = reinterpret_cast<const CUpti_ActivityOverhead3*>(activity);
      out->kind = GpuActivityKind::kOverhead;
      out->start_ns = overhead->start;
      out->end_ns = overhead->end;
      out->id = static_cast<uint32_t>(overhead->overheadKind);
      if (overhead->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || overhead->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        out->thread_id = overhead->objectId.pt.threadId;
      } else {
        out->device = overhead->objectId.dcs.deviceId;
      }
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* marker = reinterpret_cast<const CUpti_ActivityMarker2*>(activity);
      out->kind = GpuActivityKind::kMarker;
      out->start_ns = out->end_ns = marker->timestamp;
      out->name = marker->name;  // only on an instant or a range's start
      out->id = marker->id;
      out->marker_flags = static_cast<uint8_t>(static_cast<uint32_t>(marker->flags) & 0x7u);
      if (marker->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || marker->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        out->thread_id = marker->objectId.pt.threadId;
      }
      return true;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto* context = reinterpret_cast<const CUpti_ActivityContext4*>(activity);
      LearnContext(context->contextId, context->deviceId);
      return false;
    }
    default:
      return false;
  }
}

}  // namespace stepscope::cupti
