// Hostile-input tests for reading damaged copies of a real run (SPEC §3: "a torn last
// block is detected and skipped; everything before it is read"; STYLE.md §3: never crash on
// bytes from a file).
//
// Two runs are recorded once, each by the real recorder in a forked child:
//   - a *log run*: the child stops cleanly and the stream is compacted, so every record is in
//     checksummed log frames and the ring is gone;
//   - a *ring run*: the child _exit()s before its flusher ran, so every record is still in the
//     MAP_SHARED ring and the log holds only the meta, clock and string frames.
// Each test damages in-memory copies of those files, writes them to a scratch node directory
// and reads it as every reader does (the store's stream reader under the analysis layer's run
// decoder, through analysis::ReadRecordedRun). The reader must not crash, must return at least
// every record of the frames/blocks the damage left intact (computed here independently of the
// reader), and must say what it skipped, naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "analysis/recorded_run.h"
#include "base/file_system.h"
#include "recorder/recorder.h"
#include "stepscope/stepscope.h"
#include "store/block_codec.h"
#include "store/format.h"
#include "store/log_file.h"
#include "store/stream_reader.h"

namespace stepscope::store {
namespace {

constexpr int kThreads = 2;
constexpr int kRecordsPerIteration = 7;
constexpr uint32_t kBlockBytes = 4096;
constexpr uint32_t kBlockCount = 512;
// A node manifest as the launcher writes one, with the fields readers require (store/run_directory.h).
constexpr const char* kManifest =
    R"({"schema_version":1,"job":"corrupt","node":"node-a","status":"exited",)"
    R"("clock":{"monotonic_ns":1000,"realtime_ns":1700000000000000000}})";

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Records `iterations` training-like iterations on each of kThreads threads in a forked child.
// `clean_stop`: Stop() (everything reaches the log); otherwise _exit() with the flusher idle.
int RecordRunInChild(const std::string& node_dir, int iterations, bool clean_stop) {
  pid_t pid = fork();
  if (pid == 0) {
    recorder::StartOptions options;
    options.node_dir = node_dir;
    options.block_bytes = kBlockBytes;
    options.block_count = kBlockCount;
    // The ring run must keep every block: an hour-long interval means the flusher only runs
    // when woken, which happens once a quarter of the ring is sealed (not reached here).
    options.flush_interval_ms = clean_stop ? 5 : 3'600'000;
    if (!recorder::Start(options).ok()) _exit(1);
    const uint32_t forward = stepscope_intern("forward", 7);
    const uint32_t batch = stepscope_intern("batch", 5);
    const uint32_t tick = stepscope_intern("tick", 4);
    const uint32_t loss = stepscope_intern("loss", 4);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([=] {
        for (int i = 0; i < iterations; ++i) {
          stepscope_step_begin(STEPSCOPE_PHASE_TRAIN, i);
          stepscope_begin(forward);
          stepscope_arg_int(batch, 64);
          stepscope_end(forward);
          stepscope_instant(tick);
          stepscope_counter(loss, 1.0 / (i + 1));
          stepscope_step_end(STEPSCOPE_PHASE_TRAIN, i);
        }
      });
    }
    for (auto& thread : threads) thread.join();
    if (clean_stop) recorder::Stop();
    stepscope_stats stats;
    stepscope_get_stats(&stats);
    _exit(stats.events_dropped == 0 ? 0 : 2);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// One frame of the pristine log, as this test sees it (independently of ReadStream).
struct FrameSpan {
  uint64_t begin = 0;  // offset of the frame header
  uint64_t end = 0;    // one past the payload
  FrameType type{};
  uint64_t seq = 0;       // block frames
  uint64_t records = 0;   // block frames
};

// One used block of the pristine ring.
struct RingBlockSpan {
  uint64_t begin = 0;  // offset of the block header
  uint64_t end = 0;    // one past its last published record
  uint64_t seq = 0;
  uint64_t records = 0;
};

uint64_t SumOfLargestPerSeq(const std::map<uint64_t, uint64_t>& largest) {
  uint64_t total = 0;
  for (const auto& [seq, records] : largest) total += records;
  return total;
}

bool Touches(const std::set<uint64_t>& damaged, uint64_t begin, uint64_t end) {
  auto it = damaged.lower_bound(begin);
  return it != damaged.end() && *it < end;
}

using analysis::ReadRecordedRun;
using analysis::RecordedRun;

uint64_t RecordsRead(const RecordedRun& run) {
  uint64_t total = 0;
  for (const analysis::RecordedStream& stream : run.streams()) total += stream.records;
  return total;
}

bool SomeProblemMentions(const RecordedRun& run, const std::string& text) {
  return std::any_of(run.problems().begin(), run.problems().end(),
                     [&](const std::string& problem) { return problem.find(text) != std::string::npos; });
}

std::string Describe(const RecordedRun& run) {
  std::string out;
  for (const std::string& problem : run.problems()) out += "\n  problem: " + problem;
  return out;
}

class CorruptRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new std::string(::testing::TempDir() + "/corrupt-run-" + std::to_string(getpid()));
    ASSERT_EQ(std::system(("rm -rf '" + *root_ + "'").c_str()), 0);

    // The log run.
    const std::string log_dir = *root_ + "/log-run";
    int status = RecordRunInChild(log_dir, kLogRunIterations, /*clean_stop=*/true);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "log-run child status " << status;
    auto streams = ListStreams(log_dir);
    ASSERT_TRUE(streams.ok() && streams->size() == 1);
    *stream_name_ = (*streams)[0];
    ASSERT_TRUE(CompactStream(log_dir, *stream_name_).ok());
    *log_run_log_ = ReadBytes(log_dir + "/" + *stream_name_ + kLogSuffix);

    auto parsed = ParseLog(*log_run_log_);
    ASSERT_TRUE(parsed.ok());
    ASSERT_TRUE(parsed->problems.empty());
    for (const LogFrame& frame : parsed->frames) {
      FrameSpan span;
      span.begin = frame.offset;
      span.end = frame.offset + sizeof(FrameHeader) + frame.payload.size();
      span.type = frame.type;
      if (frame.type == FrameType::kBlock) {
        auto block = DecodeBlock(frame.payload);
        ASSERT_TRUE(block.ok());
        span.seq = block->seq;
        span.records = block->records.size();
      }
      log_frames_->push_back(span);
    }

    // The ring run: a fresh stream name, because the ring file carries the stream's name.
    const std::string ring_dir = *root_ + "/ring-run";
    status = RecordRunInChild(ring_dir, kRingRunIterations, /*clean_stop=*/false);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "ring-run child status " << status;
    streams = ListStreams(ring_dir);
    ASSERT_TRUE(streams.ok() && streams->size() == 1);
    *ring_stream_name_ = (*streams)[0];
    *ring_run_log_ = ReadBytes(ring_dir + "/" + *ring_stream_name_ + kLogSuffix);
    *ring_run_ring_ = ReadBytes(ring_dir + "/" + *ring_stream_name_ + kRingSuffix);
    const auto* header = reinterpret_cast<const RingHeader*>(ring_run_ring_->data());
    ASSERT_EQ(header->block_bytes, kBlockBytes);
    for (uint32_t i = 0; i < header->block_count; ++i) {
      const uint64_t begin = kRingHeaderBytes + uint64_t{i} * header->block_bytes;
      const auto* block = reinterpret_cast<const BlockHeader*>(ring_run_ring_->data() + begin);
      const uint32_t state = block->state.load(std::memory_order_relaxed);
      const uint32_t count = block->count.load(std::memory_order_relaxed);
      if (state == static_cast<uint32_t>(BlockState::kFree) || count == 0) continue;
      ring_blocks_->push_back({begin, begin + sizeof(BlockHeader) + uint64_t{count} * sizeof(RawRecord), block->seq, count});
    }
  }

  static void TearDownTestSuite() {
    (void)std::system(("rm -rf '" + *root_ + "'").c_str());
  }

  void SetUp() override {
    scratch_ = *root_ + "/scratch-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(std::system(("rm -rf '" + scratch_ + "'").c_str()), 0);
    ASSERT_TRUE(CreateDirectories(scratch_).ok());
  }

  // Fills the scratch node directory with exactly the given files (an empty string: the file
  // is absent) and opens it.
  StatusOr<RecordedRun> OpenDamaged(const std::string& stream, const std::string& log, const std::string& ring,
                                    const std::string& manifest = kManifest) {
    EXPECT_EQ(std::system(("rm -f '" + scratch_ + "'/*").c_str()), 0);
    if (!manifest.empty()) WriteBytes(scratch_ + "/manifest.json", manifest);
    WriteBytes(LogPath(stream), log);
    if (!ring.empty()) WriteBytes(RingPath(stream), ring);
    return ReadRecordedRun(scratch_);
  }

  std::string LogPath(const std::string& stream) const { return scratch_ + "/" + stream + kLogSuffix; }
  std::string RingPath(const std::string& stream) const { return scratch_ + "/" + stream + kRingSuffix; }

  // Records in the log-run frames for which `intact(frame)` holds, one copy per block.
  static uint64_t IntactLogRecords(const std::function<bool(const FrameSpan&)>& intact) {
    std::map<uint64_t, uint64_t> largest;
    for (const FrameSpan& frame : *log_frames_) {
      if (frame.type == FrameType::kBlock && intact(frame)) largest[frame.seq] = std::max(largest[frame.seq], frame.records);
    }
    return SumOfLargestPerSeq(largest);
  }
  static uint64_t LogRunRecords() { return IntactLogRecords([](const FrameSpan&) { return true; }); }
  static uint64_t RingRunRecords() {
    uint64_t total = 0;
    for (const RingBlockSpan& block : *ring_blocks_) total += block.records;
    return total;
  }

  static constexpr int kLogRunIterations = 4000;
  static constexpr int kRingRunIterations = 1400;

  static inline std::string* root_ = nullptr;
  static inline std::string* stream_name_ = new std::string;
  static inline std::string* log_run_log_ = new std::string;
  static inline std::vector<FrameSpan>* log_frames_ = new std::vector<FrameSpan>;
  static inline std::string* ring_stream_name_ = new std::string;
  static inline std::string* ring_run_log_ = new std::string;
  static inline std::string* ring_run_ring_ = new std::string;
  static inline std::vector<RingBlockSpan>* ring_blocks_ = new std::vector<RingBlockSpan>;
  std::string scratch_;
};

TEST_F(CorruptRunTest, PristineCopiesReadCompletely) {
  EXPECT_EQ(LogRunRecords(), uint64_t{kThreads} * kLogRunIterations * kRecordsPerIteration);
  EXPECT_EQ(RingRunRecords(), uint64_t{kThreads} * kRingRunIterations * kRecordsPerIteration);
  // The ring run's records must all be in the ring (else the ring tests below test nothing).
  EXPECT_GT(ring_blocks_->size(), 100u);

  auto log_run = OpenDamaged(*stream_name_, *log_run_log_, "");
  ASSERT_TRUE(log_run.ok()) << log_run.status().message();
  EXPECT_EQ(RecordsRead(*log_run), LogRunRecords());
  EXPECT_TRUE(log_run->problems().empty()) << Describe(*log_run);

  auto ring_run = OpenDamaged(*ring_stream_name_, *ring_run_log_, *ring_run_ring_);
  ASSERT_TRUE(ring_run.ok()) << ring_run.status().message();
  EXPECT_EQ(RecordsRead(*ring_run), RingRunRecords());
  EXPECT_TRUE(ring_run->problems().empty()) << Describe(*ring_run);
}

// A log cut anywhere (a crash mid-write, a full disk, a partial copy) keeps exactly the frames
// that end before the cut.
TEST_F(CorruptRunTest, TruncatedLogKeepsEveryFrameBeforeTheCut) {
  const std::string& log = *log_run_log_;
  std::set<uint64_t> cuts;
  for (uint64_t i = 0; i < 64; ++i) cuts.insert(i);  // inside the file header and first frame
  for (size_t f = 0; f < log_frames_->size(); ++f) {
    // Every boundary of the first frames (meta, clock, strings, first blocks), then a sample.
    if (f >= 12 && f % 17 != 0 && f + 2 < log_frames_->size()) continue;
    const FrameSpan& frame = (*log_frames_)[f];
    for (uint64_t delta : {0, 1, 4, 8, 12, 16, 23, 24, 25}) cuts.insert(frame.begin + delta);
    cuts.insert(frame.end - 1);
  }
  std::mt19937_64 random(11);
  for (int i = 0; i < 150; ++i) cuts.insert(random() % log.size());
  cuts.insert(log.size());

  std::set<uint64_t> boundaries = {sizeof(LogHeader)};
  for (const FrameSpan& frame : *log_frames_) boundaries.insert(frame.end);

  for (uint64_t cut : cuts) {
    SCOPED_TRACE("log cut at " + std::to_string(cut) + " of " + std::to_string(log.size()));
    auto run = OpenDamaged(*stream_name_, log.substr(0, cut), "");
    ASSERT_TRUE(run.ok()) << run.status().message();
    const uint64_t intact = IntactLogRecords([&](const FrameSpan& frame) { return frame.end <= cut; });
    // Nothing else holds the records of a cut frame, so the count is exact.
    EXPECT_EQ(RecordsRead(*run), intact) << Describe(*run);
    if (boundaries.count(cut) == 0) {
      // A log cut inside its header with no ring left holds nothing: the reader marks the stream
      // unwritten (the analysis layer reports it as process_log_unwritten, data loss); any other
      // cut names the log in a problem.
      const bool unwritten = cut < sizeof(LogHeader) &&
                             std::any_of(run->streams().begin(), run->streams().end(),
                                         [&](const analysis::RecordedStream& s) {
                                           return s.name == *stream_name_ && s.unwritten;
                                         });
      EXPECT_TRUE(unwritten || SomeProblemMentions(*run, LogPath(*stream_name_)))
          << "a torn frame went unreported" << Describe(*run);
    }
  }
}

// Random bit flips after the file header. A frame is intact when no flip touched it.
TEST_F(CorruptRunTest, BitFlippedLogKeepsEveryIntactFrame) {
  std::mt19937_64 random(12);
  const std::string& pristine = *log_run_log_;
  for (int trial = 0; trial < 250; ++trial) {
    std::string log = pristine;
    std::set<uint64_t> damaged;
    const int flips = 1 + static_cast<int>(random() % 8);
    for (int f = 0; f < flips; ++f) {
      uint64_t at = sizeof(LogHeader) + random() % (log.size() - sizeof(LogHeader));
      log[at] = static_cast<char>(log[at] ^ (1u << (random() % 8)));
      damaged.insert(at);
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    auto run = OpenDamaged(*stream_name_, log, "");
    ASSERT_TRUE(run.ok()) << run.status().message();
    const uint64_t intact = IntactLogRecords([&](const FrameSpan& frame) { return !Touches(damaged, frame.begin, frame.end); });
    const uint64_t read = RecordsRead(*run);
    EXPECT_GE(read, intact) << Describe(*run);
    EXPECT_LE(read, LogRunRecords());
    // Every flip the checksum or the framing can see must be reported; only the frame
    // header's reserved bytes are covered by neither (and harmless).
    bool detectable = false;
    for (uint64_t at : damaged) {
      for (const FrameSpan& frame : *log_frames_) {
        if (at < frame.begin || at >= frame.end) continue;
        const uint64_t field = at - frame.begin;
        const bool unchecked = (field >= 5 && field < 8) || (field >= 12 && field < 16);
        detectable |= !unchecked;
      }
    }
    if (detectable) {
      EXPECT_TRUE(SomeProblemMentions(*run, LogPath(*stream_name_))) << "damage went unreported" << Describe(*run);
    }
  }
}

// The 32-byte file header: any single flip must leave a readable run and, when records are
// lost, a problem naming the log.
TEST_F(CorruptRunTest, BitFlippedLogHeaderIsReported) {
  for (uint64_t bit = 0; bit < sizeof(LogHeader) * 8; ++bit) {
    std::string log = *log_run_log_;
    log[bit / 8] = static_cast<char>(log[bit / 8] ^ (1u << (bit % 8)));
    SCOPED_TRACE("header bit " + std::to_string(bit));
    auto run = OpenDamaged(*stream_name_, log, "");
    ASSERT_TRUE(run.ok()) << run.status().message();
    const uint64_t read = RecordsRead(*run);
    EXPECT_LE(read, LogRunRecords());
    if (read < LogRunRecords()) {
      EXPECT_TRUE(SomeProblemMentions(*run, LogPath(*stream_name_))) << Describe(*run);
    }
  }
}

// Random flips in the ring's blocks. A block is intact when no flip touched its header or its
// published records.
TEST_F(CorruptRunTest, BitFlippedRingKeepsEveryIntactBlock) {
  std::mt19937_64 random(13);
  const std::string& pristine = *ring_run_ring_;
  const uint64_t used_end = ring_blocks_->back().end;
  for (int trial = 0; trial < 250; ++trial) {
    std::string ring = pristine;
    std::set<uint64_t> damaged;
    const int flips = 1 + static_cast<int>(random() % 8);
    for (int f = 0; f < flips; ++f) {
      // Mostly where the data is; sometimes in blocks that were never used.
      uint64_t span = random() % 4 == 0 ? ring.size() - kRingHeaderBytes : used_end - kRingHeaderBytes;
      uint64_t at = kRingHeaderBytes + random() % span;
      ring[at] = static_cast<char>(ring[at] ^ (1u << (random() % 8)));
      damaged.insert(at);
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    auto run = OpenDamaged(*ring_stream_name_, *ring_run_log_, ring);
    ASSERT_TRUE(run.ok()) << run.status().message();
    uint64_t intact = 0;
    for (const RingBlockSpan& block : *ring_blocks_) {
      if (!Touches(damaged, block.begin, block.end)) intact += block.records;
    }
    const uint64_t read = RecordsRead(*run);
    EXPECT_GE(read, intact) << Describe(*run);
    EXPECT_LE(read, RingRunRecords());
    // Problems name the ring file or, for what the damage did to the event structure (end
    // records whose begin was in a lost block), the stream.
    for (const std::string& problem : run->problems()) {
      EXPECT_NE(problem.find(*ring_stream_name_), std::string::npos) << "problem without the file: " << problem;
    }
  }
}

// A zeroed block header (a lost page): only that block is lost, exactly, and it is reported.
TEST_F(CorruptRunTest, ZeroedRingBlockHeaderLosesOnlyThatBlockAndIsReported) {
  const std::vector<size_t> victims = {0, 1, ring_blocks_->size() / 2, ring_blocks_->size() - 1};
  for (size_t victim : victims) {
    SCOPED_TRACE("block " + std::to_string(victim));
    std::string ring = *ring_run_ring_;
    const RingBlockSpan& block = (*ring_blocks_)[victim];
    std::memset(ring.data() + block.begin, 0, sizeof(BlockHeader));
    auto run = OpenDamaged(*ring_stream_name_, *ring_run_log_, ring);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(RecordsRead(*run), RingRunRecords() - block.records) << Describe(*run);
    // A zeroed header says "free", but no header the writer wrote has capacity 0.
    EXPECT_TRUE(SomeProblemMentions(*run, RingPath(*ring_stream_name_) + ": block ")) << Describe(*run);
  }
}

// Garbage in the ring's own header (magic, layout) must be reported, never crash. The version
// field has its own test below.
TEST_F(CorruptRunTest, DamagedRingHeaderIsReported) {
  std::mt19937_64 random(14);
  const std::vector<std::pair<size_t, size_t>> fields = {{offsetof(RingHeader, magic), 8},
                                                         {offsetof(RingHeader, block_bytes), 4},
                                                         {offsetof(RingHeader, block_count), 4}};
  for (const auto& [offset, size] : fields) {
    for (int trial = 0; trial < 8; ++trial) {
      std::string ring = *ring_run_ring_;
      for (size_t i = 0; i < size; ++i) ring[offset + i] = static_cast<char>(random());
      SCOPED_TRACE("ring header field at " + std::to_string(offset) + ", trial " + std::to_string(trial));
      auto run = OpenDamaged(*ring_stream_name_, *ring_run_log_, ring);
      ASSERT_TRUE(run.ok()) << run.status().message();
      const uint64_t read = RecordsRead(*run);
      EXPECT_LE(read, RingRunRecords());
      if (read < RingRunRecords()) {
        EXPECT_TRUE(SomeProblemMentions(*run, RingPath(*ring_stream_name_))) << Describe(*run);
      }
    }
  }
}

// The version policy (format.h) promises an error naming the versions for a ring of another
// format version. Regression: ReadRing once read header->version after munmap() and crashed
// every reader (SIGSEGV). A death test, so a crash fails this test alone.
TEST_F(CorruptRunTest, RingOfAnotherFormatVersionIsReportedNotACrash) {
  std::string ring = *ring_run_ring_;
  const uint32_t newer = kFormatVersion + 1;
  std::memcpy(ring.data() + offsetof(RingHeader, version), &newer, sizeof newer);
  EXPECT_EXIT(
      {
        auto run = OpenDamaged(*ring_stream_name_, *ring_run_log_, ring);
        _exit(run.ok() && SomeProblemMentions(*run, "format version " + std::to_string(newer)) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A ring file cut short (a partial copy of a live run) is reported, never crashes, and keeps
// every block that lies wholly before the cut.
TEST_F(CorruptRunTest, TruncatedRingKeepsTheBlocksBeforeTheCut) {
  const std::vector<uint64_t> cuts = {0, 1, 100, kRingHeaderBytes - 1, kRingHeaderBytes, kRingHeaderBytes + 10,
                                      (*ring_blocks_)[3].begin, (*ring_blocks_)[3].begin + 100,
                                      (*ring_blocks_)[ring_blocks_->size() / 2].begin, ring_run_ring_->size() - 1};
  for (uint64_t cut : cuts) {
    SCOPED_TRACE("ring cut at " + std::to_string(cut));
    // An empty string means "no file" to OpenDamaged; a zero-length ring is written directly.
    auto run = OpenDamaged(*ring_stream_name_, *ring_run_log_, cut == 0 ? std::string() : ring_run_ring_->substr(0, cut));
    if (cut == 0) {
      WriteBytes(RingPath(*ring_stream_name_), "");
      run = ReadRecordedRun(scratch_);
    }
    ASSERT_TRUE(run.ok()) << run.status().message();
    uint64_t intact = 0;
    for (const RingBlockSpan& block : *ring_blocks_) {
      if (block.end <= cut && cut >= kRingHeaderBytes) intact += block.records;
    }
    EXPECT_GE(RecordsRead(*run), intact) << Describe(*run);
    EXPECT_TRUE(SomeProblemMentions(*run, RingPath(*ring_stream_name_))) << Describe(*run);
  }
}

TEST_F(CorruptRunTest, GarbageManifestIsReportedAndEveryRecordKept) {
  std::mt19937_64 random(15);
  std::string random_bytes(300, '\0');
  for (char& c : random_bytes) c = static_cast<char>(random());
  const std::vector<std::string> manifests = {
      random_bytes,
      "{\"node\": \"node-a\", \"clock\": {\"monotonic_ns\": 1",  // cut short
      "not json at all",
      std::string("{\"node\":\"a\0b\"}", 14),
  };
  for (const std::string& manifest : manifests) {
    SCOPED_TRACE("manifest " + std::to_string(&manifest - manifests.data()));
    auto run = OpenDamaged(*stream_name_, *log_run_log_, "", manifest);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(RecordsRead(*run), LogRunRecords());
    EXPECT_TRUE(SomeProblemMentions(*run, scratch_ + "/manifest.json")) << Describe(*run);
  }
}

// Valid JSON of the wrong shape: nothing to report necessarily, but nothing may crash and no
// record may be lost.
TEST_F(CorruptRunTest, WrongShapedManifestKeepsEveryRecord) {
  const std::vector<std::string> manifests = {
      "[]", "null", "17", "\"text\"", "{}",
      R"({"node": 5, "clock": "yesterday"})",
      R"({"node": ["a"], "clock": {"monotonic_ns": "1", "realtime_ns": -5}})",
      R"({"node": "n", "clock": {"monotonic_ns": 18446744073709551615, "realtime_ns": 1e300}})",
      R"({"node": "", "clock": {"monotonic_ns": -1, "realtime_ns": 9223372036854775807}})",
  };
  for (const std::string& manifest : manifests) {
    SCOPED_TRACE(manifest);
    auto run = OpenDamaged(*stream_name_, *log_run_log_, "", manifest);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(RecordsRead(*run), LogRunRecords());
  }
}

// Builds a log whose frames all carry valid checksums: what a buggy or foreign writer, or a
// version skew, could leave behind. Only the reader's own validation stands in the way.
std::string LogWithFrames(const std::vector<std::pair<FrameType, std::string>>& frames) {
  LogHeader header{};
  std::memcpy(header.magic, kLogMagic, sizeof kLogMagic);
  header.version = kFormatVersion;
  header.header_bytes = sizeof(LogHeader);
  std::string log(reinterpret_cast<const char*>(&header), sizeof header);
  for (const auto& [type, payload] : frames) {
    FrameHeader frame{};
    frame.magic = kFrameMagic;
    frame.type = static_cast<uint8_t>(type);
    frame.payload_bytes = static_cast<uint32_t>(payload.size());
    frame.checksum = FrameChecksum(type, payload);
    log.append(reinterpret_cast<const char*>(&frame), sizeof frame);
    log.append(payload);
  }
  return log;
}

// Meta and stats frames of the wrong shape, checksums intact.
TEST_F(CorruptRunTest, WrongShapedMetaAndStatsFramesKeepEveryRecord) {
  std::vector<RawRecord> records(3);
  for (size_t i = 0; i < records.size(); ++i) records[i] = {1000 + i, 0, static_cast<uint8_t>(RecordKind::kInstant), 0, 0, 0};
  const std::string block = EncodeBlock(1, 77, 0, records);
  const std::vector<std::string> metas = {
      "", "[]", "not json", R"({"pid": "x", "ppid": 1.5, "ticks_per_ns": "fast"})",
      R"({"ticks_per_ns": 0, "clock_anchor": 5})", R"({"ticks_per_ns": -1e308, "clock_anchor": {"monotonic_ns": "a"}})",
      R"({"ticks_per_ns": 1e-300, "clock_anchor": {"monotonic_ns": 1, "realtime_ns": 2}})",
  };
  const std::vector<std::string> stats = {"", "{}", R"({"events_dropped": -1})", R"({"events_dropped": "many"})",
                                          R"({"events_dropped": 18446744073709551615})"};
  for (const std::string& meta : metas) {
    for (const std::string& stat : stats) {
      SCOPED_TRACE(meta + " / " + stat);
      std::vector<std::pair<FrameType, std::string>> frames = {{FrameType::kBlock, block}};
      if (!meta.empty()) frames.insert(frames.begin(), {FrameType::kMeta, meta});
      if (!stat.empty()) frames.push_back({FrameType::kStats, stat});
      auto run = OpenDamaged("proc-1-abcd", LogWithFrames(frames), "", "");
      ASSERT_TRUE(run.ok()) << run.status().message();
      EXPECT_EQ(RecordsRead(*run), records.size());
    }
  }
}

// Regression: the run reader once read the meta frame's "kind" with nlohmann's value(), which
// throws on a non-string, and terminated the process. A death test, so a crash fails this test
// alone.
TEST_F(CorruptRunTest, MetaFrameFieldsOfTheWrongTypeDoNotCrash) {
  const std::string log = LogWithFrames(
      {{FrameType::kMeta, R"({"kind": 1, "pid": "5", "ppid": [], "ticks_per_ns": "x", "clock_anchor": 7})"},
       {FrameType::kStats, R"({"events_dropped": {"a": 1}})"}});
  EXPECT_EXIT(
      {
        auto run = OpenDamaged("proc-1-abcd", log, "", "");
        _exit(run.ok() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// The checksum covers the frame's type. Regression: it once covered the payload only, so a
// one-bit flip of a block frame's type (2 -> 3) turned it into a "clock" frame: its records
// vanished without a problem and a garbage calibration pair joined the stream's clock.
TEST_F(CorruptRunTest, FlippedFrameTypeIsReported) {
  const FrameSpan* block = nullptr;
  for (const FrameSpan& frame : *log_frames_) {
    if (frame.type == FrameType::kBlock) {
      block = &frame;
      break;
    }
  }
  ASSERT_NE(block, nullptr);
  std::string log = *log_run_log_;
  log[block->begin + 4] = static_cast<char>(log[block->begin + 4] ^ 1);  // kBlock (2) -> kClock (3)
  auto run = OpenDamaged(*stream_name_, log, "");
  ASSERT_TRUE(run.ok());
  EXPECT_LT(RecordsRead(*run), LogRunRecords());
  EXPECT_TRUE(SomeProblemMentions(*run, LogPath(*stream_name_))) << Describe(*run);
}

// What `stepscope run` does after a crash must not make things worse: compacting a stream folds
// the ring into the log and deletes the ring, so it must only do so when the log it appends to
// is readable. Regression test for a defect store_stream_fuzzer found: compaction appended to a
// log whose header ParseLog rejects, then removed the ring, losing every ring record.
TEST_F(CorruptRunTest, CompactingWithAnUnreadableLogKeepsTheRingRecords) {
  std::string log = *ring_run_log_;
  log[0] = 'X';  // the log's magic
  auto before = OpenDamaged(*ring_stream_name_, log, *ring_run_ring_);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(RecordsRead(*before), RingRunRecords());
  (void)CompactStream(scratch_, *ring_stream_name_);  // may refuse; must not lose anything
  auto after = ReadRecordedRun(scratch_);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(RecordsRead(*after), RingRunRecords()) << Describe(*after);
}

// Regression test for a defect store_stream_fuzzer found: compaction decided a ring block was
// "already in the log" from a frame prefix's record count without decoding the frame, so a
// frame that passes its checksum but does not decode made it delete the ring's only good copy.
TEST_F(CorruptRunTest, CompactionDoesNotTrustAnUndecodableLogCopy) {
  const RingBlockSpan& victim = ring_blocks_->front();
  std::string payload;
  const uint32_t tid = 1, count = static_cast<uint32_t>(victim.records), columns_bytes = count * 5;
  const uint64_t dropped = 0;
  payload.append(reinterpret_cast<const char*>(&victim.seq), 8);
  payload.append(reinterpret_cast<const char*>(&tid), 4);
  payload.append(reinterpret_cast<const char*>(&count), 4);
  payload.append(reinterpret_cast<const char*>(&dropped), 8);
  payload.append(reinterpret_cast<const char*>(&columns_bytes), 4);
  payload.append("not a zstd frame");
  const std::string log = *ring_run_log_ + LogWithFrames({{FrameType::kBlock, payload}}).substr(sizeof(LogHeader));
  auto before = OpenDamaged(*ring_stream_name_, log, *ring_run_ring_);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(RecordsRead(*before), RingRunRecords());
  ASSERT_TRUE(CompactStream(scratch_, *ring_stream_name_).ok());
  auto after = ReadRecordedRun(scratch_);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(RecordsRead(*after), RingRunRecords()) << Describe(*after);
}

}  // namespace
}  // namespace stepscope::store
