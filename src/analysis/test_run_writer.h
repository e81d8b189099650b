// Test helper: writes small stepscope runs with the real store writer (StreamWriter, ring and
// log) the way the recorder and the system sampler do, with a tick clock of 1 tick per ns so
// tests know every timestamp exactly: Unix ns = kTestEpochNs + ticks.
//
// Only the loader tests include it.
#pragma once

#include <zstd.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/file_system.h"
#include "store/format.h"
#include "store/stream_writer.h"

namespace stepscope::analysis::testing {

inline constexpr int64_t kTestEpochNs = 1'700'000'000'000'000'000;

inline std::string TestManifest(const std::string& node, const std::string& status, const std::string& extra = "") {
  return R"({"schema_version":1,"node":")" + node + R"(","status":")" + status +
         R"(","clock":{"monotonic_ns":0,"realtime_ns":)" + std::to_string(kTestEpochNs) + "}" +
         (extra.empty() ? "" : "," + extra) + "}";
}

// One stream; records go into one ring block per thread, published like the recorder's hot path.
// `meta_extra`: more members of the stream's meta object, e.g. R"("ranks":{"RANK":"1"})" as the
// recorder writes them for torchrun's workers.
class TestStream {
 public:
  TestStream(const std::string& directory, const std::string& name, int64_t pid, bool system,
             const std::string& meta_extra = "", int64_t ppid = 1) {
    store::StreamWriterOptions options;
    options.directory = directory;
    options.name = name;
    options.block_bytes = 64 + 24 * 256;
    options.block_count = 8;
    options.meta_json = std::string(R"({"kind":")") + (system ? "system" : "process") + R"(","pid":)" +
                        std::to_string(pid) + R"(,"ppid":)" + std::to_string(ppid) +
                        R"(,"ticks_per_ns":1.0,"clock_anchor":{"monotonic_ns":0,"realtime_ns":)" +
                        std::to_string(kTestEpochNs) + "}" + (meta_extra.empty() ? "" : "," + meta_extra) + "}";
    auto writer = store::StreamWriter::Create(options);
    if (writer.ok()) writer_ = std::move(*writer);
  }
  bool ok() const { return writer_ != nullptr; }

  void Begin(uint32_t tid, uint64_t ticks, const std::string& name) { Add(tid, store::RecordKind::kBegin, ticks, Id(name), 0, 0); }
  void End(uint32_t tid, uint64_t ticks, const std::string& name) { Add(tid, store::RecordKind::kEnd, ticks, Id(name), 0, 0); }
  void Instant(uint32_t tid, uint64_t ticks, const std::string& name) { Add(tid, store::RecordKind::kInstant, ticks, Id(name), 0, 0); }
  void Counter(uint32_t tid, uint64_t ticks, const std::string& name, double value) {
    Add(tid, store::RecordKind::kCounter, ticks, Id(name), 0, Bits(value));
  }
  void StepBegin(uint32_t tid, uint64_t ticks, store::Phase phase, int64_t step) {
    Add(tid, store::RecordKind::kStepBegin, ticks, 0, static_cast<uint8_t>(phase), static_cast<uint64_t>(step));
  }
  void StepEnd(uint32_t tid, uint64_t ticks, store::Phase phase, int64_t step) {
    Add(tid, store::RecordKind::kStepEnd, ticks, 0, static_cast<uint8_t>(phase), static_cast<uint64_t>(step));
  }
  void IntArg(uint32_t tid, const std::string& key, int64_t value) {
    Add(tid, store::RecordKind::kArgInt, Last(tid), Id(key), 0, static_cast<uint64_t>(value));
  }
  void DoubleArg(uint32_t tid, const std::string& key, double value) {
    Add(tid, store::RecordKind::kArgDouble, Last(tid), Id(key), 0, Bits(value));
  }
  void StringArg(uint32_t tid, const std::string& key, const std::string& value) {
    const uint32_t value_id = Id(value);
    Add(tid, store::RecordKind::kArgString, Last(tid), Id(key), 0, value_id);
  }
  void Sample(uint64_t ticks, const std::string& metric, double value) {
    Add(1, store::RecordKind::kSample, ticks, Id(metric), 0, Bits(value));
  }
  // Counts dropped records in the ring header, as the recorder's slow path does.
  void CountDropped(uint64_t records, store::RingFile::DropCause cause) { writer_->ring().CountDropped(records, cause); }
  // Compacts nothing: the ring stays, as after a crash or while the writer lives. Destroying
  // the writer releases its lock (the process "exited").
  void Close() { writer_.reset(); }

 private:
  static uint64_t Bits(double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  uint32_t Id(const std::string& name) {
    auto [it, inserted] = ids_.emplace(name, static_cast<uint32_t>(ids_.size() + 1));
    if (inserted) (void)writer_->AppendStrings({{it->second, name}});
    return it->second;
  }
  uint64_t Last(uint32_t tid) { return last_ticks_[tid]; }
  void Add(uint32_t tid, store::RecordKind kind, uint64_t ticks, uint32_t name, uint8_t phase, uint64_t value) {
    store::BlockHeader*& block = blocks_[tid];
    if (block == nullptr) block = writer_->ring().Claim(tid, 0);
    if (block == nullptr) return;
    const uint32_t n = block->count.load(std::memory_order_relaxed);
    if (n >= block->capacity) return;
    store::RingFile::Records(block)[n] = store::RawRecord{ticks, name, static_cast<uint8_t>(kind), phase, 0, value};
    block->count.store(n + 1, std::memory_order_release);
    last_ticks_[tid] = ticks;
  }

  std::unique_ptr<store::StreamWriter> writer_;
  std::map<std::string, uint32_t> ids_;
  std::map<uint32_t, store::BlockHeader*> blocks_;
  std::map<uint32_t, uint64_t> last_ticks_;
};

inline bool WriteZstdFile(const std::string& path, const std::string& text) {
  std::string compressed(ZSTD_compressBound(text.size()), '\0');
  const size_t size = ZSTD_compress(compressed.data(), compressed.size(), text.data(), text.size(), 3);
  if (ZSTD_isError(size)) return false;
  compressed.resize(size);
  return WriteFileAtomically(path, compressed).ok();
}

}  // namespace stepscope::analysis::testing
