#include "platform/linux/process_tree.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>

namespace stepscope {

std::vector<PidStat> BuildProcessTree(int32_t root_pid, std::span<const PidStat> processes) {
  // (ppid, index) sorted by ppid then pid: every process's children are one contiguous run,
  // found by binary search, already in pid order.
  std::vector<std::pair<int32_t, size_t>> by_parent;
  by_parent.reserve(processes.size());
  const PidStat* root = nullptr;
  for (size_t i = 0; i < processes.size(); ++i) {
    by_parent.emplace_back(processes[i].ppid, i);
    if (processes[i].pid == root_pid && root == nullptr) root = &processes[i];
  }
  std::vector<PidStat> tree;
  if (root == nullptr) return tree;
  std::sort(by_parent.begin(), by_parent.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first
                              : processes[a.second].pid < processes[b.second].pid;
  });

  std::unordered_set<int32_t> visited{root_pid};
  tree.push_back(*root);
  for (size_t next = 0; next < tree.size(); ++next) {
    int32_t parent = tree[next].pid;
    auto it = std::lower_bound(by_parent.begin(), by_parent.end(), parent,
                               [](const auto& entry, int32_t pid) { return entry.first < pid; });
    for (; it != by_parent.end() && it->first == parent; ++it) {
      const PidStat& child = processes[it->second];
      if (visited.insert(child.pid).second) tree.push_back(child);
    }
  }
  return tree;
}

StatusOr<std::vector<PidStat>> BuildProcessTreeFromStatTexts(
    int32_t root_pid, std::span<const std::string_view> stat_texts) {
  std::vector<PidStat> processes;
  processes.reserve(stat_texts.size());
  for (size_t i = 0; i < stat_texts.size(); ++i) {
    StatusOr<PidStat> stat = ParsePidStat(stat_texts[i]);
    if (!stat.ok()) return stat.status().WithContext("stat text #" + std::to_string(i));
    processes.push_back(std::move(stat).value());
  }
  return BuildProcessTree(root_pid, processes);
}

}  // namespace stepscope
