// Messages for failed NVML calls: each keeps the call, NVML's numeric code and NVML's own text,
// and says what to do next (the shape of DCGM's dcgm_errors.h catalogue).
//
// Callers: NvmlLoader (load-time failures) and NvmlGpuSource (poll-time failures).
// Threading: pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "platform/nvml/nvml_entry_points.h"

namespace stepscope {

// NVML's text for `code` from nvmlErrorString; "no text from NVML" when the library gives none
// (or the entry point is not resolved yet).
std::string NvmlErrorText(const nvml::NvmlEntryPoints& nvml, nvml::nvmlReturn_t code);

// The next step for a user who sees `code`, e.g. for kErrorGpuIsLost: "the GPU stopped
// responding; check `nvidia-smi` and the kernel log (dmesg) for Xid errors".
std::string_view NvmlErrorNextStep(nvml::nvmlReturn_t code);

// "<call> failed with NVML error <code> (<NVML text>)". `call` names the function and its
// subject, e.g. "nvmlDeviceGetPowerUsage(gpu1)".
std::string FormatNvmlCallError(const nvml::NvmlEntryPoints& nvml, std::string_view call,
                                nvml::nvmlReturn_t code);

}  // namespace stepscope
