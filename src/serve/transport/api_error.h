#pragma once
// OpenAI-style API errors: {"error": {"message", "type", "param", "code"}}
// with the HTTP status they are answered with. Handlers throw ApiError; the
// router turns it (and any other exception, as a 500) into a response.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace parley::serve {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string type, std::string param = "", std::string code = "")
      : std::runtime_error(message), status_(status), type_(std::move(type)), param_(std::move(param)),
        code_(std::move(code)) {}
  int status() const { return status_; }
  nlohmann::json to_json() const;

 private:
  int status_;
  std::string type_, param_, code_;
};

// The common cases. `param` names the offending request field, if any.
ApiError invalid_request(std::string message, std::string param = "", std::string code = "");
ApiError not_found(std::string message, std::string code = "not_found");
ApiError server_error(std::string message);
// 413: an HTTP body or a WebSocket message over --max-body-bytes.
ApiError request_too_large(size_t max_bytes);

}  // namespace parley::serve
