// Which directories hold a stepscope run, decided in one place for every reader of runs (the
// analysis layer's run decoder, behind every command and `stepscope._core.read_run`), so that a
// directory that is not a run is refused with one line instead of being read as an empty run
// ("NoIssuesFound", "started 1970-01-01").
//
// A node directory is stepscope's when
//   - its manifest.json is a node manifest: a JSON object with the fields every reader needs
//     (docs/formats.md): `schema_version` (1), `node`, `status` and the `clock` anchor; or
//   - one of its streams is stepscope's: a .log or .ring that starts with the format's magic, or
//     a log whose header is damaged but that holds at least one intact, checksummed frame.
// The second rule keeps runs recorded without a launcher (no manifest) and runs whose manifest
// was damaged readable; garbage logs have neither magic nor a frame whose checksum holds.
//
// Every file is opened as base/file_system.h OpenRegularFile does with Symlinks::kRefuse, and
// node directories that are symbolic links are skipped: a run is read only through its own
// files. A hostile file (a FIFO, a device, a link) is an error, not a skip.
//
// Threading: none; reads files only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stepscope::store {

inline constexpr const char* kManifestFileName = "manifest.json";
// The node manifest's layout version the launcher writes (docs/formats.md); readers accept it
// and every older one.
inline constexpr int kManifestSchemaVersion = 1;
// The launcher's manifests are a few KB; one entry per applied control file is what grows.
inline constexpr uint64_t kMaxManifestBytes = 64 << 20;

struct RunNode {
  std::string name;  // the directory's own name
  std::string path;
};

struct RunNodes {
  std::vector<RunNode> nodes;          // sorted by name; never empty
  std::vector<std::string> problems;   // directories or manifests passed over, and why
};

// `path`: a job directory (its subdirectories are nodes) or a single node directory. Errors are
// one line naming the path, why it is not a run and what to pass.
StatusOr<RunNodes> FindRunNodes(const std::string& path);

// The one-line error for `path`, which exists but is not a directory (a file in a run —
// manifest.json, a stream, a detail file — is a common slip): says what it is and which
// directory to pass. `regular_file`: a regular file rather than a FIFO or device.
Status NotARunDirectoryError(const std::string& path, bool regular_file);

// Empty when `manifest` has what a node manifest needs; else what it lacks, e.g.
// "no schema_version, node". Never throws on any bytes.
std::string ManifestDefect(std::string_view manifest);

}  // namespace stepscope::store
