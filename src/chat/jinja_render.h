#pragma once
// The state of one rendering: variable scopes, the output being written and
// the budget that stops runaway templates.
#include <string>
#include <string_view>

#include "chat/jinja_ast.h"

namespace parley::chat::jinja {

// "template error at line L, column C: message" for a byte offset of `source`.
std::string error_at(std::string_view source, size_t pos, std::string_view message);

class Renderer {
 public:
  // Variables of one scope; scopes chain to their parent.
  struct Frame {
    Frame* parent = nullptr;
    Dict vars;
  };

  // Enters a new scope with the given parent for its lifetime.
  class Scope {
   public:
    Scope(Renderer& r, Frame* parent) : r_(r), saved_(r.current_) {
      frame_.parent = parent;
      r.current_ = &frame_;
    }
    ~Scope() { r_.current_ = saved_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Dict& vars() { return frame_.vars; }

   private:
    Renderer& r_;
    Frame* saved_;
    Frame frame_;
  };

  Renderer(std::string_view source, const Dict& variables, size_t max_steps);

  Text render(const Body& body);
  Flow run(const Body& body);
  Text capture(const Body& body);  // renders into a fresh buffer
  void write(const Text& t);

  Value lookup(std::string_view name) const;
  void assign(std::string_view name, Value v);  // in the innermost scope
  Frame* current() { return current_; }
  Frame* root() { return &root_; }

  void tick();  // one step of work; fails past the budget
  [[noreturn]] void fail_at(size_t pos, std::string_view message) const;

  int macro_depth = 0;

 private:
  std::string_view source_;
  Frame root_;
  Frame* current_ = &root_;
  Text* out_ = nullptr;
  size_t max_steps_;
  size_t steps_ = 0;
};

}  // namespace parley::chat::jinja
