// The track ids of a GPU stream (gpu-<pid>-<rand>, written by src/gpu_tracer, read by the
// stepscope loader): which block "thread" an event of the GPU tracer is recorded on. One place
// for the layout, so the writer and the reader cannot disagree (docs/formats.md, "GPU streams").
//
//   device work  1 | kind:3 | device:7 | stream:21   kind: GpuDeviceTrack
//   host side    0 | kind:3 | thread:28              kind: GpuHostTrack
//
// A device or stream too large for its field takes the field's all-ones value, and the event then
// carries "device" / "stream" arguments. Header only; no dependencies.
#pragma once

#include <cstdint>

namespace stepscope::store {

inline constexpr uint32_t kGpuDeviceTrackBit = 0x80000000u;
inline constexpr uint32_t kGpuTrackDeviceUnknown = 0x7F;
inline constexpr uint32_t kGpuTrackStreamUnknown = 0x1FFFFF;
inline constexpr uint32_t kGpuTrackThreadMask = 0x0FFFFFFF;

enum class GpuDeviceTrack : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2, kSync = 3 };
// kTracer: the tracer's own state changes (GpuTracing:<state> instants).
enum class GpuHostTrack : uint8_t { kRuntime = 0, kDriver = 1, kOverhead = 2, kMarker = 3, kTracer = 4 };

constexpr uint32_t GpuDeviceTrackId(GpuDeviceTrack kind, uint32_t device, uint32_t stream) {
  return kGpuDeviceTrackBit | (uint32_t{static_cast<uint8_t>(kind)} << 28) | ((device & kGpuTrackDeviceUnknown) << 21) |
         (stream & kGpuTrackStreamUnknown);
}
constexpr uint32_t GpuHostTrackId(GpuHostTrack kind, uint32_t thread) {
  return (uint32_t{static_cast<uint8_t>(kind)} << 28) | (thread & kGpuTrackThreadMask);
}
constexpr bool IsGpuDeviceTrack(uint32_t track) { return (track & kGpuDeviceTrackBit) != 0; }
constexpr uint8_t GpuTrackKind(uint32_t track) { return static_cast<uint8_t>((track >> 28) & 0x7); }
constexpr uint32_t GpuTrackDevice(uint32_t track) { return (track >> 21) & kGpuTrackDeviceUnknown; }
constexpr uint32_t GpuTrackStream(uint32_t track) { return track & kGpuTrackStreamUnknown; }
constexpr uint32_t GpuTrackThread(uint32_t track) { return track & kGpuTrackThreadMask; }

// The meta frame's "kind" of a GPU stream.
inline constexpr char kGpuStreamKind[] = "gpu";

}  // namespace stepscope::store
