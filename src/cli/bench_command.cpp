// parley bench: memory bandwidth, load time, prefill and batch-1 decode speed
// of a model, with decode measured against the bandwidth bound.
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <fstream>
#include <vector>

#include "cli/commands.h"
#include "engine/generator.h"
#include "kernels/cpu.h"
#include "kernels/membw.h"
#include "model/model.h"

namespace parley {
namespace {

struct BenchArgs {
  ModelOptions model;
  std::vector<int32_t> prompt_lengths = {128, 512};
  int32_t decode_tokens = 128;
  int reps = 3;
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// Bytes streamed per decoded token: every matrix but the embedding table
// (one row of it), which the output projection reads in full when tied.
uint64_t decode_bytes(const Model& m) {
  auto bytes = [](const MatrixView& w) { return row_bytes(w.type, uint64_t(w.cols)) * uint64_t(w.rows); };
  const Weights& w = m.weights();
  uint64_t total = bytes(w.output);
  for (const auto& l : w.layers)
    total += bytes(l.wq) + bytes(l.wk) + bytes(l.wv) + bytes(l.wo) + bytes(l.w_gate) + bytes(l.w_up) + bytes(l.w_down);
  return total;
}

std::vector<int32_t> synthetic_prompt(const Model& m, int32_t n) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) ids[size_t(i)] = (i * 7919 + 13) % m.config().vocab_size;
  return ids;
}

double best_of(int reps, const std::function<double()>& f) {
  double best = 0;
  for (int i = 0; i < reps; ++i) best = std::max(best, f());
  return best;
}

void run_bench(const BenchArgs& a) {
  ThreadPool pool(a.model.resolved_threads());
  std::printf("cpu: %s; kernels: %s; threads: %d\n", cpu_model().c_str(), std::string(isa_name(active_isa())).c_str(),
              pool.size());
  const double bw = measure_read_bandwidth(pool);
  std::printf("memory read bandwidth: %.1f GB/s (1 GiB summed by %d threads, best of 5)\n", bw / 1e9, pool.size());
  const auto t0 = std::chrono::steady_clock::now();
  auto model = a.model.load();
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t per_token = decode_bytes(*model);
  std::printf("model: %s (%s), %llu parameters, %.1f MB of weights, %.1f MB read per decoded token\n",
              model->name().c_str(), model->config().arch.c_str(), (unsigned long long)model->n_params(),
              double(model->weight_bytes()) / 1e6, double(per_token) / 1e6);
  std::printf("load: %.1f ms\n", load_ms);
  GenerateOptions opts;
  opts.sampling.temperature = 0;
  opts.ignore_eos = true;
  for (int32_t n : a.prompt_lengths) {
    if (n + 1 >= model->config().context_length) continue;
    const auto prompt = synthetic_prompt(*model, n);
    opts.max_tokens = 1;
    const double tps = best_of(a.reps, [&] {
      Generator gen(*model, pool, n + 2);
      const auto r = gen.run(prompt, opts);
      return r.prefilled_tokens * 1000.0 / r.prefill_ms;
    });
    std::printf("prefill %d tokens: %.1f tok/s\n", n, tps);
  }
  opts.max_tokens = a.decode_tokens;
  const auto prompt = synthetic_prompt(*model, 8);
  const double tps = best_of(a.reps, [&] {
    Generator gen(*model, pool, std::min(model->config().context_length, 8 + a.decode_tokens + 1));
    const auto r = gen.run(prompt, opts);
    return double(r.tokens.size() - 1) * 1000.0 / r.decode_ms;  // the first token came from prefill
  });
  const double bound = bw / double(per_token);
  std::printf("decode batch 1: %.1f tok/s; bandwidth bound %.1f tok/s; %.0f%% of bound\n", tps, bound,
              100.0 * tps / bound);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "offline benchmark: bandwidth, load, prefill and decode speed");
  args->model.add_to(*cmd);
  cmd->add_option("--prompt-tokens", args->prompt_lengths, "prefill lengths to measure")->capture_default_str();
  cmd->add_option("--decode-tokens", args->decode_tokens, "tokens to decode at batch 1")->capture_default_str();
  cmd->add_option("--reps", args->reps, "repetitions (best is reported)")->capture_default_str();
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace parley
