// GPU names as NVML and PyTorch report them, and the library kernel names of real traces
// (tests/fixtures/kineto), against the architecture they say.
#include "rules/gpu_architecture.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace stepscope::rules {
namespace {

// Kernels whose names showed `bound`, none of them on tensor cores.
KernelEvidence BuiltFor(GpuArchitecture bound, std::string example) {
  KernelEvidence kernels;
  kernels.bound = bound;
  kernels.example = std::move(example);
  return kernels;
}

TEST(GpuArchitecture, MarketingNamesGiveTheirGeneration) {
  const struct {
    const char* name;
    GpuArchitecture architecture;
  } kCases[] = {
      {"Tesla V100-SXM2-32GB", GpuArchitecture::kVolta},
      {"Quadro GV100", GpuArchitecture::kVolta},
      {"NVIDIA TITAN V", GpuArchitecture::kVolta},
      {"Tesla T4", GpuArchitecture::kTuring},
      {"NVIDIA GeForce RTX 2080 Ti", GpuArchitecture::kTuring},
      {"Quadro RTX 6000", GpuArchitecture::kTuring},
      {"NVIDIA A100-PG509-200", GpuArchitecture::kAmpere},
      {"NVIDIA A100-SXM4-80GB", GpuArchitecture::kAmpere},
      {"NVIDIA A10G", GpuArchitecture::kAmpere},
      {"NVIDIA RTX A6000", GpuArchitecture::kAmpere},
      {"NVIDIA GeForce RTX 3090", GpuArchitecture::kAmpere},
      {"NVIDIA L4", GpuArchitecture::kAda},
      {"NVIDIA L40S", GpuArchitecture::kAda},
      {"NVIDIA RTX 6000 Ada Generation", GpuArchitecture::kAda},
      {"NVIDIA GeForce RTX 4090", GpuArchitecture::kAda},
      {"NVIDIA H100 80GB HBM3", GpuArchitecture::kHopper},
      {"NVIDIA H200", GpuArchitecture::kHopper},
      {"NVIDIA GH200 480GB", GpuArchitecture::kHopper},
      {"NVIDIA B200", GpuArchitecture::kBlackwell},
      {"NVIDIA GeForce RTX 5090", GpuArchitecture::kBlackwell},
      {"Tesla P100-PCIE-16GB", GpuArchitecture::kNoTensorCores},
      {"Tesla K80", GpuArchitecture::kNoTensorCores},
      {"NVIDIA GeForce GTX 1660 SUPER", GpuArchitecture::kNoTensorCores},
      {"NVIDIA T400", GpuArchitecture::kUnknown},  // Turing without tensor cores: not a T4
      {"Some Accelerator 9000", GpuArchitecture::kUnknown},
      {"", GpuArchitecture::kUnknown},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(GpuArchitectureName(ArchitectureFromGpuName(c.name)), std::string(GpuArchitectureName(c.architecture)))
        << c.name;
  }
}

TEST(GpuArchitecture, KernelNamesGiveTheArchitectureTheyWereBuiltFor) {
  EXPECT_EQ(ArchitectureFromKernelName("ampere_sgemm_32x32_sliced1x4_tn"), GpuArchitecture::kAmpere);
  EXPECT_EQ(ArchitectureFromKernelName("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw"),
            GpuArchitecture::kAmpere);
  EXPECT_EQ(ArchitectureFromKernelName("cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1"), GpuArchitecture::kVolta);
  EXPECT_EQ(ArchitectureFromKernelName("void cutlass::Kernel<cutlass3x_sm90_tensorop_s64x128x16gemm_f16_f16>"),
            GpuArchitecture::kHopper);
  EXPECT_EQ(ArchitectureFromKernelName("sm_89_kernel"), GpuArchitecture::kAda);
  EXPECT_EQ(ArchitectureFromKernelName("sm100_xmma_gemm_bf16bf16_bf16f32"), GpuArchitecture::kBlackwell);
  EXPECT_EQ(ArchitectureFromKernelName("maxwell_sgemm_128x64_nn"), GpuArchitecture::kUnknown);
  EXPECT_EQ(ArchitectureFromKernelName("sm50_kernel"), GpuArchitecture::kUnknown);  // too old to say anything
  EXPECT_EQ(ArchitectureFromKernelName("void at::native::small_kernel<float>"), GpuArchitecture::kUnknown);
}

TEST(GpuArchitecture, TensorCoresTakeFp16FromVoltaAndTf32FromAmpere) {
  EXPECT_FALSE(HasTensorCores(GpuArchitecture::kUnknown));
  EXPECT_FALSE(HasTensorCores(GpuArchitecture::kNoTensorCores));
  EXPECT_TRUE(HasTensorCores(GpuArchitecture::kVolta));
  EXPECT_FALSE(HasTf32AndBf16(GpuArchitecture::kTuring));
  EXPECT_TRUE(HasTf32AndBf16(GpuArchitecture::kAmpere));
  EXPECT_TRUE(HasTf32AndBf16(GpuArchitecture::kBlackwell));
}

TEST(IdentifyGpu, TheGpuNameWinsOverTheInstanceTypeAndTheKernels) {
  const std::vector<std::string> names = {"NVIDIA H100 80GB HBM3"};
  const GpuIdentification gpu =
      IdentifyGpu(names, 0, "ml.p3.2xlarge", BuiltFor(GpuArchitecture::kAmpere, "ampere_sgemm"));
  EXPECT_EQ(gpu.architecture, GpuArchitecture::kHopper);
  EXPECT_TRUE(gpu.known);
  EXPECT_EQ(gpu.source, "GPU name \"NVIDIA H100 80GB HBM3\" (as the run recorded its GPUs)");
}

TEST(IdentifyGpu, MixedGpusAreTakenByDeviceIndex) {
  const std::vector<std::string> names = {"Tesla T4", "NVIDIA A10G"};
  EXPECT_EQ(IdentifyGpu(names, 1, "", {}).architecture, GpuArchitecture::kAmpere);
  EXPECT_FALSE(IdentifyGpu(names, 5, "", {}).known);
}

TEST(IdentifyGpu, TheInstanceTypeNamesItsGpu) {
  const GpuIdentification gpu = IdentifyGpu({}, 0, "g4dn.xlarge", {});
  EXPECT_EQ(gpu.architecture, GpuArchitecture::kTuring);
  EXPECT_TRUE(gpu.known);
  EXPECT_EQ(gpu.source, "instance type g4dn.xlarge (T4)");
  EXPECT_FALSE(IdentifyGpu({}, 0, "c5.2xlarge", {}).known);
}

TEST(IdentifyGpu, KernelsSettleTensorCoresOnlyFromAmpereOn) {
  const GpuIdentification ampere = IdentifyGpu({}, 0, "", BuiltFor(GpuArchitecture::kAmpere, "sm80_xmma_gemm"));
  EXPECT_TRUE(ampere.known);
  EXPECT_EQ(ampere.source, "kernels built for Ampere or newer (\"sm80_xmma_gemm\")");
  const GpuIdentification volta = IdentifyGpu({}, 0, "", BuiltFor(GpuArchitecture::kVolta, "volta_sgemm_128x64_nn"));
  EXPECT_FALSE(volta.known);
  EXPECT_NE(volta.source.find("does not settle tensor cores"), std::string::npos);
  EXPECT_FALSE(IdentifyGpu({}, 0, "", {}).known);
}

TEST(IdentifyGpu, AKernelOnTensorCoresProvesThem) {
  KernelEvidence kernels = BuiltFor(GpuArchitecture::kVolta, "volta_sgemm_128x64_nn");
  kernels.tensor_cores = true;
  kernels.tensor_core_example = "volta_h884gemm_64x64_nn";
  const GpuIdentification gpu = IdentifyGpu({}, 0, "", kernels);
  EXPECT_TRUE(gpu.known);
  EXPECT_EQ(gpu.architecture, GpuArchitecture::kVolta);
  EXPECT_EQ(gpu.source, "a kernel that ran on tensor cores (\"volta_h884gemm_64x64_nn\")");
  EXPECT_TRUE(KernelRunsOnTensorCores("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>"));
  EXPECT_TRUE(KernelRunsOnTensorCores("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn"));
  EXPECT_FALSE(KernelRunsOnTensorCores("ampere_sgemm_128x64_nn"));
  EXPECT_FALSE(KernelRunsOnTensorCores("cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1"));
}

}  // namespace
}  // namespace stepscope::rules
