// parley bench-serve: an in-process serving benchmark. A stream of synthetic
// requests (closed loop at a fixed concurrency, or Poisson arrivals) goes
// through the continuous-batching engine; reports aggregate throughput, time
// to first token and inter-token latency percentiles, and memory.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/engine_options.h"
#include "engine/engine_limits.h"
#include "engine/grammar/grammar.h"
#include "engine/llm_engine.h"
#include "kernels/cpu.h"
#include "loadtest/machine.h"
#include "loadtest/stats.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchServeArgs {
  ModelOptions model;
  int32_t concurrency = 16;
  int32_t requests = 64;
  int32_t prompt_tokens = 128;
  int32_t max_tokens = 64;
  double spread = 0;  // lengths uniform in [n (1 - spread), n (1 + spread)]
  int32_t shared_prefix = 0;
  double rate = 0;  // requests per second (Poisson); 0 = closed loop
  uint64_t seed = 1;
  float temperature = 0, top_p = 1;  // greedy by default; the sampler's work per token otherwise
  int32_t top_k = 0;
  EngineConfig engine;
  SpecOptions spec;
  std::string kv_memory, kv_type = "f16", policy = "fcfs", kv_policy = "full";
  bool no_prefix_cache = false;
  bool json = false;
  std::string grammar, json_schema;  // output constraint: a GBNF file ("json": any JSON object), a JSON schema file
  std::vector<std::string> loras;    // --lora PATH[:SCALE]: request i runs with adapter i mod their count
};

struct BenchAdapter {
  std::shared_ptr<const LoraAdapter> adapter;
  float scale = 1.0f;
};

// The --lora adapters, each loaded (and its load time and memory printed) as generate's --lora.
std::vector<BenchAdapter> bench_adapters(const BenchServeArgs& a, const Model& model) {
  std::vector<BenchAdapter> out;
  for (const std::string& spec : a.loras) {
    const LoraOption option{spec};
    out.push_back({option.load(model), option.scale()});
  }
  return out;
}

// The grammar every request is held to (null: none), as the server compiles it.
std::shared_ptr<const grammar::Grammar> bench_grammar(const BenchServeArgs& a) {
  if (!a.json_schema.empty()) return grammar::parse_gbnf(grammar::json_schema_to_gbnf_ordered(
                                  nlohmann::ordered_json::parse(read_text_file(a.json_schema, "JSON schema"))));
  if (a.grammar == "json") return grammar::parse_gbnf(grammar::json_gbnf(true));
  if (!a.grammar.empty()) return grammar::parse_gbnf(read_text_file(a.grammar, "grammar"));
  return nullptr;
}

struct Trace {
  Clock::time_point submitted, finished;
  std::vector<Clock::time_point> tokens;
};

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

class Workload {
 public:
  Workload(const BenchServeArgs& a, int32_t vocab)
      : a_(a), vocab_(vocab), rng_(a.seed), prefix_(tokens(a.shared_prefix)), grammar_(bench_grammar(a)) {}
  Request next() {
    Request r;
    r.prompt = prefix_;
    const auto body = tokens(jitter(a_.prompt_tokens));
    r.prompt.insert(r.prompt.end(), body.begin(), body.end());
    r.prompt[0] = 1;  // BOS
    r.max_tokens = jitter(a_.max_tokens);
    r.sampling.temperature = a_.temperature;
    r.sampling.top_k = a_.top_k;
    r.sampling.top_p = a_.top_p;
    if (a_.temperature > 0) r.sampling.seed = rng_();  // greedy runs keep the workload of earlier versions
    r.ignore_eos = true;
    r.grammar = grammar_;
    return r;
  }

 private:
  int32_t jitter(int32_t n) {
    std::uniform_real_distribution<double> u(1.0 - a_.spread, 1.0 + a_.spread);
    return std::max(1, int32_t(double(n) * u(rng_) + 0.5));
  }
  std::vector<int32_t> tokens(int32_t n) {
    std::vector<int32_t> t(static_cast<size_t>(std::max(n, 0)));
    std::uniform_int_distribution<int32_t> id(3, vocab_ - 1);  // no control tokens
    for (auto& x : t) x = id(rng_);
    return t;
  }
  const BenchServeArgs& a_;
  int32_t vocab_;
  std::mt19937_64 rng_;
  std::vector<int32_t> prefix_;
  std::shared_ptr<const grammar::Grammar> grammar_;
};

EngineConfig engine_config(const BenchServeArgs& a) {
  EngineConfig c = a.engine;
  c.threads = a.model.threads;
  if (!a.kv_memory.empty()) c.kv_memory_bytes = parse_memory_size(a.kv_memory);
  c.kv_type = parse_kv_type(a.kv_type);
  if (a.policy != "fcfs" && a.policy != "cost-aware") throw Error("--policy: fcfs or cost-aware");
  c.policy = a.policy == "fcfs" ? SchedulePolicy::Fcfs : SchedulePolicy::CostAware;
  c.kv_retention.policy = parse_kv_policy(a.kv_policy);
  c.prefix_cache = !a.no_prefix_cache;
  a.spec.apply(c);
  return c;
}

nlohmann::json summarize_run(const BenchServeArgs& a, const std::vector<Trace>& traces, double wall_s,
                             const LlmEngine& engine, uint64_t peak_used, const Model& model, uint64_t block_bytes) {
  using loadtest::summarize;
  std::vector<double> ttft, itl, latency;
  uint64_t generated = 0;
  for (const Trace& t : traces) {
    latency.push_back(ms(t.finished - t.submitted));
    if (t.tokens.empty()) continue;
    ttft.push_back(ms(t.tokens[0] - t.submitted));
    for (size_t i = 1; i < t.tokens.size(); ++i) itl.push_back(ms(t.tokens[i] - t.tokens[i - 1]));
    generated += t.tokens.size();
  }
  const EngineStats s = engine.stats();
  nlohmann::json j = {
      {"model", model.name()},
      {"lora_adapters", a.loras.size()},
      {"wall_s", wall_s},
      {"requests", traces.size()},
      {"sampling", {{"temperature", a.temperature}, {"top_k", a.top_k}, {"top_p", a.top_p}}},
      {"output_tok_s", double(generated) / wall_s},
      {"requests_per_s", double(traces.size()) / wall_s},
      {"prompt_tok_s", double(s.prompt_tokens) / wall_s},
      {"ttft_ms", loadtest::to_json(summarize(ttft))},
      {"itl_ms", loadtest::to_json(summarize(itl))},
      {"latency_ms", loadtest::to_json(summarize(latency))},
      {"steps", s.steps},
      {"step_time_s", double(s.step_us) / 1e6},
      {"preemptions", s.preemptions},
      {"spec_drafted", s.spec_drafted},
      {"spec_accepted", s.spec_accepted},
      {"spec_tokens_per_step", s.spec_verifications ? double(s.spec_tokens) / double(s.spec_verifications) : 0.0},
      {"spec_draft_s", double(s.spec_draft_us) / 1e6},
      {"prefix_cache_hit_tokens", s.prefix_cache_hit_tokens},
      {"prefix_cache_query_tokens", s.prefix_cache_query_tokens},
      {"kv_pool_mb", double(s.kv_blocks_total * block_bytes) / 1e6},
      {"kv_peak_mb", double(peak_used * block_bytes) / 1e6},
      {"kv_peak_blocks", peak_used},
      {"weights_mb", double(model.weight_bytes()) / 1e6},
      {"peak_rss_mb", double(loadtest::peak_rss_bytes()) / 1e6},
  };
  // Requests after the first wave arrive while the engine is busy (and, with
  // a shared prefix, find it cached).
  if (a.rate <= 0 && int32_t(ttft.size()) > a.concurrency)
    j["ttft_after_first_wave_ms"] =
        loadtest::to_json(summarize(std::vector<double>(ttft.begin() + a.concurrency, ttft.end())));
  return j;
}

void print_text(const BenchServeArgs& a, const nlohmann::json& j) {
  auto p = [&](const char* key, const char* pct) { return j[key][pct].get<double>(); };
  std::printf("wall %.2f s: output %.1f tok/s, %.2f requests/s, prompt %.1f tok/s evaluated\n", j["wall_s"].get<double>(),
              j["output_tok_s"].get<double>(), j["requests_per_s"].get<double>(), j["prompt_tok_s"].get<double>());
  std::printf("TTFT ms: P50 %.1f, P99 %.1f", p("ttft_ms", "p50"), p("ttft_ms", "p99"));
  if (j.contains("ttft_after_first_wave_ms"))
    std::printf("; after the first %d: P50 %.1f, P99 %.1f", a.concurrency, p("ttft_after_first_wave_ms", "p50"),
                p("ttft_after_first_wave_ms", "p99"));
  std::printf("\n");
  std::printf("inter-token ms: P50 %.1f, P99 %.1f\n", p("itl_ms", "p50"), p("itl_ms", "p99"));
  std::printf("request latency ms: P50 %.1f, P99 %.1f\n", p("latency_ms", "p50"), p("latency_ms", "p99"));
  std::printf("engine: %llu steps (%.2f s in steps), %llu preemptions, prefix cache %llu of %llu prompt tokens\n",
              j["steps"].get<unsigned long long>(), j["step_time_s"].get<double>(), j["preemptions"].get<unsigned long long>(),
              j["prefix_cache_hit_tokens"].get<unsigned long long>(),
              j["prefix_cache_query_tokens"].get<unsigned long long>());
  if (j["spec_drafted"].get<unsigned long long>() > 0)
    std::printf("speculation: %llu drafted, %llu accepted, %.2f tokens per verification, %.2f s in the draft model\n",
                j["spec_drafted"].get<unsigned long long>(), j["spec_accepted"].get<unsigned long long>(),
                j["spec_tokens_per_step"].get<double>(), j["spec_draft_s"].get<double>());
  std::printf("memory: KV pool %.1f MB (peak %llu blocks used = %.1f MB), weights %.1f MB, peak RSS %.1f MB\n",
              j["kv_pool_mb"].get<double>(), j["kv_peak_blocks"].get<unsigned long long>(),
              j["kv_peak_mb"].get<double>(), j["weights_mb"].get<double>(), j["peak_rss_mb"].get<double>());
}

void run_bench_serve(const BenchServeArgs& a) {
  auto model = a.model.load();
  const EngineConfig config = engine_config(a);
  LlmEngine engine(*model, config);
  const KvLayout layout = kv_layout(model->config(), engine.config());
  FILE* setup = a.json ? stderr : stdout;  // with --json, stdout holds the JSON only
  char target[48] = "";
  if (config.max_step_ms > 0) std::snprintf(target, sizeof target, " (step target %.0f ms)", config.max_step_ms);
  std::fprintf(setup, "%s: %d threads (%s), KV %s, %s scheduling, max %d running, %d tokens per step%s, KV policy %s\n",
              model->name().c_str(), engine.config().threads, std::string(isa_name(active_isa())).c_str(),
              std::string(dtype_name(config.kv_type)).c_str(), a.policy.c_str(), config.max_running,
              config.max_batch_tokens, target, a.kv_policy.c_str());
  char arrivals[64];
  if (a.rate > 0) std::snprintf(arrivals, sizeof arrivals, "Poisson arrivals %.2f/s", a.rate);
  else std::snprintf(arrivals, sizeof arrivals, "concurrency %d", a.concurrency);
  char sampling[160] = "greedy";
  if (a.temperature > 0)
    std::snprintf(sampling, sizeof sampling, "temperature %.2f, top-k %d, top-p %.2f", a.temperature, a.top_k, a.top_p);
  if (!a.grammar.empty() || !a.json_schema.empty())
    std::snprintf(sampling + std::strlen(sampling), sizeof sampling - std::strlen(sampling), ", held to %s",
                  a.json_schema.empty() ? a.grammar.c_str() : a.json_schema.c_str());
  std::fprintf(setup, "load: %d requests, %s, prompts %d tokens (+%d shared), %d output tokens, lengths +-%.0f%%, %s\n",
              a.requests, arrivals, a.prompt_tokens, a.shared_prefix, a.max_tokens, 100 * a.spread, sampling);

  const std::vector<BenchAdapter> adapters = bench_adapters(a, *model);
  if (!adapters.empty()) std::fprintf(setup, "LoRA: requests spread over %zu adapters\n", adapters.size());
  Workload work(a, model->config().vocab_size);
  std::vector<Trace> traces(size_t(a.requests));
  for (auto& t : traces) t.tokens.reserve(size_t(a.max_tokens * (1 + a.spread)) + 2);
  std::mutex mu;
  std::condition_variable cv;
  int32_t in_flight = 0, finished = 0;
  uint64_t peak_used = 0;
  auto submit = [&](int32_t i) {
    Trace& t = traces[size_t(i)];
    Request r = work.next();
    if (!adapters.empty()) {
      r.lora = adapters[size_t(i) % adapters.size()].adapter;
      r.lora_scale = adapters[size_t(i) % adapters.size()].scale;
    }
    std::lock_guard lock(mu);
    t.submitted = Clock::now();
    ++in_flight;
    engine.submit(std::move(r), [&, i](const Event& e) {  // engine thread: record and return
      const auto now = Clock::now();
      std::lock_guard lock(mu);
      Trace& tr = traces[size_t(i)];
      if (e.token >= 0) tr.tokens.push_back(now);
      if (!e.final) return;
      if (e.finish == FinishReason::Error) std::fprintf(stderr, "request %d failed: %s\n", i, e.error.c_str());
      tr.finished = now;
      --in_flight;
      ++finished;
      cv.notify_one();
    });
  };
  const auto start = Clock::now();
  std::exponential_distribution<double> gap(a.rate > 0 ? a.rate : 1.0);
  std::mt19937_64 rng(a.seed + 1);
  for (int32_t i = 0; i < a.requests; ++i) {
    if (a.rate > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(gap(rng)));
    } else {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < a.concurrency; });
    }
    submit(i);
    peak_used = std::max(peak_used, engine.stats().kv_blocks_used);
  }
  for (;;) {
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, std::chrono::milliseconds(5), [&] { return finished == a.requests; })) break;
    lock.unlock();
    peak_used = std::max(peak_used, engine.stats().kv_blocks_used);
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const auto summary = summarize_run(a, traces, wall, engine, peak_used, *model, layout.block_bytes);
  if (a.json) std::printf("%s\n", summary.dump(2).c_str());
  else print_text(a, summary);
}

}  // namespace

void add_bench_serve_command(CLI::App& app) {
  auto a = std::make_shared<BenchServeArgs>();
  auto* cmd = app.add_subcommand("bench-serve", "in-process serving benchmark of the batching engine");
  a->model.add_to(*cmd);
  cmd->add_option("--concurrency", a->concurrency, "requests in flight (closed loop)")->capture_default_str();
  cmd->add_option("--requests", a->requests, "requests in all")->capture_default_str();
  cmd->add_option("--prompt-tokens", a->prompt_tokens, "prompt tokens per request (after the shared prefix)")
      ->capture_default_str();
  cmd->add_option("--max-tokens", a->max_tokens, "output tokens per request")->capture_default_str();
  cmd->add_option("--length-spread", a->spread, "prompt and output lengths uniform within +-this fraction")
      ->capture_default_str();
  cmd->add_option("--shared-prefix-tokens", a->shared_prefix, "a prefix every prompt starts with")
      ->capture_default_str();
  cmd->add_option("--rate", a->rate, "Poisson arrivals per second instead of the closed loop");
  cmd->add_option("--seed", a->seed, "workload seed (and the requests' sampling seeds)")->capture_default_str();
  cmd->add_option("--temp", a->temperature, "sampling temperature of every request (0 = greedy)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--top-k", a->top_k, "top-k of every request (0 = off)")->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--top-p", a->top_p, "top-p of every request (1 = off)")->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  add_step_options(*cmd, a->engine);
  a->spec.add_to(*cmd);
  cmd->add_option("--kv-memory", a->kv_memory, "KV pool: bytes, 512M, 2G or 25% (default: 25% of RAM, capped)");
  add_kv_type_option(*cmd, a->kv_type);
  cmd->add_option("--block-size", a->engine.block_size, "tokens per KV block")->capture_default_str();
  cmd->add_flag("--kv-prefault", a->engine.kv_prefault, kKvPrefaultHelp);
  cmd->add_option("--policy", a->policy, "scheduling: fcfs or cost-aware")->capture_default_str();
  cmd->add_flag("--no-prefix-cache", a->no_prefix_cache, "disable automatic prefix caching");
  add_kv_retention_options(*cmd, a->kv_policy, a->engine.kv_retention);
  cmd->add_flag("--json", a->json, "print the results as one JSON object");
  cmd->add_option("--grammar", a->grammar, "hold every answer to a GBNF grammar file ('json': any JSON object)");
  cmd->add_option("--json-schema", a->json_schema, "hold every answer to a JSON schema file (as response_format)")
      ->excludes("--grammar");
  cmd->add_option("--lora", a->loras, "LoRA adapter PATH[:SCALE] (repeatable): request i runs with adapter i mod their count");
  cmd->callback([a] { run_bench_serve(*a); });
}

}  // namespace parley
