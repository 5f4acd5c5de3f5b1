#pragma once
// API keys (docs/security.md): `Authorization: Bearer <key>`, or `x-api-key:
// <key>` as Anthropic's clients send it (or, for WebSocket upgrades from
// browsers, which cannot set headers, `?api_key=`).
// Keys are compared in constant time and never logged; routes see the key's
// name (Exchange::api_key_name), which rate limits and logs use instead.
// Admin keys open the admin routes as well as the API; plain keys only the API.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/transport/http_message.h"

namespace parley::serve {

// Priorities, of keys and of requests, lie in ±kMaxPriority (lower runs first).
constexpr int32_t kMaxPriority = 1000000;

struct ApiKey {
  std::string name;
  std::string key;
  double rps = 0;  // requests per second; 0: the server's --rate-limit-rps
  double tpm = 0;  // tokens per minute; 0: the server's --rate-limit-tpm
  bool admin = false;
  int32_t priority = 0;  // requests' default `priority` (lower runs first), and the most urgent they may ask for
};

class KeyStore {
 public:
  KeyStore() = default;
  explicit KeyStore(std::vector<ApiKey> keys);  // throws parley::Error for empty or duplicate keys/names
  // --api-key values are named "key1", "key2", … (--admin-key values "admin1", …
  // with `admin`); a file is [{name, key, rps?, tpm?, admin?, priority?}].
  static std::vector<ApiKey> from_flags(const std::vector<std::string>& keys, bool admin = false);
  static std::vector<ApiKey> from_file(const std::string& path);

  // The API needs a key: some plain (non-admin) key is configured. Admin
  // keys alone protect only the admin routes.
  bool api_keys_required() const;
  bool has_admin() const;
  // The key whose secret is `presented`, compared in constant time against every key.
  const ApiKey* find(std::string_view presented) const;
  const ApiKey* by_name(std::string_view name) const;

 private:
  std::vector<ApiKey> keys_;
};

// Equal strings, in time that depends on the lengths only.
bool constant_time_equal(std::string_view a, std::string_view b);
// The key the request presents ("" when none): the bearer token, else the
// `x-api-key` header, else, where `query_allowed` (WebSocket upgrades), the
// `api_key` query parameter.
std::string presented_key(const HttpRequest& request, bool query_allowed);

}  // namespace parley::serve
