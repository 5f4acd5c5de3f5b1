#include <charconv>
#include <optional>

#include "state/redis_client.h"

namespace parley::state {
namespace {

int parse_number(const std::string& text, const std::string& url, const char* what) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0)
    throw Error("redis URL '" + url + "': bad " + what + " '" + text + "'");
  return value;
}

// %XX escapes, so that a password may hold '@', ':' or '/'.
std::string percent_decode(const std::string& text, const std::string& url) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    int byte = 0;
    const char* begin = text.data() + i + 1;
    if (i + 2 >= text.size() || std::from_chars(begin, begin + 2, byte, 16).ptr != begin + 2)
      throw Error("redis URL '" + url + "': bad %-escape");
    out += static_cast<char>(byte);
    i += 2;
  }
  return out;
}

}  // namespace

RedisUrl parse_redis_url(const std::string& url) {
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) throw Error("redis URL '" + url + "': expected redis://[:password@]host:port/db");
  std::string rest = url.substr(scheme.size());
  RedisUrl out;
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    if (!db.empty()) out.db = parse_number(db, url, "database");
    rest.resize(slash);
  }
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    const std::string userinfo = rest.substr(0, at);
    const size_t colon = userinfo.find(':');
    const std::string user = userinfo.substr(0, colon);
    // Only the default user: AUTH is sent with the password alone.
    if (colon == std::string::npos || (!user.empty() && user != "default"))
      throw Error("redis URL '" + url + "': expected ':password@' before the host");
    out.password = percent_decode(userinfo.substr(colon + 1), url);
    rest = rest.substr(at + 1);
  }
  std::optional<std::string> port;
  if (!rest.empty() && rest[0] == '[') {  // [IPv6]:port
    const size_t close = rest.find(']');
    if (close == std::string::npos) throw Error("redis URL '" + url + "': unclosed '['");
    out.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') throw Error("redis URL '" + url + "': expected ':port' after ']'");
      port = rest.substr(close + 2);
    }
  } else {
    const size_t colon = rest.find(':');
    out.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (out.host.empty()) out.host = "127.0.0.1";
  if (port) out.port = parse_number(*port, url, "port");
  if (out.port == 0 || out.port > 65535) throw Error("redis URL '" + url + "': bad port");
  return out;
}

std::string redis_key(const std::string& suffix) { return "parley:" + suffix; }

}  // namespace parley::state
