#pragma once
// Splits a model's generated text, as it streams, into content, reasoning
// (a thinking block) and tool calls. Text that may be the start of a marker
// or trigger is held back until the following text decides it, so no piece
// of one ever shows up as content.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/reasoning.h"
#include "chat/tool_call.h"
#include "chat/tool_call_format.h"
#include "chat/tool_call_scanner.h"

namespace parley::chat {

struct OutputDelta {
  std::string content, reasoning;
  std::vector<ToolCallDelta> tool_calls;
};

// Output that holds back trailing whitespace until more text decides whether
// it is kept (whitespace next to markers and calls is dropped).
class HeldWhitespace {
 public:
  // Appends `text` to `out`, less any trailing whitespace (held); true when
  // it had anything but whitespace.
  bool add(std::string_view text, std::string& out);
  // The held whitespace, and whitespace up to the next other text, are dropped.
  void drop_leading() {
    held_.clear();
    drop_leading_ = true;
  }
  std::string take_held() { return std::exchange(held_, {}); }
  void flush(std::string& out);

 private:
  std::string held_;
  bool drop_leading_ = false;
};

class OutputParser {
 public:
  struct Options {
    ToolCallFormat format = ToolCallFormat::Generic;
    bool tools = false;                // parse tool calls at all
    bool reasoning = false;            // a thinking block may open the output
    bool starts_in_reasoning = false;  // the prompt ended inside the thinking block
    ReasoningMarkers markers;
    std::function<std::string()> make_id;  // ids of calls; default new_tool_call_id(format)
  };

  explicit OutputParser(Options options);

  OutputDelta feed(std::string_view text);  // the next text, split anywhere
  // The end of generation: held text is flushed, an unterminated thinking
  // block is reasoning, and an unfinished or invalid call is content.
  OutputDelta finish();
  // The calls completed so far. A call is announced in the deltas (id, name)
  // as soon as its arguments begin; one that then fails is not retracted
  // there, but is not in calls() and its text becomes content.
  const std::vector<ParsedToolCall>& calls() const { return calls_; }

 private:
  enum class Mode { Content, Reasoning, Call };

  void run(OutputDelta& out, bool final);
  bool step_content(OutputDelta& out, bool final);
  bool step_reasoning(OutputDelta& out, bool final);
  bool step_call(OutputDelta& out, bool final);
  bool step_at_start(bool final, bool& decided, OutputDelta& out);
  void emit_content(std::string_view text, OutputDelta& out);
  void start_call();
  void end_call(std::string_view content, std::string_view rest, OutputDelta& out);

  Options opt_;
  ToolSyntax syntax_;
  std::string pending_;  // text not yet decided
  Mode mode_ = Mode::Content;
  HeldWhitespace content_, reasoning_;
  bool at_start_ = true;  // nothing but whitespace, reasoning and calls so far
  bool reasoning_seen_ = false;
  std::optional<ToolCallScanner> scanner_;
  std::string space_before_call_;  // content whitespace the calls follow, kept if the first fails
  size_t calls_before_ = 0;        // calls_.size() when the scanner started
  std::vector<ParsedToolCall> calls_;
};

}  // namespace parley::chat
