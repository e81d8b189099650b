// Our own declarations of the slice of NVML's C API that stepscope calls, and the table of
// entry points NvmlLoader fills with dlsym.
//
// stepscope never includes <nvml.h> and never links libnvidia-ml: the build machine usually
// has no driver, and a link-time dependency would stop the profiler from starting on CPU-only
// nodes. The types below mirror NVML's C ABI exactly (sizes, field order, the numeric values
// of nvml.h's enums); declare only what is called. NVML's own spellings are kept for the ABI
// types and table members so they can be checked against NVML's documentation line by line.
//
// Callers: NvmlLoader fills the table, NvmlGpuSource calls through it, and
// tests/fakes/fake_nvml.cc implements the same functions (it static_asserts its signatures
// against this table). Threading: plain data; NVML itself is thread-safe once initialized.
#pragma once

namespace stepscope::nvml {

// nvmlReturn_t is a C enum in nvml.h (int-sized). It is an int here so that codes a newer
// driver adds pass through unchanged into messages.
using nvmlReturn_t = int;
inline constexpr nvmlReturn_t kSuccess = 0;                      // NVML_SUCCESS
inline constexpr nvmlReturn_t kErrorUninitialized = 1;           // NVML_ERROR_UNINITIALIZED
inline constexpr nvmlReturn_t kErrorInvalidArgument = 2;         // NVML_ERROR_INVALID_ARGUMENT
inline constexpr nvmlReturn_t kErrorNotSupported = 3;            // NVML_ERROR_NOT_SUPPORTED
inline constexpr nvmlReturn_t kErrorNoPermission = 4;            // NVML_ERROR_NO_PERMISSION
inline constexpr nvmlReturn_t kErrorAlreadyInitialized = 5;      // NVML_ERROR_ALREADY_INITIALIZED
inline constexpr nvmlReturn_t kErrorNotFound = 6;                // NVML_ERROR_NOT_FOUND
inline constexpr nvmlReturn_t kErrorInsufficientSize = 7;        // NVML_ERROR_INSUFFICIENT_SIZE
inline constexpr nvmlReturn_t kErrorInsufficientPower = 8;       // NVML_ERROR_INSUFFICIENT_POWER
inline constexpr nvmlReturn_t kErrorDriverNotLoaded = 9;         // NVML_ERROR_DRIVER_NOT_LOADED
inline constexpr nvmlReturn_t kErrorTimeout = 10;                // NVML_ERROR_TIMEOUT
inline constexpr nvmlReturn_t kErrorIrqIssue = 11;               // NVML_ERROR_IRQ_ISSUE
inline constexpr nvmlReturn_t kErrorLibraryNotFound = 12;        // NVML_ERROR_LIBRARY_NOT_FOUND
inline constexpr nvmlReturn_t kErrorFunctionNotFound = 13;       // NVML_ERROR_FUNCTION_NOT_FOUND
inline constexpr nvmlReturn_t kErrorCorruptedInforom = 14;       // NVML_ERROR_CORRUPTED_INFOROM
inline constexpr nvmlReturn_t kErrorGpuIsLost = 15;              // NVML_ERROR_GPU_IS_LOST
inline constexpr nvmlReturn_t kErrorResetRequired = 16;          // NVML_ERROR_RESET_REQUIRED
inline constexpr nvmlReturn_t kErrorOperatingSystem = 17;        // NVML_ERROR_OPERATING_SYSTEM
// NVML_ERROR_LIB_RM_VERSION_MISMATCH
inline constexpr nvmlReturn_t kErrorLibRmVersionMismatch = 18;
inline constexpr nvmlReturn_t kErrorInUse = 19;                  // NVML_ERROR_IN_USE
inline constexpr nvmlReturn_t kErrorMemory = 20;                 // NVML_ERROR_MEMORY
inline constexpr nvmlReturn_t kErrorNoData = 21;                 // NVML_ERROR_NO_DATA
inline constexpr nvmlReturn_t kErrorUnknown = 999;               // NVML_ERROR_UNKNOWN

// Opaque device handle (nvml.h: typedef struct nvmlDevice_st* nvmlDevice_t).
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

// Percent of time over the driver's last sample period (1/6 s to 1 s depending on product).
struct nvmlUtilization_t {
  unsigned int gpu;     // a kernel was running
  unsigned int memory;  // device memory was being read or written
};

// Device memory in bytes (version 1 of the struct, the one nvmlDeviceGetMemoryInfo fills).
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

static_assert(sizeof(nvmlUtilization_t) == 8, "must match nvml.h");
static_assert(sizeof(nvmlMemory_t) == 24, "must match nvml.h");

// C enums in nvml.h, int-sized.
using nvmlTemperatureSensors_t = int;
inline constexpr nvmlTemperatureSensors_t kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

using nvmlClockType_t = int;
inline constexpr nvmlClockType_t kClockGraphics = 0;  // NVML_CLOCK_GRAPHICS
inline constexpr nvmlClockType_t kClockSm = 1;        // NVML_CLOCK_SM
inline constexpr nvmlClockType_t kClockMem = 2;       // NVML_CLOCK_MEM

// NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE.
inline constexpr unsigned int kSystemDriverVersionBufferSize = 80;
// NVML_DEVICE_NAME_V2_BUFFER_SIZE: large enough for every nvmlDeviceGetName result.
inline constexpr unsigned int kDeviceNameBufferSize = 96;

// Every NVML function stepscope calls. Members are named exactly as the exported symbols
// (the loader resolves each by that name) and all are non-null after a successful load.
struct NvmlEntryPoints {
  nvmlReturn_t (*nvmlInit_v2)() = nullptr;
  nvmlReturn_t (*nvmlShutdown)() = nullptr;
  // NVML's text for a code; valid before nvmlInit. Points to static storage.
  const char* (*nvmlErrorString)(nvmlReturn_t result) = nullptr;
  nvmlReturn_t (*nvmlSystemGetDriverVersion)(char* version, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCount_v2)(unsigned int* device_count) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2)(unsigned int index, nvmlDevice_t* device) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetName)(nvmlDevice_t device, char* name, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetUtilizationRates)(nvmlDevice_t device,
                                                nvmlUtilization_t* utilization) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMemoryInfo)(nvmlDevice_t device, nvmlMemory_t* memory) = nullptr;
  // Milliwatts drawn by the whole board.
  nvmlReturn_t (*nvmlDeviceGetPowerUsage)(nvmlDevice_t device, unsigned int* power_mw) = nullptr;
  // Degrees Celsius.
  nvmlReturn_t (*nvmlDeviceGetTemperature)(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                           unsigned int* temperature_c) = nullptr;
  // Current clock in MHz.
  nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t device, nvmlClockType_t type,
                                         unsigned int* clock_mhz) = nullptr;
};

}  // namespace stepscope::nvml
