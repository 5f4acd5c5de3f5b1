// parley generate: one prompt in, its continuation on stdout, timings on stderr.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/sampling_options.h"
#include "engine/run_request.h"
#include "model/model.h"

namespace parley {
namespace {

struct GenerateArgs {
  ModelOptions model;
  LoraOption lora;
  SamplingOptions sampling;
  LocalEngineOptions engine;
  std::string prompt;
  int32_t max_new = 256;
  bool ids = false;
  bool echo = false;
  bool no_bos = false;
};

void run_generate(const GenerateArgs& a) {
  auto model = a.model.load();
  const auto adapter = a.lora.load(*model);
  const Tokenizer& tok = model->tokenizer();
  std::vector<int32_t> prompt = tok.encode(a.prompt, !a.no_bos, false);
  if (prompt.empty()) prompt.push_back(tok.vocab().bos >= 0 ? tok.vocab().bos : 0);
  LlmEngine engine(*model, a.engine.config(a.model.resolved_threads()));
  if (a.echo) {
    if (a.ids) for (int32_t id : prompt) std::printf("%d ", id);
    else std::fputs(tok.decode(prompt).c_str(), stdout);
  }
  Request req = a.sampling.request(prompt, a.max_new);
  req.lora = adapter;
  req.lora_scale = a.lora.scale();
  const auto r = run_request(engine, std::move(req), [&](std::string_view text) {
    if (!a.ids) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
  });
  if (a.ids) {
    for (size_t i = 0; i < r.tokens.size(); ++i) std::printf(i ? " %d" : "%d", r.tokens[i]);
  }
  std::printf("\n");
  std::fflush(stdout);
  const double prefill_ms = r.first_token_ms;
  std::fprintf(stderr, "prompt: %d tokens in %.1f ms (%.1f tok/s); generated: %zu tokens, %.1f tok/s after the first\n",
               r.prompt_tokens, prefill_ms, prefill_ms > 0 ? r.prefilled_tokens() * 1000.0 / prefill_ms : 0.0,
               r.tokens.size(), r.decode_tok_s());
  const EngineStats s = engine.stats();
  if (s.spec_verifications > 0)
    std::fprintf(stderr, "speculation: %llu drafted, %llu accepted (%.0f%%), %.2f tokens per verification, %llu steps\n",
                 (unsigned long long)s.spec_drafted, (unsigned long long)s.spec_accepted,
                 s.spec_drafted ? 100.0 * double(s.spec_accepted) / double(s.spec_drafted) : 0.0,
                 double(s.spec_tokens) / double(s.spec_verifications), (unsigned long long)s.steps);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  auto* cmd = app.add_subcommand("generate", "generate a continuation of a prompt");
  args->model.add_to(*cmd);
  args->lora.add_to(*cmd);
  args->sampling.add_to(*cmd);
  args->engine.add_to(*cmd);
  cmd->add_option("-p,--prompt", args->prompt, "the prompt text");
  cmd->add_option("-n,--max-new", args->max_new, "maximum number of new tokens")->capture_default_str();
  cmd->add_flag("--ids", args->ids, "print generated token ids instead of text");
  cmd->add_flag("--echo", args->echo, "print the prompt before the continuation");
  cmd->add_flag("--no-bos", args->no_bos, "do not add the BOS token");
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace parley
