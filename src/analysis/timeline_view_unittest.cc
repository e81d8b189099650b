#include "analysis/timeline_view.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace stepscope::analysis {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;

class Spans {
 public:
  Spans() : builder_(ModelSource::kStepscope) {
    NodeFacts node;
    node.name = "n1";
    builder_.AddNode(node);
  }
  uint32_t Add(int64_t start, int64_t end, int64_t tid = 1, int32_t device = -1, const char* name = "op") {
    FrameworkEvent event;
    event.start_ns = kT0 + start;
    event.end_ns = kT0 + end;
    event.pid = 1;
    event.tid = tid;
    event.device = device;
    event.name = builder_.Intern(name);
    event.phase = builder_.Intern(name);
    return builder_.AddEvent(event);
  }
  void Flow(uint32_t from, uint32_t to) { builder_.AddFlow(from, to, builder_.Intern("ac2g"), 1); }
  Model Finish() { return std::move(builder_).Finish(); }

 private:
  ModelBuilder builder_;
};

TimelineViewport Viewport(int64_t start, int64_t end, uint32_t width, uint32_t max_primitives = 50'000) {
  return {kT0 + start, kT0 + end, width, max_primitives};
}

TEST(TimelineView, WideSlicesAreThemselvesOnTheirTrackAndDepthWithTheirFlows) {
  Spans spans;
  spans.Add(0, 1000, 1, -1, "step");
  const uint32_t launch = spans.Add(100, 400, 1, -1, "launch");
  spans.Add(500, 900, 1, -1, "backward");
  const uint32_t kernel = spans.Add(450, 800, 7, 0, "kernel");
  spans.Flow(launch, kernel);
  const Model model = spans.Finish();
  const TimelineIndex index(model);
  const TimelineView view = index.View(Viewport(0, 1000, 100));  // 10 ns per column
  ASSERT_EQ(view.slices.size(), 4u);
  EXPECT_EQ(view.events, 4u);
  EXPECT_EQ(view.ns_per_column, 10);
  std::map<std::string, TimelineSlice> by_name;
  for (const TimelineSlice& slice : view.slices) {
    EXPECT_EQ(slice.count, 1u);
    by_name[std::string(model.String(model.events()[slice.event].name))] = slice;
  }
  EXPECT_EQ(by_name["step"].depth, 0);
  EXPECT_EQ(by_name["launch"].depth, 1);
  EXPECT_EQ(by_name["backward"].depth, 1);
  EXPECT_EQ(by_name["launch"].track, by_name["step"].track);
  EXPECT_NE(by_name["kernel"].track, by_name["step"].track);
  EXPECT_EQ(index.layout().threads[index.layout().tracks[by_name["kernel"].track].thread].device, 0);
  ASSERT_EQ(view.flows.size(), 1u);
  EXPECT_EQ(view.slices[view.flows[0].from_slice].event, by_name["launch"].event);
  EXPECT_EQ(view.slices[view.flows[0].to_slice].event, by_name["kernel"].event);
}

TEST(TimelineView, NarrowSlicesMergeIntoOneSlicePerColumnAndKeepTheirCount) {
  Spans spans;
  for (int64_t i = 0; i < 10'000; ++i) spans.Add(i * 1000, i * 1000 + 500);  // 10 ms of 0.5 µs ops
  const Model model = spans.Finish();
  const TimelineIndex index(model);
  const TimelineView view = index.View(Viewport(0, 10'000'000, 100));  // 100 µs per column
  EXPECT_EQ(view.slices.size(), 100u);
  EXPECT_EQ(view.events, 10'000u);
  for (size_t c = 0; c < view.slices.size(); ++c) {
    EXPECT_EQ(view.slices[c].count, 100u);
    EXPECT_EQ(view.slices[c].start_ns, kT0 + static_cast<int64_t>(c) * 100'000);
    EXPECT_EQ(view.slices[c].end_ns, kT0 + static_cast<int64_t>(c) * 100'000 + 99'500);
  }
  EXPECT_TRUE(view.flows.empty());
}

TEST(TimelineView, AWideSliceAfterNarrowOnesInItsColumnStaysItself) {
  Spans spans;
  spans.Add(0, 1);
  spans.Add(2, 3);
  spans.Add(5, 500);  // starts in column 0 (10 ns), wide
  const Model model = spans.Finish();
  const TimelineView view = TimelineIndex(model).View(Viewport(0, 1000, 100));
  ASSERT_EQ(view.slices.size(), 2u);
  EXPECT_EQ(view.slices[0].count, 2u);
  EXPECT_EQ(view.slices[0].end_ns, kT0 + 3);
  EXPECT_EQ(view.slices[1].count, 1u);
  EXPECT_EQ(view.slices[1].start_ns, kT0 + 5);
}

TEST(TimelineView, TooManySlicesWidenTheColumnsUntilTheyFit) {
  Spans spans;
  for (int64_t tid = 1; tid <= 50; ++tid) {
    for (int64_t i = 0; i < 1000; ++i) spans.Add(i * 100, i * 100 + 60, tid);
  }
  const Model model = spans.Finish();
  const TimelineView view = TimelineIndex(model).View(Viewport(0, 100'000, 1000, /*max_primitives=*/5000));
  EXPECT_GT(view.widenings, 0u);
  EXPECT_LE(view.slices.size(), 5000u);
  EXPECT_EQ(view.events, 50'000u);
}

TEST(TimelineView, AnEmptyOrBackwardViewportShowsNothing) {
  Spans spans;
  spans.Add(0, 10);
  const Model model = spans.Finish();
  const TimelineIndex index(model);
  EXPECT_TRUE(index.View(Viewport(10, 5, 100)).slices.empty());
  EXPECT_TRUE(index.View(Viewport(0, 10, 0)).slices.empty());
  EXPECT_TRUE(index.View(Viewport(20, 30, 100)).slices.empty());
}

// Against a plain scan on random nested threads: every span overlapping the viewport is shown
// exactly once (themselves or in a merged count), and the slices of a row never overlap.
TEST(TimelineView, EveryOverlappingSpanIsCountedOnceAndRowsNeverOverlap) {
  std::mt19937_64 random(7);
  Spans spans;
  for (int64_t tid = 1; tid <= 4; ++tid) {
    int64_t t = 0;
    for (int step = 0; step < 200; ++step) {
      const int64_t length = 1000 + static_cast<int64_t>(random() % 100'000);
      spans.Add(t, t + length, tid, -1, "step");
      int64_t inner = t;
      while (inner < t + length - 10) {
        const int64_t op = 1 + static_cast<int64_t>(random() % 5000);
        if (inner + op > t + length) break;
        spans.Add(inner, inner + op, tid);
        if (op > 20) spans.Add(inner + 5, inner + op - 5, tid, -1, "child");
        inner += op + static_cast<int64_t>(random() % 300);
      }
      t += length + static_cast<int64_t>(random() % 2000);
    }
  }
  const Model model = spans.Finish();
  const TimelineIndex index(model);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t span = (model.last_ns() - model.first_ns()) >> (random() % 16);
    const int64_t start = model.first_ns() + static_cast<int64_t>(random() % static_cast<uint64_t>(model.last_ns() - model.first_ns()));
    const TimelineViewport viewport{start, start + span, static_cast<uint32_t>(50 + random() % 2000), 50'000};
    const TimelineView view = index.View(viewport);
    uint64_t overlapping = 0;
    for (const FrameworkEvent& event : model.events()) {
      overlapping += std::max(event.end_ns, event.start_ns) >= viewport.start_ns && event.start_ns <= viewport.end_ns;
    }
    EXPECT_EQ(view.events, overlapping) << "trial " << trial;
    std::map<std::pair<uint32_t, uint8_t>, int64_t> row_end;
    for (const TimelineSlice& slice : view.slices) {
      auto [it, fresh] = row_end.emplace(std::make_pair(slice.track, slice.depth), slice.end_ns);
      if (!fresh) {
        EXPECT_GE(slice.start_ns, it->second) << "trial " << trial;
        it->second = slice.end_ns;
      }
      if (slice.count == 1) EXPECT_EQ(slice.start_ns, model.events()[slice.event].start_ns);
    }
  }
}

}  // namespace
}  // namespace stepscope::analysis
