#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "chat/named_templates.h"
#include "cli/commands.h"
#include "kernels/thread_pool.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(what + ": cannot open " + path);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string read_chat_template(const std::string& name_or_file, const std::string& what) {
  if (const auto named = chat::named_chat_template(name_or_file)) return std::string(*named);
  return read_text_file(name_or_file, what);
}

void ModelOptions::add_to(CLI::App& cmd) {
  cmd.add_option("-m,--model", model, "GGUF file or llama2.c checkpoint (default: $PARLEY_MODEL, else the bundled stories260K)");
  cmd.add_option("-z,--tokenizer", tokenizer, "llama2.c tokenizer.bin (default: beside the checkpoint)");
  cmd.add_option("-t,--threads", threads, "worker threads (default: physical cores)");
  cmd.add_flag("--no-repack", no_repack,
               "keep every weight matrix in the file's memory mapping: no packed copies for the int8 GEMM "
               "(less memory for models near the RAM size; slower prefill and batched decode, and IQ4_XS / Q3_K "
               "decode)");
}

void ModelOptions::add_chat_template_to(CLI::App& cmd) {
  cmd.add_option("--chat-template", chat_template, "Jinja file used instead of the model's tokenizer.chat_template")
      ->check(CLI::ExistingFile);
}

std::string ModelOptions::resolved_model() const {
  if (!model.empty()) return model;
  if (const char* env = std::getenv("PARLEY_MODEL"); env && *env) return env;
  return PARLEY_DEFAULT_MODEL;
}

int ModelOptions::resolved_threads() const { return threads > 0 ? threads : physical_cores(); }

std::unique_ptr<Model> ModelOptions::load() const {
  const auto t0 = std::chrono::steady_clock::now();
  auto m = Model::load(resolved_model(), tokenizer, no_repack ? Model::Layout::kMapOnly : Model::Layout::kPack);
  if (!chat_template.empty()) m->set_chat_template(read_text_file(chat_template, "--chat-template"));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "loaded " << m->name() << " (" << m->config().arch << ", " << m->n_params() << " parameters) in "
            << ms << " ms";
  if (m->packed_bytes()) std::cerr << ", " << m->packed_bytes() / 1000000 << " MB of weights repacked for the int8 GEMM";
  std::cerr << "\n";
  return m;
}

}  // namespace parley
