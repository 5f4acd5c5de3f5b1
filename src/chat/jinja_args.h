#pragma once
// Reading the arguments of filters, tests, methods and global functions.
#include <cstddef>
#include <string>
#include <string_view>

#include "chat/jinja_value.h"

namespace parley::chat::jinja {

inline std::string str(const Value& v) { return to_text(v).str(); }

inline const Value& required(const Args& a, size_t i, std::string_view name) {
  const Value* v = a.get(i, name);
  if (!v) fail("missing argument '" + std::string(name) + "'");
  return *v;
}

// An optional string argument; absent or none gives nullptr.
inline const std::string* opt_string(const Args& a, size_t i, std::string_view name) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none()) return nullptr;
  if (!v->is_string()) fail("argument '" + std::string(name) + "' must be a string, not " + type_name(*v));
  return &v->as_text().str();
}

inline int64_t opt_int(const Args& a, size_t i, std::string_view name, int64_t dflt) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none()) return dflt;
  if (v->kind() != Value::Kind::Int && v->kind() != Value::Kind::Bool) {
    fail("argument '" + std::string(name) + "' must be an integer, not " + type_name(*v));
  }
  return v->as_int();
}

// An argument that can only be given by name.
inline const Value* named_arg(const Args& a, std::string_view name) { return a.get(a.positional.size(), name); }

inline bool opt_bool(const Args& a, size_t i, std::string_view name, bool dflt) {
  const Value* v = a.get(i, name);
  return v ? truthy(*v) : dflt;
}

// The arguments after the first `skip` positional ones (passed on to a test or filter).
inline Args rest_of(const Args& a, size_t skip) {
  Args out;
  if (a.positional.size() > skip) out.positional.assign(a.positional.begin() + ptrdiff_t(skip), a.positional.end());
  out.named = a.named;
  return out;
}

}  // namespace parley::chat::jinja
