// Decodes stepscope's own runs into events: the store hands over each stream's raw records
// (store::FollowStream); this pairs them into spans and steps, attaches arguments and converts
// ticks to Unix-epoch nanoseconds, for the stepscope loader (the analysis model) and for
// `stepscope._core.read_run` (the raw view tests read).
//
// Pairing, per thread of a stream: an end closes the innermost open span of the same name;
// spans opened inside it and never ended end with it (`unfinished`). A step end closes the
// innermost open step of its phase, or one begun with a deferred phase and number
// (STEPSCOPE_DEFERRED_STEP), which the end supplies; a step ended as cancelled
// (STEPSCOPE_CANCELLED_STEP) is no step and is not handed over. Argument records attach to the
// thread's latest event (the one begun, or ended, or recorded last).
//
// Following a run that is being written: Poll() reads only what each stream gained since the
// last call. An event is handed over once, when nothing can change it any more (it ended and its
// thread recorded something after it). What may still change — spans and steps still open, each
// thread's latest event, which may yet get arguments — is handed over as *provisional* at the
// end of every Poll (open ones as `unfinished`, ending at their stream's latest record): a
// follower replaces the previous Poll's provisional events with the new ones. Once a stream's
// writer is gone (its node's manifest is final, or nobody holds its ring's lock) its provisional
// events are its last word and are handed over as final.
//
// Clock: each stream's ticks convert through its calibration pairs (store::StreamClock) known at
// the time of reading; the node manifest's anchor (else the stream's own) shifts them to Unix
// time. A record read before a later calibration pair arrived keeps the time it was given.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/model.h"
#include "base/status.h"
#include "store/format.h"
#include "analysis/clock_alignment.h"
#include "store/run_manifest.h"

namespace stepscope::analysis {

enum class RecordedKind : uint8_t { kSpan = 0, kInstant = 1, kCounter = 2, kStep = 3, kSample = 4 };
inline constexpr int kRecordedKindCount = 5;
const char* RecordedKindName(RecordedKind kind);  // "span", "instant", "counter", "step", "sample"

struct RecordedArg {
  enum class Type : uint8_t { kInt, kDouble, kString } type = Type::kInt;
  uint32_t key = 0;  // RunDecoder::Name()
  int64_t int_value = 0;
  double double_value = 0;
  uint32_t string_value = 0;  // RunDecoder::Name()
};

struct RecordedEvent {
  RecordedKind kind = RecordedKind::kSpan;
  int64_t start_ns = 0;  // Unix epoch
  int64_t end_ns = 0;    // == start_ns for instants and counters
  double value = 0;      // counters
  int64_t step = -1;     // steps: the step number
  uint32_t name = 0;     // RunDecoder::Name(); steps: their phase's SageMaker name (StepPhaseName)
  uint32_t tid = 0;
  store::Phase phase = store::Phase::kGlobal;  // steps
  bool unfinished = false;  // cut short: its process ended (or has not ended it yet)
};

// One node directory of the run.
struct RecordedNode {
  std::string name;       // the manifest's node, else the directory's name
  std::string directory;
  bool has_manifest = false;
  store::RunManifest manifest;  // default-constructed when none could be read
  // The node's clock on the job's time axis (clock_alignment.h): its offset is added to every
  // time of the node from its first stream on, so it is fixed then; an alignment recorded only
  // after that (a live run read early) is `clock_late` and applies from the next load.
  ClockAlignment clock;
  bool clock_fixed = false;
  bool clock_late = false;
};

// One stream and what the store says of it: the model's StreamFacts (model.h); `node` indexes
// the decoder's nodes().
using RecordedStream = StreamFacts;

// Receives what Poll() decodes, on Poll's thread.
class RecordedEventSink {
 public:
  virtual ~RecordedEventSink() = default;
  // A stream met for the first time, before its first record; `records` and `names` size it (a
  // system stream: records / names is about the samples per metric).
  virtual void OnStream(uint32_t stream, uint64_t records, size_t names) {}
  // `args` live until the call returns. Provisional events are replaced by the next Poll's.
  virtual void OnEvent(uint32_t stream, const RecordedEvent& event, std::span<const RecordedArg> args,
                       bool provisional) = 0;
  // A system sample; `metric` is Name(metric).
  virtual void OnSample(uint32_t stream, uint32_t metric, int64_t time_ns, double value) = 0;
};

class RunDecoder {
 public:
  // `path`: a job directory or one node directory. Errors (not there, not a run) are one line
  // naming the path. Reads the manifests; no stream yet.
  static StatusOr<std::unique_ptr<RunDecoder>> Open(const std::string& path);
  ~RunDecoder();

  // Reads what the run gained since the last call (all of it the first time): new node
  // directories and streams, and new records of known ones. Problems found go to problems().
  Status Poll(RecordedEventSink& sink);

  const std::vector<RecordedNode>& nodes() const { return nodes_; }
  const std::vector<RecordedStream>& streams() const { return streams_; }
  // What was skipped or doubted, each said once, in the order found.
  const std::vector<std::string>& problems() const { return problems_; }
  std::string_view Name(uint32_t id) const { return id < names_.size() ? std::string_view(names_[id]) : ""; }
  // Whether nothing more will come from `node`: its launcher wrote its last word, or (a node
  // recorded without `stepscope run`) every writer of its streams is gone.
  bool NodeFinished(uint32_t node) const;
  // Whether nothing more will come from the run: every node finished and every stream read to
  // its writer's end.
  bool finished() const;

 private:
  struct StreamState;
  RunDecoder() = default;
  uint32_t InternName(std::string_view name);
  void AddProblem(std::string problem);
  Status PollNodes();
  void PollStream(uint32_t stream, RecordedEventSink& sink);

  std::string path_;
  std::vector<RecordedNode> nodes_;
  std::vector<bool> node_final_;
  std::vector<RecordedStream> streams_;
  std::vector<std::unique_ptr<StreamState>> states_;
  std::unordered_map<std::string, uint32_t> stream_index_;  // directory + "/" + stem
  std::deque<std::string> names_;  // deque: Name() views stay valid as it grows
  std::unordered_map<std::string, uint32_t> name_index_;
  std::vector<std::string> problems_;
  std::unordered_map<std::string, bool> problems_seen_;
};

}  // namespace stepscope::analysis
