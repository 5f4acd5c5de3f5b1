#pragma once
// API keys (docs/security.md): `Authorization: Bearer <key>` (or, for
// WebSocket upgrades from browsers, which cannot set headers, `?api_key=`).
// Keys are compared in constant time and never logged; routes see the key's
// name (Exchange::api_key_name), which rate limits and logs use instead.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/http_message.h"

namespace parley::serve {

struct ApiKey {
  std::string name;
  std::string key;
  double rps = 0;  // requests per second; 0: the server's --rate-limit-rps
  double tpm = 0;  // tokens per minute; 0: the server's --rate-limit-tpm
};

class KeyStore {
 public:
  KeyStore() = default;
  explicit KeyStore(std::vector<ApiKey> keys);  // throws parley::Error for empty or duplicate keys/names
  // --api-key values are named "key1", "key2", … ; a file is [{name, key, rps?, tpm?}].
  static std::vector<ApiKey> from_flags(const std::vector<std::string>& keys);
  static std::vector<ApiKey> from_file(const std::string& path);

  bool enabled() const { return !keys_.empty(); }
  // The key whose secret is `presented`, compared in constant time against every key.
  const ApiKey* find(std::string_view presented) const;
  const ApiKey* by_name(std::string_view name) const;

 private:
  std::vector<ApiKey> keys_;
};

// Equal strings, in time that depends on the lengths only.
bool constant_time_equal(std::string_view a, std::string_view b);
// Paths that need a key: the API (/v1/..., POST /chat); /health, /ready,
// /metrics, /v1/stats and the static pages stay open.
bool requires_key(const HttpRequest& request);
// The key the request presents ("" when none).
std::string presented_key(const HttpRequest& request);

}  // namespace parley::serve
