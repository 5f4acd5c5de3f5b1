#pragma once
// Input validation and filtering (docs/security.md): UTF-8, control
// characters, the number of messages, and a blocklist of RE2 patterns
// (linear-time matching: no pattern can make a request slow). Model input is
// not HTML-escaped: escaping belongs where text is rendered.
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace parley::serve {

// The offset of the first C0 control character other than \t, \n and \r; nullopt when there is none.
std::optional<size_t> find_control_character(std::string_view text);

class Blocklist {
 public:
  // One RE2 pattern per line; empty lines and lines starting with '#' are skipped.
  // Throws parley::Error naming the line of a pattern RE2 refuses.
  static Blocklist from_file(const std::string& path);
  explicit Blocklist(const std::vector<std::string>& patterns);
  ~Blocklist();
  Blocklist(Blocklist&&) noexcept;
  Blocklist& operator=(Blocklist&&) noexcept;
  // The first pattern found in `text`, or nullptr.
  const std::string* match(std::string_view text) const;
  size_t size() const { return patterns_.size(); }

 private:
  std::vector<std::string> patterns_;
  std::vector<std::unique_ptr<re2::RE2>> compiled_;
};

struct InputLimits {
  int32_t max_messages = 0;  // 0: unlimited
  const Blocklist* blocklist = nullptr;
};

// Checks a JSON request (HTTP body or WebSocket message): at most
// max_messages messages, no string with a forbidden control character or a
// blocked pattern, nesting at most 64 deep. Throws ApiError 400.
void validate_request_json(const nlohmann::json& request, const InputLimits& limits);
// The raw body: invalid UTF-8 is a 400 here rather than a JSON parse error.
void validate_body_bytes(std::string_view body);

}  // namespace parley::serve
