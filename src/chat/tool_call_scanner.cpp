#include "chat/tool_call_scanner.h"

#include <nlohmann/json.hpp>

namespace parley::chat {
namespace {

using Result = ScanStep;

// Reads the wrapper's tokens at `pos`: each returns Ok (and moves past the
// token), More (the text ends inside it) or Bad (it is not there; `pos` is
// then where the offending text starts).
struct ScanCursor {
  std::string_view s;
  size_t& pos;

  void ws() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
  }
  Result lit(std::string_view token) {
    const std::string_view left = s.substr(pos);
    if (left.starts_with(token)) {
      pos += token.size();
      return Result::Ok;
    }
    return token.starts_with(left) ? Result::More : Result::Bad;
  }
  // A JSON string, decoded into `out`.
  Result str(std::string& out) {
    if (const Result r = lit("\""); r != Result::Ok) return r;
    for (size_t i = pos; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == '"') {
        const auto j = nlohmann::json::parse(s.substr(pos - 1, i + 2 - pos), nullptr, false);
        if (!j.is_string()) {
          --pos;  // back to the opening quote
          return Result::Bad;
        }
        out = j.get<std::string>();
        pos = i + 1;
        return Result::Ok;
      }
    }
    return Result::More;
  }
};

// Runs `steps` (each a function returning a Result) until one is not Ok.
template <class... Steps>
Result all_of(Steps&&... steps) {
  Result r = Result::Ok;
  ((r == Result::Ok ? (r = steps(), 0) : 0), ...);
  return r;
}

}  // namespace

ToolCallScanner::ToolCallScanner(ToolCallFormat format, int first_index, std::function<std::string()> make_id)
    : format_(format), make_id_(std::move(make_id)), index_(first_index) {}

std::string_view ToolCallScanner::rest() const {
  return std::string_view(buf_).substr(state_ == State::Failed ? fail_at_ : pos_);
}

std::string_view ToolCallScanner::unread() const {
  const std::string_view b = buf_;
  return state_ == State::Failed ? b.substr(call_start_, fail_at_ - call_start_) : b.substr(call_start_);
}

ToolCallScanner::State ToolCallScanner::feed(std::string_view text, std::vector<ToolCallDelta>& deltas,
                                             std::vector<ParsedToolCall>& calls) {
  buf_ += text;
  return state_ = run(deltas, calls);
}

ToolCallScanner::State ToolCallScanner::fail(size_t at) {
  fail_at_ = at;
  return State::Failed;
}

// Each phase is read whole or not at all (a short re-read when more text
// comes), except the arguments, which are streamed.
ToolCallScanner::State ToolCallScanner::run(std::vector<ToolCallDelta>& deltas, std::vector<ParsedToolCall>& calls) {
  for (;;) {
    size_t pos = pos_;
    Step step = Step::Ok;
    bool another = false;
    switch (phase_) {
      case Phase::Open: step = scan_open(pos); break;
      case Phase::Header: step = scan_header(pos, current_.name); break;
      case Phase::Arguments: step = run_arguments(deltas); pos = pos_; break;
      case Phase::Tail: step = scan_tail(pos); break;
      case Phase::Next: step = scan_next(pos, another); break;
    }
    if (step == Step::More) return State::Scanning;
    if (step == Step::Bad) return fail(pos);
    pos_ = pos;
    switch (phase_) {
      case Phase::Open: phase_ = Phase::Header; break;
      case Phase::Header:
        current_.id = make_id_();
        deltas.push_back({index_, current_.id, current_.name, ""});
        phase_ = Phase::Arguments;
        break;
      case Phase::Arguments: phase_ = Phase::Tail; break;
      case Phase::Tail:
        calls.push_back(std::move(current_));
        current_ = {};
        ++index_;
        call_start_ = pos_;
        phase_ = Phase::Next;
        break;
      case Phase::Next:
        if (!another) return State::Done;
        call_start_ = pos_;
        phase_ = Phase::Header;
        break;
    }
  }
}

ToolCallScanner::Step ToolCallScanner::scan_open(size_t& pos) const {
  ScanCursor c{buf_, pos};
  switch (format_) {
    case ToolCallFormat::Hermes: return c.lit("<tool_call>");
    case ToolCallFormat::Llama3: c.lit("<|python_tag|>"); return Step::Ok;  // or a bare {"name"
    case ToolCallFormat::Mistral: return all_of([&] { return c.lit("[TOOL_CALLS]"); }, [&] { c.ws(); return c.lit("["); });
    case ToolCallFormat::Generic:
      return all_of([&] { return c.lit("{"); }, [&] { c.ws(); return c.lit("\"tool_calls\""); },
                         [&] { c.ws(); return c.lit(":"); }, [&] { c.ws(); return c.lit("["); });
  }
  return Step::Bad;
}

// {"name": "NAME", "arguments": up to the arguments' opening brace.
ToolCallScanner::Step ToolCallScanner::scan_header(size_t& pos, std::string& name) const {
  ScanCursor c{buf_, pos};
  const auto arguments_key = [&] {  // Llama 3 writes "parameters", and sometimes "arguments"
    const Result args = c.lit("\"arguments\"");
    if (args == Result::Ok || format_ != ToolCallFormat::Llama3) return args;
    const Result params = c.lit("\"parameters\"");
    return params == Result::Bad ? args : params;
  };
  const auto object_follows = [&] {
    if (pos == buf_.size()) return Result::More;
    return buf_[pos] == '{' ? Result::Ok : Result::Bad;
  };
  return all_of([&] { c.ws(); return c.lit("{"); }, [&] { c.ws(); return c.lit("\"name\""); },
                     [&] { c.ws(); return c.lit(":"); }, [&] { c.ws(); return c.str(name); },
                     [&] { c.ws(); return c.lit(","); }, [&] { c.ws(); return arguments_key(); },
                     [&] { c.ws(); return c.lit(":"); }, [&] { c.ws(); return object_follows(); });
}

// Streams the arguments object; at its end checks that it is valid JSON.
ToolCallScanner::Step ToolCallScanner::run_arguments(std::vector<ToolCallDelta>& deltas) {
  const size_t start = pos_;
  Step step = Step::More;
  for (; pos_ < buf_.size() && step == Step::More; ++pos_) {
    const JsonTracker::Step s = args_.push(buf_[pos_]);
    if (s == JsonTracker::Step::Invalid) break;
    if (s == JsonTracker::Step::Complete) step = Step::Ok;
  }
  const std::string_view fragment = std::string_view(buf_).substr(start, pos_ - start);
  current_.arguments += fragment;
  if (!fragment.empty()) {
    if (deltas.empty() || deltas.back().index != index_) deltas.push_back({index_, "", "", ""});
    deltas.back().arguments += fragment;
  }
  if (step == Step::More && pos_ < buf_.size()) return Step::Bad;  // an invalid byte at pos_
  if (step == Step::Ok && !nlohmann::json::accept(current_.arguments)) return Step::Bad;
  return step;
}

// After the arguments: the object's end, perhaps with the call's id first.
ToolCallScanner::Step ToolCallScanner::scan_tail(size_t& pos) const {
  ScanCursor c{buf_, pos};
  c.ws();
  const Result close = c.lit("}");
  if (close != Result::Bad) return close;
  std::string id;
  return all_of([&] { return c.lit(","); }, [&] { c.ws(); return c.lit("\"id\""); },
                     [&] { c.ws(); return c.lit(":"); }, [&] { c.ws(); return c.str(id); },
                     [&] { c.ws(); return c.lit("}"); });
}

// After a call: the wrapper's end, or (in lists) the next call.
ToolCallScanner::Step ToolCallScanner::scan_next(size_t& pos, bool& another) const {
  ScanCursor c{buf_, pos};
  if (format_ == ToolCallFormat::Llama3) return Step::Ok;
  c.ws();
  if (format_ == ToolCallFormat::Hermes) return c.lit("</tool_call>");
  const Result comma = c.lit(",");
  if (comma != Result::Bad) {
    another = comma == Result::Ok;
    return comma;
  }
  if (format_ == ToolCallFormat::Mistral) return c.lit("]");
  return all_of([&] { return c.lit("]"); }, [&] { c.ws(); return c.lit("}"); });
}

}  // namespace parley::chat
