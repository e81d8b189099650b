// A stepscope run read once into one list of events, for code that wants every event at hand
// rather than the model: tests, `stepscope._core.read_run` (python/src/run_reader_binding.cc),
// the seed-replay of the store's fuzzer. The analysis loader reads the model instead
// (stepscope_loader.h).
//
// Pairing, argument attachment and clock conversion are RunDecoder's (run_decoder.h); this only
// collects what one Poll() hands over and sorts it by start. A run still being written is read
// as it is now: what the decoder hands over as provisional (spans and steps still open, each
// thread's latest event) is kept, open ones as `unfinished`, as every one-shot reader keeps them.
//
// Memory: every event with its arguments and every system sample (about 100 B each); a caller
// that only counts or that reads long runs implements a RecordedEventSink instead.
//
// Threading: none; ReadRecordedRun reads files on the caller's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/run_decoder.h"
#include "base/status.h"

namespace stepscope::analysis {

class RecordedRun {
 public:
  struct Event {
    uint32_t stream = 0;  // index into streams()
    // Samples: kind kSample, `name` the metric, `value`, start_ns == end_ns, tid 0.
    RecordedEvent event;
    std::vector<RecordedArg> args;  // in the order they were recorded
  };

  RecordedRun(RecordedRun&&) noexcept;
  RecordedRun& operator=(RecordedRun&&) noexcept;
  ~RecordedRun();

  const std::vector<RecordedNode>& nodes() const { return decoder_->nodes(); }
  // The model's StreamFacts; `node` indexes nodes().
  const std::vector<RecordedStream>& streams() const { return decoder_->streams(); }
  // Sorted by start; events that start together keep the order the decoder handed them over.
  const std::vector<Event>& events() const { return events_; }
  // What was skipped or doubted, each said once, in the order found.
  const std::vector<std::string>& problems() const { return decoder_->problems(); }
  // Names of events, arguments, string argument values and metrics; "" for an unknown id.
  std::string_view Name(uint32_t id) const { return decoder_->Name(id); }

 private:
  friend StatusOr<RecordedRun> ReadRecordedRun(const std::string& path);
  RecordedRun() = default;

  std::unique_ptr<RunDecoder> decoder_;
  std::vector<Event> events_;
};

// `path`: a job directory or one node directory. Errors (not there, not a run) are one line
// naming the path; damage inside a run is a problem, never an error.
StatusOr<RecordedRun> ReadRecordedRun(const std::string& path);

}  // namespace stepscope::analysis
