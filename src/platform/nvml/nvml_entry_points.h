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

// --- Deeper readings (issue 15 §3). Every function below is optional: NvmlLoader leaves its
// table slot null when the library lacks the symbol (an older driver), and the metric it feeds
// is then absent, never an error.

// nvmlProcessInfo_v2_t, which is also the layout nvmlDeviceGetComputeRunningProcesses_v3 fills
// (NVIDIA's own Python binding: c_nvmlProcessInfo_v3_t = c_nvmlProcessInfo_v2_t).
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; kValueNotAvailable when the driver cannot tell
  unsigned int gpuInstanceId;        // MIG only, else 0xFFFFFFFF
  unsigned int computeInstanceId;
};
// NVML_VALUE_NOT_AVAILABLE as an unsigned long long.
inline constexpr unsigned long long kValueNotAvailable = ~0ull;

// One per-process utilization sample (nvmlDeviceGetProcessUtilization).
struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp in microseconds
  unsigned int smUtil;           // % of the sample period a kernel of this process ran
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

using nvmlPcieUtilCounter_t = int;
inline constexpr nvmlPcieUtilCounter_t kPcieUtilTxBytes = 0;  // NVML_PCIE_UTIL_TX_BYTES
inline constexpr nvmlPcieUtilCounter_t kPcieUtilRxBytes = 1;  // NVML_PCIE_UTIL_RX_BYTES

// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*): bits of
// nvmlDeviceGetCurrentClocksEventReasons.
inline constexpr unsigned long long kClocksEventReasonGpuIdle = 0x1;
inline constexpr unsigned long long kClocksEventReasonApplicationsClocksSetting = 0x2;
inline constexpr unsigned long long kClocksEventReasonSwPowerCap = 0x4;
inline constexpr unsigned long long kClocksThrottleReasonHwSlowdown = 0x8;
inline constexpr unsigned long long kClocksEventReasonSyncBoost = 0x10;
inline constexpr unsigned long long kClocksEventReasonSwThermalSlowdown = 0x20;
inline constexpr unsigned long long kClocksThrottleReasonHwThermalSlowdown = 0x40;
inline constexpr unsigned long long kClocksThrottleReasonHwPowerBrakeSlowdown = 0x80;

using nvmlMemoryErrorType_t = int;
inline constexpr nvmlMemoryErrorType_t kMemoryErrorTypeCorrected = 0;    // NVML_MEMORY_ERROR_TYPE_CORRECTED
inline constexpr nvmlMemoryErrorType_t kMemoryErrorTypeUncorrected = 1;  // ..._UNCORRECTED
using nvmlEccCounterType_t = int;
inline constexpr nvmlEccCounterType_t kVolatileEcc = 0;  // NVML_VOLATILE_ECC: since the driver loaded

// Events (nvmlEventSetCreate ...). Opaque handle, as nvml.h's nvmlEventSet_t.
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the Xid code for kEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError

// GPU Performance Monitoring (Hopper and newer). nvml.h: typedef struct nvmlGpmSample_st*
// nvmlGpmSample_t.
struct nvmlGpmSample_st;
using nvmlGpmSample_t = nvmlGpmSample_st*;
struct nvmlGpmSupport_t {
  unsigned int version;  // in: kGpmSupportVersion
  unsigned int isSupportedDevice;
};
inline constexpr unsigned int kGpmSupportVersion = 1;  // NVML_GPM_SUPPORT_VERSION
struct nvmlGpmMetric_t {
  unsigned int metricId;    // in: nvmlGpmMetricId_t
  nvmlReturn_t nvmlReturn;  // out: value is valid only when kSuccess
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
// NVML_GPM_METRIC_MAX of the header that introduced GPM; the driver reads numMetrics entries.
inline constexpr unsigned int kGpmMetricMax = 98;
struct nvmlGpmMetricsGet_t {
  unsigned int version;     // in: kGpmMetricsGetVersion
  unsigned int numMetrics;  // in: entries used in metrics[]
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[kGpmMetricMax];
};
inline constexpr unsigned int kGpmMetricsGetVersion = 1;  // NVML_GPM_METRICS_GET_VERSION
inline constexpr unsigned int kGpmMetricSmUtil = 2;         // NVML_GPM_METRIC_SM_UTIL: % of SMs busy
inline constexpr unsigned int kGpmMetricAnyTensorUtil = 5;  // NVML_GPM_METRIC_ANY_TENSOR_UTIL

static_assert(sizeof(nvmlProcessInfo_t) == 24, "must match nvml.h");
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "must match nvml.h");
static_assert(sizeof(nvmlEventData_t) == 32, "must match nvml.h");
static_assert(sizeof(nvmlGpmSupport_t) == 8, "must match nvml.h");
static_assert(sizeof(nvmlGpmMetric_t) == 40, "must match nvml.h");

// Every NVML function stepscope calls. Members are named exactly as the exported symbols
// (the loader resolves each by that name); the required ones are non-null after a successful
// load, the optional ones (below the first group) may be null.
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

  // Optional (null when the library lacks them): see the types above.
  // The _v3 and _v2 names fill the same nvmlProcessInfo_t; the source prefers _v3.
  nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_v3)(nvmlDevice_t device, unsigned int* info_count,
                                                          nvmlProcessInfo_t* infos) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_v2)(nvmlDevice_t device, unsigned int* info_count,
                                                          nvmlProcessInfo_t* infos) = nullptr;
  // Samples newer than `last_seen_timestamp_us`; NOT_FOUND when there are none.
  nvmlReturn_t (*nvmlDeviceGetProcessUtilization)(nvmlDevice_t device,
                                                  nvmlProcessUtilizationSample_t* utilization,
                                                  unsigned int* process_samples_count,
                                                  unsigned long long last_seen_timestamp_us) = nullptr;
  // KB/s over the driver's last 20 ms window.
  nvmlReturn_t (*nvmlDeviceGetPcieThroughput)(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                              unsigned int* value_kb_per_s) = nullptr;
  // The same bitmask under its current and its deprecated name; the source prefers the first.
  nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons)(nvmlDevice_t device,
                                                         unsigned long long* reasons) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCurrentClocksThrottleReasons)(nvmlDevice_t device,
                                                            unsigned long long* reasons) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTotalEccErrors)(nvmlDevice_t device, nvmlMemoryErrorType_t error_type,
                                              nvmlEccCounterType_t counter_type,
                                              unsigned long long* ecc_counts) = nullptr;
  nvmlReturn_t (*nvmlEventSetCreate)(nvmlEventSet_t* set) = nullptr;
  nvmlReturn_t (*nvmlDeviceRegisterEvents)(nvmlDevice_t device, unsigned long long event_types,
                                           nvmlEventSet_t set) = nullptr;
  // timeout_ms 0: returns at once, TIMEOUT when no event is pending.
  nvmlReturn_t (*nvmlEventSetWait_v2)(nvmlEventSet_t set, nvmlEventData_t* data,
                                      unsigned int timeout_ms) = nullptr;
  nvmlReturn_t (*nvmlEventSetFree)(nvmlEventSet_t set) = nullptr;
  nvmlReturn_t (*nvmlGpmQueryDeviceSupport)(nvmlDevice_t device, nvmlGpmSupport_t* gpm_support) = nullptr;
  nvmlReturn_t (*nvmlGpmSampleAlloc)(nvmlGpmSample_t* gpm_sample) = nullptr;
  nvmlReturn_t (*nvmlGpmSampleFree)(nvmlGpmSample_t gpm_sample) = nullptr;
  nvmlReturn_t (*nvmlGpmSampleGet)(nvmlDevice_t device, nvmlGpmSample_t gpm_sample) = nullptr;
  nvmlReturn_t (*nvmlGpmMetricsGet)(nvmlGpmMetricsGet_t* metrics_get) = nullptr;
};

}  // namespace stepscope::nvml
