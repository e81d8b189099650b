#include "analysis/model.h"

#include <algorithm>
#include <numeric>
#include <iterator>

namespace stepscope::analysis {
namespace {

// Events per block of the overlap index: a scan for events overlapping an interval starts at the
// first block whose running max end reaches the interval.
constexpr size_t kOverlapBlock = 64;
constexpr std::string_view kDetailWindowPrefix = "DetailWindow:";
constexpr std::string_view kDetailWindowWrite = "DetailWindowWrite";

constexpr std::string_view kStepRulesNames[] = {"Step:ModeKeys.TRAIN", "Step:ModeKeys.EVAL", "Step:ModeKeys.PREDICT",
                                                "Step:ModeKeys.GLOBAL"};

// Event order: by start, longer first (parents before children), then insertion order.
bool EventBefore(const FrameworkEvent& x, const FrameworkEvent& y) {
  if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
  return x.end_ns > y.end_ns;
}

// Moves each element i of `items` to position target[i], in place (cycle by cycle); `target` is
// used up. 4 bytes per element instead of a second copy of the elements.
template <typename T>
void PermuteInPlace(std::vector<T>& items, std::vector<uint32_t>& target) {
  constexpr uint32_t kPlaced = UINT32_MAX;
  for (uint32_t start = 0; start < items.size(); ++start) {
    if (target[start] == kPlaced) continue;
    T carried = std::move(items[start]);
    uint32_t to = target[start];
    target[start] = kPlaced;
    while (to != start) {
      std::swap(carried, items[to]);
      const uint32_t next = target[to];
      target[to] = kPlaced;
      to = next;
    }
    items[start] = std::move(carried);
  }
}

}  // namespace

const char* StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kTrain: return "TRAIN";
    case StepPhase::kEval: return "EVAL";
    case StepPhase::kPredict: return "PREDICT";
    case StepPhase::kGlobal: return "GLOBAL";
    case StepPhase::kNone: return "";
  }
  return "";
}

std::string_view StepPhaseRulesName(StepPhase phase) {
  const auto index = static_cast<size_t>(phase);
  return index < std::size(kStepRulesNames) ? kStepRulesNames[index] : std::string_view();
}

Model::~Model() = default;

StepPhase Model::StepPhaseOfId(StringId phase) const {
  return phase < step_phase_of_string_.size() ? step_phase_of_string_[phase] : StepPhase::kNone;
}

RecordingOverhead Model::Overhead() const {
  RecordingOverhead overhead;
  for (const StreamFacts& stream : streams_) {
    (stream.is_system ? overhead.system_records : overhead.framework_records) += stream.records;
    const uint64_t write_failed = std::min(stream.dropped_write_failed, stream.dropped_events);
    overhead.dropped_write_failed += write_failed;
    overhead.dropped_buffers_full += stream.dropped_events - write_failed;
    overhead.bytes_written += stream.log_bytes + stream.ring_bytes;
  }
  for (const NodeFacts& node : nodes_) {
    if (!node.has_manifest || !node.manifest.sampler.known) continue;
    overhead.sampler_cpu_ns += node.manifest.sampler.cpu_ns;
    const int64_t duration_ns = node.manifest.end_time_ns - node.manifest.start_time_ns;
    if (node.manifest.end_time_ns > 0 && duration_ns > 0) {
      overhead.sampler_cpu_share = std::max(
          overhead.sampler_cpu_share, static_cast<double>(node.manifest.sampler.cpu_ns) / static_cast<double>(duration_ns));
    }
  }
  return overhead;
}

StatusOr<RefreshResult> Model::Refresh() {
  if (follower_ == nullptr) return RefreshResult{};
  // The follower rebuilds this model around itself; it is put back unless the run has ended.
  std::unique_ptr<ModelFollower> follower = std::move(follower_);
  const size_t events_before = events_.size();
  StatusOr<RefreshResult> result = follower->Refresh(*this);
  if (result.ok()) result->new_events = events_.size() > events_before ? events_.size() - events_before : 0;
  if (follower->CanGrow()) follower_ = std::move(follower);
  return result;
}

StringPool::StringPool() { Intern(""); }

StringId StringPool::Intern(std::string_view text) {
  if (auto it = index_.find(text); it != index_.end()) return it->second;
  const auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(text);
  index_.emplace(strings_.back(), id);
  return id;
}

StringId StringPool::Find(std::string_view text) const {
  auto it = index_.find(text);
  return it == index_.end() ? kEmptyString : it->second;
}

const char* ModelSourceName(ModelSource source) {
  switch (source) {
    case ModelSource::kStepscope: return "stepscope";
    case ModelSource::kSageMaker: return "sagemaker";
    case ModelSource::kKineto: return "kineto";
  }
  return "unknown";
}

bool Model::HasAlwaysShownProblems() const {
  return std::any_of(problems_.begin(), problems_.end(), [](const Problem& p) { return p.AlwaysShown(); });
}

const EventArg* Model::FindArg(const FrameworkEvent& event, std::string_view key) const {
  const StringId id = strings_.Find(key);
  if (id == kEmptyString) return nullptr;
  for (const EventArg& arg : Args(event)) {
    if (arg.key == id) return &arg;
  }
  return nullptr;
}

bool Model::IsDisturbedStep(const FrameworkEvent& step) const {
  if (step.node < disturbing_.size()) {
    const DisturbingIntervals& set = disturbing_[step.node];
    // Intervals starting before the step ends: [0, n). One overlaps iff the latest end > its start.
    auto after = std::lower_bound(set.intervals.begin(), set.intervals.end(), step.end_ns,
                                  [](const std::pair<int64_t, int64_t>& interval, int64_t t) { return interval.first < t; });
    const auto n = static_cast<size_t>(after - set.intervals.begin());
    if (n > 0 && set.max_end[n - 1] > step.start_ns) return true;
  }
  if (disturbed_arg_ == kEmptyString) return false;
  for (const EventArg& arg : Args(step)) {
    if (arg.key == disturbed_arg_) {
      return (arg.type == EventArg::Type::kInt || arg.type == EventArg::Type::kBool) && arg.int_value == 1;
    }
  }
  return false;
}

const ProcessFacts* Model::FindProcess(uint32_t node, int32_t pid) const {
  auto it = std::lower_bound(processes_.begin(), processes_.end(), std::make_pair(node, pid),
                             [](const ProcessFacts& p, const std::pair<uint32_t, int32_t>& key) {
                               return std::make_pair(p.node, p.pid) < key;
                             });
  return it != processes_.end() && it->node == node && it->pid == pid ? &*it : nullptr;
}

int32_t Model::RankOf(uint32_t node, int32_t pid) const {
  const ProcessFacts* process = FindProcess(node, pid);
  return process == nullptr ? -1 : process->rank;
}

std::string_view Model::WriterOf(const FrameworkEvent& event) const {
  const ProcessFacts* process = FindProcess(event.node, event.pid);
  if (process != nullptr && process->writer != kEmptyString) return String(process->writer);
  return event.node < nodes_.size() ? std::string_view(nodes_[event.node].name) : std::string_view();
}

std::vector<int32_t> Model::RanksOnNode(uint32_t node) const {
  std::vector<int32_t> ranks;
  for (const ProcessFacts& process : processes_) {
    if (process.node == node && process.rank >= 0) ranks.push_back(process.rank);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

std::pair<size_t, size_t> Model::EventsStartingIn(int64_t start_ns, int64_t end_ns) const {
  auto by_start = [](const FrameworkEvent& event, int64_t t) { return event.start_ns < t; };
  auto begin = std::lower_bound(events_.begin(), events_.end(), start_ns, by_start);
  auto end = std::lower_bound(begin, events_.end(), end_ns, by_start);
  return {static_cast<size_t>(begin - events_.begin()), static_cast<size_t>(end - events_.begin())};
}

std::vector<uint32_t> Model::EventsOverlapping(int64_t start_ns, int64_t end_ns) const {
  std::vector<uint32_t> found;
  // block_max_end_ is non-decreasing: the first block that can hold an event ending at or
  // after start_ns.
  auto block = std::lower_bound(block_max_end_.begin(), block_max_end_.end(), start_ns);
  for (size_t i = static_cast<size_t>(block - block_max_end_.begin()) * kOverlapBlock; i < events_.size(); ++i) {
    const FrameworkEvent& event = events_[i];
    if (event.start_ns > end_ns) break;
    if (event.end_ns >= start_ns) found.push_back(static_cast<uint32_t>(i));
  }
  return found;
}

std::pair<size_t, size_t> Model::SamplesIn(const SystemSeries& series, int64_t start_ns, int64_t end_ns) {
  auto begin = std::lower_bound(series.time_ns.begin(), series.time_ns.end(), start_ns);
  auto end = std::upper_bound(begin, series.time_ns.end(), end_ns);
  return {static_cast<size_t>(begin - series.time_ns.begin()), static_cast<size_t>(end - series.time_ns.begin())};
}

std::vector<uint32_t> Model::StepsInRange(std::string_view phase, int64_t first, int64_t last, int node) const {
  std::vector<uint32_t> found;
  const StringId phase_id = strings_.Find(phase);
  if (phase_id == kEmptyString) return found;
  for (uint32_t index : steps_) {
    const FrameworkEvent& step = events_[index];
    if (step.phase == phase_id && step.step >= first && step.step <= last &&
        (node < 0 || step.node == static_cast<uint32_t>(node))) {
      found.push_back(index);
    }
  }
  return found;
}

size_t Model::ApproximateBytes() const {
  size_t bytes = sizeof(Model) + events_.capacity() * sizeof(FrameworkEvent) + args_.capacity() * sizeof(EventArg) +
                 processes_.capacity() * sizeof(ProcessFacts) +
                 flows_.capacity() * sizeof(Flow) + steps_.capacity() * sizeof(uint32_t) +
                 block_max_end_.capacity() * sizeof(int64_t);
  for (const SystemSeries& series : series_) {
    bytes += sizeof(SystemSeries) + series.time_ns.ApproximateBytes() + series.value.capacity() * sizeof(double);
  }
  for (size_t i = 0; i < strings_.size(); ++i) bytes += strings_.Get(static_cast<StringId>(i)).size() + 48;
  return bytes;
}

ModelBuilder::ModelBuilder(ModelSource source) { model_.source_ = source; }

ModelBuilder::ModelBuilder(Model&& model) : model_(std::move(model)) {
  sorted_events_ = model_.events_.size();
  complete_until_ns_ = -1;
  for (uint32_t i = 0; i < model_.nodes_.size(); ++i) node_index_.emplace(model_.nodes_[i].name, i);
  for (uint32_t i = 0; i < model_.series_.size(); ++i) {
    const SystemSeries& series = model_.series_[i];
    std::string key = std::to_string(series.node);
    key.append(1, '\0').append(model_.String(series.type)).append(1, '\0').append(model_.String(series.name));
    key.append(1, '\0').append(model_.String(series.dimension));
    series_index_.emplace(std::move(key), i);
    if (series.node >= timelines_.size()) timelines_.resize(series.node + 1);
    timelines_[series.node].Adopt(series.time_ns);
  }
}

size_t ModelBuilder::DropProvisional() {
  std::vector<uint32_t>& provisional = model_.provisional_;
  if (provisional.empty()) return 0;
  // Provisional events are never the end of a flow (they come from stepscope streams only), but
  // flows into later events shift with them.
  std::vector<uint32_t> new_index(model_.events_.size());
  size_t kept = 0;
  size_t next = 0;
  for (uint32_t i = 0; i < model_.events_.size(); ++i) {
    if (next < provisional.size() && provisional[next] == i) {
      ++next;
      new_index[i] = UINT32_MAX;
      continue;
    }
    new_index[i] = static_cast<uint32_t>(kept);
    if (kept != i) model_.events_[kept] = model_.events_[i];
    ++kept;
  }
  const size_t dropped = model_.events_.size() - kept;
  model_.events_.resize(kept);
  std::erase_if(model_.flows_, [&](const Flow& flow) {
    return new_index[flow.from] == UINT32_MAX || new_index[flow.to] == UINT32_MAX;
  });
  for (Flow& flow : model_.flows_) {
    flow.from = new_index[flow.from];
    flow.to = new_index[flow.to];
  }
  provisional.clear();
  sorted_events_ = kept;
  return dropped;
}

bool ModelBuilder::HasProblem(std::string_view sentence) const {
  return std::any_of(model_.problems_.begin(), model_.problems_.end(),
                     [&](const Problem& problem) { return problem.sentence == sentence; });
}

uint32_t ModelBuilder::AddNode(const NodeFacts& facts) {
  auto [it, inserted] = node_index_.emplace(facts.name, static_cast<uint32_t>(model_.nodes_.size()));
  if (inserted) {
    model_.nodes_.push_back(facts);
    return it->second;
  }
  NodeFacts& known = model_.nodes_[it->second];
  if (known.instance_type.empty()) known.instance_type = facts.instance_type;
  if (known.instance_count == 0) known.instance_count = facts.instance_count;
  if (known.cpu_cores == 0) known.cpu_cores = facts.cpu_cores;
  if (known.gpu_count == 0) known.gpu_count = facts.gpu_count;
  if (known.gpu_memory_bytes.empty()) known.gpu_memory_bytes = facts.gpu_memory_bytes;
  if (known.manifest_json.empty()) known.manifest_json = facts.manifest_json;
  return it->second;
}

void ModelBuilder::AddProcess(const ProcessFacts& facts) {
  // Merged in Finish(), once all are known: loaders may learn a process's facts piecemeal.
  model_.processes_.push_back(facts);
}

uint32_t ModelBuilder::SeriesFor(uint32_t node, std::string_view type, std::string_view name,
                                 std::string_view dimension) {
  std::string key = std::to_string(node);
  key.append(1, '\0').append(type).append(1, '\0').append(name).append(1, '\0').append(dimension);
  auto [it, inserted] = series_index_.emplace(std::move(key), static_cast<uint32_t>(model_.series_.size()));
  if (inserted) {
    SystemSeries series;
    series.node = node;
    series.type = Intern(type);
    series.name = Intern(name);
    series.dimension = Intern(dimension);
    model_.series_.push_back(std::move(series));
  }
  return it->second;
}

void ModelBuilder::AddSample(uint32_t series, int64_t time_ns, double value) {
  SystemSeries& target = model_.series_[series];
  if (target.node >= timelines_.size()) timelines_.resize(target.node + 1);
  timelines_[target.node].Append(target.time_ns, time_ns);
  target.value.push_back(value);
}

void ModelBuilder::ReserveSamples(uint32_t series, size_t additional) {
  SystemSeries& target = model_.series_[series];
  target.time_ns.reserve(target.time_ns.size() + additional);
  target.value.reserve(target.value.size() + additional);
}

void ModelBuilder::ReserveEvents(size_t events, size_t args) {
  // Geometric past the first file, so that many files' reservations stay linear in all.
  auto reserve = [](auto& vector, size_t additional) {
    const size_t needed = vector.size() + additional;
    if (needed > vector.capacity()) vector.reserve(std::max(needed, vector.capacity() + vector.capacity() / 2));
  };
  reserve(model_.events_, events);
  reserve(model_.args_, args);
}

uint32_t ModelBuilder::AddEvent(const FrameworkEvent& event, std::span<const EventArg> args, bool provisional) {
  if (provisional) new_provisional_.push_back(static_cast<uint32_t>(model_.events_.size()));
  FrameworkEvent stored = event;
  stored.first_arg = static_cast<uint32_t>(model_.args_.size());
  stored.arg_count = static_cast<uint16_t>(std::min<size_t>(args.size(), UINT16_MAX));
  model_.args_.insert(model_.args_.end(), args.begin(), args.begin() + stored.arg_count);
  model_.events_.push_back(stored);
  return static_cast<uint32_t>(model_.events_.size() - 1);
}

void ModelBuilder::AddFlow(uint32_t from, uint32_t to, StringId category, int64_t id) {
  model_.flows_.push_back(Flow{from, to, category, id});
}

EventArg ModelBuilder::IntArg(std::string_view key, int64_t value) {
  EventArg arg;
  arg.key = Intern(key);
  arg.type = EventArg::Type::kInt;
  arg.int_value = value;
  return arg;
}

EventArg ModelBuilder::DoubleArg(std::string_view key, double value) {
  EventArg arg;
  arg.key = Intern(key);
  arg.type = EventArg::Type::kDouble;
  arg.double_value = value;
  return arg;
}

EventArg ModelBuilder::StringArg(std::string_view key, std::string_view value) {
  EventArg arg;
  arg.key = Intern(key);
  arg.type = EventArg::Type::kString;
  arg.string_value = Intern(value);
  return arg;
}

EventArg ModelBuilder::BoolArg(std::string_view key, bool value) {
  EventArg arg;
  arg.key = Intern(key);
  arg.type = EventArg::Type::kBool;
  arg.int_value = value ? 1 : 0;
  return arg;
}

Model ModelBuilder::Finish() && {
  Model& model = model_;
  bool any = false;
  int64_t first = 0, last = 0;
  auto see = [&](int64_t begin, int64_t end) {
    if (!any) {
      first = begin;
      last = end;
      any = true;
    }
    first = std::min(first, begin);
    last = std::max(last, end);
  };

  for (SystemSeries& series : model.series_) {
    if (!std::is_sorted(series.time_ns.begin(), series.time_ns.end())) {
      std::vector<size_t> order(series.time_ns.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return series.time_ns[a] < series.time_ns[b]; });
      std::vector<int64_t> times(order.size());
      std::vector<double> values(order.size());
      for (size_t i = 0; i < order.size(); ++i) {
        times[i] = series.time_ns[order[i]];
        values[i] = series.value[order[i]];
      }
      series.time_ns = std::move(times);
      series.value = std::move(values);
    }
    if (!series.time_ns.empty()) see(series.time_ns.front(), series.time_ns.back());
  }

  // Sort the events added since the last Finish() (all of them the first time) and merge them
  // with the ones already in order, in place: `order` lists insertion indices in their final
  // order, `position` is its inverse (4 bytes per event each; a sorted copy would take 64).
  const auto count = static_cast<uint32_t>(model.events_.size());
  const auto sorted = static_cast<uint32_t>(std::min<size_t>(sorted_events_, count));
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  auto before = [&](uint32_t a, uint32_t b) {
    const FrameworkEvent& x = model.events_[a];
    const FrameworkEvent& y = model.events_[b];
    if (EventBefore(x, y)) return true;
    if (EventBefore(y, x)) return false;
    return a < b;  // insertion order breaks ties: the result is stable_sort's
  };
  std::sort(order.begin() + sorted, order.end(), before);
  std::inplace_merge(order.begin(), order.begin() + sorted, order.end(), before);
  bool moved = false;
  for (uint32_t i = 0; i < count && !moved; ++i) moved = order[i] != i;
  if (moved) {
    std::vector<uint32_t> position(count);
    for (uint32_t i = 0; i < count; ++i) position[order[i]] = i;
    std::vector<uint32_t>().swap(order);
    for (Flow& flow : model.flows_) {
      flow.from = position[flow.from];
      flow.to = position[flow.to];
    }
    for (uint32_t& index : new_provisional_) index = position[index];
    PermuteInPlace(model.events_, position);
  }
  std::sort(new_provisional_.begin(), new_provisional_.end());
  model.provisional_ = std::move(new_provisional_);
  new_provisional_.clear();
  sorted_events_ = count;

  // Typed step phases, by the StringId of an event's phase.
  model.step_phase_of_string_.assign(model.strings_.size(), StepPhase::kNone);
  for (size_t phase = 0; phase < std::size(kStepRulesNames); ++phase) {
    const StringId id = model.strings_.Find(kStepRulesNames[phase]);
    if (id != kEmptyString) model.step_phase_of_string_[id] = static_cast<StepPhase>(phase);
  }
  model.disturbed_arg_ = model.strings_.Find(kDisturbedStepArg);
  // Names of stepscope's own profiling (detail windows and their writer), by StringId.
  std::vector<bool> disturbing_name(model.strings_.size(), false);
  for (StringId id = 1; id < model.strings_.size(); ++id) {
    const std::string_view name = model.strings_.Get(id);
    disturbing_name[id] = name.starts_with(kDetailWindowPrefix) || name == kDetailWindowWrite;
  }
  model.disturbing_.assign(model.nodes_.size(), {});

  model.steps_.clear();
  model.block_max_end_.clear();
  int64_t running_max = INT64_MIN;
  for (size_t i = 0; i < model.events_.size(); ++i) {
    const FrameworkEvent& event = model.events_[i];
    running_max = std::max(running_max, event.end_ns);
    if ((i + 1) % kOverlapBlock == 0 || i + 1 == model.events_.size()) model.block_max_end_.push_back(running_max);
    see(event.start_ns, event.end_ns);
    if (model.StepPhaseOf(event) != StepPhase::kNone) model.steps_.push_back(static_cast<uint32_t>(i));
    if (event.kind == EventKind::kSpan && disturbing_name[event.name] && event.node < model.disturbing_.size()) {
      model.disturbing_[event.node].intervals.emplace_back(event.start_ns, event.end_ns);  // in start order
    }
  }
  for (Model::DisturbingIntervals& set : model.disturbing_) {
    set.max_end.resize(set.intervals.size());
    int64_t latest = INT64_MIN;
    for (size_t i = 0; i < set.intervals.size(); ++i) set.max_end[i] = latest = std::max(latest, set.intervals[i].second);
  }
  // Processes: sorted by (node, pid); duplicates merged, the first known value of a field wins.
  std::stable_sort(model.processes_.begin(), model.processes_.end(), [](const ProcessFacts& a, const ProcessFacts& b) {
    return std::make_pair(a.node, a.pid) < std::make_pair(b.node, b.pid);
  });
  std::vector<ProcessFacts> merged;
  for (const ProcessFacts& process : model.processes_) {
    if (merged.empty() || merged.back().node != process.node || merged.back().pid != process.pid) {
      merged.push_back(process);
      continue;
    }
    ProcessFacts& known = merged.back();
    for (auto field : {&ProcessFacts::parent_pid, &ProcessFacts::rank, &ProcessFacts::local_rank,
                       &ProcessFacts::world_size, &ProcessFacts::group_rank}) {
      if (known.*field < 0) known.*field = process.*field;
    }
    if (known.writer == kEmptyString) known.writer = process.writer;
  }
  model.processes_ = std::move(merged);

  model.first_ns_ = first;
  model.last_ns_ = last;
  model.complete_until_ns_ = complete_until_ns_ >= 0 ? complete_until_ns_ : last;
  return std::move(model_);
}

}  // namespace stepscope::analysis
