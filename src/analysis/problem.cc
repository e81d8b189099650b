#include "analysis/problem.h"

namespace stepscope::analysis {

const char* ProblemSeverityName(ProblemSeverity severity) {
  switch (severity) {
    case ProblemSeverity::kInfo: return "info";
    case ProblemSeverity::kDataLoss: return "data_loss";
    case ProblemSeverity::kError: return "error";
  }
  return "error";
}

nlohmann::json ProblemToJson(const Problem& problem) {
  return {{"name", problem.name},
          {"severity", ProblemSeverityName(problem.severity)},
          {"count", problem.count},
          {"sentence", problem.sentence}};
}

nlohmann::json ProblemsToJson(const std::vector<Problem>& problems) {
  nlohmann::json out = nlohmann::json::array();
  for (const Problem& problem : problems) out.push_back(ProblemToJson(problem));
  return out;
}

std::string ProblemLine(const Problem& problem) {
  std::string line = problem.severity == ProblemSeverity::kDataLoss ? "data loss: "
                     : problem.severity == ProblemSeverity::kError  ? "error: "
                                                                     : "";
  return line + problem.sentence + " [" + problem.name + "]";
}

std::string FormatRunProblems(const std::vector<Problem>& problems, const std::string& prefix,
                              const std::string& run_path) {
  std::string text;
  size_t shown = 0, hidden = 0;
  for (const Problem& problem : problems) {
    if (!problem.AlwaysShown()) continue;
    if (shown == kShownProblemLines) {
      ++hidden;
      continue;
    }
    ++shown;
    std::string line = ProblemLine(problem);
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

}  // namespace stepscope::analysis
