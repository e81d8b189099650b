#include "cli/run_problems.h"

namespace stepscope::cli {

std::string FormatRunProblems(const std::vector<analysis::Problem>& problems, const std::string& prefix,
                              const std::string& run_path) {
  std::string text;
  size_t shown = 0, hidden = 0;
  for (const analysis::Problem& problem : problems) {
    if (!problem.AlwaysShown()) continue;
    if (shown == kShownProblemLines) {
      ++hidden;
      continue;
    }
    ++shown;
    std::string line = analysis::ProblemLine(problem);
    // One problem, one line: a sentence built from file names must not break the layout.
    for (char& c : line) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    text += prefix + line + "\n";
  }
  if (hidden > 0) {
    text += prefix + "... and " + std::to_string(hidden) + " more problem" + (hidden == 1 ? "" : "s") +
            "; `stepscope info " + run_path + "` lists them\n";
  }
  return text;
}

void PrintRunProblems(const std::vector<analysis::Problem>& problems, const std::string& prefix,
                      const std::string& run_path, FILE* out) {
  const std::string text = FormatRunProblems(problems, prefix, run_path);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

}  // namespace stepscope::cli
