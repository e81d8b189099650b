// The recorder records one session per process, so every scenario runs in a forked child that
// starts recording, does its work and exits; the test process only reads the run back.
#include "recorder/recorder.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "analysis/recorded_run.h"
#include "base/file_system.h"
#include "stepscope/stepscope.hpp"
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

using analysis::ReadRecordedRun;
using analysis::RecordedKind;

std::map<std::string, int> CountByName(const analysis::RecordedRun& run, RecordedKind kind) {
  std::map<std::string, int> counts;
  for (const auto& [stream, e, args] : run.events()) {
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
  auto run = ReadRecordedRun(dir);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(CountByName(*run, RecordedKind::kSpan)["work"], 80000);
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
  auto run = ReadRecordedRun(dir);
  ASSERT_TRUE(run.ok()) << run.status().message();
  std::vector<int64_t> train_steps;
  int eval_steps = 0, forwards = 0, losses = 0;
  for (const auto& [stream, e, args] : run->events()) {
    if (e.kind == RecordedKind::kStep && e.phase == store::Phase::kTrain) train_steps.push_back(e.step);
    if (e.kind == RecordedKind::kStep && e.phase == store::Phase::kEval) {
      ++eval_steps;
      EXPECT_EQ(e.step, 7);
      EXPECT_EQ(run->Name(e.name), "Step:ModeKeys.EVAL");
    }
    if (e.kind == RecordedKind::kSpan && run->Name(e.name) == "forward") {
      ++forwards;
      ASSERT_EQ(args.size(), 1u);
      EXPECT_EQ(run->Name(args[0].key), "batch");
      EXPECT_GE(args[0].int_value, 64);
    }
    if (e.kind == RecordedKind::kCounter) {
      ++losses;
      EXPECT_GT(e.value, 0.3);
    }
  }
  EXPECT_EQ(train_steps, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(eval_steps, 1);
  EXPECT_EQ(forwards, 3);
  EXPECT_EQ(losses, 3);
  // Every forward span lies inside a TRAIN step.
  for (const auto& [stream, e, args] : run->events()) {
    if (e.kind != RecordedKind::kSpan) continue;
    bool inside = false;
    for (const auto& [step_stream, s, step_args] : run->events()) {
      inside |= s.kind == RecordedKind::kStep && s.start_ns <= e.start_ns && e.end_ns <= s.end_ns;
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
  auto run = ReadRecordedRun(dir);
  ASSERT_TRUE(run.ok()) << run.status().message();
  std::vector<std::pair<std::string, int64_t>> steps;
  for (const auto& [stream, e, args] : run->events()) {
    if (e.kind == RecordedKind::kStep) steps.emplace_back(std::string(run->Name(e.name)), e.step);
  }
  EXPECT_EQ(steps, (std::vector<std::pair<std::string, int64_t>>{{"Step:ModeKeys.TRAIN", 0},
                                                                  {"Step:ModeKeys.TRAIN", 1},
                                                                  {"Step:ModeKeys.EVAL", 0},
                                                                  {"Step:ModeKeys.GLOBAL", -1}}));
  EXPECT_TRUE(run->events().back().event.unfinished);
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
  auto run = ReadRecordedRun(dir);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(CountByName(*run, RecordedKind::kInstant)["burst"], static_cast<int>(stats->events_recorded));
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
  auto run = ReadRecordedRun(dir);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->streams().size(), 2u);
  std::map<int64_t, std::map<std::string, int>> by_pid;
  for (const auto& [stream, e, args] : run->events()) {
    by_pid[run->streams()[stream].pid][std::string(run->Name(e.name))]++;
  }
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
  auto run = ReadRecordedRun(disk.node_dir());  // not compacted: the disk is still full
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->streams().size(), 1u);
  const analysis::RecordedStream& stream = run->streams()[0];
  EXPECT_EQ(stream.dropped_events, stats->events_dropped);
  EXPECT_EQ(stream.dropped_write_failed, stats->events_dropped);  // every drop came after the failure
  EXPECT_EQ(CountByName(*run, RecordedKind::kInstant)["event"], static_cast<int>(stats->events_recorded));
  munmap(stats, sizeof(stepscope_stats));
}

// The blocked-signal mask of this process's thread named `name`, from /proc/self/task/*/status
// (the bit of signal n is 1 << (n - 1)); nullopt when no thread has that name.
std::optional<uint64_t> BlockedSignalsOfThread(const std::string& name) {
  LocalFileSystem fs;
  auto tids = fs.ListDirectory("/proc/self/task");
  if (!tids.ok()) return std::nullopt;
  for (const std::string& tid : *tids) {
    auto comm = fs.ReadFile("/proc/self/task/" + tid + "/comm");
    if (!comm.ok() || comm->substr(0, comm->find('\n')) != name) continue;
    auto status = fs.ReadFile("/proc/self/task/" + tid + "/status");
    if (!status.ok()) return std::nullopt;
    size_t at = status->find("SigBlk:");
    if (at == std::string::npos) return std::nullopt;
    return std::strtoull(status->c_str() + at + 7, nullptr, 16);
  }
  return std::nullopt;
}

uint64_t SignalBit(int signal) { return uint64_t{1} << (signal - 1); }

// The flusher's mask once it runs: glibc starts a thread with every signal blocked and sets the
// mask it inherited when the thread first runs; until then SIGSEGV is blocked too, which the
// final mask never has.
std::optional<uint64_t> BlockedSignalsOfRunningFlusher() {
  std::optional<uint64_t> blocked = BlockedSignalsOfThread("stepscope-flush");
  for (int tries = 0; blocked && (*blocked & SignalBit(SIGSEGV)) != 0 && tries < 10000; ++tries) {
    usleep(1000);
    blocked = BlockedSignalsOfThread("stepscope-flush");
  }
  return blocked;
}

// A signal sent to the job's process goes to any one thread that does not block it. A job that
// blocks SIGTERM and takes it with sigwait() (the usual way for C++ servers and trainers to shut
// down cleanly) was killed outright when the kernel handed the signal to the flusher instead.
TEST(Recorder, AJobThatTakesItsSignalsWithSigwaitStillGetsThem) {
  std::string dir = FreshDir("sigwait");
  int status = RunInChild([&] {
    StartOptions options;
    options.node_dir = dir;
    if (!Start(options).ok()) return 1;
    if (!BlockedSignalsOfRunningFlusher()) return 2;
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
    kill(getpid(), SIGTERM);
    int received = 0;
    if (sigwait(&term, &received) != 0 || received != SIGTERM) return 3;
    Stop();
    return 0;
  });
  ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status) << " it was waiting for";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no start; 2: no thread named stepscope-flush; 3: sigwait failed";
}

TEST(Recorder, TheFlusherBlocksTheJobsSignalsButNotFaults) {
  std::string dir = FreshDir("signals");
  int status = RunInChild([&] {
    StartOptions options;
    options.node_dir = dir;
    if (!Start(options).ok()) return 1;
    std::optional<uint64_t> blocked = BlockedSignalsOfRunningFlusher();
    Stop();
    if (!blocked) return 2;
    for (int job_signal : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD}) {
      if ((*blocked & SignalBit(job_signal)) == 0) return 10 + job_signal;
    }
    // A crash in the flusher must reach the job's crash handler (a blocked fault kills outright).
    for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
      if ((*blocked & SignalBit(fault)) != 0) return 100 + fault;
    }
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no start; 2: no thread named stepscope-flush; 10+n: signal n reaches the "
                                       "flusher; 100+n: fault n is blocked there";
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
