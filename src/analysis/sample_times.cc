#include "analysis/sample_times.h"

#include <algorithm>

namespace stepscope::analysis {

void SampleTimes::push_back(int64_t time_ns) {
  if (!timeline_) SwitchTo(std::make_shared<std::vector<int64_t>>());
  if (size_ < timeline_->size()) {
    if ((*timeline_)[size_] == time_ns) {
      ++size_;
      return;
    }
    CopyOwnPast();
  }
  timeline_->push_back(time_ns);
  ++size_;
}

void SampleTimes::reserve(size_t capacity) {
  if (!timeline_) {
    pending_capacity_ = std::max(pending_capacity_, capacity);
    return;
  }
  if (timeline_->capacity() < capacity) timeline_->reserve(capacity);
}

void SampleTimes::SwitchTo(std::shared_ptr<std::vector<int64_t>> timeline) {
  timeline_ = std::move(timeline);
  if (pending_capacity_ > 0) {
    reserve(pending_capacity_);
    pending_capacity_ = 0;
  }
}

size_t SampleTimes::ApproximateBytes() const {
  if (!timeline_) return 0;
  return timeline_->capacity() * sizeof(int64_t) / static_cast<size_t>(std::max(1L, timeline_.use_count()));
}

void SampleTimes::CopyOwnPast() {
  auto own = std::make_shared<std::vector<int64_t>>();
  // The room the timeline it leaves had (what a loader reserved for the stream), at least a
  // quarter more than its past, so that the next doublings do not copy it again and again.
  own->reserve(std::max(size_ + size_ / 4 + 16, timeline_ ? timeline_->capacity() : 0));
  own->assign(begin(), end());
  timeline_ = std::move(own);
}

bool SampleTimelines::Continues(const std::vector<int64_t>& timeline, const SampleTimes& times, int64_t time_ns) const {
  if (timeline.size() < times.size_) return false;
  if (timeline.size() > times.size_ && timeline[times.size_] != time_ns) return false;
  return std::equal(times.begin(), times.end(), timeline.begin());
}

void SampleTimelines::Append(SampleTimes& times, int64_t time_ns) {
  if (!times.timeline_) {
    for (const auto& timeline : timelines_) {
      if (timeline->empty() || timeline->front() == time_ns) {
        times.SwitchTo(timeline);
        break;
      }
    }
    if (!times.timeline_) {
      times.SwitchTo(std::make_shared<std::vector<int64_t>>());
      if (timelines_.size() < kMaxTimelines) timelines_.push_back(times.timeline_);
    }
  }
  const std::vector<int64_t>& current = *times.timeline_;
  if (times.size_ == current.size() || current[times.size_] == time_ns) return times.push_back(time_ns);

  // This series leaves its timeline here: another with the same past may go on as it does.
  if (times.divergences_ < kMaxDivergences) {
    ++times.divergences_;
    for (const auto& timeline : timelines_) {
      if (timeline == times.timeline_ || !Continues(*timeline, times, time_ns)) continue;
      times.SwitchTo(timeline);
      return times.push_back(time_ns);
    }
    times.CopyOwnPast();
    if (timelines_.size() < kMaxTimelines) timelines_.push_back(times.timeline_);
  } else {
    times.CopyOwnPast();  // alone from now on: nobody else appends to it
  }
  times.push_back(time_ns);
}

void SampleTimelines::Adopt(const SampleTimes& times) {
  if (!times.timeline_ || timelines_.size() >= kMaxTimelines) return;
  if (std::find(timelines_.begin(), timelines_.end(), times.timeline_) == timelines_.end()) {
    timelines_.push_back(times.timeline_);
  }
}

}  // namespace stepscope::analysis
