// The Prometheus endpoint of one node of a running job (`stepscope run --metrics-port`): the
// sampler's polls go to the run's system stream and to the exposition alike (Tee), and every
// pass of the online rules updates the framework figures (ObservePass). docs/prometheus.md.
//
// Callers: run_job.cc, for the job's life. Threading: Tee's sink runs on the sampler's thread,
// ObservePass on the online rules' thread; scrapes are served on the endpoint's own threads and
// only read the published text.
#pragma once

#include <memory>
#include <string>

#include "analysis/model.h"
#include "base/status.h"
#include "prometheus/exposition.h"
#include "prometheus/framework_figures.h"
#include "prometheus/metrics_endpoint.h"
#include "rules/profiler_report.h"
#include "sampler/metric_source.h"

namespace stepscope::launcher {

class JobMetrics {
 public:
  // Serves on host:port (0: any free port). Errors name the flag to change.
  static StatusOr<std::unique_ptr<JobMetrics>> Start(const prometheus::ExpositionIdentity& identity,
                                                     const std::string& host, int port);
  ~JobMetrics();

  int port() const { return endpoint_.port(); }
  // A sink that writes to `inner` and publishes the poll (not owned; `inner` outlives it).
  SampleSink* Tee(SampleSink* inner);
  void ObservePass(const analysis::Model& model, const rules::ProfilerReport& report);

 private:
  class TeeSink;
  explicit JobMetrics(const prometheus::ExpositionIdentity& identity);

  prometheus::Exposition exposition_;
  prometheus::FrameworkFigures figures_;
  prometheus::MetricsEndpoint endpoint_;
  std::unique_ptr<TeeSink> tee_;
};

}  // namespace stepscope::launcher
