#include "rules/gpu_architecture.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "rules/instance_capacities.h"

namespace stepscope::rules {
namespace {

// Alphanumeric runs of `text`, upper-cased: "NVIDIA A100-SXM4-40GB" -> NVIDIA, A100, SXM4, 40GB.
std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

bool IsNumber(std::string_view token) {
  if (token.empty()) return false;
  for (const char c : token) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// `token` is `prefix` followed by one of `models` ("A" + "100"), optionally followed by letters
// only ("V100S", "A10G", "L40S").
bool IsModel(std::string_view token, std::string_view prefix, std::initializer_list<std::string_view> models) {
  if (!token.starts_with(prefix)) return false;
  const std::string_view rest = token.substr(prefix.size());
  for (const std::string_view model : models) {
    if (!rest.starts_with(model)) continue;
    const std::string_view suffix = rest.substr(model.size());
    bool letters = true;
    for (const char c : suffix) letters = letters && std::isalpha(static_cast<unsigned char>(c));
    if (letters) return true;
  }
  return false;
}

// GeForce and workstation "RTX <number>": the thousands say the generation (2080 Turing, 3090
// Ampere, 4090 Ada, 5090 Blackwell). Quadro RTX 4000-8000 are Turing.
GpuArchitecture FromRtxNumber(std::string_view number, bool quadro) {
  if (quadro) return GpuArchitecture::kTuring;
  if (number.size() != 4) return GpuArchitecture::kUnknown;
  switch (number[0]) {
    case '2': return GpuArchitecture::kTuring;
    case '3': return GpuArchitecture::kAmpere;
    case '4': return GpuArchitecture::kAda;
    case '5': return GpuArchitecture::kBlackwell;
    default: return GpuArchitecture::kUnknown;
  }
}

GpuArchitecture FromComputeCapability(int major_minor) {
  if (major_minor >= 100) return GpuArchitecture::kBlackwell;
  if (major_minor >= 90) return GpuArchitecture::kHopper;
  if (major_minor == 89) return GpuArchitecture::kAda;
  if (major_minor >= 80) return GpuArchitecture::kAmpere;
  if (major_minor == 75) return GpuArchitecture::kTuring;
  if (major_minor >= 70) return GpuArchitecture::kVolta;
  return GpuArchitecture::kUnknown;  // an older lower bound says nothing about the GPU
}

}  // namespace

const char* GpuArchitectureName(GpuArchitecture architecture) {
  switch (architecture) {
    case GpuArchitecture::kUnknown: return "unknown";
    case GpuArchitecture::kNoTensorCores: return "without tensor cores";
    case GpuArchitecture::kVolta: return "Volta";
    case GpuArchitecture::kTuring: return "Turing";
    case GpuArchitecture::kAmpere: return "Ampere";
    case GpuArchitecture::kAda: return "Ada";
    case GpuArchitecture::kHopper: return "Hopper";
    case GpuArchitecture::kBlackwell: return "Blackwell";
  }
  return "unknown";
}

bool HasTensorCores(GpuArchitecture architecture) {
  return architecture >= GpuArchitecture::kVolta;
}

bool HasTf32AndBf16(GpuArchitecture architecture) {
  return architecture >= GpuArchitecture::kAmpere;
}

GpuArchitecture ArchitectureFromGpuName(std::string_view gpu_name) {
  const std::vector<std::string> tokens = Tokens(gpu_name);
  // A generation named outright wins: "NVIDIA RTX 6000 Ada Generation" is no Quadro RTX 6000.
  for (const std::string& token : tokens) {
    if (token == "BLACKWELL") return GpuArchitecture::kBlackwell;
    if (token == "ADA") return GpuArchitecture::kAda;
    if (token == "HOPPER") return GpuArchitecture::kHopper;
  }
  bool quadro = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    const std::string_view next = i + 1 < tokens.size() ? std::string_view(tokens[i + 1]) : std::string_view();
    if (token == "QUADRO") quadro = true;
    if (IsModel(token, "B", {"100", "200", "300"}) || IsModel(token, "GB", {"200", "300"})) {
      return GpuArchitecture::kBlackwell;
    }
    if (IsModel(token, "H", {"100", "200", "800", "20"}) || IsModel(token, "GH", {"200"})) {
      return GpuArchitecture::kHopper;
    }
    if (IsModel(token, "L", {"4", "20", "40"})) return GpuArchitecture::kAda;
    if (IsModel(token, "A", {"100", "800", "30", "40", "10", "16", "2"}) ||
        (token.size() == 5 && token[0] == 'A' && IsNumber(std::string_view(token).substr(1)))) {
      return GpuArchitecture::kAmpere;  // A100 ... A2, and the RTX A2000-A6000 workstation cards
    }
    if (IsModel(token, "V", {"100"}) || IsModel(token, "GV", {"100"}) || (token == "TITAN" && next == "V")) {
      return GpuArchitecture::kVolta;
    }
    if (IsModel(token, "T", {"4"}) || (token == "TITAN" && next == "RTX")) return GpuArchitecture::kTuring;
    if (token == "RTX" && IsNumber(next)) return FromRtxNumber(next, quadro);
    if (token == "GTX" || IsModel(token, "P", {"100", "40", "4", "6"}) || IsModel(token, "K", {"80", "40", "20"}) ||
        IsModel(token, "M", {"60", "40", "10"}) || (token == "TITAN" && (next == "X" || next == "XP"))) {
      return GpuArchitecture::kNoTensorCores;
    }
  }
  return GpuArchitecture::kUnknown;
}

GpuArchitecture ArchitectureFromKernelName(std::string_view kernel_name) {
  const std::vector<std::string> tokens = Tokens(kernel_name);
  GpuArchitecture best = GpuArchitecture::kUnknown;
  auto offer = [&best](GpuArchitecture architecture) {
    if (architecture > best) best = architecture;
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (token == "VOLTA") offer(GpuArchitecture::kVolta);
    else if (token == "TURING") offer(GpuArchitecture::kTuring);
    else if (token == "AMPERE") offer(GpuArchitecture::kAmpere);
    else if (token == "HOPPER") offer(GpuArchitecture::kHopper);
    else if (token == "BLACKWELL") offer(GpuArchitecture::kBlackwell);
    if (!token.starts_with("SM")) continue;
    // "SM80", "SM90A", "SM100" or "SM" "80" ("sm_80").
    std::string_view digits = std::string_view(token).substr(2);
    if (digits.empty() && i + 1 < tokens.size()) digits = tokens[i + 1];
    size_t length = 0;
    while (length < digits.size() && std::isdigit(static_cast<unsigned char>(digits[length]))) ++length;
    if (length < 2 || length > 3) continue;
    offer(FromComputeCapability(std::stoi(std::string(digits.substr(0, length)))));
  }
  return best;
}

bool KernelRunsOnTensorCores(std::string_view kernel_name) {
  for (const std::string_view token : {"tensorop", "xmma", "wmma", "hmma", "imma", "884gemm", "1688gemm", "16816gemm",
                                       "1688tf32gemm", "8816gemm"}) {
    if (kernel_name.find(token) != std::string_view::npos) return true;
  }
  return false;
}

GpuIdentification IdentifyGpu(std::span<const std::string> gpu_names, int32_t device, std::string_view instance_type,
                              const KernelEvidence& kernels) {
  GpuIdentification result;
  if (!gpu_names.empty()) {
    // CUDA's device numbers need not be NVML's (CUDA_VISIBLE_DEVICES), so a name is only taken by
    // index when the node's GPUs are not all of one architecture.
    bool alike = true;
    for (const std::string& name : gpu_names) {
      alike = alike && ArchitectureFromGpuName(name) == ArchitectureFromGpuName(gpu_names.front());
    }
    const bool by_index = !alike && device >= 0 && static_cast<size_t>(device) < gpu_names.size();
    if (alike || by_index) {
      const std::string& name = by_index ? gpu_names[device] : gpu_names.front();
      result.architecture = ArchitectureFromGpuName(name);
      if (result.architecture != GpuArchitecture::kUnknown) {
        result.known = true;
        result.source = "GPU name \"" + name + "\" (as the run recorded its GPUs)";
        return result;
      }
    }
  }
  if (!instance_type.empty()) {
    const std::optional<InstanceType> type = FindKnownInstanceType(instance_type);
    if (type && !type->gpu_model.empty()) {
      result.architecture = ArchitectureFromGpuName(type->gpu_model);
      if (result.architecture != GpuArchitecture::kUnknown) {
        result.known = true;
        result.source = "instance type " + std::string(instance_type) + " (" + type->gpu_model + ")";
        return result;
      }
    }
  }
  result.architecture = kernels.bound;
  if (kernels.tensor_cores && !HasTf32AndBf16(kernels.bound)) {
    result.architecture = std::max(kernels.bound, GpuArchitecture::kVolta);
    result.known = true;
    result.source = "a kernel that ran on tensor cores (\"" + kernels.tensor_core_example + "\")";
    return result;
  }
  if (kernels.bound == GpuArchitecture::kUnknown) {
    result.source = "no GPU name, instance type or architecture-specific kernel name";
    return result;
  }
  result.known = HasTf32AndBf16(kernels.bound);
  result.source = std::string("kernels built for ") + GpuArchitectureName(kernels.bound) + " or newer (\"" +
                  kernels.example + "\")";
  if (!result.known) result.source += ", which does not settle tensor cores (GeForce GTX 16 GPUs lack them)";
  return result;
}

}  // namespace stepscope::rules
