// Bytes at rest per event and per system sample (SPEC §3, §6: <= 12 bytes per framework event
// on average including arguments, <= 4 bytes per system sample), measured on realistic data
// written through the real recorder and store, after CompactStream, over the whole log: block
// frames, string tables, meta, clock and stats frames and the file header all count.
//
//   store_size_benchmark [--events N] [--hours H] [--keep DIR]
//
// (a) Framework events: a training loop (steps, data loader, forward with nested per-layer
//     annotations, backward, optimizer, counters, int/double/string arguments; ~50 distinct
//     names), N events (default 1,000,000). A span (begin + end record) counts as one event;
//     arguments belong to their event. Recorded twice:
//       a1. through the real recorder in a tight loop: exactly what the recorder writes, but
//           timestamps only nanoseconds apart, which flatters the delta-coded tick column;
//       a2. the same loop through the store's writer with the recorder's block discipline and
//           synthetic timestamps spaced like a real GPU training step of ~75 ms (jittered
//           durations from tens of microseconds to tens of milliseconds), plus the calibration
//           and stats frames the recorder's flusher adds every second. a2 is the figure held
//           to the bar.
// (b) System samples: a 32-core, 8-GPU node polled every 500 ms for H hours (default 3):
//     201 metrics per poll with random-walk values quantised as the sources quantise them
//     (jiffies, NVML integers and milliwatts, pages, MiB), all samples of a poll with the same
//     ticks, written as kSample records the way src/launcher/system_stream_sink.cc writes them
//     today: 64 KiB ring blocks filled by consecutive polls, each sealed and flushed when full,
//     a clock pair every 10 s, stats at the end. Also shown, for comparison: one block per
//     poll, sealed and flushed right away (so no value is delta-coded against its previous
//     sample), with the same metadata.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "analysis/run_decoder.h"
#include "base/clock.h"
#include "base/file_system.h"
#include "recorder/recorder.h"
#include "stepscope/stepscope.h"
#include "store/stream_reader.h"
#include "store/stream_writer.h"

namespace stepscope {
namespace {

using store::RecordKind;

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// The training loop, written against a small interface so the same sequence feeds the real
// recorder (a1) and the synthetic-time writer (a2).

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual uint32_t Intern(const std::string& name) = 0;
  virtual void Record(RecordKind kind, uint32_t name, uint8_t phase, uint64_t value) = 0;
  // Time passing on the training thread before the next record.
  virtual void Elapse(double ns) = 0;
};

class TrainingLoop {
 public:
  TrainingLoop(EventSink& sink, uint64_t seed) : sink_(sink), random_(seed) {
    for (const char* name : {"zero_grad", "dataloader", "h2d_copy", "forward", "embedding", "lm_head", "loss",
                             "backward", "allreduce", "optimizer.step", "checkpoint", "self_attn", "mlp",
                             "input_layernorm"}) {
      ids_[name] = sink.Intern(name);
    }
    for (int layer = 0; layer < kLayers; ++layer) {
      layer_[layer] = sink.Intern("model.layers." + std::to_string(layer));
      layer_backward_[layer] = sink.Intern("model.layers." + std::to_string(layer) + ".backward");
    }
    for (int group = 0; group < kParamGroups; ++group) group_[group] = sink.Intern("param_group." + std::to_string(group));
    for (const char* key : {"batch_size", "seq_len", "device", "dtype", "bytes", "grad_norm", "cuda:0", "bfloat16",
                            "loss_value", "lr"}) {
      ids_[key] = sink.Intern(key);
    }
  }

  // One training step; returns the events it recorded (a span counts once).
  uint64_t Step(int64_t step) {
    events_ = 0;
    sink_.Record(RecordKind::kStepBegin, 0, 0, static_cast<uint64_t>(step));
    ++events_;
    Span("zero_grad", 150e3);
    Begin("dataloader");
    Arg(RecordKind::kArgInt, "batch_size", 64);
    Arg(RecordKind::kArgInt, "seq_len", 2048);
    Wait(Jitter(8e6, 0.8));
    End("dataloader");
    Begin("h2d_copy");
    Arg(RecordKind::kArgString, "device", ids_["cuda:0"]);
    Wait(Jitter(600e3));
    End("h2d_copy");

    Begin("forward");
    Arg(RecordKind::kArgString, "dtype", ids_["bfloat16"]);
    Span("embedding", 200e3);
    for (int layer = 0; layer < kLayers; ++layer) {
      Gap();
      sink_.Record(RecordKind::kBegin, layer_[layer], 0, 0);
      ++events_;
      if (layer % 2 == 0) Span("input_layernorm", 40e3);
      Span("self_attn", 1.0e6);
      Span("mlp", 800e3);
      Gap();
      sink_.Record(RecordKind::kEnd, layer_[layer], 0, 0);
    }
    Span("lm_head", 500e3);
    Span("loss", 200e3);
    End("forward");
    loss_ = std::max(0.5, loss_ * 0.9995 + Normal(0, 0.01));
    Counter("loss_value", loss_);
    Counter("lr", 3e-4 * std::min(1.0, static_cast<double>(step + 1) / 2000));

    Begin("backward");
    for (int layer = kLayers - 1; layer >= 0; --layer) {
      Gap();
      sink_.Record(RecordKind::kBegin, layer_backward_[layer], 0, 0);
      ++events_;
      Wait(Jitter(2.5e6));
      sink_.Record(RecordKind::kEnd, layer_backward_[layer], 0, 0);
    }
    Begin("allreduce");
    Arg(RecordKind::kArgInt, "bytes", 1'400'000'000);
    Wait(Jitter(7e6, 0.4));
    End("allreduce");
    End("backward");

    Begin("optimizer.step");
    Arg(RecordKind::kArgDouble, "grad_norm", Bits(std::fabs(Normal(1.0, 0.2))));
    for (int group = 0; group < kParamGroups; ++group) {
      Gap();
      sink_.Record(RecordKind::kBegin, group_[group], 0, 0);
      ++events_;
      Wait(Jitter(1.5e6));
      sink_.Record(RecordKind::kEnd, group_[group], 0, 0);
    }
    End("optimizer.step");
    if (step % 100 == 99) {
      Gap();
      sink_.Record(RecordKind::kInstant, ids_["checkpoint"], 0, 0);
      ++events_;
    }
    Gap();
    sink_.Record(RecordKind::kStepEnd, 0, 0, static_cast<uint64_t>(step));
    return events_;
  }

 private:
  static constexpr int kLayers = 12;
  static constexpr int kParamGroups = 4;

  double Jitter(double mean_ns, double spread = 0.2) {
    return mean_ns * std::uniform_real_distribution<double>(1 - spread, 1 + spread)(random_);
  }
  double Normal(double mean, double sd) { return std::normal_distribution<double>(mean, sd)(random_); }
  // Python and dispatch overhead between two annotations.
  void Gap() { sink_.Elapse(Jitter(12e3, 0.7)); }
  void Wait(double ns) { sink_.Elapse(ns); }
  void Begin(const char* name) {
    Gap();
    sink_.Record(RecordKind::kBegin, ids_[name], 0, 0);
    ++events_;
  }
  void End(const char* name) {
    Gap();
    sink_.Record(RecordKind::kEnd, ids_[name], 0, 0);
  }
  void Span(const char* name, double mean_ns) {
    Begin(name);
    Wait(Jitter(mean_ns));
    End(name);
  }
  void Arg(RecordKind kind, const char* key, uint64_t value) { sink_.Record(kind, ids_[key], 0, value); }
  void Counter(const char* name, double value) {
    Gap();
    sink_.Record(RecordKind::kCounter, ids_[name], 0, Bits(value));
    ++events_;
  }

  EventSink& sink_;
  std::mt19937_64 random_;
  std::map<std::string, uint32_t> ids_;
  uint32_t layer_[kLayers] = {};
  uint32_t layer_backward_[kLayers] = {};
  uint32_t group_[kParamGroups] = {};
  double loss_ = 4.0;
  uint64_t events_ = 0;
};

// a1: the real recorder (C API), timestamps taken by the recorder itself.
class RecorderSink : public EventSink {
 public:
  uint32_t Intern(const std::string& name) override { return stepscope_intern(name.data(), name.size()); }
  void Record(RecordKind kind, uint32_t name, uint8_t phase, uint64_t value) override {
    switch (kind) {
      case RecordKind::kBegin: stepscope_begin(name); break;
      case RecordKind::kEnd: stepscope_end(name); break;
      case RecordKind::kInstant: stepscope_instant(name); break;
      case RecordKind::kCounter: {
        double d;
        std::memcpy(&d, &value, sizeof d);
        stepscope_counter(name, d);
        break;
      }
      case RecordKind::kStepBegin: stepscope_step_begin(STEPSCOPE_PHASE_TRAIN, static_cast<int64_t>(value)); break;
      case RecordKind::kStepEnd: stepscope_step_end(STEPSCOPE_PHASE_TRAIN, static_cast<int64_t>(value)); break;
      case RecordKind::kArgInt: stepscope_arg_int(name, static_cast<int64_t>(value)); break;
      case RecordKind::kArgDouble: {
        double d;
        std::memcpy(&d, &value, sizeof d);
        stepscope_arg_double(name, d);
        break;
      }
      case RecordKind::kArgString: stepscope_arg_string(name, static_cast<uint32_t>(value)); break;
      default: break;
    }
  }
  void Elapse(double) override {}
};

// a2 and b: writes records into a StreamWriter's ring the way the recorder's hot path and
// flusher do (fill a block, seal it when full, flush sealed blocks every 100 ms, a clock pair
// and a stats frame every `calibration_interval_ns`, stats only at the end when
// `periodic_stats` is off), on a synthetic clock.
class SyntheticStream : public EventSink {
 public:
  SyntheticStream(const std::string& directory, const std::string& name, const std::string& kind, uint32_t block_bytes,
                  double ticks_per_ns, double calibration_interval_ns = 1e9, bool periodic_stats = true)
      : ticks_per_ns_(ticks_per_ns),
        next_calibration_ns_(calibration_interval_ns),
        calibration_interval_ns_(calibration_interval_ns),
        periodic_stats_(periodic_stats) {
    store::StreamWriterOptions options;
    options.directory = directory;
    options.name = name;
    options.block_bytes = block_bytes;
    options.block_count = 64;
    // What the recorder's meta frame holds, at about the same size.
    options.meta_json = "{\"block_bytes\":" + std::to_string(block_bytes) +
                        ",\"block_count\":64,\"clock_anchor\":{\"monotonic_ns\":1319957024967,"
                        "\"realtime_ns\":1795259281936676489},\"command\":\"python3 train.py --config "
                        "configs/llama-7b.yaml --batch-size 64\",\"format_version\":1,\"kind\":\"" +
                        kind + "\",\"pid\":4242,\"ppid\":4200,\"tick_source\":\"tsc\",\"ticks_per_ns\":" +
                        std::to_string(ticks_per_ns) + "}";
    options.clock_anchor = {Ticks(), 1'000'000'000};
    auto writer = store::StreamWriter::Create(options);
    if (!writer.ok()) {
      std::fprintf(stderr, "store_size_benchmark: %s\n", writer.status().message().c_str());
      std::exit(1);
    }
    writer_ = std::move(*writer);
  }

  uint32_t Intern(const std::string& name) override {
    uint32_t id = ++last_id_;
    Check(writer_->AppendStrings({{id, name}}));
    return id;
  }

  void Record(RecordKind kind, uint32_t name, uint8_t phase, uint64_t value) override {
    if (block_ == nullptr || next_ == block_->capacity) NewBlock();
    store::RingFile::Records(block_)[next_++] = {Ticks(), name, static_cast<uint8_t>(kind), phase, 0, value};
    block_->count.store(next_, std::memory_order_release);
    ++records_;
  }

  void Elapse(double ns) override {
    now_ns_ += ns;
    if (now_ns_ >= next_flush_ns_) {
      Check(writer_->FlushSealed().status());
      next_flush_ns_ = now_ns_ + 100e6;
    }
    if (now_ns_ >= next_calibration_ns_) {
      Check(writer_->AppendClockPair({Ticks(), static_cast<uint64_t>(1e9 + now_ns_)}));
      if (periodic_stats_) Check(writer_->AppendStats(StatsJson()));
      next_calibration_ns_ = now_ns_ + calibration_interval_ns_;
    }
  }

  // The sampler's discipline: one block per poll, sealed and flushed at once.
  void SealAndFlush() {
    if (block_ != nullptr) writer_->ring().Seal(block_);
    block_ = nullptr;
    Check(writer_->FlushSealed().status());
  }

  // What Stop() does, then what `stepscope run` does after the process is gone.
  void Finish(const std::string& directory, const std::string& name) {
    Check(writer_->FlushSealed().status());
    Check(writer_->SnapshotOpenBlocks());
    Check(writer_->AppendClockPair({Ticks(), static_cast<uint64_t>(1e9 + now_ns_)}));
    Check(writer_->AppendStats(StatsJson()));
    writer_.reset();  // releases the ring's lock, as the process's exit would
    Check(store::CompactStream(directory, name));
  }

  double now_ns() const { return now_ns_; }
  uint64_t records() const { return records_; }

 private:
  uint64_t Ticks() const { return 5'000'000'000ull + static_cast<uint64_t>(now_ns_ * ticks_per_ns_); }
  void NewBlock() {
    if (block_ != nullptr) writer_->ring().Seal(block_);
    block_ = writer_->ring().Claim(4242, 0);
    if (block_ == nullptr) {  // the flusher keeps up in real life; here, flush and retry
      Check(writer_->FlushSealed().status());
      block_ = writer_->ring().Claim(4242, 0);
    }
    if (block_ == nullptr) {
      std::fprintf(stderr, "store_size_benchmark: ring full\n");
      std::exit(1);
    }
    next_ = 0;
  }
  std::string StatsJson() const {
    return "{\"events_recorded\":" + std::to_string(records_) + ",\"events_dropped\":0,\"bytes_written\":" +
           std::to_string(writer_->log_bytes()) + ",\"blocks_flushed\":" + std::to_string(writer_->blocks_flushed()) + "}";
  }
  static void Check(const Status& status) {
    if (!status.ok()) {
      std::fprintf(stderr, "store_size_benchmark: %s\n", status.message().c_str());
      std::exit(1);
    }
  }

  std::unique_ptr<store::StreamWriter> writer_;
  store::BlockHeader* block_ = nullptr;
  uint32_t next_ = 0;
  uint32_t last_id_ = 0;
  double ticks_per_ns_;
  double now_ns_ = 0;
  double next_flush_ns_ = 100e6;
  double next_calibration_ns_;
  double calibration_interval_ns_;
  bool periodic_stats_;
  uint64_t records_ = 0;
};

struct AtRest {
  uint64_t log_bytes = 0;
  uint64_t block_bytes = 0;
  uint64_t string_bytes = 0;
  uint64_t other_bytes = 0;
  uint64_t records = 0;
  uint64_t events = 0;  // spans, steps, instants, counters (arguments belong to their event)
  uint64_t samples = 0;
  uint64_t dropped = 0;
  size_t files = 0;
};

// Counts what the run decoder hands over: hours of samples are millions, which nothing here keeps.
class CountEvents final : public analysis::RecordedEventSink {
 public:
  void OnEvent(uint32_t, const analysis::RecordedEvent&, std::span<const analysis::RecordedArg>, bool) override {
    ++events;
  }
  void OnSample(uint32_t, uint32_t, int64_t, double) override { ++samples; }
  uint64_t events = 0;
  uint64_t samples = 0;
};

AtRest Measure(const std::string& node_dir) {
  AtRest at_rest;
  auto entries = LocalFileSystem().ListDirectory(node_dir);
  at_rest.files = entries.ok() ? entries->size() : 0;
  CountEvents counts;
  auto run = analysis::RunDecoder::Open(node_dir);
  Status read = run.ok() ? (*run)->Poll(counts) : run.status();
  if (!read.ok()) {
    std::fprintf(stderr, "store_size_benchmark: %s\n", read.message().c_str());
    std::exit(1);
  }
  for (const std::string& problem : (*run)->problems()) std::fprintf(stderr, "  reader: %s\n", problem.c_str());
  for (const analysis::RecordedStream& stream : (*run)->streams()) {
    if (stream.ring_bytes != 0) std::fprintf(stderr, "store_size_benchmark: a ring survived compaction\n");
    at_rest.log_bytes += stream.log_bytes;
    at_rest.block_bytes += stream.block_bytes;
    at_rest.string_bytes += stream.string_bytes;
    at_rest.other_bytes += stream.other_bytes;
    at_rest.records += stream.records;
    at_rest.dropped += stream.dropped_events;
  }
  at_rest.events = counts.events;
  at_rest.samples = counts.samples;
  return at_rest;
}

void PrintFramework(const char* label, const AtRest& r, bool held_to_bar) {
  const double per_event = static_cast<double>(r.log_bytes) / r.events;
  std::printf("%s\n", label);
  std::printf("  events %llu (records %llu, dropped %llu), log at rest %llu bytes = blocks %llu + strings %llu + other %llu\n",
              static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.records),
              static_cast<unsigned long long>(r.dropped), static_cast<unsigned long long>(r.log_bytes),
              static_cast<unsigned long long>(r.block_bytes), static_cast<unsigned long long>(r.string_bytes),
              static_cast<unsigned long long>(r.other_bytes));
  std::printf("  bytes per event (span = 1): %.3f   bar <= 12   %s\n", per_event,
              held_to_bar ? (per_event <= 12 ? "PASS" : "FAIL") : "(not the bar figure)");
  std::printf("  bytes per record:           %.3f\n", static_cast<double>(r.log_bytes) / r.records);
}

void PrintSamples(const char* label, const AtRest& r, bool held_to_bar) {
  const double per_sample = static_cast<double>(r.log_bytes) / r.samples;
  std::printf("%s\n", label);
  std::printf("  samples %llu, log at rest %llu bytes = blocks %llu + strings %llu + other %llu\n",
              static_cast<unsigned long long>(r.samples), static_cast<unsigned long long>(r.log_bytes),
              static_cast<unsigned long long>(r.block_bytes), static_cast<unsigned long long>(r.string_bytes),
              static_cast<unsigned long long>(r.other_bytes));
  std::printf("  bytes per sample: %.3f (blocks alone %.3f)   bar <= 4   %s\n", per_sample,
              static_cast<double>(r.block_bytes) / r.samples,
              held_to_bar ? (per_sample <= 4 ? "PASS" : "FAIL") : "(comparison only)");
}

// (b) The node's metrics, evolving like real ones.

class NodeModel {
 public:
  explicit NodeModel(uint64_t seed) : random_(seed) {
    for (int c = 0; c < kCores; ++c) core_util_[c] = Uniform(20, 90);
    for (int g = 0; g < kGpus; ++g) {
      gpu_util_[g] = Uniform(70, 100);
      gpu_memory_mib_[g] = Uniform(50000, 70000);
      gpu_power_mw_[g] = Uniform(250000, 400000);
      gpu_temp_[g] = Uniform(55, 70);
    }
  }

  static std::vector<std::string> Names() {
    std::vector<std::string> names;
    for (int c = 0; c < kCores; ++c) {
      for (const char* m : {"user_pct", "system_pct", "util_pct", "iowait_pct"}) {
        names.push_back("cpu/cpu" + std::to_string(c) + "/" + m);
      }
    }
    for (const char* m : {"user_pct", "system_pct", "util_pct", "iowait_pct"}) names.push_back(std::string("cpu/total/") + m);
    for (const char* m : {"memory/used_pct", "memory/used_bytes", "memory/total_bytes", "disk/read_bytes_per_s",
                          "disk/write_bytes_per_s", "disk/read_iops", "disk/write_iops", "disk/iops",
                          "network/rx_bytes_per_s", "network/tx_bytes_per_s"}) {
      names.push_back(m);
    }
    for (int g = 0; g < kGpus; ++g) {
      for (const char* m : {"util_pct", "memory_used_bytes", "memory_total_bytes", "memory_used_pct", "power_w",
                            "temperature_c", "sm_clock_mhz"}) {
        names.push_back("gpu/gpu" + std::to_string(g) + "/" + m);
      }
    }
    for (const char* m : {"process/cpu_pct", "process/rss_bytes", "process/count"}) names.push_back(m);
    return names;
  }

  // One 500 ms poll, in Names() order.
  std::vector<double> Poll() {
    std::vector<double> values;
    values.reserve(201);
    double user_sum = 0, system_sum = 0, iowait_sum = 0, total_sum = 0;
    for (int c = 0; c < kCores; ++c) {
      core_util_[c] = Clamp(core_util_[c] + Normal(0, 6), 0, 100);
      // USER_HZ = 100: a core counts ~50 jiffies per 500 ms, 49 or 51 when the poll drifts.
      const double total = 50 + (Uniform(0, 1) < 0.2 ? (Uniform(0, 1) < 0.5 ? -1 : 1) : 0);
      const double busy = std::round(core_util_[c] / 100 * total);
      const double system = std::round(busy * Uniform(0.05, 0.25));
      const double user = busy - system;
      const double iowait = Uniform(0, 1) < 0.1 ? std::round(Uniform(0, 3)) : 0;
      values.push_back(100 * user / total);
      values.push_back(100 * system / total);
      values.push_back(100 * busy / total);
      values.push_back(100 * iowait / total);
      user_sum += user, system_sum += system, iowait_sum += iowait, total_sum += total;
    }
    values.push_back(100 * user_sum / total_sum);
    values.push_back(100 * system_sum / total_sum);
    values.push_back(100 * (user_sum + system_sum) / total_sum);
    values.push_back(100 * iowait_sum / total_sum);

    // /proc/meminfo is in kB.
    memory_used_kb_ = Clamp(memory_used_kb_ + std::round(Normal(0, 20000)), 1e8, kMemoryTotalKb);
    values.push_back(100 * memory_used_kb_ / kMemoryTotalKb);
    values.push_back(memory_used_kb_ * 1024);
    values.push_back(kMemoryTotalKb * 1024);
    // Disk: mostly idle, bursts of checkpoint writes; sectors of 512 bytes over 0.5 s.
    const bool burst = Uniform(0, 1) < 0.05;
    const double read_sectors = Uniform(0, 1) < 0.3 ? std::round(Uniform(0, 2000)) : 0;
    const double write_sectors = burst ? std::round(Uniform(1e5, 2e6)) : (Uniform(0, 1) < 0.5 ? std::round(Uniform(0, 400)) : 0);
    const double read_ops = std::ceil(read_sectors / 256), write_ops = std::ceil(write_sectors / 256);
    values.push_back(read_sectors * 512 * 2);
    values.push_back(write_sectors * 512 * 2);
    values.push_back(read_ops * 2);
    values.push_back(write_ops * 2);
    values.push_back((read_ops + write_ops) * 2);
    // Network: gradient all-reduce traffic around 1.2 GB/s each way, byte counters over 0.5 s.
    values.push_back(std::round(Clamp(Normal(1.2e9, 1.5e8), 0, 3e9) / 2) * 2);
    values.push_back(std::round(Clamp(Normal(1.2e9, 1.5e8), 0, 3e9) / 2) * 2);

    for (int g = 0; g < kGpus; ++g) {
      // NVML: integer percent, memory in bytes (allocations in MiB), power in mW, integer C, MHz.
      gpu_util_[g] = Clamp(gpu_util_[g] + Normal(0, 4) + (gpu_util_[g] < 60 ? 3 : 0), 0, 100);
      if (Uniform(0, 1) < 0.02) gpu_util_[g] = Uniform(0, 30);  // a data-loader stall
      if (Uniform(0, 1) < 0.1) gpu_memory_mib_[g] = Clamp(gpu_memory_mib_[g] + std::round(Normal(0, 200)), 1000, 81000);
      gpu_power_mw_[g] = Clamp(gpu_power_mw_[g] + std::round(Normal(0, 15000)), 60000, 700000);
      if (Uniform(0, 1) < 0.05) gpu_temp_[g] = Clamp(gpu_temp_[g] + (Uniform(0, 1) < 0.5 ? -1 : 1), 30, 90);
      const double clock = Uniform(0, 1) < 0.9 ? 1980 : 1755;
      values.push_back(std::round(gpu_util_[g]));
      values.push_back(std::round(gpu_memory_mib_[g]) * 1048576);
      values.push_back(81559.0 * 1048576);
      values.push_back(100 * std::round(gpu_memory_mib_[g]) / 81559.0);
      values.push_back(std::round(gpu_power_mw_[g]) / 1000);
      values.push_back(std::round(gpu_temp_[g]));
      values.push_back(clock);
    }
    // The job's process tree: jiffies over all its processes, pages, process count.
    process_jiffies_ = Clamp(process_jiffies_ + std::round(Normal(0, 10)), 50, 1600);
    process_rss_pages_ = Clamp(process_rss_pages_ + std::round(Normal(0, 300)), 1e6, 3e7);
    values.push_back(process_jiffies_ * 2);
    values.push_back(process_rss_pages_ * 4096);
    values.push_back(Uniform(0, 1) < 0.01 ? 10 : 9);
    return values;
  }

 private:
  static constexpr int kCores = 32;
  static constexpr int kGpus = 8;
  static constexpr double kMemoryTotalKb = 1056964608;  // ~1 TiB

  double Uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(random_); }
  double Normal(double mean, double sd) { return std::normal_distribution<double>(mean, sd)(random_); }
  static double Clamp(double v, double lo, double hi) { return std::min(hi, std::max(lo, v)); }

  std::mt19937_64 random_;
  double core_util_[kCores];
  double gpu_util_[kGpus], gpu_memory_mib_[kGpus], gpu_power_mw_[kGpus], gpu_temp_[kGpus];
  double memory_used_kb_ = 4e8;
  double process_jiffies_ = 800;
  double process_rss_pages_ = 8e6;
};

enum class SampleBlocks { kLikeSystemStreamSink, kOnePerPoll };

// Writes `polls` polls of the node model into a fresh "system" stream and measures it.
AtRest WriteSamples(const std::string& root, const char* tag, uint64_t polls, SampleBlocks blocks, double ticks_per_ns) {
  const std::string dir = root + "/" + tag;
  if (!CreateDirectories(dir).ok()) std::exit(1);
  const std::vector<std::string> names = NodeModel::Names();
  const uint32_t block_bytes =
      blocks == SampleBlocks::kLikeSystemStreamSink
          ? 64 * 1024
          : static_cast<uint32_t>((sizeof(store::BlockHeader) + names.size() * sizeof(store::RawRecord) + 63) / 64 * 64);
  SyntheticStream stream(dir, "system", "system", block_bytes, ticks_per_ns, /*calibration_interval_ns=*/10e9,
                         /*periodic_stats=*/false);
  std::vector<uint32_t> ids;
  for (const std::string& name : names) ids.push_back(stream.Intern(name));
  NodeModel node(7);
  for (uint64_t poll = 0; poll < polls; ++poll) {
    // The poll's time: 500 ms grid plus the scheduler's wake-up jitter.
    stream.Elapse(poll == 0 ? 0 : 500e6 + (static_cast<double>(poll * 2654435761u % 1000) - 500) * 1e3);
    std::vector<double> values = node.Poll();
    for (size_t i = 0; i < values.size(); ++i) stream.Record(RecordKind::kSample, ids[i], 0, Bits(values[i]));
    if (blocks == SampleBlocks::kOnePerPoll) stream.SealAndFlush();
  }
  stream.Finish(dir, "system");
  return Measure(dir);
}

}  // namespace
}  // namespace stepscope

int main(int argc, char** argv) {
  using namespace stepscope;
  uint64_t target_events = 1'000'000;
  double hours = 3;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--events" && i + 1 < argc) {
      target_events = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--hours" && i + 1 < argc) {
      hours = std::strtod(argv[++i], nullptr);
    } else if (arg == "--keep" && i + 1 < argc) {
      keep = argv[++i];
    } else {
      std::fprintf(stderr, "usage: store_size_benchmark [--events N] [--hours H] [--keep DIR]\n");
      return 2;
    }
  }
  std::string root = keep;
  if (root.empty()) {
    char pattern[] = "/tmp/stepscope-size-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return 1;
    root = pattern;
  }
  const double ticks_per_ns = MeasureTicksPerNs(20'000'000);
  std::printf("stepscope store size benchmark (tick source %s, %.4f ticks/ns)\n\n",
              CurrentTickSource() == TickSource::kTsc ? "tsc" : "monotonic_ns", ticks_per_ns);

  // a1: the real recorder, in a child: one recording session per process, and the stream can
  // only be compacted once its process is gone (the ring stays locked until exit).
  {
    const std::string dir = root + "/framework-recorder";
    pid_t child = fork();
    if (child == 0) {
      recorder::StartOptions options;
      options.node_dir = dir;
      Status started = recorder::Start(options);
      if (!started.ok()) {
        std::fprintf(stderr, "store_size_benchmark: %s\n", started.message().c_str());
        _exit(1);
      }
      RecorderSink sink;
      TrainingLoop loop(sink, 1);
      uint64_t events = 0;
      for (int64_t step = 0; events < target_events; ++step) {
        events += loop.Step(step);
        // A real step takes tens of milliseconds; pausing now and then lets the 100 ms flusher
        // keep the ring from overflowing (drops would skew the figure; they are reported).
        if (step % 50 == 49) usleep(2000);
      }
      recorder::Stop();
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    auto streams = store::ListStreams(dir);
    for (const std::string& name : streams.ok() ? *streams : std::vector<std::string>{}) {
      Status compacted = store::CompactStream(dir, name);
      if (!compacted.ok()) std::fprintf(stderr, "store_size_benchmark: %s\n", compacted.message().c_str());
    }
    PrintFramework("(a1) framework events, real recorder, tight loop (timestamps ns apart: optimistic)",
                   Measure(dir), /*held_to_bar=*/false);
  }

  // a2: the same loop, realistic time between records.
  {
    const std::string dir = root + "/framework-realistic";
    if (!CreateDirectories(dir).ok()) return 1;
    SyntheticStream stream(dir, "proc-4242-0001", "process", 32 * 1024, ticks_per_ns);
    TrainingLoop loop(stream, 1);
    uint64_t events = 0;
    int64_t steps = 0;
    while (events < target_events) events += loop.Step(steps++);
    const double mean_step_ms = stream.now_ns() / 1e6 / static_cast<double>(steps);
    stream.Finish(dir, "proc-4242-0001");
    PrintFramework(("(a2) framework events, store writer with the recorder's blocks, realistic timing (" +
                    std::to_string(steps) + " steps of " + std::to_string(mean_step_ms).substr(0, 5) + " ms on average)")
                       .c_str(),
                   Measure(dir), /*held_to_bar=*/true);
  }

  // b: system samples.
  const uint64_t polls = static_cast<uint64_t>(hours * 3600 * 2);
  std::printf("\n");
  PrintSamples(("(b) system samples, 32 cores + 8 GPUs, 500 ms, " + std::to_string(polls) +
                " polls, written like SystemStreamSink (64 KiB blocks shared by consecutive polls)")
                   .c_str(),
               WriteSamples(root, "system-sink", polls, SampleBlocks::kLikeSystemStreamSink, ticks_per_ns),
               /*held_to_bar=*/true);
  PrintSamples("(b') the same samples, one block per poll",
               WriteSamples(root, "system-per-poll", polls, SampleBlocks::kOnePerPoll, ticks_per_ns),
               /*held_to_bar=*/false);

  if (keep.empty()) (void)std::system(("rm -rf '" + root + "'").c_str());
  return 0;
}
