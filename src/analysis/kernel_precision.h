// The numeric precision of a GPU kernel, inferred from its name (and, where the kernel's name
// says nothing, from the name of the operator that launched it), for the GPU page's "time and
// launches per precision" (gpu_activity.h) and the rules that look for FP32 matmul time.
//
// Names are all there is: CUPTI and Kineto record no data type per kernel. The libraries that
// write most of a training job's GPU time name their kernels after their types, and those
// conventions are what the patterns below read (docs/report-model.md "gpu_activity" lists them):
// - BLAS type letters (cuBLAS, after the reference BLAS): s = FP32, d = FP64, c = complex FP32,
//   h = FP16, before "gemm" ("ampere_sgemm_32x32_sliced1x4_tn", "ampere_h16816gemm_...");
//   cuDNN does the same before "cudnn" ("cudnn_ampere_scudnn_128x64_relu_...").
// - CUTLASS 2.x procedural names: "cutlass_tensorop_<accumulator><instruction shape><op>_<A type>":
//   "s1688gemm_f16" is FP16 operands accumulated in FP32; with no operand type the operands are
//   the accumulator's type, and CUTLASS's own example 27 spells the TF32 variants out
//   ("s1688gemm" emulates FP32 with 3xTF32, "s1688tf32gemm" is 1xTF32, "s1688gemm_tf32" takes
//   TF32), so only a named "tf32" means TF32. CUTLASS 3.x names every operand
//   ("cutlass3x_sm90_tensorop_s64x128x16gemm_f16_f16_f32_f32_...").
// - cuDNN/cuBLAS xmma kernels name operand types in full ("sm80_xmma_fprop_implicit_gemm_
//   tf32f32_tf32f32_f32_...", "sm80_xmma_gemm_f16f16_f16f32_f32_...", "..._bf16bf16_...").
// - PyTorch's and NCCL's templated kernels carry their C++ element type ("<float, float>",
//   "c10::Half", "c10::BFloat16", "ncclKernel_AllReduce_RING_LL_Sum_float", "..._int8_t").
// - FP8 kernels name the format ("e4m3", "e5m2", "fp8"); PyTorch's FP8 matmul operator is
//   aten::_scaled_mm and its int8 matmul aten::_int_mm.
// Tokens are looked for in this order and the first found decides: FP8, INT8, BF16, TF32, FP16,
// FP32, FP64 — the narrowest type a kernel names wins (a float -> half conversion counts as FP16;
// a float kernel that takes double parameters counts as FP32).
// A name with none of them (Triton's "triton_poi_fused_add_0", integer index kernels) is kUnknown:
// shown as unknown, never guessed. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace stepscope::analysis {

enum class KernelPrecision : uint8_t { kFp8, kInt8, kBf16, kTf32, kFp16, kFp64, kFp32, kUnknown };
inline constexpr int kKernelPrecisionCount = 8;

// "FP8", "INT8", "BF16", "TF32", "FP16", "FP64", "FP32", "unknown".
const char* KernelPrecisionName(KernelPrecision precision);

struct PrecisionMatch {
  KernelPrecision precision = KernelPrecision::kUnknown;
  std::string_view pattern;  // the token that decided ("tf32", "sgemm", "<float"); "" when unknown
};

// The precision a kernel's name states.
PrecisionMatch PrecisionFromKernelName(std::string_view kernel_name);
// The precision an operator's name states ("aten::_scaled_mm" -> FP8, "fbgemm::..._fp8" -> FP8);
// most operators ("aten::mm") state none.
PrecisionMatch PrecisionFromOperatorName(std::string_view operator_name);

}  // namespace stepscope::analysis
