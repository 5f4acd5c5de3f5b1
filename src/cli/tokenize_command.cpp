// parley tokenize: text (argument or file) to token ids on stdout. Only the
// model file's tokenizer is loaded (GGUF metadata or tokenizer.bin), so any
// vocabulary works, vocabulary-only GGUF files of any architecture too.
#include <iostream>

#include "cli/commands.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

struct TokenizeArgs {
  ModelOptions model;
  std::string text;
  std::string file;
  bool no_bos = false;
  bool special = false;
};

void run_tokenize(const TokenizeArgs& a) {
  const std::string text = a.file.empty() ? a.text : read_text_file(a.file, "--file");
  // The tokenizer alone: any GGUF vocabulary works, whatever its architecture.
  const Tokenizer tok = Model::load_tokenizer(a.model.resolved_model(), a.model.tokenizer);
  const auto ids = tok.encode(text, !a.no_bos, a.special);
  for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
  std::cout << "\n";
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* cmd = app.add_subcommand("tokenize", "print the token ids of a text");
  // Only the file options of ModelOptions: no weights are loaded.
  cmd->add_option("-m,--model", args->model.model,
                  "GGUF file of any architecture (vocabulary-only files too) or llama2.c checkpoint "
                  "(default: $PARLEY_MODEL, else the bundled stories260K)");
  cmd->add_option("-z,--tokenizer", args->model.tokenizer, "llama2.c tokenizer.bin (default: beside the checkpoint)");
  cmd->add_option("text", args->text, "the text to tokenize");
  cmd->add_option("-f,--file", args->file, "read the text from a file instead");
  cmd->add_flag("--no-bos", args->no_bos, "do not add BOS/EOS tokens");
  cmd->add_flag("--special", args->special,
                "also recognise control-token texts such as <|im_start|> (user-defined tokens always are)");
  cmd->callback([args] { run_tokenize(*args); });
}

}  // namespace parley
