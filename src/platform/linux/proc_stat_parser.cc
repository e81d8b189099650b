#include "platform/linux/proc_stat_parser.h"

#include <string>

#include "platform/linux/proc_text.h"

namespace stepscope {
namespace {

constexpr size_t kColumns = 8;  // user .. steal
constexpr const char* kColumnNames[kColumns] = {"user",   "nice", "system",  "idle",
                                                "iowait", "irq",  "softirq", "steal"};

Status LineError(int line_number, const std::string& what) {
  return DataLossError("/proc/stat line " + std::to_string(line_number) + ": " + what);
}

}  // namespace

StatusOr<ProcStat> ParseProcStat(std::string_view text) {
  ProcStat stat;
  bool seen_total = false;
  std::vector<std::string_view> fields;
  int line_number = 0;
  while (!text.empty()) {
    bool terminated = false;
    std::string_view line = proc_text::NextLine(text, &terminated);
    ++line_number;
    if (line.substr(0, 3) != "cpu") {
      // The cpu lines come first; nothing we need follows them.
      if (seen_total) break;
      continue;
    }
    if (!terminated) {
      return LineError(line_number, "cut short (no newline): '" + proc_text::Excerpt(line) + "'");
    }
    proc_text::SplitFields(line, fields);
    const std::string_view label = fields[0];
    if (fields.size() < 1 + kColumns) {
      return LineError(line_number, "'" + std::string(proc_text::Excerpt(label)) + "' has " +
                                        std::to_string(fields.size() - 1) +
                                        " columns, expected at least " + std::to_string(kColumns));
    }
    uint64_t values[kColumns];
    for (size_t i = 0; i < kColumns; ++i) {
      std::optional<uint64_t> value = proc_text::ParseUint64(fields[1 + i]);
      if (!value) {
        return LineError(line_number, "column '" + std::string(kColumnNames[i]) + "' of '" +
                                          proc_text::Excerpt(label) + "' is not a number: '" +
                                          proc_text::Excerpt(fields[1 + i]) + "'");
      }
      values[i] = *value;
    }
    CpuJiffies jiffies{values[0], values[1], values[2], values[3],
                       values[4], values[5], values[6], values[7]};
    if (label == "cpu") {
      if (seen_total) return LineError(line_number, "a second 'cpu' total line");
      stat.total = jiffies;
      seen_total = true;
      continue;
    }
    std::optional<uint64_t> core = proc_text::ParseUint64(label.substr(3));
    if (!core || *core > UINT32_MAX) {
      return LineError(line_number, "bad cpu label '" + proc_text::Excerpt(label) + "'");
    }
    stat.cores.push_back({static_cast<uint32_t>(*core), jiffies});
  }
  if (!seen_total) return DataLossError("/proc/stat: no 'cpu' total line");
  return stat;
}

}  // namespace stepscope
