#pragma once
// Byte-level BPE encoding of one pre-tokenized word: its bytes, spelled in
// GPT-2's byte alphabet, are merged pairwise in merge-rank order.
#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/token_index.h"
#include "tokenizer/vocab.h"

namespace parley {

class BpeEncoder {
 public:
  // Throws parley::Error for a merge that is not "left right". `index` must outlive this.
  BpeEncoder(const Vocab& vocab, const TokenIndex& index);
  // ignore_merges: a word that is itself a token becomes that token (Llama 3).
  void encode_word(std::string_view word, bool ignore_merges, std::vector<int32_t>& out) const;

 private:
  struct Rule {
    int32_t rank, merged;
  };
  static uint64_t key(int32_t left, int32_t right) { return uint64_t(uint32_t(left)) << 32 | uint32_t(right); }

  const TokenIndex* index_;
  int32_t unk_;
  std::array<int32_t, 256> byte_tokens_{};  // the token of each byte's alphabet character, or -1
  std::unordered_map<uint64_t, Rule> rules_;  // (left id, right id) -> rank and result
};

}  // namespace parley
