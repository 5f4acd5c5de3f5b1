// parley bench: load time, prefill speed, batched decode (aggregate tok/s and
// per-token latency by batch size) and peak RSS of a model, then batch-1
// decode against the memory-bandwidth bound, each decode run paired with a
// bandwidth reading. Prefill and batch-1 decode run one request on the
// serving engine (LlmEngine, as `serve` does, prefix cache off); the batched
// table times the forward pass alone. Each number is the median of --reps runs after one
// warm-up run, with the spread (min-max) beside it; --json prints them all as
// one object.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/engine_options.h"
#include "engine/run_request.h"
#include "kernels/cpu.h"
#include "kernels/membw.h"
#include "loadtest/machine.h"
#include "model/batch_forward.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace parley {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchArgs {
  ModelOptions model;
  LoraOption lora;
  std::vector<int32_t> prompt_lengths = {128, 512};
  int32_t decode_tokens = 128;
  std::vector<int32_t> batches = {1, 4, 8, 16, 32};
  int32_t batch_steps = 16;
  std::vector<int32_t> verify;  // drafts per speculative verification step to time (empty: none)
  SpecOptions spec;             // --spec / --draft-model: batch-1 decode with speculation beside plain
  int reps = 3;
  int32_t bandwidth_mib = 1024;
  bool json = false;
};

// A number measured over repetitions.
struct Sample {
  double median = 0, min = 0, max = 0;
  nlohmann::json to_json() const { return {{"median", median}, {"min", min}, {"max", max}}; }
};

Sample summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.front(), v.back()};
}

// One warm-up run (excluded), then `reps` runs.
Sample measure(int reps, const std::function<double()>& f) {
  f();
  std::vector<double> v;
  for (int i = 0; i < std::max(reps, 1); ++i) v.push_back(f());
  return summarize(std::move(v));
}

uint64_t matrix_bytes(const MatrixView& w) { return row_bytes(w.type, uint64_t(w.cols)) * uint64_t(w.rows); }
uint64_t matrix_params(const MatrixView& w) { return uint64_t(w.cols) * uint64_t(w.rows); }

// One routed expert of a block (gate, up and down; experts are all of one
// size), measured by `size`.
template <class Size>
uint64_t one_expert(const MoeWeights& e, Size size) {
  return size(e.gate[0]) + size(e.up[0]) + size(e.down[0]);
}

// What one token goes through, each matrix measured by `size`: every block's
// matrices (of a mixture-of-experts FFN, the router, the shared expert and
// the k experts a token takes), and the output projection when `output`.
// Never the embedding table (one row of it).
template <class Size>
uint64_t per_token(const Model& m, Size size, bool output) {
  const Weights& w = m.weights();
  uint64_t total = output ? size(w.output) : 0;
  for (const auto& l : w.layers) {
    total += size(l.wq) + size(l.wk) + size(l.wv) + size(l.wo) + size(l.w_gate) + size(l.w_up) + size(l.w_down);
    const MoeWeights& e = l.moe;
    if (!e.enabled()) continue;
    total += size(e.router) + size(e.shared_gate) + size(e.shared_up) + size(e.shared_down) +
             uint64_t(m.config().moe.n_used) * one_expert(e, size);
  }
  return total;
}

// Bytes streamed per decoded token (the output projection reads the whole
// embedding table when tied).
uint64_t decode_bytes(const Model& m) { return per_token(m, matrix_bytes, true); }

// Weights a prompt token multiplies: prefill applies the output projection
// to the last token only, so its speed per parameter counts the blocks'.
uint64_t prefill_params(const Model& m) { return per_token(m, matrix_params, false); }

// Of a mixture-of-experts model, the bytes of one routed expert summed over
// the blocks: what each expert a step runs beyond another costs per block,
// all blocks together. 0 for a dense model.
uint64_t expert_bytes(const Model& m) {
  uint64_t total = 0;
  for (const auto& l : m.weights().layers)
    if (l.moe.enabled()) total += one_expert(l.moe, matrix_bytes);
  return total;
}

std::vector<int32_t> synthetic_prompt(const Model& m, int32_t n) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) ids[size_t(i)] = (i * 7919 + 13) % m.config().vocab_size;
  return ids;
}

// The --lora adapter every measurement runs with (null: the base model).
struct BenchLora {
  std::shared_ptr<const LoraAdapter> adapter;
  float scale = 1.0f;
  LoraUse use() const { return {adapter.get(), scale}; }
};

// One greedy request of `prompt` tokens for at most `max_tokens` (never stopped early).
RequestResult run_synthetic(LlmEngine& engine, int32_t prompt, int32_t max_tokens, const BenchLora& lora) {
  Request r;
  r.lora = lora.adapter;
  r.lora_scale = lora.scale;
  r.prompt = synthetic_prompt(engine.model(), prompt);
  r.sampling.temperature = 0;
  r.ignore_eos = true;
  r.max_tokens = max_tokens;
  return run_request(engine, std::move(r));
}

// Submit to first token: the queue wait (microseconds) and one sample are in it.
Sample prefill_tok_s(LlmEngine& engine, int32_t n, int reps, const BenchLora& lora) {
  return measure(reps, [&] { return n * 1000.0 / run_synthetic(engine, n, 1, lora).first_token_ms; });
}

double decode_tok_s(LlmEngine& engine, int32_t tokens, const BenchLora& lora) {
  return run_synthetic(engine, 8, tokens, lora).decode_tok_s();
}

// Batch-1 decode against the bandwidth bound. A shared host's bandwidth
// moves by tens of percent within minutes (docs/performance.md), so each
// decode run is followed at once by a bandwidth reading (best of 2 passes),
// and the share of the bound is the median of the runs' own ratios.
nlohmann::json decode_against_bound(LlmEngine& engine, ThreadPool& pool, const BenchArgs& a, uint64_t per_token,
                                    const BenchLora& lora) {
  BandwidthProbe probe(pool, size_t(std::max(a.bandwidth_mib, 1)) << 20);
  decode_tok_s(engine, a.decode_tokens, lora);  // warm-up
  std::vector<double> tok_s, gbs, percent;
  for (int i = 0; i < std::max(a.reps, 1); ++i) {
    tok_s.push_back(decode_tok_s(engine, a.decode_tokens, lora));
    gbs.push_back(probe.measure(2) / 1e9);
    percent.push_back(100.0 * tok_s.back() * double(per_token) / (gbs.back() * 1e9));
  }
  const Sample d = summarize(tok_s), bw = summarize(gbs), pct = summarize(percent);
  return {{"tok_s", d.median},           {"tok_s_spread", d.to_json()},
          {"bandwidth_gbs", bw.median},  {"bandwidth_gbs_spread", bw.to_json()},
          {"percent_of_bound", pct.median}, {"percent_of_bound_spread", pct.to_json()}};
}

// `batch` sequences with a 16-token prompt each decode `steps` tokens
// together through BatchForward (one matmul per weight for the whole batch,
// paged F16 KV, logits for every sequence; sampling excluded). Returns the
// aggregate tokens per second, and in `experts` (mixture-of-experts models)
// the distinct experts a step ran per block on average. The KV pool is
// written before the clock starts: the table is the kernels' speed, not the
// first touch of the pool's pages (5-8 us a 4 KiB page on the Zen 5 guest,
// docs/performance.md).
double batched_decode_tok_s(const Model& model, ThreadPool& pool, int32_t batch, int32_t steps, LoraUse lora,
                            double& experts) {
  constexpr int32_t kPrompt = 16, kBlock = 16;
  const int32_t blocks = (kPrompt + steps + kBlock - 1) / kBlock;
  KvCache cache(model.config(), DType::F16, kBlock, int64_t(batch) * blocks, KvCache::Commit::Now);
  BatchForward forward(model, pool, cache, batch * kPrompt, batch, blocks * kBlock);
  std::vector<int32_t> tables(size_t(batch * blocks));
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = int32_t(i);
  const auto prompt = synthetic_prompt(model, kPrompt);
  std::vector<int32_t> next(static_cast<size_t>(batch));
  std::vector<BatchChunk> chunks(static_cast<size_t>(batch));
  for (int32_t s = 0; s < batch; ++s) chunks[size_t(s)] = {prompt.data(), kPrompt, 0, &tables[size_t(s * blocks)], false};
  for (BatchChunk& c : chunks) c.lora = lora.adapter, c.lora_scale = lora.scale;
  forward.step(chunks.data(), batch);
  const uint64_t run0 = forward.experts_run();
  const auto t0 = Clock::now();
  for (int32_t step = 0; step < steps; ++step) {
    for (int32_t s = 0; s < batch; ++s) {
      next[size_t(s)] = (s * 31 + step * 7 + 3) % model.config().vocab_size;
      BatchChunk& c = chunks[size_t(s)];
      c.tokens = &next[size_t(s)];
      c.n = 1;
      c.pos = kPrompt + step;
      c.logits = true;
    }
    forward.step(chunks.data(), batch);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  int32_t moe_blocks = 0;
  for (const auto& l : model.weights().layers) moe_blocks += l.moe.enabled();
  experts = moe_blocks ? double(forward.experts_run() - run0) / (double(steps) * moe_blocks) : 0.0;
  return double(batch) * steps / seconds;
}

// One sequence's step over `positions` positions with every position's
// logits (a speculative verification: its last token and positions - 1
// drafts), in ms: the mean of `steps` steps after a 16-token prompt, the
// positions advancing as kept drafts would (sampling excluded).
double verify_step_ms(const Model& model, ThreadPool& pool, int32_t positions, int32_t steps, LoraUse lora) {
  constexpr int32_t kPrompt = 16, kBlock = 16;
  const int32_t blocks = (kPrompt + positions * steps + kBlock - 1) / kBlock;
  KvCache cache(model.config(), DType::F16, kBlock, blocks, KvCache::Commit::Now);
  BatchForward forward(model, pool, cache, std::max(kPrompt, positions), 1, blocks * kBlock);
  std::vector<int32_t> table(static_cast<size_t>(blocks));
  for (size_t i = 0; i < table.size(); ++i) table[i] = int32_t(i);
  const auto tokens = synthetic_prompt(model, std::max(kPrompt, positions));
  BatchChunk c{tokens.data(), kPrompt, 0, table.data(), false};
  c.lora = lora.adapter;
  c.lora_scale = lora.scale;
  forward.step(&c, 1);
  const auto t0 = Clock::now();
  for (int32_t step = 0; step < steps; ++step) {
    c.n = positions;
    c.pos = kPrompt + step * positions;
    c.logits = c.all_logits = true;
    forward.step(&c, 1);
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps;
}

// Batch-1 decode with speculation (--spec, --draft-model) beside plain
// decode, run alternately (plain, speculative, plain, ...: a loaded host's
// speed drifts between runs), with the drafts' acceptance.
nlohmann::json speculative_decode(LlmEngine& plain, const EngineConfig& config, const BenchArgs& a,
                                  const BenchLora& lora) {
  if (config.spec.mode == SpecMode::Off) return nullptr;
  LlmEngine spec(plain.model(), config);
  decode_tok_s(spec, a.decode_tokens, lora);  // warm-up
  const EngineStats before = spec.stats();
  std::vector<double> off, on;
  for (int i = 0; i < a.reps; ++i) {
    off.push_back(decode_tok_s(plain, a.decode_tokens, lora));
    on.push_back(decode_tok_s(spec, a.decode_tokens, lora));
  }
  const EngineStats s = spec.stats();
  const double drafted = double(s.spec_drafted - before.spec_drafted), verifications = double(s.spec_verifications - before.spec_verifications);
  const double generated = double(s.generated_tokens - before.generated_tokens);
  const Sample a_on = summarize(on), a_off = summarize(off);
  return {{"mode", spec_mode_name(config.spec.mode)},
          {"tok_s", a_on.median},
          {"tok_s_spread", a_on.to_json()},
          {"plain_tok_s", a_off.median},
          {"plain_tok_s_spread", a_off.to_json()},
          {"acceptance", drafted > 0 ? double(s.spec_accepted - before.spec_accepted) / drafted : 0.0},
          {"tokens_per_verification", verifications > 0 ? double(s.spec_tokens - before.spec_tokens) / verifications : 0.0},
          {"draft_ms_per_token", generated > 0 ? double(s.spec_draft_us - before.spec_draft_us) / 1000.0 / generated : 0.0}};
}

nlohmann::json verification_table(const Model& model, ThreadPool& pool, const BenchArgs& a, LoraUse lora) {
  nlohmann::json out = nlohmann::json::array();
  if (a.verify.empty()) return out;
  const Sample one = measure(a.reps, [&] { return verify_step_ms(model, pool, 1, a.batch_steps, lora); });
  for (int32_t k : a.verify) {
    const Sample s = measure(a.reps, [&] { return verify_step_ms(model, pool, k + 1, a.batch_steps, lora); });
    out.push_back({{"drafts", k}, {"ms", s.median}, {"ms_spread", s.to_json()}, {"one_token_ms", one.median},
                   {"ratio", s.median / one.median}});
  }
  return out;
}

std::string weight_type(const Model& m) {
  const auto& layers = m.weights().layers;
  if (layers.empty()) return "?";
  return std::string(dtype_name(layers[0].moe.enabled() ? layers[0].moe.up[0].type : layers[0].w_up.type));
}

nlohmann::json run_bench(const BenchArgs& a) {
  ThreadPool pool(a.model.resolved_threads());
  nlohmann::json out;
  out["machine"] = {{"cpu", loadtest::cpu_model()},
                    {"cores", std::thread::hardware_concurrency()},
                    {"threads", pool.size()},
                    {"isa", std::string(isa_name(active_isa()))}};
  const auto t0 = Clock::now();
  auto model = a.model.load();
  out["load_ms"] = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const uint64_t per_token = decode_bytes(*model);
  out["model"] = {{"path", model->path()},          {"name", model->name()},
                  {"arch", model->config().arch},   {"type", weight_type(*model)},
                  {"params", model->n_params()},    {"bytes", model->weight_bytes()},
                  {"bytes_per_token", per_token},   {"packed_bytes", model->packed_bytes()},
                  {"prefill_params_per_token", prefill_params(*model)},
                  {"experts", model->config().moe.n_experts}, {"experts_used", model->config().moe.n_used}};
  const auto t_lora = Clock::now();
  const BenchLora lora{a.lora.load(*model), a.lora.scale()};
  if (lora.adapter)
    out["lora"] = {{"path", lora.adapter->path()}, {"matrices", lora.adapter->pairs().size()},
                   {"max_rank", lora.adapter->max_rank()}, {"bytes", lora.adapter->bytes()}, {"scale", lora.scale},
                   {"load_ms", std::chrono::duration<double, std::milli>(Clock::now() - t_lora).count()}};
  EngineConfig config;
  config.threads = pool.size();
  config.max_running = 1;
  config.prefix_cache = false;  // every repetition prefills its whole prompt
  for (int32_t n : a.prompt_lengths) config.max_batch_tokens = std::max(config.max_batch_tokens, n);
  LlmEngine engine(*model, config);
  out["prefill"] = nlohmann::json::array();
  const auto multiplied = double(prefill_params(*model));
  for (int32_t n : a.prompt_lengths) {
    if (n + 1 >= model->config().context_length) continue;
    const Sample s = prefill_tok_s(engine, n, a.reps, lora);
    out["prefill"].push_back({{"tokens", n},
                              {"tok_s", s.median},
                              {"tok_s_spread", s.to_json()},
                              {"weight_gmacs", s.median * multiplied / 1e9}});
  }
  out["decode"] = nlohmann::json::array();
  const auto moe_used = double(model->config().moe.n_used), per_expert = double(expert_bytes(*model));
  for (int32_t b : a.batches) {
    double experts = 0.0;
    const Sample s =
        measure(a.reps, [&] { return batched_decode_tok_s(*model, pool, b, a.batch_steps, lora.use(), experts); });
    nlohmann::json row = {
        {"batch", b}, {"tok_s", s.median}, {"ms_per_token", 1000.0 * b / s.median}, {"tok_s_spread", s.to_json()}};
    if (model->config().moe.n_experts > 0) {
      // The bytes a step reads: the shared parts once, and each expert it ran.
      row["experts_per_block"] = experts;
      row["bytes_per_step"] = double(per_token) - (moe_used - experts) * per_expert;
    }
    out["decode"].push_back(row);
  }
  out["verify"] = verification_table(*model, pool, a, lora.use());
  EngineConfig spec_config = config;
  a.spec.apply(spec_config);
  out["speculative"] = speculative_decode(engine, spec_config, a, lora);
  out["reps"] = a.reps;
  // Before the bandwidth test, whose buffer (1 GiB by default) would dwarf the model's memory.
  out["peak_rss_mb"] = double(loadtest::peak_rss_bytes()) / 1e6;
  out["decode_batch1"] = decode_against_bound(engine, pool, a, per_token, lora);
  const double gbs = out["decode_batch1"]["bandwidth_gbs"].get<double>();
  out["machine"]["bandwidth_gbs"] = gbs;
  out["bound_tok_s"] = gbs * 1e9 / double(per_token);
  for (auto& row : out["decode"])
    if (row.contains("bytes_per_step")) {
      row["bound_tok_s"] = row["batch"].get<double>() * gbs * 1e9 / row["bytes_per_step"].get<double>();
      row["percent_of_bound"] = 100.0 * row["tok_s"].get<double>() / row["bound_tok_s"].get<double>();
    }
  return out;
}

void print_text(const nlohmann::json& j) {
  auto spread = [](const nlohmann::json& s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "[%.1f-%.1f]", s["min"].get<double>(), s["max"].get<double>());
    return std::string(buf);
  };
  const auto& m = j["machine"];
  std::printf("cpu: %s; kernels: %s; threads: %d\n", m["cpu"].get<std::string>().c_str(),
              m["isa"].get<std::string>().c_str(), m["threads"].get<int>());
  std::printf("memory read bandwidth: %.1f GB/s %s (a large buffer summed by every thread in 2 streams, "
              "read after each decode run)\n",
              m["bandwidth_gbs"].get<double>(), spread(j["decode_batch1"]["bandwidth_gbs_spread"]).c_str());
  const auto& model = j["model"];
  std::printf("model: %s (%s, %s), %llu parameters, %.1f MB of weights, %.1f MB read per decoded token\n",
              model["name"].get<std::string>().c_str(), model["arch"].get<std::string>().c_str(),
              model["type"].get<std::string>().c_str(), model["params"].get<unsigned long long>(),
              model["bytes"].get<double>() / 1e6, model["bytes_per_token"].get<double>() / 1e6);
  if (model["experts"].get<int>() > 0)
    std::printf("mixture of experts: a token reads %d of %d experts per block (the bound counts those, the "
                "router, shared parts and attention)\n",
                model["experts_used"].get<int>(), model["experts"].get<int>());
  std::printf("load: %.1f ms; repacked for the int8 GEMM: %.1f MB\n", j["load_ms"].get<double>(),
              model["packed_bytes"].get<double>() / 1e6);
  if (j.contains("lora"))
    std::printf("LoRA adapter: %s, %d matrices of rank up to %d, %.1f MB, scale %.2f, loaded in %.1f ms\n",
                j["lora"]["path"].get<std::string>().c_str(), j["lora"]["matrices"].get<int>(),
                j["lora"]["max_rank"].get<int>(), j["lora"]["bytes"].get<double>() / 1e6,
                j["lora"]["scale"].get<double>(), j["lora"]["load_ms"].get<double>());
  std::printf("median of %d runs after a warm-up, [min-max]\n", j["reps"].get<int>());
  for (const auto& p : j["prefill"])
    std::printf("prefill %d tokens: %.1f tok/s %s; %.1f G weight multiply-adds/s\n", p["tokens"].get<int>(),
                p["tok_s"].get<double>(), spread(p["tok_s_spread"]).c_str(), p["weight_gmacs"].get<double>());
  const auto& d = j["decode_batch1"];
  std::printf("decode batch 1: %.1f tok/s %s; bandwidth bound %.1f tok/s; %.0f%% of bound %s (each run's own)\n",
              d["tok_s"].get<double>(), spread(d["tok_s_spread"]).c_str(), j["bound_tok_s"].get<double>(),
              d["percent_of_bound"].get<double>(), spread(d["percent_of_bound_spread"]).c_str());
  std::printf("batched decode (BatchForward, 16-token prompts, sampling excluded):\n");
  const bool moe = j["model"]["experts"].get<int>() > 0;
  std::printf("%6s | %22s | %s%s\n", "batch", "aggregate tok/s", "per-token latency ms",
              moe ? " | experts per block | MB per step | bandwidth bound tok/s" : "");
  for (const auto& b : j["decode"]) {
    std::printf("%6d | %7.1f %14s | %.2f", b["batch"].get<int>(), b["tok_s"].get<double>(),
                spread(b["tok_s_spread"]).c_str(), b["ms_per_token"].get<double>());
    if (b.contains("bound_tok_s"))
      std::printf(" | %.1f | %.1f | %.1f (%.0f%%)", b["experts_per_block"].get<double>(),
                  b["bytes_per_step"].get<double>() / 1e6, b["bound_tok_s"].get<double>(),
                  b["percent_of_bound"].get<double>());
    std::printf("\n");
  }
  if (!j["verify"].empty()) {
    std::printf("speculative verification (one sequence, its token and k drafts, every position's logits):\n");
    std::printf("%6s | %22s | %s\n", "k", "ms per step", "x a one-token step");
    for (const auto& v : j["verify"])
      std::printf("%6d | %7.2f %14s | %.2f\n", v["drafts"].get<int>(), v["ms"].get<double>(),
                  spread(v["ms_spread"]).c_str(), v["ratio"].get<double>());
  }
  if (!j["speculative"].is_null()) {
    const auto& s = j["speculative"];
    std::printf("speculative decode batch 1 (--spec %s, alternating with plain runs): %.1f tok/s %s against %.1f "
                "tok/s %s plain (%.2fx); %.0f%% of drafts kept, %.2f tokens per verification, draft %.2f ms per "
                "token\n",
                s["mode"].get<std::string>().c_str(), s["tok_s"].get<double>(), spread(s["tok_s_spread"]).c_str(),
                s["plain_tok_s"].get<double>(), spread(s["plain_tok_s_spread"]).c_str(),
                s["tok_s"].get<double>() / s["plain_tok_s"].get<double>(), 100.0 * s["acceptance"].get<double>(),
                s["tokens_per_verification"].get<double>(), s["draft_ms_per_token"].get<double>());
  }
  std::printf("peak RSS: %.1f MB\n", j["peak_rss_mb"].get<double>());
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "offline benchmark: bandwidth, load, prefill, decode and batched decode speed");
  args->model.add_to(*cmd);
  args->lora.add_to(*cmd);
  args->spec.add_to(*cmd);
  cmd->add_option("--prompt-tokens", args->prompt_lengths, "prefill lengths to measure")->capture_default_str();
  cmd->add_option("--decode-tokens", args->decode_tokens, "tokens to decode at batch 1")->capture_default_str();
  cmd->add_option("--batch", args->batches, "batch sizes of the batched-decode table")->capture_default_str();
  cmd->add_option("--batch-steps", args->batch_steps, "decode steps timed per batch size (and per --verify k)")->capture_default_str();
  cmd->add_option("--verify", args->verify,
                  "draft counts k whose speculative verification step (k + 1 positions) to time against a one-token step");
  cmd->add_option("--reps", args->reps, "repetitions after the warm-up (the median is reported)")->capture_default_str();
  cmd->add_option("--bandwidth-mib", args->bandwidth_mib, "buffer summed by the bandwidth test (far above the caches)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object instead of text");
  cmd->callback([args] {
    const auto j = run_bench(*args);
    if (args->json) std::cout << j.dump(2) << "\n";
    else print_text(j);
  });
}

}  // namespace parley
