// Builds the process tree of a job (a root pid and all its descendants) from the stat lines of
// every process on the host. Called by sampler/process_tree_source.cc once per poll, and by
// anything else that needs "the job's processes" (DataLoader workers, torchrun children).
//
// Threading: pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "platform/linux/pid_stat_parser.h"

namespace stepscope {

// The root and its descendants among `processes`: root first, then breadth first, children
// in ascending pid order. Empty when the root is not among them. A process whose parent exited
// was re-parented by the kernel (to init or a subreaper) and is no longer a descendant.
// Duplicate pids and parent cycles (impossible from a real /proc, possible in hostile input)
// are visited once.
std::vector<PidStat> BuildProcessTree(int32_t root_pid, std::span<const PidStat> processes);

// The same over unparsed /proc/<pid>/stat texts. The first text that does not parse fails the
// whole call with ParsePidStat's error, prefixed with its index in `stat_texts`.
StatusOr<std::vector<PidStat>> BuildProcessTreeFromStatTexts(
    int32_t root_pid, std::span<const std::string_view> stat_texts);

}  // namespace stepscope
