#include "cli/rules_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "analysis/run_loader.h"
#include "cli/run_problems.h"
#include "rules/run_cost.h"

namespace stepscope::cli {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr size_t kTableWidth = 100;

// Cuts `text` to at most `width` bytes without splitting a UTF-8 sequence, marking the cut.
std::string Fit(std::string text, size_t width) {
  for (char& c : text) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  if (text.size() <= width) return text;
  size_t cut = width >= 3 ? width - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

std::string FindingLine(const rules::RuleReport& report) {
  if (!report.findings.empty()) {
    std::string line = report.findings.front().title;
    if (report.findings.size() > 1) line += " (+" + std::to_string(report.findings.size() - 1) + " more)";
    return line;
  }
  if (report.reporting) return "(reporting rule)";
  return report.triggered > 0 ? "condition met" : "-";
}

void PrintError(const std::string& message) { std::fprintf(stderr, "stepscope rules: %s\n", message.c_str()); }

}  // namespace

std::string FormatRulesTable(const rules::ProfilerReport& report, const std::string& out_dir) {
  constexpr int kRuleWidth = 24;
  // rule(24) + 3 numbers (9, 10, 10) + 4 separating spaces leaves the finding 43 columns.
  constexpr size_t kFindingWidth = kTableWidth - kRuleWidth - 9 - 10 - 10 - 4;
  std::string text;
  char line[256];
  std::snprintf(line, sizeof line, "%-*s %9s %10s %10s %s\n", kRuleWidth, "rule", "triggered", "violations",
                "datapoints", "finding");
  text += line;
  for (const rules::RuleReport& rule : report.Reports()) {
    std::snprintf(line, sizeof line, "%-*s %9lld %10lld %10lld ", kRuleWidth, Fit(rule.rule, kRuleWidth).c_str(),
                  static_cast<long long>(rule.triggered), static_cast<long long>(rule.violations),
                  static_cast<long long>(rule.datapoints));
    text += line + Fit(FindingLine(rule), kFindingWidth) + "\n";
  }
  const double scan_s = static_cast<double>(report.scan_interval_us()) / 1e6;
  std::snprintf(line, sizeof line, "status: %s; %zu windows of %g s\n", std::string(report.status()).c_str(),
                report.windows_evaluated(), scan_s);
  text += line;
  if (!out_dir.empty()) text += Fit("outputs: " + out_dir, kTableWidth) + "\n";
  return text;
}

namespace {

// Custom rules are Python: hand the whole evaluation to the Python package's rules_cli, which
// runs the same driver with the built-in rules and the custom ones (one process, one driver).
int RunWithCustomRules(const RulesInvocation& invocation) {
  const char* python = std::getenv("STEPSCOPE_PYTHON");
  std::vector<std::string> args = {python != nullptr && *python ? python : "/usr/bin/python3", "-m",
                                   "stepscope.analysis.rules_cli", invocation.run};
  for (const std::string& file : invocation.custom) args.insert(args.end(), {"--custom", file});
  for (const std::string& rule : invocation.overrides) args.insert(args.end(), {"--rule", rule});
  if (!invocation.only.empty()) args.insert(args.end(), {"--only", invocation.only});
  if (!invocation.out.empty()) args.insert(args.end(), {"--out", invocation.out});
  if (invocation.json) args.push_back("--json");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  execvp(argv[0], argv.data());
  PrintError(std::string("cannot run ") + argv[0] + " for the custom rules: " + std::strerror(errno) +
             "; set STEPSCOPE_PYTHON to a Python with the stepscope package");
  return kExitError;
}

}  // namespace

int RulesCommand(const RulesInvocation& invocation) {
  if (!invocation.custom.empty()) return RunWithCustomRules(invocation);
  std::vector<rules::InstanceType> catalog;
  if (!invocation.prices.empty()) {
    auto loaded = rules::LoadPriceCatalog(invocation.prices);
    if (!loaded.ok()) {
      PrintError(loaded.status().message());
      return kExitUsage;
    }
    catalog = std::move(*loaded);
  }
  auto report = MakeConfiguredProfilerReport(invocation.only, nlohmann::json(), invocation.overrides,
                                             invocation.prices.empty() ? nullptr : &catalog);
  if (!report.ok()) {
    PrintError(report.status().message() + " (see `stepscope rules --help`)");
    return kExitUsage;
  }
  auto model = analysis::LoadRun(invocation.run);
  if (!model.ok()) {
    PrintError(model.status().message());
    return kExitError;
  }
  PrintRunProblems(model->problems(), "stepscope rules: ", invocation.run);
  (*report)->Finish(*model);
  const std::string out_dir = invocation.out.empty() ? rules::DefaultRulesOutputDir(invocation.run) : invocation.out;
  if (Status written = (*report)->WriteOutputs(out_dir); !written.ok()) {
    PrintError(written.message() + "; choose a writable --out");
    return kExitError;
  }
  if (invocation.json) {
    std::fputs(rules::DumpJson((*report)->RulesJson()).c_str(), stdout);
  } else {
    std::fputs(FormatRulesTable(**report, out_dir).c_str(), stdout);
  }
  return 0;
}

}  // namespace stepscope::cli
