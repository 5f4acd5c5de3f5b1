#pragma once
// The state of one choice (one engine request) of a response: the text and
// log-probabilities it produced so far, and how it ended.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/request.h"

namespace parley::serve {

struct Choice {
  size_t prompt_index = 0;  // which prompt of the request it continues
  std::string text;
  std::vector<Event> tokens;  // per-token events kept for logprobs (text cleared)
  bool finished = false;
  FinishReason finish = FinishReason::None;
  std::string error;
  std::string stop_string;  // the stop string that ended it, if one did
  int32_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;

  // Folds an engine event in.
  void add(const Event& e, bool keep_logprobs);
};

struct Usage {
  int64_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
};
// Prompt tokens count once per prompt, completion tokens once per choice.
Usage total_usage(const std::vector<Choice>& choices);

}  // namespace parley::serve
