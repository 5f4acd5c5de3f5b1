#include "loadtest/sse_parser.h"

namespace parley::loadtest {

void SseParser::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    if (after_cr_ && bytes.front() == '\n') bytes.remove_prefix(1);
    after_cr_ = false;
    const size_t eol = bytes.find_first_of("\r\n");
    if (eol == std::string_view::npos) {
      line_.append(bytes);
      return;
    }
    line_.append(bytes.substr(0, eol));
    after_cr_ = bytes[eol] == '\r';
    bytes.remove_prefix(eol + 1);
    end_line();
  }
}

void SseParser::end_line() {
  const std::string_view line(line_);
  if (line.empty()) {  // blank line: dispatch
    if (has_data_) on_event_(data_);
    data_.clear();
    has_data_ = false;
  } else if (line.front() != ':') {
    const size_t colon = line.find(':');
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (line.substr(0, colon) == "data") {
      if (has_data_) data_ += '\n';
      data_.append(value);
      has_data_ = true;
    }
  }
  line_.clear();
}

}  // namespace parley::loadtest
