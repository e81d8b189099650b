// What an export calls the processes and threads of a run, so a trace viewer's track list reads
// as the job did: which node, which rank, which program, which thread or GPU stream.
//
//   host process   "algo-1 · rank 0 · pid 4211 · python train.py --epochs 2"
//                  "algo-1 · rank 0 · pid 4230 · worker of pid 4211" (a child of a recorded process
//                  running the same program: a DataLoader worker)
//   GPU            "algo-1 · GPU 0"
//   system         "algo-1 · system metrics"
//   thread         Kineto's own name when the trace gave one, "main thread" (tid = pid),
//                  "thread 4215", GPU streams "stream 7" ("context (all streams)" for
//                  context-wide work); overflow tracks add " (overlap N)"
//   Kineto's tracks with text ids ("Spans", "PyTorch Profiler") keep their text.
//
// Programs come from the recorder's stream metadata (stepscope runs) or the trace's process
// names (Kineto imports); SageMaker's files name neither. Callers: the Chrome trace and table
// exporters. Built once per export; reads the model only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "analysis/model.h"
#include "analysis/thread_tracks.h"

namespace stepscope::exporting {

using analysis::LayoutTracks;
using analysis::ThreadKey;
using analysis::TrackLayout;

class TraceNames {
 public:
  explicit TraceNames(const analysis::Model& model);

  std::string HostProcess(uint32_t node, int32_t pid) const;
  std::string Gpu(uint32_t node, int32_t device) const;
  std::string SystemMetrics(uint32_t node) const;
  std::string Thread(const ThreadKey& thread, uint32_t lane) const;

 private:
  std::string NodeName(uint32_t node) const;

  const analysis::Model& model_;
  std::map<std::pair<uint32_t, int32_t>, std::string> program_;  // (node, pid) -> what it ran
  std::map<std::pair<uint32_t, int32_t>, int32_t> parent_;        // (node, pid) -> recorded parent's pid
  std::map<std::pair<uint32_t, std::string>, std::string> kineto_threads_;  // (node, "pid/tid") -> name
  std::map<std::pair<uint32_t, int64_t>, std::string> track_texts_;         // (node, id < 0) -> "Spans"
};

}  // namespace stepscope::exporting
