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
  // Throws parley::Error for an inconsistent vocabulary (array lengths, ids)
  // or a BPE pre-tokenizer (Vocab::pre) it does not know.
  explicit Tokenizer(Vocab vocab);
  // The tokenizer of a GGUF file from its tokenizer.ggml.* metadata alone:
  // any architecture, and vocabulary-only files (no tensors) too. Throws
  // parley::Error naming the file.
  static Tokenizer from_gguf(const std::string& path);
  static Tokenizer from_gguf(const gguf::File& file);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // add_special: BOS (and EOS) as the vocabulary's add_bos/add_eos flags say.
  // Texts of user-defined tokens (tokenizer.ggml.token_type 4, Hugging Face's
  // non-special added tokens) in `text` always become those tokens, before
  // pre-tokenization. parse_special: so do the texts of control and unknown
  // tokens such as "<|im_start|>"; otherwise they are tokenised as plain text.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes a token stands for (byte tokens and byte-level BPE decoded,
  // SentencePiece "▁" as a space). Control tokens decode to "" unless `special`.
  // Throws parley::Error for an id outside the vocabulary.
  std::string token_to_piece(int32_t id, bool special = false) const;
  // The piece as decode() renders it in place: with SPM vocabularies that add
  // a space prefix, the piece that starts the text (`text_start`) or follows
  // BOS (`prev`, -1 for none) loses the leading space the prefix added.
  std::string token_to_piece_in_text(int32_t id, bool text_start, int32_t prev, bool special = false) const;
  std::string decode(const std::vector<int32_t>& ids, bool special = false) const;

  const Vocab& vocab() const;
  void set_chat_template(std::string chat_template);  // replaces tokenizer.chat_template
  bool is_eog(int32_t id) const;  // end of generation: EOS, EOT and similar

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Turns a stream of token ids into text without ever emitting part of a UTF-8
// character: bytes of an incomplete character are held until it completes.
// Every result is valid UTF-8 (invalid bytes become U+FFFD); control tokens
// give "". By default the stream continues text already shown (generation
// after a prompt): `prev` is the id shown last (the prompt's last token), and
// a leading space is dropped, as decode() does, only after BOS. `text_start`:
// the stream is the whole text, decoded exactly as decode() does.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tok, bool text_start = false, int32_t prev = -1)
      : tok_(&tok), first_(text_start), prev_(prev) {}
  std::string push(int32_t id);  // complete characters now available
  std::string flush();           // what is left (an unfinished character as U+FFFD)
 private:
  const Tokenizer* tok_;
  std::string pending_;
  bool first_ = true;
  int32_t prev_ = -1;
};

}  // namespace parley
