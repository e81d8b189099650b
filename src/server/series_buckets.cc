#include "server/series_buckets.h"

#include <algorithm>
#include <cmath>

namespace stepscope::server {

Buckets BucketSamples(std::span<const int64_t> time_ns, std::span<const double> values, int64_t from_ns,
                      int64_t to_ns, size_t points) {
  Buckets out;
  const size_t count = std::min(time_ns.size(), values.size());
  if (count == 0 || to_ns < from_ns) return out;
  points = std::clamp<size_t>(points, 1, kMaxSeriesPoints);
  const size_t begin = std::lower_bound(time_ns.begin(), time_ns.begin() + count, from_ns) - time_ns.begin();
  const size_t end = std::upper_bound(time_ns.begin() + begin, time_ns.begin() + count, to_ns) - time_ns.begin();
  if (end - begin <= points) {
    for (size_t i = begin; i < end; ++i) {
      if (std::isnan(values[i])) continue;
      out.t_ns.push_back(time_ns[i]);
      out.min.push_back(values[i]);
      out.max.push_back(values[i]);
      out.mean.push_back(values[i]);
    }
    return out;
  }
  // Width rounded up, so `points` buckets always cover [from_ns, to_ns].
  const uint64_t span = static_cast<uint64_t>(to_ns - from_ns) + 1;
  out.bucket_ns = static_cast<int64_t>((span + points - 1) / points);
  int64_t current = -1;
  double sum = 0;
  size_t in_bucket = 0;
  auto close = [&] {
    if (in_bucket > 0) out.mean.push_back(sum / static_cast<double>(in_bucket));
  };
  for (size_t i = begin; i < end; ++i) {
    if (std::isnan(values[i])) continue;
    const int64_t bucket = (time_ns[i] - from_ns) / out.bucket_ns;
    if (bucket != current || in_bucket == 0) {
      close();
      current = bucket;
      sum = 0;
      in_bucket = 0;
      out.t_ns.push_back(from_ns + bucket * out.bucket_ns);
      out.min.push_back(values[i]);
      out.max.push_back(values[i]);
    }
    out.min.back() = std::min(out.min.back(), values[i]);
    out.max.back() = std::max(out.max.back(), values[i]);
    sum += values[i];
    ++in_bucket;
  }
  close();
  return out;
}

}  // namespace stepscope::server
