#include "launcher/control_watcher.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "base/duration.h"
#include "base/file_system.h"
#include "launcher/control_file.h"
#include "launcher/detail_window.h"
#include "launcher/run_config.h"

namespace stepscope::launcher {
namespace {

// Coarse file systems (NFS, some FUSE) keep whole-second mtimes: a file created within the
// same second as our last listing would leave the mtime unchanged.
constexpr int64_t kMtimeGranularityNs = 1'000'000'000;

}  // namespace

ControlWatcher::ControlWatcher(std::string node_dir, int64_t current_interval_ns, IntervalSetter set_interval,
                               Recorder record, int64_t poll_interval_ns, WaitClock* clock)
    : control_dir_(std::move(node_dir) + "/control"),
      interval_ns_(current_interval_ns),
      set_interval_(std::move(set_interval)),
      record_(std::move(record)),
      poll_interval_ns_(poll_interval_ns),
      clock_(clock) {}

ControlWatcher::~ControlWatcher() { Stop(); }

Status ControlWatcher::Start() {
  STEPSCOPE_RETURN_IF_ERROR(CreateDirectories(control_dir_));
  if (thread_.joinable()) return InternalError("the control watcher is already running");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = false;
  }
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

void ControlWatcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ControlWatcher::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_requested_) {
    lock.unlock();
    PollOnce();
    lock.lock();
    clock_->WaitUntil(lock, wake_, clock_->MonotonicNs() + poll_interval_ns_, [this] { return stop_requested_; });
  }
}

void ControlWatcher::PollOnce() {
  struct stat st;
  if (stat(control_dir_.c_str(), &st) != 0) return;  // removed by hand: nothing to apply
  const int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  // A whole-second mtime marks a coarse file system (a fine one lands on .000000000 once in 10^9);
  // there an unchanged mtime close to our last listing may hide a newer file.
  const bool coarse = mtime_ns % kMtimeGranularityNs == 0;
  if (mtime_ns == seen_mtime_ns_ && !(coarse && mtime_ns >= listed_at_ns_ - kMtimeGranularityNs)) return;
  seen_mtime_ns_ = mtime_ns;
  listed_at_ns_ = clock_->RealtimeNs();
  ++listings_;

  LocalFileSystem fs;
  auto names = fs.ListDirectory(control_dir_);
  if (!names.ok()) return;
  std::vector<int64_t> fresh;
  for (const std::string& name : *names) {
    std::optional<int64_t> sequence = ControlSequenceOfName(name);
    if (sequence && *sequence > last_sequence_) fresh.push_back(*sequence);
  }
  std::sort(fresh.begin(), fresh.end());
  for (int64_t sequence : fresh) {
    nlohmann::json entry = Apply(sequence, control_dir_ + "/" + std::to_string(sequence) + ".json");
    last_sequence_ = sequence;
    if (entry.contains("error")) {
      std::fprintf(stderr, "stepscope: control file %lld not applied: %s\n", static_cast<long long>(sequence),
                   entry["error"].get<std::string>().c_str());
    }
    if (record_) record_(entry);
  }
}

nlohmann::json ControlWatcher::Apply(int64_t sequence, const std::string& path) {
  nlohmann::json entry = {{"sequence", sequence}, {"time_ns", nullptr}, {"changes", nlohmann::json::object()}};
  auto fail = [&](const std::string& message) {
    entry["applied_at_ns"] = clock_->RealtimeNs();
    entry["error"] = "'" + path + "': " + message + "; write control files with `stepscope ctl`";
    return entry;
  };
  auto text = ReadRegularFile(path, Symlinks::kRefuse);  // a FIFO here must not stall the watcher
  if (!text.ok()) return fail(text.status().message());
  auto body = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return fail("not a JSON object");
  auto field = [&](const char* key) -> const nlohmann::json* {
    auto it = body.find(key);
    return it == body.end() || it->is_null() ? nullptr : &*it;
  };
  const nlohmann::json* file_sequence = field("sequence");
  if (file_sequence == nullptr || !file_sequence->is_number_integer() || file_sequence->get<int64_t>() != sequence) {
    return fail("its sequence does not match its name");
  }
  if (const nlohmann::json* time_ns = field("time_ns"); time_ns != nullptr && time_ns->is_number_integer()) {
    entry["time_ns"] = *time_ns;
  }
  std::optional<int64_t> interval_ns;
  if (const nlohmann::json* interval = field("interval_ns")) {
    if (!interval->is_number_integer() || interval->get<int64_t>() < kMinIntervalNs ||
        interval->get<int64_t>() > kMaxIntervalNs) {
      return fail("interval_ns must be a whole number of ns from 10ms to 60s");
    }
    interval_ns = interval->get<int64_t>();
  }
  nlohmann::json detail;
  if (const nlohmann::json* windows = field("detail")) {
    auto parsed = DetailWindowsFromJson(*windows, "detail");
    if (!parsed.ok()) return fail(parsed.status().message());
    detail = DetailWindowsToJson(*parsed);
  }
  if (interval_ns) {
    Status status = set_interval_ ? set_interval_(*interval_ns) : OkStatus();
    if (!status.ok()) return fail("interval " + FormatDurationNs(*interval_ns) + " refused: " + status.message());
    entry["changes"]["previous_interval_ns"] = interval_ns_;
    entry["changes"]["interval_ns"] = *interval_ns;
    interval_ns_ = *interval_ns;
  }
  if (!detail.is_null()) entry["changes"]["detail"] = detail;
  entry["applied_at_ns"] = clock_->RealtimeNs();
  return entry;
}

}  // namespace stepscope::launcher
