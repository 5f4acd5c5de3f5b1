#include "serve/protection/validation.h"

#include <fstream>
#include <re2/re2.h>

#include "serve/transport/api_error.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace parley::serve {
namespace {

constexpr int kMaxDepth = 64;

// Every string value (not keys) of `j`, depth-first; throws past kMaxDepth.
template <typename F>
void for_each_string(const nlohmann::json& j, int depth, const F& f) {
  if (depth > kMaxDepth) throw invalid_request("The request is nested too deeply", "", "invalid_json");
  if (j.is_string()) return f(j.get_ref<const std::string&>());
  if (j.is_structured())
    for (const auto& v : j) for_each_string(v, depth + 1, f);
}

}  // namespace

std::optional<size_t> find_control_character(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return i;
  }
  return std::nullopt;
}

Blocklist::Blocklist(const std::vector<std::string>& patterns) {
  RE2::Options options;
  options.set_log_errors(false);
  for (size_t i = 0; i < patterns.size(); ++i) {
    auto re = std::make_unique<re2::RE2>(patterns[i], options);
    if (!re->ok()) throw Error("--blocklist: pattern " + std::to_string(i + 1) + " '" + patterns[i] + "': " + re->error());
    patterns_.push_back(patterns[i]);
    compiled_.push_back(std::move(re));
  }
}

Blocklist::~Blocklist() = default;
Blocklist::Blocklist(Blocklist&&) noexcept = default;
Blocklist& Blocklist::operator=(Blocklist&&) noexcept = default;

Blocklist Blocklist::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("--blocklist: cannot open " + path);
  std::vector<std::string> patterns;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] != '#') patterns.push_back(line);
  }
  return Blocklist(patterns);
}

const std::string* Blocklist::match(std::string_view text) const {
  for (size_t i = 0; i < compiled_.size(); ++i)
    if (RE2::PartialMatch(text, *compiled_[i])) return &patterns_[i];
  return nullptr;
}

void validate_body_bytes(std::string_view body) {
  if (!unicode::is_valid_utf8(body)) throw invalid_request("The request body is not valid UTF-8", "", "invalid_utf8");
}

void validate_request_json(const nlohmann::json& request, const InputLimits& limits) {
  if (!request.is_object()) return;  // the route says what is wrong with it
  if (limits.max_messages > 0) {
    const auto it = request.find("messages");
    if (it != request.end() && it->is_array() && it->size() > size_t(limits.max_messages))
      throw invalid_request("At most " + std::to_string(limits.max_messages) + " messages are accepted", "messages",
                            "too_many_messages");
  }
  // The model's own earlier answers (assistant messages sent back as history)
  // may hold control characters it generated: only the blocklist applies to them.
  const auto check = [&](const nlohmann::json& j, int depth, bool model_text) {
    for_each_string(j, depth, [&](const std::string& s) {
      if (!model_text && find_control_character(s))
        throw invalid_request("Text may not contain control characters other than tab, line feed and carriage return",
                              "", "invalid_characters");
      if (limits.blocklist && limits.blocklist->match(s))
        throw ApiError(400, "The request was refused by the content policy", "invalid_request_error", "",
                       "content_policy_violation");
    });
  };
  for (const auto& [key, value] : request.items()) {
    if (key != "messages" || !value.is_array()) {
      check(value, 1, false);
      continue;
    }
    for (const auto& m : value) {
      const auto role = m.is_object() ? m.find("role") : m.end();
      check(m, 2, role != m.end() && role->is_string() && role->get_ref<const std::string&>() == "assistant");
    }
  }
}

}  // namespace parley::serve
