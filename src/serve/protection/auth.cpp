#include "serve/protection/auth.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"

namespace parley::serve {
KeyStore::KeyStore(std::vector<ApiKey> keys) : keys_(std::move(keys)) {
  std::set<std::string> names, secrets;
  for (const ApiKey& k : keys_) {
    if (k.key.empty() || k.name.empty()) throw Error("API keys: every key needs a name and a non-empty key");
    if (!names.insert(k.name).second) throw Error("API keys: the name '" + k.name + "' is used twice");
    if (!secrets.insert(k.key).second) throw Error("API keys: the key named '" + k.name + "' is used twice");
    if (k.rps < 0 || k.tpm < 0) throw Error("API keys: '" + k.name + "' has a negative limit");
  }
}

std::vector<ApiKey> KeyStore::from_flags(const std::vector<std::string>& keys, bool admin) {
  std::vector<ApiKey> out;
  for (size_t i = 0; i < keys.size(); ++i)
    out.push_back({(admin ? "admin" : "key") + std::to_string(i + 1), keys[i], 0, 0, admin});
  return out;
}

std::vector<ApiKey> KeyStore::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("--api-keys-file: cannot open " + path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_array()) throw Error("--api-keys-file: " + path + " must hold a JSON array of {name, key, rps, tpm}");
  std::vector<ApiKey> out;
  for (const auto& e : j) {
    if (!e.is_object() || !e.value("name", nlohmann::json()).is_string() || !e.value("key", nlohmann::json()).is_string())
      throw Error("--api-keys-file: every entry needs string 'name' and 'key' (" + path + ")");
    ApiKey k{e["name"], e["key"]};
    if (e.contains("rps")) k.rps = e["rps"].get<double>();
    if (e.contains("tpm")) k.tpm = e["tpm"].get<double>();
    if (e.contains("admin")) {
      if (!e["admin"].is_boolean()) throw Error("--api-keys-file: 'admin' of '" + k.name + "' must be true or false");
      k.admin = e["admin"].get<bool>();
    }
    if (e.contains("priority")) {
      if (!e["priority"].is_number_integer() || std::abs(e["priority"].get<int64_t>()) > kMaxPriority)
        throw Error("--api-keys-file: 'priority' of '" + k.name + "' must be an integer in ±" +
                    std::to_string(kMaxPriority));
      k.priority = e["priority"].get<int32_t>();
    }
    out.push_back(std::move(k));
  }
  return out;
}

bool KeyStore::api_keys_required() const {
  return std::any_of(keys_.begin(), keys_.end(), [](const ApiKey& k) { return !k.admin; });
}

bool KeyStore::has_admin() const {
  return std::any_of(keys_.begin(), keys_.end(), [](const ApiKey& k) { return k.admin; });
}

const ApiKey* KeyStore::find(std::string_view presented) const {
  // Every key is compared, so the time does not tell which one (or whether one) matched.
  const ApiKey* found = nullptr;
  for (const ApiKey& k : keys_)
    if (constant_time_equal(k.key, presented)) found = &k;
  return found;
}

const ApiKey* KeyStore::by_name(std::string_view name) const {
  for (const ApiKey& k : keys_)
    if (k.name == name) return &k;
  return nullptr;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Runs over the presented string whatever its length; differences are OR-ed, not branched on.
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i)
    diff |= static_cast<unsigned char>(b[i] ^ (a.empty() ? 0 : a[i % a.size()]));
  return diff == 0;
}

std::string presented_key(const HttpRequest& request, bool query_allowed) {
  const auto trimmed = [](std::string_view v) {
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    return std::string(v);
  };
  if (const std::string* auth = request.header("authorization")) {
    std::string_view v = *auth;
    if (v.size() > 7 && (v.substr(0, 7) == "Bearer " || v.substr(0, 7) == "bearer ")) return trimmed(v.substr(7));
  }
  if (const std::string* key = request.header("x-api-key")) return trimmed(*key);
  if (query_allowed) return request.query_param("api_key");
  return "";
}

}  // namespace parley::serve
