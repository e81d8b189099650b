// Deltas of cumulative counters kept per key (a disk, a network interface) between two polls,
// summed over keys, with the rules every rate metric of the sampler follows:
//   - the first Update() has nothing to compare with and yields nothing;
//   - a key that disappeared since the last Update (device unplugged, interface deleted)
//     invalidates every sum this time: its last interval's traffic is unknown;
//   - a counter that went backwards on any key (driver reload, 32-bit wrap) invalidates that
//     counter's sum this time. A negative or wrapped delta is never reported;
//   - a key that appeared is only the baseline for the next Update.
// Internal to sampler/: used by disk_source.cc and network_source.cc.
//
// Threading: not thread-safe; owned by one source, which the sampler polls from one thread.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepscope {

template <size_t N>
class KeyedCounters {
 public:
  struct Row {
    std::string key;
    std::array<uint64_t, N> values{};
  };
  // Per counter: the sum of deltas over all keys, or nullopt when it is invalid this time.
  using Sums = std::array<std::optional<uint64_t>, N>;

  // Stores `rows` as the new baseline and returns the sums since the previous call; nullopt on
  // the first call. Keys must be unique (the parsers guarantee it for real /proc text; a
  // duplicate key in hostile text makes every sum invalid rather than double counted).
  std::optional<Sums> Update(std::vector<Row> rows) {
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.key < b.key; });
    bool duplicate_key =
        std::adjacent_find(rows.begin(), rows.end(),
                           [](const Row& a, const Row& b) { return a.key == b.key; }) != rows.end();
    std::optional<Sums> result;
    if (has_previous_) {
      std::array<uint64_t, N> sums{};
      std::array<bool, N> valid;
      valid.fill(!duplicate_key);
      auto current = rows.begin();
      for (const Row& before : previous_) {
        current =
            std::lower_bound(current, rows.end(), before.key,
                             [](const Row& row, const std::string& key) { return row.key < key; });
        if (current == rows.end() || current->key != before.key) {
          valid.fill(false);  // the key disappeared
          break;
        }
        for (size_t i = 0; i < N; ++i) {
          if (current->values[i] < before.values[i]) {
            valid[i] = false;
          } else {
            sums[i] += current->values[i] - before.values[i];
          }
        }
      }
      result.emplace();
      for (size_t i = 0; i < N; ++i) {
        if (valid[i]) (*result)[i] = sums[i];
      }
    }
    previous_ = std::move(rows);
    has_previous_ = true;
    return result;
  }

 private:
  bool has_previous_ = false;
  std::vector<Row> previous_;  // sorted by key
};

}  // namespace stepscope
