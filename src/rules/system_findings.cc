#include "rules/system_findings.h"

#include <algorithm>
#include <cstdio>

namespace stepscope::rules {

void FindingLog::Record(const Finding& finding, const std::string& node, int64_t start_ns, int64_t end_ns,
                        const std::string& what) {
  auto [it, inserted] = index_.try_emplace(finding.id, findings_.size());
  if (inserted) findings_.push_back(finding);
  Finding& stored = findings_[it->second];
  std::vector<Evidence> evidence = std::move(stored.evidence);
  stored = finding;
  stored.evidence = std::move(evidence);
  // A window evaluated again (the same start) or the next window (starting where the last range
  // ends) extends the last range instead of adding one.
  if (!stored.evidence.empty() && stored.evidence.back().node == node && start_ns <= stored.evidence.back().end_ns &&
      start_ns >= stored.evidence.back().start_ns) {
    stored.evidence.back().end_ns = std::max(stored.evidence.back().end_ns, end_ns);
    stored.evidence.back().what = what;
    return;
  }
  Evidence item;
  item.node = node;
  item.start_ns = start_ns;
  item.end_ns = end_ns;
  item.what = what;
  stored.evidence.push_back(std::move(item));
  if (stored.evidence.size() > kMaxEvidence) stored.evidence.erase(stored.evidence.begin());
}

std::vector<Finding> FindingLog::findings() const { return findings_; }

std::string FormatNumber(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

}  // namespace stepscope::rules
