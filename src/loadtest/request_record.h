#pragma once
// What the load test measured about one request.
#include <cstdint>
#include <string>
#include <vector>

#include "loadtest/connection.h"

namespace parley::loadtest {

struct RequestRecord {
  int32_t turn = 0;                     // 0: the first request of its conversation
  ErrorKind error = ErrorKind::None;
  unsigned status = 0;                  // HTTP status (0: none arrived)
  std::string message;                  // what went wrong
  double ttft_ms = -1;                  // first non-empty text; -1: none
  double e2e_ms = 0;
  std::vector<double> gaps_ms;          // between consecutive text chunks
  int32_t chunks = 0;                   // chunks that carried text
  int64_t output_tokens = 0;            // usage.completion_tokens, else `chunks`
  int64_t prompt_tokens = -1;           // -1: not reported
  int64_t cached_tokens = 0;            // usage.prompt_tokens_details.cached_tokens
  bool ok() const { return error == ErrorKind::None; }
};

}  // namespace parley::loadtest
