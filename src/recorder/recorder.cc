#include "recorder/recorder.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "base/file_system.h"
#include "recorder/string_interner.h"
#include "store/stream_writer.h"

extern "C" {
// The one flag behind stepscope_enabled_fast(): 1 while this process records.
STEPSCOPE_EXPORT int stepscope_internal_enabled = 0;
}

namespace stepscope::recorder {

thread_local ThreadBuffer* t_thread_buffer __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

constexpr uint64_t kClaimBackoffNs = 1'000'000;     // retry claiming 1 ms after a failure
// An invariant TSC drifts by parts per million against CLOCK_MONOTONIC at most, so a pair every
// 10 s keeps conversion error in microseconds (readers interpolate between pairs) while costing
// about 0.2 KiB per minute of run.
constexpr uint64_t kCalibrationIntervalNs = 10'000'000'000;

void SetEnabled(bool on) { __atomic_store_n(&stepscope_internal_enabled, on ? 1 : 0, __ATOMIC_RELAXED); }

// Everything one process's recording owns. Never destroyed while the process lives: threads may
// still hold pointers into its ring after Stop(), and a fork child must not run its destructor
// (its flusher thread does not exist there).
struct Session {
  StartOptions options;
  std::unique_ptr<store::StreamWriter> stream;
  pid_t pid = 0;
  double ticks_per_ns = 1.0;
  uint64_t claim_backoff_ticks = 0;
  std::thread flusher;
  std::mutex flusher_mutex;
  std::condition_variable flusher_wake;
  bool stopping = false;
  bool reported_flush_error = false;
  // Set while the log cannot be written (disk full): the ring then fills because nothing can
  // leave it, and drops are counted against that cause, not against the buffers' size.
  std::atomic<bool> log_write_failing{false};
  std::atomic<uint32_t> sealed_since_flush{0};
};

std::mutex g_lifecycle_mutex;           // Start, Stop, lazy stream creation after fork
Session* g_session = nullptr;           // this process's session (nullptr: none yet)
StartOptions* g_inherited_options = nullptr;  // set in a fork child until its stream exists
bool g_stopped = false;                 // Stop() is final for the process
StringInterner& Interner() {
  static StringInterner* interner = new StringInterner;  // leaked: used until the very end
  return *interner;
}
std::atomic<int64_t> g_auto_step[store::kMaxPhase + 1];
double g_ticks_per_ns = 0;  // measured once per process tree (a fork child inherits it)

uint32_t CurrentTid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

std::string ReadCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

std::string StreamMeta(const Session& session, const ClockPair& anchor, uint64_t realtime_ns) {
  nlohmann::json meta = {
      {"kind", "process"},
      {"pid", static_cast<int64_t>(getpid())},
      {"ppid", static_cast<int64_t>(getppid())},
      {"command", ReadCommandLine()},
      {"format_version", store::kFormatVersion},
      {"tick_source", CurrentTickSource() == TickSource::kTsc ? "tsc" : "monotonic_ns"},
      {"ticks_per_ns", session.ticks_per_ns},
      {"clock_anchor", {{"monotonic_ns", anchor.monotonic_ns}, {"realtime_ns", realtime_ns}}},
      {"block_bytes", session.options.block_bytes},
      {"block_count", session.options.block_count},
  };
  // torchrun and friends identify ranks through the environment; keep them with the stream.
  for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && value[0] != '\0') meta["ranks"][name] = value;
  }
  // The command line and the environment are the job's bytes: invalid UTF-8 is replaced, never a
  // throw (which would abort the training job).
  return meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string StatsJson(Session& session) {
  stepscope_stats stats;
  GetStats(&stats);
  nlohmann::json json = {{"events_recorded", stats.events_recorded},
                         {"events_dropped", stats.events_dropped},
                         {"events_dropped_write_failed",
                          session.stream->ring().header()->dropped_write_failed.load(std::memory_order_relaxed)},
                         {"bytes_written", stats.bytes_written},
                         {"blocks_flushed", stats.blocks_flushed}};
  return json.dump();
}

void FlushOnce(Session& session) {
  auto flushed = session.stream->FlushSealed();
  session.log_write_failing.store(!flushed.ok(), std::memory_order_relaxed);
  if (!flushed.ok() && !session.reported_flush_error) {
    session.reported_flush_error = true;
    std::fprintf(stderr, "stepscope: %s; events stay in the ring until it can be written, then are dropped and counted\n",
                 flushed.status().message().c_str());
  }
}

void FlusherLoop(Session* session) {
  uint64_t next_calibration_ns = MonotonicNowNs() + kCalibrationIntervalNs;
  std::unique_lock lock(session->flusher_mutex);
  while (!session->stopping) {
    session->flusher_wake.wait_for(lock, std::chrono::milliseconds(session->options.flush_interval_ms));
    if (session->stopping) break;
    lock.unlock();
    session->sealed_since_flush.store(0, std::memory_order_relaxed);
    FlushOnce(*session);
    if (MonotonicNowNs() >= next_calibration_ns) {
      // Periodic (ticks, ns) pairs let readers follow any drift of the tick rate.
      (void)session->stream->AppendClockPair(ReadClockPair());
      (void)session->stream->AppendStats(StatsJson(*session));
      next_calibration_ns = MonotonicNowNs() + kCalibrationIntervalNs;
    }
    lock.lock();
  }
}

// Starts the flusher with every asynchronous signal blocked. The kernel hands a signal sent to
// the process (SIGTERM from a scheduler, SIGINT, SIGUSR1, ...) to any one thread that does not
// block it. Taken by the flusher, a signal's handler would run there (a C++ job's), or, for
// Python, only mark the signal for the main thread, which does not wake: a job sleeping in
// time.sleep() would ignore a SIGTERM until the sleep ends. Blocked here, every such signal
// goes to the job's own threads. The new thread inherits this mask, so there is no moment in
// which it could take one. Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP) stay unblocked: a
// crash of the flusher must reach the job's crash handler, and a blocked fault kills outright.
std::thread StartFlusherWithoutJobSignals(Session* session) {
  sigset_t job_signals, previous;
  sigfillset(&job_signals);
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP}) sigdelset(&job_signals, fault);
  pthread_sigmask(SIG_BLOCK, &job_signals, &previous);
  std::thread flusher(FlusherLoop, session);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  // Named before Start() returns, so the job's tools (top -H, py-spy, gdb) can tell it apart.
  pthread_setname_np(flusher.native_handle(), "stepscope-flush");  // 15 characters at most
  return flusher;
}

// Creates this process's stream and flusher. Caller holds g_lifecycle_mutex.
Status CreateSessionLocked(const StartOptions& options) {
  STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(options.node_dir));
  auto session = std::make_unique<Session>();
  session->options = options;
  session->pid = getpid();
  if (g_ticks_per_ns <= 0) g_ticks_per_ns = MeasureTicksPerNs(2'000'000);
  session->ticks_per_ns = g_ticks_per_ns;
  session->claim_backoff_ticks = static_cast<uint64_t>(kClaimBackoffNs * session->ticks_per_ns);
  ClockPair anchor = ReadClockPair();
  uint64_t realtime_ns = RealtimeNowNs();

  std::random_device entropy;
  char name[64];
  std::snprintf(name, sizeof name, "proc-%d-%04x", static_cast<int>(session->pid), entropy() & 0xFFFF);
  store::StreamWriterOptions stream_options;
  stream_options.directory = options.node_dir;
  stream_options.name = name;
  stream_options.block_bytes = options.block_bytes;
  stream_options.block_count = options.block_count;
  stream_options.meta_json = StreamMeta(*session, anchor, realtime_ns);
  stream_options.clock_anchor = anchor;
  auto stream = store::StreamWriter::Create(stream_options);
  if (!stream.ok()) return stream.status().WithContext("stepscope cannot record into '" + options.node_dir + "'");
  session->stream = std::move(*stream);
  STEPSCOPE_RETURN_IF_ERROR(Interner().EmitAll(session->stream.get()));
  session->flusher = StartFlusherWithoutJobSignals(session.get());
  g_session = session.release();
  return OkStatus();
}

void PrepareFork() {
  g_lifecycle_mutex.lock();
  Interner().LockForFork();
}

void ParentAfterFork() {
  Interner().UnlockAfterFork();
  g_lifecycle_mutex.unlock();
}

// Runs in the only thread of a new child. The parent's session (its ring, its log, its flusher
// thread that does not exist here) is abandoned, not destroyed; the child's first record
// creates its own stream.
void ChildAfterFork() {
  Interner().UnlockAfterFork();
  new (&g_lifecycle_mutex) std::mutex();
  t_thread_buffer = nullptr;  // the old buffer points into the parent's ring
  if (g_session != nullptr) {
    g_session->stream->AbandonAfterFork();
    g_inherited_options = new StartOptions(g_session->options);
    g_session = nullptr;
  }
}

struct ThreadExitSealer {
  ~ThreadExitSealer() {
    ThreadBuffer* buffer = t_thread_buffer;
    if (buffer == nullptr || buffer->block == nullptr) return;
    Session* session = g_session;
    if (session != nullptr && session->pid == getpid()) session->stream->ring().Seal(buffer->block);
    buffer->block = nullptr;
    buffer->next = buffer->end = nullptr;
  }
};

void RegisterAtExitOnce() {
  static bool registered = [] {
    pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
    std::atexit([] { Stop(); });
    return true;
  }();
  (void)registered;
}

// The session for this process, creating a fork child's stream on first use.
Session* CurrentSession() {
  Session* session = g_session;
  if (session != nullptr) return session;
  std::lock_guard lock(g_lifecycle_mutex);
  if (g_session == nullptr && g_inherited_options != nullptr && !g_stopped) {
    Status status = CreateSessionLocked(*g_inherited_options);
    delete g_inherited_options;
    g_inherited_options = nullptr;
    if (!status.ok()) {
      std::fprintf(stderr, "stepscope: recording is off in process %d: %s\n", static_cast<int>(getpid()),
                   status.message().c_str());
      SetEnabled(false);
    }
  }
  return g_session;
}

}  // namespace

ThreadBuffer* RefillThreadBuffer(uint64_t ticks) {
  Session* session = CurrentSession();
  if (session == nullptr) return nullptr;
  store::RingFile& ring = session->stream->ring();
  ThreadBuffer* buffer = t_thread_buffer;
  if (buffer == nullptr) {
    buffer = new ThreadBuffer;
    buffer->tid = CurrentTid();
    t_thread_buffer = buffer;
    static thread_local ThreadExitSealer sealer;
    (void)&sealer;
  }
  if (buffer->block != nullptr) {
    ring.Seal(buffer->block);
    buffer->block = nullptr;
    buffer->next = buffer->end = buffer->first = nullptr;
    // Wake the flusher early only when a quarter of the ring waits, so a steady stream of
    // events costs one futex wake per many blocks, not one per block.
    if (session->sealed_since_flush.fetch_add(1, std::memory_order_relaxed) + 1 == ring.block_count() / 4) {
      session->flusher_wake.notify_one();
    }
  }
  const auto cause = session->log_write_failing.load(std::memory_order_relaxed) ? store::RingFile::DropCause::kWriteFailed
                                                                               : store::RingFile::DropCause::kBuffersFull;
  if (ticks < buffer->retry_claim_at_ticks) {
    ring.CountDropped(1, cause);
    buffer->dropped_since_block++;
    return nullptr;
  }
  store::BlockHeader* block = ring.Claim(buffer->tid, buffer->dropped_since_block);
  if (block == nullptr) {
    ring.CountDropped(1, cause);
    buffer->dropped_since_block++;
    buffer->retry_claim_at_ticks = ticks + session->claim_backoff_ticks;
    return nullptr;
  }
  buffer->block = block;
  buffer->first = buffer->next = store::RingFile::Records(block);
  buffer->end = buffer->first + block->capacity;
  buffer->dropped_since_block = 0;
  buffer->retry_claim_at_ticks = 0;
  return buffer;
}

Status Start(const StartOptions& options) {
  if (options.node_dir.empty()) return InvalidArgumentError("no run directory given to record into");
  std::lock_guard lock(g_lifecycle_mutex);
  if (g_stopped) return InvalidArgumentError("stepscope was stopped in this process; it records one session per process");
  if (g_session != nullptr) return OkStatus();
  RegisterAtExitOnce();
  STEPSCOPE_RETURN_IF_ERROR(CreateSessionLocked(options));
  SetEnabled(true);
  return OkStatus();
}

void Stop() {
  std::lock_guard lock(g_lifecycle_mutex);
  SetEnabled(false);
  g_stopped = true;
  Session* session = g_session;
  if (session == nullptr || session->pid != getpid()) return;
  {
    std::lock_guard flusher_lock(session->flusher_mutex);
    session->stopping = true;
  }
  session->flusher_wake.notify_one();
  if (session->flusher.joinable()) session->flusher.join();
  FlushOnce(*session);
  (void)session->stream->SnapshotOpenBlocks();
  (void)session->stream->AppendClockPair(ReadClockPair());
  (void)session->stream->AppendStats(StatsJson(*session));
}

void Flush() {
  Session* session = g_session;
  if (session == nullptr || session->pid != getpid()) return;
  FlushOnce(*session);
  (void)session->stream->SnapshotOpenBlocks();
}

uint32_t Intern(std::string_view name) {
  if (!stepscope_enabled_fast()) return 0;
  Session* session = CurrentSession();
  if (session == nullptr) return 0;
  return Interner().Intern(name, session->stream.get());
}

int64_t NextAutoStep(uint8_t phase) {
  if (phase > store::kMaxPhase) phase = static_cast<uint8_t>(store::Phase::kGlobal);
  return g_auto_step[phase].fetch_add(1, std::memory_order_relaxed);
}

void GetStats(stepscope_stats* out) {
  *out = {};
  Session* session = g_session;
  if (session == nullptr || session->pid != getpid()) return;
  store::RingFile& ring = session->stream->ring();
  uint64_t recorded = ring.header()->records_written.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < ring.block_count(); ++i) {
    store::BlockHeader* block = ring.block(i);
    if (block->state.load(std::memory_order_acquire) == static_cast<uint32_t>(store::BlockState::kOpen)) {
      recorded += block->count.load(std::memory_order_relaxed);
    }
  }
  out->events_recorded = recorded;
  out->events_dropped = ring.header()->dropped_events.load(std::memory_order_relaxed);
  out->bytes_written = session->stream->log_bytes();
  out->blocks_flushed = session->stream->blocks_flushed();
}

namespace {
// `stepscope run` hands its child the node directory through the environment; the recorder
// reads it once, when the library is loaded.
__attribute__((constructor)) void StartFromEnvironment() {
  const char* node_dir = std::getenv("STEPSCOPE_NODE_DIR");
  if (node_dir == nullptr || node_dir[0] == '\0') return;
  StartOptions options;
  options.node_dir = node_dir;
  Status status = Start(options);
  if (!status.ok()) std::fprintf(stderr, "stepscope: recording is off: %s\n", status.message().c_str());
}
}  // namespace

}  // namespace stepscope::recorder
