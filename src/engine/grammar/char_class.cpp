#include "engine/grammar/char_class.h"

#include <algorithm>

namespace parley::grammar {

namespace {

constexpr uint32_t kSurrogateFirst = 0xD800;
constexpr uint32_t kSurrogateLast = 0xDFFF;

// Sorts and merges overlapping or adjacent ranges.
void normalize_ranges(std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  ranges = std::move(merged);
}

std::vector<std::pair<uint32_t, uint32_t>> complement(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  uint32_t next = 0;
  for (const auto& r : ranges) {
    if (r.first > next) out.emplace_back(next, r.first - 1);
    next = r.second + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

std::vector<std::pair<uint32_t, uint32_t>> without_surrogates(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& r : ranges) {
    if (r.first < kSurrogateFirst) out.emplace_back(r.first, std::min(r.second, kSurrogateFirst - 1));
    if (r.second > kSurrogateLast) out.emplace_back(std::max(r.first, kSurrogateLast + 1), r.second);
  }
  return out;
}

}  // namespace

bool CharClass::contains_wide(uint32_t c) const {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                             [](uint32_t v, const std::pair<uint32_t, uint32_t>& r) { return v < r.first; });
  return it != ranges.begin() && c <= std::prev(it)->second;
}

bool CharClass::intersects(uint32_t lo, uint32_t hi) const {
  // The first range that ends at or after lo must start at or before hi.
  auto it = std::lower_bound(ranges.begin(), ranges.end(), lo,
                             [](const std::pair<uint32_t, uint32_t>& r, uint32_t v) { return r.second < v; });
  return it != ranges.end() && it->first <= hi;
}

CharClass make_char_class(std::vector<std::pair<uint32_t, uint32_t>> ranges, bool negated) {
  for (auto& r : ranges) {
    r.second = std::min(r.second, kMaxCodePoint);
    if (r.first > r.second) r = {1, 0};  // empty: dropped below
  }
  std::erase_if(ranges, [](const auto& r) { return r.first > r.second; });
  normalize_ranges(ranges);
  if (negated) ranges = complement(ranges);
  CharClass cls;
  cls.ranges = without_surrogates(ranges);
  for (const auto& r : cls.ranges) {
    for (uint32_t c = r.first; c <= std::min<uint32_t>(r.second, 127); ++c) cls.ascii[c >> 6] |= uint64_t{1} << (c & 63);
  }
  return cls;
}

}  // namespace parley::grammar
