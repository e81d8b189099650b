// What a stepscope run lost while it was recorded, as typed problems (problem.h): events the
// recorder dropped, by cause, and stream logs that are missing or were never written.
//
// Caller: the stepscope loader (stepscope_loader.h), once per run, after the store was read.
// The store counts (store::StreamInfo); this turns the counts into problems with names that
// scripts can key on:
//   events_dropped_buffers_full   records dropped while every ring block was full
//   events_dropped_write_failed   records dropped because the log could not be written
//   process_log_unwritten         a stream that holds nothing: its process could not write it
//   missing_process_log           a stream the launcher listed in the manifest is gone
//   missing_system_log            a node whose launcher ran holds no system stream
#pragma once

#include "analysis/model.h"
#include "store/run_reader.h"

namespace stepscope::analysis {

void AddRecordingLosses(const store::RunReader& run, ModelBuilder& builder);

}  // namespace stepscope::analysis
