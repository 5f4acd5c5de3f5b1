#pragma once
// A Jinja interpreter for the subset of the language chat templates use,
// configured as Hugging Face transformers configures Jinja (trim_blocks,
// lstrip_blocks, loop controls, its tojson, raise_exception, strftime_now).
// docs/chat-templates.md lists what is supported.
#include <memory>
#include <string_view>

#include "chat/jinja_value.h"

namespace parley::chat::jinja {

// Bounds on one rendering, so that a hostile template fails instead of
// running for ever (sizes are bounded by kMaxSize, nesting by fixed depths).
struct Limits {
  size_t max_steps = 10'000'000;  // evaluated expressions, statements and loop iterations
};

class Template {
 public:
  // Throws parley::Error naming the line and column of a syntax error.
  explicit Template(std::string_view source);
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // `variables` are the template's globals (messages, bos_token...). Strings
  // built from message data keep their marks in the result. Throws
  // parley::Error with the position of a failure (including raise_exception).
  // Safe to call from several threads at once.
  Text render(const Dict& variables, const Limits& limits = {}) const;

 private:
  struct Impl;
  std::unique_ptr<const Impl> impl_;
};

}  // namespace parley::chat::jinja
