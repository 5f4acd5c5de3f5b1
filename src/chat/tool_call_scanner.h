#pragma once
// Reads one stretch of tool calls in a format, from the trigger that opened it
// to its end (Hermes: one <tool_call>...</tool_call>; Mistral and Generic: the
// whole list; Llama 3: one JSON object), as its text arrives in pieces. Each
// call is announced (id, name) once its arguments begin, its arguments are
// streamed as they arrive, and it is complete at its object's closing brace.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/json_tracker.h"
#include "chat/tool_call.h"
#include "chat/tool_call_format.h"

namespace parley::chat {

// A step of reading: done, needs more text, or the text is not what was expected.
enum class ScanStep { Ok, More, Bad };

class ToolCallScanner {
 public:
  enum class State { Scanning, Done, Failed };

  // `first_index`: the index of the stretch's first call among all calls.
  ToolCallScanner(ToolCallFormat format, int first_index, std::function<std::string()> make_id);

  // Reads `text` (which must start with the trigger on the first call);
  // appends the pieces found to `deltas` and the completed calls to `calls`.
  State feed(std::string_view text, std::vector<ToolCallDelta>& deltas, std::vector<ParsedToolCall>& calls);

  // Done: the text after the stretch. Failed: from the offending byte on.
  std::string_view rest() const;
  // Failed: the text of the call that failed (from its start to the offending
  // byte); while Scanning, everything not yet part of a completed call.
  std::string_view unread() const;

 private:
  enum class Phase { Open, Header, Arguments, Tail, Next };
  using Step = ScanStep;

  Step scan_open(size_t& pos) const;
  Step scan_header(size_t& pos, std::string& name) const;
  Step scan_tail(size_t& pos) const;
  Step scan_next(size_t& pos, bool& another) const;
  State run(std::vector<ToolCallDelta>& deltas, std::vector<ParsedToolCall>& calls);
  Step run_arguments(std::vector<ToolCallDelta>& deltas);
  State fail(size_t at);

  ToolCallFormat format_;
  std::function<std::string()> make_id_;
  std::string buf_;
  size_t pos_ = 0;         // the next byte to read
  size_t call_start_ = 0;  // where the text a failure turns into content starts
  size_t fail_at_ = 0;
  Phase phase_ = Phase::Open;
  State state_ = State::Scanning;
  int index_;
  ParsedToolCall current_;
  JsonTracker args_;
};

}  // namespace parley::chat
