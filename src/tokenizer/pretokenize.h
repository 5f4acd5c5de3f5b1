#pragma once
// Byte-level BPE pre-tokenization: splitting text into the words that BPE
// merges stay within. Each family (named by tokenizer.ggml.pre) is a sequence
// of split regexes, as the models' tokenizer.json files and llama.cpp define
// them; each regex splits every current piece into its matches and the text
// between them. The regexes are matched by hand-written scanners.
#include <string_view>
#include <vector>

namespace parley {

enum class PreTokenizer { Default, Gpt2, Llama3, Qwen2, DeepseekLlm, DeepseekCoder, Falcon, Starcoder, Bloom, Viking };

struct PreTokenizerSpec {
  PreTokenizer family = PreTokenizer::Default;
  bool ignore_merges = false;  // a word that is itself a token skips merging (Llama 3)
};

// The spec for a tokenizer.ggml.pre name (the names llama.cpp's converter
// writes). Throws parley::Error naming an unknown one: encoding with another
// family's splits would silently give other ids than the model was trained on.
PreTokenizerSpec pre_tokenizer_for(std::string_view name);

// The words of `text`, as views into it, in order; together they cover it.
// Ill-formed UTF-8 bytes act as U+FFFD but stay in the words unchanged.
std::vector<std::string_view> pretokenize(PreTokenizer family, std::string_view text);

}  // namespace parley
