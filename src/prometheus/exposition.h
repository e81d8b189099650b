// What a scrape of one node's metrics endpoint answers: the Prometheus text format of the
// node's latest system sample per metric (from the sampler, every poll) and its framework
// figures (framework_figures.h, from each online-rules pass).
//
// Producers rebuild the text and publish it whole; a scrape takes the published text without
// waiting for anyone (an atomic shared pointer), so scrapes never slow the sampler, the rules or
// the job, however many come at once.
//
// Callers: the sampler's sink (PublishSystem), the online rules' observer (PublishFramework),
// the metrics endpoint (Text). Threading: any thread for each call.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sampler/metric_source.h"

namespace stepscope::prometheus {

struct ExpositionIdentity {
  std::string job;
  std::string node;
  std::string version;
  double start_time_s = 0;  // the job's start, Unix seconds
};

class Exposition {
 public:
  explicit Exposition(ExpositionIdentity identity);

  // One poll's samples (all stamped alike).
  void PublishSystem(const std::vector<MetricSample>& samples);
  // The framework families, rendered with BaseLabels().
  void PublishFramework(std::string families);
  // `stepscope_job="...",node="..."`, escaped: the labels every series starts with.
  const std::string& BaseLabels() const { return base_labels_; }

  // The whole exposition as last published.
  std::shared_ptr<const std::string> Text() const { return text_.load(); }

 private:
  void Republish();  // with producers_ held

  ExpositionIdentity identity_;
  std::string base_labels_;
  std::mutex producers_;  // never taken by a scrape
  std::string system_;
  std::string framework_;
  std::atomic<std::shared_ptr<const std::string>> text_;
};

}  // namespace stepscope::prometheus
