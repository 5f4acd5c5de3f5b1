#include "tokenizer/bpe.h"

#include <string>

#include "tokenizer/byte_unicode.h"
#include "tokenizer/merge.h"
#include "util/error.h"

namespace parley {

BpeEncoder::BpeEncoder(const Vocab& vocab, const TokenIndex& index) : index_(&index), unk_(vocab.unk) {
  for (int b = 0; b < 256; ++b) byte_tokens_[b] = index.find(bytes_to_alphabet(std::string(1, char(b))));
  rules_.reserve(vocab.merges.size());
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string& m = vocab.merges[rank];
    const size_t space = m.find(' ', 1);  // from 1: a left part may itself be a space
    if (space == std::string::npos) {
      throw Error("BPE merge #" + std::to_string(rank) + " \"" + m + "\" is not of the form \"left right\"");
    }
    const std::string left = m.substr(0, space), right = m.substr(space + 1);
    const int32_t l = index.find(left), r = index.find(right), merged = index.find(left + right);
    // A rule whose parts or result are no tokens can never apply; the first rank wins.
    if (l >= 0 && r >= 0 && merged >= 0) rules_.emplace(key(l, r), Rule{int32_t(rank), merged});
  }
}

void BpeEncoder::encode_word(std::string_view word, bool ignore_merges, std::vector<int32_t>& out) const {
  if (ignore_merges) {
    const int32_t whole = index_->find(bytes_to_alphabet(word));
    if (whole >= 0) {
      out.push_back(whole);
      return;
    }
  }
  std::vector<detail::Symbol> bytes;
  bytes.reserve(word.size());
  for (uint32_t i = 0; i < word.size(); ++i) bytes.push_back({byte_tokens_[uint8_t(word[i])], i, i + 1});
  auto pair = [&](int32_t l, int32_t r) -> std::optional<detail::Merge> {
    const auto it = rules_.find(key(l, r));
    if (it == rules_.end()) return std::nullopt;
    return detail::Merge{-double(it->second.rank), it->second.merged};
  };
  for (const detail::Symbol& s : detail::merge_symbols(bytes, pair)) {
    if (s.id >= 0) {
      out.push_back(s.id);
    } else if (unk_ >= 0) {
      out.push_back(unk_);  // only a vocabulary lacking a byte's character gets here
    }
  }
}

}  // namespace parley
