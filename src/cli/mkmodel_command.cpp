// parley mkmodel: a GGUF model with seeded random weights and real shapes.
#include <iostream>

#include "chat/named_templates.h"
#include "cli/commands.h"
#include "kernels/dtype.h"
#include "model/mkmodel.h"
#include "util/error.h"

namespace parley {
namespace {

struct MkModelArgs {
  MkModelSpec spec;
  std::string preset;
  std::string type = "f32";
  std::string out;
  std::string chat_template;  // a bundled template's name or a file
  int32_t layers = 0;         // 0: the preset's (or the spec's default)
};

std::string template_names() {
  std::string out;
  for (const std::string& name : chat::named_chat_template_names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

void run_mkmodel(MkModelArgs a) {
  if (!a.preset.empty() && !apply_preset(a.preset, a.spec))
    throw Error("unknown preset '" + a.preset + "' (known: " + preset_names() + ")");
  if (a.layers > 0) a.spec.n_layers = a.layers;  // a preset cut down to fewer blocks
  const auto type = dtype_from_name(a.type);
  if (!type)
    throw Error("unknown weight type '" + a.type +
                "' (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs)");
  a.spec.type = *type;
  if (a.spec.vocab_from.empty()) a.spec.vocab_from = PARLEY_DEFAULT_MODEL;
  if (!a.chat_template.empty()) a.spec.chat_template = read_chat_template(a.chat_template, "--chat-template");
  write_random_model(a.spec, a.out);
  std::cerr << "wrote " << a.out << "\n";
}

}  // namespace

void add_mkmodel_command(CLI::App& app) {
  auto a = std::make_shared<MkModelArgs>();
  auto* cmd = app.add_subcommand("mkmodel", "write a GGUF model with seeded random weights");
  cmd->add_option("-o,--out", a->out, "output GGUF path")->required();
  cmd->add_option("--preset", a->preset, "shape preset: " + preset_names());
  cmd->add_option("--arch", a->spec.arch,
                  "llama, llama3, tinyllama, mistral, qwen2, qwen3, gemma2, gemma3, phi3, mixtral, qwen2moe, "
                  "qwen3moe or olmoe")
      ->capture_default_str();
  cmd->add_option("--dim", a->spec.dim, "embedding width")->capture_default_str();
  cmd->add_option("--layers", a->layers, "number of blocks (default: the preset's, else 2)");
  cmd->add_option("--heads", a->spec.n_heads, "attention heads")->capture_default_str();
  cmd->add_option("--kv-heads", a->spec.n_kv_heads, "key/value heads (default: heads)");
  cmd->add_option("--head-dim", a->spec.head_dim, "head width (default: dim / heads)");
  cmd->add_option("--ffn", a->spec.ffn_dim, "feed-forward width, each expert's with experts (default: about 8/3 dim)");
  cmd->add_option("--experts", a->spec.n_experts, "experts per block: a mixture-of-experts FFN (MoE archs: 8)");
  cmd->add_option("--experts-used", a->spec.n_experts_used, "experts each token goes through (default 2)");
  cmd->add_option("--shared-expert-ffn", a->spec.shared_expert_ffn,
                  "width of the shared expert every token goes through (qwen2moe: 4x ffn)");
  cmd->add_option("--ctx", a->spec.context_length, "context length")->capture_default_str();
  cmd->add_option("--vocab-size", a->spec.vocab_size, "vocabulary rows (default: the vocabulary file's; more pads)");
  cmd->add_option("--sliding-window", a->spec.sliding_window,
                  "sliding attention window (default: mistral and gemma2 4096, gemma3 512)");
  cmd->add_flag("--tied", a->spec.tied_output, "share the output matrix with the token embeddings");
  cmd->add_option("--rope-dim", a->spec.rope_dim, "rotated dims per head (partial rotary; default: head dim)");
  cmd->add_option("--original-ctx", a->spec.original_context,
                  "original training context of LongRoPE (phi3) and YaRN (default: 4096 or --ctx if smaller)");
  cmd->add_option("--yarn", a->spec.yarn_factor, "YaRN rope scaling with this factor");
  cmd->add_option("--type", a->type, "weight type of the matrices")->capture_default_str();
  cmd->add_option("--vocab", a->spec.vocab_from, "GGUF to copy the tokenizer from (default: the bundled model)");
  cmd->add_option("--seed", a->spec.seed, "random seed")->capture_default_str();
  cmd->add_option("--name", a->spec.name, "general.name");
  cmd->add_option("--chat-template", a->chat_template,
                  "tokenizer.chat_template: a bundled template (" + template_names() + ") or a Jinja file");
  cmd->callback([a] { run_mkmodel(*a); });
}

}  // namespace parley
