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
  header_ = "# HELP " + std::string(kInfo) + " The stepscope recording this node, its version.\n";
  header_ += "# TYPE " + std::string(kInfo) + " gauge\n";
  header_ += std::string(kInfo) + "{" + base_labels_ + ",version=\"" + EscapeLabelValue(identity_.version) + "\"} 1\n";
  header_ += "# HELP " + std::string(kStartTime) + " When the job started, Unix seconds.\n";
  header_ += "# TYPE " + std::string(kStartTime) + " gauge\n";
  header_ += std::string(kStartTime) + "{" + base_labels_ + "} " + Value(identity_.start_time_s) + "\n";
  system_.store(std::make_shared<const std::vector<MetricSample>>());
  framework_.store(std::make_shared<const std::string>());
}

void Exposition::PublishSystem(const std::vector<MetricSample>& samples) {
  system_.store(std::make_shared<const std::vector<MetricSample>>(samples));
}

void Exposition::PublishFramework(std::string families) {
  framework_.store(std::make_shared<const std::string>(std::move(families)));
}

std::string Exposition::Text() const {
  const std::shared_ptr<const std::vector<MetricSample>> samples = system_.load();
  const std::shared_ptr<const std::string> framework = framework_.load();
  // Grouped by family: the text format wants a family's series together, under one TYPE line.
  std::map<std::string, std::string> families;
  for (const MetricSample& sample : *samples) {
    const ExposedName exposed = SystemMetric(sample.name);
    std::string& lines = families[exposed.name];
    lines += exposed.name + "{" + base_labels_;
    for (const auto& [label, value] : exposed.labels) lines += "," + label + "=\"" + EscapeLabelValue(value) + "\"";
    lines += "} " + Value(sample.value) + "\n";
  }
  std::string text = header_;
  for (const auto& [name, lines] : families) text += "# TYPE " + name + " gauge\n" + lines;
  text += *framework;
  return text;
}

}  // namespace stepscope::prometheus
