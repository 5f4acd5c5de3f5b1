#include "chat/jinja.h"

#include "chat/jinja_parser.h"
#include "chat/jinja_render.h"
#include "util/error.h"

namespace parley::chat::jinja {

struct Template::Impl {
  std::string source;  // newline-normalized, which positions refer to
  Body body;
};

Template::Template(std::string_view source) {
  auto impl = std::make_unique<Impl>();
  impl->source = normalize_newlines(source);
  try {
    impl->body = parse(tokenize(impl->source));
  } catch (const SyntaxError& e) {
    throw Error(error_at(impl->source, e.pos, e.message));
  }
  impl_ = std::move(impl);
}

Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

Text Template::render(const Dict& variables, const Limits& limits) const {
  Renderer r(impl_->source, variables, limits.max_steps);
  return r.render(impl_->body);
}

}  // namespace parley::chat::jinja
