#include "analysis/kernel_precision.h"

#include <string>

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

std::string Precision(std::string_view kernel) { return KernelPrecisionName(PrecisionFromKernelName(kernel).precision); }

// Names as they appear in the Kineto fixtures (tests/fixtures/kineto) and in CUTLASS's and
// cuBLAS's documented naming.
TEST(KernelPrecision, ReadsTheTypesThatLibrariesNameTheirKernelsAfter) {
  EXPECT_EQ(Precision("ampere_sgemm_32x32_sliced1x4_tn"), "FP32");
  EXPECT_EQ(Precision("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1"), "FP32");
  EXPECT_EQ(Precision("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16"), "TF32");
  EXPECT_EQ(Precision("void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_128x128_16x4_nhwc>"), "TF32");
  EXPECT_EQ(Precision("cutlass_tensorop_s1688tf32gemm_256x128_16x3_nn_align4"), "TF32");
  // CUTLASS's s1688gemm without tf32 emulates FP32 with 3xTF32: FP32 precision.
  EXPECT_EQ(Precision("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(...)"), "FP32");
  EXPECT_EQ(Precision("cutlass_tensorop_s16816gemm_f16_128x128_32x5_nt_align8"), "FP16");
  EXPECT_EQ(Precision("ampere_h16816gemm_256x128_ldg8_stages_32x3_nn"), "FP16");
  EXPECT_EQ(Precision("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x64x32"), "FP16");
  EXPECT_EQ(Precision("ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nn"), "BF16");
  EXPECT_EQ(Precision("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>"), "BF16");
  EXPECT_EQ(Precision("void split_embedding_codegen_forward_unweighted_kernel<c10::Half, c10::Half, float>"), "FP16");
  EXPECT_EQ(Precision("void fbgemm_gpu::(anonymous namespace)::_FP8rowwise_to_float_cuda_kernel<float>"), "FP8");
  EXPECT_EQ(Precision("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n"), "FP8");
  EXPECT_EQ(Precision("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"), "INT8");
  EXPECT_EQ(Precision("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"), "FP32");
  EXPECT_EQ(Precision("volta_dgemm_128x64_nn"), "FP64");
  EXPECT_EQ(Precision("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<double, ...>>"), "FP64");
  // The element type is float; the doubles are the uniform distribution's bounds.
  EXPECT_EQ(Precision("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
                      "at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, "
                      "double, double, at::CUDAGeneratorImpl*)"),
            "FP32");
  EXPECT_EQ(Precision("void fft2d_r2c_32x32<float, false, 0u, false>(float2*, float const*)"), "FP32");
}

TEST(KernelPrecision, SaysUnknownWhenTheNameStatesNoType) {
  EXPECT_EQ(Precision("triton_poi_fused_add_cos_sin_0"), "unknown");
  EXPECT_EQ(Precision("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<long>>"), "unknown");
  // "gc" is no BLAS type prefix, and "implicit_gemm" has no type letter.
  EXPECT_EQ(Precision("ampere_gcgemm_64x64_nt"), "unknown");
  EXPECT_EQ(Precision("xmma_implicit_gemm_kernel"), "unknown");
  EXPECT_EQ(PrecisionFromKernelName("triton_poi_fused_add_cos_sin_0").pattern, "");
}

TEST(KernelPrecision, NamesThePatternThatDecided) {
  EXPECT_EQ(PrecisionFromKernelName("ampere_sgemm_32x32_sliced1x4_tn").pattern, "s<shape>gemm");
  EXPECT_EQ(PrecisionFromKernelName("ampere_h16816gemm_256x128").pattern, "h<shape>gemm");
  EXPECT_EQ(PrecisionFromKernelName("sm80_xmma_fprop_implicit_gemm_tf32f32").pattern, "tf32");
}

TEST(KernelPrecision, ReadsOperatorNamesWithoutBlasLetters) {
  EXPECT_EQ(PrecisionFromOperatorName("aten::_scaled_mm").precision, KernelPrecision::kFp8);
  EXPECT_EQ(PrecisionFromOperatorName("aten::_int_mm").precision, KernelPrecision::kInt8);
  EXPECT_EQ(PrecisionFromOperatorName("fbgemm::FloatToFP8RowwiseQuantized").precision, KernelPrecision::kFp8);
  EXPECT_EQ(PrecisionFromOperatorName("aten::mm").precision, KernelPrecision::kUnknown);
  EXPECT_EQ(PrecisionFromOperatorName("aten::addmm").precision, KernelPrecision::kUnknown);
}

}  // namespace
}  // namespace stepscope::analysis
