#pragma once
// Structured output: `response_format` (json_object, json_schema) and
// `grammar` (GBNF) turned into the grammar the engine keeps the answer to
// (docs/api.md, "Structured output"). Compiled grammars are cached by their
// source, so a schema sent with every request is compiled once.
#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/grammar/grammar.h"
#include "serve/api/json_fields.h"

namespace parley::serve {

class GrammarCache {
 public:
  explicit GrammarCache(size_t capacity = 256) : capacity_(capacity) {}
  // The grammar `key` names (a schema's text), made by `gbnf` and compiled
  // on a miss only. Throws what `gbnf` throws, parley::Error when the text
  // does not compile.
  std::shared_ptr<const grammar::Grammar> get(const std::string& key, const std::function<std::string()>& gbnf);
  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const grammar::Grammar>>;
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

// What the answer is held to: null grammar for free text.
struct OutputGrammar {
  std::shared_ptr<const grammar::Grammar> grammar;
  std::vector<std::string> triggers;  // the grammar applies from one of these on (tool calls, `auto`)
  std::string key;                    // its source, for the response cache
  bool json = false;                  // response_format asked for JSON
};

// `response_format` and `grammar` of a body (at most one of them). A schema
// or grammar that cannot be honoured is a 400 naming the field and why.
// `raw`: the body's text (a schema's properties are written in its order).
OutputGrammar parse_output_format(const json& body, std::string_view raw, GrammarCache& cache);

// The grammar for the GBNF text `gbnf` makes, a 400 naming `param` when it does not compile.
std::shared_ptr<const grammar::Grammar> compile_grammar(GrammarCache& cache, const std::string& key,
                                                        const std::function<std::string()>& gbnf,
                                                        const std::string& param);

}  // namespace parley::serve
