#include "compare/compare_text.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "rules/run_cost.h"

namespace stepscope::compare {
namespace {

using nlohmann::json;

// Exception-free reads: json::operator[] on a const object and get<>() on a wrong type throw.
const json& Field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}
std::string String(const json& object, const char* key) {
  const json& value = Field(object, key);
  return value.is_string() ? value.get<std::string>() : "";
}
bool Has(const json& object, const char* key) { return Field(object, key).is_number(); }
double Number(const json& object, const char* key) {
  const json& value = Field(object, key);
  return value.is_number() ? value.get<double>() : 0.0;
}
bool Bool(const json& object, const char* key) {
  const json& value = Field(object, key);
  return value.is_boolean() && value.get<bool>();
}


// "12.35" or "-" when the key is missing or null.
std::string Ms(const json& object, const char* key) { return Has(object, key) ? FormatLine("%.2f", Number(object, key)) : "-"; }

std::string Share(const json& object, const char* key) {
  return Has(object, key) ? FormatLine("%+.1f %%", Number(object, key) * 100.0) : "-";
}

std::string PValue(double p) { return p < 0.0001 ? "<0.0001" : FormatLine("%.4f", p); }

// `words` wrapped at spaces to kTextWidth: the first line starts with `first`, the others with
// `rest`; a word longer than a line stays whole on its own line.
std::string WrapWords(const std::string& words, const std::string& first, const std::string& rest) {
  std::string text, line = first;
  size_t prefix = first.size();
  size_t start = 0;
  while (start < words.size()) {
    size_t space = words.find(' ', start);
    if (space == std::string::npos) space = words.size();
    const std::string word = words.substr(start, space - start);
    if (line.size() > prefix && line.size() + 1 + word.size() > kTextWidth) {
      text += line + "\n";
      line = rest;
      prefix = rest.size();
    }
    line += (line.size() > prefix ? " " : "") + word;
    start = space + 1;
  }
  return text + line + "\n";
}

// A section that is not available prints its reason, wrapped to the width.
std::string Why(const json& section) { return WrapWords(String(section, "why"), "  ", "  "); }

std::string RunsTable(const json& document) {
  std::string text = "Runs\n";
  text += FormatLine("  %-3s %-36s %12s  %-22s %9s %10s\n", "run", "job", "duration", "instances", "price/h", "cost");
  for (const json& run : Field(document, "runs")) {
    const std::string type = String(run, "instance_type");
    std::string instances = type.empty() ? "unknown" : type;
    if (!type.empty() && Has(run, "instance_count")) {
      instances = FormatLine("%lld x %s", static_cast<long long>(Number(run, "instance_count")), type.c_str());
    }
    const std::string price = Has(run, "price_per_hour") ? FormatLine("$%.3f", Number(run, "price_per_hour")) : "-";
    const std::string cost = Has(run, "cost") ? rules::FormatDollars(std::llround(Number(run, "cost") * 100.0)) : "-";
    text += FormatLine("  %-3s %-36s %12s  %-22s %9s %10s\n", String(run, "label").c_str(),
                   FitText(String(run, "job"), 36).c_str(), HumanDuration(Number(run, "duration_s")).c_str(),
                   FitText(instances, 22).c_str(), price.c_str(), cost.c_str());
  }
  const json& cost = Field(document, "cost");
  if (!Bool(cost, "available")) return text + "Cost: not available.\n" + Why(cost);
  const std::string cheaper = String(cost, "cheaper");
  const std::string saving = rules::FormatDollars(std::llround(Number(cost, "saving") * 100.0));
  if (cheaper.empty()) return text + "Cost: both runs cost the same.\n";
  const std::string dearer = cheaper == "A" ? "B" : "A";
  return text + FormatLine("Cost: %s is cheaper, saving %s (%.1f %%) of %s's cost.\n", cheaper.c_str(), saving.c_str(),
                       Number(cost, "saving_share") * 100.0, dearer.c_str());
}

std::string StepsTable(const json& document) {
  const json& steps = Field(document, "steps");
  std::string text = "\nStep time (ms; steps of stepscope's detail windows left out)\n";
  if (!Bool(steps, "available")) return text + Why(steps);
  text += FormatLine("  %-7s %6s %8s %8s %8s %6s %8s %8s %8s %9s %8s\n", "phase", "A n", "A p50", "A p95", "A mean",
                 "B n", "B p50", "B p95", "B mean", "p50 diff", "p-value");
  bool any_significant = false;
  for (const json& phase : Field(steps, "phases")) {
    const json& a = Field(phase, "a");
    const json& b = Field(phase, "b");
    const json& test = Field(phase, "test");
    std::string p_value = "-";
    if (test.is_object()) {
      p_value = PValue(Number(test, "p_value"));
      if (Bool(test, "significant")) {
        p_value += "*";
        any_significant = true;
      }
    }
    text += FormatLine("  %-7s %6lld %8s %8s %8s %6lld %8s %8s %8s %9s %8s\n", FitText(String(phase, "phase"), 7).c_str(),
                   static_cast<long long>(Number(a, "count")), Ms(a, "p50_ms").c_str(), Ms(a, "p95_ms").c_str(),
                   Ms(a, "mean_ms").c_str(), static_cast<long long>(Number(b, "count")), Ms(b, "p50_ms").c_str(),
                   Ms(b, "p95_ms").c_str(), Ms(b, "mean_ms").c_str(), Share(phase, "delta_p50_share").c_str(),
                   p_value.c_str());
  }
  text += any_significant ? "  * the distributions differ (two-sided Mann-Whitney U, p < 0.05)\n"
                          : "  No phase differs significantly (two-sided Mann-Whitney U, p < 0.05).\n";
  return text;
}

std::string PhasesTable(const json& document) {
  const json& phases = Field(document, "phases");
  const bool per_step = String(phases, "per") == "step";
  std::string text = per_step ? "\nFramework phases (ms per step)\n" : "\nFramework phases (ms in the run)\n";
  if (!Bool(phases, "available")) return text + Why(phases);
  text += FormatLine("  %-50s %14s %14s %10s\n", "phase", "A", "B", "diff");
  for (const json& row : Field(phases, "rows")) {
    text += FormatLine("  %-50s %14.3f %14.3f %10s\n", FitText(String(row, "name"), 50).c_str(), Number(row, "a_ms"),
                   Number(row, "b_ms"), Share(row, "delta_share").c_str());
  }
  return text;
}

std::string OperatorsTable(const json& document) {
  const json& operators = Field(document, "operators");
  std::string text = "\nOperators (total ms in the profiled steps)\n";
  if (!Bool(operators, "available")) return text + Why(operators);
  text += FormatLine("  %-46s %4s %14s %14s %10s\n", "operator", "kind", "A", "B", "diff");
  for (const json& row : Field(operators, "rows")) {
    text += FormatLine("  %-46s %4s %14.3f %14.3f %10s\n", FitText(String(row, "name"), 46).c_str(),
                   String(row, "kind").c_str(), Number(row, "a_ms"), Number(row, "b_ms"), Share(row, "delta_share").c_str());
  }
  return text;
}

std::string UtilizationTable(const json& document) {
  const json& utilization = Field(document, "utilization");
  std::string text = "\nUtilization p95 (%)\n";
  if (!Bool(utilization, "available")) return text + Why(utilization);
  text += FormatLine("  %-12s %8s %8s\n", "metric", "A", "B");
  for (const json& row : Field(utilization, "rows")) {
    auto value = [&](const char* key) { return Has(row, key) ? FormatLine("%.1f", Number(row, key)) : std::string("-"); };
    text += FormatLine("  %-12s %8s %8s\n", String(row, "metric").c_str(), value("a_p95").c_str(), value("b_p95").c_str());
  }
  return text;
}

// Which rules found something in one run and not in the other.
std::string FindingsTable(const json& document) {
  if (!document.contains("findings") || !document["findings"].is_object()) return "";
  const json& findings = document["findings"];
  std::string text = "\nFindings\n";
  if (!findings.value("available", false)) return text + "  " + findings.value("why", std::string()) + "\n";
  auto side = [&](const char* key, const char* label) {
    for (const json& entry : findings[key]) {
      const json titles = entry.value("titles", json::array());
      const std::string first = titles.empty() ? std::string() : titles[0].get<std::string>();
      text += FormatLine("  %-8s %-24s %s\n", label, entry.value("rule", std::string()).c_str(),
                         FitText(first, 80).c_str());
    }
  };
  side("only_a", "only A");
  side("only_b", "only B");
  for (const json& entry : findings["both"]) {
    text += FormatLine("  %-8s %s\n", "both", entry.value("rule", std::string()).c_str());
  }
  if (findings["only_a"].empty() && findings["only_b"].empty() && findings["both"].empty()) {
    text += "  No rule found anything in either run.\n";
  }
  return text;
}

}  // namespace

std::string FormatLine(const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  return line;
}

std::string FitText(std::string text, size_t width) {
  for (char& c : text) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  if (text.size() <= width) return text;
  size_t cut = width >= 3 ? width - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

std::string HumanDuration(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 99.95) return FormatLine("%.1f s", seconds);
  const long long whole = std::llround(seconds);
  if (whole < 100 * 60) return FormatLine("%lld min %02lld s", whole / 60, whole % 60);
  const long long minutes = whole / 60;
  return FormatLine("%lld h %02lld min", minutes / 60, minutes % 60);
}

std::string FormatComparisonText(const json& document) {
  std::string verdict;
  if (document.contains("verdict") && document["verdict"].is_object()) {
    verdict = WrapWords(document["verdict"].value("sentence", std::string()), "Verdict: ", "  ") + "\n";
  }
  return verdict + RunsTable(document) + StepsTable(document) + FindingsTable(document) + PhasesTable(document) +
         OperatorsTable(document) + UtilizationTable(document);
}

}  // namespace stepscope::compare
