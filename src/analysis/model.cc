#include "analysis/model.h"

#include <algorithm>
#include <numeric>

namespace stepscope::analysis {
namespace {

// Events per block of the overlap index: a scan for events overlapping an interval starts at the
// first block whose running max end reaches the interval.
constexpr size_t kOverlapBlock = 64;
constexpr std::string_view kStepPrefix = "Step:ModeKeys.";

}  // namespace

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
  const EventArg* arg = FindArg(step, kDisturbedStepArg);
  return arg != nullptr && (arg->type == EventArg::Type::kInt || arg->type == EventArg::Type::kBool) &&
         arg->int_value == 1;
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
    bytes += sizeof(SystemSeries) + series.time_ns.capacity() * sizeof(int64_t) +
             series.value.capacity() * sizeof(double);
  }
  for (size_t i = 0; i < strings_.size(); ++i) bytes += strings_.Get(static_cast<StringId>(i)).size() + 48;
  return bytes;
}

ModelBuilder::ModelBuilder(ModelSource source) { model_.source_ = source; }

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
  target.time_ns.push_back(time_ns);
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

uint32_t ModelBuilder::AddEvent(const FrameworkEvent& event, std::span<const EventArg> args) {
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

  // Sort events, remembering where each insertion index went so flows can follow.
  std::vector<uint32_t> order(model.events_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const FrameworkEvent& x = model.events_[a];
    const FrameworkEvent& y = model.events_[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return x.end_ns > y.end_ns;
  });
  std::vector<uint32_t> position(order.size());
  std::vector<FrameworkEvent> sorted;
  sorted.reserve(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    position[order[i]] = i;
    sorted.push_back(model.events_[order[i]]);
  }
  model.events_ = std::move(sorted);
  for (Flow& flow : model.flows_) {
    flow.from = position[flow.from];
    flow.to = position[flow.to];
  }

  model.block_max_end_.clear();
  int64_t running_max = INT64_MIN;
  for (size_t i = 0; i < model.events_.size(); ++i) {
    const FrameworkEvent& event = model.events_[i];
    running_max = std::max(running_max, event.end_ns);
    if ((i + 1) % kOverlapBlock == 0 || i + 1 == model.events_.size()) model.block_max_end_.push_back(running_max);
    see(event.start_ns, event.end_ns);
    if (model.String(event.phase).starts_with(kStepPrefix)) model.steps_.push_back(static_cast<uint32_t>(i));
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
