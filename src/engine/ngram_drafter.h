#pragma once
// Prompt lookup: drafts for a sequence from its own tokens (prompt and output
// so far), no second model. Text that repeats itself (code edits, quotes,
// summaries of a passage, lists) continues as it did the last time its
// recent tokens appeared.
#include <cstdint>
#include <span>
#include <vector>

namespace parley {

// The longest suffix of `tokens` (of kMaxNgram tokens down to 1) that also
// occurs earlier, its latest occurrence, and up to k of the tokens that
// followed it there, appended to `out`. Returns how many (0: no match).
constexpr int32_t kMaxNgram = 3;
int32_t ngram_draft(std::span<const int32_t> tokens, int32_t k, std::vector<int32_t>& out);

}  // namespace parley
