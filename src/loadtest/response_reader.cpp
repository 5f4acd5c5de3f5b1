#include "loadtest/response_reader.h"

#include <nlohmann/json.hpp>

namespace parley::loadtest {
namespace {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string error_message(const std::string& body) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("message") &&
      j["error"]["message"].is_string())
    return j["error"]["message"].get<std::string>();
  return body.substr(0, 200);
}

}  // namespace

ResponseReader::ResponseReader(RequestRecord& record, bool chat, Clock::time_point start)
    : r_(record), chat_(chat), start_(start), last_(start), sse_([this](std::string_view d) { on_event(d); }) {}

void ResponseReader::on_body(unsigned status, std::string_view bytes) {
  r_.status = status;
  if (status == 200 && (streamed_ || bytes.substr(0, 5) == "data:" || bytes.substr(0, 1) == ":")) {
    streamed_ = true;
    sse_.feed(bytes);
  } else {
    raw_.append(bytes);
  }
}

void ResponseReader::on_event(std::string_view data) {
  if (r_.error != ErrorKind::None || done_) return;
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  const auto j = nlohmann::json::parse(data, nullptr, false);
  if (!j.is_object()) return fail(ErrorKind::Protocol, "an SSE event that is not a JSON object");
  if (j.contains("error")) return fail(ErrorKind::Protocol, "error event: " + error_message(std::string(data)));
  if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) on_text(choice_text(j["choices"][0], true));
  if (j.contains("usage") && j["usage"].is_object()) read_usage(j["usage"]);
}

void ResponseReader::on_text(const std::string& piece) {
  if (piece.empty()) return;  // a role-only or final chunk
  const auto now = Clock::now();
  if (r_.chunks == 0) r_.ttft_ms = ms_between(start_, now);
  else r_.gaps_ms.push_back(ms_between(last_, now));
  last_ = now;
  ++r_.chunks;
  text_ += piece;
}

std::string ResponseReader::choice_text(const nlohmann::json& choice, bool streamed) const {
  const nlohmann::json* text = nullptr;
  if (!chat_ && choice.contains("text")) text = &choice["text"];
  const char* holder = streamed ? "delta" : "message";
  if (chat_ && choice.contains(holder) && choice[holder].is_object() && choice[holder].contains("content"))
    text = &choice[holder]["content"];
  return text && text->is_string() ? text->get<std::string>() : std::string();
}

void ResponseReader::read_usage(const nlohmann::json& usage) {
  usage_seen_ = true;
  r_.output_tokens = usage.value("completion_tokens", int64_t(0));
  r_.prompt_tokens = usage.value("prompt_tokens", int64_t(-1));
  if (usage.contains("prompt_tokens_details") && usage["prompt_tokens_details"].is_object())
    r_.cached_tokens = usage["prompt_tokens_details"].value("cached_tokens", int64_t(0));
}

void ResponseReader::fail(ErrorKind kind, std::string message) {
  if (r_.error != ErrorKind::None) return;
  r_.error = kind;
  r_.message = std::move(message);
}

void ResponseReader::finish() {
  const auto end = Clock::now();
  r_.e2e_ms = ms_between(start_, end);
  if (r_.status != 200) return fail(ErrorKind::Http, "HTTP " + std::to_string(r_.status) + ": " + error_message(raw_));
  if (streamed_) {
    if (!done_) fail(ErrorKind::Protocol, "the stream ended without data: [DONE]");
  } else {
    const auto j = nlohmann::json::parse(raw_, nullptr, false);
    if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty())
      return fail(ErrorKind::Protocol, "an answer without choices: " + raw_.substr(0, 200));
    text_ = choice_text(j["choices"][0], false);
    r_.ttft_ms = r_.e2e_ms;  // the whole answer is the first token's arrival
    r_.chunks = 1;
    if (j.contains("usage") && j["usage"].is_object()) read_usage(j["usage"]);
  }
  if (!usage_seen_) r_.output_tokens = r_.chunks;
}

}  // namespace parley::loadtest
