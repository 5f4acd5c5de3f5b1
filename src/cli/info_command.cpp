// parley info: what a model file holds.
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "gguf/describe.h"
#include "model/model.h"

namespace parley {
namespace {

// "bpe (pre-tokenizer gpt-2), 50257 tokens, 1 control, 0 user-defined"
std::string describe_tokenizer(const Vocab& v) {
  int control = 0, user_defined = 0;
  for (TokenType t : v.types) {
    control += t == TokenType::Control;
    user_defined += t == TokenType::UserDefined;
  }
  const bool spm = v.kind == Vocab::Kind::Spm;
  return std::string(spm ? "sentencepiece" : "bpe (pre-tokenizer " + v.pre + ")") + ", " + std::to_string(v.size()) +
         " tokens, " + std::to_string(control) + " control, " + std::to_string(user_defined) + " user-defined";
}

// A GGUF file without tensors holds only a vocabulary (llama.cpp's
// ggml-vocab-*.gguf): its tokenizer is all there is to load, whatever the architecture.
void print_vocabulary_only(const gguf::File& f) {
  const Tokenizer tok = Tokenizer::from_gguf(f);
  std::cout << "vocabulary only: " << f.get_string("general.name", "") << " (" << f.path() << "), no tensors\n"
            << "architecture: " << f.get_string("general.architecture", "(none)") << " (not needed to tokenize)\n"
            << "tokenizer: " << describe_tokenizer(tok.vocab()) << "\n";
}

void print_config(const Model& m) {
  const ModelConfig& c = m.config();
  std::cout << "model: " << m.name() << " (" << m.path() << ")\n"
            << "architecture: " << c.arch << "\n"
            << "dim " << c.dim << ", layers " << c.n_layers << ", heads " << c.n_heads << ", kv heads "
            << c.n_kv_heads << ", head dim " << c.head_dim << ", ffn " << c.ffn_dim << ", vocab " << c.vocab_size
            << ", context " << c.context_length << "\n"
            << "rms eps " << c.norm_eps << ", rope base " << c.rope_base << ", rope dims " << c.rope_dim
            << (c.rope_style == RopeStyle::Neox ? " (neox)" : " (interleaved)") << ", rope scale " << c.rope_scale
            << (m.weights().rope_freqs ? ", llama3 rope freqs" : "") << "\n"
            << "sliding window " << c.sliding_window << ", qkv bias " << (c.qkv_bias ? "yes" : "no") << ", qk norm "
            << (c.qk_norm ? "yes" : "no") << ", tied output " << (c.tied_output ? "yes" : "no") << "\n"
            << "tokenizer: " << describe_tokenizer(m.tokenizer().vocab()) << "\n"
            << "parameters " << m.n_params() << ", weight bytes " << m.weight_bytes() << "\n"
            << "repacked at load: " << m.packed_bytes() << " bytes of packed matrices for the int8 GEMM"
            << (m.packed_bytes() ? " (their file pages are released; --no-repack on serve/bench/generate keeps the mapping only)"
                                 : " (none: no Q8_0, Q4_0, IQ4_XS or Q3_K matrices, or no SIMD path packs them "
                                   "on this CPU)")
            << "\n";
  const MoeConfig& e = c.moe;
  if (!e.enabled()) return;
  std::cout << "mixture of experts: " << e.n_experts << " experts of ffn " << e.expert_ffn_dim << ", " << e.n_used
            << " per token" << (e.norm_top_k ? " (weights renormalised)" : "");
  if (e.shared_ffn_dim > 0) std::cout << ", a shared expert of ffn " << e.shared_ffn_dim;
  std::cout << "\n";
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto model = std::make_shared<ModelOptions>();
  auto* cmd = app.add_subcommand("info", "architecture, metadata and tensor table of a model file");
  cmd->add_option("model", model->model, "the model file (default: the bundled model)");
  cmd->add_option("-z,--tokenizer", model->tokenizer, "llama2.c tokenizer.bin");
  cmd->callback([model] {
    if (const std::string path = model->resolved_model(); Model::is_gguf(path)) {
      const auto f = gguf::File::open(path);
      if (f->tensors().empty()) {
        print_vocabulary_only(*f);
        std::cout << "\n" << gguf::describe(*f);
        return;
      }
    }
    auto m = model->load();
    print_config(*m);
    if (m->gguf()) std::cout << "\n" << gguf::describe(*m->gguf());
  });
}

}  // namespace parley
