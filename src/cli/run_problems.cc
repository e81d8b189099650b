#include "cli/run_problems.h"

namespace stepscope::cli {

void PrintRunProblems(const std::vector<analysis::Problem>& problems, const std::string& prefix,
                      const std::string& run_path, FILE* out) {
  const std::string text = analysis::FormatRunProblems(problems, prefix, run_path);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

}  // namespace stepscope::cli
