// Cost of one annotation begin+end on the recording thread (SPEC §6: <= 25 ns enabled,
// <= 2 ns disabled; STYLE.md §5.6), with baselines measured in the same run.
//
//   recorder_benchmark [google benchmark flags]   time per begin+end pair (one iteration = one pair)
//   recorder_benchmark --callgrind                 fixed work (262144 pairs per function) for
//                                                  callgrind, which gives repeatable counts:
//
//     valgrind --tool=callgrind --callgrind-out-file=cg.out ./recorder_benchmark --callgrind
//     callgrind_annotate --inclusive=yes cg.out | grep Callgrind
//     (instructions per pair = the function's inclusive Ir / 262144)
//
// A process records one session and cannot restart it, so main() runs in two phases: first every
// *Disabled and Baseline benchmark with the recorder never started, then it starts the recorder
// into a temporary directory and runs the *Enabled ones. --benchmark_filter is therefore
// ignored (every other flag applies, --benchmark_format included); with --benchmark_out the
// second phase overwrites the first, so read the console output.
//
// Enabled benchmarks record in batches of kBatchPairs pairs (48 of the default ring's 128
// blocks) and flush the sealed blocks with the timer paused after each batch, as the
// background flusher would between bursts; without that the loop outruns the flusher (tens of
// millions of records per second) and measures the drop path instead. The steady-state costs
// that remain in the timed loop are real: sealing a full block and claiming the next one every
// 1362 records, and the store into the MAP_SHARED ring. Drops are counted and shown.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "recorder/recorder.h"
#include "stepscope/stepscope.h"
#include "stepscope/stepscope.hpp"

namespace {

constexpr int64_t kBatchPairs = 32768;

uint32_t g_name_id = 0;   // interned once the recorder is on
int g_plain_store = 0;    // target of the plain-store baseline

uint64_t DroppedSoFar() {
  stepscope_stats stats;
  stepscope_get_stats(&stats);
  return stats.events_dropped;
}

// Runs `pair` once per iteration, kBatchPairs iterations at a time; `flush` with the timer
// paused between batches.
template <typename Pair>
void RunPairs(benchmark::State& state, Pair pair, bool flush) {
  const uint64_t dropped_before = DroppedSoFar();
  while (state.KeepRunningBatch(kBatchPairs)) {
    for (int64_t i = 0; i < kBatchPairs; ++i) pair();
    if (flush) {
      state.PauseTiming();
      stepscope_flush();
      state.ResumeTiming();
    }
  }
  state.counters["dropped"] = static_cast<double>(DroppedSoFar() - dropped_before);
}

// Baselines: what the loop itself costs.

void BM_Baseline_EmptyLoop(benchmark::State& state) {
  RunPairs(state, [] { benchmark::ClobberMemory(); }, false);
}
BENCHMARK(BM_Baseline_EmptyLoop);

void BM_Baseline_PlainStore(benchmark::State& state) {
  RunPairs(state, [] {
    g_plain_store = 1;
    benchmark::ClobberMemory();
  }, false);
}
BENCHMARK(BM_Baseline_PlainStore);

// Recorder never started: the cost a build with annotations pays when not profiling.

void BM_BeginEnd_Disabled(benchmark::State& state) {
  RunPairs(state, [] {
    stepscope_begin(1);
    stepscope_end(1);
  }, false);
}
BENCHMARK(BM_BeginEnd_Disabled);

void BM_Scope_Disabled(benchmark::State& state) {
  RunPairs(state, [] {
    STEPSCOPE_SCOPE("bench.scope");
    benchmark::ClobberMemory();
  }, false);
}
BENCHMARK(BM_Scope_Disabled);

// Recorder on.

// The C API: two calls, each a TSC read and a 24-byte store into the ring.
void BM_BeginEnd_Enabled(benchmark::State& state) {
  RunPairs(state, [] {
    stepscope_begin(g_name_id);
    stepscope_end(g_name_id);
  }, true);
}
BENCHMARK(BM_BeginEnd_Enabled)->Threads(1)->Threads(2);

// The C++ RAII scope (the annotation C++ users write).
void BM_Scope_Enabled(benchmark::State& state) {
  RunPairs(state, [] {
    STEPSCOPE_SCOPE("bench.scope");
    benchmark::ClobberMemory();
  }, true);
}
BENCHMARK(BM_Scope_Enabled);

// The inline hot path itself, without the C API's call (what an in-tree binding can use).
void BM_InlineRecord_Enabled(benchmark::State& state) {
  using stepscope::store::RecordKind;
  RunPairs(state, [] {
    stepscope::recorder::Record(RecordKind::kBegin, g_name_id, 0, 0);
    stepscope::recorder::Record(RecordKind::kEnd, g_name_id, 0, 0);
  }, true);
}
BENCHMARK(BM_InlineRecord_Enabled);

// Callgrind mode: fixed work in functions whose inclusive cost callgrind reports.

#define STEPSCOPE_CALLGRIND_PAIRS(function, body)             \
  __attribute__((noinline)) void function(int64_t pairs) { \
    for (int64_t i = 0; i < pairs; ++i) {                  \
      body;                                                \
    }                                                      \
  }
STEPSCOPE_CALLGRIND_PAIRS(CallgrindEmptyLoop, benchmark::ClobberMemory())
STEPSCOPE_CALLGRIND_PAIRS(CallgrindBeginEndDisabled, stepscope_begin(1); stepscope_end(1))
STEPSCOPE_CALLGRIND_PAIRS(CallgrindScopeDisabled, STEPSCOPE_SCOPE("cg.scope"); benchmark::ClobberMemory())
STEPSCOPE_CALLGRIND_PAIRS(CallgrindBeginEndEnabled, stepscope_begin(g_name_id); stepscope_end(g_name_id))
STEPSCOPE_CALLGRIND_PAIRS(CallgrindScopeEnabled, STEPSCOPE_SCOPE("cg.scope.on"); benchmark::ClobberMemory())

std::string MakeTempDir() {
  char pattern[] = "/tmp/stepscope-recorder-bench-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return pattern;
}

void StartRecorder(const std::string& dir) {
  stepscope::recorder::StartOptions options;
  options.node_dir = dir + "/node";
  stepscope::Status status = stepscope::recorder::Start(options);
  if (!status.ok()) {
    std::fprintf(stderr, "recorder_benchmark: %s\n", status.message().c_str());
    std::exit(1);
  }
  g_name_id = stepscope::Intern("bench.pair");
}

int CallgrindMain() {
  // Each function runs kRounds x kBatchPairs pairs; enabled rounds are flushed in between
  // (outside the measured functions). Instructions per pair = inclusive Ir / pairs.
  constexpr int kRounds = 8;
  for (int r = 0; r < kRounds; ++r) CallgrindEmptyLoop(kBatchPairs);
  for (int r = 0; r < kRounds; ++r) CallgrindBeginEndDisabled(kBatchPairs);
  for (int r = 0; r < kRounds; ++r) CallgrindScopeDisabled(kBatchPairs);
  const std::string dir = MakeTempDir();
  StartRecorder(dir);
  for (int r = 0; r < kRounds; ++r) {
    CallgrindBeginEndEnabled(kBatchPairs);
    stepscope_flush();
  }
  for (int r = 0; r < kRounds; ++r) {
    CallgrindScopeEnabled(kBatchPairs);
    stepscope_flush();
  }
  const uint64_t dropped = DroppedSoFar();
  stepscope_stop();
  std::printf("callgrind mode: %lld pairs per function, %llu dropped\n", static_cast<long long>(kRounds * kBatchPairs),
              static_cast<unsigned long long>(dropped));
  (void)std::system(("rm -rf '" + dir + "'").c_str());
  return dropped == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--callgrind") == 0) return CallgrindMain();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  // One reporter for both phases (it honours --benchmark_format and --benchmark_color):
  // Google Benchmark 1.7's internal default reporter does not survive a second
  // RunSpecifiedBenchmarks call.
  std::unique_ptr<benchmark::BenchmarkReporter> reporter(benchmark::CreateDefaultDisplayReporter());
  benchmark::RunSpecifiedBenchmarks(reporter.get(), "Baseline|Disabled");

  const std::string dir = MakeTempDir();
  StartRecorder(dir);
  benchmark::RunSpecifiedBenchmarks(reporter.get(), "Enabled");
  stepscope_stats stats;
  stepscope_get_stats(&stats);
  stepscope_stop();
  std::printf("recorder: %llu records, %llu dropped, %llu log bytes\n",
              static_cast<unsigned long long>(stats.events_recorded), static_cast<unsigned long long>(stats.events_dropped),
              static_cast<unsigned long long>(stats.bytes_written));
  (void)std::system(("rm -rf '" + dir + "'").c_str());
  benchmark::Shutdown();
  return 0;
}
