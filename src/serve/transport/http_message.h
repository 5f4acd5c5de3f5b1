#pragma once
// Transport-neutral HTTP messages: what routes see and produce. The Beast
// session converts from and to these, so routing and the API are testable
// without sockets.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::serve {

class ApiError;

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: path and query
  Headers headers;     // names lower-cased
  std::string body;
  std::string remote_address;

  std::string_view path() const;              // target without the query
  std::string query_param(std::string_view name) const;  // "" when absent (no %-decoding)
  const std::string* header(std::string_view lower_name) const;  // null when absent
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  Headers headers;  // extra headers
  std::string body;
};

// Serialises compactly; invalid UTF-8 (a token piece that is half a
// character) becomes U+FFFD instead of throwing.
std::string dump_json(const nlohmann::json& j);
HttpResponse json_response(int status, const nlohmann::json& body);
HttpResponse error_response(const ApiError& e);

}  // namespace parley::serve
