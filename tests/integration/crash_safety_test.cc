// SPEC §3 / §6: "an event recorded before the training process is killed (SIGKILL, OOM killer,
// segfault) is in the run afterwards" — 0 recorded events lost.
//
// Each scenario execs this same binary as a recording child (`--crash-child`, handled in main()
// below), so the child is a fresh process with the recorder's real start-up path. The child's
// threads record a fixed cycle of records and, after every record call returns, publish how
// many calls have returned into a MAP_SHARED progress file. The parent kills the child (or the
// child aborts / faults itself), compacts every stream as `stepscope run` would, and reads the
// run back. Per thread, the records read back must be exactly the first R records of the cycle
// with P <= R <= P + 1, where P is the last published progress: the "+ 1" is a record whose call
// was cut short by the kill after it published the record but before it published the progress.
//
// The child never records more than its ring can hold without the flusher, so no record can be
// dropped whatever the scheduler does; the test checks that no drop was counted.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "analysis/recorded_run.h"
#include "base/file_system.h"
#include "recorder/recorder.h"
#include "stepscope/stepscope.h"
#include "store/stream_reader.h"

namespace stepscope {
namespace {

using analysis::RecordedKind;
using store::RecordKind;

// The workload: one training-like iteration is kCycleLength records; record i of a thread is
// kCycle[i % kCycleLength] of iteration i / kCycleLength.

struct CycleEntry {
  RecordKind kind;
  const char* name;  // span/instant/counter name or argument key; nullptr for steps
};
constexpr std::array<CycleEntry, 10> kCycle = {{
    {RecordKind::kStepBegin, nullptr},
    {RecordKind::kBegin, "dataloader"},
    {RecordKind::kEnd, "dataloader"},
    {RecordKind::kBegin, "forward"},
    {RecordKind::kArgInt, "batch"},
    {RecordKind::kArgString, "device"},
    {RecordKind::kEnd, "forward"},
    {RecordKind::kInstant, "checkpoint"},
    {RecordKind::kCounter, "loss"},
    {RecordKind::kStepEnd, nullptr},
}};
constexpr size_t kCycleLength = kCycle.size();
constexpr const char* kDeviceValue = "cuda:0";

// The progress file: one cache line per recording thread, written only by that thread.
constexpr int kMaxThreads = 8;
struct alignas(64) ProgressSlot {
  std::atomic<uint64_t> records;  // record calls that have returned
  std::atomic<uint32_t> tid;      // kernel thread id, to match the blocks' tid
};
struct ProgressPage {
  ProgressSlot slots[kMaxThreads];
};
static_assert(sizeof(ProgressPage) <= 4096);

enum class Death { kSigkill, kAbort, kSegfault };

struct ChildConfig {
  std::string node_dir;
  std::string progress_path;
  int threads = 1;
  uint32_t block_bytes = 32 * 1024;
  uint32_t block_count = 256;
  uint32_t flush_interval_ms = 100;
  uint64_t cap_per_thread = 0;  // records per thread; after that the thread idles
  Death death = Death::kSigkill;
  uint64_t die_at = 0;          // kAbort/kSegfault: thread 0 dies right after this record
  bool flush_thread = false;    // one more thread calling stepscope_flush() without pause
  int work_per_iteration = 200; // a little arithmetic between iterations, like a real loop
};

// Records per thread that fit in the ring even if the flusher never frees a block.
uint64_t RingCapacityPerThread(uint32_t block_bytes, uint32_t block_count, int threads) {
  uint64_t per_block = (block_bytes - sizeof(store::BlockHeader)) / sizeof(store::RawRecord);
  return (block_count / threads - 1) * per_block;
}

ProgressPage* MapProgress(const std::string& path, bool create) {
  int fd = open(path.c_str(), create ? (O_RDWR | O_CREAT | O_TRUNC) : O_RDWR, 0644);
  if (fd < 0) return nullptr;
  if (create && ftruncate(fd, 4096) != 0) {
    close(fd);
    return nullptr;
  }
  void* mapping = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return mapping == MAP_FAILED ? nullptr : static_cast<ProgressPage*>(mapping);
}

// What the exec'd child runs.

struct Ids {
  uint32_t names[kCycleLength] = {};
  uint32_t device_value = 0;
};

[[noreturn]] void Die(Death death) {
  if (death == Death::kAbort) std::abort();
  // The kernel's default action, as in a process without a handler (a sanitizer's handler
  // would turn the death into exit(66)).
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
  _exit(99);  // not reached: SIGSEGV's default action ends the process
}

[[noreturn]] void RecordThread(const ChildConfig& config, const Ids& ids, ProgressSlot* slot, bool may_die) {
  slot->tid.store(static_cast<uint32_t>(syscall(SYS_gettid)), std::memory_order_release);
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < config.cap_per_thread; ++i) {
    const size_t position = i % kCycleLength;
    const int64_t iteration = static_cast<int64_t>(i / kCycleLength);
    const uint32_t id = ids.names[position];
    switch (kCycle[position].kind) {
      case RecordKind::kStepBegin: stepscope_step_begin(STEPSCOPE_PHASE_TRAIN, iteration); break;
      case RecordKind::kStepEnd: stepscope_step_end(STEPSCOPE_PHASE_TRAIN, iteration); break;
      case RecordKind::kBegin: stepscope_begin(id); break;
      case RecordKind::kEnd: stepscope_end(id); break;
      case RecordKind::kInstant: stepscope_instant(id); break;
      case RecordKind::kCounter: stepscope_counter(id, static_cast<double>(iteration)); break;
      case RecordKind::kArgInt: stepscope_arg_int(id, iteration); break;
      case RecordKind::kArgString: stepscope_arg_string(id, ids.device_value); break;
      default: break;
    }
    // Release: whoever sees this count sees a process that already returned from the call.
    slot->records.store(i + 1, std::memory_order_release);
    if (may_die && i + 1 == config.die_at) Die(config.death);
    if (position == kCycleLength - 1) {
      for (int w = 0; w < config.work_per_iteration; ++w) sink = sink + static_cast<uint64_t>(w);
    }
  }
  for (;;) pause();  // wait for the parent's SIGKILL (or for thread 0 to bring the process down)
}

int RunChild(const ChildConfig& config) {
  // abort() and SIGSEGV would otherwise leave core files wherever the test runs.
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  // On a loaded machine with few cores the busy child would starve the parent's polling, and
  // the kill would land after the child reached its cap instead of mid-stream.
  if (nice(10) == -1) std::perror("nice");
  ProgressPage* progress = MapProgress(config.progress_path, /*create=*/false);
  if (progress == nullptr) return 10;
  recorder::StartOptions options;
  options.node_dir = config.node_dir;
  options.block_bytes = config.block_bytes;
  options.block_count = config.block_count;
  options.flush_interval_ms = config.flush_interval_ms;
  Status started = recorder::Start(options);
  if (!started.ok()) {
    std::fprintf(stderr, "child: %s\n", started.message().c_str());
    return 11;
  }
  Ids ids;
  for (size_t i = 0; i < kCycleLength; ++i) {
    if (kCycle[i].name != nullptr) ids.names[i] = recorder::Intern(kCycle[i].name);
  }
  ids.device_value = recorder::Intern(kDeviceValue);
  if (config.flush_thread) {
    std::thread([] {
      for (;;) stepscope_flush();
    }).detach();
  }
  std::vector<std::thread> threads;
  for (int t = 1; t < config.threads; ++t) {
    threads.emplace_back(RecordThread, std::cref(config), std::cref(ids), &progress->slots[t], false);
  }
  RecordThread(config, ids, &progress->slots[0], /*may_die=*/true);
}

// argv: --crash-child node_dir progress_path threads block_bytes block_count flush_ms cap death
//       die_at flush_thread work
int ChildMain(int argc, char** argv) {
  if (argc != 13) return 12;
  ChildConfig config;
  config.node_dir = argv[2];
  config.progress_path = argv[3];
  config.threads = std::atoi(argv[4]);
  config.block_bytes = static_cast<uint32_t>(std::strtoul(argv[5], nullptr, 10));
  config.block_count = static_cast<uint32_t>(std::strtoul(argv[6], nullptr, 10));
  config.flush_interval_ms = static_cast<uint32_t>(std::strtoul(argv[7], nullptr, 10));
  config.cap_per_thread = std::strtoull(argv[8], nullptr, 10);
  config.death = static_cast<Death>(std::atoi(argv[9]));
  config.die_at = std::strtoull(argv[10], nullptr, 10);
  config.flush_thread = std::atoi(argv[11]) != 0;
  config.work_per_iteration = std::atoi(argv[12]);
  if (config.threads < 1 || config.threads > kMaxThreads) return 13;
  return RunChild(config);
}

// What the test process does: spawn, kill, compact, read back.

std::string SelfPath() {
  char buffer[4096];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  buffer[n] = '\0';
  return buffer;
}

pid_t SpawnChild(const ChildConfig& config) {
  std::vector<std::string> args = {SelfPath(),
                                   "--crash-child",
                                   config.node_dir,
                                   config.progress_path,
                                   std::to_string(config.threads),
                                   std::to_string(config.block_bytes),
                                   std::to_string(config.block_count),
                                   std::to_string(config.flush_interval_ms),
                                   std::to_string(config.cap_per_thread),
                                   std::to_string(static_cast<int>(config.death)),
                                   std::to_string(config.die_at),
                                   config.flush_thread ? "1" : "0",
                                   std::to_string(config.work_per_iteration)};
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    unsetenv("STEPSCOPE_NODE_DIR");  // the child starts its recorder explicitly
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

uint64_t TotalProgress(const ProgressPage* progress, int threads) {
  uint64_t total = 0;
  for (int t = 0; t < threads; ++t) total += progress->slots[t].records.load(std::memory_order_acquire);
  return total;
}

// What a thread's first `records` records produce when read back as events.
std::map<RecordedKind, uint64_t> ExpectedEvents(uint64_t records) {
  std::map<RecordedKind, uint64_t> events;
  for (uint64_t i = 0; i < records; ++i) {
    switch (kCycle[i % kCycleLength].kind) {
      case RecordKind::kBegin: events[RecordedKind::kSpan]++; break;
      case RecordKind::kStepBegin: events[RecordedKind::kStep]++; break;
      case RecordKind::kInstant: events[RecordedKind::kInstant]++; break;
      case RecordKind::kCounter: events[RecordedKind::kCounter]++; break;
      default: break;
    }
  }
  return events;
}

struct Outcome {
  uint64_t progress = 0;   // record calls that returned, all threads
  uint64_t read_back = 0;  // records in the compacted run, all threads
  uint64_t events = 0;     // events the run decoder built from them
};

class CrashSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/crash-safety-" + std::to_string(getpid());
    ASSERT_EQ(std::system(("rm -rf '" + root_ + "'").c_str()), 0);
    ASSERT_TRUE(CreateDirectories(root_).ok());
  }
  void TearDown() override {
    if (!HasFailure()) (void)std::system(("rm -rf '" + root_ + "'").c_str());
  }

  // Runs one child to its death and checks the run it leaves behind.
  Outcome RunScenario(ChildConfig config, uint64_t kill_after_total, const std::string& tag) {
    Outcome outcome;
    config.node_dir = root_ + "/" + tag + "/node";
    config.progress_path = root_ + "/" + tag + ".progress";
    EXPECT_TRUE(CreateDirectories(root_ + "/" + tag).ok());
    ProgressPage* progress = MapProgress(config.progress_path, /*create=*/true);
    EXPECT_NE(progress, nullptr);
    if (progress == nullptr) return outcome;

    pid_t pid = SpawnChild(config);
    EXPECT_GT(pid, 0);
    int status = 0;
    bool exited = false;
    // A generous deadline only so a broken child cannot hang the test; nothing is timed.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!exited && std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      if (config.death == Death::kSigkill && TotalProgress(progress, config.threads) >= kill_after_total) {
        kill(pid, SIGKILL);
        EXPECT_EQ(waitpid(pid, &status, 0), pid);
        exited = true;
        break;
      }
      usleep(20);
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << tag << ": the child never reached " << kill_after_total << " records";
    }
    const int expected_signal = config.death == Death::kSigkill ? SIGKILL
                                : config.death == Death::kAbort ? SIGABRT
                                                                : SIGSEGV;
    EXPECT_TRUE(WIFSIGNALED(status)) << tag << ": child exited with status " << status;
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), expected_signal) << tag;
    }

    std::vector<uint64_t> progress_by_thread(config.threads);
    std::map<uint32_t, int> thread_of_tid;
    for (int t = 0; t < config.threads; ++t) {
      progress_by_thread[t] = progress->slots[t].records.load(std::memory_order_acquire);
      thread_of_tid[progress->slots[t].tid.load(std::memory_order_acquire)] = t;
      outcome.progress += progress_by_thread[t];
    }
    munmap(progress, 4096);

    // What `stepscope run` does once the job is gone.
    auto streams = store::ListStreams(config.node_dir);
    EXPECT_TRUE(streams.ok());
    if (!streams.ok()) return outcome;
    EXPECT_EQ(streams->size(), 1u) << tag;
    for (const std::string& name : *streams) {
      Status compacted = store::CompactStream(config.node_dir, name);
      EXPECT_TRUE(compacted.ok()) << tag << ": " << compacted.message();
    }

    // Records, thread by thread, straight from the compacted stream.
    std::map<int, uint64_t> read_by_thread;
    for (const std::string& name : *streams) {
      auto contents = store::ReadStream(config.node_dir, name);
      EXPECT_TRUE(contents.ok()) << tag;
      if (!contents.ok()) continue;
      EXPECT_FALSE(contents->has_ring) << tag << ": compaction left the ring behind";
      EXPECT_EQ(contents->dropped_events, 0u) << tag;
      auto name_of = [&](uint32_t id) {
        auto it = contents->strings.find(id);
        return it == contents->strings.end() ? std::string("<missing>") : it->second;
      };
      // Blocks are sorted by sequence number, which a thread takes in the order it fills them.
      for (const store::DecodedBlock& block : contents->blocks) {
        auto thread = thread_of_tid.find(block.tid);
        EXPECT_NE(thread, thread_of_tid.end()) << tag << ": a block from unknown thread " << block.tid;
        if (thread == thread_of_tid.end()) continue;
        uint64_t& index = read_by_thread[thread->second];
        for (const store::RawRecord& record : block.records) {
          const CycleEntry& expected = kCycle[index % kCycleLength];
          const int64_t iteration = static_cast<int64_t>(index / kCycleLength);
          EXPECT_EQ(record.kind, static_cast<uint8_t>(expected.kind)) << tag << " record " << index;
          if (expected.name != nullptr) {
            EXPECT_EQ(name_of(record.name_id), expected.name) << tag << " record " << index;
          }
          if (expected.kind == RecordKind::kStepBegin || expected.kind == RecordKind::kArgInt) {
            EXPECT_EQ(static_cast<int64_t>(record.value), iteration) << tag << " record " << index;
          }
          if (expected.kind == RecordKind::kCounter) {
            double value;
            std::memcpy(&value, &record.value, sizeof value);
            EXPECT_EQ(value, static_cast<double>(iteration)) << tag << " record " << index;
          }
          if (expected.kind == RecordKind::kArgString) {
            EXPECT_EQ(name_of(static_cast<uint32_t>(record.value)), kDeviceValue);
          }
          ++index;
        }
      }
    }
    for (int t = 0; t < config.threads; ++t) {
      const uint64_t published = progress_by_thread[t];
      const uint64_t read = read_by_thread[t];
      outcome.read_back += read;
      EXPECT_GE(read, published) << tag << " thread " << t << ": recorded events were lost";
      // Thread 0 of an abort/segfault scenario died after publishing; anyone else may have
      // been cut between publishing the record and publishing the progress.
      const bool died_after_publishing = config.death != Death::kSigkill && t == 0;
      EXPECT_LE(read, published + (died_after_publishing ? 0 : 1)) << tag << " thread " << t;
    }

    // The same run through the reader every tool uses.
    auto run = analysis::ReadRecordedRun(config.node_dir);
    EXPECT_TRUE(run.ok()) << tag << ": " << run.status().message();
    if (!run.ok()) return outcome;
    std::map<int, std::map<RecordedKind, uint64_t>> events_by_thread;
    for (const auto& [stream, event, args] : run->events()) {
      auto thread = thread_of_tid.find(event.tid);
      if (thread != thread_of_tid.end()) events_by_thread[thread->second][event.kind]++;
    }
    for (int t = 0; t < config.threads; ++t) {
      EXPECT_EQ(events_by_thread[t], ExpectedEvents(read_by_thread[t])) << tag << " thread " << t;
    }
    outcome.events = run->events().size();
    for (const std::string& problem : run->problems()) std::printf("  [%s] reader: %s\n", tag.c_str(), problem.c_str());
    const bool mid_stream = outcome.progress < config.cap_per_thread * config.threads;
    std::printf("  [%s] progress %llu, records read back %llu, events %llu%s\n", tag.c_str(),
                static_cast<unsigned long long>(outcome.progress), static_cast<unsigned long long>(outcome.read_back),
                static_cast<unsigned long long>(outcome.events), mid_stream ? " (mid-stream)" : " (after the cap)");
    return outcome;
  }

  std::string root_;
};

constexpr int kRepetitions = 4;

TEST_F(CrashSafetyTest, SigkillMidStreamLosesNothingOneThread) {
  std::mt19937_64 random(1);
  for (int rep = 0; rep < kRepetitions; ++rep) {
    ChildConfig config;
    config.block_count = 256;
    config.cap_per_thread = RingCapacityPerThread(config.block_bytes, config.block_count, 1);
    uint64_t kill_after = 5000 + random() % 200000;
    Outcome outcome = RunScenario(config, kill_after, "kill1-" + std::to_string(rep));
    EXPECT_GE(outcome.read_back, outcome.progress);
    EXPECT_GE(outcome.progress, kill_after);
  }
}

TEST_F(CrashSafetyTest, SigkillMidStreamLosesNothingFourThreads) {
  std::mt19937_64 random(2);
  for (int rep = 0; rep < kRepetitions; ++rep) {
    ChildConfig config;
    config.threads = 4;
    config.block_count = 512;
    config.cap_per_thread = RingCapacityPerThread(config.block_bytes, config.block_count, config.threads);
    uint64_t kill_after = 5000 + random() % 300000;
    Outcome outcome = RunScenario(config, kill_after, "kill4-" + std::to_string(rep));
    EXPECT_GE(outcome.read_back, outcome.progress);
  }
}

// Small blocks, a 1 ms flusher and a thread snapshotting open blocks without pause: the kill
// lands while log frames are being written, so torn frames and blocks that are both in the log
// and still in the ring are the normal case here.
TEST_F(CrashSafetyTest, SigkillDuringHeavyFlushingLosesNothing) {
  std::mt19937_64 random(3);
  for (int rep = 0; rep < kRepetitions; ++rep) {
    ChildConfig config;
    config.threads = 4;
    config.block_bytes = 4096;
    config.block_count = 2048;
    config.flush_interval_ms = 1;
    config.flush_thread = true;
    config.cap_per_thread = RingCapacityPerThread(config.block_bytes, config.block_count, config.threads);
    uint64_t kill_after = 20000 + random() % 200000;
    Outcome outcome = RunScenario(config, kill_after, "flushkill-" + std::to_string(rep));
    EXPECT_GE(outcome.read_back, outcome.progress);
  }
}

TEST_F(CrashSafetyTest, AbortLosesNothing) {
  std::mt19937_64 random(4);
  for (int rep = 0; rep < kRepetitions; ++rep) {
    ChildConfig config;
    config.threads = rep % 2 == 0 ? 1 : 3;
    config.block_count = 384;
    config.death = Death::kAbort;
    config.flush_interval_ms = rep < 2 ? 100 : 1;
    config.flush_thread = rep >= 2;
    config.cap_per_thread = RingCapacityPerThread(config.block_bytes, config.block_count, config.threads);
    config.die_at = 1000 + random() % (config.cap_per_thread - 1000);
    Outcome outcome = RunScenario(config, 0, "abort-" + std::to_string(rep));
    EXPECT_GE(outcome.read_back, outcome.progress);
  }
}

TEST_F(CrashSafetyTest, SegfaultLosesNothing) {
  std::mt19937_64 random(5);
  for (int rep = 0; rep < kRepetitions; ++rep) {
    ChildConfig config;
    config.threads = rep % 2 == 0 ? 1 : 3;
    config.block_count = 384;
    config.death = Death::kSegfault;
    config.flush_interval_ms = rep < 2 ? 100 : 1;
    config.flush_thread = rep >= 2;
    config.cap_per_thread = RingCapacityPerThread(config.block_bytes, config.block_count, config.threads);
    config.die_at = 1000 + random() % (config.cap_per_thread - 1000);
    Outcome outcome = RunScenario(config, 0, "segv-" + std::to_string(rep));
    EXPECT_GE(outcome.read_back, outcome.progress);
  }
}

}  // namespace
}  // namespace stepscope

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--crash-child") == 0) return stepscope::ChildMain(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
