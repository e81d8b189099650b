// Reads a whole run directory (<root>/<job>/ or one <node>/ inside it) into events with
// Unix-epoch nanosecond timestamps, and answers queries by time range, kind, node, process
// and thread.
//
// Callers: `stepscope info`, tests, and (later) the analysis core's loader. Works on runs that
// are still being written (it reads what is there now) and on damaged runs (everything intact
// is returned; problems() says what was skipped).
//
// Spans are built from begin/end records per thread: an end closes the innermost open span of
// the same name; spans still open when a stream ends (the process died) are kept with
// `unfinished` set and end at the stream's last timestamp. A step end closes the innermost open
// step of its phase, or one begun with a deferred phase and number (which the end supplies).
//
// Memory: events() holds every record (56 B each) and a stream is decoded one block at a time
// (store::ScanStream). Callers that read long runs pass a RunSampleSink: system samples (the
// bulk of a long run: ~200 per poll) then go to the sink as they are decoded and never enter
// events().
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "store/format.h"

namespace stepscope::store {

enum class EventKind : uint8_t { kSpan = 0, kInstant = 1, kCounter = 2, kStep = 3, kSample = 4 };
inline constexpr int kEventKindCount = 5;
const char* EventKindName(EventKind kind);  // "span", "instant", "counter", "step", "sample"

struct Event {
  int64_t start_ns = 0;  // Unix epoch
  int64_t end_ns = 0;    // == start_ns for instants, counters and samples
  double value = 0;      // counters and samples
  int64_t step = -1;     // steps: the step number
  uint32_t name = 0;     // RunReader::Name(); steps: "Step:ModeKeys.<PHASE>"
  uint32_t stream = 0;   // index into RunReader::streams()
  uint32_t tid = 0;
  uint32_t first_arg = 0;
  uint16_t arg_count = 0;
  EventKind kind = EventKind::kSpan;
  Phase phase = Phase::kGlobal;  // steps
  bool unfinished = false;
};

struct EventArg {
  uint32_t key = 0;  // RunReader::Name()
  enum class Type : uint8_t { kInt, kDouble, kString } type = Type::kInt;
  int64_t int_value = 0;
  double double_value = 0;
  uint32_t string_value = 0;  // RunReader::Name()
};

struct StreamInfo {
  std::string node;
  std::string name;       // file stem
  std::string meta_json;  // what the writer said about itself
  bool is_system = false; // the node's system sampler
  int64_t pid = -1;
  int64_t ppid = -1;
  uint64_t dropped_events = 0;        // all causes
  uint64_t dropped_write_failed = 0;  // the part lost while the log was unwritable (disk full)
  bool unwritten = false;             // StreamContents::unwritten: lost whole, uncounted
  uint64_t log_bytes = 0;
  uint64_t ring_bytes = 0;
  uint64_t block_bytes = 0;    // compressed event/sample blocks
  uint64_t string_bytes = 0;   // string-table frames
  uint64_t other_bytes = 0;    // meta, clock and stats frames, file header
  uint64_t records = 0;
};

struct NodeInfo {
  std::string name;
  std::string directory;
  std::string manifest_json;  // "" when the node has no manifest (yet)
};

struct EventQuery {
  std::optional<int64_t> start_ns;  // events ending before this are excluded
  std::optional<int64_t> end_ns;    // events starting after this are excluded
  uint32_t kinds = 0xFFFFFFFF;      // bit (1 << EventKind)
  std::optional<std::string> node;
  std::optional<int64_t> pid;
  std::optional<uint32_t> tid;
};

// Receives system samples (EventKind::kSample) while RunReader::Open reads, in stream order and,
// within a stream, in record order (not sorted by time across streams). Called on Open's thread.
class RunSampleSink {
 public:
  virtual ~RunSampleSink() = default;
  // A node directory, before its streams; `node` is its index in nodes().
  virtual void OnNode(uint32_t node, const NodeInfo& info) = 0;
  // Before a stream's first record: the index streams() will give it, how many records its
  // blocks hold and how many names its string table has (for a system stream: an upper bound
  // on its metrics; records / names is then about the samples per metric). A sizing hint.
  virtual void OnStream(uint32_t node, uint32_t stream, bool is_system, uint64_t records, size_t names) {}
  // One sample; `metric` is Name(metric_id), valid for the reader's lifetime.
  virtual void OnSample(uint32_t node, uint32_t metric_id, std::string_view metric, int64_t time_ns, double value) = 0;
};

class RunReader {
 public:
  // `path`: a job directory (its subdirectories are nodes) or a single node directory.
  static StatusOr<RunReader> Open(const std::string& path);
  // As Open(path), but samples go to `samples` instead of events() (StreamInfo::records still
  // counts them).
  static StatusOr<RunReader> Open(const std::string& path, RunSampleSink* samples);

  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  const std::vector<StreamInfo>& streams() const { return streams_; }
  const std::vector<Event>& events() const { return events_; }  // sorted by start
  std::string_view Name(uint32_t id) const { return id < names_.size() ? std::string_view(names_[id]) : ""; }
  std::vector<EventArg> Args(const Event& event) const;
  std::vector<const Event*> Query(const EventQuery& query) const;
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  Status LoadNode(const std::string& node_name, const std::string& directory, RunSampleSink* samples);
  uint32_t InternName(std::string_view name);

  std::vector<NodeInfo> nodes_;
  std::vector<StreamInfo> streams_;
  std::vector<Event> events_;
  std::vector<EventArg> args_;
  std::deque<std::string> names_;  // deque: Name() views stay valid as it grows
  std::vector<std::string> problems_;
  std::unordered_map<std::string, uint32_t> name_index_;
};

}  // namespace stepscope::store
