// parley chat: an interactive multi-turn conversation in the terminal.
// Each turn re-renders the conversation with the model's chat template; the
// engine's prefix cache means only the new turn is prefilled (from the last
// whole KV block the conversation shares with the previous turn).
#include <iostream>

#include "chat/chat_template.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/sampling_options.h"
#include "engine/run_request.h"
#include "model/model.h"

namespace parley {
namespace {

struct ChatArgs {
  ModelOptions model;
  LoraOption lora;
  SamplingOptions sampling;
  std::string system;
  LocalEngineOptions engine;
  int32_t max_new = 512;
};

void run_chat(const ChatArgs& a) {
  auto model = a.model.load();
  LlmEngine engine(*model, a.engine.config(a.model.resolved_threads()));
  const Tokenizer& tok = model->tokenizer();
  Request opts = a.sampling.request({}, a.max_new);
  opts.lora = a.lora.load(*model);
  opts.lora_scale = a.lora.scale();
  // Template formats end a turn with a special token (EOS/EOT); the plain
  // fallback format has none, so the next "User:" line ends the answer.
  if (chat::detect_chat_family(tok.vocab().chat_template) == chat::ChatFamily::Plain)
    opts.stop_strings.push_back("\nUser:");
  std::vector<chat::ChatMessage> msgs;
  if (!a.system.empty()) msgs.push_back({"system", a.system});
  std::cerr << "chatting with " << model->name() << " — /reset starts over, /quit or end of input leaves\n";
  for (std::string line;;) {
    std::cout << "> " << std::flush;
    if (!std::getline(std::cin, line) || line == "/quit") break;
    if (line == "/reset") {
      msgs.resize(a.system.empty() ? 0 : 1);
      continue;
    }
    if (line.empty()) continue;
    msgs.push_back({"user", line});
    Request turn = opts;
    turn.prompt = chat::encode_chat(tok, msgs, true);
    const auto r = run_request(engine, std::move(turn), [](std::string_view text) { std::cout << text << std::flush; });
    std::cout << "\n";
    std::cerr << "[" << r.tokens.size() << " tokens, " << r.decode_tok_s() << " tok/s, " << r.prefilled_tokens()
              << " of " << r.prompt_tokens << " prompt tokens prefilled]\n";
    msgs.push_back({"assistant", r.text});
  }
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto args = std::make_shared<ChatArgs>();
  auto* cmd = app.add_subcommand("chat", "interactive multi-turn chat in the terminal");
  args->model.add_to(*cmd);
  args->lora.add_to(*cmd);
  args->model.add_chat_template_to(*cmd);
  args->sampling.add_to(*cmd);
  cmd->add_option("--system", args->system, "system prompt");
  args->engine.add_to(*cmd);
  cmd->add_option("-n,--max-new", args->max_new, "maximum tokens per answer")->capture_default_str();
  cmd->callback([args] { run_chat(*args); });
}

}  // namespace parley
