#include "prometheus/exposition.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "prometheus/metric_names.h"

namespace stepscope::prometheus {
namespace {

std::string Value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace

Exposition::Exposition(ExpositionIdentity identity) : identity_(std::move(identity)) {
  base_labels_ = std::string(kJobLabel) + "=\"" + EscapeLabelValue(identity_.job) + "\"," + std::string(kNodeLabel) +
                 "=\"" + EscapeLabelValue(identity_.node) + "\"";
  std::lock_guard<std::mutex> lock(producers_);
  Republish();
}

void Exposition::PublishSystem(const std::vector<MetricSample>& samples) {
  // Grouped by family: the text format wants a family's series together, under one TYPE line.
  std::map<std::string, std::string> families;
  for (const MetricSample& sample : samples) {
    const ExposedName exposed = SystemMetric(sample.name);
    std::string& lines = families[exposed.name];
    lines += exposed.name + "{" + base_labels_;
    for (const auto& [label, value] : exposed.labels) lines += "," + label + "=\"" + EscapeLabelValue(value) + "\"";
    lines += "} " + Value(sample.value) + "\n";
  }
  std::string text;
  for (const auto& [name, lines] : families) {
    text += "# TYPE " + name + " gauge\n" + lines;
  }
  std::lock_guard<std::mutex> lock(producers_);
  system_ = std::move(text);
  Republish();
}

void Exposition::PublishFramework(std::string families) {
  std::lock_guard<std::mutex> lock(producers_);
  framework_ = std::move(families);
  Republish();
}

void Exposition::Republish() {
  auto text = std::make_shared<std::string>();
  text->reserve(system_.size() + framework_.size() + 512);
  *text += "# HELP " + std::string(kInfo) + " The stepscope recording this node, its version.\n";
  *text += "# TYPE " + std::string(kInfo) + " gauge\n";
  *text += std::string(kInfo) + "{" + base_labels_ + ",version=\"" + EscapeLabelValue(identity_.version) + "\"} 1\n";
  *text += "# HELP " + std::string(kStartTime) + " When the job started, Unix seconds.\n";
  *text += "# TYPE " + std::string(kStartTime) + " gauge\n";
  *text += std::string(kStartTime) + "{" + base_labels_ + "} " + Value(identity_.start_time_s) + "\n";
  *text += system_;
  *text += framework_;
  text_.store(std::move(text));
}

}  // namespace stepscope::prometheus
