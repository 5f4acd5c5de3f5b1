#include "serve/api/json_fields.h"

#include <algorithm>
#include <cmath>

#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

bool is_json_content_type(const std::string& ct) {
  std::string media = ct.substr(0, ct.find(';'));
  while (!media.empty() && media.back() == ' ') media.pop_back();
  for (char& c : media) c = char(std::tolower(static_cast<unsigned char>(c)));
  return media == "application/json";
}

std::string fmt_number(double v) {
  json j = v;
  return j.dump();
}

}  // namespace

json parse_json_body(const HttpRequest& request) {
  if (const std::string* ct = request.header("content-type"); ct && !is_json_content_type(*ct))
    throw ApiError(415, "Content-Type must be application/json, got '" + *ct + "'", "invalid_request_error", "",
                   "unsupported_media_type");
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded())  // malformed JSON, including invalid UTF-8 in strings
    throw invalid_request("The request body is not valid JSON (or not valid UTF-8)", "", "invalid_json");
  if (!body.is_object()) throw invalid_request("The request body must be a JSON object", "", "invalid_json");
  return body;
}

nlohmann::ordered_json ordered_field(std::string_view raw, const char* name) {
  const auto body = nlohmann::ordered_json::parse(raw, nullptr, false);
  if (!body.is_object()) return nullptr;
  const auto it = body.find(name);
  return it == body.end() ? nlohmann::ordered_json(nullptr) : *it;
}

const json* get_field(const json& obj, const char* name) {
  const auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> get_number(const json& obj, const char* name, Range range) {
  const json* f = get_field(obj, name);
  if (!f) return std::nullopt;
  if (!f->is_number()) throw invalid_request(std::string("'") + name + "' must be a number", name, "invalid_type");
  const double v = f->get<double>();
  const bool below = range.lo_open ? !(v > range.lo) : !(v >= range.lo);
  if (below || !(v <= range.hi) || !std::isfinite(v))
    throw invalid_request(std::string("'") + name + "' must be in " + (range.lo_open ? "(" : "[") +
                              fmt_number(range.lo) + ", " + fmt_number(range.hi) + "], got " + f->dump(),
                          name, "out_of_range");
  return v;
}

std::optional<int64_t> get_integer(const json& obj, const char* name, int64_t lo, int64_t hi) {
  const json* f = get_field(obj, name);
  if (!f) return std::nullopt;
  // 3.0 is accepted as 3 (JavaScript clients cannot tell them apart).
  const bool integral = f->is_number_integer() ||
                        (f->is_number_float() && std::trunc(f->get<double>()) == f->get<double>() &&
                         std::abs(f->get<double>()) < 9e15);
  if (!integral) throw invalid_request(std::string("'") + name + "' must be an integer", name, "invalid_type");
  if (f->is_number_unsigned() && f->get<uint64_t>() > uint64_t(INT64_MAX))
    throw invalid_request(std::string("'") + name + "' is out of range", name, "out_of_range");
  const int64_t v = f->is_number_float() ? int64_t(f->get<double>()) : f->get<int64_t>();
  if (v < lo || v > hi)
    throw invalid_request(std::string("'") + name + "' must be in [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "], got " + std::to_string(v),
                          name, "out_of_range");
  return v;
}

std::optional<bool> get_bool(const json& obj, const char* name) {
  const json* f = get_field(obj, name);
  if (!f) return std::nullopt;
  if (!f->is_boolean()) throw invalid_request(std::string("'") + name + "' must be a boolean", name, "invalid_type");
  return f->get<bool>();
}

void refuse_other_fields(const json& obj, const std::vector<std::string_view>& accepted, const std::string& prefix) {
  for (const auto& [name, value] : obj.items()) {
    if (value.is_null() || std::find(accepted.begin(), accepted.end(), name) != accepted.end()) continue;
    throw invalid_request("'" + prefix + name + "' is not supported by this server", prefix + name,
                          "unsupported_parameter");
  }
}

std::optional<std::string> get_string(const json& obj, const char* name) {
  const json* f = get_field(obj, name);
  if (!f) return std::nullopt;
  if (!f->is_string()) throw invalid_request(std::string("'") + name + "' must be a string", name, "invalid_type");
  return f->get<std::string>();
}

}  // namespace parley::serve
