#include <charconv>
#include <optional>

#include "state/redis_client.h"

namespace parley::state {
namespace {

int parse_number(const std::string& text, const std::string& shown, const char* what) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0)
    throw Error("redis URL '" + shown + "': bad " + what + " '" + text + "'");
  return value;
}

// %XX escapes, so that a password may hold '@', ':' or '/'.
std::string percent_decode(const std::string& text, const std::string& shown) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    int byte = 0;
    const char* begin = text.data() + i + 1;
    if (i + 2 >= text.size() || std::from_chars(begin, begin + 2, byte, 16).ptr != begin + 2)
      throw Error("redis URL '" + shown + "': bad %-escape");
    out += static_cast<char>(byte);
    i += 2;
  }
  return out;
}

}  // namespace

// The password is whatever lies between the user's ':' (or the scheme) and
// the last '@', whether or not the rest of the URL parses.
std::string mask_redis_url(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t at = url.rfind('@');
  if (at == std::string::npos || at < start) return url;
  const size_t colon = url.find(':', start);
  const size_t secret = colon < at ? colon + 1 : start;
  return url.substr(0, secret) + "***" + url.substr(at);
}

// Errors show the URL masked; the host, port and database texts they quote
// come after the last '@', so they hold no part of the password.
RedisUrl parse_redis_url(const std::string& url) {
  const std::string shown = mask_redis_url(url);
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) throw Error("redis URL '" + shown + "': expected redis://[:password@]host:port/db");
  std::string rest = url.substr(scheme.size());
  RedisUrl out;
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    const std::string userinfo = rest.substr(0, at);
    const size_t colon = userinfo.find(':');
    const std::string user = userinfo.substr(0, colon);
    // Only the default user: AUTH is sent with the password alone.
    if (colon == std::string::npos || (!user.empty() && user != "default"))
      throw Error("redis URL '" + shown + "': expected ':password@' before the host");
    out.password = percent_decode(userinfo.substr(colon + 1), shown);
    rest = rest.substr(at + 1);
  }
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    if (!db.empty()) out.db = parse_number(db, shown, "database");
    rest.resize(slash);
  }
  std::optional<std::string> port;
  if (!rest.empty() && rest[0] == '[') {  // [IPv6]:port
    const size_t close = rest.find(']');
    if (close == std::string::npos) throw Error("redis URL '" + shown + "': unclosed '['");
    out.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') throw Error("redis URL '" + shown + "': expected ':port' after ']'");
      port = rest.substr(close + 2);
    }
  } else {
    const size_t colon = rest.find(':');
    out.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (out.host.empty()) out.host = "127.0.0.1";
  if (port) out.port = parse_number(*port, shown, "port");
  if (out.port == 0 || out.port > 65535) throw Error("redis URL '" + shown + "': bad port");
  return out;
}

std::string redis_key(const std::string& suffix) { return "parley:" + suffix; }

}  // namespace parley::state
