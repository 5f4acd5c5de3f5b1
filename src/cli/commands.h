#pragma once
// Subcommands of the `parley` binary; each adds itself to the CLI11 app.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace parley {
class Model;
class LoraAdapter;
namespace serve {
class LoraRegistry;
}

void add_generate_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_template_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_mkmodel_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_bench_serve_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_loadtest_command(CLI::App& app);
void add_mkadapter_command(CLI::App& app);
void add_lora_command(CLI::App& app);

// Options every model-using command shares.
// The whole file as text; throws parley::Error naming `what` (a flag).
std::string read_text_file(const std::string& path, const std::string& what);
// A chat template's text: a bundled template's name (chat/named_templates.h) or a Jinja file.
std::string read_chat_template(const std::string& name_or_file, const std::string& what);

struct ModelOptions {
  std::string model;      // empty: $PARLEY_MODEL, else the bundled model
  std::string tokenizer;  // llama2.c tokenizer.bin
  int threads = 0;        // 0: physical cores
  bool no_repack = false;  // Model::Layout::kMapOnly
  std::string chat_template;  // a Jinja file that replaces the model's chat template (serve, chat)
  void add_to(CLI::App& cmd);
  void add_chat_template_to(CLI::App& cmd);
  std::string resolved_model() const;
  int resolved_threads() const;
  std::unique_ptr<Model> load() const;  // prints the load time on stderr
};

// --lora PATH[:SCALE]: a LoRA adapter to run the model with (generate, chat, bench, eval).
struct LoraOption {
  std::string spec;
  void add_to(CLI::App& cmd);
  // The adapter checked against `model` (null without --lora); prints the load time on stderr.
  std::shared_ptr<const LoraAdapter> load(const Model& model) const;
  float scale() const;  // SCALE, 1 when absent
};
// "path:0.5" -> ("path", 0.5); a suffix that is not a number stays in the path (scale 1).
std::pair<std::string, float> split_lora_spec(const std::string& spec);

// parley serve's LoRA adapters (docs/lora.md): --lora NAME=PATH[:SCALE]
// (repeatable, loaded at start), --lora-dir DIR (each adapter file there
// under its file stem, loaded on first use) and --lora-memory (the LRU budget).
struct ServeLoraOptions {
  std::vector<std::string> adapters;
  std::string dir, memory;
  void add_to(CLI::App& cmd);
  // The registry for `model`, the --lora adapters loaded; throws parley::Error
  // with the loader's reason for a bad file or one for another base model.
  std::unique_ptr<serve::LoraRegistry> registry(const Model& model) const;
};

}  // namespace parley
