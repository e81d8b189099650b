#include "analysis/job_nodes.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/rank_variables.h"
#include "base/json_fields.h"
#include "store/run_directory.h"
#include "store/run_manifest.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kProblemNames[] = {"node_never_started", "ranks_missing", "node_stopped_early",
                                              "node_clock_unaligned"};
// A node whose data ends this long before the others' is lost, not merely slower to stop: the
// launcher samples at least every few seconds and its job's processes flush within seconds.
constexpr int64_t kStoppedEarlyNs = 10'000'000'000;
// An alignment looser than this makes cross-node comparisons of short steps doubtful.
constexpr int64_t kLooseAlignmentNs = 5'000'000;

std::string Utc(int64_t unix_ns) {
  const time_t seconds = static_cast<time_t>(unix_ns / 1'000'000'000);
  tm utc;
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

std::string Seconds(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

std::string Milliseconds(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) / 1e6);
  return text;
}

// "1", "1 and 3", "1, 2 and 5"; runs of more than two as "4-7".
std::string NumberList(const std::vector<int32_t>& numbers) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    if (j >= i + 2) {
      parts.push_back(std::to_string(numbers[i]) + "-" + std::to_string(numbers[j]));
    } else {
      for (size_t k = i; k <= j; ++k) parts.push_back(std::to_string(numbers[k]));
    }
    i = j + 1;
  }
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return text;
}

// The launched nodes of the job the loaded nodes belong to, read from the job directory: a run
// loaded from one node's directory (its node report) sees one node, and the others are not
// missing for that.
std::vector<store::RunManifest> JobManifests(const std::vector<const NodeFacts*>& launched) {
  std::vector<store::RunManifest> manifests;
  const std::string& directory = launched.front()->directory;
  const size_t slash = directory.rfind('/');
  auto job = store::FindRunNodes(slash == std::string::npos ? "." : directory.substr(0, slash));
  if (job.ok()) {
    for (const store::RunNode& node : job->nodes) {
      if (auto manifest = store::ReadRunManifest(node.path); manifest.ok()) manifests.push_back(std::move(*manifest));
    }
  }
  if (manifests.size() < launched.size()) {  // the directory could not be read: what was loaded
    manifests.clear();
    for (const NodeFacts* node : launched) manifests.push_back(node->manifest);
  }
  return manifests;
}

void AddNeverStarted(const std::vector<store::RunManifest>& job, ModelBuilder& builder) {
  int32_t expected = 0;
  std::set<int32_t> present;
  for (const store::RunManifest& node : job) {
    expected = std::max(expected, node.nodes_expected);
    if (node.node_rank >= 0) present.insert(node.node_rank);
  }
  if (expected <= static_cast<int32_t>(job.size())) return;
  const int32_t missing = expected - static_cast<int32_t>(job.size());
  std::vector<int32_t> ranks;
  if (present.size() == job.size()) {  // every present node knows its rank
    for (int32_t rank = 0; rank < expected; ++rank) {
      if (present.count(rank) == 0) ranks.push_back(rank);
    }
  }
  const std::string which = ranks.size() == static_cast<size_t>(missing)
                                ? (missing == 1 ? "node rank " : "node ranks ") + NumberList(ranks)
                                : std::to_string(missing) + (missing == 1 ? " node" : " nodes");
  builder.AddProblem("node_never_started", ProblemSeverity::kDataLoss,
                     which + " of the job's " + std::to_string(expected) +
                         " never started under stepscope: no node directory of the job holds " +
                         (missing == 1 ? "its manifest" : "their manifests") +
                         " (the launcher did not run there, failed before its first line, or wrote to another "
                         "--out or --job); the other nodes' data is complete",
                     static_cast<uint64_t>(missing));
}

// `whole_job_loaded`: whether the model holds every node of its job (asked only when ranks are
// missing: the ranks of the job's other nodes are not missing from one node's view).
void AddMissingRanks(const std::vector<StreamFacts>& streams, bool every_node_final,
                     const std::function<bool()>& whole_job_loaded, ModelBuilder& builder) {
  if (!every_node_final) return;  // ranks of a live job may still be starting
  int32_t world = 0;
  std::set<int32_t> seen;
  for (const StreamFacts& stream : streams) {
    if (stream.is_system || stream.meta_json.empty()) continue;
    const nlohmann::json meta = nlohmann::json::parse(stream.meta_json, nullptr, false);
    const nlohmann::json ranks = JsonObject(meta, "ranks");
    const int32_t rank = RankVariable(ranks, "RANK");
    if (rank < 0) continue;
    seen.insert(rank);
    world = std::max(world, RankVariable(ranks, "WORLD_SIZE"));
  }
  std::vector<int32_t> missing;
  for (int32_t rank = 0; rank < world && missing.size() < 100'000; ++rank) {
    if (seen.count(rank) == 0) missing.push_back(rank);
  }
  if (missing.empty() || !whole_job_loaded()) return;
  builder.AddProblem("ranks_missing", ProblemSeverity::kDataLoss,
                     std::string(missing.size() == 1 ? "rank " : "ranks ") + NumberList(missing) + " of " +
                         std::to_string(world) +
                         " recorded nothing: their processes never started, or ran on a node without `stepscope "
                         "run`; every view of the job lacks them",
                     missing.size());
}

// A node is lost when its launcher never finished its manifest and either its system sampler's
// writer is gone (the kernel released its lock on the ring: the launcher died) or its data
// stops long before the others' end (storage where locks do not reach across machines).
void AddStoppedEarly(const std::vector<const NodeFacts*>& launched, const std::vector<StreamFacts>& streams,
                     const std::vector<NodeFacts>& nodes, ModelBuilder& builder) {
  if (launched.size() < 2) return;  // one node's launcher that died is the run's own problem
  int64_t others_end = 0;
  for (const NodeFacts* node : launched) {
    if (store::IsFinal(node->manifest.status)) others_end = std::max(others_end, node->manifest.end_time_ns);
  }
  for (const NodeFacts* node : launched) {
    if (store::IsFinal(node->manifest.status)) continue;
    const uint32_t index = static_cast<uint32_t>(node - nodes.data());
    int64_t last = node->manifest.start_time_ns;
    bool sampler_gone = false;
    for (const StreamFacts& stream : streams) {
      if (stream.node != index) continue;
      if (stream.last_ns != INT64_MIN) last = std::max(last, stream.last_ns);
      if (stream.is_system && stream.writer_gone) sampler_gone = true;
    }
    const bool long_before_the_others = others_end > 0 && last <= others_end - kStoppedEarlyNs;
    if (!sampler_gone && !long_before_the_others) continue;  // still going, or stopping with the others
    const std::string when =
        others_end > last ? ", " + Seconds(others_end - last) + " before the job's other nodes ended" : "";
    builder.AddProblem("node_stopped_early", ProblemSeverity::kDataLoss,
                       "node '" + node->name + "' stopped recording at " + Utc(last) + when +
                           ", and its launcher never finished its manifest: the node was lost then (killed, "
                           "crashed, or cut off from the run's storage); its data up to then is complete and shown");
  }
}

void AddClockProblems(const std::vector<const NodeFacts*>& launched, ModelBuilder& builder) {
  std::string reference;
  for (const NodeFacts* node : launched) {
    if (node->clock.state == ClockAlignmentState::kReference) reference = node->name;
    if (reference.empty() && !node->clock.reference_node.empty()) reference = node->clock.reference_node;
  }
  const bool any_recorded = std::any_of(launched.begin(), launched.end(), [](const NodeFacts* node) {
    return node->clock.state != ClockAlignmentState::kNone;
  });
  if (!any_recorded) {
    builder.AddProblem("node_clock_unaligned", ProblemSeverity::kInfo,
                       "the job's " + std::to_string(launched.size()) +
                           " nodes recorded no clock alignment (measured in torchrun jobs, by each node's local rank 0 "
                           "through the rendezvous store): their events are compared on their own clocks, which "
                           "differ by as much as the machines' time service allows",
                       launched.size());
    return;
  }
  const std::string against = reference.empty() ? "the reference node's" : "node '" + reference + "''s";
  for (const NodeFacts* node : launched) {
    const ClockAlignment& clock = node->clock;
    if (node->clock_late) {
      builder.AddProblem("node_clock_unaligned", ProblemSeverity::kInfo,
                         "node '" + node->name + "' recorded its clock alignment after this view first read it: its "
                             "times here are its own clock's; reload the run to align them");
    } else if (clock.state == ClockAlignmentState::kUnaligned || clock.state == ClockAlignmentState::kNone) {
      const std::string why = clock.state == ClockAlignmentState::kNone
                                  ? "it recorded no exchange (no clock_sync.json: its local rank 0 did not run under "
                                    "stepscope's torch instrumentation)"
                                  : clock.reason;
      builder.AddProblem("node_clock_unaligned", ProblemSeverity::kError,
                         "node '" + node->name + "''s clock is not aligned with " + against + ": " + why +
                             "; its events are placed by its own clock, which may differ from the others' by as much "
                             "as the machines' time service allows");
    } else if (clock.state == ClockAlignmentState::kAligned && clock.uncertainty_ns > kLooseAlignmentNs) {
      builder.AddProblem("node_clock_unaligned", ProblemSeverity::kInfo,
                         "node '" + node->name + "''s clock is aligned with " + against + " only within ±" +
                             Milliseconds(clock.uncertainty_ns) + " (drift " + Milliseconds(clock.drift_ns) +
                             " over the job): compare its events with other nodes' at that precision");
    }
  }
}

}  // namespace

bool IsJobNodeProblem(std::string_view name) {
  return std::find(std::begin(kProblemNames), std::end(kProblemNames), name) != std::end(kProblemNames);
}

void AddJobNodeProblems(const std::vector<NodeFacts>& nodes, const std::vector<StreamFacts>& streams,
                        ModelBuilder& builder) {
  std::vector<const NodeFacts*> launched;  // nodes with a launcher's manifest: stepscope runs
  for (const NodeFacts& node : nodes) {
    if (node.has_manifest) launched.push_back(&node);
  }
  if (launched.empty()) return;
  const bool every_node_final = std::all_of(launched.begin(), launched.end(), [](const NodeFacts* node) {
    return store::IsFinal(node->manifest.status);
  });
  // The job directory is read only when the loaded nodes say some are missing, so the refreshes
  // of a live job cost no extra reads.
  std::optional<std::vector<store::RunManifest>> job;
  auto whole_job = [&]() -> const std::vector<store::RunManifest>& {
    if (!job) job = JobManifests(launched);
    return *job;
  };
  int32_t expected = 0;
  for (const NodeFacts* node : launched) expected = std::max(expected, node->manifest.nodes_expected);
  if (expected > static_cast<int32_t>(launched.size())) AddNeverStarted(whole_job(), builder);
  AddMissingRanks(streams, every_node_final, [&] { return whole_job().size() == launched.size(); }, builder);
  AddStoppedEarly(launched, streams, nodes, builder);
  if (launched.size() > 1) AddClockProblems(launched, builder);
}

}  // namespace stepscope::analysis
