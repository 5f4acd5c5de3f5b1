#pragma once
// Stop conditions for one generation: stop token ids, stop strings (matched
// across token boundaries and never emitted even in part), max tokens, EOS.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parley {

// Why a generation ended (OpenAI's finish_reason "stop" and "length", and
// ours: cancelled, deadline, error).
enum class FinishReason { None, Stop, Length, Cancelled, Deadline, Error };
const char* finish_reason_name(FinishReason r);  // "stop", "length", ...

class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops);
  // Feeds newly decoded text. Returns the text that is now safe to emit: a
  // suffix that could still begin a stop string is held back. After a stop
  // string is found, stopped() is true and nothing from it on is emitted.
  // The stop string that completes first wins (the longer if several end on
  // the same byte), so the result does not depend on how text is split.
  // Empty stop strings are ignored.
  std::string push(std::string_view text);
  std::string flush();  // end of generation without a stop: release what is held
  bool stopped() const { return stopped_; }
  // The stop string that was found ("" until stopped()).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  std::string matched_;
  bool stopped_ = false;
};

}  // namespace parley
