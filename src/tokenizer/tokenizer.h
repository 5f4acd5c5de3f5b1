#pragma once
// Text <-> token ids for SentencePiece-style (Llama) and byte-level BPE vocabularies.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace parley {

class Tokenizer {
 public:
  explicit Tokenizer(Vocab vocab);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // add_special: BOS (and EOS) as the vocabulary's add_bos/add_eos flags say.
  // parse_special: recognise control/user-defined token texts such as
  // "<|im_start|>" in `text`; otherwise they are tokenised as plain text.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes a token stands for (byte tokens and byte-level BPE decoded,
  // SentencePiece "▁" as a space). Control tokens decode to "" unless `special`.
  std::string token_to_piece(int32_t id, bool special = false) const;
  std::string decode(const std::vector<int32_t>& ids, bool special = false) const;

  const Vocab& vocab() const;
  bool is_eog(int32_t id) const;  // end of generation: EOS, EOT and similar

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Turns a stream of token ids into text without ever emitting part of a UTF-8
// character: bytes of an incomplete character are held until it completes.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tok) : tok_(&tok) {}
  std::string push(int32_t id);  // complete characters now available
  std::string flush();           // what is left (invalid bytes as U+FFFD)
 private:
  const Tokenizer* tok_;
  std::string pending_;
  bool first_ = true;
};

}  // namespace parley
