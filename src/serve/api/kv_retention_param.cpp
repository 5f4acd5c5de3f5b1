#include "serve/api/kv_retention_param.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/kv_retention.h"
#include "serve/transport/api_error.h"
#include "util/error.h"

namespace parley::serve {
namespace {

constexpr const char* kParam = "kv_retention";

ApiError kv_error(const std::string& message, const char* code = "invalid_value") {
  return invalid_request("'kv_retention': " + message, kParam, code);
}

// The size fields each policy reads.
std::vector<std::string> fields_of(KvPolicy p) {
  switch (p) {
    case KvPolicy::Full: return {};
    case KvPolicy::Window: return {"window"};
    case KvPolicy::Sink: return {"sink", "window"};
    case KvPolicy::HeavyHitter: return {"sink", "heavy", "window"};
  }
  return {};
}

bool reads(KvPolicy p, const std::string& field) {
  const std::vector<std::string> fields = fields_of(p);
  return std::find(fields.begin(), fields.end(), field) != fields.end();
}

KvPolicy parse_policy(const json& name) {
  if (!name.is_string()) throw kv_error("'policy' must be one of full, window, sink, heavy-hitter", "invalid_type");
  const auto p = kv_policy_from_name(name.get<std::string>());
  if (!p) throw kv_error("unknown policy '" + name.get<std::string>() + "' (full, window, sink or heavy-hitter)");
  return *p;
}

// A size field, range-checked by get_integer; its 400 is re-issued under "kv_retention".
int32_t read_size(const json& obj, const std::string& name, int32_t fallback, int32_t lo, int32_t context_length) {
  try {
    return int32_t(get_integer(obj, name.c_str(), lo, context_length).value_or(fallback));
  } catch (const ApiError& e) {
    throw kv_error(e.what());
  }
}

KvRetention parse_object(const json& obj, int32_t context_length) {
  const json* policy = get_field(obj, "policy");
  if (!policy) throw kv_error("'policy' is required", "missing_field");
  KvRetention r;
  r.policy = parse_policy(*policy);
  for (const auto& [key, value] : obj.items())
    if (key != "policy" && !reads(r.policy, key))
      throw kv_error("'" + key + "' does not belong to the " + kv_policy_name(r.policy) + " policy");
  r.window = read_size(obj, "window", r.window, 1, context_length);
  r.sink = read_size(obj, "sink", r.sink, 0, context_length);
  r.heavy = read_size(obj, "heavy", r.heavy, 0, context_length);
  return r;
}

// Sizes the policy does not read are zeroed: they must not count in its
// budget (validate_retention adds all three) nor split the response cache.
KvRetention only_used(KvRetention r) {
  if (!reads(r.policy, "window")) r.window = 0;
  if (!reads(r.policy, "sink")) r.sink = 0;
  if (!reads(r.policy, "heavy")) r.heavy = 0;
  return r;
}

}  // namespace

std::optional<KvRetention> parse_kv_retention(const json& body, int32_t context_length) {
  const json* f = get_field(body, kParam);
  if (!f) return std::nullopt;
  if (!f->is_object() && !f->is_string())
    throw kv_error("must be a policy name or an object {\"policy\", \"window\", \"sink\", \"heavy\"}", "invalid_type");
  const KvRetention r =
      only_used(f->is_string() ? KvRetention{.policy = parse_policy(*f)} : parse_object(*f, context_length));
  // The defaults of the fields not given may not fit a small context either.
  try {
    validate_retention(r, context_length);
  } catch (const Error& e) {
    throw kv_error(e.what(), "out_of_range");
  }
  return r;
}

}  // namespace parley::serve
