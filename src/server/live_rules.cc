#include "server/live_rules.h"

#include <sys/stat.h>

#include <exception>

#include "report/report_model.h"

namespace stepscope::server {
namespace {

constexpr const char* kFromFinishedFile = "rules.json";
constexpr const char* kFollowedLive = "live";
constexpr const char* kEvaluatedOnce = "evaluated";

}  // namespace

LiveRules::LiveRules(std::string rules_json_path, const std::vector<rules::InstanceType>* catalog)
    : rules_json_path_(std::move(rules_json_path)), catalog_(catalog) {}

std::optional<nlohmann::json> LiveRules::ChangedFinishedFile() {
  struct stat st;
  FileIdentity now;
  if (stat(rules_json_path_.c_str(), &st) == 0) {
    now.inode = static_cast<uint64_t>(st.st_ino);
    now.size_bytes = static_cast<int64_t>(st.st_size);
    now.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  }
  if (now == file_seen_) return std::nullopt;
  file_seen_ = now;
  if (now.size_bytes < 0) return std::nullopt;  // gone (or never there)
  return report::LoadFinishedRules(rules_json_path_);
}

StatusOr<bool> LiveRules::Update(const analysis::Model& model) {
  if (source_ == kFromFinishedFile) return false;  // the run's own final word
  if (std::optional<nlohmann::json> finished = ChangedFinishedFile()) {
    document_ = std::move(*finished);
    source_ = kFromFinishedFile;
    driver_.reset();
    failure_ = OkStatus();
    return true;
  }
  if (!failure_.ok()) return failure_;
  if (!driver_) {
    auto driver = report::MakeReportRules(catalog_);
    if (!driver.ok()) {
      failure_ = driver.status();
      return failure_;
    }
    driver_ = std::move(*driver);
  }
  if (driver_->finished()) return false;
  const bool growing = model.CanGrow();
  size_t evaluated = 0;
  // The rules are exception-free by design, but the JSON library they use can throw on a
  // programming error. A window some rules saw and others did not would be evaluated twice by
  // the next call, so the evaluation stops instead of going on wrong.
  try {
    if (growing) {
      evaluated = driver_->EvaluateAvailable(model);
    } else {
      driver_->Finish(model);
    }
  } catch (const std::exception& error) {
    failure_ = InternalError(std::string("the dashboard's rule evaluation stopped (a rule failed: ") + error.what() +
                             "); `stepscope rules` on the run writes " + rules_json_path_ +
                             ", which the report then shows");
    return failure_;
  }
  followed_growth_ = followed_growth_ || growing;
  if (growing && evaluated == 0 && !document_.is_null()) return false;
  document_ = driver_->RulesJson();
  source_ = followed_growth_ ? kFollowedLive : kEvaluatedOnce;
  return true;
}

}  // namespace stepscope::server
