#include "engine/ngram_drafter.h"

#include <algorithm>

namespace parley {

int32_t ngram_draft(std::span<const int32_t> tokens, int32_t k, std::vector<int32_t>& out) {
  const auto size = int32_t(tokens.size());
  for (int32_t n = std::min(kMaxNgram, size - 1); n >= 1 && k > 0; --n) {
    const std::span<const int32_t> suffix = tokens.last(size_t(n));
    // Latest first: the most recent context is the likeliest to repeat.
    for (int32_t start = size - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
      const int32_t from = start + n, take = std::min(k, size - from);
      out.insert(out.end(), tokens.begin() + from, tokens.begin() + from + take);
      return take;
    }
  }
  return 0;
}

}  // namespace parley
