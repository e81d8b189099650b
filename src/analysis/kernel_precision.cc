#include "analysis/kernel_precision.h"

#include <array>
#include <cctype>
#include <span>
#include <string>

namespace stepscope::analysis {
namespace {

struct PrecisionTokens {
  KernelPrecision precision;
  std::array<std::string_view, 5> substrings;  // lower case; "" ends the list
  std::string_view type_letters;                // BLAS type letters before "gemm"/"cudnn"/... (see below)
};

// Checked in this order; the first precision with a hit decides (kernel_precision.h says why).
// "f16" is safe after "bf16" has been looked for, "f32" after "tf32", "float" after "bfloat16",
// "tfloat32" and "float8". FP32 before FP64: PyTorch's float kernels name double parameters
// ("uniform_kernel(at::TensorIteratorBase&, double, double, ...)" in a <float, 4, ...> kernel).
constexpr std::array<PrecisionTokens, 7> kTokens = {{
    {KernelPrecision::kFp8, {"fp8", "e4m3", "e5m2", "float8", ""}, ""},
    {KernelPrecision::kInt8, {"int8", "imma", "i8i8", "s8s8", "_s8_"}, ""},
    {KernelPrecision::kBf16, {"bf16", "bfloat16", "", "", ""}, ""},
    {KernelPrecision::kTf32, {"tf32", "tfloat32", "", "", ""}, ""},
    {KernelPrecision::kFp16, {"fp16", "f16", "half", "", ""}, "h"},
    {KernelPrecision::kFp32, {"fp32", "f32", "float", "", ""}, "sc"},
    {KernelPrecision::kFp64, {"fp64", "f64", "double", "dmma", ""}, "d"},
}};

// The operations whose leading letter names the type (cuBLAS "sgemm", "h16816gemm"; cuDNN
// "scudnn"; CUTLASS "s1688fprop"): the letter, then optional instruction-shape digits, then the
// operation, with no other letter before the type letter ("implicit_gemm" has none).
constexpr std::array<std::string_view, 5> kTypedOperations = {"gemm", "cudnn", "fprop", "dgrad", "wgrad"};

// The type letter of a typed operation in `name` that is one of `letters`, or 0.
char TypeLetter(std::string_view name, std::string_view letters) {
  for (std::string_view operation : kTypedOperations) {
    for (size_t at = name.find(operation); at != std::string_view::npos; at = name.find(operation, at + 1)) {
      size_t letter = at;
      while (letter > 0 && std::isdigit(static_cast<unsigned char>(name[letter - 1]))) --letter;
      if (letter == 0) continue;
      --letter;
      if (letters.find(name[letter]) == std::string_view::npos) continue;
      if (letter > 0 && std::isalpha(static_cast<unsigned char>(name[letter - 1]))) continue;
      return name[letter];
    }
  }
  return 0;
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

PrecisionMatch Match(std::string_view name, bool type_letters) {
  const std::string lower = Lower(name);
  for (const PrecisionTokens& tokens : kTokens) {
    for (std::string_view token : tokens.substrings) {
      if (!token.empty() && lower.find(token) != std::string::npos) return {tokens.precision, token};
    }
    if (type_letters && !tokens.type_letters.empty()) {
      if (const char letter = TypeLetter(lower, tokens.type_letters); letter != 0) {
        // Static storage for the pattern's view: "<letter>gemm"-style, named by its letter.
        static constexpr std::string_view kLetterPatterns[] = {"h<shape>gemm", "d<shape>gemm", "s<shape>gemm",
                                                               "c<shape>gemm"};
        const size_t index = letter == 'h' ? 0 : letter == 'd' ? 1 : letter == 's' ? 2 : 3;
        return {tokens.precision, kLetterPatterns[index]};
      }
    }
  }
  return {};
}

}  // namespace

const char* KernelPrecisionName(KernelPrecision precision) {
  switch (precision) {
    case KernelPrecision::kFp8: return "FP8";
    case KernelPrecision::kInt8: return "INT8";
    case KernelPrecision::kBf16: return "BF16";
    case KernelPrecision::kTf32: return "TF32";
    case KernelPrecision::kFp16: return "FP16";
    case KernelPrecision::kFp64: return "FP64";
    case KernelPrecision::kFp32: return "FP32";
    case KernelPrecision::kUnknown: break;
  }
  return "unknown";
}

PrecisionMatch PrecisionFromKernelName(std::string_view kernel_name) { return Match(kernel_name, true); }

PrecisionMatch PrecisionFromOperatorName(std::string_view operator_name) {
  // PyTorch's FP8 and int8 matmuls say so only by their names.
  if (operator_name.find("_scaled_mm") != std::string_view::npos) return {KernelPrecision::kFp8, "_scaled_mm"};
  if (operator_name.find("_int_mm") != std::string_view::npos) return {KernelPrecision::kInt8, "_int_mm"};
  // Operator names carry no BLAS letters: "aten::addmm" is not "d" + "mm".
  return Match(operator_name, false);
}

}  // namespace stepscope::analysis
