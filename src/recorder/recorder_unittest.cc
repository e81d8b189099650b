// The recorder records one session per process, so every scenario runs in a forked child that
// starts recording, does its work and exits; the test process only reads the run back.
#include "recorder/recorder.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "base/file_system.h"
#include "stepscope/stepscope.hpp"
#include "store/run_reader.h"
#include "store/stream_reader.h"

namespace stepscope::recorder {
namespace {

std::string FreshDir(const std::string& tag) {
  std::string dir = ::testing::TempDir() + "/recorder-" + tag + "-" + std::to_string(getpid());
  std::string cmd = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return dir;
}

// Runs `body` in a child process and returns its exit status.
int RunInChild(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

void CompactAll(const std::string& dir) {
  auto streams = store::ListStreams(dir);
  ASSERT_TRUE(streams.ok());
  for (const auto& name : *streams) ASSERT_TRUE(store::CompactStream(dir, name).ok()) << name;
}

std::map<std::string, int> CountByName(const store::RunReader& run, store::EventKind kind) {
  std::map<std::string, int> counts;
  for (const auto& e : run.events()) {
    if (e.kind == kind) counts[std::string(run.Name(e.name))]++;
  }
  return counts;
}

TEST(Recorder, RecordsEveryEventFromManyThreads) {
  std::string dir = FreshDir("threads");
  int status = RunInChild([&] {
    StartOptions options;
    options.node_dir = dir;
    if (!Start(options).ok()) return 1;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([] {
        for (int i = 0; i < 20000; ++i) {
          STEPSCOPE_SCOPE("work");
        }
      });
    }
    for (auto& thread : threads) thread.join();
    Stop();
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CompactAll(dir);
  auto run = store::RunReader::Open(dir);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(CountByName(*run, store::EventKind::kSpan)["work"], 80000);
  ASSERT_EQ(run->streams().size(), 1u);
  EXPECT_EQ(run->streams()[0].dropped_events, 0u);
  EXPECT_TRUE(run->problems().empty()) << run->problems()[0];
}

TEST(Recorder, NestsScopesStepsCountersAndArguments) {
  std::string dir = FreshDir("nesting");
  int status = RunInChild([&] {
    if (stepscope_start(dir.c_str(), nullptr, 0) != 0) return 1;
    for (int i = 0; i < 3; ++i) {
      StepScope step(Phase::kTrain);
      STEPSCOPE_SCOPE("forward");
      stepscope_arg_int(Intern("batch"), 64 + i);
      Counter("loss", 1.0 / (i + 1));
    }
    StepBegin(Phase::kEval, 7);
    StepEnd(Phase::kEval, 7);
    Stop();
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto run = store::RunReader::Open(dir);
  ASSERT_TRUE(run.ok());
  std::vector<int64_t> train_steps;
  int eval_steps = 0, forwards = 0, losses = 0;
  for (const auto& e : run->events()) {
    if (e.kind == store::EventKind::kStep && e.phase == store::Phase::kTrain) train_steps.push_back(e.step);
    if (e.kind == store::EventKind::kStep && e.phase == store::Phase::kEval) {
      ++eval_steps;
      EXPECT_EQ(e.step, 7);
      EXPECT_EQ(run->Name(e.name), "Step:ModeKeys.EVAL");
    }
    if (e.kind == store::EventKind::kSpan && run->Name(e.name) == "forward") {
      ++forwards;
      auto args = run->Args(e);
      ASSERT_EQ(args.size(), 1u);
      EXPECT_EQ(run->Name(args[0].key), "batch");
      EXPECT_GE(args[0].int_value, 64);
    }
    if (e.kind == store::EventKind::kCounter) {
      ++losses;
      EXPECT_GT(e.value, 0.3);
    }
  }
  EXPECT_EQ(train_steps, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(eval_steps, 1);
  EXPECT_EQ(forwards, 3);
  EXPECT_EQ(losses, 3);
  // Every forward span lies inside a TRAIN step.
  for (const auto& e : run->events()) {
    if (e.kind != store::EventKind::kSpan) continue;
    bool inside = false;
    for (const auto& s : run->events()) {
      inside |= s.kind == store::EventKind::kStep && s.start_ns <= e.start_ns && e.end_ns <= s.end_ns;
    }
    EXPECT_TRUE(inside);
  }
}

TEST(Recorder, DeferredStepsTakeTheirPhaseAndNumberFromTheEnd) {
  std::string dir = FreshDir("deferred");
  int status = RunInChild([&] {
    if (stepscope_start(dir.c_str(), nullptr, 0) != 0) return 1;
    for (stepscope_phase phase : {STEPSCOPE_PHASE_TRAIN, STEPSCOPE_PHASE_TRAIN, STEPSCOPE_PHASE_EVAL}) {
      stepscope_step_begin(STEPSCOPE_PHASE_GLOBAL, STEPSCOPE_DEFERRED_STEP);
      stepscope_step_end(phase, stepscope_next_step_number(phase));
    }
    stepscope_step_begin(STEPSCOPE_PHASE_GLOBAL, STEPSCOPE_DEFERRED_STEP);  // withdrawn: not a step
    stepscope_step_end(STEPSCOPE_PHASE_GLOBAL, STEPSCOPE_CANCELLED_STEP);
    stepscope_step_begin(STEPSCOPE_PHASE_GLOBAL, STEPSCOPE_DEFERRED_STEP);  // cut short: stays GLOBAL
    Stop();
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto run = store::RunReader::Open(dir);
  ASSERT_TRUE(run.ok());
  std::vector<std::pair<std::string, int64_t>> steps;
  for (const auto& e : run->events()) {
    if (e.kind == store::EventKind::kStep) steps.emplace_back(std::string(run->Name(e.name)), e.step);
  }
  EXPECT_EQ(steps, (std::vector<std::pair<std::string, int64_t>>{{"Step:ModeKeys.TRAIN", 0},
                                                                  {"Step:ModeKeys.TRAIN", 1},
                                                                  {"Step:ModeKeys.EVAL", 0},
                                                                  {"Step:ModeKeys.GLOBAL", -1}}));
  EXPECT_TRUE(run->events().back().unfinished);
}

TEST(Recorder, CountsDropsWhenTheRingIsFullAndNeverBlocks) {
  std::string dir = FreshDir("drops");
  // The child reports its own stats through shared memory.
  auto* stats = static_cast<stepscope_stats*>(
      mmap(nullptr, sizeof(stepscope_stats), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  int status = RunInChild([&] {
    StartOptions options;
    options.node_dir = dir;
    options.block_bytes = 4096;
    options.block_count = 2;
    options.flush_interval_ms = 60000;  // nothing frees blocks: the ring must overflow
    if (!Start(options).ok()) return 1;
    uint32_t id = Intern("burst");
    for (int i = 0; i < 10000; ++i) stepscope_instant(id);
    stepscope_get_stats(stats);
    _exit(0);  // like a DataLoader worker: no atexit, no flush
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(stats->events_recorded + stats->events_dropped, 10000u);
  EXPECT_GT(stats->events_dropped, 0u);
  CompactAll(dir);
  auto run = store::RunReader::Open(dir);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(CountByName(*run, store::EventKind::kInstant)["burst"], static_cast<int>(stats->events_recorded));
  EXPECT_EQ(run->streams()[0].dropped_events, stats->events_dropped);
  munmap(stats, sizeof(stepscope_stats));
}

TEST(Recorder, AForkedChildRecordsIntoItsOwnStream) {
  std::string dir = FreshDir("fork");
  int status = RunInChild([&] {
    if (stepscope_start(dir.c_str(), nullptr, 0) != 0) return 1;
    uint32_t before = Intern("before-fork");
    stepscope_instant(before);
    pid_t child = fork();
    if (child == 0) {
      for (int i = 0; i < 100; ++i) stepscope_instant(before);  // id interned by the parent
      stepscope_instant_name("child-only");
      _exit(0);
    }
    int child_status;
    waitpid(child, &child_status, 0);
    stepscope_instant_name("after-fork");
    Stop();
    return WIFEXITED(child_status) ? WEXITSTATUS(child_status) : 3;
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CompactAll(dir);
  auto run = store::RunReader::Open(dir);
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->streams().size(), 2u);
  std::map<int64_t, std::map<std::string, int>> by_pid;
  for (const auto& e : run->events()) by_pid[run->streams()[e.stream].pid][std::string(run->Name(e.name))]++;
  ASSERT_EQ(by_pid.size(), 2u);
  int64_t parent_pid = run->streams()[0].ppid == run->streams()[1].pid ? run->streams()[1].pid : run->streams()[0].pid;
  for (auto& [pid, names] : by_pid) {
    if (pid == parent_pid) {
      EXPECT_EQ(names["before-fork"], 1);
      EXPECT_EQ(names["after-fork"], 1);
      EXPECT_EQ(names.count("child-only"), 0u);
    } else {
      EXPECT_EQ(names["before-fork"], 100);
      EXPECT_EQ(names["child-only"], 1);
    }
  }
  EXPECT_TRUE(run->problems().empty()) << run->problems()[0];
}

TEST(Recorder, IsANoOpWhenNotStarted) {
  int status = RunInChild([] {
    if (stepscope_is_enabled()) return 1;
    STEPSCOPE_SCOPE("ignored");
    stepscope_instant(Intern("ignored"));
    stepscope_stats stats;
    stepscope_get_stats(&stats);
    return stats.events_recorded == 0 && Intern("x") == 0 ? 0 : 2;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A real disk that fills: a tmpfs of `bytes` mounted at a fresh directory for one test.
// Mounting needs root (CAP_SYS_ADMIN); elsewhere the test is skipped and says why.
class SmallDisk {
 public:
  SmallDisk(const std::string& tag, size_t bytes) : dir_(FreshDir(tag)) {
    EXPECT_TRUE(CreateDirectories(dir_).ok());
    const std::string size = "size=" + std::to_string(bytes);
    mounted_ = mount("tmpfs", dir_.c_str(), "tmpfs", 0, size.c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& dir() const { return dir_; }
  std::string node_dir() const { return dir_ + "/node"; }
  // Writes a filler file until the disk refuses more.
  void Fill() const {
    const int fd = open((dir_ + "/filler").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    std::string chunk(4096, 'x');
    while (write(fd, chunk.data(), chunk.size()) > 0) {
    }
    close(fd);
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

// Issue 12: drops caused by a disk that filled mid-run were blamed on full buffers.
TEST(Recorder, DropsWhileTheDiskIsFullAreCountedAsWriteFailures) {
  SmallDisk disk("full-mid-run", 1024 * 1024);
  if (!disk.mounted()) GTEST_SKIP() << "mounting a small tmpfs needs root";
  auto* stats = static_cast<stepscope_stats*>(
      mmap(nullptr, sizeof(stepscope_stats), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  constexpr int kBefore = 1000, kAfter = 20000;
  int status = RunInChild([&] {
    StartOptions options;
    options.node_dir = disk.node_dir();
    options.block_bytes = 4096;  // 168 records a block
    options.block_count = 8;
    options.flush_interval_ms = 60000;  // flushes happen where this test calls Flush()
    if (!Start(options).ok()) return 1;
    uint32_t id = Intern("event");
    for (int i = 0; i < kBefore; ++i) stepscope_instant(id);
    Flush();  // all of it reaches the log
    disk.Fill();
    // The log's last page still takes a few small frames; flushing after every block, the
    // first flush that fails marks the log unwritable before the ring can fill.
    for (int i = 0; i < kAfter; ++i) {
      stepscope_instant(id);
      if (i % 200 == 0) Flush();
    }
    stepscope_get_stats(stats);
    Stop();
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(stats->events_recorded + stats->events_dropped, static_cast<uint64_t>(kBefore + kAfter));
  EXPECT_GT(stats->events_dropped, 0u);
  auto run = store::RunReader::Open(disk.node_dir());  // not compacted: the disk is still full
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->streams().size(), 1u);
  const store::StreamInfo& stream = run->streams()[0];
  EXPECT_EQ(stream.dropped_events, stats->events_dropped);
  EXPECT_EQ(stream.dropped_write_failed, stats->events_dropped);  // every drop came after the failure
  EXPECT_EQ(CountByName(*run, store::EventKind::kInstant)["event"], static_cast<int>(stats->events_recorded));
  munmap(stats, sizeof(stepscope_stats));
}

TEST(Recorder, StartFailsWithAClearMessageForAnUnwritableDirectory) {
  int status = RunInChild([] {
    char error[256];
    if (stepscope_start("/proc/stepscope-cannot-write-here", error, sizeof error) == 0) return 1;
    return std::string(error).find("/proc/stepscope-cannot-write-here") != std::string::npos ? 0 : 2;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace stepscope::recorder
