#include "rules/sorted_runs.h"

namespace stepscope::rules {

std::vector<size_t> SortedRuns::Ascending(std::vector<size_t> indices, size_t count) const {
  if (count == 0) return indices;
  // Dense indices (the usual case: positions in arrival order): mark them in a bitmap and read
  // it out in order, O(max index / 64 + count) instead of a sort's O(count log count).
  const size_t words = max_index_ / 64 + 1;
  if (words <= 8 * count) {
    std::vector<uint64_t> bits(words, 0);
    for (size_t index : indices) bits[index / 64] |= uint64_t{1} << (index % 64);
    std::vector<size_t> ascending;
    ascending.reserve(count);
    for (size_t word = 0; word < words; ++word) {
      for (uint64_t rest = bits[word]; rest != 0; rest &= rest - 1) {
        ascending.push_back(word * 64 + static_cast<size_t>(std::countr_zero(rest)));
      }
    }
    // Equal indices (allowed, if unusual) were marked once: fall back to sorting.
    if (ascending.size() == count) return ascending;
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

}  // namespace stepscope::rules
