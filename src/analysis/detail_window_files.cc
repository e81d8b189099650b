#include "analysis/detail_window_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <tuple>

#include "base/file_system.h"
#include "base/json_fields.h"
#include "store/zstd_file.h"

namespace stepscope::analysis {
namespace {

constexpr std::string_view kDocumentSuffix = ".json.zst";

// A pid or window index: decimal digits only (no sign, no spaces), at most 18 of them so that it
// fits an int64_t whatever the digits.
std::optional<int64_t> ParseIndex(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::string BaseName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Why `directory` (lstat'ed as `st`) is not listed, for a detail directory that exists.
Status RefusedDirectoryError(const std::string& directory, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) {
    return InvalidArgumentError("'" + directory + "' is a symbolic link, which stepscope does not follow (a run is " +
                                "read only through its own files); its detail windows are not read: replace the " +
                                "link with the directory itself");
  }
  return InvalidArgumentError("'" + directory + "' is not a directory; its detail windows are not read (remove it, " +
                              "or put the detail directory back)");
}

// The per-kind figures of `stepscope info --json`'s `summary` (docs/detail-windows.md).
nlohmann::json KindSummary(const std::string& kind, const nlohmann::json& doc) {
  auto array_size = [&](const char* key) -> size_t {
    const nlohmann::json* field = JsonField(doc, key);
    return field != nullptr && field->is_array() ? field->size() : 0;
  };
  nlohmann::json summary = nlohmann::json::object();
  if (kind == "operators") {
    summary["profiler"] = JsonString(doc, "profiler");
    summary["events"] = JsonInt(doc, "events_total", 0);
    summary["events_capped"] = JsonBool(doc, "events_capped", false);
    summary["device_events"] = JsonInt(doc, "device_events_total", 0);
    summary["operators"] = array_size("operators");
  } else if (kind == "python") {
    summary["profiler"] = JsonString(doc, "profiler");
    if (summary["profiler"] == "sampling") {
      summary["samples"] = JsonInt(doc, "samples", 0);
    } else {
      nlohmann::json timers = nlohmann::json::array();
      if (const nlohmann::json* profiles = JsonField(doc, "profiles"); profiles != nullptr && profiles->is_array()) {
        for (const nlohmann::json& profile : *profiles) timers.push_back(JsonString(profile, "timer"));
      }
      summary["profiles"] = timers.size();
      summary["timers"] = std::move(timers);
    }
  } else if (kind == "dataloader") {
    summary["batches"] = JsonInt(doc, "batches_total", 0);
    summary["workers"] = array_size("workers");
  } else if (kind == "gpu") {
    // Its records are in the process's GPU stream; the document says the tracer's modes.
    summary["run_mode"] = JsonString(JsonObject(doc, "gpu_tracing"), "run_mode");
  }
  return summary;
}

}  // namespace

std::optional<DetailFileName> ParseDetailFileName(std::string_view name) {
  if (name.size() <= kDocumentSuffix.size() || !name.ends_with(kDocumentSuffix)) return std::nullopt;
  const std::string_view stem = name.substr(0, name.size() - kDocumentSuffix.size());
  const size_t last = stem.rfind('-');
  if (last == std::string_view::npos || last == 0) return std::nullopt;
  const size_t middle = stem.rfind('-', last - 1);
  if (middle == std::string_view::npos || middle == 0) return std::nullopt;
  const std::string_view kind = stem.substr(0, middle);
  const std::optional<int64_t> pid = ParseIndex(stem.substr(middle + 1, last - middle - 1));
  const std::optional<int64_t> window = ParseIndex(stem.substr(last + 1));
  if (kind.front() == '.' || !pid || !window) return std::nullopt;
  return DetailFileName{std::string(kind), *pid, *window};
}

std::string DetailWindowFileName(std::string_view kind, int64_t pid, int64_t window) {
  return std::string(kind) + "-" + std::to_string(pid) + "-" + std::to_string(window) + std::string(kDocumentSuffix);
}

StatusOr<std::vector<DetailWindowFile>> ListDetailWindowFiles(const store::RunNode& node) {
  const std::string directory = node.path + "/" + kDetailDirectoryName;
  struct stat st;
  if (lstat(directory.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::vector<DetailWindowFile>{};  // no window ran on this node
    return ErrnoError("look at '" + directory + "'", errno);
  }
  if (!S_ISDIR(st.st_mode)) return RefusedDirectoryError(directory, st);
  // O_NOFOLLOW: the directory cannot be swapped for a link between the lstat and the listing.
  const int fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if ((err == ELOOP || err == ENOTDIR) && lstat(directory.c_str(), &st) == 0) {
      return RefusedDirectoryError(directory, st);
    }
    return ErrnoError("list '" + directory + "'", err);
  }
  DIR* listing = fdopendir(fd);
  if (listing == nullptr) {
    const int err = errno;
    close(fd);
    return ErrnoError("list '" + directory + "'", err);
  }
  const std::string relative = BaseName(node.path) + "/" + kDetailDirectoryName + "/";
  std::vector<DetailWindowFile> windows;
  while (const dirent* entry = readdir(listing)) {
    std::optional<DetailFileName> name = ParseDetailFileName(entry->d_name);
    if (!name) continue;
    DetailWindowFile window;
    window.node = node.name;
    window.path = directory + "/" + entry->d_name;
    window.file = relative + entry->d_name;
    window.kind = std::move(name->kind);
    window.pid = name->pid;
    window.window = name->window;
    struct stat file;
    window.bytes = fstatat(fd, entry->d_name, &file, AT_SYMLINK_NOFOLLOW) == 0 ? static_cast<uint64_t>(file.st_size) : 0;
    windows.push_back(std::move(window));
  }
  closedir(listing);  // closes fd
  std::sort(windows.begin(), windows.end(), [](const DetailWindowFile& a, const DetailWindowFile& b) {
    return std::tie(a.kind, a.pid, a.window) < std::tie(b.kind, b.pid, b.window);
  });
  return windows;
}

StatusOr<std::string> ReadDetailFile(const std::string& path) {
  return store::ReadZstdFile(path, Symlinks::kRefuse, kMaxDetailDocumentBytes);
}

StatusOr<nlohmann::json> ReadDetailDocument(const std::string& path) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadDetailFile(path));
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return DataLossError("'" + path + "' does not hold a JSON object");
  const int64_t version = JsonInt(doc, "format_version", kDetailFormatVersion);
  if (version > kDetailFormatVersion) {
    return UnimplementedError("'" + path + "' has format_version " + std::to_string(version) + "; this stepscope reads " +
                              "detail documents up to version " + std::to_string(kDetailFormatVersion) +
                              " (read it with the stepscope that recorded the run)");
  }
  return doc;
}

void DescribeDetailWindow(const nlohmann::json& document, DetailWindowFile& window) {
  window.kind = JsonString(document, "kind", window.kind);
  window.pid = JsonInt(document, "pid", window.pid);
  if (const nlohmann::json* described = JsonField(document, "window")) {
    window.window = JsonInt(*described, "index", window.window);
  }
  const nlohmann::json* steps = JsonField(document, "steps");
  if (steps != nullptr && steps->is_array() && steps->size() == 2 && (*steps)[0].is_number_integer() &&
      (*steps)[1].is_number_integer()) {
    window.has_steps = true;
    window.first_step = (*steps)[0].get<int64_t>();
    window.last_step = (*steps)[1].get<int64_t>();
  }
  window.step_phase = JsonString(document, "step_phase");
  window.start_ns = JsonInt(document, "start_ns", 0);
  window.end_ns = JsonInt(document, "end_ns", 0);
  window.complete = JsonBool(document, "complete", false);
  window.summary = KindSummary(window.kind, document);
}

std::vector<DetailWindowFile> ReadDetailWindows(const std::vector<store::RunNode>& nodes) {
  std::vector<DetailWindowFile> windows;
  for (const store::RunNode& node : nodes) {
    StatusOr<std::vector<DetailWindowFile>> files = ListDetailWindowFiles(node);
    if (!files.ok()) {
      DetailWindowFile refused;
      refused.node = node.name;
      refused.path = node.path + "/" + kDetailDirectoryName;
      refused.file = BaseName(node.path) + "/" + kDetailDirectoryName;
      refused.error = files.status().message();
      windows.push_back(std::move(refused));
      continue;
    }
    for (DetailWindowFile& window : *files) {
      StatusOr<nlohmann::json> document = ReadDetailDocument(window.path);
      if (document.ok()) {
        DescribeDetailWindow(*document, window);
      } else {
        window.error = document.status().message();
      }
      windows.push_back(std::move(window));
    }
  }
  std::stable_sort(windows.begin(), windows.end(), [](const DetailWindowFile& a, const DetailWindowFile& b) {
    return std::tie(a.node, a.kind, a.pid, a.window) < std::tie(b.node, b.kind, b.pid, b.window);
  });
  return windows;
}

std::vector<DetailWindowFile> ReadDetailWindows(const Model& model) {
  std::vector<store::RunNode> nodes;
  for (const NodeFacts& node : model.nodes()) {
    if (!node.directory.empty()) nodes.push_back({node.name, node.directory});
  }
  return ReadDetailWindows(nodes);
}

}  // namespace stepscope::analysis
