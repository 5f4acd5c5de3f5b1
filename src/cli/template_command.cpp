// parley template: what a chat template renders for a conversation, exactly as
// transformers' apply_chat_template (messages and tools as given, no BOS
// adjustment), for debugging a template with or without a model file.
#include <iostream>
#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "cli/commands.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

struct TemplateArgs {
  ModelOptions model;
  std::string bos, eos;
  bool bos_set = false, eos_set = false;
  std::string messages_file, tools_file;
  bool no_generation_prompt = false;
};

nlohmann::ordered_json read_json(const std::string& path, const std::string& what) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(read_text_file(path, what), nullptr, false);
  if (j.is_discarded()) throw Error(what + ": " + path + " is not valid JSON");
  return j;
}

// The token's text, or "" for a vocabulary without one.
std::string token_text(const Vocab& v, int32_t id) { return id >= 0 && id < v.size() ? v.tokens[size_t(id)] : ""; }

void run_template(const TemplateArgs& a) {
  std::string source, bos = a.bos, eos = a.eos;
  // The model file is read only for what the flags do not give.
  if (a.model.chat_template.empty() || !a.bos_set || !a.eos_set) {
    const Tokenizer tok = Model::load_tokenizer(a.model.resolved_model(), a.model.tokenizer);
    source = tok.vocab().chat_template;
    if (!a.bos_set) bos = token_text(tok.vocab(), tok.vocab().bos);
    if (!a.eos_set) eos = token_text(tok.vocab(), tok.vocab().eos);
  }
  if (!a.model.chat_template.empty()) source = read_text_file(a.model.chat_template, "--chat-template");
  if (source.empty()) throw Error(a.model.resolved_model() + " has no tokenizer.chat_template; give one with --chat-template");
  const nlohmann::ordered_json messages = read_json(a.messages_file, "--messages");
  const nlohmann::ordered_json tools = a.tools_file.empty() ? nlohmann::ordered_json() : read_json(a.tools_file, "--tools");
  std::cout << chat::apply_chat_template(source, messages, tools, !a.no_generation_prompt, bos, eos);
}

}  // namespace

void add_template_command(CLI::App& app) {
  auto args = std::make_shared<TemplateArgs>();
  auto* cmd = app.add_subcommand("template", "print what a chat template renders for a conversation (as transformers' apply_chat_template)");
  cmd->add_option("-m,--model", args->model.model, "GGUF file whose tokenizer.chat_template and BOS/EOS texts are used (default: $PARLEY_MODEL, else the bundled stories260K)");
  args->model.add_chat_template_to(*cmd);
  cmd->add_option("--bos-token", args->bos, "the bos_token text (default: the model's)")->each([args](const std::string&) { args->bos_set = true; });
  cmd->add_option("--eos-token", args->eos, "the eos_token text (default: the model's)")->each([args](const std::string&) { args->eos_set = true; });
  cmd->add_option("--messages", args->messages_file, "JSON file: the messages array, every field passed to the template")->required()->check(CLI::ExistingFile);
  cmd->add_option("--tools", args->tools_file, "JSON file: the tools array (default: tools=None)")->check(CLI::ExistingFile);
  cmd->add_flag("--no-generation-prompt", args->no_generation_prompt, "add_generation_prompt=False");
  cmd->callback([args] { run_template(*args); });
}

}  // namespace parley
