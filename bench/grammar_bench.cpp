// bench_grammar: Matcher::allowed_tokens() over a vocabulary (a GGUF file's,
// default ../shared/tokenizers/ggml-vocab-llama-spm.gguf; a synthetic one of
// 32000 pieces when it is absent or "--synthetic" is given) at positions of
// the JSON grammar and of a JSON Schema grammar: the first call on a fresh
// grammar (the automaton is built as the trie is walked) and the best of 50
// warm calls, by thread CPU time; then allows() of a 5-byte piece.
//   bench_grammar [VOCAB.gguf | --synthetic]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "thread_time.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace parley::grammar;

std::vector<std::string> synthetic_vocabulary() {
  std::mt19937 rng(1);
  const std::string letters = "abcdefghijklmnopqrstuvwxyz      ,.:\"{}[]0123456789";
  std::vector<std::string> pieces;
  for (int b = 0; b < 256; ++b) pieces.emplace_back(1, static_cast<char>(b));
  while (pieces.size() < 32000) {
    std::string p;
    for (size_t n = 2 + rng() % 7; p.size() < n;) p += letters[rng() % letters.size()];
    pieces.push_back(p);
  }
  return pieces;
}

std::vector<std::string> vocabulary(int argc, char** argv, std::string& name) {
  std::string path = PARLEY_SHARED_DIR "/tokenizers/ggml-vocab-llama-spm.gguf";
  if (argc > 1) path = argv[1];
  if (path == "--synthetic" || !std::filesystem::exists(path)) {
    name = "synthetic";
    return synthetic_vocabulary();
  }
  name = std::filesystem::path(path).filename().string();
  const parley::Tokenizer tokenizer = parley::Tokenizer::from_gguf(path);
  std::vector<std::string> pieces;
  for (int32_t id = 0; id < tokenizer.vocab().size(); ++id) pieces.push_back(tokenizer.token_to_piece(id));
  return pieces;
}

void measure(const std::string& gbnf, const char* label, const std::string& prefix, const TokenTrie& trie) {
  std::vector<uint8_t> mask;
  auto grammar = parse_gbnf(gbnf);  // fresh: its automaton is empty
  Matcher m(grammar);
  if (!m.accept(prefix)) {
    std::printf("%-28s prefix not accepted\n", label);
    return;
  }
  double t0 = thread_seconds();
  m.allowed_tokens(trie, mask);
  const double cold = thread_seconds() - t0;
  double best = 1e30;
  for (int i = 0; i < 50; ++i) {
    t0 = thread_seconds();
    m.allowed_tokens(trie, mask);
    best = std::min(best, thread_seconds() - t0);
  }
  const auto allowed = std::count(mask.begin(), mask.end(), 1);
  std::printf("%-28s allowed %6ld  first %8.3f ms  warm %8.3f ms\n", label, static_cast<long>(allowed), cold * 1e3,
              best * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  std::string name;
  const std::vector<std::string> pieces = vocabulary(argc, argv, name);
  double t0 = thread_seconds();
  const TokenTrie trie(pieces);
  std::printf("vocabulary %s, %zu tokens, %zu trie nodes, trie built in %.1f ms\n", name.c_str(), pieces.size(),
              trie.nodes().size() - 1, (thread_seconds() - t0) * 1e3);
  const std::string& json = json_gbnf(false);
  measure(json, "json: start", "", trie);
  measure(json, "json: after {", "{", trie);
  measure(json, "json: in a key", "{\"na", trie);
  measure(json, "json: in a string value", "{\"name\": \"Hello wor", trie);
  measure(json, "json: in a number", "{\"n\": [12", trie);
  measure(json, "json: nested 6 deep", "[[[{\"a\": [{\"b\": \"x", trie);
  const std::string schema = json_schema_to_gbnf(nlohmann::json::parse(R"({"type": "object", "properties": {
      "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0, "maximum": 150},
      "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["name", "age"]})"));
  measure(schema, "schema: after {", "{", trie);
  measure(schema, "schema: in name value", "{\"age\": 3, \"name\": \"Bob Sm", trie);
  Matcher m(parse_gbnf(json));
  m.accept("{\"name\": \"");
  volatile bool sink = false;
  m.allows("Hello");  // builds the transitions once
  t0 = thread_seconds();
  for (int i = 0; i < 100000; ++i) sink = sink ^ m.allows("Hello");
  std::printf("allows(\"Hello\") in a string     %8.3f us\n", (thread_seconds() - t0) / 100000 * 1e6);
  t0 = thread_seconds();
  for (int i = 0; i < 10000; ++i) {
    Matcher copy = m;
    sink = sink ^ copy.accept("Hello");
  }
  std::printf("copy + accept(\"Hello\")          %8.3f us\n", (thread_seconds() - t0) / 10000 * 1e6);
}
