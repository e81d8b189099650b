// A problem met while loading a run: what was skipped, lost or doubtful, typed so that every
// front end can decide what to show without parsing sentences (the way Perfetto keeps its
// import stats: google/perfetto src/trace_processor/storage/stats.h).
//
// Producers: the loaders and importers (stepscope_loader.h, sagemaker_importer.h,
// kineto_importer.h, detail_operators.h) through ModelBuilder::AddProblem. Readers: every
// command, the report, the exports and the model file (model_file.h stores them).
//
// `name` is a stable identifier (snake_case, never reworded once shipped: scripts and tests
// key on it); `sentence` says what happened and what to do, for people. `count` is how many of
// the thing the name counts (events dropped, frames skipped, files missing): 1 when the
// problem is a single fact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace stepscope::analysis {

enum class ProblemSeverity : uint8_t {
  kInfo = 0,      // worth knowing; the numbers are complete
  kDataLoss = 1,  // some of the run is missing: numbers undercount; always shown
  kError = 2,     // what is there may be wrong (times without a clock anchor, ...): always shown
};
inline constexpr uint8_t kMaxProblemSeverity = 2;
// "info", "data_loss", "error": the spelling in JSON outputs.
const char* ProblemSeverityName(ProblemSeverity severity);

struct Problem {
  std::string name;
  ProblemSeverity severity = ProblemSeverity::kDataLoss;
  uint64_t count = 1;
  std::string sentence;

  // Data loss and errors are shown by every command that reads a run; info only where the
  // command lists everything (info, report).
  bool AlwaysShown() const { return severity != ProblemSeverity::kInfo; }
  bool operator==(const Problem&) const = default;
};

// {"name", "severity" (ProblemSeverityName), "count", "sentence"}: the one JSON spelling, used
// by `stepscope info --json`, the exports and the Python readers.
nlohmann::json ProblemToJson(const Problem& problem);
nlohmann::json ProblemsToJson(const std::vector<Problem>& problems);
// One line for people: "data loss: <sentence> [<name>]" ("error: ", nothing for info).
std::string ProblemLine(const Problem& problem);

// Problem lines a command shows before the rest are counted: a run with thousands of damaged
// frames must not bury the command's own output.
inline constexpr size_t kShownProblemLines = 10;

// What every command that reads a run says about its problems, each line ending in '\n':
// "<prefix>data loss: <sentence> [<name>]" for each always-shown problem, in order, at most
// kShownProblemLines of them; then, when more remain, "<prefix>... and N more problems;
// `stepscope info <run_path>` lists them". `prefix` names the command (and the run, where a
// command reads two): "stepscope compare: RUN_A: ". Used by the C++ commands
// (cli/run_problems.h) and by `stepscope rules --custom` (python/src/rules_binding.cc).
std::string FormatRunProblems(const std::vector<Problem>& problems, const std::string& prefix,
                              const std::string& run_path);

}  // namespace stepscope::analysis
