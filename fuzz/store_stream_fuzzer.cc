// libFuzzer target: bytes -> a node directory holding one stream's .log and/or .ring file (and
// maybe a manifest.json) -> ReadStream, the run read as every reader reads it (the analysis
// layer's run decoder, through ReadRecordedRun), and CompactStream followed by a second read.
// The input layout is in fuzz_inputs.h; the flags byte chooses which files exist, whether they
// are taken raw or built with valid checksums and header checks, and whether to compact.
//
// Properties checked (a failure traps):
//   - ReadStream returns blocks with unique, increasing sequence numbers and valid records, and
//     GPU activity rows (a GPU stream's frames, whole or cut short) of known kinds;
//   - every problem ReadStream reports names the log or the ring file;
//   - the run's events are sorted by start and reference valid streams and nodes;
//   - compaction loses nothing: once CompactStream succeeded, reading the stream again gives
//     at least as many records for every block sequence number as before.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "analysis/recorded_run.h"
#include "fuzz_inputs.h"
#include "fuzz_scratch.h"
#include "store/stream_reader.h"

namespace stepscope::fuzz {
namespace {

constexpr const char* kStream = "proc-1-fuzz";

std::string* g_dir = nullptr;

std::string Path(const char* suffix) { return *g_dir + "/" + kStream + suffix; }

std::map<uint64_t, size_t> RecordsPerSeq(const store::StreamContents& contents) {
  std::map<uint64_t, size_t> records;
  uint64_t previous_seq = 0;
  bool first = true;
  for (const store::DecodedBlock& block : contents.blocks) {
    FUZZ_CHECK(first || block.seq > previous_seq);
    first = false;
    previous_seq = block.seq;
    for (const store::RawRecord& record : block.records) FUZZ_CHECK(store::IsValidRecord(record));
    records[block.seq] = block.records.size();
  }
  for (const store::GpuActivityRow& row : contents.gpu_rows) {
    FUZZ_CHECK(static_cast<uint8_t>(row.kind) >= 1 && static_cast<uint8_t>(row.kind) <= store::kMaxGpuRowKind);
  }
  for (const std::string& problem : contents.problems) {
    FUZZ_CHECK(problem.find(kStream) != std::string::npos);
  }
  return records;
}

void CheckRun() {
  auto run = analysis::ReadRecordedRun(*g_dir);
  if (!run.ok()) return;
  int64_t previous_start = INT64_MIN;
  for (const auto& [stream, event, args] : run->events()) {
    FUZZ_CHECK(event.start_ns >= previous_start);
    previous_start = event.start_ns;
    FUZZ_CHECK(stream < run->streams().size());
    FUZZ_CHECK(run->streams()[stream].node < run->nodes().size());
    (void)run->Name(event.name);
    for (const analysis::RecordedArg& arg : args) (void)run->Name(arg.key);
  }
}

}  // namespace
}  // namespace stepscope::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Every input is written to files.
  stepscope::fuzz::g_dir = new std::string(stepscope::fuzz::MakeScratchDirOrAbort("stream"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope;
  using namespace stepscope::fuzz;
  InputCursor in(std::string_view(reinterpret_cast<const char*>(data), size));
  const uint8_t flags = in.Take<uint8_t>();
  std::string_view log = in.TakeBytes(in.Take<uint32_t>());
  std::string_view ring = in.TakeBytes(in.Take<uint32_t>());
  std::string_view manifest = in.Rest();

  unlink(Path(store::kLogSuffix).c_str());
  unlink(Path(store::kRingSuffix).c_str());
  unlink((*g_dir + "/manifest.json").c_str());
  if (flags & kHasLog) WriteFileOrAbort(Path(store::kLogSuffix), flags & kBuiltLog ? std::string_view(BuildLog(log)) : log);
  if (flags & kHasRing) WriteFileOrAbort(Path(store::kRingSuffix), flags & kBuiltRing ? std::string_view(BuildRing(ring)) : ring);
  if (flags & kHasManifest) WriteFileOrAbort(*g_dir + "/manifest.json", manifest);

  auto before = store::ReadStream(*g_dir, kStream);
  std::map<uint64_t, size_t> records_before;
  if (before.ok()) records_before = RecordsPerSeq(*before);
  CheckRun();

  if ((flags & kCompact) && before.ok()) {
    Status compacted = store::CompactStream(*g_dir, kStream);
    if (compacted.ok()) {
      auto after = store::ReadStream(*g_dir, kStream);
      FUZZ_CHECK(after.ok());
      FUZZ_CHECK(!after->has_ring);
      std::map<uint64_t, size_t> records_after = RecordsPerSeq(*after);
      for (const auto& [seq, count] : records_before) FUZZ_CHECK(records_after[seq] >= count);
      CheckRun();
    }
  }
  return 0;
}
