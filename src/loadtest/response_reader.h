#pragma once
// Reads one chat or completions answer as its body arrives: SSE chunks are
// timed when they are parsed (time to first text, the gaps between texts),
// their text collected (the next turn of a conversation needs it) and the
// usage taken from the final chunk; a plain JSON answer is read at the end.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loadtest/request_record.h"
#include "loadtest/sse_parser.h"

namespace parley::loadtest {

class ResponseReader {
 public:
  ResponseReader(RequestRecord& record, bool chat, Clock::time_point start);

  void on_body(unsigned status, std::string_view bytes);  // a BodySink
  // After the last byte: classifies the outcome and completes the record.
  void finish();
  const std::string& text() const { return text_; }

 private:
  void on_event(std::string_view data);
  void on_text(const std::string& piece);
  void read_usage(const nlohmann::json& usage);
  void fail(ErrorKind kind, std::string message);
  std::string choice_text(const nlohmann::json& choice, bool streamed) const;

  RequestRecord& r_;
  bool chat_;
  Clock::time_point start_, last_;
  SseParser sse_;
  bool streamed_ = false, done_ = false, usage_seen_ = false;
  std::string raw_, text_;
};

}  // namespace parley::loadtest
