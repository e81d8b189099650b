#include "prometheus/metric_names.h"

#include <cctype>
#include <cstdio>

namespace stepscope::prometheus {
namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The sampler's unit suffixes, spelled as Prometheus' naming conventions want them.
std::string SpelledOutUnit(std::string_view leaf) {
  static constexpr std::pair<std::string_view, std::string_view> kUnits[] = {
      {"_pct", "_percent"}, {"_per_s", "_per_second"}, {"_w", "_watts"}, {"_c", "_celsius"}};
  for (const auto& [short_unit, long_unit] : kUnits) {
    if (EndsWith(leaf, short_unit)) {
      return std::string(leaf.substr(0, leaf.size() - short_unit.size())) + std::string(long_unit);
    }
  }
  return std::string(leaf);
}

// Metric names allow [a-zA-Z0-9_:]; anything else becomes '_'.
std::string Sanitized(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return out;
}

// "gpu3" (prefix "gpu"), "pid4242" (prefix "pid"): a prefix and a number.
bool IsNumbered(std::string_view segment, std::string_view prefix) {
  if (segment.size() <= prefix.size() || segment.substr(0, prefix.size()) != prefix) return false;
  for (char c : segment.substr(prefix.size())) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string StddevLabel(double stddev) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", stddev);
  return text;
}

ExposedName SystemMetric(std::string_view sampler_name) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (begin <= sampler_name.size()) {
    const size_t end = std::min(sampler_name.find('/', begin), sampler_name.size());
    parts.push_back(sampler_name.substr(begin, end - begin));
    begin = end + 1;
  }
  ExposedName exposed;
  const std::string_view family = parts.front();
  exposed.name = "stepscope_" + Sanitized(family);
  // The segments between the family and the leaf name a device: a label, not part of the name.
  // A process's share (gpu/gpu0/pid42/memory_used_bytes) is a family of its own, so that summing
  // the device's family never counts the processes' parts again.
  for (size_t i = 1; i + 1 < parts.size(); ++i) {
    const std::string_view segment = parts[i];
    if (family == "gpu" && IsNumbered(segment, "gpu")) {
      exposed.labels.emplace_back("gpu", std::string(segment.substr(3)));
    } else if (IsNumbered(segment, "pid")) {
      exposed.labels.emplace_back("pid", std::string(segment.substr(3)));
      exposed.name += "_process";
    } else if (family == "cpu") {
      exposed.labels.emplace_back("cpu", std::string(segment));
    } else {
      exposed.labels.emplace_back(i == 1 ? "device" : "device" + std::to_string(i), std::string(segment));
    }
  }
  if (parts.size() > 1) exposed.name += "_" + Sanitized(SpelledOutUnit(parts.back()));
  return exposed;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace stepscope::prometheus
