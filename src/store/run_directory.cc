#include "store/run_directory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/file_system.h"
#include "store/format.h"
#include "store/log_file.h"
#include "store/stream_reader.h"

namespace stepscope::store {
namespace {

constexpr const char* kRunHint = "pass the directory that `stepscope run` or `stepscope import` printed (<out>/<job>)";

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Whether the file starts with `magic`. Errors only for files that are not regular.
StatusOr<bool> StartsWith(const std::string& path, const char (&magic)[8]) {
  STEPSCOPE_ASSIGN_OR_RETURN(ScopedFd fd, OpenRegularFile(path, Symlinks::kRefuse));
  char head[sizeof magic] = {};
  return pread(fd.get(), head, sizeof head, 0) == static_cast<ssize_t>(sizeof head) &&
         std::memcmp(head, magic, sizeof head) == 0;
}

// Whether <directory>/<name>.ring or .log was written by stepscope.
StatusOr<bool> IsStepscopeStream(const std::string& directory, const std::string& name) {
  const std::string stem = directory + "/" + name;
  if (Exists(stem + kRingSuffix)) {
    STEPSCOPE_ASSIGN_OR_RETURN(bool ring, StartsWith(stem + kRingSuffix, kRingMagic));
    if (ring) return true;
  }
  const std::string log_path = stem + kLogSuffix;
  if (!Exists(log_path)) return false;
  STEPSCOPE_ASSIGN_OR_RETURN(bool log, StartsWith(log_path, kLogMagic));
  if (log) return true;
  // A damaged header: the log is still ours if a frame behind it is intact (its checksum holds,
  // which bytes that were never a stepscope log do not manage by chance).
  STEPSCOPE_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(log_path, Symlinks::kRefuse));
  auto parsed = ParseLog(bytes);
  return parsed.ok() && !parsed->frames.empty();
}

// Readers map and read every stream file of a node: each must be a regular file of the run's
// own. A FIFO, a device or a link among them refuses the whole run here, in one line, rather than
// being skipped as a damaged stream would be.
Status CheckStreamFiles(const std::string& directory, const std::vector<std::string>& streams) {
  for (const std::string& stream : streams) {
    for (const char* suffix : {kRingSuffix, kLogSuffix}) {
      const std::string path = directory + "/" + stream + suffix;
      if (Exists(path)) STEPSCOPE_RETURN_IF_ERROR(OpenRegularFile(path, Symlinks::kRefuse).status());
    }
  }
  return OkStatus();
}

struct NodeVerdict {
  bool is_node = false;
  std::string why_not;  // when it is not one but looked like one: names the file and the defect
  std::string problem;  // when it is one despite a damaged manifest
};

StatusOr<NodeVerdict> JudgeNode(const std::string& directory) {
  NodeVerdict verdict;
  const std::string manifest_path = directory + "/" + kManifestFileName;
  std::string manifest_text;
  std::string defect;
  const bool has_manifest = Exists(manifest_path);
  if (has_manifest) {
    STEPSCOPE_ASSIGN_OR_RETURN(manifest_text, ReadRegularFile(manifest_path, Symlinks::kRefuse, kMaxManifestBytes));
    defect = ManifestDefect(manifest_text);
  }
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> streams, ListStreams(directory));
  STEPSCOPE_RETURN_IF_ERROR(CheckStreamFiles(directory, streams));
  if (has_manifest && defect.empty()) {
    verdict.is_node = true;
    return verdict;
  }
  for (const std::string& stream : streams) {
    STEPSCOPE_ASSIGN_OR_RETURN(bool ours, IsStepscopeStream(directory, stream));
    if (!ours) continue;
    verdict.is_node = true;
    // What is not a JSON object is reported by the reader of the manifest (ReadRunManifest); an
    // object without the fields is reported here, once.
    if (has_manifest && nlohmann::json::parse(manifest_text, nullptr, /*allow_exceptions=*/false).is_object()) {
      verdict.problem = "'" + manifest_path + "' is not a node manifest (" + defect +
                        "); its streams are read without it";
    }
    return verdict;
  }
  if (has_manifest) {
    verdict.why_not = "'" + manifest_path + "' is not a node manifest (" + defect + ")";
    if (!streams.empty()) verdict.why_not += " and no stream file beside it starts with a stepscope header";
  } else if (!streams.empty()) {
    verdict.why_not = "no stream file in '" + directory + "' starts with a stepscope header";
  }
  return verdict;
}

std::string BaseName(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const size_t slash = trimmed.rfind('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

}  // namespace

Status NotARunDirectoryError(const std::string& path, bool regular_file) {
  const size_t slash = path.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return InvalidArgumentError("'" + path + "' is a " + (regular_file ? "file" : "special file") +
                              ", not a run directory; pass the directory that holds the run ('" + parent +
                              "' if the file is in one), as `stepscope run` printed it");
}

std::string ManifestDefect(std::string_view manifest) {
  const nlohmann::json json = nlohmann::json::parse(manifest.begin(), manifest.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return "not valid JSON";
  if (!json.is_object()) return "not a JSON object";
  std::vector<std::string> missing;
  auto has = [&](const nlohmann::json& object, const char* key, bool (nlohmann::json::*is_type)() const noexcept) {
    auto it = object.find(key);
    return it != object.end() && ((*it).*is_type)();
  };
  if (!has(json, "schema_version", &nlohmann::json::is_number_integer)) {
    missing.push_back("schema_version");
  } else if (const int64_t version = json["schema_version"].get<int64_t>();
             version < 1 || version > kManifestSchemaVersion) {
    return "schema_version " + std::to_string(version) + "; this stepscope reads 1 to " +
           std::to_string(kManifestSchemaVersion) + " (upgrade stepscope for a newer one)";
  }
  if (!has(json, "node", &nlohmann::json::is_string)) missing.push_back("node");
  if (!has(json, "status", &nlohmann::json::is_string)) missing.push_back("status");
  const auto clock = json.find("clock");
  if (clock == json.end() || !clock->is_object() || !has(*clock, "monotonic_ns", &nlohmann::json::is_number_integer) ||
      !has(*clock, "realtime_ns", &nlohmann::json::is_number_integer)) {
    missing.push_back("clock");
  }
  std::string text;
  for (const std::string& field : missing) text += (text.empty() ? "no " : ", ") + field;
  return text;
}

StatusOr<RunNodes> FindRunNodes(const std::string& path) {
  RunNodes found;
  STEPSCOPE_ASSIGN_OR_RETURN(NodeVerdict itself, JudgeNode(path));
  if (itself.is_node) {
    found.nodes.push_back({BaseName(path), path});
    if (!itself.problem.empty()) found.problems.push_back(itself.problem);
    return found;
  }
  std::string why_not = itself.why_not;
  LocalFileSystem fs;
  STEPSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDirectory(path));
  std::sort(entries.begin(), entries.end());
  for (const std::string& entry : entries) {
    const std::string directory = path + "/" + entry;
    struct stat st;
    if (lstat(directory.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      struct stat target;
      if (stat(directory.c_str(), &target) == 0 && S_ISDIR(target.st_mode)) {
        found.problems.push_back("'" + directory + "' is a symbolic link to a directory; not read (a run is read " +
                                 "only through its own directories)");
      }
      continue;
    }
    if (!S_ISDIR(st.st_mode)) continue;
    STEPSCOPE_ASSIGN_OR_RETURN(NodeVerdict node, JudgeNode(directory));
    if (node.is_node) {
      found.nodes.push_back({entry, directory});
      if (!node.problem.empty()) found.problems.push_back(node.problem);
    } else if (!node.why_not.empty()) {
      found.problems.push_back("skipped " + node.why_not);
      if (why_not.empty()) why_not = node.why_not;
    }
  }
  if (found.nodes.empty()) {
    if (why_not.empty()) why_not = "no manifest.json or stream files in it or in its subdirectories";
    return NotFoundError("'" + path + "' holds no stepscope run: " + why_not + ", and no model.stepscope; " + kRunHint);
  }
  return found;
}

}  // namespace stepscope::store
