#pragma once
// Incremental parser of a server-sent-events stream (the WHATWG rules that
// OpenAI-compatible servers follow): bytes are fed as they arrive, split
// anywhere, and every complete event's data (its `data:` lines joined by
// '\n') is handed to the callback the moment its blank line arrives. Lines may
// end in "\n", "\r\n" or "\r"; comments and other fields are ignored.
#include <functional>
#include <string>
#include <string_view>

namespace parley::loadtest {

class SseParser {
 public:
  using Handler = std::function<void(std::string_view data)>;
  explicit SseParser(Handler on_event) : on_event_(std::move(on_event)) {}

  void feed(std::string_view bytes);

 private:
  void end_line();

  Handler on_event_;
  std::string line_, data_;
  bool has_data_ = false;
  bool after_cr_ = false;  // a '\n' right after '\r' (maybe in the next piece) ends nothing
};

}  // namespace parley::loadtest
