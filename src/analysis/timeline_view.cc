#include "analysis/timeline_view.h"

#include <algorithm>
#include <map>
#include <utility>

namespace stepscope::analysis {
namespace {

// A span's end as drawn: a span that ends before it starts (clock jitter) is a point.
int64_t DrawnEnd(const FrameworkEvent& event) { return std::max(event.end_ns, event.start_ns); }

// Columns stop doubling here: a single column then covers any int64 range.
constexpr uint32_t kMaxWidenings = 62;

}  // namespace

TimelineIndex::TimelineIndex(const Model& model) : model_(model), layout_(LayoutTracks(model)) {
  const auto& events = model.events();
  std::map<std::pair<uint32_t, uint8_t>, size_t> row_of;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind != EventKind::kSpan) continue;
    row_of.emplace(std::make_pair(layout_.event_track[i], layout_.event_depth[i]), 0);
  }
  for (auto& [key, index] : row_of) {
    index = rows_.size();
    rows_.push_back(Row{key.first, key.second, {}});
  }
  // Events come sorted by start, so each row is too.
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind != EventKind::kSpan) continue;
    rows_[row_of[{layout_.event_track[i], layout_.event_depth[i]}]].events.push_back(static_cast<uint32_t>(i));
  }
  for (Row& row : rows_) row.events.shrink_to_fit();
  // The rows hold what views need; the per-event layout would cost 9 more bytes per event.
  std::vector<uint32_t>().swap(layout_.event_thread);
  std::vector<uint32_t>().swap(layout_.event_track);
  std::vector<uint8_t>().swap(layout_.event_depth);

  flows_by_from_.resize(model.flows().size());
  for (uint32_t i = 0; i < flows_by_from_.size(); ++i) flows_by_from_[i] = i;
  std::sort(flows_by_from_.begin(), flows_by_from_.end(),
            [&](uint32_t a, uint32_t b) { return model.flows()[a].from < model.flows()[b].from; });
}

size_t TimelineIndex::ApproximateBytes() const {
  size_t bytes = sizeof(*this) + rows_.capacity() * sizeof(Row) + flows_by_from_.capacity() * sizeof(uint32_t) +
                 layout_.threads.capacity() * sizeof(ThreadKey) + layout_.tracks.capacity() * sizeof(Track);
  for (const Row& row : rows_) bytes += row.events.capacity() * sizeof(uint32_t);
  return bytes;
}

bool TimelineIndex::ViewRow(const Row& row, const TimelineViewport& viewport, int64_t ns_per_column, size_t limit,
                            TimelineView& view) const {
  const auto& events = model_.events();
  const std::vector<uint32_t>& ids = row.events;
  auto start_of = [&](size_t i) { return events[ids[i]].start_ns; };
  auto end_of = [&](size_t i) { return DrawnEnd(events[ids[i]]); };
  auto emit = [&](size_t first, size_t last) {  // ids[first, last) as one slice
    view.slices.push_back(TimelineSlice{start_of(first), end_of(last - 1), row.track, row.depth,
                                        static_cast<uint32_t>(last - first), ids[first]});
    view.events += last - first;
    return view.slices.size() <= limit;
  };
  // Ends are sorted within a row: the first slice still open at the viewport's start.
  size_t i = static_cast<size_t>(std::partition_point(ids.begin(), ids.end(), [&](uint32_t id) {
                                   return DrawnEnd(events[id]) < viewport.start_ns;
                                 }) - ids.begin());
  while (i < ids.size() && start_of(i) <= viewport.end_ns) {
    if (end_of(i) - start_of(i) >= ns_per_column) {
      if (!emit(i, i + 1)) return false;
      ++i;
      continue;
    }
    // A narrow slice: merge every slice of the row that starts in its column.
    const int64_t column = (std::max(start_of(i), viewport.start_ns) - viewport.start_ns) / ns_per_column;
    int64_t column_end = 0;
    if (__builtin_mul_overflow(column + 1, ns_per_column, &column_end) ||
        __builtin_add_overflow(column_end, viewport.start_ns, &column_end)) {
      column_end = INT64_MAX;
    }
    // The last column stops at the viewport's end (closed): nothing starting after it is shown.
    if (viewport.end_ns < INT64_MAX) column_end = std::min(column_end, viewport.end_ns + 1);
    size_t next = static_cast<size_t>(
        std::partition_point(ids.begin() + static_cast<std::ptrdiff_t>(i), ids.end(),
                             [&](uint32_t id) { return events[id].start_ns < column_end; }) - ids.begin());
    // Only the last slice starting in the column can be wide (nothing in a row overlaps it).
    if (next - i > 1 && end_of(next - 1) - start_of(next - 1) >= ns_per_column) --next;
    if (!emit(i, next)) return false;
    i = next;
  }
  return true;
}

TimelineView TimelineIndex::View(const TimelineViewport& viewport) const {
  TimelineView view;
  if (viewport.end_ns < viewport.start_ns || viewport.width_px == 0) return view;
  const int64_t span_ns = viewport.end_ns - viewport.start_ns;
  view.ns_per_column = std::max<int64_t>(1, span_ns / viewport.width_px);
  const size_t limit = std::max<uint32_t>(1, viewport.max_primitives);
  for (;;) {
    bool fits = true;
    for (const Row& row : rows_) {
      if (!ViewRow(row, viewport, view.ns_per_column, limit, view)) {
        fits = false;
        break;
      }
    }
    if (fits || view.widenings >= kMaxWidenings) break;
    view.slices.clear();
    view.events = 0;
    view.ns_per_column = view.ns_per_column > INT64_MAX / 2 ? INT64_MAX : view.ns_per_column * 2;
    ++view.widenings;
  }

  // Flows between two slices shown as themselves.
  std::vector<std::pair<uint32_t, uint32_t>> shown;  // (event, slice), by event
  for (uint32_t s = 0; s < view.slices.size(); ++s) {
    if (view.slices[s].count == 1) shown.emplace_back(view.slices[s].event, s);
  }
  std::sort(shown.begin(), shown.end());
  auto slice_of = [&](uint32_t event) -> int64_t {
    auto it = std::lower_bound(shown.begin(), shown.end(), std::make_pair(event, uint32_t{0}));
    return it != shown.end() && it->first == event ? it->second : -1;
  };
  const auto& flows = model_.flows();
  for (const auto& [event, slice] : shown) {
    // A copy for the lambda: clang before 16 cannot capture a structured binding.
    const auto from = event;
    auto first = std::partition_point(flows_by_from_.begin(), flows_by_from_.end(),
                                      [&](uint32_t f) { return flows[f].from < from; });
    for (auto it = first; it != flows_by_from_.end() && flows[*it].from == event; ++it) {
      const int64_t to = slice_of(flows[*it].to);
      if (to >= 0) view.flows.push_back(TimelineFlow{slice, static_cast<uint32_t>(to), *it});
    }
  }
  return view;
}

}  // namespace stepscope::analysis
