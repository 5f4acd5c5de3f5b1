#pragma once
// Typed, range-checked reads of request body fields. A missing or null field
// gives nullopt; a field of the wrong type or out of range throws a 400
// ApiError naming it.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/transport/http_message.h"

namespace parley::serve {

using nlohmann::json;

// The body as a JSON object: 415 unless the content type is JSON (an absent
// Content-Type is accepted), 400 for malformed JSON, invalid UTF-8 or a
// non-object.
json parse_json_body(const HttpRequest& request);

const json* get_field(const json& obj, const char* name);  // null when absent or null

// Field `name` of the JSON object `raw` with its objects' keys in the order
// the client wrote them (json sorts them): JSON schemas and tools, whose
// property order is the order the model writes them in. Null when absent.
nlohmann::ordered_json ordered_field(std::string_view raw, const char* name);

struct Range {
  double lo, hi;
  bool lo_open = false;  // (lo, hi] instead of [lo, hi]
};
std::optional<double> get_number(const json& obj, const char* name, Range range);
std::optional<int64_t> get_integer(const json& obj, const char* name, int64_t lo, int64_t hi);
std::optional<bool> get_bool(const json& obj, const char* name);
std::optional<std::string> get_string(const json& obj, const char* name);

// For APIs that take no field they cannot honour: a 400 naming the first
// field of `obj` that is not in `accepted` and not null, as `prefix` + its
// name (prefix "metadata." gives "metadata.tags").
void refuse_other_fields(const json& obj, const std::vector<std::string_view>& accepted, const std::string& prefix = "");

}  // namespace parley::serve
