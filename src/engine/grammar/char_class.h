#pragma once
// A set of Unicode scalar values: a GBNF character class, `.`, or one
// character of a literal. Surrogates (U+D800..U+DFFF) are never members: they
// are not characters UTF-8 can carry.
#include <cstdint>
#include <utility>
#include <vector>

namespace parley::grammar {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

struct CharClass {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // inclusive, sorted, disjoint, not adjacent
  uint64_t ascii[2] = {0, 0};                         // membership of 0..127, the common case

  bool contains(uint32_t c) const {
    if (c < 128) return (ascii[c >> 6] >> (c & 63)) & 1;
    return contains_wide(c);
  }
  bool intersects(uint32_t lo, uint32_t hi) const;  // some member in [lo, hi]
  bool empty() const { return ranges.empty(); }

 private:
  bool contains_wide(uint32_t c) const;
};

// The class of the given ranges (any order, may overlap), or of every
// character outside them when negated.
CharClass make_char_class(std::vector<std::pair<uint32_t, uint32_t>> ranges, bool negated);

}  // namespace parley::grammar
