// parley loadtest: a load generator for any OpenAI-compatible server
// (src/loadtest/): closed-loop users or Poisson arrivals, synthetic or file
// prompts, shared prefixes, multi-turn conversations; TTFT, inter-token and
// end-to-end latency percentiles, throughput and errors.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "loadtest/progress.h"
#include "loadtest/report.h"
#include "loadtest/runner.h"
#include "util/error.h"

namespace parley {
namespace {

struct LoadtestArgs {
  loadtest::LoadOptions o;
  std::string prompt_tokens = "128", prompt_range, max_tokens = "64";
  bool json = false;
};

loadtest::LoadOptions resolve(const LoadtestArgs& a) {
  loadtest::LoadOptions o = a.o;
  o.prompt_tokens = loadtest::LengthRange::parse(a.prompt_range.empty() ? a.prompt_tokens : a.prompt_range,
                                                 "--prompt-tokens");
  o.max_tokens = loadtest::LengthRange::parse(a.max_tokens, "--max-tokens");
  if (o.max_tokens.lo < 1) throw Error("--max-tokens must be at least 1");
  if (o.sessions && !o.chat) throw Error("--sessions needs chat requests (not --completions)");
  if (o.turns < 1 || o.concurrency < 1) throw Error("--turns and --concurrency must be at least 1");
  if (o.idle_connections < 0) throw Error("--idle-connections must be at least 0");
  if (o.requests <= 0 && o.duration_s <= 0) o.requests = 32;
  return o;
}

void run_loadtest(const LoadtestArgs& a) {
  const loadtest::LoadOptions o = resolve(a);
  const bool show = o.progress || isatty(STDERR_FILENO);
  loadtest::ProgressFn progress;
  if (show)
    progress = [&](int64_t done, int64_t failed, double elapsed) {
      loadtest::draw_progress(done, failed, elapsed, o.requests, o.duration_s);
    };
  const auto result = loadtest::run_load(o, progress);
  if (show) loadtest::end_progress();
  const auto report = loadtest::make_report(o, result);
  if (a.json) std::cout << report.dump(2) << "\n";
  else std::cout << loadtest::format_report(report);
}

}  // namespace

void add_loadtest_command(CLI::App& app) {
  auto a = std::make_shared<LoadtestArgs>();
  auto& o = a->o;
  auto* cmd = app.add_subcommand("loadtest", "load-test an OpenAI-compatible server (docs/benchmarks.md)");
  cmd->add_option("--url", o.url, "the server's root URL (http only)")->capture_default_str();
  cmd->add_option("--model", o.model, "model name (default: the first of GET /v1/models)");
  cmd->add_option("--api-key", o.api_key, "sent as Authorization: Bearer KEY");
  cmd->add_option("-c,--concurrency", o.concurrency, "virtual users (closed loop)")->capture_default_str();
  cmd->add_option("--rate", o.rate, "open loop: conversations start at Poisson arrivals of this many per second");
  cmd->add_option("-n,--requests", o.requests, "requests in all (default 32 unless --duration)");
  cmd->add_option("--duration", o.duration_s, "seconds during which requests start");
  cmd->add_option("--prompt-tokens", a->prompt_tokens, "prompt length in tokens (about one word each), N or A:B")
      ->capture_default_str()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--prompt-tokens-range", a->prompt_range, "A:B: prompt lengths uniform in [A, B]");
  cmd->add_option("--prompts-file", o.prompts_file, "prompts, one per line (text, or JSONL with prompt/messages)");
  cmd->add_option("--max-tokens", a->max_tokens, "max_tokens per request, N or A:B")
      ->capture_default_str()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--shared-prefix-tokens", o.shared_prefix_tokens, "a common prefix of this many tokens on every prompt")
      ->capture_default_str();
  cmd->add_option("--turns", o.turns, "requests per conversation; each sends the history so far")->capture_default_str();
  cmd->add_flag("--sessions", o.sessions, "multi-turn through POST /v1/sessions and session_id (Parley)");
  cmd->add_flag("--chat,!--completions", o.chat, "chat completions (default) or text completions");
  cmd->add_flag("--stream,!--no-stream", o.stream, "stream answers as SSE (default on)");
  cmd->add_flag("--ignore-eos", o.ignore_eos, "ask the server to generate max_tokens (vLLM/llama.cpp/Parley extension)");
  cmd->add_option("--temperature", o.temperature, "sampling temperature (default: the server's)");
  cmd->add_option("--timeout", o.timeout_s, "seconds per request")->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of prompts, lengths and arrivals")->capture_default_str();
  cmd->add_option("--io-threads", o.io_threads, "client I/O threads")->capture_default_str();
  cmd->add_option("--idle-connections", o.idle_connections,
                  "keep-alive connections opened (one GET /health each) before the load and held silent during it")
      ->capture_default_str();
  cmd->add_flag("--progress", o.progress, "progress bar on stderr even when it is not a terminal");
  cmd->add_flag("--json", a->json, "print one JSON object with every number");
  cmd->callback([a] { run_loadtest(*a); });
}

}  // namespace parley
