#include "platform/linux/pid_stat_parser.h"

#include <optional>

#include "platform/linux/proc_text.h"

namespace stepscope {
namespace {

// Positions counted from the first field after "(comm)", i.e. proc(5)'s field number - 3.
constexpr size_t kState = 0, kPpid = 1, kUtime = 11, kStime = 12, kStartTime = 19, kRss = 21;
constexpr size_t kNeededFields = kRss + 1;

Status Error(const std::string& what) { return DataLossError("/proc/<pid>/stat: " + what); }

}  // namespace

StatusOr<PidStat> ParsePidStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Error("no '(comm)' in '" + proc_text::Excerpt(text) + "'");
  }
  PidStat stat;
  std::string_view pid_text = text.substr(0, open);
  while (!pid_text.empty() && pid_text.back() == ' ') pid_text.remove_suffix(1);
  std::optional<int64_t> pid = proc_text::ParseInt64(pid_text);
  if (!pid || *pid <= 0 || *pid > INT32_MAX) {
    return Error("bad pid '" + proc_text::Excerpt(pid_text) + "'");
  }
  stat.pid = static_cast<int32_t>(*pid);
  stat.comm = std::string(text.substr(open + 1, close - open - 1));

  // The fields after the comm are ASCII, space-separated and end with '\n'. A fixed array
  // instead of a vector keeps this allocation-free; only the first kNeededFields are read.
  std::string_view rest = text.substr(close + 1);
  std::string_view fields[kNeededFields];
  size_t count = 0;
  size_t i = 0;
  while (count < kNeededFields && i < rest.size()) {
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\n')) ++i;
    size_t start = i;
    while (i < rest.size() && rest[i] != ' ' && rest[i] != '\n') ++i;
    if (i > start) fields[count++] = rest.substr(start, i - start);
  }
  if (count < kNeededFields) {
    return Error("pid " + std::to_string(stat.pid) + " has " + std::to_string(count) +
                 " fields after the comm, expected at least " + std::to_string(kNeededFields));
  }
  if (fields[kState].size() != 1) {
    return Error("pid " + std::to_string(stat.pid) + ": bad state '" +
                 proc_text::Excerpt(fields[kState]) + "'");
  }
  stat.state = fields[kState][0];

  std::optional<int64_t> ppid = proc_text::ParseInt64(fields[kPpid]);
  std::optional<uint64_t> utime = proc_text::ParseUint64(fields[kUtime]);
  std::optional<uint64_t> stime = proc_text::ParseUint64(fields[kStime]);
  std::optional<uint64_t> start_time = proc_text::ParseUint64(fields[kStartTime]);
  std::optional<uint64_t> rss = proc_text::ParseUint64(fields[kRss]);
  if (!ppid || *ppid < 0 || *ppid > INT32_MAX || !utime || !stime || !start_time || !rss) {
    return Error("pid " + std::to_string(stat.pid) +
                 ": a field among ppid, utime, stime, starttime, rss is not a number");
  }
  stat.ppid = static_cast<int32_t>(*ppid);
  stat.utime_ticks = *utime;
  stat.stime_ticks = *stime;
  stat.start_time_ticks = *start_time;
  stat.rss_pages = *rss;
  return stat;
}

}  // namespace stepscope
