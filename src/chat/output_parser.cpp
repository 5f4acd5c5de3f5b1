#include "chat/output_parser.h"

namespace parley::chat {
namespace {

constexpr std::string_view kOutputSpace = " \t\r\n";

// The length of the longest end of `text` that a marker starts with (but is
// not the whole marker): text that may still become that marker.
size_t partial_marker_length(std::string_view text, const std::vector<std::string>& markers) {
  size_t longest = 0;
  for (const std::string& m : markers) {
    for (size_t k = std::min(text.size(), m.size() - 1); k > longest; --k) {
      if (text.ends_with(std::string_view(m).substr(0, k))) {
        longest = k;
        break;
      }
    }
  }
  return longest;
}

}  // namespace

bool HeldWhitespace::add(std::string_view text, std::string& out) {
  if (drop_leading_) {
    const size_t start = text.find_first_not_of(kOutputSpace);
    if (start == std::string_view::npos) return false;
    text.remove_prefix(start);
    drop_leading_ = false;
  }
  const size_t end = text.find_last_not_of(kOutputSpace);
  if (end == std::string_view::npos) {
    held_ += text;
    return false;
  }
  out += held_;
  out += text.substr(0, end + 1);
  held_ = text.substr(end + 1);
  return true;
}

void HeldWhitespace::flush(std::string& out) { out += take_held(); }

OutputParser::OutputParser(Options options)
    : opt_(std::move(options)), syntax_(opt_.tools ? tool_syntax(opt_.format) : ToolSyntax{}) {
  if (!opt_.make_id) opt_.make_id = [format = opt_.format] { return new_tool_call_id(format); };
  if (opt_.starts_in_reasoning) {
    mode_ = Mode::Reasoning;
    reasoning_seen_ = true;
    reasoning_.drop_leading();
  }
}

OutputDelta OutputParser::feed(std::string_view text) {
  pending_ += text;
  OutputDelta out;
  run(out, false);
  return out;
}

OutputDelta OutputParser::finish() {
  OutputDelta out;
  run(out, true);
  if (mode_ == Mode::Content) content_.flush(out.content);
  return out;
}

// Each step reads what it can of pending_; true when it switched modes.
void OutputParser::run(OutputDelta& out, bool final) {
  for (bool switched = true; switched;) {
    switch (mode_) {
      case Mode::Content: switched = step_content(out, final); break;
      case Mode::Reasoning: switched = step_reasoning(out, final); break;
      case Mode::Call: switched = step_call(out, final); break;
    }
  }
}

void OutputParser::emit_content(std::string_view text, OutputDelta& out) {
  if (content_.add(text, out.content)) at_start_ = false;
}

bool OutputParser::step_content(OutputDelta& out, bool final) {
  if (at_start_) {
    bool decided = true;
    if (step_at_start(final, decided, out)) return true;
    if (!decided) return false;
  }
  size_t first = std::string::npos;
  for (const std::string& t : syntax_.triggers) first = std::min(first, pending_.find(t));
  if (first != std::string::npos) {
    emit_content(std::string_view(pending_).substr(0, first), out);
    pending_.erase(0, first);
    start_call();
    return true;
  }
  const size_t keep = final ? 0 : partial_marker_length(pending_, syntax_.triggers);
  emit_content(std::string_view(pending_).substr(0, pending_.size() - keep), out);
  pending_.erase(0, pending_.size() - keep);
  return false;
}

// At the output's start (after whitespace) a thinking block may open, and
// some formats' calls start only there. `decided`: false while the text may
// still become one of those markers.
bool OutputParser::step_at_start(bool final, bool& decided, OutputDelta& out) {
  const size_t text_start = std::min(pending_.find_first_not_of(kOutputSpace), pending_.size());
  emit_content(std::string_view(pending_).substr(0, text_start), out);  // held: dropped before a marker
  pending_.erase(0, text_start);
  decided = !pending_.empty();
  if (!decided) return false;
  if (opt_.reasoning && !reasoning_seen_ && pending_.starts_with(opt_.markers.open)) {
    pending_.erase(0, opt_.markers.open.size());
    reasoning_seen_ = true;
    content_.drop_leading();
    reasoning_.drop_leading();
    mode_ = Mode::Reasoning;
    return true;
  }
  for (const std::string& t : syntax_.start_triggers) {
    if (pending_.starts_with(t)) {
      start_call();
      return true;
    }
  }
  std::vector<std::string> anchored = syntax_.start_triggers;
  if (opt_.reasoning && !reasoning_seen_) anchored.push_back(opt_.markers.open);
  for (const std::string& m : anchored) decided = decided && (final || !m.starts_with(pending_));
  return false;
}

bool OutputParser::step_reasoning(OutputDelta& out, bool final) {
  const size_t close = pending_.find(opt_.markers.close);
  if (close != std::string::npos) {
    reasoning_.add(std::string_view(pending_).substr(0, close), out.reasoning);
    pending_.erase(0, close + opt_.markers.close.size());
    content_.drop_leading();
    mode_ = Mode::Content;
    return true;
  }
  const size_t keep = final ? 0 : partial_marker_length(pending_, {opt_.markers.close});
  reasoning_.add(std::string_view(pending_).substr(0, pending_.size() - keep), out.reasoning);
  pending_.erase(0, pending_.size() - keep);
  return false;
}

void OutputParser::start_call() {
  space_before_call_ = content_.take_held();
  calls_before_ = calls_.size();
  scanner_.emplace(opt_.format, int(calls_.size()), [this] { return opt_.make_id(); });  // one id sequence
  mode_ = Mode::Call;
}

bool OutputParser::step_call(OutputDelta& out, bool final) {
  const ToolCallScanner::State state = scanner_->feed(pending_, out.tool_calls, calls_);
  pending_.clear();
  if (state == ToolCallScanner::State::Scanning && !final) return false;
  if (state == ToolCallScanner::State::Done) {
    end_call("", scanner_->rest(), out);
  } else {  // failed, or cut off by the end of the output
    end_call(scanner_->unread(), state == ToolCallScanner::State::Failed ? scanner_->rest() : "", out);
  }
  return true;
}

// Back to content: the text of a failed call is content; the rest is read
// again from the start.
void OutputParser::end_call(std::string_view failed, std::string_view rest, OutputDelta& out) {
  pending_ = std::string(rest);
  const std::string failed_text(failed);
  scanner_.reset();
  mode_ = Mode::Content;
  if (failed_text.find_first_not_of(kOutputSpace) == std::string::npos) {
    content_.drop_leading();
    return;
  }
  emit_content((calls_.size() == calls_before_ ? space_before_call_ : "") + failed_text, out);
}

}  // namespace parley::chat
