#include "launcher/job_metrics.h"

namespace stepscope::launcher {

class JobMetrics::TeeSink final : public SampleSink {
 public:
  TeeSink(SampleSink* inner, prometheus::Exposition* exposition) : inner_(inner), exposition_(exposition) {}
  void WriteSamples(uint64_t ticks, const std::vector<MetricSample>& samples) override {
    inner_->WriteSamples(ticks, samples);  // the run first: the endpoint is a view of it
    exposition_->PublishSystem(samples);
  }

 private:
  SampleSink* inner_;
  prometheus::Exposition* exposition_;
};

JobMetrics::JobMetrics(const prometheus::ExpositionIdentity& identity)
    : exposition_(identity), figures_(identity.node), endpoint_(&exposition_) {}

JobMetrics::~JobMetrics() { endpoint_.Stop(); }

StatusOr<std::unique_ptr<JobMetrics>> JobMetrics::Start(const prometheus::ExpositionIdentity& identity,
                                                        const std::string& host, int port) {
  std::unique_ptr<JobMetrics> metrics(new JobMetrics(identity));
  STEPSCOPE_RETURN_IF_ERROR(metrics->endpoint_.Start(host, port));
  return metrics;
}

SampleSink* JobMetrics::Tee(SampleSink* inner) {
  tee_ = std::make_unique<TeeSink>(inner, &exposition_);
  return tee_.get();
}

void JobMetrics::ObservePass(const analysis::Model& model, const rules::ProfilerReport& report) {
  figures_.Update(model);
  figures_.UpdateRules(report);
  exposition_.PublishFramework(figures_.Render(exposition_.BaseLabels()));
}

}  // namespace stepscope::launcher
