#include "cli/run_info.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "analysis/run_loader.h"
#include "analysis/vocabulary.h"
#include "analysis/run_loader.h"
#include "base/json_fields.h"
#include "cli/run_problems.h"
#include "report/run_info.h"
#include "store/run_directory.h"

namespace stepscope::cli {
namespace {

std::string HumanBytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (1ull << 20)) std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024) std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  else std::snprintf(text, sizeof text, "%" PRIu64 " B", bytes);
  return text;
}

}  // namespace

std::string FormatRunInfo(const nlohmann::json& info) {
  std::ostringstream out;
  out << "job        " << info["job"].get<std::string>() << "\n";
  std::string command;
  for (const auto& arg : info["command"]) command += (command.empty() ? "" : " ") + arg.get<std::string>();
  out << "command    " << command << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "duration   %.1f s\n", info["duration_s"].get<double>());
  out << line;
  std::string ended = info["ended"].is_object() ? info["ended"].value("description", "") : "";
  out << "ended      " << (ended.empty() ? info["status"].get<std::string>() : ended) << "\n";
  for (const auto& node : info["nodes"]) {
    out << "node       " << node["name"].get<std::string>();
    const nlohmann::json capabilities = JsonObject(node, "capabilities");
    if (!capabilities.empty()) {
      const nlohmann::json gpu = JsonObject(capabilities, "gpu");
      out << "  gpu: " << (JsonBool(gpu, "available", false) ? std::to_string(JsonArray(gpu, "gpus").size()) + " GPU(s)" : "none");
      const nlohmann::json cupti = JsonObject(capabilities, "cupti");
      out << "  cupti: " << (JsonBool(cupti, "library_found", false) ? "found" : "absent");
      // Runs recorded before the tracer existed do not say.
      if (const std::string tracing = JsonString(cupti, "tracing"); !tracing.empty()) {
        out << "  gpu tracing: " << tracing;
        if (const std::string why = JsonString(cupti, "tracing_reason"); !why.empty()) out << " (" << why << ")";
      }
      const nlohmann::json perf = JsonObject(capabilities, "perf_counters");
      out << "  perf counters: " << (JsonBool(perf, "available", false) ? "yes" : "no");
      // What is counted where and why not the rest (runs recorded before stepscope counted
      // events say only why hardware counters were missing, when they were).
      if (const std::string why = JsonString(perf, "reason"); !why.empty()) out << "\n           perf: " << why;
    }
    // Jobs of several nodes: where the node's clock sits against the reference node's.
    const nlohmann::json clock = JsonObject(node, "clock");
    if (const std::string description = JsonString(clock, "description"); !description.empty()) {
      out << "\n           clock: " << description;
    }
    if (const std::string url = JsonString(node, "metrics_url"); !url.empty()) {
      out << "\n           Prometheus metrics served on " << url;
    }
    out << "\n";
  }
  const auto& counts = info["counts"];
  out << "events     " << counts["spans"] << " spans, " << counts["instants"] << " instants, " << counts["counters"]
      << " counters";
  if (counts["unfinished"].get<uint64_t>() > 0) out << " (" << counts["unfinished"] << " unfinished)";
  out << "\n";
  out << "steps     ";
  for (const auto& [phase, count] : counts["steps"].items()) out << " " << phase << " " << count;
  out << "\n";
  out << "samples    " << counts["system_samples"] << " system samples over "
      << counts["system_samples_by_metric"].size() << " metrics\n";
  const bool imported = info["source"] != "stepscope";
  if (imported) {
    out << "dropped    not recorded by stepscope (imported from " << info["source"].get<std::string>() << ")\n";
  } else {
    out << "dropped    " << info["dropped_events"] << " events";
    const auto& causes = info["dropped_events_by_cause"];
    if (info["dropped_events"].get<uint64_t>() > 0) {
      out << " (" << causes["buffers_full"] << " while buffers were full, " << causes["write_failed"]
          << " while the log could not be written)";
    }
    out << "\n";
  }
  out << "processes\n";
  for (const auto& p : info["processes"]) {
    // An imported run has no streams: nothing was recorded about drops.
    const std::string dropped = p["dropped_events"].is_number() ? std::to_string(p["dropped_events"].get<uint64_t>()) : "-";
    std::snprintf(line, sizeof line, "  %-8s pid %-7lld %9llu events %7s dropped  %s\n",
                  p["kind"].get<std::string>().c_str(), static_cast<long long>(p["pid"].get<int64_t>()),
                  static_cast<unsigned long long>(p["events"].get<uint64_t>()), dropped.c_str(),
                  p["command"].get<std::string>().substr(0, 60).c_str());
    out << line;
  }
  const auto& bytes = info["bytes_on_disk"];
  if (imported) {
    out << "on disk    " << HumanBytes(bytes["total"]) << " (model file " << HumanBytes(bytes["model_file"])
        << ", metadata " << HumanBytes(bytes["metadata"]) << ")\n";
  } else {
    out << "on disk    " << HumanBytes(bytes["total"]) << " (framework events " << HumanBytes(bytes["framework_events"])
        << ", system samples " << HumanBytes(bytes["system_samples"]) << ", names " << HumanBytes(bytes["string_tables"])
        << ", metadata " << HumanBytes(bytes["metadata"]);
    if (bytes["uncompacted_rings"].get<uint64_t>() > 0) out << ", raw rings " << HumanBytes(bytes["uncompacted_rings"]);
    out << ")\n";
  }
  for (const auto& window : info["detail_windows"]) {
    out << "detail     " << window["kind"].get<std::string>() << " pid " << window["pid"] << " window " << window["window"];
    if (window.contains("error")) {
      out << ": unreadable: " << window["error"].get<std::string>() << "\n";
      continue;
    }
    if (window["steps"].is_array()) {
      out << ", " << window["step_phase"].get<std::string>() << " steps " << window["steps"][0] << "-" << window["steps"][1];
    } else {
      out << ", no steps";
    }
    std::snprintf(line, sizeof line, ", %.3f s", (window["end_ns"].get<int64_t>() - window["start_ns"].get<int64_t>()) / 1e9);
    out << line << (window["complete"].get<bool>() ? "" : " (incomplete)") << ", " << HumanBytes(window["bytes"])
        << "  " << window["file"].get<std::string>() << "\n";
  }
  for (const auto& problem : info["problems"]) {
    const std::string severity = problem["severity"].get<std::string>();
    analysis::Problem typed{problem["name"].get<std::string>(),
                            severity == "data_loss" ? analysis::ProblemSeverity::kDataLoss
                            : severity == "error"   ? analysis::ProblemSeverity::kError
                                                    : analysis::ProblemSeverity::kInfo,
                            problem["count"].get<uint64_t>(), problem["sentence"].get<std::string>()};
    out << "problem    " << analysis::ProblemLine(typed) << "\n";
  }
  return out.str();
}

int InfoCommand(const std::string& run_path, bool json) {
  // A file other than an imported run's model is a run's file passed instead of its directory:
  // the store says so and names the directory (LoadRun would call it a corrupt model file).
  struct stat st;
  const bool model_file = run_path == analysis::kModelFileName ||
                          run_path.ends_with(std::string("/") + analysis::kModelFileName);
  if (stat(run_path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && !model_file) {
    std::fprintf(stderr, "stepscope info: %s\n",
                 store::NotARunDirectoryError(run_path, S_ISREG(st.st_mode)).message().c_str());
    return 1;
  }
  auto model = analysis::LoadRun(run_path);
  if (!model.ok()) {
    std::fprintf(stderr, "stepscope info: %s\n", model.status().message().c_str());
    return 1;
  }
  nlohmann::json info = report::BuildRunInfo(run_path, *model);
  // The text lists every problem itself; beside JSON, the data losses still reach a person.
  if (json) PrintRunProblems(model->problems(), "stepscope info: ", run_path);
  std::string text = json ? info.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                          : FormatRunInfo(info);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace stepscope::cli
