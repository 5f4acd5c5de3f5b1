#pragma once
// What `parley loadtest` sends, to whom, and how hard.
#include <cstdint>
#include <optional>
#include <string>

#include "loadtest/prompts.h"

namespace parley::loadtest {

struct LoadOptions {
  std::string url = "http://127.0.0.1:8080";  // the server's root (a trailing /v1 is accepted)
  std::string model;                           // empty: the first of GET /v1/models
  std::string api_key;
  bool chat = true;    // /v1/chat/completions, else /v1/completions
  bool stream = true;  // SSE, with stream_options.include_usage
  bool sessions = false;  // multi-turn through POST /v1/sessions + session_id
  bool ignore_eos = false;
  std::optional<double> temperature;
  // Closed loop: `concurrency` virtual users, each sending its next request
  // when the last one finished. Open loop: conversations start at Poisson
  // arrivals of `rate` per second, however many are in flight.
  int32_t concurrency = 1;
  double rate = 0;
  int32_t requests = 0;    // requests in all (turns count one each); 0: until `duration_s`
  double duration_s = 0;   // 0: until `requests`
  int32_t turns = 1;       // requests per conversation
  LengthRange prompt_tokens{128, 128}, max_tokens{64, 64};
  int32_t shared_prefix_tokens = 0;
  std::string prompts_file;
  double timeout_s = 120;  // per request
  uint64_t seed = 1;
  int32_t io_threads = 2;
  bool progress = false;   // also when stderr is not a terminal
  // Keep-alive connections opened (one GET /health each) before the load and
  // held silent until it ends: what idle clients cost the server.
  int32_t idle_connections = 0;
};

}  // namespace parley::loadtest
