// The analysis model: what every front end reads (rules, report, CLI, Python readers, exports).
//
// One model holds a stepscope run (stepscope_loader.h) or imported foreign data (SageMaker
// profiler output: sagemaker_importer.h; PyTorch profiler traces: kineto_importer.h) in the
// vocabulary of shared/RULES.md §0, so a rule never asks where the data came from:
// - system samples are series keyed by (node, type, name, dimension) as SageMaker writes them
//   ("cpu", "cpu3", "CPUUtilization"); vocabulary.h maps stepscope's metric names onto them;
// - framework events carry a phase (SageMaker's process name: "Step:ModeKeys.TRAIN", "Forward",
//   "cpu_functions", "DataLoaderIter", ...), a name, a category (Kineto's `cat`, "" otherwise),
//   node, pid, tid, device and args;
// - processes carry where they stand in a distributed job (rank, local rank, world size), so
//   rules, the report and the summary tell ranks apart without reading the store again.
//
// Times are Unix-epoch nanoseconds throughout. Strings are interned (StringPool ids). Building
// happens through ModelBuilder; a Model is immutable once built (Finish() sorts and indexes).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/clock_alignment.h"
#include "analysis/problem.h"
#include "analysis/sample_times.h"
#include "base/status.h"
#include "store/run_manifest.h"

namespace stepscope::analysis {

using StringId = uint32_t;
inline constexpr StringId kEmptyString = 0;  // id 0 is always ""
// The arg (int 1) the stepscope loader puts on a step that overlaps a detail window or its
// writer: its time includes stepscope's own profiling. Read it with Model::IsDisturbedStep.
inline constexpr std::string_view kDisturbedStepArg = "stepscope_disturbed";

class StringPool {
 public:
  StringPool();
  StringId Intern(std::string_view text);
  // kEmptyString when `text` was never interned.
  StringId Find(std::string_view text) const;
  std::string_view Get(StringId id) const { return id < strings_.size() ? std::string_view(strings_[id]) : ""; }
  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // deque: views into it stay valid as it grows
  std::unordered_map<std::string_view, StringId> index_;
};

// Where the data came from; decides nothing in the rules, shown in outputs.
enum class ModelSource : uint8_t { kStepscope, kSageMaker, kKineto };
const char* ModelSourceName(ModelSource source);  // "stepscope", "sagemaker", "kineto"

struct NodeFacts {
  std::string name;               // "algo-1", the stepscope node name, "rank-0"
  std::string instance_type;      // from the manifest or flags; "" when unknown
  int32_t instance_count = 0;     // 0 when unknown
  int32_t cpu_cores = 0;          // 0 when unknown
  int32_t gpu_count = 0;          // 0 when unknown
  std::vector<int64_t> gpu_memory_bytes;  // per GPU, when known
  // Importers: what the source said about itself that has no field here (Kineto: process and
  // thread names, distributedInfo), as JSON; "" when none. stepscope runs: "" (see `manifest`).
  std::string manifest_json;
  // stepscope runs: the node's directory and its manifest (what ran, how it ended, config,
  // capabilities, the sampler's cost, control files applied), when it could be read.
  std::string directory;
  bool has_manifest = false;
  store::RunManifest manifest;  // its start and end times on the job's time axis, as every time
  // Where the node's times sit against the job's reference clock (clock_alignment.h); kNone for
  // a job of one node and imported runs. `clock_late`: recorded after the node's first streams
  // were read (a live run read early), so this load shows the node's own clock.
  ClockAlignment clock;
  bool clock_late = false;
};

// One recorded stream of a stepscope run (one recording process, or a node's system sampler)
// and what the store says of it: stepscope's own cost and losses, per writer.
struct StreamFacts {
  uint32_t node = 0;       // index into Model::nodes()
  std::string name;        // file stem
  std::string meta_json;   // what the writer said about itself
  bool is_system = false;  // the node's system sampler
  int64_t pid = -1;
  int64_t ppid = -1;
  bool writer_gone = false;           // nothing more will be appended
  uint64_t records = 0;               // raw records decoded
  uint64_t dropped_events = 0;        // all causes
  uint64_t dropped_write_failed = 0;  // the part lost while the log was unwritable (disk full)
  bool unwritten = false;             // the process could not write its stream at all
  uint64_t log_bytes = 0;
  uint64_t ring_bytes = 0;
  uint64_t block_bytes = 0;    // compressed event/sample blocks
  uint64_t string_bytes = 0;   // string-table frames
  uint64_t other_bytes = 0;    // meta, clock and stats frames, file header
  int64_t last_ns = INT64_MIN; // latest record's time
};

// stepscope's own cost over a whole run (stepscope runs; zero for imports).
struct RecordingOverhead {
  uint64_t framework_records = 0;   // raw records of the recording processes
  uint64_t system_records = 0;      // samples of the system samplers
  uint64_t dropped_buffers_full = 0;
  uint64_t dropped_write_failed = 0;
  uint64_t bytes_written = 0;       // logs and rings on disk
  uint64_t sampler_cpu_ns = 0;      // the system samplers' own CPU time (from the manifests)
  double sampler_cpu_share = -1;    // of one core over the node's run, highest node; -1 unknown
};

// The phase a step counts (the recorder's store::Phase, typed to the report).
enum class StepPhase : uint8_t { kTrain = 0, kEval = 1, kPredict = 2, kGlobal = 3, kNone = 4 };
const char* StepPhaseName(StepPhase phase);  // "TRAIN", "EVAL", "PREDICT", "GLOBAL", "" for kNone
// RULES.md §0's phase of a step event ("Step:ModeKeys.TRAIN"): the vocabulary of the rules and
// of SageMaker's files. kNone has none.
std::string_view StepPhaseRulesName(StepPhase phase);

// One process of the run and its place in a distributed job: the single record of ranks that
// the rules (Straggler), the report (per-rank step times) and the summary read.
// - stepscope runs: one per recording process's stream (training processes, their DataLoader
//   workers, launchers such as torchrun's agent); the rank fields come from the environment the
//   recorder saw (torchrun's RANK, LOCAL_RANK, WORLD_SIZE, GROUP_RANK). Forked DataLoader
//   workers inherit their rank's environment and so its rank; torchrun's agent has none.
// - Kineto traces: the host processes of a trace whose distributedInfo names a rank.
// A field is -1 where the data does not say (not a distributed job, an importer without it).
struct ProcessFacts {
  uint32_t node = 0;        // index into Model::nodes()
  int32_t pid = 0;          // as FrameworkEvent::pid
  int32_t parent_pid = -1;
  int32_t rank = -1;        // global rank (RANK, distributedInfo.rank)
  int32_t local_rank = -1;  // rank on its node (LOCAL_RANK)
  int32_t world_size = -1;  // ranks in the job (WORLD_SIZE, distributedInfo.world_size)
  int32_t group_rank = -1;  // its node's rank among the job's nodes (GROUP_RANK)
  // SageMaker: the node id of the timeline files its events came from when that is not the
  // node's name: a rank's writer "0-algo-1" (read as "algo-1-0") shares algo-1's system metrics,
  // so its events belong to algo-1, and the rules that key by writer (StepOutlier) read it here.
  // kEmptyString otherwise.
  StringId writer = kEmptyString;
};

// Where the reference's window grid lies on imported SageMaker data (shared/RULES.md §0): its
// origin is the first file timestamp (for system files the minute in the file name), and
// offline evaluation stops before the window whose start reaches `stop_ns` (the latest file
// timestamp: the earlier of the latest system file and the latest framework file).
// Absent (`known` false) for stepscope's own runs and Kineto traces, which use their own grid.
struct FileGrid {
  bool known = false;
  int64_t origin_ns = 0;
  int64_t stop_ns = 0;
};

struct SystemSeries {
  uint32_t node = 0;          // index into Model::nodes()
  StringId type = 0;          // "cpu", "gpu", "memory", "i/o", "network", or stepscope's own ("process")
  StringId name = 0;          // "cpu0", "gpu1", "MemoryUsedPercent", "ReceiveBytesPerSecond", ...
  StringId dimension = 0;     // "CPUUtilization", "I/OWaitPercentage", "GPUUtilization", ...
  SampleTimes time_ns;           // ascending (ties allowed); shared with the node's other series
  std::vector<double> value;
};

enum class EventKind : uint8_t { kSpan = 0, kInstant = 1, kCounter = 2 };

struct FrameworkEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;        // == start_ns for instants and counters
  int64_t tid = 0;           // host thread, or the GPU stream for device events
  int64_t step = -1;         // step events: the step number (SageMaker's args.step_num)
  int32_t pid = 0;           // host process, or the device index's process for device events
  int32_t device = -1;       // GPU index for device events, -1 on the host
  uint32_t node = 0;         // index into Model::nodes()
  StringId phase = 0;        // RULES.md §0 phase ("Step:ModeKeys.TRAIN", "Forward", ...)
  StringId name = 0;
  StringId category = 0;     // Kineto cat ("kernel", "cuda_runtime", ...); "" when the source has none
  uint32_t first_arg = 0;    // index into Model::args()
  uint16_t arg_count = 0;
  EventKind kind = EventKind::kSpan;
  bool unfinished = false;   // cut short (the process died): ends at its stream's last record

  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct EventArg {
  StringId key = 0;
  // kBool keeps a JSON true/false a bool (int_value 0 or 1): the reference writes SageMaker's
  // pin_memory back as it read it.
  enum class Type : uint8_t { kInt, kDouble, kString, kBool } type = Type::kInt;
  int64_t int_value = 0;
  double double_value = 0;
  StringId string_value = 0;
};

// A launch -> kernel (or fwd -> bwd) correlation between two framework events.
struct Flow {
  uint32_t from = 0;     // index into Model::events()
  uint32_t to = 0;
  StringId category = 0; // "ac2g", "fwdbwd", ...
  int64_t id = 0;        // the trace's flow id (correlation)
};

class Model;

// What Model::Refresh() found new.
struct RefreshResult {
  // Events the model gained: a provisional event that became final (a span that ended) is not
  // new, it changed; one that appeared is.
  size_t new_events = 0;
  size_t new_samples = 0;
  size_t replaced_provisional = 0;  // provisional events of the last read, replaced
};

// Reads what a run gained since a model was built or refreshed (stepscope_loader.cc).
class ModelFollower {
 public:
  virtual ~ModelFollower() = default;
  virtual StatusOr<RefreshResult> Refresh(Model& model) = 0;
  // False once nothing more can come: the model then stops following.
  virtual bool CanGrow() const = 0;
};

class Model {
 public:
  Model() = default;
  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;
  ~Model();
  ModelSource source() const { return source_; }
  const StringPool& strings() const { return strings_; }
  std::string_view String(StringId id) const { return strings_.Get(id); }
  StringId FindString(std::string_view text) const { return strings_.Find(text); }

  const std::vector<NodeFacts>& nodes() const { return nodes_; }
  // stepscope runs: every stream read, in the order met; empty for imports.
  const std::vector<StreamFacts>& streams() const { return streams_; }
  RecordingOverhead Overhead() const;
  // Sorted by (node, pid), one entry per pair.
  const std::vector<ProcessFacts>& processes() const { return processes_; }
  // The process `pid` on `node`, or nullptr when the run says nothing about it.
  const ProcessFacts* FindProcess(uint32_t node, int32_t pid) const;
  // The rank of process `pid` on `node`; -1 when unknown or not distributed.
  int32_t RankOf(uint32_t node, int32_t pid) const;
  // The distinct ranks (>= 0) of the processes on `node`, ascending: more than one means the
  // node ran several ranks (torchrun --nproc-per-node > 1).
  std::vector<int32_t> RanksOnNode(uint32_t node) const;
  const std::vector<SystemSeries>& series() const { return series_; }
  // Sorted by (start_ns, -end_ns, insertion order): parents before children.
  const std::vector<FrameworkEvent>& events() const { return events_; }
  std::span<const EventArg> Args(const FrameworkEvent& event) const {
    return {args_.data() + event.first_arg, event.arg_count};
  }
  // The arg named `key`, or nullptr.
  const EventArg* FindArg(const FrameworkEvent& event, std::string_view key) const;
  // Whether stepscope's own profiling ran during `step`: it overlaps (strictly: not just touches)
  // a detail window (a DetailWindow:* span) or its writer (DetailWindowWrite) on the step's node,
  // or carries kDisturbedStepArg = 1. Step-time statistics leave such steps out (the rules keep
  // them, as the reference would count them).
  bool IsDisturbedStep(const FrameworkEvent& step) const;
  // The phase of a step event (kNone for other events), or of a phase string id.
  StepPhase StepPhaseOf(const FrameworkEvent& event) const { return StepPhaseOfId(event.phase); }
  StepPhase StepPhaseOfId(StringId phase) const;
  const std::vector<Flow>& flows() const { return flows_; }
  // What loading skipped, lost or doubted, in the order met (problem.h).
  const std::vector<Problem>& problems() const { return problems_; }
  // Whether any problem is data loss or an error: what every command must show.
  bool HasAlwaysShownProblems() const;

  // Earliest and latest timestamp of any sample or event (0, 0 when empty).
  int64_t first_ns() const { return first_ns_; }
  int64_t last_ns() const { return last_ns_; }
  // Data up to this time is complete (a live run: the oldest stream's last flush; a finished or
  // imported run: last_ns()). Online rule evaluation only closes windows before it.
  int64_t complete_until_ns() const { return complete_until_ns_; }
  // Imported SageMaker data: the reference's window grid, from the file names.
  const FileGrid& file_grid() const { return file_grid_; }
  // The node id that wrote `event` (ProcessFacts::writer), else its node's name.
  std::string_view WriterOf(const FrameworkEvent& event) const;

  // Index ranges into events(): events starting in [start_ns, end_ns) (half-open), and events
  // overlapping the closed interval [start_ns, end_ns] (end >= start_ns and start <= end_ns).
  std::pair<size_t, size_t> EventsStartingIn(int64_t start_ns, int64_t end_ns) const;
  std::vector<uint32_t> EventsOverlapping(int64_t start_ns, int64_t end_ns) const;
  // Index range into series.time_ns with start_ns <= t <= end_ns (closed, as RULES.md §0).
  static std::pair<size_t, size_t> SamplesIn(const SystemSeries& series, int64_t start_ns, int64_t end_ns);

  // Step events (phase starts with "Step:ModeKeys."), in start order; indices into events().
  const std::vector<uint32_t>& steps() const { return steps_; }
  // Steps of `phase` ("Step:ModeKeys.TRAIN") numbered in [first, last], on `node` (all when -1).
  std::vector<uint32_t> StepsInRange(std::string_view phase, int64_t first, int64_t last, int node = -1) const;

  // Memory held, for benchmarks and `stepscope info`.
  size_t ApproximateBytes() const;

  // A model of a run still being written (stepscope runs): reads only what the run gained since
  // the model was built or last refreshed and adds it — new events, samples, streams, nodes,
  // problems, updated node facts — replacing the provisional events of the last read (spans
  // still open, each thread's latest event; run_decoder.h). Index-based references into
  // events() from before do not survive it. A model that cannot grow (imports, a model file, a
  // finished run) returns an empty result.
  StatusOr<RefreshResult> Refresh();
  // Whether Refresh() can still find anything: false once every writer of the run is gone.
  bool CanGrow() const { return follower_ != nullptr; }
  // Events that the next Refresh() replaces, as indices into events(), ascending.
  const std::vector<uint32_t>& provisional() const { return provisional_; }

 private:
  friend class ModelBuilder;

  ModelSource source_ = ModelSource::kStepscope;
  StringPool strings_;
  std::vector<NodeFacts> nodes_;
  std::vector<StreamFacts> streams_;
  std::vector<ProcessFacts> processes_;
  std::vector<SystemSeries> series_;
  std::vector<FrameworkEvent> events_;
  std::vector<EventArg> args_;
  std::vector<Flow> flows_;
  std::vector<Problem> problems_;
  std::vector<uint32_t> steps_;
  std::vector<uint32_t> provisional_;
  // Per node: detail windows and their writer (IsDisturbedStep), sorted by start, with the
  // running maximum of their ends.
  struct DisturbingIntervals {
    std::vector<std::pair<int64_t, int64_t>> intervals;
    std::vector<int64_t> max_end;
  };
  std::vector<DisturbingIntervals> disturbing_;
  StringId disturbed_arg_ = kEmptyString;
  std::vector<StepPhase> step_phase_of_string_;  // by StringId of an event's phase
  std::unique_ptr<ModelFollower> follower_;
  // max end_ns of events()[0..i] per block of kOverlapBlock events: bounds overlap scans.
  std::vector<int64_t> block_max_end_;
  int64_t first_ns_ = 0;
  int64_t last_ns_ = 0;
  int64_t complete_until_ns_ = 0;
  FileGrid file_grid_;
};

// Fills a Model. Add* in any order; Finish() sorts series samples and events, remaps flows,
// indexes steps and computes the time bounds.
class ModelBuilder {
 public:
  explicit ModelBuilder(ModelSource source);
  // Continues a built model (Model::Refresh): its events stay where Finish() put them, added
  // ones are merged in; node and series lookups know the model's.
  explicit ModelBuilder(Model&& model);

  StringId Intern(std::string_view text) { return model_.strings_.Intern(text); }
  // The node's index; the same name returns the same index (facts are merged: non-empty wins).
  uint32_t AddNode(const NodeFacts& facts);
  NodeFacts& node(uint32_t index) { return model_.nodes_[index]; }
  // Facts about one process; the same (node, pid) again merges them (a known field, != -1,
  // fills an unknown one; the first known value wins).
  void AddProcess(const ProcessFacts& facts);
  // The series' index; the same key returns the same series.
  uint32_t SeriesFor(uint32_t node, std::string_view type, std::string_view name, std::string_view dimension);
  void AddSample(uint32_t series, int64_t time_ns, double value);
  // Room for `additional` more samples of `series`: a loader that knows the count up front
  // avoids the vectors' doubling (up to 2x the memory of a long run's samples).
  void ReserveSamples(uint32_t series, size_t additional);

  // Room for `events` more events with `args` more args in all: an importer that staged a
  // file knows both, and growing by doubling would copy (and page-fault) the arrays again.
  void ReserveEvents(size_t events, size_t args);
  // Returns the event's index in insertion order (valid for AddFlow until Finish()).
  // `provisional`: the next Refresh() replaces it (no flow may refer to it).
  uint32_t AddEvent(const FrameworkEvent& event, std::span<const EventArg> args = {}, bool provisional = false);
  // Removes the provisional events of a continued model (before anything is added).
  size_t DropProvisional();
  void AddStream(const StreamFacts& facts) { model_.streams_.push_back(facts); }
  StreamFacts& stream(uint32_t index) { return model_.streams_[index]; }
  size_t stream_count() const { return model_.streams_.size(); }
  size_t node_count() const { return model_.nodes_.size(); }
  // Problems already in a continued model are not added again.
  bool HasProblem(std::string_view sentence) const;
  // Removes a continued model's problems whose name `remove` accepts (counts that a refresh
  // recomputes).
  template <typename Predicate>
  void RemoveProblems(Predicate remove) {
    std::erase_if(model_.problems_, [&](const Problem& problem) { return remove(problem.name); });
  }
  void SetFollower(std::unique_ptr<ModelFollower> follower) { model_.follower_ = std::move(follower); }
  void AddFlow(uint32_t from_insertion_index, uint32_t to_insertion_index, StringId category, int64_t id);
  void AddProblem(Problem problem) { model_.problems_.push_back(std::move(problem)); }
  void AddProblem(std::string_view name, ProblemSeverity severity, std::string sentence, uint64_t count = 1) {
    model_.problems_.push_back(Problem{std::string(name), severity, count, std::move(sentence)});
  }
  // Default: last_ns() after Finish().
  void SetCompleteUntil(int64_t ns) { complete_until_ns_ = ns; }
  void SetFileGrid(const FileGrid& grid) { model_.file_grid_ = grid; }

  EventArg IntArg(std::string_view key, int64_t value);
  EventArg DoubleArg(std::string_view key, double value);
  EventArg StringArg(std::string_view key, std::string_view value);
  EventArg BoolArg(std::string_view key, bool value);

  size_t event_count() const { return model_.events_.size(); }
  Model Finish() &&;

 private:
  Model model_;
  size_t sorted_events_ = 0;  // a continued model's events, already in order
  std::vector<uint32_t> new_provisional_;  // insertion indices
  std::unordered_map<std::string, uint32_t> node_index_;
  std::unordered_map<std::string, uint32_t> series_index_;
  std::vector<SampleTimelines> timelines_;  // by node: the timestamps its series share
  int64_t complete_until_ns_ = -1;
};

}  // namespace stepscope::analysis
