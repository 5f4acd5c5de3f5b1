#pragma once
// Grammar-constrained decoding: GBNF grammars (and JSON / JSON Schema ones
// turned into GBNF), a matcher that follows one sequence's text through a
// grammar byte by byte, and the mask of the vocabulary's tokens that may come
// next. Design and limits: docs/grammar.md.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace parley::grammar {

class Grammar;  // immutable compiled grammar, shared by many sequences/threads (const methods thread-safe)

// Parses GBNF (llama.cpp's grammar format: `name ::= alternatives`, `|`,
// `( )`, "literals", [classes], `.`, * + ? {m} {m,} {m,n}, `#` comments).
// Throws parley::Error with a message saying what and where (line:column):
// syntax errors, undefined rules, a missing root rule, left recursion (also
// through nullable prefixes), a root that can match nothing, and size bounds
// (text > 1 MiB, too many rules or elements, repetition bounds > 10000, groups
// nested deeper than 100).
std::shared_ptr<const Grammar> parse_gbnf(std::string_view text, std::string_view root = "root");

// The built-in JSON grammar (an RFC 8259 value; at most one newline and 20
// spaces or tabs, or one space, between tokens, none before or after the
// value). object_only: the value must be an object (OpenAI's json_object).
const std::string& json_gbnf(bool object_only);

// JSON Schema -> GBNF: the top rule is named `root`, every helper `root-...`,
// so grammars of several schemas concatenate with distinct roots. What is
// supported and what is refused (parley::Error naming the keyword): see
// json_schema.cpp's header comment and docs/grammar.md. nlohmann::json keeps
// object keys sorted, so properties come in alphabetical order; the _ordered
// form takes an ordered_json and keeps the schema's order (a separate name, so
// that braced initializers still pick the first).
std::string json_schema_to_gbnf(const nlohmann::json& schema, std::string_view root = "root");
std::string json_schema_to_gbnf_ordered(const nlohmann::ordered_json& schema, std::string_view root = "root");

// The vocabulary as byte strings, built once per model and shared (const).
// pieces[i]: the bytes token i adds to the text; an empty string marks a token
// a grammar never allows (control tokens, EOS: see Matcher::can_end()).
class TokenTrie {
 public:
  explicit TokenTrie(const std::vector<std::string>& pieces);
  int32_t size() const { return size_; }  // number of tokens

  // The trie in depth-first order: a node's subtree is the nodes after it up
  // to `skip`; its tokens are token_ids()[node.tokens, next node's .tokens).
  struct Node {
    uint32_t skip;    // index of the first node after this node's subtree
    uint32_t tokens;  // first of this node's entries in token_ids()
    uint16_t depth;   // 1 for a piece's first byte
    uint8_t byte;
  };
  const std::vector<Node>& nodes() const { return nodes_; }  // plus a sentinel at the end
  const std::vector<int32_t>& token_ids() const { return token_ids_; }
  int32_t max_depth() const { return max_depth_; }

 private:
  std::vector<Node> nodes_;
  std::vector<int32_t> token_ids_;
  int32_t size_ = 0;
  int32_t max_depth_ = 0;
};

// One sequence's position in a grammar: the set of parse stacks still alive,
// and the bytes of a UTF-8 character begun but not finished. Copyable (a few
// small vectors). A Matcher is used by one thread at a time; copies are
// independent.
class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> grammar);
  // Consumes bytes (they may end inside a UTF-8 character; the rest comes
  // with the next call). Returns false and leaves the state unchanged when the
  // bytes cannot continue a match. These and allowed_tokens() throw
  // parley::Error when a grammar is so ambiguous that more than 10000 parse
  // stacks would be alive at once.
  bool accept(std::string_view bytes);
  bool allows(std::string_view bytes) const;  // accept() would succeed
  bool can_end() const;   // what was accepted is a complete match of root (EOS may be sampled)
  bool must_end() const;  // complete and no byte can follow (the caller stops the sequence)
  // mask[i] = 1 when token i's piece is non-empty and allows(piece), else 0;
  // mask is resized to trie.size().
  void allowed_tokens(const TokenTrie& trie, std::vector<uint8_t>& mask) const;

  // The state itself, as the automaton (automaton.h) reads and writes it.
  struct State {
    std::vector<int32_t> stacks;  // each stack: its depth, then element positions bottom to top
    uint32_t utf8 = 0;            // a character in progress (utf8_step.h), 0 when none
    bool complete = false;        // root has matched all of the text
  };

 private:
  std::shared_ptr<const Grammar> grammar_;
  State state_;
};

}  // namespace parley::grammar
