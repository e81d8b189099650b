// The dashboard's timeline (issue 14): what a viewport of W pixel columns over [start, end] shows
// of a run's framework events, at a level of detail the browser can draw — never more than what
// fits the pixels, however many events the run holds.
//
//   tracks (thread_tracks.h: threads, their overflow lanes, GPU streams)
//     rows  = (track, depth): the slices at one nesting depth of one track never overlap,
//             so each row is sorted by start and by end at once
//   a view = per row, the slices at least one column wide as themselves, and each column's run
//            of narrower slices merged into one slice with their count
//
// A row is answered with binary searches from column to column, so a view costs about
// (rows × columns × log events), not the events in it: a 10 M-event run answers a whole-run view
// as fast as a zoomed one. When a view would hold more than `max_primitives` slices, columns are
// widened (doubled) until it fits. Flows (launch -> kernel) are kept when both their ends are
// shown as themselves.
//
// The index costs 4 bytes per span (each row's event indices) beside the model. Built once per
// model state (a live run's index is rebuilt after Model::Refresh()); read-only after, so views
// may be asked from several threads. Callers: the server's timeline endpoint, its benchmark.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model.h"
#include "analysis/thread_tracks.h"

namespace stepscope::analysis {

struct TimelineViewport {
  int64_t start_ns = 0;  // Unix ns, closed
  int64_t end_ns = 0;
  uint32_t width_px = 1000;
  uint32_t max_primitives = 50'000;
};

struct TimelineSlice {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t track = 0;  // index into TimelineIndex::layout().tracks
  uint8_t depth = 0;
  uint32_t count = 1;  // 1: the event itself; > 1: that many events merged into one column's run
  uint32_t event = 0;  // index into Model::events(): the event, or the first of the merged ones
};

struct TimelineFlow {
  uint32_t from_slice = 0;  // indices into TimelineView::slices
  uint32_t to_slice = 0;
  uint32_t flow = 0;        // index into Model::flows()
};

struct TimelineView {
  std::vector<TimelineSlice> slices;  // by (track, depth, start)
  std::vector<TimelineFlow> flows;
  int64_t ns_per_column = 1;          // the width a slice needs to be shown as itself
  uint64_t events = 0;                // events the slices stand for
  uint32_t widenings = 0;             // times the columns were doubled to fit max_primitives
};

class TimelineIndex {
 public:
  explicit TimelineIndex(const Model& model);

  // The model's tracks; TimelineSlice::track indexes its `tracks`.
  const TrackLayout& layout() const { return layout_; }
  TimelineView View(const TimelineViewport& viewport) const;
  size_t ApproximateBytes() const;

 private:
  struct Row {
    uint32_t track = 0;
    uint8_t depth = 0;
    std::vector<uint32_t> events;  // span indices into Model::events(), by start (and by end)
  };
  // Appends `row`'s slices for columns of `ns_per_column`; false once `limit` slices are exceeded.
  bool ViewRow(const Row& row, const TimelineViewport& viewport, int64_t ns_per_column, size_t limit,
               TimelineView& view) const;

  const Model& model_;
  TrackLayout layout_;  // threads and tracks only: the per-event vectors are released after building rows
  std::vector<Row> rows_;
  std::vector<uint32_t> flows_by_from_;  // indices into Model::flows(), by their `from` event
};

}  // namespace stepscope::analysis
