// Writes the seed corpora of the store fuzzers from a small stream made with the real writer,
// and the model-file fuzzer's from a small model saved by the real encoder:
//
//   make_fuzz_seeds OUT_DIR     ->  OUT_DIR/store_log/*, OUT_DIR/store_stream/*, OUT_DIR/model_file/*
//
// The stream has every record kind, string/clock/meta/stats frames, a block flushed to the log,
// a sealed block left in the ring, and an open block that is both snapshotted in the log and
// still growing in the ring: the states a reader meets after a crash. Seeds are a few KiB so
// the fuzzers start fast; they are regenerated, not checked in (see docs/fuzzing.md).
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "analysis/model_file.h"
#include "export/export_test_model.h"
#include "fuzz_inputs.h"
#include "model_file_input.h"
#include "store/block_codec.h"
#include "store/gpu_activity_frame.h"
#include "store/log_file.h"
#include "store/stream_writer.h"

namespace stepscope::fuzz {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

store::RawRecord Rec(uint64_t ticks, store::RecordKind kind, uint32_t name, uint64_t value = 0, uint8_t phase = 0) {
  return {ticks, name, static_cast<uint8_t>(kind), phase, 0, value};
}

// A GPU activity frame as the GPU tracer writes one per CUPTI buffer: a launch and its kernel,
// a driver launch on another device's stream, a memcpy, a memset, a sync, CUPTI's overhead, and
// a kernel on a stream too large for its track field; names and launch configurations declared.
std::string GpuFramePayload() {
  using K = store::GpuRowKind;
  store::GpuActivityFrameEncoder encoder;
  encoder.DeclareName(1, "cudaLaunchKernel");
  encoder.DeclareName(2, "ampere_sgemm_128x64_nn");
  encoder.DeclareName(3, "Memcpy HtoD (Pinned -> Device)");
  store::GpuLaunchConfig config;
  config.grid[0] = 128, config.grid[1] = 2, config.grid[2] = 1;
  config.block[0] = 256, config.block[1] = 1, config.block[2] = 1;
  config.registers_per_thread = 64;
  config.shared_memory_bytes = 4096;
  encoder.DeclareLaunchConfig(1, config);
  auto row = [&](K kind, uint64_t start, uint64_t end, uint32_t name, uint32_t correlation, uint32_t device,
                 uint32_t stream) {
    store::GpuActivityRow r;
    r.kind = kind;
    r.start_ticks = start;
    r.end_ticks = end;
    r.name_id = name;
    r.correlation = correlation;
    if (store::IsGpuDeviceRow(kind)) r.device = device, r.stream = stream;
    else r.thread_id = 4242;
    if (kind == K::kKernel) r.config_id = 1;
    if (kind == K::kMemcpy || kind == K::kMemset) r.bytes = 1u << 20;
    if (kind == K::kRuntimeApi || kind == K::kDriverApi) r.callback_id = 211;
    encoder.Add(r, store::GpuRowTrack(r));
  };
  row(K::kRuntimeApi, 1000, 4000, 1, 1, 0, 0);
  row(K::kKernel, 5000, 45000, 2, 1, 0, 7);
  row(K::kDriverApi, 6000, 9000, 1, 2, 0, 0);
  row(K::kKernel, 46000, 80000, 2, 2, 1, 13);
  row(K::kMemcpy, 81000, 90000, 3, 3, 0, 7);
  row(K::kMemset, 91000, 92000, 3, 4, 0, 8);
  row(K::kSync, 93000, 99000, 3, 0, store::kGpuRowNoValue, store::kGpuRowNoValue);
  row(K::kOverhead, 99500, 99900, 1, 0, 0, 0);
  row(K::kKernel, 100000, 120000, 2, 5, 200, 5'000'000);
  std::string payload;
  store::BlockEncoder compressor;
  encoder.Finish(compressor, 3, payload);
  return payload;
}

// One of each record kind, as a training step would produce them.
std::vector<store::RawRecord> StepRecords(uint64_t ticks, int64_t step) {
  using K = store::RecordKind;
  return {Rec(ticks, K::kStepBegin, 0, static_cast<uint64_t>(step), 0), Rec(ticks + 10, K::kBegin, 1),
          Rec(ticks + 11, K::kArgInt, 2, static_cast<uint64_t>(int64_t{-64})), Rec(ticks + 12, K::kArgString, 6, 4),
          Rec(ticks + 13, K::kArgDouble, 7, Bits(0.5)), Rec(ticks + 900, K::kEnd, 1),
          Rec(ticks + 950, K::kInstant, 8), Rec(ticks + 990, K::kCounter, 3, Bits(2.25)),
          Rec(ticks + 1000, K::kStepEnd, 0, static_cast<uint64_t>(step), 0)};
}

// System samples, quantised and escaped (huge and non-finite values).
std::vector<store::RawRecord> SampleRecords(uint64_t ticks) {
  using K = store::RecordKind;
  return {Rec(ticks, K::kSample, 5, Bits(37.5)), Rec(ticks, K::kSample, 9, Bits(1.5e9)),
          Rec(ticks + 500, K::kSample, 5, Bits(38.0)), Rec(ticks + 500, K::kSample, 9, Bits(1e13)),
          Rec(ticks + 1000, K::kSample, 5, Bits(std::numeric_limits<double>::quiet_NaN())),
          Rec(ticks + 1000, K::kSample, 9, Bits(-0.001))};
}

void Fill(store::BlockHeader* block, const std::vector<store::RawRecord>& records) {
  store::RawRecord* slots = store::RingFile::Records(block);
  uint32_t count = block->count.load(std::memory_order_relaxed);
  for (const store::RawRecord& record : records) {
    if (count == block->capacity) break;
    slots[count++] = record;
  }
  block->count.store(count, std::memory_order_release);
}

int Run(const std::string& out_dir) {
  const std::string log_dir = out_dir + "/store_log";
  const std::string stream_dir = out_dir + "/store_stream";
  const std::string work_dir = out_dir + "/work";
  for (const std::string& dir : {out_dir, log_dir, stream_dir, work_dir}) mkdir(dir.c_str(), 0755);

  store::StreamWriterOptions options;
  options.directory = work_dir;
  options.name = "seed";
  options.block_bytes = 512;  // 18 records per block
  options.block_count = 4;
  options.meta_json =
      R"({"kind":"process","pid":42,"ppid":1,"command":"python3 train.py","ticks_per_ns":1.0,)"
      R"("clock_anchor":{"monotonic_ns":1000000,"realtime_ns":1700000000000000000}})";
  options.clock_anchor = {1000, 1000000};
  auto writer = store::StreamWriter::Create(options);
  if (!writer.ok()) {
    std::fprintf(stderr, "make_fuzz_seeds: %s\n", writer.status().message().c_str());
    return 1;
  }
  store::StreamWriter& stream = **writer;
  if (!stream.AppendStrings({{1, "forward"}, {2, "batch"}, {3, "loss"}, {4, "cuda:0"}, {5, "cpu/cpu0/util_pct"},
                             {6, "device"}, {7, "lr"}, {8, "checkpoint"}, {9, "network/rx_bytes_per_s"}})
           .ok()) {
    return 1;
  }
  store::RingFile& ring = stream.ring();
  // Block 1: flushed to the log.
  store::BlockHeader* flushed = ring.Claim(101, 0);
  Fill(flushed, StepRecords(5000, 0));
  Fill(flushed, SampleRecords(6500));
  ring.Seal(flushed);
  if (!stream.FlushSealed().ok()) return 1;
  // Block 2: sealed, still in the ring (the writer died before its flusher ran).
  store::BlockHeader* sealed = ring.Claim(101, 3);
  Fill(sealed, StepRecords(9000, 1));
  ring.Seal(sealed);
  // Block 3: open, snapshotted into the log, then grown further in the ring.
  store::BlockHeader* open = ring.Claim(102, 0);
  Fill(open, StepRecords(12000, 7));
  if (!stream.SnapshotOpenBlocks().ok()) return 1;
  Fill(open, SampleRecords(14000));
  if (!stream.AppendClockPair({20000, 1019000}).ok()) return 1;
  if (!stream.AppendStats(R"({"events_recorded":42,"events_dropped":3,"bytes_written":900})").ok()) return 1;

  const std::string log = ReadAll(work_dir + "/seed.log");
  const std::string ring_bytes = ReadAll(work_dir + "/seed.ring");
  const std::string manifest =
      R"({"job":"seed","node":"algo-1","clock":{"monotonic_ns":1000000,"realtime_ns":1700000000000000000}})";

  // Frames of the real log, for the built forms.
  auto parsed = store::ParseLog(log);
  if (!parsed.ok()) return 1;
  std::vector<std::pair<uint8_t, std::string>> frames;
  for (const store::LogFrame& frame : parsed->frames) frames.emplace_back(static_cast<uint8_t>(frame.type), std::string(frame.payload));
  std::string ring_spec;
  const uint32_t block_bytes_selector = (options.block_bytes - 128) / 64;
  const uint32_t block_count_selector = options.block_count - 1;
  ring_spec.append(reinterpret_cast<const char*>(&block_bytes_selector), 4);
  ring_spec.append(reinterpret_cast<const char*>(&block_count_selector), 4);
  ring_spec.append(ring_bytes.substr(store::kRingHeaderBytes));

  std::vector<store::RawRecord> mixed = StepRecords(1000, 3);
  for (const store::RawRecord& r : SampleRecords(3000)) mixed.push_back(r);
  const std::string block_payload = store::EncodeBlock(7, 99, 2, mixed);

  bool ok = true;
  ok &= WriteAll(log_dir + "/log", log);
  ok &= WriteAll(log_dir + "/log-torn-tail", log.substr(0, log.size() - 9));
  ok &= WriteAll(log_dir + "/block-payload", block_payload);
  ok &= WriteAll(log_dir + "/log-one-block", LogHeaderBytes() + [&] {
    std::string frame;
    AppendFrame(frame, static_cast<uint8_t>(store::FrameType::kBlock), block_payload);
    return frame;
  }());

  ok &= WriteAll(stream_dir + "/raw-log-ring-manifest",
                 StreamInput(kHasLog | kHasRing | kHasManifest | kCompact, log, ring_bytes, manifest));
  ok &= WriteAll(stream_dir + "/built-log-ring",
                 StreamInput(kHasLog | kHasRing | kBuiltLog | kBuiltRing | kCompact, LogSpec(frames), ring_spec, ""));
  ok &= WriteAll(stream_dir + "/raw-log-only", StreamInput(kHasLog | kHasManifest, log, "", manifest));
  ok &= WriteAll(stream_dir + "/built-ring-only", StreamInput(kHasRing | kBuiltRing | kCompact, "", ring_spec, ""));
  std::vector<std::pair<uint8_t, std::string>> system_frames = {
      {static_cast<uint8_t>(store::FrameType::kMeta),
       R"({"kind":"system","pid":7,"ticks_per_ns":2.5,"clock_anchor":{"monotonic_ns":5,"realtime_ns":9}})"},
      {static_cast<uint8_t>(store::FrameType::kStrings), frames[2].second},
      {static_cast<uint8_t>(store::FrameType::kClock), frames[1].second},
      {static_cast<uint8_t>(store::FrameType::kBlock), block_payload},
      {static_cast<uint8_t>(store::FrameType::kStats), R"({"events_dropped":0,"compacted":true})"}};
  ok &= WriteAll(stream_dir + "/built-system-log", StreamInput(kHasLog | kBuiltLog | kHasManifest, LogSpec(system_frames), "", manifest));
  // A GPU stream (format version 2): its activity frame, then one cut short by a crash.
  const std::string gpu_frame = GpuFramePayload();
  ok &= WriteAll(log_dir + "/gpu-frame-payload", gpu_frame);
  ok &= WriteAll(log_dir + "/log-one-gpu-frame", LogHeaderBytes() + [&] {
    std::string frame;
    AppendFrame(frame, static_cast<uint8_t>(store::FrameType::kGpuActivity), gpu_frame);
    return frame;
  }());
  std::vector<std::pair<uint8_t, std::string>> gpu_frames = {
      {static_cast<uint8_t>(store::FrameType::kMeta),
       R"({"kind":"gpu","pid":8,"ticks_per_ns":1.0,"tick_source":"cupti","clock_anchor":{"monotonic_ns":5,"realtime_ns":9}})"},
      {static_cast<uint8_t>(store::FrameType::kClock), frames[1].second},
      {static_cast<uint8_t>(store::FrameType::kGpuActivity), gpu_frame},
      {static_cast<uint8_t>(store::FrameType::kGpuActivity), gpu_frame.substr(0, gpu_frame.size() / 2)}};
  ok &= WriteAll(stream_dir + "/built-gpu-log", StreamInput(kHasLog | kBuiltLog | kHasManifest, LogSpec(gpu_frames), "", manifest));

  writer->reset();
  unlink((work_dir + "/seed.log").c_str());
  unlink((work_dir + "/seed.ring").c_str());
  rmdir(work_dir.c_str());
  if (!ok) std::fprintf(stderr, "make_fuzz_seeds: could not write every seed under %s\n", out_dir.c_str());
  return ok ? 0 : 1;
}

// The export tests' model (two nodes, nested spans, an instant, a flow, args, series with a
// NaN) as a raw file, as a built input, and cut short.
int WriteModelFileSeeds(const std::string& out_dir) {
  const std::string dir = out_dir + "/model_file";
  mkdir(out_dir.c_str(), 0755);
  mkdir(dir.c_str(), 0755);
  const std::string file = analysis::EncodeModelFile(exporting::testing::MakeExportTestModel());
  bool ok = WriteAll(dir + "/raw", std::string(1, static_cast<char>(kRawModelFile)) + file);
  ok &= WriteAll(dir + "/raw-cut", std::string(1, static_cast<char>(kRawModelFile)) + file.substr(0, file.size() / 2));
  const std::string built = BuiltModelInput(file);
  ok &= !built.empty() && WriteAll(dir + "/built", built);
  if (!ok) std::fprintf(stderr, "make_fuzz_seeds: could not write the model-file seeds under %s\n", dir.c_str());
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace stepscope::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const int store = stepscope::fuzz::Run(argv[1]);
  const int model_file = stepscope::fuzz::WriteModelFileSeeds(argv[1]);
  return store != 0 ? store : model_file;
}
