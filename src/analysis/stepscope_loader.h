// Loads one of stepscope's own runs (a job directory or one node directory, finished or still
// being written) into the analysis model, in the vocabulary of shared/RULES.md §0.
//
// Callers: run_loader.h (LoadRun), which the CLI, the report, the live rules and the Python
// readers use. Reads files only (run_decoder.h, which pairs the store's records into events,
// and the detail folder); safe to call from any thread, each call builds its own Model.
//
// What goes where:
//   nodes    one per node directory; NodeFacts from its manifest (store/run_manifest.h: the
//            typed manifest itself, instance_type, instance_count, cpu_cores, gpu_count and GPU
//            memory from capabilities.gpu) and, where the manifest says nothing, from the
//            node's samples (cores = distinct cpu/cpu<N> metrics, GPUs = distinct gpu/gpu<N>
//            metrics, GPU memory = the latest gpu/gpu<N>/memory_total_bytes).
//   streams  one StreamFacts per stream: records, drops by cause, bytes (Model::Overhead()).
//   processes  one ProcessFacts per process stream: pid and parent from the stream, rank,
//            local_rank, world_size and group_rank from its meta's "ranks" (the RANK,
//            LOCAL_RANK, WORLD_SIZE, GROUP_RANK variables the recorder found in its environment;
//            -1 where absent or not a non-negative integer).
//   samples  SystemSeries keyed through vocabulary.h (SeriesKeyForMetric); times Unix ns.
//   events   spans, instants and counters become FrameworkEvents with phase
//            PhaseForEventName(name), pid of the recording process, tid, args converted (a
//            counter's value is a double arg "value"); steps become spans with phase and name
//            "Step:ModeKeys.<PHASE>" (Model::StepPhaseOf types it) and `step` = the step number.
//            Operator profiles of detail windows (detail_operators.h), once the node's job ended.
//   problems the decoder's (damaged data), recording losses (recording_losses.h), and detail
//            documents that could not be read.
// Steps that stepscope's own profiling ran in are found by Model::IsDisturbedStep.
//
// A run still being written keeps a follower in the model: Model::Refresh() reads what was
// appended since (run_decoder.h says what is provisional until then).
//
// complete_until_ns (Model::complete_until_ns):
//   - finished run = every node's manifest status is final ("exited", "killed",
//     "failed-to-start"), or no stream has a live writer: last_ns();
//   - live run: the minimum, over streams whose writer is alive, of the stream's latest
//     timestamp. A writer is alive while it holds the flock on its .ring file (the store's own
//     liveness test, store::CompactStream); streams whose process exited are ignored, as are
//     live streams with no data yet. Records reach the ring (MAP_SHARED) the moment they are
//     made, so each live stream is complete up to its latest record, and the minimum is a time
//     up to which every live stream is. It is conservative: a process that records nothing for
//     a while (an idle worker) holds it back. The probe takes a shared flock for microseconds
//     and only on nodes whose manifest is not final; a compaction racing it at that instant
//     leaves the stream uncompacted (listed in streams_still_written), never loses data.
#pragma once

#include <string>

#include "analysis/model.h"
#include "base/status.h"

namespace stepscope::analysis {

// `path`: a job directory (<out>/<job>) or one node directory in it. Errors (no such directory,
// no run in it) are one line naming the path.
StatusOr<Model> LoadStepscopeRun(const std::string& path);

}  // namespace stepscope::analysis
