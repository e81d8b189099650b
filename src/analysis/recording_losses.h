// What a stepscope run lost while it was recorded, as typed problems (problem.h): events the
// recorder dropped, by cause, and stream logs that are missing or were never written.
//
// Caller: the stepscope loader (stepscope_loader.h), after each read of the run (a refresh
// replaces the previous read's, since the counts of a live run grow). The store counts
// (StreamFacts); this turns the counts into problems with names that scripts can key on:
//   events_dropped_buffers_full   records dropped while every ring block was full
//   events_dropped_write_failed   records dropped because the log could not be written
//   process_log_unwritten         a stream that holds nothing: its process could not write it
//   missing_process_log           a stream the launcher listed in the manifest is gone
//   missing_system_log            a node whose launcher ran holds no system stream
#pragma once

#include <string_view>
#include <vector>

#include "analysis/model.h"

namespace stepscope::analysis {

// The problem names above: a refresh removes these before adding the new counts.
bool IsRecordingLossProblem(std::string_view name);

void AddRecordingLosses(const std::vector<NodeFacts>& nodes, const std::vector<StreamFacts>& streams,
                        ModelBuilder& builder);

}  // namespace stepscope::analysis
