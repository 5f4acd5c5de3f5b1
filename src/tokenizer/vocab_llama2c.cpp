// load_llama2c_vocab: a Vocab from llama2.c's tokenizer.bin: i32
// max_token_length, then per token f32 score, i32 length, the bytes. Its
// tokens spell spaces as ' ' (not "▁") and BOS/EOS as "\n<s>\n", "\n</s>\n".
#include <cmath>
#include <cstring>
#include <string>

#include "tokenizer/spm.h"
#include "tokenizer/vocab.h"
#include "util/error.h"
#include "util/mapped_file.h"

namespace parley {
namespace {

constexpr int32_t kMaxTokenLength = 1 << 16;
constexpr int32_t kMaxVocabSize = 1 << 24;

// Reads the file front to back; `what` and `token` (-1: none) name the field
// for the error message.
class Reader {
 public:
  explicit Reader(const MappedFile& f) : f_(f) {}

  template <class T>
  T read(const char* what, int32_t token) {
    T value;
    std::memcpy(&value, take(sizeof value, what, token), sizeof value);
    return value;
  }
  std::string bytes(size_t n, int32_t token) {
    return std::string(reinterpret_cast<const char*>(take(n, "text", token)), n);
  }

 private:
  const uint8_t* take(size_t n, const char* what, int32_t token) {
    if (f_.size() - pos_ < n) {
      throw Error(f_.path() + ": truncated llama2.c tokenizer: expected the " + what +
                  (token >= 0 ? " of token " + std::to_string(token) : std::string()) + " (" +
                  std::to_string(n) + " bytes) at offset " + std::to_string(pos_) + ", but the file has " +
                  std::to_string(f_.size()) + " bytes");
    }
    const uint8_t* p = f_.data() + pos_;
    pos_ += n;
    return p;
  }

  const MappedFile& f_;
  size_t pos_ = 0;
};

// Adds one token, normalised to GGUF's Llama conventions.
void add_token(Vocab& v, std::string text, float score) {
  const int32_t id = v.size();
  TokenType type = TokenType::Normal;
  if (text == "\n<s>\n" || text == "<s>") {
    text = "<s>", type = TokenType::Control, v.bos = id;
  } else if (text == "\n</s>\n" || text == "</s>") {
    text = "</s>", type = TokenType::Control, v.eos = id;
  } else if (text == "<unk>") {
    type = TokenType::Unknown, v.unk = id;
  } else if (parse_byte_token(text)) {
    type = TokenType::Byte;
  } else {
    text = escape_spm_spaces(text, false);
  }
  v.tokens.push_back(std::move(text));
  v.scores.push_back(score);
  v.types.push_back(type);
}

}  // namespace

Vocab load_llama2c_vocab(const std::string& path, int32_t vocab_size) {
  if (vocab_size <= 0 || vocab_size > kMaxVocabSize) {
    throw Error(path + ": llama2.c vocabulary size " + std::to_string(vocab_size) + " is not in 1.." +
                std::to_string(kMaxVocabSize));
  }
  const MappedFile file(path);
  Reader in(file);
  const int32_t max_len = in.read<int32_t>("max_token_length", -1);
  if (max_len <= 0 || max_len > kMaxTokenLength) {
    throw Error(path + ": llama2.c tokenizer max_token_length " + std::to_string(max_len) + " is not in 1.." +
                std::to_string(kMaxTokenLength));
  }
  Vocab v;
  v.kind = Vocab::Kind::Spm;
  v.add_bos = true;
  v.add_space_prefix = true;
  for (int32_t i = 0; i < vocab_size; ++i) {
    const float score = in.read<float>("score", i);
    if (!std::isfinite(score)) throw Error(path + ": the score of token " + std::to_string(i) + " is not finite");
    const int32_t len = in.read<int32_t>("length", i);
    if (len < 0 || len > max_len) {
      throw Error(path + ": token " + std::to_string(i) + " has length " + std::to_string(len) +
                  ", expected 0.." + std::to_string(max_len) + " (max_token_length)");
    }
    add_token(v, in.bytes(size_t(len), i), score);
  }
  return v;
}

}  // namespace parley
