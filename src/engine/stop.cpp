#include "engine/stop.h"

#include <algorithm>
#include <utility>

namespace parley {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancelled: return "cancelled";
    case FinishReason::Deadline: return "deadline";
    case FinishReason::Error: return "error";
    case FinishReason::None: break;
  }
  return "none";
}
namespace {

// Length of the longest suffix of `text` that is a proper prefix of `stop`.
size_t partial_match(std::string_view text, std::string_view stop) {
  for (size_t len = std::min(text.size(), stop.size() - 1); len > 0; --len) {
    if (text.substr(text.size() - len) == stop.substr(0, len)) return len;
  }
  return 0;
}

}  // namespace

// An empty stop string would match before any text; it is ignored.
StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopStringMatcher::push(std::string_view text) {
  if (stopped_) return {};
  held_.append(text);

  // The match that completes first wins (the longer one when several end on
  // the same byte), as if the text arrived byte by byte: the result does not
  // depend on how the text was split into pushes.
  size_t match_begin = std::string::npos, match_end = std::string::npos;
  const std::string* match = nullptr;
  for (const auto& stop : stops_) {
    const size_t pos = held_.find(stop);
    if (pos == std::string::npos) continue;
    const size_t end = pos + stop.size();
    if (end < match_end || (end == match_end && pos < match_begin)) {
      match_begin = pos;
      match_end = end;
      match = &stop;
    }
  }
  if (match) {
    stopped_ = true;
    matched_ = *match;
    held_.resize(match_begin);
    return std::exchange(held_, {});
  }

  size_t hold = 0;
  for (const auto& stop : stops_) hold = std::max(hold, partial_match(held_, stop));
  std::string out = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return out;
}

std::string StopStringMatcher::flush() {
  if (stopped_) return {};
  return std::exchange(held_, {});
}

}  // namespace parley
