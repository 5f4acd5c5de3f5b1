// Byte-level BPE encoding on small vocabularies built in code.
#include <gtest/gtest.h>

#include "tokenizer/byte_unicode.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace parley {
namespace {

using Ids = std::vector<int32_t>;

// Tokens 0..255: the bytes (in GPT-2's alphabet); then one per merge result,
// then `extra` tokens. `merges` are spelled in the alphabet ("Ġ" is a space).
Vocab byte_level(const std::vector<std::string>& merges, const std::string& pre = "gpt-2",
                 const std::vector<std::string>& extra = {}) {
  Vocab v;
  v.kind = Vocab::Kind::Bpe;
  v.pre = pre;
  v.add_space_prefix = false;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(bytes_to_alphabet(std::string(1, char(b))));
  for (const std::string& m : merges) v.tokens.push_back(m.substr(0, m.find(' ')) + m.substr(m.find(' ') + 1));
  v.tokens.insert(v.tokens.end(), extra.begin(), extra.end());
  v.types.assign(v.tokens.size(), TokenType::Normal);
  v.merges = merges;
  return v;
}

TEST(Bpe, LowerRankMergesFirst) {
  EXPECT_EQ(Tokenizer(byte_level({"b c", "a b"})).encode("abc", false, false), (Ids{'a', 256}));
  EXPECT_EQ(Tokenizer(byte_level({"a b", "b c"})).encode("abc", false, false), (Ids{256, 'c'}));
}

TEST(Bpe, MergesStayWithinPreTokenizedWords) {
  // "ab ab" is "ab" + " ab" ("Ġ" spells the space), so the best-ranked "b Ġ"
  // never applies.
  const Tokenizer tok(byte_level({"b \xC4\xA0", "a b", "\xC4\xA0 ab"}));
  EXPECT_EQ(tok.encode("ab ab", false, false), (Ids{257, 258}));
  EXPECT_EQ(tok.decode({257, 258}), "ab ab");
}

TEST(Bpe, BytesDecodeThroughTheAlphabet) {
  const Tokenizer tok(byte_level({"\xC4\x8A \xC4\x8A"}));  // "Ċ Ċ": two newlines
  const std::string text = "\n\n\t\xC3\xA9\x01";
  const Ids ids = tok.encode(text, false, false);
  EXPECT_EQ(ids, (Ids{256, '\t', 0xC3, 0xA9, 0x01}));
  EXPECT_EQ(tok.decode(ids), text);
}

TEST(Bpe, Llama3UsesWholeWordTokensBeforeMerging) {
  // No merge builds "abc", yet Llama 3 takes the word's own token.
  EXPECT_EQ(Tokenizer(byte_level({"a b"}, "llama-bpe", {"abc"})).encode("abc", false, false), (Ids{257}));
  EXPECT_EQ(Tokenizer(byte_level({"a b"}, "gpt-2", {"abc"})).encode("abc", false, false), (Ids{256, 'c'}));
}

TEST(Bpe, AddsBosOnlyWhenAsked) {
  Vocab v = byte_level({}, "gpt-2", {"<|endoftext|>"});
  v.types.back() = TokenType::Control;
  v.bos = v.eos = 256;
  EXPECT_EQ(Tokenizer(v).encode("a", true, false), (Ids{'a'}));
  v.add_bos = true;
  EXPECT_EQ(Tokenizer(v).encode("a", true, false), (Ids{256, 'a'}));
}

TEST(Bpe, MalformedMergeThrows) {
  Vocab v = byte_level({"a b"});
  v.merges.push_back("ab");
  EXPECT_THROW(Tokenizer{v}, Error);
}

}  // namespace
}  // namespace parley
