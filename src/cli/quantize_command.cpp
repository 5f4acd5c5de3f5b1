// parley quantize IN OUT TYPE: a GGUF re-encoded in another type or mixed
// recipe (docs/quantization.md); parley convert: a llama2.c checkpoint (or
// any loadable Llama model) written as GGUF.
#include <array>
#include <iostream>

#include "cli/commands.h"
#include "model/model_files.h"
#include "util/error.h"

namespace parley {
namespace {

QuantRecipe recipe_named(const std::string& name) {
  const auto r = quant_recipe_from_name(name);
  if (!r) throw Error("unknown type or recipe '" + name + "' (" + quant_recipe_names() + ")");
  return *r;
}

void print_report(const WriteReport& r, const std::string& out) {
  std::cerr << "wrote " << out << ": " << r.tensors << " tensors, " << r.in_bytes << " -> " << r.out_bytes
            << " bytes of tensor data";
  if (r.fallbacks > 0) std::cerr << " (" << r.fallbacks << " matrices in a fallback type: rows not a multiple of the block)";
  std::cerr << "\n";
}

struct ConvertArgs {
  ModelOptions model;
  std::string out;
  std::string type = "f32";
};

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto args = std::make_shared<std::array<std::string, 3>>();
  auto* cmd = app.add_subcommand("quantize", "re-encode a GGUF model's matrices in another type");
  cmd->add_option("input", (*args)[0], "GGUF model to read")->required();
  cmd->add_option("output", (*args)[1], "GGUF file to write")->required();
  cmd->add_option("type", (*args)[2], quant_recipe_names())->required();
  cmd->callback([args] {
    const auto& [in, out, type] = *args;
    print_report(quantize_gguf(in, out, recipe_named(type)), out);
  });
}

void add_convert_command(CLI::App& app) {
  auto a = std::make_shared<ConvertArgs>();
  auto* cmd = app.add_subcommand("convert", "write a llama2.c checkpoint (+ tokenizer.bin) as a GGUF model");
  a->model.add_to(*cmd);
  cmd->add_option("-o,--out", a->out, "GGUF file to write")->required();
  cmd->add_option("--type", a->type, "type of the matrices: " + quant_recipe_names())->capture_default_str();
  cmd->callback([a] {
    const auto m = a->model.load();
    print_report(convert_to_gguf(*m, a->out, recipe_named(a->type)), a->out);
  });
}

}  // namespace parley
