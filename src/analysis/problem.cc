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

}  // namespace stepscope::analysis
