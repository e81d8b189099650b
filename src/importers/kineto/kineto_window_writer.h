// Writes the two files of an operators detail window recorded with Kineto (torch 2.x), from the
// trace torch saved (`kineto_results.save(path)`), off the training thread:
//
//   <node>/detail/operators-<pid>-<window>.pt.trace.json.gz   the trace as torch wrote it, gzip:
//       what Perfetto, chrome://tracing, TensorBoard and Holistic Trace Analysis open
//   <node>/detail/operators-<pid>-<window>.json.zst           the window's detail document:
//       the members the caller gives (window, steps, clock, ...) plus the operators payload
//       (kineto_window_converter.h) and finish_ns (docs/detail-windows.md)
//
// Both appear atomically (temporary name, then rename); the saved trace is deleted afterwards,
// whether or not the window could be written.
//
// Called by stepscope._core.write_kineto_window (python/src/detail_binding.cc) on the detail
// writer thread with the GIL released; touches nothing but the files it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "importers/kineto/kineto_window_converter.h"

namespace stepscope::analysis {

struct KinetoWindowRequest {
  std::string saved_trace_path;  // torch's Chrome trace JSON, plain; removed when done
  std::string trace_path;        // the .pt.trace.json.gz to write
  std::string document_path;     // the .json.zst to write
  // The document's other members as one JSON object ("{...}", json.dumps of a dict).
  std::string document_json;
  KinetoWindowClock clock;
  size_t max_events = 200'000;
  // distributedInfo written into the trace when torch wrote none (torch adds it only when
  // torch.distributed is initialised): HTA reads the rank from it (see WithDistributedInfo).
  int64_t rank = 0;
  int64_t world_size = 1;
  // Time already spent finishing the window before this call (the save), added to finish_ns.
  int64_t elapsed_ns = 0;
};

struct KinetoWindowWritten {
  uint64_t trace_bytes = 0;     // gzip bytes on disk
  uint64_t document_bytes = 0;  // zstd bytes on disk
  int64_t finish_ns = 0;        // elapsed_ns + reading and converting (not compressing, writing)
  int64_t events_total = 0;
  int64_t device_events_total = 0;
};

// Errors name the file and say what to do; nothing is left half-written.
StatusOr<KinetoWindowWritten> WriteKinetoWindow(const KinetoWindowRequest& request);

// The payload's members as JSON text without the enclosing braces: "events":[...],
// "events_total":N, ..., "operators":[...] (and "conversion_problems" when there were any).
std::string OperatorsPayloadJson(const OperatorsWindow& window);

// `trace` (a Chrome trace JSON object) with "distributedInfo": {"rank": R, "world_size": W} as
// its first member, unless `window` says it has one; a bare array is returned unchanged.
std::string WithDistributedInfo(std::string trace, const OperatorsWindow& window, int64_t rank, int64_t world_size);

}  // namespace stepscope::analysis
