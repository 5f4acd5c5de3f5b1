#include "serve/api/choice.h"

#include <set>

namespace parley::serve {

void Choice::add(const Event& e, bool keep_logprobs) {
  text += e.text;
  if (keep_logprobs && e.token >= 0) {
    tokens.push_back(e);
    tokens.back().text.clear();
  }
  if (e.final) {
    finished = true;
    finish = e.finish;
    error = e.error;
    stop_string = e.stop_string;
    prompt_tokens = e.prompt_tokens;
    completion_tokens = e.completion_tokens;
    cached_tokens = e.cached_tokens;
  }
}

Usage total_usage(const std::vector<Choice>& choices) {
  Usage u;
  std::set<size_t> prompts;
  for (const Choice& c : choices) {
    if (prompts.insert(c.prompt_index).second) {
      u.prompt_tokens += c.prompt_tokens;
      u.cached_tokens += c.cached_tokens;
    }
    u.completion_tokens += c.completion_tokens;
  }
  return u;
}

}  // namespace parley::serve
