// Which NVIDIA architecture a GPU is, and so whether it has tensor cores and which precisions
// they take: what LowPrecisionOpportunity needs before it recommends moving FP32 matrix work to
// them.
//
// Its sources, from the most to the least direct:
// - the GPU's marketing name ("NVIDIA A100-SXM4-40GB", "Tesla T4", "NVIDIA GeForce RTX 3090"), as
//   NVML gives it to a stepscope run's manifest (capabilities.gpus) and as RightSizing's table
//   names an instance type's GPU ("A10G");
// - the architecture a library kernel was built for, from its name ("ampere_sgemm_...",
//   "sm80_xmma_...", "cutlass3x_sm90_..."). cuBLAS and cuDNN also run kernels built for older
//   architectures ("volta_sgemm" is common on Ampere), so a name only says the GPU is *at least*
//   that architecture: a lower bound. Every GPU from Ampere (sm_80) on has tensor cores; Turing
//   (sm_75) does not always (the GeForce GTX 16 series lacks them), so a Volta or Turing lower
//   bound does not establish them;
// - a kernel that ran on tensor cores ("volta_h884gemm", "cutlass_80_tensorop_..."): the GPU has
//   them, whatever else is unknown.
// Tensor cores take FP16 from Volta on, and TF32 and BF16 from Ampere on.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace stepscope::rules {

// In order of generation; kNoTensorCores is any NVIDIA GPU known to lack them (Pascal, Maxwell,
// Kepler, GeForce GTX).
enum class GpuArchitecture : uint8_t {
  kUnknown,
  kNoTensorCores,
  kVolta,
  kTuring,
  kAmpere,
  kAda,
  kHopper,
  kBlackwell,
};

// "unknown", "without tensor cores", "Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell".
const char* GpuArchitectureName(GpuArchitecture architecture);

bool HasTensorCores(GpuArchitecture architecture);
// TF32 and BF16 on tensor cores (torch.set_float32_matmul_precision("high"), bf16 autocast).
bool HasTf32AndBf16(GpuArchitecture architecture);

// The architecture a GPU's name says; kUnknown when the name is not one this knows.
GpuArchitecture ArchitectureFromGpuName(std::string_view gpu_name);

// The architecture a kernel's name says it was built for ("sm80", "ampere", "volta", ...): a lower
// bound on the GPU it ran on. kUnknown when the name says none.
GpuArchitecture ArchitectureFromKernelName(std::string_view kernel_name);

// What is known of one GPU of a run, and how.
struct GpuIdentification {
  GpuArchitecture architecture = GpuArchitecture::kUnknown;
  // Established by a GPU name, an instance type, or kernels built for Ampere or newer; false when
  // only a lower bound that does not settle tensor cores (Volta, Turing) or nothing is known.
  bool known = false;
  std::string source;  // how, for evidence: "GPU name \"NVIDIA A100-SXM4-40GB\" (the run's capabilities)"
};

// Whether a kernel's name says it runs tensor-core instructions: CUTLASS's "tensorop", NVIDIA's
// xmma engines, the WMMA/HMMA/IMMA families, cuBLAS's MMA shapes ("volta_h884gemm",
// "turing_fp16_s1688gemm", "ampere_h16816gemm").
bool KernelRunsOnTensorCores(std::string_view kernel_name);

// What the GPU's kernels showed: the highest architecture their names were built for (`bound`,
// shown by `example`), and whether one ran on tensor cores (which proves the GPU has them).
struct KernelEvidence {
  GpuArchitecture bound = GpuArchitecture::kUnknown;
  std::string example;
  bool tensor_cores = false;
  std::string tensor_core_example;
};

// The first that answers, of: the node's GPU names (`gpu_names`, from the run's capabilities; the
// name of `device` when the names differ), its instance type (instance_capacities.h), and what
// its kernels showed (an architecture of at least Volta once a kernel ran on tensor cores).
GpuIdentification IdentifyGpu(std::span<const std::string> gpu_names, int32_t device, std::string_view instance_type,
                              const KernelEvidence& kernels);

}  // namespace stepscope::rules
