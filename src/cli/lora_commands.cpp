// LoRA adapters on the command line: --lora PATH[:SCALE], `parley mkadapter`
// (random adapters for a base model) and `parley lora merge`.
#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "kernels/dtype.h"
#include "model/lora_files.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {

std::pair<std::string, float> split_lora_spec(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos) return {spec, 1.0f};
  const std::string tail = spec.substr(colon + 1);
  char* end = nullptr;
  const float scale = std::strtof(tail.c_str(), &end);
  if (tail.empty() || *end != '\0') return {spec, 1.0f};
  return {spec.substr(0, colon), scale};
}

namespace {

struct MkAdapterArgs {
  std::string base, out, targets = "all", type = "f32";
  MkAdapterSpec spec;
};

void run_mkadapter(MkAdapterArgs& a) {
  const auto type = dtype_from_name(a.type);
  if (!type) throw Error("mkadapter: unknown type '" + a.type + "' (f32, f16, bf16, q8_0)");
  a.spec.type = *type;
  a.spec.targets = parse_lora_targets(a.targets);
  write_random_adapter(a.base, a.spec, a.out);
  std::cerr << "wrote " << a.out << " (rank " << a.spec.rank << ", " << a.targets << ")\n";
}

}  // namespace

void LoraOption::add_to(CLI::App& cmd) {
  cmd.add_option("--lora", spec,
                 "LoRA adapter GGUF (llama.cpp's adapter format) applied at run time, optionally :SCALE "
                 "(times alpha / rank; default 1)");
}

float LoraOption::scale() const { return split_lora_spec(spec).second; }

std::shared_ptr<const LoraAdapter> LoraOption::load(const Model& model) const {
  if (spec.empty()) return nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const LoraAdapter> a = LoraAdapter::load(split_lora_spec(spec).first, model);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "loaded LoRA adapter " << a->path() << " (" << a->pairs().size() << " matrices, rank up to "
            << a->max_rank() << ", " << double(a->bytes()) / 1e6 << " MB) in " << ms << " ms\n";
  return a;
}

void add_mkadapter_command(CLI::App& app) {
  auto a = std::make_shared<MkAdapterArgs>();
  auto* cmd = app.add_subcommand("mkadapter", "write a random LoRA adapter for a GGUF base model (tests, benchmarks)");
  cmd->add_option("base", a->base, "the base model GGUF")->required()->check(CLI::ExistingFile);
  cmd->add_option("out", a->out, "the adapter GGUF to write")->required();
  cmd->add_option("-r,--rank", a->spec.rank, "rank of every pair")->capture_default_str();
  cmd->add_option("--alpha", a->spec.alpha, "adapter.lora.alpha (default: the rank, a scale of 1)");
  cmd->add_option("--targets", a->targets,
                  "comma-separated projections: attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down, "
                  "output, or all (those the base has)")
      ->capture_default_str();
  cmd->add_option("--type", a->type, "f32, f16, bf16 or q8_0 (q8_0 where rows fill its blocks)")->capture_default_str();
  cmd->add_option("--strength", a->spec.strength, "size of the low-rank product relative to the base product")
      ->capture_default_str();
  cmd->add_option("--seed", a->spec.seed, "random seed")->capture_default_str();
  cmd->callback([a] { run_mkadapter(*a); });
}

void add_lora_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("lora", "LoRA adapter tools");
  cmd->require_subcommand(1);
  struct MergeArgs {
    std::string base, adapter, out;
    float scale = 1.0f;
  };
  auto a = std::make_shared<MergeArgs>();
  auto* merge = cmd->add_subcommand("merge", "write BASE with ADAPTER merged into its weights (each re-quantized to "
                                             "its type in BASE)");
  merge->add_option("base", a->base, "the base model GGUF")->required()->check(CLI::ExistingFile);
  merge->add_option("adapter", a->adapter, "the LoRA adapter GGUF")->required()->check(CLI::ExistingFile);
  merge->add_option("out", a->out, "the merged model GGUF to write")->required();
  merge->add_option("--scale", a->scale, "user scale (times alpha / rank)")->capture_default_str();
  merge->callback([a] {
    merge_lora(a->base, a->adapter, a->scale, a->out);
    std::cerr << "wrote " << a->out << "\n";
  });
}

}  // namespace parley
