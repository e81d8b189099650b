// Loads the operator profiles of detail windows (docs/detail-windows.md "operators":
// <node>/detail/operators-<pid>-<window>.json.zst) into the analysis model, in the vocabulary
// of shared/RULES.md §0:
//   - host operators ("events")         -> phase "cpu_functions", category "cpu_op", name = the
//     operator, tid = the profiler's thread id, pid = the document's process; args cpu_ns,
//     self_cpu_ns, shapes (JSON text), async, device_ns, self_device_ns when present;
//   - device work ("device_events")     -> phase "gpu_functions-dev:<device>", device = <device>,
//     category "kernel", "gpu_memcpy" or "gpu_memset" (Kineto's names, from the event name).
// Times in the documents are already Unix-epoch ns. The files are listed and read through
// detail_window_files.h, as every reader of detail files does.
//
// Callers: stepscope_loader.cc, at every read of a run (a live run's windows are added as their
// files appear: each is renamed into place whole). Not thread-safe (fills one ModelBuilder).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "analysis/model.h"
#include "base/status.h"

namespace stepscope::analysis {

// Adds one operators document's events to `builder` on `node`. Returns how many events were
// added; a document that cannot be read is an error naming the file.
StatusOr<size_t> AddOperatorsDocument(const std::string& path, uint32_t node, ModelBuilder& builder);

// What has been read of one node's detail directory, kept between reads of a live run.
struct OperatorsDetailCursor {
  std::set<std::string> files_done;  // operators files added, or reported as unreadable
  bool directory_refused = false;    // reported once; the directory is not listed again
};

// Adds the operators documents in <node_directory>/detail that `cursor` has not seen (none is
// fine). A document that cannot be read becomes a model problem (detail_operators_unreadable)
// once, and the others are still loaded; a detail directory that is refused, a symbolic link
// for one (detail_directory_unreadable), is reported once and its windows are all left out.
void AddNewOperatorsDetail(const std::string& node_directory, uint32_t node, OperatorsDetailCursor& cursor,
                           ModelBuilder& builder);

}  // namespace stepscope::analysis
