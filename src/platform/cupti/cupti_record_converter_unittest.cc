#include "platform/cupti/cupti_record_converter.h"

#include <gtest/gtest.h>

namespace stepscope::cupti {
namespace {

const CUpti_Activity* AsActivity(const void* record) { return static_cast<const CUpti_Activity*>(record); }

TEST(CuptiRecordConverterTest, KernelKeepsLaunchGeometryAndSumsSharedMemory) {
  CUpti_ActivityKernel11 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.start = 1000;
  kernel.end = 1500;
  kernel.deviceId = 1;
  kernel.contextId = 7;
  kernel.streamId = 13;
  kernel.correlationId = 42;
  kernel.gridX = 128;
  kernel.gridY = 2;
  kernel.gridZ = 1;
  kernel.blockX = 256;
  kernel.blockY = 1;
  kernel.blockZ = 1;
  kernel.registersPerThread = 64;
  kernel.staticSharedMemory = 1024;
  kernel.dynamicSharedMemory = 4096;
  kernel.name = "ampere_sgemm_128x64_nn";
  CuptiRecordConverter converter;
  GpuActivityRecord out;
  ASSERT_TRUE(converter.Convert(AsActivity(&kernel), &out));
  EXPECT_EQ(out.kind, GpuActivityKind::kKernel);
  EXPECT_EQ(out.start_ns, 1000u);
  EXPECT_EQ(out.end_ns, 1500u);
  EXPECT_STREQ(out.name, "ampere_sgemm_128x64_nn");
  EXPECT_EQ(out.device, 1u);
  EXPECT_EQ(out.stream, 13u);
  EXPECT_EQ(out.correlation, 42u);
  EXPECT_EQ(out.grid[0], 128);
  EXPECT_EQ(out.grid[1], 2);
  EXPECT_EQ(out.block[0], 256);
  EXPECT_EQ(out.registers_per_thread, 64);
  EXPECT_EQ(out.shared_memory_bytes, 5120u);
}

TEST(CuptiRecordConverterTest, MemcpyKeepsKindBytesAndHostMemory) {
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 1 << 20;
  copy.start = 10;
  copy.end = 20;
  copy.deviceId = 0;
  copy.streamId = 7;
  copy.correlationId = 5;
  CuptiRecordConverter converter;
  GpuActivityRecord out;
  ASSERT_TRUE(converter.Convert(AsActivity(&copy), &out));
  EXPECT_EQ(out.kind, GpuActivityKind::kMemcpy);
  EXPECT_EQ(out.memcpy_kind, GpuMemcpyKind::kHtoD);
  EXPECT_EQ(out.src_memory, GpuMemoryKind::kPageable);
  EXPECT_EQ(out.dst_memory, GpuMemoryKind::kDevice);
  EXPECT_EQ(out.bytes, 1u << 20);
  EXPECT_EQ(out.correlation, 5u);
}

TEST(CuptiRecordConverterTest, OutOfRangeEnumsReadAsUnknown) {
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = 200;
  copy.srcKind = 99;
  CuptiRecordConverter converter;
  GpuActivityRecord out;
  ASSERT_TRUE(converter.Convert(AsActivity(&copy), &out));
  EXPECT_EQ(out.memcpy_kind, GpuMemcpyKind::kUnknown);
  EXPECT_EQ(out.src_memory, GpuMemoryKind::kUnknown);
}

TEST(CuptiRecordConverterTest, SynchronizationTakesItsDeviceFromTheContext) {
  CuptiRecordConverter converter;
  GpuActivityRecord out;
  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.contextId = 3;
  sync.streamId = 9;
  ASSERT_TRUE(converter.Convert(AsActivity(&sync), &out));
  EXPECT_EQ(out.device, kGpuNoValue) << "no record named context 3's device yet";

  CUpti_ActivityContext4 context{};
  context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  context.contextId = 3;
  context.deviceId = 2;
  EXPECT_FALSE(converter.Convert(AsActivity(&context), &out)) << "contexts teach, they are not kept";
  ASSERT_TRUE(converter.Convert(AsActivity(&sync), &out));
  EXPECT_EQ(out.kind, GpuActivityKind::kSync);
  EXPECT_EQ(out.sync_kind, GpuSyncKind::kStreamSync);
  EXPECT_EQ(out.device, 2u);
  EXPECT_EQ(out.stream, 9u);
}

TEST(CuptiRecordConverterTest, ApiCallsKeepThreadCorrelationAndCallbackId) {
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  api.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  api.threadId = 4242;
  api.correlationId = 77;
  api.start = 5;
  api.end = 9;
  CuptiRecordConverter converter;
  GpuActivityRecord out;
  ASSERT_TRUE(converter.Convert(AsActivity(&api), &out));
  EXPECT_EQ(out.kind, GpuActivityKind::kDriverApi);
  EXPECT_EQ(out.thread_id, 4242u);
  EXPECT_EQ(out.correlation, 77u);
  EXPECT_EQ(out.callback_id, static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_EQ(out.name, nullptr) << "the tracer names API calls";
}

TEST(CuptiRecordConverterTest, OverheadAndMarkers) {
  CuptiRecordConverter converter;
  GpuActivityRecord out;
  CUpti_ActivityOverhead3 overhead{};
  overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  overhead.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  overhead.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  overhead.objectId.pt.threadId = 11;
  ASSERT_TRUE(converter.Convert(AsActivity(&overhead), &out));
  EXPECT_EQ(out.kind, GpuActivityKind::kOverhead);
  EXPECT_EQ(out.id, static_cast<uint32_t>(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH));
  EXPECT_EQ(out.thread_id, 11u);

  CUpti_ActivityMarker2 marker{};
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  marker.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  marker.timestamp = 123;
  marker.id = 5;
  marker.name = "forward";
  marker.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  marker.objectId.pt.threadId = 12;
  ASSERT_TRUE(converter.Convert(AsActivity(&marker), &out));
  EXPECT_EQ(out.kind, GpuActivityKind::kMarker);
  EXPECT_EQ(out.marker_flags, kGpuMarkerStart);
  EXPECT_EQ(out.start_ns, 123u);
  EXPECT_EQ(out.id, 5u);
  EXPECT_STREQ(out.name, "forward");
}

TEST(CuptiRecordConverterTest, KindsStepscopeDoesNotKeepAreSkipped) {
  CUpti_ActivityDevice6 device{};
  device.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  CuptiRecordConverter converter;
  GpuActivityRecord out;
  EXPECT_FALSE(converter.Convert(AsActivity(&device), &out));
}

}  // namespace
}  // namespace stepscope::cupti
