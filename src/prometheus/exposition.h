// What a scrape of one node's metrics endpoint answers: the Prometheus text format of the
// node's latest system sample per metric (from the sampler, every poll) and its framework
// figures (framework_figures.h, from each online-rules pass).
//
// Producers publish immutable snapshots (the poll's samples as they are, the framework families
// as text) through atomic shared pointers; a scrape takes both without waiting for anyone and
// renders the text itself, so the sampler pays a copy of its poll and nothing more, and scrapes
// never slow the sampler, the rules or the job, however many come at once.
//
// Callers: the sampler's sink (PublishSystem), the online rules' observer (PublishFramework),
// the metrics endpoint (Text). Threading: any thread for each call.
#pragma once

#include <atomic>
#include <memory>
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

  // The whole exposition, rendered from what was last published.
  std::string Text() const;

 private:
  ExpositionIdentity identity_;
  std::string base_labels_;
  std::string header_;  // stepscope_info and stepscope_start_time_seconds
  std::atomic<std::shared_ptr<const std::vector<MetricSample>>> system_;
  std::atomic<std::shared_ptr<const std::string>> framework_;
};

}  // namespace stepscope::prometheus
