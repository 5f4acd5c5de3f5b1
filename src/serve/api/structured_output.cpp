#include "serve/api/structured_output.h"

#include "serve/transport/api_error.h"
#include "util/error.h"

namespace parley::serve {

std::shared_ptr<const grammar::Grammar> GrammarCache::get(const std::string& key,
                                                          const std::function<std::string()>& gbnf) {
  {
    std::lock_guard lock(mu_);
    if (const auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  auto compiled = grammar::parse_gbnf(gbnf());  // outside the lock: compiling may take a while
  std::lock_guard lock(mu_);
  if (index_.count(key)) return index_[key]->second;
  lru_.emplace_front(key, compiled);
  index_[key] = lru_.begin();
  if (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return compiled;
}

size_t GrammarCache::size() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

std::shared_ptr<const grammar::Grammar> compile_grammar(GrammarCache& cache, const std::string& key,
                                                        const std::function<std::string()>& gbnf,
                                                        const std::string& param) {
  try {
    return cache.get(key, gbnf);
  } catch (const Error& e) {
    throw invalid_request("'" + param + "' cannot be used: " + e.what(), param, "invalid_grammar");
  }
}

namespace {

OutputGrammar json_schema_format(const json& format, std::string_view raw, GrammarCache& cache) {
  const json* spec = get_field(format, "json_schema");
  if (!spec || !spec->is_object())
    throw invalid_request("'response_format.json_schema' must be an object with 'name' and 'schema'",
                          "response_format.json_schema", "invalid_type");
  refuse_other_fields(*spec, {"name", "schema", "strict", "description"}, "response_format.json_schema.");
  const auto name = get_string(*spec, "name");
  if (!name || name->empty())
    throw invalid_request("'response_format.json_schema.name' is required", "response_format.json_schema.name",
                          "missing_required_parameter");
  get_bool(*spec, "strict");  // type-checked; the answer always follows the schema
  const std::string param = "response_format.json_schema.schema";
  auto s = ordered_field(raw, "response_format")["json_schema"].value("schema", nlohmann::ordered_json::object());
  if (!s.is_object() && !s.is_boolean()) throw invalid_request("'" + param + "' must be an object", param, "invalid_type");
  const std::string key = "schema:" + s.dump();
  const auto gbnf = [&] {
    try {
      return grammar::json_schema_to_gbnf_ordered(s);
    } catch (const Error& e) {
      throw invalid_request("'" + param + "' cannot be used: " + e.what(), param, "invalid_schema");
    }
  };
  return {compile_grammar(cache, key, gbnf, param), {}, key, true};
}

OutputGrammar response_format(const json& format, std::string_view raw, GrammarCache& cache) {
  if (!format.is_object())
    throw invalid_request("'response_format' must be an object", "response_format", "invalid_type");
  const auto type = get_string(format, "type");
  if (!type) throw invalid_request("'response_format.type' is required", "response_format.type", "missing_required_parameter");
  if (*type == "text") {
    refuse_other_fields(format, {"type"}, "response_format.");
    return {};
  }
  if (*type == "json_object") {
    refuse_other_fields(format, {"type"}, "response_format.");
    const auto gbnf = [] { return grammar::json_gbnf(true); };
    return {compile_grammar(cache, "json_object", gbnf, "response_format"), {}, "json_object", true};
  }
  if (*type == "json_schema") {
    refuse_other_fields(format, {"type", "json_schema"}, "response_format.");
    return json_schema_format(format, raw, cache);
  }
  throw invalid_request("'response_format.type' must be 'text', 'json_object' or 'json_schema'; got '" + *type + "'",
                        "response_format.type", "invalid_value");
}

}  // namespace

OutputGrammar parse_output_format(const json& body, std::string_view raw, GrammarCache& cache) {
  const json* format = get_field(body, "response_format");
  const auto gbnf = get_string(body, "grammar");
  if (format && gbnf)
    throw invalid_request("'grammar' and 'response_format' cannot be combined", "grammar", "invalid_value");
  if (gbnf) return {compile_grammar(cache, "gbnf:" + *gbnf, [&] { return *gbnf; }, "grammar"), {}, "gbnf:" + *gbnf, false};
  return format ? response_format(*format, raw, cache) : OutputGrammar{};
}

}  // namespace parley::serve
