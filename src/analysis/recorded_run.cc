#include "analysis/recorded_run.h"

#include <algorithm>
#include <span>
#include <utility>

namespace stepscope::analysis {
namespace {

// Keeps everything Poll() hands over, provisional events included (a one-shot read keeps what is
// still open as cut short), samples as events of kind kSample.
class CollectEvents final : public RecordedEventSink {
 public:
  explicit CollectEvents(std::vector<RecordedRun::Event>& events) : events_(events) {}
  void OnEvent(uint32_t stream, const RecordedEvent& event, std::span<const RecordedArg> args, bool) override {
    events_.push_back({stream, event, std::vector<RecordedArg>(args.begin(), args.end())});
  }
  void OnSample(uint32_t stream, uint32_t metric, int64_t time_ns, double value) override {
    RecordedRun::Event sample{stream, {}, {}};
    sample.event.kind = RecordedKind::kSample;
    sample.event.name = metric;
    sample.event.start_ns = sample.event.end_ns = time_ns;
    sample.event.value = value;
    events_.push_back(std::move(sample));
  }

 private:
  std::vector<RecordedRun::Event>& events_;
};

}  // namespace

RecordedRun::RecordedRun(RecordedRun&&) noexcept = default;
RecordedRun& RecordedRun::operator=(RecordedRun&&) noexcept = default;
RecordedRun::~RecordedRun() = default;

StatusOr<RecordedRun> ReadRecordedRun(const std::string& path) {
  RecordedRun run;
  STEPSCOPE_ASSIGN_OR_RETURN(run.decoder_, RunDecoder::Open(path));
  CollectEvents collect(run.events_);
  STEPSCOPE_RETURN_IF_ERROR(run.decoder_->Poll(collect));
  // Stable: events that start together stay in the order the decoder handed them over.
  std::stable_sort(run.events_.begin(), run.events_.end(),
                   [](const RecordedRun::Event& a, const RecordedRun::Event& b) {
                     return a.event.start_ns < b.event.start_ns;
                   });
  return run;
}

}  // namespace stepscope::analysis
