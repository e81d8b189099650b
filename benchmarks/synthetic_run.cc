#include "synthetic_run.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/file_system.h"
#include "store/format.h"
#include "store/stream_reader.h"
#include "store/stream_writer.h"

namespace stepscope::benchmarks {
namespace {

constexpr const char* kJob = "synthetic";
constexpr const char* kNode = "algo-1";
constexpr int64_t kMonotonicBaseNs = 5'000'000'000'000;  // CLOCK_MONOTONIC at the run's start
constexpr int64_t kSystemPid = 4241;
constexpr int64_t kTrainPid = 4242;
constexpr uint32_t kMainTid = 4242;
constexpr int64_t kCalibrationIntervalNs = 10'000'000'000;  // as the system sink: every 10 s
constexpr int64_t kLowGpuPeriodS = 3 * 3600;                 // a low-GPU stretch every 3 h ...
constexpr int64_t kLowGpuStartS = 5400, kLowGpuEndS = 6000;  // ... from 1.5 h to 1 h 40 min in
constexpr int kTrainStepsPerPass = 2000;
constexpr int kEvalStepsPerPass = 200;
constexpr double kGpuMemoryTotalBytes = 85899345920.0;  // 80 GiB
constexpr double kHostMemoryTotalBytes = 549755813888.0;  // 512 GiB
constexpr int kLeakingGpu = 3;
constexpr int64_t kRankSkewMaxNs = 100'000;       // a rank starts a step up to this late
constexpr int64_t kNodeClockAheadNs = 2'000'000;  // node k's clock reads k x this ahead of node 0's
constexpr int64_t kClockSyncPeriodNs = 60'000'000'000;  // _clock_sync.py's PERIOD_S
constexpr size_t kClockSyncMaxSamples = 1000;           // ... and MAX_SAMPLES
constexpr int64_t kClockSyncRoundTripNs = 100'000;

// splitmix64: fixed across platforms (std::*_distribution is not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Noise(double amplitude) { return (Uniform() * 2.0 - 1.0) * amplitude; }

 private:
  uint64_t state_;
};

double Clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

// One system metric: its stepscope name and, when SageMaker records it too, its key there.
struct Metric {
  std::string name;
  bool rate = false;  // computed between polls: absent from the first poll
  const char* sm_type = nullptr;
  std::string sm_name = {};
  const char* sm_dimension = "";
};

std::vector<Metric> MetricCatalogue(int cores, int gpus) {
  std::vector<Metric> metrics;
  for (const char* leaf : {"user_pct", "system_pct", "util_pct", "iowait_pct"}) metrics.push_back({std::string("cpu/total/") + leaf});
  for (int c = 0; c < cores; ++c) {
    const std::string core = "cpu" + std::to_string(c);
    metrics.push_back({"cpu/" + core + "/user_pct"});
    metrics.push_back({"cpu/" + core + "/system_pct"});
    metrics.push_back({"cpu/" + core + "/util_pct", false, "cpu", core, "CPUUtilization"});
    metrics.push_back({"cpu/" + core + "/iowait_pct", false, "cpu", core, "I/OWaitPercentage"});
  }
  metrics.push_back({"memory/used_pct", false, "memory", "MemoryUsedPercent", ""});
  metrics.push_back({"memory/used_bytes"});
  metrics.push_back({"memory/total_bytes"});
  metrics.push_back({"disk/read_bytes_per_s", true, "i/o", "ReadThroughputInBytesPerSecond", ""});
  metrics.push_back({"disk/write_bytes_per_s", true, "i/o", "WriteThroughputInBytesPerSecond", ""});
  metrics.push_back({"disk/read_iops", true});
  metrics.push_back({"disk/write_iops", true});
  metrics.push_back({"disk/iops", true, "i/o", "IOPS", ""});
  metrics.push_back({"network/rx_bytes_per_s", true, "network", "ReceiveBytesPerSecond", "Algorithm"});
  metrics.push_back({"network/tx_bytes_per_s", true, "network", "TransmitBytesPerSecond", "Algorithm"});
  for (int g = 0; g < gpus; ++g) {
    const std::string gpu = "gpu" + std::to_string(g);
    metrics.push_back({"gpu/" + gpu + "/util_pct", false, "gpu", gpu, "GPUUtilization"});
    metrics.push_back({"gpu/" + gpu + "/memory_used_bytes"});
    metrics.push_back({"gpu/" + gpu + "/memory_total_bytes"});
    metrics.push_back({"gpu/" + gpu + "/memory_used_pct", false, "gpu", gpu, "GPUMemoryUtilization"});
    metrics.push_back({"gpu/" + gpu + "/power_w"});
    metrics.push_back({"gpu/" + gpu + "/temperature_c"});
    metrics.push_back({"gpu/" + gpu + "/sm_clock_mhz"});
  }
  for (const char* leaf : {"cpu_pct", "rss_bytes", "count"}) metrics.push_back({std::string("process/") + leaf});
  return metrics;
}

bool InLowGpuStretch(double t_s) {
  const double in_period = std::fmod(t_s, static_cast<double>(kLowGpuPeriodS));
  return in_period >= kLowGpuStartS && in_period < kLowGpuEndS;
}

// Fills values[i] for metrics[i] at `t_s` seconds into the run (NaN: not sampled this poll).
void PollValues(const std::vector<Metric>& metrics, int cores, int gpus, int64_t poll, double t_s, double duration_s,
                Rng& rng, std::vector<double>& values) {
  values.assign(metrics.size(), 0.0);
  const double diurnal = 0.5 + 0.5 * std::sin(2.0 * M_PI * t_s / 86400.0);
  const bool low_gpu = InLowGpuStretch(t_s);
  size_t i = 0;
  const size_t total_index = i;
  i += 4;
  double sum_user = 0, sum_system = 0, sum_util = 0, sum_iowait = 0;
  for (int c = 0; c < cores; ++c) {
    // Two loader-heavy cores run hotter; the data stall of a low-GPU stretch shows on all.
    double util = (c < 2 ? 70.0 : 25.0) + 20.0 * diurnal + rng.Noise(8.0) + (low_gpu ? 15.0 : 0.0);
    util = Clamp(util, 0.0, 100.0);
    const double user = util * (0.80 + rng.Noise(0.03));
    const double system = util - user;
    const double iowait = Clamp(1.0 + rng.Noise(1.0) + (low_gpu ? 4.0 : 0.0), 0.0, 100.0);
    values[i++] = user;
    values[i++] = system;
    values[i++] = util;
    values[i++] = iowait;
    sum_user += user;
    sum_system += system;
    sum_util += util;
    sum_iowait += iowait;
  }
  const double n = cores > 0 ? cores : 1;
  values[total_index] = sum_user / n;
  values[total_index + 1] = sum_system / n;
  values[total_index + 2] = sum_util / n;
  values[total_index + 3] = sum_iowait / n;
  const double host_used = kHostMemoryTotalBytes * Clamp(0.35 + 0.05 * diurnal + rng.Noise(0.005), 0.0, 1.0);
  values[i++] = host_used * 100.0 / kHostMemoryTotalBytes;
  values[i++] = host_used;
  values[i++] = kHostMemoryTotalBytes;
  const bool first = poll == 0;
  const double read_bytes = (low_gpu ? 4.0e8 : 1.5e8) * (1.0 + rng.Noise(0.2));
  const double read_iops = read_bytes / 131072.0;
  const double write_iops = 20.0 + rng.Noise(10.0);
  for (double v : {read_bytes, 2.0e6 * (1.0 + rng.Noise(0.5)), read_iops, write_iops, read_iops + write_iops}) {
    values[i++] = first ? NAN : v;
  }
  values[i++] = first ? NAN : 6.0e8 * (0.6 + 0.4 * diurnal) * (1.0 + rng.Noise(0.1));
  values[i++] = first ? NAN : 5.5e8 * (0.6 + 0.4 * diurnal) * (1.0 + rng.Noise(0.1));
  for (int g = 0; g < gpus; ++g) {
    const double util = low_gpu ? Clamp(6.0 + rng.Noise(4.0), 0.0, 100.0)
                                : Clamp(78.0 + 12.0 * diurnal + rng.Noise(6.0) - (g == gpus - 1 ? 8.0 : 0.0), 0.0, 100.0);
    // GPU 3 leaks: +12 GiB over the whole run; the others hold steady.
    double used = 42.0e9 + rng.Noise(0.2e9);
    if (g == kLeakingGpu) used += 12.0 * 1073741824.0 * (t_s / (duration_s > 0 ? duration_s : 1.0));
    values[i++] = util;
    values[i++] = used;
    values[i++] = kGpuMemoryTotalBytes;
    values[i++] = used * 100.0 / kGpuMemoryTotalBytes;
    values[i++] = 90.0 + 3.2 * util + rng.Noise(10.0);
    values[i++] = 38.0 + 0.35 * util + rng.Noise(1.0);
    values[i++] = util > 10.0 ? 1980.0 : 1410.0;
  }
  values[i++] = sum_util * (0.9 + rng.Noise(0.02));
  values[i++] = 24.0e9 + 2.0e9 * diurnal + rng.Noise(1.0e8);
  values[i++] = 12.0;
}

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

std::string ClockAnchorJson(int64_t start_ns) {
  return R"({"monotonic_ns":)" + std::to_string(kMonotonicBaseNs) + R"(,"realtime_ns":)" + std::to_string(start_ns) + "}";
}

// One stream written like the recorder and the system sink do: records into a ring block,
// sealed and flushed to the log as zstd frames when full; compacted when done (the process
// "exited"). Ticks are CLOCK_MONOTONIC ns (1 tick per ns).
class StoreStream {
 public:
  static StatusOr<std::unique_ptr<StoreStream>> Create(const std::string& directory, const std::string& name,
                                                       const std::string& meta_json, uint32_t block_bytes, uint32_t tid) {
    store::StreamWriterOptions options;
    options.directory = directory;
    options.name = name;
    options.block_bytes = block_bytes;
    options.block_count = 8;
    options.meta_json = meta_json;
    options.clock_anchor = ClockPair{static_cast<uint64_t>(kMonotonicBaseNs), static_cast<uint64_t>(kMonotonicBaseNs)};
    STEPSCOPE_ASSIGN_OR_RETURN(auto writer, store::StreamWriter::Create(options));
    auto stream = std::unique_ptr<StoreStream>(new StoreStream());
    stream->writer_ = std::move(writer);
    stream->directory_ = directory;
    stream->name_ = name;
    stream->tid_ = tid;
    return stream;
  }

  StatusOr<uint32_t> Id(const std::string& text) {
    auto [it, inserted] = ids_.emplace(text, static_cast<uint32_t>(ids_.size() + 1));
    if (inserted) STEPSCOPE_RETURN_IF_ERROR(writer_->AppendStrings({{it->second, text}}));
    return it->second;
  }

  Status Add(int64_t ticks, store::RecordKind kind, uint32_t name, uint64_t value, uint8_t phase = 0) {
    if (block_ == nullptr || block_->count.load(std::memory_order_relaxed) >= block_->capacity) {
      STEPSCOPE_RETURN_IF_ERROR(SealAndFlush());
      block_ = writer_->ring().Claim(tid_, 0);
      if (block_ == nullptr) return InternalError("no free ring block in '" + directory_ + "/" + name_ + ".ring'");
    }
    const uint32_t n = block_->count.load(std::memory_order_relaxed);
    store::RingFile::Records(block_)[n] =
        store::RawRecord{static_cast<uint64_t>(ticks), name, static_cast<uint8_t>(kind), phase, 0, value};
    block_->count.store(n + 1, std::memory_order_release);
    ++records_;
    return OkStatus();
  }

  Status ClockPairAt(int64_t ticks) {
    return writer_->AppendClockPair(ClockPair{static_cast<uint64_t>(ticks), static_cast<uint64_t>(ticks)});
  }

  // Flushes, writes the stats, closes the writer and compacts as `stepscope run` does.
  Status Finish() {
    STEPSCOPE_RETURN_IF_ERROR(SealAndFlush());
    STEPSCOPE_RETURN_IF_ERROR(
        writer_->AppendStats("{\"events_recorded\":" + std::to_string(records_) + ",\"events_dropped\":0}"));
    writer_.reset();
    return store::CompactStream(directory_, name_);
  }

 private:
  StoreStream() = default;
  Status SealAndFlush() {
    if (block_ != nullptr) {
      writer_->ring().Seal(block_);
      block_ = nullptr;
    }
    return writer_->FlushSealed().status();
  }

  std::unique_ptr<store::StreamWriter> writer_;
  std::string directory_, name_;
  uint32_t tid_ = 0;  // the thread its blocks are claimed for: the process's main thread
  std::map<std::string, uint32_t> ids_;
  store::BlockHeader* block_ = nullptr;
  uint64_t records_ = 0;
};

// "2026010513" for an epoch second (UTC).
std::string HourFolder(int64_t unix_s) {
  const time_t t = static_cast<time_t>(unix_s);
  struct tm parts;
  gmtime_r(&t, &parts);
  char text[16];
  std::strftime(text, sizeof text, "%Y%m%d%H", &parts);
  return text;
}

// The SageMaker twin's system files: one JSON-lines file per minute.
class SageMakerSystemWriter {
 public:
  explicit SageMakerSystemWriter(std::string root) : root_(std::move(root)) {}

  Status Add(double timestamp_s, const Metric& metric, double value) {
    const int64_t minute_s = static_cast<int64_t>(timestamp_s) / 60 * 60;
    if (minute_s != minute_s_) {
      STEPSCOPE_RETURN_IF_ERROR(Flush());
      minute_s_ = minute_s;
    }
    char line[320];
    const int n = std::snprintf(line, sizeof line,
                                "{\"Type\":\"%s\",\"Name\":\"%s\",\"Dimension\":\"%s\",\"Value\":%.3f,\"NodeId\":\"%s\","
                                "\"Timestamp\":%.3f}\n",
                                metric.sm_type, metric.sm_name.c_str(), metric.sm_dimension, value, kNode, timestamp_s);
    text_.append(line, static_cast<size_t>(n));
    ++records_;
    return OkStatus();
  }

  Status Flush() {
    if (text_.empty()) return OkStatus();
    const std::string dir = root_ + "/system/incremental/" + HourFolder(minute_s_);
    STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(dir));
    char name[48];
    std::snprintf(name, sizeof name, "/%010lld.%s.json", static_cast<long long>(minute_s_), kNode);
    STEPSCOPE_RETURN_IF_ERROR(WriteFileAtomically(dir + name, text_));
    text_.clear();
    return OkStatus();
  }
  int64_t records() const { return records_; }

 private:
  std::string root_;
  std::string text_;
  int64_t minute_s_ = -1;
  int64_t records_ = 0;
};

// The SageMaker twin's framework traces: one pevents file per hour; each phase is a "process"
// whose process_name metadata carries the phase (FORMATS.md §1).
class SageMakerTraceWriter {
 public:
  explicit SageMakerTraceWriter(std::string root) : root_(std::move(root)) {}

  Status Add(int64_t start_ns, int64_t end_ns, const std::string& phase, const std::string& args_json) {
    const int64_t hour_s = start_ns / 1'000'000'000 / 3600 * 3600;
    if (hour_s != hour_s_) {
      STEPSCOPE_RETURN_IF_ERROR(Flush());
      hour_s_ = hour_s;
      base_us_ = hour_s * 1'000'000;
    }
    auto [it, inserted] = pids_.emplace(phase, static_cast<int>(pids_.size()) + 1);
    char line[256];
    const int n = std::snprintf(line, sizeof line, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%u%s%s}",
                                phase.c_str(), static_cast<double>(start_ns - base_us_ * 1000) / 1000.0,
                                static_cast<double>(end_ns - start_ns) / 1000.0, it->second, kMainTid,
                                args_json.empty() ? "" : ",\"args\":", args_json.c_str());
    events_.append(line, static_cast<size_t>(n));
    last_end_us_ = std::max(last_end_us_, end_ns / 1000);
    return OkStatus();
  }

  Status Flush() {
    if (events_.empty()) return OkStatus();
    std::string text = "[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"start_time_since_epoch_in_micros\":" +
                       std::to_string(base_us_) + "}}";
    for (const auto& [phase, pid] : pids_) {
      text += ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"args\":{\"name\":\"" + phase + "\"}}";
    }
    text += events_;
    text += "\n]\n";
    const std::string dir = root_ + "/framework/pevents/" + HourFolder(hour_s_);
    STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(dir));
    STEPSCOPE_RETURN_IF_ERROR(
        WriteFileAtomically(dir + "/" + std::to_string(last_end_us_) + "_" + kNode + "_pythontimeline.json", text));
    events_.clear();
    return OkStatus();
  }

 private:
  std::string root_;
  std::string events_;
  std::map<std::string, int> pids_;  // phase -> pid, kept across files (stable numbering)
  int64_t hour_s_ = -1;
  int64_t base_us_ = 0;
  int64_t last_end_us_ = 0;
};

// Both outputs of the framework side, fed in time order.
class FrameworkOutput {
 public:
  FrameworkOutput(StoreStream* stream, SageMakerTraceWriter* trace, int64_t start_ns)
      : stream_(stream), trace_(trace), start_ns_(start_ns) {}

  // One rank of several: ranks leave each step's collectives at slightly different times, so
  // from each Resync() on this rank's times are up to kRankSkewMaxNs later than the job's. The
  // generator's gaps between steps (>= 300 us) keep the skewed events in order.
  void SkewSteps(uint64_t seed) { skew_rng_.emplace(seed); }
  void Resync() {
    if (skew_rng_) skew_ns_ = static_cast<int64_t>(skew_rng_->Uniform() * static_cast<double>(kRankSkewMaxNs));
  }

  Status Span(const std::string& name, int64_t start_ns, int64_t end_ns) {
    start_ns += skew_ns_;
    end_ns += skew_ns_;
    ++events_;
    if (stream_ != nullptr) {
      STEPSCOPE_ASSIGN_OR_RETURN(uint32_t id, stream_->Id(name));
      STEPSCOPE_RETURN_IF_ERROR(stream_->Add(Ticks(start_ns), store::RecordKind::kBegin, id, 0));
      STEPSCOPE_RETURN_IF_ERROR(stream_->Add(Ticks(end_ns), store::RecordKind::kEnd, id, 0));
    }
    if (trace_ != nullptr) STEPSCOPE_RETURN_IF_ERROR(trace_->Add(start_ns, end_ns, name, ""));
    return OkStatus();
  }
  Status StepBegin(store::Phase phase, int64_t step, int64_t start_ns) {
    start_ns += skew_ns_;
    if (stream_ == nullptr) return OkStatus();
    return stream_->Add(Ticks(start_ns), store::RecordKind::kStepBegin, 0, static_cast<uint64_t>(step),
                        static_cast<uint8_t>(phase));
  }
  Status StepEnd(store::Phase phase, int64_t step, int64_t start_ns, int64_t end_ns) {
    start_ns += skew_ns_;
    end_ns += skew_ns_;
    ++events_;
    if (stream_ != nullptr) {
      STEPSCOPE_RETURN_IF_ERROR(stream_->Add(Ticks(end_ns), store::RecordKind::kStepEnd, 0, static_cast<uint64_t>(step),
                                             static_cast<uint8_t>(phase)));
    }
    if (trace_ != nullptr) {
      const std::string name = std::string("Step:ModeKeys.") + store::PhaseName(phase);
      STEPSCOPE_RETURN_IF_ERROR(trace_->Add(start_ns, end_ns, name, "{\"step_num\":\"" + std::to_string(step) + "\"}"));
    }
    return OkStatus();
  }
  // The loader facts docs/pytorch.md lists, as the torch integration records them.
  Status LoaderInitialized(int64_t at_ns, int64_t batch_size, int cores) {
    at_ns += skew_ns_;
    ++events_;
    if (stream_ != nullptr) {
      STEPSCOPE_ASSIGN_OR_RETURN(uint32_t id, stream_->Id("DataLoaderIterInitialize"));
      const int64_t ticks = Ticks(at_ns);
      STEPSCOPE_RETURN_IF_ERROR(stream_->Add(ticks, store::RecordKind::kInstant, id, 0));
      const std::pair<const char*, int64_t> ints[] = {{"num_workers", 8},       {"pin_memory", 1}, {"prefetch_factor", 2},
                                                      {"batch_size", batch_size}, {"persistent_workers", 0},
                                                      {"drop_last", 1},         {"cores", cores}};
      for (const auto& [key, value] : ints) {
        STEPSCOPE_ASSIGN_OR_RETURN(uint32_t key_id, stream_->Id(key));
        STEPSCOPE_RETURN_IF_ERROR(stream_->Add(ticks, store::RecordKind::kArgInt, key_id, static_cast<uint64_t>(value)));
      }
      for (const auto& [key, value] : {std::pair<const char*, const char*>{"dataset", "ImageFolder"}, {"sampler", "RandomSampler"}}) {
        STEPSCOPE_ASSIGN_OR_RETURN(uint32_t key_id, stream_->Id(key));
        STEPSCOPE_ASSIGN_OR_RETURN(uint32_t value_id, stream_->Id(value));
        STEPSCOPE_RETURN_IF_ERROR(stream_->Add(ticks, store::RecordKind::kArgString, key_id, value_id));
      }
    }
    if (trace_ != nullptr) {
      STEPSCOPE_RETURN_IF_ERROR(trace_->Add(at_ns, at_ns, "DataLoaderIterInitialize",
                                            "{\"num_workers\":8,\"pin_memory\":1,\"prefetch_factor\":2,\"batch_size\":" +
                                                std::to_string(batch_size) + ",\"cores\":" + std::to_string(cores) + "}"));
    }
    return OkStatus();
  }
  int64_t events() const { return events_; }

 private:
  int64_t Ticks(int64_t unix_ns) const { return unix_ns - start_ns_ + kMonotonicBaseNs; }
  StoreStream* stream_;
  SageMakerTraceWriter* trace_;
  int64_t start_ns_;
  int64_t events_ = 0;
  std::optional<Rng> skew_rng_;  // set for one rank of several
  int64_t skew_ns_ = 0;
};

// The training loop: passes of kTrainStepsPerPass TRAIN steps then kEvalStepsPerPass EVAL steps.
Status WriteFramework(const SyntheticRunOptions& options, FrameworkOutput& out, SyntheticRunSummary& summary) {
  Rng rng(options.seed * 7919 + 17);
  const int64_t start_ns = options.start_unix_s * 1'000'000'000;
  const int64_t end_ns = start_ns + options.duration_s * 1'000'000'000;
  // Nominal TRAIN step: 15 + 70 + 130 + 25 ms of phases and ~2.5 ms of gaps = 242.5 ms (4.12/s).
  const double scale = 1.0 / (options.train_steps_per_s * 0.2425);
  auto ms = [&](double value) { return static_cast<int64_t>(value * scale * 1e6); };
  int64_t t = start_ns + 5'000'000'000;  // the job starts 5 s after the sampler
  int64_t train_step = 0, eval_step = 0;
  while (t < end_ns - 2'000'000'000) {
    out.Resync();
    STEPSCOPE_RETURN_IF_ERROR(out.LoaderInitialized(t, 64, options.cpu_cores));
    t += 3'000'000;
    for (int i = 0; i < kTrainStepsPerPass && t < end_ns - 2'000'000'000; ++i, ++train_step) {
      const double t_s = static_cast<double>(t - start_ns) * 1e-9;
      int64_t data = ms(15.0 + rng.Noise(5.0) + (InLowGpuStretch(t_s) ? 400.0 : 0.0));
      int64_t backward = ms(130.0 + rng.Noise(8.0));
      if (rng.Uniform() < 0.001) {  // an injected slow step
        ++summary.slow_steps;
        if (rng.Uniform() < 0.5) data += 1'500'000'000;
        else backward *= 4;
      }
      const int64_t step_start = t;
      out.Resync();
      STEPSCOPE_RETURN_IF_ERROR(out.StepBegin(store::Phase::kTrain, train_step, step_start));
      t += 200'000;
      STEPSCOPE_RETURN_IF_ERROR(out.Span("DataLoaderIter", t, t + data));
      t += data + 500'000;
      const int64_t forward = ms(70.0 + rng.Noise(5.0));
      STEPSCOPE_RETURN_IF_ERROR(out.Span("Forward", t, t + forward));
      t += forward + 500'000;
      STEPSCOPE_RETURN_IF_ERROR(out.Span("Backward", t, t + backward));
      t += backward + 500'000;
      const int64_t optimizer = ms(25.0 + rng.Noise(3.0));
      STEPSCOPE_RETURN_IF_ERROR(out.Span("OptimizerStep", t, t + optimizer));
      t += optimizer + 500'000;
      STEPSCOPE_RETURN_IF_ERROR(out.StepEnd(store::Phase::kTrain, train_step, step_start, t));
      t += 300'000;
      ++summary.train_steps;
    }
    if (t >= end_ns - 2'000'000'000) break;
    out.Resync();
    STEPSCOPE_RETURN_IF_ERROR(out.LoaderInitialized(t, 128, options.cpu_cores));
    t += 3'000'000;
    for (int i = 0; i < kEvalStepsPerPass && t < end_ns - 2'000'000'000; ++i, ++eval_step) {
      const int64_t step_start = t;
      out.Resync();
      STEPSCOPE_RETURN_IF_ERROR(out.StepBegin(store::Phase::kEval, eval_step, step_start));
      t += 200'000;
      const int64_t data = ms(12.0 + rng.Noise(4.0));
      STEPSCOPE_RETURN_IF_ERROR(out.Span("DataLoaderIter", t, t + data));
      t += data + 500'000;
      const int64_t forward = ms(60.0 + rng.Noise(5.0));
      STEPSCOPE_RETURN_IF_ERROR(out.Span("Forward", t, t + forward));
      t += forward + 500'000;
      STEPSCOPE_RETURN_IF_ERROR(out.StepEnd(store::Phase::kEval, eval_step, step_start, t));
      t += 300'000;
      ++summary.eval_steps;
    }
  }
  return OkStatus();
}

uint64_t DirectoryBytes(const std::string& dir) {
  std::error_code error;
  uint64_t bytes = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file(error)) bytes += it->file_size(error);
  }
  return bytes;
}


// A node of the run: its directory, its rank among the nodes and how far its clock reads ahead
// of node 0's (the reference).
struct NodeInfo {
  int32_t rank = 0;
  std::string name;
  int64_t clock_ahead_ns = 0;
};

NodeInfo NodeAt(const SyntheticRunOptions& options, int32_t rank) {
  if (options.nodes == 1) return {0, kNode, 0};
  return {rank, "node" + std::to_string(rank), rank * kNodeClockAheadNs};
}

// `start_ns` on the node's own clock. nodes_expected and node_rank as the launcher writes them
// for a torchrun command that names its node count.
std::string ManifestJson(const SyntheticRunOptions& options, const NodeInfo& node, int64_t start_ns) {
  const int64_t end_ns = start_ns + options.duration_s * 1'000'000'000;
  std::string gpus;
  for (int g = 0; g < options.gpus; ++g) gpus += std::string(g ? "," : "") + "\"NVIDIA A100-SXM4-80GB\"";
  const std::string shape = options.nodes > 1 ? R"(,"nodes_expected":)" + std::to_string(options.nodes) +
                                                    R"(,"node_rank":)" + std::to_string(node.rank)
                                              : "";
  return std::string(R"({"schema_version":1,"format_version":1,"job":")") + kJob + R"(","node":")" + node.name +
         R"(","command":["python3","train.py"],"status":"exited","exit":{"code":0},"ended":"exited with code 0",)" +
         R"("cpu_cores":)" + std::to_string(options.cpu_cores) + R"(,"capabilities":{"gpu":{"available":)" +
         (options.gpus > 0 ? "true" : "false") + R"(,"gpus":[)" + gpus + R"(]}},"clock":)" + ClockAnchorJson(start_ns) +
         R"(,"start_time_ns":)" + std::to_string(start_ns) + R"(,"end_time_ns":)" + std::to_string(end_ns) +
         R"(,"duration_s":)" + std::to_string(options.duration_s) + shape + R"(,"pids":{"launcher":)" +
         std::to_string(kSystemPid) + R"(,"job":)" + std::to_string(kTrainPid) + "}}";
}

// The node's clock_sync.json (docs/formats.md, "Clock alignment") as its local rank 0 leaves it:
// the reference names itself; another node holds a burst when the job starts and every 60 s
// after (the first kept, then the latest), each measuring its lead over the reference exactly.
std::string ClockSyncJson(const SyntheticRunOptions& options, const NodeInfo& node, int64_t job_start_ns) {
  std::vector<int64_t> bursts;
  const int64_t end_ns = options.start_unix_s * 1'000'000'000 + options.duration_s * 1'000'000'000;
  for (int64_t at = job_start_ns; node.rank > 0 && at < end_ns; at += kClockSyncPeriodNs) bursts.push_back(at);
  if (bursts.size() > kClockSyncMaxSamples) bursts.erase(bursts.begin() + 1, bursts.end() - (kClockSyncMaxSamples - 1));
  std::string samples;
  for (int64_t at : bursts) {
    samples += std::string(samples.empty() ? "" : ",") + R"({"at_ns":)" + std::to_string(at + node.clock_ahead_ns) +
               R"(,"offset_ns":)" + std::to_string(-node.clock_ahead_ns) + R"(,"round_trip_ns":)" +
               std::to_string(kClockSyncRoundTripNs) + "}";
  }
  return R"({"version":1,"node":")" + node.name + R"(","node_rank":)" + std::to_string(node.rank) + R"(,"nodes":)" +
         std::to_string(options.nodes) + R"(,"reference_node":")" + NodeAt(options, 0).name + R"(","samples":[)" +
         samples + R"(],"error":""})";
}

// A training process's stream meta. Of several ranks, it carries torchrun's variables as the
// recorder copies them from the environment: strings, in the order nlohmann writes its keys.
std::string ProcessMetaJson(const SyntheticRunOptions& options, const NodeInfo& node, int32_t local_rank, int64_t pid,
                            const std::string& anchor) {
  const int32_t world = options.nodes * options.ranks_per_node;
  const std::string ranks =
      world > 1 ? R"(,"ranks":{"GROUP_RANK":")" + std::to_string(node.rank) + R"(","LOCAL_RANK":")" +
                      std::to_string(local_rank) + R"(","RANK":")" +
                      std::to_string(node.rank * options.ranks_per_node + local_rank) + R"(","WORLD_SIZE":")" +
                      std::to_string(world) + "\"}"
                : "";
  return R"({"kind":"process","pid":)" + std::to_string(pid) + R"(,"ppid":)" + std::to_string(kSystemPid) +
         R"(,"ticks_per_ns":1.0,"clock_anchor":)" + anchor + ranks + "}";
}

// The node's sampler: every poll, every metric, into its system stream and the twin's files.
Status WriteSystem(const SyntheticRunOptions& options, int32_t node_rank, StoreStream* system,
                   SageMakerSystemWriter* twin, SyntheticRunSummary& summary) {
  const std::vector<Metric> metrics = MetricCatalogue(options.cpu_cores, options.gpus);
  std::vector<uint32_t> ids(metrics.size(), 0);
  if (system != nullptr) {
    for (size_t m = 0; m < metrics.size(); ++m) {
      STEPSCOPE_ASSIGN_OR_RETURN(ids[m], system->Id(metrics[m].name));
    }
  }
  Rng rng(options.seed + static_cast<uint64_t>(node_rank) * 1'000'003);  // node 0: the one-node run's
  std::vector<double> values;
  const int64_t interval_ns = options.poll_interval_ms * 1'000'000;
  const int64_t duration_ns = options.duration_s * 1'000'000'000;
  int64_t next_calibration_ns = 0;
  int64_t polls = 0;
  for (int64_t poll = 0; poll * interval_ns < duration_ns; ++poll) {
    const int64_t offset_ns = poll * interval_ns;
    const double t_s = static_cast<double>(offset_ns) * 1e-9;
    PollValues(metrics, options.cpu_cores, options.gpus, poll, t_s, static_cast<double>(options.duration_s), rng, values);
    const int64_t ticks = kMonotonicBaseNs + offset_ns;
    const double timestamp_s = static_cast<double>(options.start_unix_s) + t_s;
    for (size_t m = 0; m < metrics.size(); ++m) {
      if (std::isnan(values[m])) continue;
      if (system != nullptr) {
        STEPSCOPE_RETURN_IF_ERROR(system->Add(ticks, store::RecordKind::kSample, ids[m], Bits(values[m])));
        ++summary.samples;
      }
      if (twin != nullptr && metrics[m].sm_type != nullptr) {
        STEPSCOPE_RETURN_IF_ERROR(twin->Add(timestamp_s, metrics[m], values[m]));
      }
    }
    if (system != nullptr && offset_ns >= next_calibration_ns) {
      STEPSCOPE_RETURN_IF_ERROR(system->ClockPairAt(ticks));
      next_calibration_ns += kCalibrationIntervalNs;
    }
    ++polls;
  }
  summary.polls = polls;
  if (twin != nullptr) {
    STEPSCOPE_RETURN_IF_ERROR(twin->Flush());
    summary.sagemaker_records = twin->records();
  }
  return system != nullptr ? system->Finish() : OkStatus();
}

// One rank's training process: its stream and, for the twin's rank, the twin's traces. Every
// rank runs the same steps (the same generator seed), so only global rank 0 counts them.
Status WriteRank(const SyntheticRunOptions& options, const NodeInfo& node, const std::string& node_dir, int32_t local_rank,
                 const std::string& anchor, bool twin, SyntheticRunSummary& summary) {
  const int64_t pid = kTrainPid + local_rank;
  std::unique_ptr<StoreStream> train;
  if (options.write_stepscope) {
    STEPSCOPE_ASSIGN_OR_RETURN(train, StoreStream::Create(node_dir, "train-" + std::to_string(pid),
                                                          ProcessMetaJson(options, node, local_rank, pid, anchor), 32 * 1024,
                                                          static_cast<uint32_t>(pid)));
  }
  SageMakerTraceWriter trace(options.out_dir + "/sagemaker");
  FrameworkOutput framework(train.get(), twin ? &trace : nullptr, options.start_unix_s * 1'000'000'000);
  const int32_t rank = node.rank * options.ranks_per_node + local_rank;
  if (options.nodes * options.ranks_per_node > 1) framework.SkewSteps(options.seed * 104'729 + static_cast<uint64_t>(rank));
  SyntheticRunSummary not_counted;
  STEPSCOPE_RETURN_IF_ERROR(WriteFramework(options, framework, rank == 0 ? summary : not_counted));
  summary.events += framework.events();
  if (twin) STEPSCOPE_RETURN_IF_ERROR(trace.Flush());
  if (train == nullptr) return OkStatus();
  STEPSCOPE_RETURN_IF_ERROR(train->ClockPairAt(kMonotonicBaseNs + options.duration_s * 1'000'000'000));
  return train->Finish();
}

// One node: its manifest, clock record, sampler and ranks, all on the node's own clock; node 0
// also writes the SageMaker twin.
Status WriteNode(const SyntheticRunOptions& options, const NodeInfo& node, SyntheticRunSummary& summary) {
  const int64_t start_ns = options.start_unix_s * 1'000'000'000;
  const std::string node_dir = options.out_dir + "/stepscope/" + kJob + "/" + node.name;
  const std::string anchor = ClockAnchorJson(start_ns + node.clock_ahead_ns);
  std::unique_ptr<StoreStream> system;
  if (options.write_stepscope) {
    STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(node_dir));
    STEPSCOPE_RETURN_IF_ERROR(
        WriteFileAtomically(node_dir + "/manifest.json", ManifestJson(options, node, start_ns + node.clock_ahead_ns)));
    if (options.nodes > 1) {
      // The job starts 5 s after the sampler (WriteFramework); so does the first burst.
      STEPSCOPE_RETURN_IF_ERROR(
          WriteFileAtomically(node_dir + "/clock_sync.json", ClockSyncJson(options, node, start_ns + 5'000'000'000)));
    }
    STEPSCOPE_ASSIGN_OR_RETURN(system, StoreStream::Create(node_dir, "system",
                                                           R"({"kind":"system","pid":)" + std::to_string(kSystemPid) +
                                                               R"(,"ppid":1,"ticks_per_ns":1.0,"clock_anchor":)" + anchor + "}",
                                                           64 * 1024, kMainTid));
  }
  const bool twin = options.write_sagemaker && node.rank == 0;
  SageMakerSystemWriter sm_system(options.out_dir + "/sagemaker");
  STEPSCOPE_RETURN_IF_ERROR(WriteSystem(options, node.rank, system.get(), twin ? &sm_system : nullptr, summary));
  for (int32_t local_rank = 0; local_rank < options.ranks_per_node; ++local_rank) {
    STEPSCOPE_RETURN_IF_ERROR(WriteRank(options, node, node_dir, local_rank, anchor, twin && local_rank == 0, summary));
  }
  return OkStatus();
}

}  // namespace

StatusOr<SyntheticRunSummary> WriteSyntheticRun(const SyntheticRunOptions& options) {
  if (options.out_dir.empty() || options.duration_s <= 0 || options.cpu_cores < 0 || options.gpus < 0 ||
      options.poll_interval_ms <= 0 || !(options.train_steps_per_s > 0) || options.nodes < 1 ||
      options.ranks_per_node < 1) {
    return InvalidArgumentError(
        "synthetic run: need an output directory, a positive duration, poll interval and step rate, and at least one "
        "node and one rank per node");
  }
  SyntheticRunSummary summary;
  const std::string sm_root = options.out_dir + "/sagemaker";
  if (options.write_stepscope) summary.stepscope_dir = options.out_dir + "/stepscope/" + kJob;
  if (options.write_sagemaker) {
    STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(sm_root + "/system/incremental"));
    STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(sm_root + "/framework/pevents"));
    summary.sagemaker_dir = sm_root;
  }
  for (int32_t rank = 0; rank < options.nodes; ++rank) {
    STEPSCOPE_RETURN_IF_ERROR(WriteNode(options, NodeAt(options, rank), summary));
  }
  if (options.write_sagemaker) {
    STEPSCOPE_RETURN_IF_ERROR(WriteFileAtomically(sm_root + "/system/training_job_end.ts",
                                                  std::to_string(options.start_unix_s + options.duration_s) + "\n"));
    summary.sagemaker_bytes = DirectoryBytes(sm_root);
  }
  if (options.write_stepscope) summary.stepscope_bytes = DirectoryBytes(summary.stepscope_dir);
  return summary;
}

}  // namespace stepscope::benchmarks
