#pragma once
// The numbers of a finished load test: one JSON object (`--json`) and the
// same as a few lines of text.
#include <nlohmann/json.hpp>

#include "loadtest/options.h"
#include "loadtest/runner.h"

namespace parley::loadtest {

// Keys: config, requests {total, succeeded, failed}, duration_s,
// requests_per_s, prompt_tokens, cached_tokens, output_tokens,
// output_tokens_per_s, ttft_ms / itl_ms / e2e_ms {count, mean, min, p50, p90,
// p99, max} over successful requests, ttft_by_turn_ms (with --turns > 1),
// idle_connections {requested, opened, open_at_end, open_s} (with
// --idle-connections) and errors {total, by_kind, by_status, examples}.
nlohmann::json make_report(const LoadOptions& options, const LoadResult& result);
std::string format_report(const nlohmann::json& report);

}  // namespace parley::loadtest
