#pragma once
// The parts of an http:// URL a load test needs (no TLS).
#include <string>

namespace parley::loadtest {

struct Url {
  std::string host, port, base;  // base: a path prefix without a trailing '/' ("" or "/api")
  static Url parse(const std::string& url);
  std::string path(const std::string& route) const { return base + route; }  // route: "/v1/models"
  std::string host_header() const { return host + ":" + port; }
};

}  // namespace parley::loadtest
