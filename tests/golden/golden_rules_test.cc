// Golden tests of the rules (STYLE.md §6, the shape of Perfetto's diff tests): every case
// directory tests/golden/rules/<case>/ holds input/ (a SageMaker profiler-output folder),
// optionally parameters.json (a rules parameter section, profiler_report.h), and expected/ (the
// driver's outputs: <Rule>.json and rules.json). The test imports input/, runs the driver offline
// and compares every file, numbers to 1e-9 relative, printing each difference with its JSON path.
//
// STEPSCOPE_REBASELINE=1 rewrites expected/ from the current rules instead (review the diff
// before committing it). tests/golden/README.md says how to add a case.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/sagemaker_importer.h"
#include "rules/builtin_rules.h"
#include "rules/profiler_report.h"

namespace stepscope {
namespace {

constexpr double kRelativeTolerance = 1e-9;
constexpr size_t kMaxDifferencesShown = 40;

const std::string kCasesDir = STEPSCOPE_GOLDEN_CASES_DIR;

bool IsDirectory(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> cases;
  for (const std::string& name : ListDirectory(kCasesDir)) {
    if (IsDirectory(kCasesDir + "/" + name + "/input")) cases.push_back(name);
  }
  return cases;
}

bool ReadText(const std::string& path, std::string* text) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return true;
}

bool NumbersEqual(double expected, double actual) {
  if (expected == actual) return true;
  const double scale = std::max(std::fabs(expected), std::fabs(actual));
  return std::fabs(expected - actual) <= kRelativeTolerance * scale;
}

std::string Short(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > 120 ? text.substr(0, 117) + "..." : text;
}

// Appends "path: expected X, got Y" lines for every difference between the two documents.
void Compare(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path,
             std::vector<std::string>* differences) {
  if (expected.is_number() && actual.is_number()) {
    if (!NumbersEqual(expected.get<double>(), actual.get<double>())) {
      differences->push_back(path + ": expected " + Short(expected) + ", got " + Short(actual));
    }
    return;
  }
  if (expected.type() != actual.type()) {
    differences->push_back(path + ": expected " + Short(expected) + ", got " + Short(actual));
    return;
  }
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      auto it = actual.find(key);
      if (it == actual.end()) differences->push_back(path + "." + key + ": missing (expected " + Short(value) + ")");
      else Compare(value, *it, path + "." + key, differences);
    }
    for (const auto& [key, value] : actual.items()) {
      if (!expected.contains(key)) differences->push_back(path + "." + key + ": unexpected " + Short(value));
    }
    return;
  }
  if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      differences->push_back(path + ": expected " + std::to_string(expected.size()) + " items, got " +
                             std::to_string(actual.size()) + " (" + Short(actual) + ")");
    }
    for (size_t i = 0; i < std::min(expected.size(), actual.size()); ++i) {
      Compare(expected[i], actual[i], path + "[" + std::to_string(i) + "]", differences);
    }
    return;
  }
  if (expected != actual) differences->push_back(path + ": expected " + Short(expected) + ", got " + Short(actual));
}

class GoldenRulesTest : public testing::TestWithParam<std::string> {};

TEST_P(GoldenRulesTest, MatchesExpected) {
  const std::string case_dir = kCasesDir + "/" + GetParam();
  auto model = analysis::ImportSageMaker(case_dir + "/input");
  ASSERT_TRUE(model.ok()) << model.status().message();

  auto report = rules::ProfilerReport::Create(rules::BuiltinRules());
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::string parameters_text;
  if (ReadText(case_dir + "/parameters.json", &parameters_text)) {
    auto parameters = nlohmann::json::parse(parameters_text, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(parameters.is_discarded()) << case_dir << "/parameters.json is not JSON";
    Status applied = (*report)->ApplyParameterObject(parameters, case_dir + "/parameters.json");
    ASSERT_TRUE(applied.ok()) << applied.message();
  }
  (*report)->Finish(*model);

  const std::string expected_dir = case_dir + "/expected";
  const char* rebaseline = std::getenv("STEPSCOPE_REBASELINE");
  if (rebaseline != nullptr && std::string(rebaseline) == "1") {
    for (const std::string& name : ListDirectory(expected_dir)) std::remove((expected_dir + "/" + name).c_str());
    Status written = (*report)->WriteOutputs(expected_dir);
    ASSERT_TRUE(written.ok()) << written.message();
    std::printf("rebaselined %s\n", expected_dir.c_str());
    return;
  }
  ASSERT_TRUE(IsDirectory(expected_dir)) << expected_dir << " is missing: run this test with STEPSCOPE_REBASELINE=1 "
                                         << "(tests/golden/README.md)";

  // What the driver would write, file by file.
  std::vector<std::pair<std::string, nlohmann::json>> actual_files;
  for (const rules::RuleReport& rule : (*report)->Reports()) {
    actual_files.emplace_back(rule.rule + ".json", rules::ReferenceJson(rule));
  }
  actual_files.emplace_back("rules.json", (*report)->RulesJson());

  std::vector<std::string> differences;
  for (const auto& [name, actual] : actual_files) {
    std::string text;
    if (!ReadText(expected_dir + "/" + name, &text)) {
      differences.push_back(name + ": not in expected/ (a new rule? rebaseline)");
      continue;
    }
    auto expected = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (expected.is_discarded()) {
      differences.push_back(name + ": expected/" + name + " is not JSON");
      continue;
    }
    // Round-trip the actual document through text so both sides went through the same writer.
    auto written = nlohmann::json::parse(rules::DumpJson(actual), nullptr, /*allow_exceptions=*/false);
    Compare(expected, written, name, &differences);
  }
  for (const std::string& name : ListDirectory(expected_dir)) {
    bool produced = false;
    for (const auto& file : actual_files) produced = produced || file.first == name;
    if (!produced) differences.push_back(name + ": in expected/ but no longer produced (a removed rule? rebaseline)");
  }
  if (!differences.empty()) {
    std::string shown;
    for (size_t i = 0; i < differences.size() && i < kMaxDifferencesShown; ++i) shown += "  " + differences[i] + "\n";
    if (differences.size() > kMaxDifferencesShown) {
      shown += "  ... and " + std::to_string(differences.size() - kMaxDifferencesShown) + " more\n";
    }
    ADD_FAILURE() << GetParam() << ": " << differences.size() << " differences from " << expected_dir << ":\n"
                  << shown << "If the change is intended: STEPSCOPE_REBASELINE=1 and review the diff.";
  }
}

std::string CaseName(const testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Cases, GoldenRulesTest, testing::ValuesIn(CaseNames()), CaseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenRulesTest);

TEST(GoldenRulesCompare, ReportsNumbersBeyondToleranceWithTheirPath) {
  std::vector<std::string> differences;
  Compare(nlohmann::json::parse(R"({"a": {"b": [1.0, 2.0]}, "c": "x"})"),
          nlohmann::json::parse(R"({"a": {"b": [1.0000000000001, 2.1]}, "c": "y", "d": 1})"), "f.json", &differences);
  EXPECT_EQ(differences, (std::vector<std::string>{"f.json.a.b[1]: expected 2.0, got 2.1",
                                                   "f.json.c: expected \"x\", got \"y\"", "f.json.d: unexpected 1"}));
}

}  // namespace
}  // namespace stepscope
