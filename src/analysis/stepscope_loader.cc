#include "analysis/stepscope_loader.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "analysis/detail_operators.h"
#include "analysis/recording_losses.h"
#include "analysis/vocabulary.h"
#include "base/file_system.h"
#include "store/format.h"
#include "base/json_fields.h"
#include "store/run_reader.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kDetailWindowPrefix = "DetailWindow:";
constexpr std::string_view kDetailWindowWrite = "DetailWindowWrite";
constexpr std::string_view kDamagedRunData = "damaged_run_data";

struct Interval {
  int64_t start_ns;
  int64_t end_ns;
};

// A manifest status after which the launcher wrote its last word (docs/formats.md).
bool IsFinalStatus(std::string_view status) {
  return status == "exited" || status == "killed" || status == "failed-to-start";
}

// Whether a process still writes <directory>/<stream>.ring: its writer holds an exclusive flock
// for its whole life (store/ring_file.cc). No ring (compacted) or a free lock: the writer is gone.
bool WriterAlive(const std::string& directory, const std::string& stream) {
  const std::string ring = directory + "/" + stream + store::kRingSuffix;
  auto fd = OpenRegularFile(ring, Symlinks::kRefuse);  // a FIFO in its place must not block us
  if (!fd.ok()) return false;
  return flock(fd->get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;  // closing fd releases our lock
}

// "cpu12" -> 12 for prefix "cpu"; -1 when not a device name.
int DeviceIndex(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size() || name.size() - prefix.size() > 6) return -1;
  int index = 0;
  for (char c : name.substr(prefix.size())) {
    if (c < '0' || c > '9') return -1;
    index = index * 10 + (c - '0');
  }
  return index;
}

NodeFacts FactsFromManifest(const store::NodeInfo& info, bool* final_status) {
  NodeFacts facts;
  facts.name = info.name;
  facts.manifest_json = info.manifest_json;
  *final_status = false;
  if (info.manifest_json.empty()) return facts;
  const nlohmann::json manifest = nlohmann::json::parse(info.manifest_json, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object()) return facts;  // RunReader reported it
  *final_status = IsFinalStatus(JsonString(manifest, "status"));
  facts.instance_type = JsonString(manifest, "instance_type");
  facts.instance_count = static_cast<int32_t>(std::clamp<int64_t>(JsonInt(manifest, "instance_count", 0), 0, INT32_MAX));
  facts.cpu_cores = static_cast<int32_t>(std::clamp<int64_t>(JsonInt(manifest, "cpu_cores", 0), 0, INT32_MAX));
  const nlohmann::json gpu = JsonObject(JsonObject(manifest, "capabilities"), "gpu");
  if (JsonBool(gpu, "available", false)) {
    const nlohmann::json gpus = JsonArray(gpu, "gpus");
    facts.gpu_count = static_cast<int32_t>(gpus.size());
    // Entries are GPU names today; objects with memory_total_bytes are read when present.
    for (const nlohmann::json& entry : gpus) {
      const int64_t bytes = JsonInt(entry, "memory_total_bytes", 0);
      if (bytes > 0) facts.gpu_memory_bytes.push_back(bytes);
    }
    if (facts.gpu_memory_bytes.size() != gpus.size()) facts.gpu_memory_bytes.clear();
  }
  return facts;
}

// A rank variable the recorder copied from the environment ("ranks": {"RANK": "1", ...}, strings
// as the environment holds them): a non-negative integer, else -1.
int32_t RankVariable(const nlohmann::json& ranks, const char* name) {
  const std::string text = JsonString(ranks, name);
  int32_t value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0 ? value : -1;
}

// What a process stream says about its process: pid, parent and the ranks torchrun gave it.
ProcessFacts ProcessFromStream(const store::StreamInfo& stream, uint32_t node) {
  ProcessFacts facts;
  facts.node = node;
  facts.pid = static_cast<int32_t>(stream.pid);
  facts.parent_pid = stream.ppid >= 0 && stream.ppid <= INT32_MAX ? static_cast<int32_t>(stream.ppid) : -1;
  const nlohmann::json meta = nlohmann::json::parse(stream.meta_json, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json ranks = JsonObject(meta, "ranks");
  facts.rank = RankVariable(ranks, "RANK");
  facts.local_rank = RankVariable(ranks, "LOCAL_RANK");
  facts.world_size = RankVariable(ranks, "WORLD_SIZE");
  facts.group_rank = RankVariable(ranks, "GROUP_RANK");
  return facts;
}

// What the samples of one node say about its hardware, for facts the manifest lacks.
struct SampledHardware {
  std::map<int, bool> cpus;                  // per-core CPUUtilization seen
  std::map<int, bool> gpus;                  // any gpu/gpu<N>/ metric seen
  std::map<int, std::pair<int64_t, double>> gpu_memory_total;  // latest (time, bytes)
};

void ApplySampledHardware(NodeFacts& facts, const SampledHardware& hardware) {
  if (facts.cpu_cores == 0) facts.cpu_cores = static_cast<int32_t>(hardware.cpus.size());
  if (facts.gpu_count == 0) facts.gpu_count = static_cast<int32_t>(hardware.gpus.size());
  if (facts.gpu_memory_bytes.empty() && !hardware.gpu_memory_total.empty()) {
    const int highest = hardware.gpu_memory_total.rbegin()->first;
    facts.gpu_memory_bytes.assign(static_cast<size_t>(highest) + 1, 0);
    for (const auto& [index, latest] : hardware.gpu_memory_total) {
      facts.gpu_memory_bytes[static_cast<size_t>(index)] = static_cast<int64_t>(latest.second);
    }
  }
}

// Intervals sorted by start with the running maximum of their ends: whether any interval
// overlaps [start, end] strictly (touching is not overlapping) is one binary search.
class IntervalSet {
 public:
  void Add(Interval interval) { intervals_.push_back(interval); }
  void Index() {
    std::sort(intervals_.begin(), intervals_.end(),
              [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
    max_end_.resize(intervals_.size());
    int64_t running = INT64_MIN;
    for (size_t i = 0; i < intervals_.size(); ++i) max_end_[i] = running = std::max(running, intervals_[i].end_ns);
  }
  bool Overlaps(int64_t start_ns, int64_t end_ns) const {
    // Intervals starting before end_ns: [0, n). One of them overlaps iff the latest end > start_ns.
    auto after = std::lower_bound(intervals_.begin(), intervals_.end(), end_ns,
                                  [](const Interval& interval, int64_t t) { return interval.start_ns < t; });
    const size_t n = static_cast<size_t>(after - intervals_.begin());
    return n > 0 && max_end_[n - 1] > start_ns;
  }

 private:
  std::vector<Interval> intervals_;
  std::vector<int64_t> max_end_;
};

// The nodes of a run as the reader meets them, and every system sample, which goes straight
// from the decoded store block into the model's series (a 24 h run at 500 ms holds ~35 M
// samples: as store::Events they would need ~2 GB).
class SampleLoader final : public store::RunSampleSink {
 public:
  explicit SampleLoader(ModelBuilder& builder) : builder_(builder) {}

  void OnNode(uint32_t reader_node, const store::NodeInfo& info) override {
    bool final_status = false;
    NodeFacts facts = FactsFromManifest(info, &final_status);
    const uint32_t index = builder_.AddNode(facts);
    if (index >= node_final.size()) {
      node_final.resize(index + 1, true);
      node_directory.resize(index + 1);
      hardware.resize(index + 1);
    }
    // A node name found in two directories counts as finished only if both are.
    node_final[index] = node_final[index] && final_status;
    if (node_directory[index].empty()) node_directory[index] = info.directory;
    node_index.emplace(info.name, index);
    if (reader_node >= model_node_.size()) model_node_.resize(reader_node + 1, 0);
    model_node_[reader_node] = index;
  }

  void OnStream(uint32_t reader_node, uint32_t stream, bool is_system, uint64_t records, size_t names) override {
    stream_ = stream;
    if (stream >= stream_last_ns.size()) stream_last_ns.resize(stream + 1, INT64_MIN);
    // A system stream holds one sample per metric per poll: records / names is about (a bit
    // above, as names include ones seen only sometimes) the samples of each of its series.
    samples_per_series_ = is_system && names > 0 ? (records + names - 1) / names : 0;
  }

  void OnSample(uint32_t reader_node, uint32_t metric_id, std::string_view metric, int64_t time_ns,
                double value) override {
    const uint32_t node = model_node_[reader_node];
    const uint64_t cache_key = (uint64_t{node} << 32) | metric_id;
    auto it = series_of_.find(cache_key);
    if (it == series_of_.end()) it = series_of_.emplace(cache_key, NewSeries(node, metric)).first;
    Series& series = it->second;
    if (series.reserved_for_stream != stream_) {
      series.reserved_for_stream = stream_;
      if (samples_per_series_ > 0) {
        builder_.ReserveSamples(series.index, samples_per_series_);
      }
    }
    builder_.AddSample(series.index, time_ns, value);
    if (series.gpu_memory_total >= 0) {
      auto [latest, inserted] = hardware[node].gpu_memory_total.emplace(series.gpu_memory_total, std::make_pair(time_ns, value));
      if (!inserted && time_ns >= latest->second.first) latest->second = {time_ns, value};
    }
    int64_t& last = stream_last_ns[stream_];
    last = std::max(last, time_ns);
  }

  // Per model node: whether its manifest is final, its directory, what its samples say.
  std::vector<bool> node_final;
  std::vector<std::string> node_directory;
  std::vector<SampledHardware> hardware;
  std::unordered_map<std::string, uint32_t> node_index;  // by name
  std::vector<int64_t> stream_last_ns;                   // latest sample per stream index

 private:
  struct Series {
    uint32_t index = 0;
    int gpu_memory_total = -1;  // GPU index when this is gpu/gpu<N>/memory_total_bytes
    uint32_t reserved_for_stream = UINT32_MAX;
  };

  // One vocabulary lookup per (node, metric); the hardware it shows is noted once.
  Series NewSeries(uint32_t node, std::string_view metric) {
    const SeriesKey key = SeriesKeyForMetric(metric);
    Series series;
    series.index = builder_.SeriesFor(node, key.type, key.name, key.dimension);
    SampledHardware& seen = hardware[node];
    if (key.type == "cpu" && key.dimension == "CPUUtilization") {
      if (int index = DeviceIndex(key.name, "cpu"); index >= 0) seen.cpus[index] = true;
      return series;
    }
    if (!metric.starts_with("gpu/gpu")) return series;
    const size_t slash = metric.find('/', 4);
    if (slash == std::string_view::npos) return series;
    const int index = DeviceIndex(metric.substr(4, slash - 4), "gpu");
    if (index < 0) return series;
    seen.gpus[index] = true;
    if (metric.substr(slash + 1) == "memory_total_bytes") series.gpu_memory_total = index;
    return series;
  }

  ModelBuilder& builder_;
  std::vector<uint32_t> model_node_;  // reader node index -> model node index
  std::unordered_map<uint64_t, Series> series_of_;  // (model node << 32 | metric id)
  uint32_t stream_ = 0;
  uint64_t samples_per_series_ = 0;
};

// Everything but Finish(), so the reader (all framework events as store::Events) is gone before
// Finish() copies the model's events to sort them.
Status FillFromRun(const std::string& path, ModelBuilder& builder) {
  SampleLoader samples(builder);
  STEPSCOPE_ASSIGN_OR_RETURN(store::RunReader run, store::RunReader::Open(path, &samples));
  std::vector<bool>& node_final = samples.node_final;
  const std::vector<std::string>& node_directory = samples.node_directory;
  const auto& streams = run.streams();
  std::vector<uint32_t> stream_node(streams.size(), 0);
  for (size_t i = 0; i < streams.size(); ++i) {
    auto it = samples.node_index.find(streams[i].node);
    stream_node[i] = it == samples.node_index.end() ? 0 : it->second;
    if (!streams[i].is_system && streams[i].pid >= 0) builder.AddProcess(ProcessFromStream(streams[i], stream_node[i]));
  }

  // Where stepscope's own profiling ran, per node: steps overlapping it are disturbed.
  std::vector<IntervalSet> disturbing(node_final.size());
  for (const store::Event& event : run.events()) {
    if (event.kind != store::EventKind::kSpan) continue;
    const std::string_view name = run.Name(event.name);
    if (name.starts_with(kDetailWindowPrefix) || name == kDetailWindowWrite) {
      disturbing[stream_node[event.stream]].Add(Interval{event.start_ns, event.end_ns});
    }
  }
  for (IntervalSet& set : disturbing) set.Index();

  std::vector<int64_t> stream_last_ns = std::move(samples.stream_last_ns);
  stream_last_ns.resize(streams.size(), INT64_MIN);
  std::vector<EventArg> args;
  for (const store::Event& event : run.events()) {
    const uint32_t node = stream_node[event.stream];
    stream_last_ns[event.stream] = std::max(stream_last_ns[event.stream], event.end_ns);
    const std::string_view name = run.Name(event.name);
    FrameworkEvent out;
    out.start_ns = event.start_ns;
    out.end_ns = event.end_ns;
    out.tid = event.tid;
    out.pid = static_cast<int32_t>(streams[event.stream].pid);
    out.node = node;
    out.name = builder.Intern(name);
    out.unfinished = event.unfinished;
    args.clear();
    for (const store::EventArg& arg : run.Args(event)) {
      const std::string_view key = run.Name(arg.key);
      switch (arg.type) {
        case store::EventArg::Type::kInt: args.push_back(builder.IntArg(key, arg.int_value)); break;
        case store::EventArg::Type::kDouble: args.push_back(builder.DoubleArg(key, arg.double_value)); break;
        case store::EventArg::Type::kString: args.push_back(builder.StringArg(key, run.Name(arg.string_value))); break;
      }
    }
    switch (event.kind) {
      case store::EventKind::kStep:
        out.kind = EventKind::kSpan;
        out.phase = out.name;  // "Step:ModeKeys.<PHASE>"
        out.step = event.step;
        if (disturbing[node].Overlaps(event.start_ns, event.end_ns)) args.push_back(builder.IntArg(kDisturbedStepArg, 1));
        break;
      case store::EventKind::kSpan:
        out.kind = EventKind::kSpan;
        out.phase = builder.Intern(PhaseForEventName(name));
        break;
      case store::EventKind::kInstant:
        out.kind = EventKind::kInstant;
        out.phase = builder.Intern(PhaseForEventName(name));
        break;
      case store::EventKind::kCounter:
        out.kind = EventKind::kCounter;
        out.phase = builder.Intern(PhaseForEventName(name));
        args.push_back(builder.DoubleArg("value", event.value));
        break;
      case store::EventKind::kSample:
        break;  // never here: samples went to SampleLoader
    }
    builder.AddEvent(out, args);
  }

  for (uint32_t node = 0; node < node_final.size(); ++node) {
    ApplySampledHardware(builder.node(node), samples.hardware[node]);
    AddNodeOperatorsDetail(node_directory[node], node, builder);
  }
  // The store says in sentences what it skipped while decoding (damaged frames, blocks, names):
  // each is a loss of recorded data.
  for (const std::string& problem : run.problems()) {
    builder.AddProblem(kDamagedRunData, ProblemSeverity::kDataLoss, problem);
  }
  AddRecordingLosses(run, builder);

  // complete_until_ns: see the header. Unset means last_ns() (a finished run).
  const bool finished = std::all_of(node_final.begin(), node_final.end(), [](bool f) { return f; });
  if (!finished) {
    int64_t complete_until = INT64_MAX;
    for (size_t i = 0; i < streams.size(); ++i) {
      const uint32_t node = stream_node[i];
      if (node_final[node] || stream_last_ns[i] == INT64_MIN) continue;
      if (!WriterAlive(node_directory[node], streams[i].name)) continue;
      complete_until = std::min(complete_until, stream_last_ns[i]);
    }
    if (complete_until != INT64_MAX) builder.SetCompleteUntil(complete_until);
  }
  return OkStatus();
}

}  // namespace

StatusOr<Model> LoadStepscopeRun(const std::string& path) {
  ModelBuilder builder(ModelSource::kStepscope);
  STEPSCOPE_RETURN_IF_ERROR(FillFromRun(path, builder));
  return std::move(builder).Finish();
}

}  // namespace stepscope::analysis
