#include "export/trace_names.h"

#include <nlohmann/json.hpp>

#include "base/json_fields.h"

namespace stepscope::exporting {
namespace {

constexpr size_t kMaxProgramChars = 60;
constexpr std::string_view kSeparator = " · ";

// "/opt/venv/bin/python train.py --epochs 2" -> "python train.py --epochs 2", on one line (runs
// of whitespace, newlines included, become one space), at most kMaxProgramChars (cut at a
// character boundary of UTF-8, with "…").
std::string ShortProgram(std::string_view raw) {
  // One line: `python -c` scripts carry newlines and indentation.
  std::string collapsed;
  for (char c : raw) {
    const bool blank = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (blank && (collapsed.empty() || collapsed.back() == ' ')) continue;
    collapsed += blank ? ' ' : c;
  }
  while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
  const std::string_view command = collapsed;
  const size_t space = command.find(' ');
  const std::string_view program = command.substr(0, space);
  const size_t slash = program.rfind('/');
  std::string text(slash == std::string_view::npos ? program : program.substr(slash + 1));
  if (space != std::string_view::npos) text += command.substr(space);
  if (text.size() <= kMaxProgramChars) return text;
  size_t cut = kMaxProgramChars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "…";
}

}  // namespace

TraceNames::TraceNames(const analysis::Model& model) : model_(model) {
  std::map<std::pair<uint32_t, int32_t>, std::string> command;
  for (const analysis::StreamFacts& stream : model.streams()) {
    if (stream.is_system) continue;
    const nlohmann::json meta = nlohmann::json::parse(stream.meta_json, nullptr, /*allow_exceptions=*/false);
    const std::string text = JsonString(meta, "command");
    const auto key = std::make_pair(stream.node, static_cast<int32_t>(stream.pid));
    if (!text.empty()) command[key] = text;
    parent_[key] = static_cast<int32_t>(stream.ppid);
  }
  for (const auto& [key, text] : command) {
    // A child running its recorded parent's program is a worker it forked (DataLoader workers).
    auto parent = parent_.find(key);
    const auto parent_key = std::make_pair(key.first, parent != parent_.end() ? parent->second : -1);
    auto parent_command = command.find(parent_key);
    program_[key] = parent_command != command.end() && parent_command->second == text
                        ? "worker of pid " + std::to_string(parent_key.second)
                        : ShortProgram(text);
  }
  // Kineto imports: the trace's own process and thread names (kineto_importer.cc's manifest).
  for (uint32_t node = 0; node < model.nodes().size(); ++node) {
    if (model.nodes()[node].manifest_json.empty()) continue;
    const nlohmann::json manifest =
        nlohmann::json::parse(model.nodes()[node].manifest_json, nullptr, /*allow_exceptions=*/false);
    if (const nlohmann::json* processes = JsonField(manifest, "processes"); processes != nullptr && processes->is_object()) {
      for (const auto& [pid, name] : processes->items()) {
        if (!name.is_string()) continue;
        try {
          program_.emplace(std::make_pair(node, static_cast<int32_t>(std::stoll(pid))), name.get<std::string>());
        } catch (const std::exception&) {
          // A key that is not a pid names nothing we draw.
        }
      }
    }
    if (const nlohmann::json* threads = JsonField(manifest, "threads"); threads != nullptr && threads->is_object()) {
      for (const auto& [key, name] : threads->items()) {
        if (name.is_string()) kineto_threads_[{node, key}] = name.get<std::string>();
      }
    }
    // Kineto's own tracks have text ids ("pid": "Spans"); the importer numbered them below zero.
    if (const nlohmann::json* ids = JsonField(manifest, "string_track_ids"); ids != nullptr && ids->is_object()) {
      for (const auto& [text, id] : ids->items()) {
        if (id.is_number_integer()) track_texts_[{node, id.get<int64_t>()}] = text.empty() ? "unnamed track" : text;
      }
    }
  }
}

std::string TraceNames::NodeName(uint32_t node) const {
  return node < model_.nodes().size() ? model_.nodes()[node].name : "node " + std::to_string(node);
}

std::string TraceNames::HostProcess(uint32_t node, int32_t pid) const {
  std::string name = NodeName(node);
  if (const int32_t rank = model_.RankOf(node, pid); rank >= 0) {
    name += kSeparator;
    name += "rank " + std::to_string(rank);
  }
  name += kSeparator;
  if (auto text = track_texts_.find({node, pid}); pid < 0 && text != track_texts_.end()) return name + text->second;
  name += "pid " + std::to_string(pid);
  if (auto program = program_.find({node, pid}); program != program_.end()) {
    name += kSeparator;
    name += program->second;
  }
  return name;
}

std::string TraceNames::Gpu(uint32_t node, int32_t device) const {
  return NodeName(node) + std::string(kSeparator) + "GPU " + std::to_string(device);
}

std::string TraceNames::SystemMetrics(uint32_t node) const {
  return NodeName(node) + std::string(kSeparator) + "system metrics";
}

std::string TraceNames::Thread(const ThreadKey& thread, uint32_t lane) const {
  std::string name;
  if (thread.device >= 0) {
    // CUPTI's stream for context-wide work (a context synchronization) is (uint32)-1.
    const bool context = thread.tid == -1 || thread.tid == int64_t{UINT32_MAX};
    name = context ? "context (all streams)" : "stream " + std::to_string(thread.tid);
  } else if (auto text = track_texts_.find({thread.node, thread.tid}); thread.tid < 0 && text != track_texts_.end()) {
    name = text->second;
  } else if (auto kineto = kineto_threads_.find({thread.node, std::to_string(thread.pid) + "/" + std::to_string(thread.tid)});
             kineto != kineto_threads_.end()) {
    name = kineto->second;
  } else if (thread.tid == thread.pid) {
    name = "main thread";
  } else {
    name = "thread " + std::to_string(thread.tid);
  }
  if (lane > 0) name += " (overlap " + std::to_string(lane) + ")";
  return name;
}

}  // namespace stepscope::exporting
