#include "analysis/stepscope_loader.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "analysis/detail_operators.h"
#include "analysis/gpu_stream_events.h"
#include "analysis/job_nodes.h"
#include "analysis/rank_variables.h"
#include "analysis/recording_losses.h"
#include "analysis/run_decoder.h"
#include "analysis/vocabulary.h"
#include "base/json_fields.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kDamagedRunData = "damaged_run_data";

// What a node's manifest says about its hardware; the samples fill what it does not say.
NodeFacts FactsFromNode(const RecordedNode& node) {
  NodeFacts facts;
  facts.name = node.name;
  facts.directory = node.directory;
  facts.has_manifest = node.has_manifest;
  facts.clock = node.clock;
  facts.clock_late = node.clock_late;
  if (!node.has_manifest) return facts;
  facts.manifest = node.manifest;
  // The manifest's times onto the job's axis, as the node's events (run_decoder.h).
  const int64_t offset_ns = node.clock_fixed ? node.clock.offset_ns : 0;
  if (facts.manifest.start_time_ns > 0) facts.manifest.start_time_ns += offset_ns;
  if (facts.manifest.end_time_ns > 0) facts.manifest.end_time_ns += offset_ns;
  for (store::ManifestControl& control : facts.manifest.control) {
    if (control.applied_at_ns > 0) control.applied_at_ns += offset_ns;
  }
  const store::RunManifest& manifest = node.manifest;
  facts.instance_type = manifest.instance_type;
  facts.instance_count = manifest.instance_count;
  facts.cpu_cores = manifest.cpu_cores;
  if (manifest.capabilities.gpu_available) {
    facts.gpu_count = static_cast<int32_t>(manifest.capabilities.gpus.size());
    facts.gpu_memory_bytes = manifest.capabilities.gpu_memory_bytes;
  }
  return facts;
}

// What a process stream says about its process: pid, parent and the ranks torchrun gave it.
ProcessFacts ProcessFromStream(const StreamFacts& stream, uint32_t node) {
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

// Follows one stepscope run into one Model: the decoder's state (where each stream was read to,
// open spans) and the mapping of its names and streams onto the model's, kept between reads.
class StepscopeFollower final : public ModelFollower, private RecordedEventSink {
 public:
  explicit StepscopeFollower(std::unique_ptr<RunDecoder> decoder) : decoder_(std::move(decoder)) {}

  // One read of the run into `builder` (a new model, or a continued one).
  Status Read(ModelBuilder& builder, RefreshResult& result) {
    builder_ = &builder;
    result_ = &result;
    result.replaced_provisional = builder.DropProvisional();
    STEPSCOPE_RETURN_IF_ERROR(decoder_->Poll(*this));
    gpu_flows_.Link(builder);
    SyncFacts(builder);
    builder_ = nullptr;
    result_ = nullptr;
    return OkStatus();
  }

  StatusOr<RefreshResult> Refresh(Model& model) override {
    RefreshResult result;
    ModelBuilder builder(std::move(model));
    Status status = Read(builder, result);
    model = std::move(builder).Finish();
    STEPSCOPE_RETURN_IF_ERROR(status);
    return result;
  }

  bool CanGrow() const override { return !decoder_->finished(); }

 private:
  // The model node of a decoder node (nodes merge by name, as ModelBuilder::AddNode does).
  uint32_t ModelNode(uint32_t decoder_node) {
    while (model_node_.size() <= decoder_node) {
      const auto index = static_cast<uint32_t>(model_node_.size());
      const uint32_t node = builder_->AddNode(FactsFromNode(decoder_->nodes()[index]));
      model_node_.push_back(node);
      if (hardware_.size() <= node) hardware_.resize(node + 1);
      if (operators_detail_.size() <= node) operators_detail_.resize(node + 1);
    }
    return model_node_[decoder_node];
  }

  void OnStream(uint32_t stream, uint64_t records, size_t names) override {
    const StreamFacts& facts = decoder_->streams()[stream];
    // A system stream holds one sample per metric per poll: records / names is about (a bit
    // above, as names include ones seen only sometimes) the samples of each of its series.
    samples_per_series_ = facts.is_system && names > 0 ? (records + names - 1) / names : 0;
    current_stream_ = stream;
    if (!facts.is_system && facts.pid >= 0) builder_->AddProcess(ProcessFromStream(facts, ModelNode(facts.node)));
    if (gpu_stream_.size() <= stream) gpu_stream_.resize(stream + 1, false);
    gpu_stream_[stream] = IsGpuStream(facts);
    // Room for the stream's events before the first arrives: grown by doubling, the events
    // would be copied whole at their last growth, and that copy was the load's peak on a large
    // run (1.67 GB for 9.6 M events that need 1.2). A stream makes at most one event per record
    // (a span takes two); capacity never touched is never resident.
    if (!facts.is_system) builder_->ReserveEvents(static_cast<size_t>(records), 0);
  }

  void OnEvent(uint32_t stream, const RecordedEvent& event, std::span<const RecordedArg> args,
               bool provisional) override {
    const StreamFacts& facts = decoder_->streams()[stream];
    if (stream < gpu_stream_.size() && gpu_stream_[stream]) {
      OnGpuEvent(facts, event, args, provisional);
      return;
    }
    const std::string_view name = decoder_->Name(event.name);
    FrameworkEvent out;
    out.start_ns = event.start_ns;
    out.end_ns = event.end_ns;
    out.tid = event.tid;
    out.pid = static_cast<int32_t>(facts.pid);
    out.node = ModelNode(facts.node);
    out.name = builder_->Intern(name);
    out.unfinished = event.unfinished;
    args_.clear();
    for (const RecordedArg& arg : args) {
      const std::string_view key = decoder_->Name(arg.key);
      switch (arg.type) {
        case RecordedArg::Type::kInt: args_.push_back(builder_->IntArg(key, arg.int_value)); break;
        case RecordedArg::Type::kDouble: args_.push_back(builder_->DoubleArg(key, arg.double_value)); break;
        case RecordedArg::Type::kString:
          args_.push_back(builder_->StringArg(key, decoder_->Name(arg.string_value)));
          break;
      }
    }
    switch (event.kind) {
      case RecordedKind::kStep:
        out.kind = EventKind::kSpan;
        out.phase = out.name;  // "Step:ModeKeys.<PHASE>" (StepPhaseRulesName)
        out.step = event.step;
        break;
      case RecordedKind::kSpan:
        out.kind = EventKind::kSpan;
        out.phase = builder_->Intern(PhaseForEventName(name));
        break;
      case RecordedKind::kInstant:
        out.kind = EventKind::kInstant;
        out.phase = builder_->Intern(PhaseForEventName(name));
        break;
      case RecordedKind::kCounter:
        out.kind = EventKind::kCounter;
        out.phase = builder_->Intern(PhaseForEventName(name));
        args_.push_back(builder_->DoubleArg("value", event.value));
        break;
      case RecordedKind::kSample:
        return;  // never here: samples come through OnSample
    }
    builder_->AddEvent(out, args_, provisional);
    ++result_->new_events;
  }

  void OnSample(uint32_t stream, uint32_t metric, int64_t time_ns, double value) override {
    const uint32_t node = ModelNode(decoder_->streams()[stream].node);
    const uint64_t cache_key = (uint64_t{node} << 32) | metric;
    auto it = series_of_.find(cache_key);
    if (it == series_of_.end()) it = series_of_.emplace(cache_key, NewSeries(node, decoder_->Name(metric))).first;
    Series& series = it->second;
    if (series.reserved_for_stream != stream) {
      series.reserved_for_stream = stream;
      if (samples_per_series_ > 0 && stream == current_stream_) builder_->ReserveSamples(series.index, samples_per_series_);
    }
    builder_->AddSample(series.index, time_ns, value);
    ++result_->new_samples;
    if (series.gpu_memory_total >= 0) {
      auto [latest, inserted] =
          hardware_[node].gpu_memory_total.emplace(series.gpu_memory_total, std::make_pair(time_ns, value));
      if (!inserted && time_ns >= latest->second.first) latest->second = {time_ns, value};
    }
  }

  struct Series {
    uint32_t index = 0;
    int gpu_memory_total = -1;  // GPU index when this is gpu/gpu<N>/memory_total_bytes
    uint32_t reserved_for_stream = UINT32_MAX;
  };

  // One vocabulary lookup per (node, metric); the hardware it shows is noted once.
  Series NewSeries(uint32_t node, std::string_view metric) {
    const SeriesKey key = SeriesKeyForMetric(metric);
    Series series;
    series.index = builder_->SeriesFor(node, key.type, key.name, key.dimension);
    SampledHardware& seen = hardware_[node];
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

  // After a read: node and stream facts as the decoder knows them now, detail documents of
  // nodes whose job ended, problems and complete_until_ns.
  void SyncFacts(ModelBuilder& builder) {
    const auto& nodes = decoder_->nodes();
    for (uint32_t index = 0; index < nodes.size(); ++index) {
      const uint32_t node = ModelNode(index);
      NodeFacts& facts = builder.node(node);
      const NodeFacts fresh = FactsFromNode(nodes[index]);
      // The manifest moves on while the job runs (status, end, sampler cost, control files).
      facts.clock = fresh.clock;
      facts.clock_late = fresh.clock_late;
      if (fresh.has_manifest) {
        facts.has_manifest = true;
        facts.manifest = fresh.manifest;
        if (facts.instance_type.empty()) facts.instance_type = fresh.instance_type;
        if (facts.instance_count == 0) facts.instance_count = fresh.instance_count;
        if (facts.cpu_cores == 0) facts.cpu_cores = fresh.cpu_cores;
        if (facts.gpu_count == 0) facts.gpu_count = fresh.gpu_count;
        if (facts.gpu_memory_bytes.empty()) facts.gpu_memory_bytes = fresh.gpu_memory_bytes;
      }
      if (facts.directory.empty()) facts.directory = nodes[index].directory;
      ApplySampledHardware(facts, hardware_[node]);
    }
    // Streams: the model's copy of each, with its model node.
    const auto& streams = decoder_->streams();
    for (uint32_t index = 0; index < streams.size(); ++index) {
      StreamFacts facts = streams[index];
      facts.node = ModelNode(facts.node);
      if (index < builder.stream_count()) {
        builder.stream(index) = facts;
      } else {
        builder.AddStream(facts);
      }
    }
    // Operator profiles of detail windows: each window's file appears whole when the window
    // closes, so every read adds the files that appeared since the last (a live node's too).
    for (uint32_t index = 0; index < nodes.size(); ++index) {
      const uint32_t node = ModelNode(index);
      AddNewOperatorsDetail(nodes[index].directory, node, operators_detail_[node], builder);
    }
    // The decoder says in sentences what it skipped (damaged frames, blocks, names): each is a
    // loss of recorded data, said once.
    for (; problems_reported_ < decoder_->problems().size(); ++problems_reported_) {
      builder.AddProblem(kDamagedRunData, ProblemSeverity::kDataLoss, decoder_->problems()[problems_reported_]);
    }
    // Drop counts of a live run grow: the latest replace the last read's.
    builder.RemoveProblems(IsRecordingLossProblem);
    std::vector<NodeFacts> node_facts;
    for (uint32_t node = 0; node < builder.node_count(); ++node) node_facts.push_back(builder.node(node));
    std::vector<StreamFacts> stream_facts;
    for (uint32_t index = 0; index < builder.stream_count(); ++index) stream_facts.push_back(builder.stream(index));
    AddRecordingLosses(node_facts, stream_facts, builder);
    // Nodes lost, never started or not aligned: the job's shape changes while it runs too.
    builder.RemoveProblems(IsJobNodeProblem);
    AddJobNodeProblems(node_facts, stream_facts, builder);

    // complete_until_ns (stepscope_loader.h); unset means last_ns() (a finished run).
    if (!decoder_->finished()) {
      int64_t complete_until = INT64_MAX;
      for (const StreamFacts& stream : streams) {
        if (stream.writer_gone || stream.last_ns == INT64_MIN) continue;
        complete_until = std::min(complete_until, stream.last_ns);
      }
      if (complete_until != INT64_MAX) builder.SetCompleteUntil(complete_until);
    }
  }

  // A GPU stream's event (gpu_stream_events.h): a device operation or a host-side call, as the
  // Kineto importer makes them.
  void OnGpuEvent(const StreamFacts& facts, const RecordedEvent& event, std::span<const RecordedArg> args,
                  bool provisional) {
    GpuStreamEvent gpu = DecodeGpuStreamEvent(event.tid, decoder_->Name(event.name), args,
                                              [this](uint32_t id) { return decoder_->Name(id); });
    FrameworkEvent out;
    out.start_ns = event.start_ns;
    out.end_ns = event.end_ns;
    out.kind = event.kind == RecordedKind::kSpan ? EventKind::kSpan : EventKind::kInstant;
    out.pid = static_cast<int32_t>(facts.pid);
    out.node = ModelNode(facts.node);
    out.device = gpu.device;
    out.tid = gpu.tid;
    out.name = builder_->Intern(decoder_->Name(event.name));
    out.category = builder_->Intern(gpu.category);
    out.phase = builder_->Intern(gpu.phase);
    out.unfinished = event.unfinished;
    args_.clear();
    for (const GpuStreamArg& arg : gpu.args) {
      args_.push_back(arg.text.empty() ? builder_->IntArg(arg.key, arg.value) : builder_->StringArg(arg.key, arg.text));
    }
    const uint32_t index = builder_->AddEvent(out, args_, provisional);
    ++result_->new_events;
    // Provisional events may not end a flow; a finished stream hands every event over as final.
    if (!provisional && gpu.correlation > 0) gpu_flows_.Add(out.node, out.pid, gpu.correlation, gpu.role, index);
    if (gpu.tracing_off && !gpu.reason.empty()) {
      const std::string sentence = "process " + std::to_string(facts.pid) + " traced no GPU activity from " +
                                   std::to_string(out.start_ns) + " ns on: " + gpu.reason;
      if (!builder_->HasProblem(sentence)) builder_->AddProblem("gpu_tracing_off", ProblemSeverity::kInfo, sentence);
    }
  }

  std::unique_ptr<RunDecoder> decoder_;
  ModelBuilder* builder_ = nullptr;
  std::vector<bool> gpu_stream_;  // by decoder stream: written by the GPU tracer
  GpuFlowLinker gpu_flows_;
  RefreshResult* result_ = nullptr;
  std::vector<uint32_t> model_node_;  // decoder node -> model node
  std::vector<SampledHardware> hardware_;  // per model node
  std::vector<OperatorsDetailCursor> operators_detail_;  // per model node
  std::unordered_map<uint64_t, Series> series_of_;  // (model node << 32 | metric name id)
  std::vector<EventArg> args_;
  size_t problems_reported_ = 0;
  uint32_t current_stream_ = UINT32_MAX;
  uint64_t samples_per_series_ = 0;
};

}  // namespace

StatusOr<Model> LoadStepscopeRun(const std::string& path) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<RunDecoder> decoder, RunDecoder::Open(path));
  auto follower = std::make_unique<StepscopeFollower>(std::move(decoder));
  ModelBuilder builder(ModelSource::kStepscope);
  RefreshResult first_read;
  STEPSCOPE_RETURN_IF_ERROR(follower->Read(builder, first_read));
  // A run that can still grow keeps its follower, for Model::Refresh().
  if (follower->CanGrow()) builder.SetFollower(std::move(follower));
  return std::move(builder).Finish();
}

}  // namespace stepscope::analysis
