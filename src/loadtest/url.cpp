#include "loadtest/url.h"

#include "util/error.h"

namespace parley::loadtest {

Url Url::parse(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw Error("--url: only http:// URLs are supported, got '" + url + "'");
  const std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  Url u;
  u.base = slash == std::string::npos ? "" : rest.substr(slash);
  while (!u.base.empty() && u.base.back() == '/') u.base.pop_back();
  if (u.base.size() >= 3 && u.base.compare(u.base.size() - 3, 3, "/v1") == 0) u.base.resize(u.base.size() - 3);
  const size_t colon = authority.rfind(':');
  const bool bracketed = !authority.empty() && authority.front() == '[';  // [::1]:8080
  if (colon != std::string::npos && (!bracketed || authority[colon - 1] == ']')) {
    u.host = authority.substr(0, colon);
    u.port = authority.substr(colon + 1);
  } else {
    u.host = authority;
    u.port = "80";
  }
  if (bracketed && u.host.size() > 2) u.host = u.host.substr(1, u.host.size() - 2);
  if (u.host.empty() || u.port.empty()) throw Error("--url: no host or port in '" + url + "'");
  return u;
}

}  // namespace parley::loadtest
