// A synthetic training run for the analysis benchmark (SPEC.md §6: "analysis + report of a 24 h,
// 8-GPU, 500 ms job: <= 10 s, <= 1 GB RAM"), written twice from one seeded generator:
//
//   <out>/stepscope/synthetic/algo-1/   a finished stepscope run written with the real store
//       manifest.json                   writer (StreamWriter: ring -> zstd log frames, then
//       system.log                      CompactStream, as `stepscope run` leaves it); the system
//       train-<pid>.log                 stream holds every metric the sampler writes (names as
//                                       docs/formats.md), the process stream the steps
//   or, with nodes > 1, node0/ ... node<N-1>/ instead of algo-1/, each with its own manifest
//   (nodes_expected, node_rank), system stream and clock_sync.json; with nodes x ranks_per_node
//   > 1, one train-<pid>.log per rank, its meta carrying torchrun's RANK, LOCAL_RANK, WORLD_SIZE
//   and GROUP_RANK as the recorder copies them
//   <out>/sagemaker/                    its SageMaker Debugger twin (shared/FORMATS.md §1):
//       system/incremental/<YYYYMMDDHH>/<epoch s>.algo-1.json   JSON lines, one file per minute
//       framework/pevents/<YYYYMMDDHH>/<ts_us>_algo-1_pythontimeline.json   one trace per hour
//
// What is in it: diurnal, noisy CPU and GPU utilisation; a 10-minute low-GPU stretch every 3 h;
// GPU 3's memory growing slowly all run long; ~4 TRAIN steps/s (DataLoaderIter, Forward,
// Backward, OptimizerStep spans) with an EVAL pass every 2,000 steps; a DataLoaderIterInitialize
// instant with loader args at the start of every pass; a slow step (slow data or a slow
// backward) every ~1,000 steps. Deterministic: the same options give byte-identical files.
//
// Several ranks train data-parallel and synchronously: every rank runs the same steps, each step
// starting up to 100 us late on a rank (the skew a collective leaves). Node k's clock reads
// k x 2 ms ahead of node 0's, the reference; its clock_sync.json records the offset, so the
// loader's alignment puts every rank's steps back together. The SageMaker twin is node 0's
// first rank alone.
//
// Callers: benchmarks/analysis_benchmark.cc, benchmarks/make_synthetic_run.cc and the tests,
// which make small runs through the options. Single-threaded.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace stepscope::benchmarks {

struct SyntheticRunOptions {
  std::string out_dir;               // created if missing; must not hold an earlier run
  int64_t duration_s = 24 * 3600;
  int32_t cpu_cores = 32;
  int32_t gpus = 8;
  int64_t poll_interval_ms = 500;
  double train_steps_per_s = 4.0;
  int64_t start_unix_s = 1767571200;  // 2026-01-05 00:00:00 UTC
  uint64_t seed = 1;
  int32_t nodes = 1;           // 1: one node named algo-1, no clock alignment
  int32_t ranks_per_node = 1;  // training processes per node; more than one job-wide: torchrun ranks
  bool write_stepscope = true;
  bool write_sagemaker = true;
};

struct SyntheticRunSummary {
  std::string stepscope_dir;   // <out>/stepscope/synthetic (the job directory), "" when not written
  std::string sagemaker_dir;   // <out>/sagemaker, "" when not written
  int64_t polls = 0;           // of one node
  int64_t samples = 0;         // system samples in the stepscope run, all nodes
  int64_t sagemaker_records = 0;  // system records in the twin (SageMaker has fewer metrics)
  int64_t train_steps = 0;     // of one rank: every rank runs the same steps
  int64_t eval_steps = 0;
  int64_t events = 0;          // framework events: steps, spans, instants, all ranks
  int64_t slow_steps = 0;      // of one rank
  uint64_t stepscope_bytes = 0;  // at rest, all files
  uint64_t sagemaker_bytes = 0;
};

// Writes the run(s) under options.out_dir. Errors name the file that could not be written.
StatusOr<SyntheticRunSummary> WriteSyntheticRun(const SyntheticRunOptions& options);

}  // namespace stepscope::benchmarks
