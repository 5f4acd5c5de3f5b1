#include "tokenizer/pretokenize.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "tokenizer/unicode.h"
#include "util/error.h"

namespace parley {
namespace {

using Text = std::u32string_view;
using unicode::is_letter;
using unicode::is_number;
using unicode::is_whitespace;

// A scanner returns the length of its regex's match starting at `pos` of `s`
// (0: no match). `s` is the piece being split, so `$` and look-ahead stop at its end.
using Scanner = size_t (*)(Text s, size_t pos);
using Pred = bool (*)(char32_t);

struct CharRange {
  char32_t lo, hi;
};

bool in_ranges(const CharRange* ranges, size_t n, char32_t c) {
  return std::any_of(ranges, ranges + n, [c](CharRange r) { return c >= r.lo && c <= r.hi; });
}

bool is_newline(char32_t c) { return c == '\r' || c == '\n'; }
bool is_other(char32_t c) { return !is_whitespace(c) && !is_letter(c) && !is_number(c); }  // [^\s\p{L}\p{N}]
bool is_ascii_digit(char32_t c) { return c >= '0' && c <= '9'; }

// [\p{P}\$\+<=>\^~\|] (Default) and the same with a backquote (Falcon).
bool is_punct_or_operator(char32_t c) {
  return unicode::is_punctuation(c) || std::u32string_view(U"$+<=>^~|").find(c) != Text::npos;
}
bool is_punct_or_operator_or_backquote(char32_t c) { return c == '`' || is_punct_or_operator(c); }

// DeepSeek LLM's explicit classes: cased letters, ASCII/full-width punctuation, CJK.
constexpr CharRange kDeepseekLetters[] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
    {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377},
    {0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
    {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556},
    {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF},
    {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
    {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
    {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113},
    {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128},
    {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
    {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787},
    {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};
constexpr CharRange kDeepseekPunct[] = {{0x21, 0x2F}, {0x3A, 0x7E}, {0xFF01, 0xFF0F},
                                        {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002}};
constexpr CharRange kCjk[] = {{0x4E00, 0x9FA5}, {0x800, 0x4E00}, {0xAC00, 0xD7FF}};

bool is_deepseek_letter(char32_t c) { return in_ranges(kDeepseekLetters, std::size(kDeepseekLetters), c); }
bool is_deepseek_punct(char32_t c) { return in_ranges(kDeepseekPunct, std::size(kDeepseekPunct), c); }
bool is_cjk(char32_t c) { return in_ranges(kCjk, std::size(kCjk), c); }

size_t run_length(Text s, size_t pos, Pred pred) {
  size_t end = pos;
  while (end < s.size() && pred(s[end])) ++end;
  return end - pos;
}

template <Pred P>
size_t one_of(Text s, size_t pos) {  // [X]
  return P(s[pos]) ? 1 : 0;
}

template <Pred P>
size_t run_of(Text s, size_t pos) {  // [X]+
  return run_length(s, pos, P);
}

template <Pred P>
size_t space_then_run(Text s, size_t pos) {  // \s?[X]+
  if (is_whitespace(s[pos]) && pos + 1 < s.size() && P(s[pos + 1])) return 1 + run_length(s, pos + 1, P);
  return run_length(s, pos, P);
}

size_t three_ascii_digits(Text s, size_t pos) {  // [0-9][0-9][0-9]
  return run_length(s.substr(0, std::min(s.size(), pos + 3)), pos, is_ascii_digit) == 3 ? 3 : 0;
}

size_t trailing_whitespace(Text s, size_t pos) {  // \s+$
  const size_t n = run_length(s, pos, is_whitespace);
  return pos + n == s.size() ? n : 0;
}

// 's|'t|'re|'ve|'m|'ll|'d, optionally ASCII case-insensitive.
size_t contraction(Text s, size_t pos, bool any_case) {
  if (s[pos] != '\'') return 0;
  auto at = [&](size_t i) -> char32_t {
    if (i >= s.size()) return 0;
    return any_case && s[i] >= 'A' && s[i] <= 'Z' ? s[i] + ('a' - 'A') : s[i];
  };
  const char32_t a = at(pos + 1), b = at(pos + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// \s+(?!\S): a whitespace run, less its last character when a word follows
// (that one then prefixes the word). 0 for a single space before a word.
size_t spaces_before_word(Text s, size_t pos) {
  const size_t n = run_length(s, pos, is_whitespace);
  return pos + n == s.size() ? n : n - std::min<size_t>(n, 1);
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
size_t gpt2(Text s, size_t pos) {
  if (size_t n = contraction(s, pos, false)) return n;
  const size_t p = (s[pos] == ' ' && pos + 1 < s.size()) ? pos + 1 : pos;
  for (Pred cls : {is_letter, is_number, is_other}) {
    if (cls(s[p])) return p - pos + run_length(s, p, cls);
  }
  return spaces_before_word(s, pos);
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t llama3_like(Text s, size_t pos, size_t max_digits) {
  if (size_t n = contraction(s, pos, true)) return n;
  const char32_t c = s[pos];
  if (is_letter(c)) return run_length(s, pos, is_letter);
  if (!is_newline(c) && !is_number(c) && pos + 1 < s.size() && is_letter(s[pos + 1])) {
    return 1 + run_length(s, pos + 1, is_letter);
  }
  if (is_number(c)) return std::min(max_digits, run_length(s, pos, is_number));
  const size_t p = (c == ' ' && pos + 1 < s.size()) ? pos + 1 : pos;
  if (is_other(s[p])) {
    const size_t end = p + run_length(s, p, is_other);
    return end - pos + run_length(s, end, is_newline);
  }
  // Whitespace: up to the last line break in the run, if any.
  const size_t n = run_length(s, pos, is_whitespace);
  for (size_t i = n; i > 0; --i) {
    if (is_newline(s[pos + i - 1])) return i;
  }
  return std::max<size_t>(spaces_before_word(s, pos), 1);
}

// [^(\s|.,!?…。，、।۔،)]: not whitespace, the brackets or bar of the class as
// written, nor sentence punctuation (BLOOM, Poro, GPT-3 Finnish, Viking).
bool is_bloom_word_char(char32_t c) {
  constexpr Text kStops = U"(|).,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C";
  return !is_whitespace(c) && kStops.find(c) == Text::npos;
}

//  ?[^(\s|.,!?…。，、।۔،)]+
size_t bloom(Text s, size_t pos) {
  if (s[pos] == ' ') {
    const size_t n = run_length(s, pos + 1, is_bloom_word_char);
    return n ? 1 + n : 0;
  }
  return run_length(s, pos, is_bloom_word_char);
}

size_t llama3(Text s, size_t pos) { return llama3_like(s, pos, 3); }
size_t qwen2(Text s, size_t pos) { return llama3_like(s, pos, 1); }

struct Family {
  PreTokenizer id;
  std::vector<Scanner> passes;
};

const std::vector<Family>& families() {
  static const std::vector<Family> table = {
      {PreTokenizer::Default,
       {run_of<is_punct_or_operator>, gpt2, run_of<is_number>, three_ascii_digits}},
      {PreTokenizer::Gpt2, {gpt2}},
      {PreTokenizer::Llama3, {llama3}},
      {PreTokenizer::Qwen2, {qwen2}},
      {PreTokenizer::DeepseekLlm,
       {one_of<is_newline>, space_then_run<is_deepseek_letter>, space_then_run<is_deepseek_punct>,
        trailing_whitespace, run_of<is_cjk>, run_of<is_number>}},
      {PreTokenizer::DeepseekCoder,
       {one_of<is_newline>, space_then_run<is_letter>, space_then_run<unicode::is_punctuation>,
        run_of<is_cjk>, one_of<is_number>}},
      {PreTokenizer::Falcon, {run_of<is_punct_or_operator_or_backquote>, gpt2, three_ascii_digits}},
      {PreTokenizer::Starcoder, {one_of<is_number>, gpt2}},
      {PreTokenizer::Bloom, {bloom}},
      {PreTokenizer::Viking, {bloom, one_of<is_number>}},
  };
  return table;
}

struct Piece {
  size_t begin, size;  // in code points
};

// Splits `piece` of `cps` into the matches of `scan` and the text between them.
void split_piece(Text cps, Piece piece, Scanner scan, std::vector<Piece>& out) {
  const Text s = cps.substr(piece.begin, piece.size);
  size_t gap = 0, pos = 0;
  while (pos < s.size()) {
    const size_t n = scan(s, pos);
    if (n == 0) {
      ++pos;
      continue;
    }
    if (gap < pos) out.push_back({piece.begin + gap, pos - gap});
    out.push_back({piece.begin + pos, n});
    pos += n;
    gap = pos;
  }
  if (gap < s.size()) out.push_back({piece.begin + gap, s.size() - gap});
}

}  // namespace

PreTokenizerSpec pre_tokenizer_for(std::string_view name) {
  struct Named {
    std::string_view name;
    PreTokenizer family;
    bool ignore_merges;
  };
  using P = PreTokenizer;
  static constexpr Named kNames[] = {
      {"default", P::Default, false},
      // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
      {"gpt-2", P::Gpt2, false},           {"gpt2", P::Gpt2, false},          {"gpt-neox", P::Gpt2, false},
      {"mpt", P::Gpt2, false},             {"olmo", P::Gpt2, false},          {"phi-2", P::Gpt2, false},
      {"jais", P::Gpt2, false},            {"gigachat", P::Gpt2, false},      {"jina-es", P::Gpt2, false},
      {"jina-de", P::Gpt2, false},         {"jina-v2-es", P::Gpt2, false},    {"jina-v2-de", P::Gpt2, false},
      {"a.x-4.0", P::Gpt2, false},         {"mellum", P::Gpt2, false},        {"exaone4", P::Gpt2, false},
      // Llama 3's regex (digits in threes); its family also skips merging whole-token words
      {"llama3", P::Llama3, true},         {"llama-v3", P::Llama3, true},     {"llama-bpe", P::Llama3, true},
      {"falcon3", P::Llama3, true},        {"falcon-h1", P::Llama3, true},    {"pixtral", P::Llama3, true},
      {"midm-2.0", P::Llama3, true},       {"lfm2", P::Llama3, true},         {"dbrx", P::Llama3, false},
      {"smaug-bpe", P::Llama3, false},     {"chatglm-bpe", P::Llama3, false}, {"glm4", P::Llama3, false},
      // Qwen2's regex (single digits)
      {"qwen2", P::Qwen2, false},          {"stablelm2", P::Qwen2, false},    {"deepseek-r1-qwen", P::Qwen2, false},
      {"megrez", P::Qwen2, false},         {"kormo", P::Qwen2, false},
      {"deepseek-llm", P::DeepseekLlm, false}, {"deepseek-coder", P::DeepseekCoder, false},
      {"falcon", P::Falcon, false},
      // \p{N}, then GPT-2's regex
      {"starcoder", P::Starcoder, false},  {"refact", P::Starcoder, false},   {"command-r", P::Starcoder, false},
      {"smollm", P::Starcoder, false},     {"codeshell", P::Starcoder, false}, {"exaone", P::Starcoder, false},
      {"minerva-7b", P::Starcoder, false},
      {"bloom", P::Bloom, false},          {"poro-chat", P::Bloom, false},    {"gpt3-finnish", P::Bloom, false},
      {"viking", P::Viking, false},
  };
  for (const Named& n : kNames) {
    if (n.name == name) return {n.family, n.ignore_merges};
  }
  std::string known;
  for (const Named& n : kNames) known += (known.empty() ? "" : ", ") + std::string(n.name);
  throw Error("unknown pre-tokenizer \"" + std::string(name) + "\" (tokenizer.ggml.pre); known: " + known);
}

std::vector<std::string_view> pretokenize(PreTokenizer family, std::string_view text) {
  std::u32string cps;
  std::vector<size_t> offsets;  // byte offset of each code point, then text.size()
  for (size_t pos = 0; pos < text.size();) {
    const unicode::Utf8Step step = unicode::decode_utf8(text, pos);
    cps.push_back(step.cp);
    offsets.push_back(pos);
    pos += step.len;
  }
  offsets.push_back(text.size());

  std::vector<Piece> pieces;
  if (!cps.empty()) pieces.push_back({0, cps.size()});
  const auto it = std::find_if(families().begin(), families().end(),
                               [family](const Family& f) { return f.id == family; });
  for (Scanner scan : it->passes) {
    std::vector<Piece> next;
    for (const Piece& piece : pieces) split_piece(cps, piece, scan, next);
    pieces = std::move(next);
  }

  std::vector<std::string_view> words;
  words.reserve(pieces.size());
  for (const Piece& p : pieces) {
    words.push_back(text.substr(offsets[p.begin], offsets[p.begin + p.size] - offsets[p.begin]));
  }
  return words;
}

}  // namespace parley
