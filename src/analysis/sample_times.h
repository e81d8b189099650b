// The timestamps of one system series, shared with the node's other series polled at the same
// instants.
//
// Why: the sampler polls every metric of a node at once, so a node's 32 cores, 8 GPUs and its
// memory, disk and network series carry the same timestamps; kept once per series they were
// half of the model (8 of a sample's 16 bytes: 278 MB of a day-long 8-GPU run). A SampleTimes is
// a prefix of a timeline that several series may share. Nothing already in a timeline ever
// changes: series only append, so each series' prefix stays what it was whoever appends next.
// A series that needs a timestamp its timeline does not have at that position stops sharing
// (SampleTimelines finds it another timeline with the same past, or copies its own).
//
// Reads are a vector's (size, [], begin/end, front/back, span). Threading: as the model's
// vectors: many readers, or one writer (the model's builder) alone.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace stepscope::analysis {

class SampleTimes {
 public:
  using value_type = int64_t;
  using iterator = const int64_t*;
  using const_iterator = const int64_t*;

  SampleTimes() = default;
  // A timeline of its own (tests; a series the builder had to sort).
  SampleTimes(std::vector<int64_t> times)  // NOLINT: converts like the vector it replaces
      : timeline_(std::make_shared<std::vector<int64_t>>(std::move(times))), size_(timeline_->size()) {}
  SampleTimes(std::initializer_list<int64_t> times) : SampleTimes(std::vector<int64_t>(times)) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* data() const { return timeline_ ? timeline_->data() : nullptr; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t operator[](size_t i) const { return (*timeline_)[i]; }
  int64_t front() const { return (*timeline_)[0]; }
  int64_t back() const { return (*timeline_)[size_ - 1]; }
  std::span<const int64_t> span() const { return {data(), size_}; }
  std::vector<int64_t> ToVector() const { return {begin(), end()}; }
  friend bool operator==(const SampleTimes& a, const SampleTimes& b) { return std::ranges::equal(a.span(), b.span()); }
  friend bool operator==(const SampleTimes& a, const std::vector<int64_t>& b) { return std::ranges::equal(a.span(), b); }

  // Appends one timestamp: follows the shared timeline where it already has this one, extends
  // it at its end, and otherwise continues on a copy of its own past.
  void push_back(int64_t time_ns);
  // Room for `capacity` timestamps in the timeline (shared: the largest request wins). Before the
  // first timestamp the series has no timeline yet: the room is made once it joins one.
  void reserve(size_t capacity);
  // The bytes of timelines this series holds, a shared one divided among its holders.
  size_t ApproximateBytes() const;

 private:
  friend class SampleTimelines;
  // Continues on a timeline that holds the same past (its first size_ timestamps equal ours).
  void SwitchTo(std::shared_ptr<std::vector<int64_t>> timeline);
  void CopyOwnPast();

  std::shared_ptr<std::vector<int64_t>> timeline_;
  size_t size_ = 0;
  uint32_t divergences_ = 0;  // how often it left a timeline (SampleTimelines bounds the search)
  size_t pending_capacity_ = 0;  // reserve() before the series had a timeline
};

// A node's timelines, offered to its series as they append (ModelBuilder keeps one per node).
class SampleTimelines {
 public:
  // Appends `time_ns` to `times`, sharing a timeline where one has this past and timestamp.
  void Append(SampleTimes& times, int64_t time_ns);
  // Makes a continued model's timelines known again (ModelBuilder(Model&&)).
  void Adopt(const SampleTimes& times);

 private:
  // A few timelines per node cover every poll rate the node has; a series that keeps leaving
  // them (irregular timestamps) ends up alone instead of costing a search per divergence.
  static constexpr size_t kMaxTimelines = 8;
  static constexpr uint32_t kMaxDivergences = 4;
  bool Continues(const std::vector<int64_t>& timeline, const SampleTimes& times, int64_t time_ns) const;

  std::vector<std::shared_ptr<std::vector<int64_t>>> timelines_;
};

}  // namespace stepscope::analysis
