#include "serve/transport/api_error.h"

namespace parley::serve {

nlohmann::json ApiError::to_json() const {
  auto nullable = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  return {{"error", {{"message", what()}, {"type", type_}, {"param", nullable(param_)}, {"code", nullable(code_)}}}};
}

ApiError invalid_request(std::string message, std::string param, std::string code) {
  return ApiError(400, std::move(message), "invalid_request_error", std::move(param), std::move(code));
}

ApiError not_found(std::string message, std::string code) {
  return ApiError(404, std::move(message), "invalid_request_error", "", std::move(code));
}

ApiError server_error(std::string message) { return ApiError(500, std::move(message), "server_error"); }

ApiError request_too_large(size_t max_bytes) {
  return ApiError(413, "The request body exceeds " + std::to_string(max_bytes) + " bytes", "invalid_request_error", "",
                  "request_too_large");
}

}  // namespace parley::serve
