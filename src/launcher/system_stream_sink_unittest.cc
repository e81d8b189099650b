// The system stream counts each cause of a lost sample apart, as the recorder does (issue 12):
// a log that cannot be written (a full disk) must not be blamed on full buffers.
#include "launcher/system_stream_sink.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>

#include "base/test/temp_directory.h"
#include "store/stream_reader.h"

namespace stepscope::launcher {
namespace {

// Samples enough to fill the system ring (8 blocks of 64 KiB, 24 bytes a record) many times.
constexpr int kPolls = 400;
constexpr int kMetricsPerPoll = 200;

std::vector<MetricSample> Poll() {
  std::vector<MetricSample> samples;
  for (int i = 0; i < kMetricsPerPoll; ++i) samples.push_back({"cpu/cpu" + std::to_string(i) + "/user_pct", 1.0 * i});
  return samples;
}

// Files of this process may not grow past their size now, as on a disk that just filled:
// write() fails with EFBIG (SIGXFSZ ignored). The mapped ring was sized at creation, so only
// the log is refused. Restores the limit and the signal when it goes.
class FileSizeCap {
 public:
  explicit FileSizeCap(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit capped = saved_;
    capped.rlim_cur = bytes;
    applied_ = setrlimit(RLIMIT_FSIZE, &capped) == 0;
  }
  ~FileSizeCap() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }
  bool applied() const { return applied_; }

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = SIG_DFL;
  bool applied_ = false;
};

uint64_t FileBytes(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

TEST(SystemStreamSink, DropsWhileTheLogCannotBeWrittenAreCountedAsWriteFailures) {
  TempDirectory dir;
  auto sink = SystemStreamSink::Create(dir.path(), R"({"kind":"system"})", ReadClockPair());
  ASSERT_TRUE(sink.ok()) << sink.status().message();
  (*sink)->WriteSamples(1, Poll());  // every metric's name reaches the log before it fills
  {
    FileSizeCap full(FileBytes(dir.Path("system.log")));
    ASSERT_TRUE(full.applied());
    for (int i = 0; i < kPolls; ++i) (*sink)->WriteSamples(2 + i, Poll());
  }
  EXPECT_GT((*sink)->samples_dropped(), 0u);
  EXPECT_EQ((*sink)->samples_dropped_write_failed(), (*sink)->samples_dropped());
  ASSERT_TRUE((*sink)->Finish().ok());  // the disk has room again: the stats reach the log
  const uint64_t dropped = (*sink)->samples_dropped();
  sink->reset();

  auto stream = store::ReadStream(dir.path(), "system");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  EXPECT_EQ(stream->dropped_events, dropped);
  EXPECT_EQ(stream->dropped_write_failed, dropped);
}

TEST(SystemStreamSink, AWritableLogTakesEveryBlockAndNothingIsDropped) {
  TempDirectory dir;
  auto sink = SystemStreamSink::Create(dir.path(), R"({"kind":"system"})", ReadClockPair());
  ASSERT_TRUE(sink.ok()) << sink.status().message();
  for (int i = 0; i < kPolls; ++i) (*sink)->WriteSamples(1 + i, Poll());
  // The log takes every block as it fills: nothing is lost, and nothing is called a write failure.
  EXPECT_EQ((*sink)->samples_dropped(), 0u);
  EXPECT_EQ((*sink)->samples_dropped_write_failed(), 0u);
  ASSERT_TRUE((*sink)->Finish().ok());
  sink->reset();
  auto stream = store::ReadStream(dir.path(), "system");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  EXPECT_EQ(stream->dropped_events, 0u);
  EXPECT_EQ(stream->dropped_write_failed, 0u);
}

}  // namespace
}  // namespace stepscope::launcher
