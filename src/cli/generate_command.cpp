// parley generate: one prompt in, its continuation on stdout, timings on stderr.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

#include "cli/commands.h"
#include "cli/sampling_options.h"
#include "engine/generator.h"
#include "model/model.h"

namespace parley {
namespace {

struct GenerateArgs {
  ModelOptions model;
  SamplingOptions sampling;
  std::string prompt;
  int32_t max_new = 256;
  int32_t context = 0;
  bool ids = false;
  bool echo = false;
  bool no_bos = false;
};

void run_generate(const GenerateArgs& a) {
  auto model = a.model.load();
  ThreadPool pool(a.model.resolved_threads());
  const Tokenizer& tok = model->tokenizer();
  std::vector<int32_t> prompt = tok.encode(a.prompt, !a.no_bos, false);
  if (prompt.empty()) prompt.push_back(tok.vocab().bos >= 0 ? tok.vocab().bos : 0);
  Generator gen(*model, pool, a.context);
  const GenerateOptions opts = a.sampling.options(a.max_new);
  if (a.echo) {
    if (a.ids) for (int32_t id : prompt) std::printf("%d ", id);
    else std::fputs(tok.decode(prompt).c_str(), stdout);
  }
  const auto r = gen.run(prompt, opts, [&](std::string_view text, int32_t) {
    if (!a.ids) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  });
  if (a.ids) {
    for (size_t i = 0; i < r.tokens.size(); ++i) std::printf(i ? " %d" : "%d", r.tokens[i]);
  }
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr, "prompt: %d tokens in %.1f ms (%.1f tok/s); generated: %zu tokens in %.1f ms (%.1f tok/s)\n",
               r.prompt_tokens, r.prefill_ms, r.prefill_ms > 0 ? r.prefilled_tokens * 1000.0 / r.prefill_ms : 0.0,
               r.tokens.size(), r.decode_ms, r.decode_ms > 0 ? double(r.tokens.size()) * 1000.0 / r.decode_ms : 0.0);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  auto* cmd = app.add_subcommand("generate", "generate a continuation of a prompt");
  args->model.add_to(*cmd);
  args->sampling.add_to(*cmd);
  cmd->add_option("-p,--prompt", args->prompt, "the prompt text");
  cmd->add_option("-n,--max-new", args->max_new, "maximum number of new tokens")->capture_default_str();
  cmd->add_option("-c,--ctx", args->context, "context length (default: the model's)");
  cmd->add_flag("--ids", args->ids, "print generated token ids instead of text");
  cmd->add_flag("--echo", args->echo, "print the prompt before the continuation");
  cmd->add_flag("--no-bos", args->no_bos, "do not add the BOS token");
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace parley
