#include "platform/nvml/nvml_errors.h"

namespace stepscope {

std::string NvmlErrorText(const nvml::NvmlEntryPoints& nvml, nvml::nvmlReturn_t code) {
  const char* text = nvml.nvmlErrorString ? nvml.nvmlErrorString(code) : nullptr;
  if (text == nullptr || *text == '\0') return "no text from NVML";
  return text;
}

std::string_view NvmlErrorNextStep(nvml::nvmlReturn_t code) {
  switch (code) {
    case nvml::kErrorUninitialized:
      return "NVML was used before nvmlInit; this is a stepscope bug, please report it";
    case nvml::kErrorNotSupported:
      return "this GPU or driver does not report it; nothing to do";
    case nvml::kErrorNoPermission:
      return "the user running stepscope may not query this GPU; in a container, expose the "
             "GPUs (docker --gpus all) or run as a user with access to /dev/nvidia*";
    case nvml::kErrorInsufficientPower:
      return "the GPU lacks external power; check its power cables";
    case nvml::kErrorDriverNotLoaded:
      return "the NVIDIA kernel driver is not loaded; check `nvidia-smi` and `lsmod | grep "
             "nvidia`, then load the driver or reboot";
    case nvml::kErrorTimeout:
    case nvml::kErrorIrqIssue:
      return "the driver did not answer in time; check `nvidia-smi` and the kernel log (dmesg)";
    case nvml::kErrorLibraryNotFound:
    case nvml::kErrorFunctionNotFound:
      return "the NVML library is incomplete or too old; reinstall or update the NVIDIA driver";
    case nvml::kErrorCorruptedInforom:
      return "the GPU's infoROM is corrupted; contact the hardware vendor";
    case nvml::kErrorGpuIsLost:
      return "the GPU stopped responding or fell off the bus; check `nvidia-smi` and the kernel "
             "log (dmesg) for Xid errors";
    case nvml::kErrorResetRequired:
      return "the GPU needs a reset; run `nvidia-smi -r` or reboot";
    case nvml::kErrorOperatingSystem:
      return "the operating system blocked the request; check the kernel log (dmesg)";
    case nvml::kErrorLibRmVersionMismatch:
      return "libnvidia-ml and the loaded kernel driver differ in version (driver upgraded "
             "without a reboot?); reboot or reinstall the driver";
    case nvml::kErrorMemory:
      return "NVML ran out of host memory; free memory on this machine";
    default:
      return "check `nvidia-smi` on this machine";
  }
}

std::string FormatNvmlCallError(const nvml::NvmlEntryPoints& nvml, std::string_view call,
                                nvml::nvmlReturn_t code) {
  std::string message(call);
  message += " failed with NVML error ";
  message += std::to_string(code);
  message += " (";
  message += NvmlErrorText(nvml, code);
  message += ")";
  return message;
}

}  // namespace stepscope
