// StreamingDetokenizer (declared in tokenizer.h).
#include <string>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace parley {
namespace {

// Moves the complete characters at the front of `pending` to the result,
// invalid bytes as U+FFFD; an unfinished character at the end stays unless `final`.
std::string take_characters(std::string& pending, bool final) {
  std::string out;
  size_t pos = 0;
  while (pos < pending.size()) {
    const unicode::Utf8Step step = unicode::decode_utf8(pending, pos);
    if (step.kind == unicode::Utf8Step::Incomplete && !final) break;
    if (step.kind == unicode::Utf8Step::Ok) {
      out.append(pending, pos, step.len);
    } else {
      unicode::append_utf8(out, unicode::kReplacement);
    }
    pos += step.len;
  }
  pending.erase(0, pos);
  return out;
}

}  // namespace

std::string StreamingDetokenizer::push(int32_t id) {
  pending_ += tok_->token_to_piece_in_text(id, first_, prev_);
  first_ = false;
  prev_ = id;
  return take_characters(pending_, false);
}

std::string StreamingDetokenizer::flush() { return take_characters(pending_, true); }

}  // namespace parley
