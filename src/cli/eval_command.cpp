// parley eval: perplexity of a model on a text, or a quantized model compared
// with its reference (docs/quantization.md).
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "kernels/thread_pool.h"
#include "model/eval.h"
#include "util/error.h"

namespace parley {
namespace {

struct EvalArgs {
  ModelOptions model;
  LoraOption lora;
  std::string perplexity_text;
  std::vector<std::string> compare;  // REF TEST
  std::string text;
  int32_t window = 0;
  size_t max_tokens = 0;  // 0: the whole text
  bool json = false;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("eval: cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<int32_t> text_tokens(const Model& m, const std::string& path, size_t max_tokens) {
  auto tokens = m.tokenizer().encode(read_text(path), true, false);
  if (max_tokens > 0 && tokens.size() > max_tokens) tokens.resize(max_tokens);
  if (tokens.size() < 2) throw Error("eval: " + path + " holds fewer than 2 tokens");
  return tokens;
}

nlohmann::json ppl_json(const PerplexityResult& r) {
  return {{"tokens", r.tokens}, {"nll", r.nll}, {"perplexity", r.perplexity()}};
}

void run_perplexity(const EvalArgs& a, ThreadPool& pool) {
  const auto m = a.model.load();
  const auto adapter = a.lora.load(*m);
  const auto r = perplexity(*m, text_tokens(*m, a.perplexity_text, a.max_tokens), a.window, pool,
                            {adapter.get(), a.lora.scale()});
  if (a.json) {
    std::cout << ppl_json(r).dump() << "\n";
    return;
  }
  std::cout << "tokens " << r.tokens << "  perplexity " << r.perplexity() << "\n";
}

void run_compare(const EvalArgs& a, ThreadPool& pool) {
  if (a.text.empty()) throw Error("eval --compare needs --text FILE");
  const auto ref = Model::load(a.compare[0]);
  const auto test = Model::load(a.compare[1]);
  const auto c = compare_models(*ref, *test, text_tokens(*ref, a.text, a.max_tokens), a.window, pool);
  const double change = c.ref.perplexity() > 0 ? (c.test.perplexity() / c.ref.perplexity() - 1) * 100 : 0;
  if (a.json) {
    std::cout << nlohmann::json{{"tokens", c.tokens}, {"ref", ppl_json(c.ref)}, {"test", ppl_json(c.test)},
                                {"perplexity_change_pct", change}, {"kl_mean", c.kl_mean}, {"kl_max", c.kl_max},
                                {"top1_agreement", c.top1_agreement}, {"cosine_mean", c.cosine_mean}}
                     .dump()
              << "\n";
    return;
  }
  std::cout << "tokens " << c.tokens << "\n"
            << "perplexity ref " << c.ref.perplexity() << "  test " << c.test.perplexity() << "  (" << change
            << "%)\n"
            << "KL(ref||test) mean " << c.kl_mean << "  max " << c.kl_max << "\n"
            << "top-1 agreement " << c.top1_agreement * 100 << "%  logit cosine " << c.cosine_mean << "\n";
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "perplexity on a text, or a quantized model compared with its reference");
  a->model.add_to(*cmd);
  a->lora.add_to(*cmd);
  auto* ppl = cmd->add_option("--perplexity", a->perplexity_text, "text file: the model's perplexity on it");
  auto* cmp = cmd->add_option("--compare", a->compare, "REF TEST: two GGUF models sharing a vocabulary")->expected(2);
  ppl->excludes(cmp);
  cmd->add_option("--text", a->text, "text file for --compare");
  cmd->add_option("--window", a->window, "tokens per evaluation window (default: the model's context)");
  cmd->add_option("--max-tokens", a->max_tokens, "score only the text's first N tokens");
  cmd->add_flag("--json", a->json, "one JSON object on stdout");
  cmd->callback([a, ppl, cmp] {
    if (ppl->count() == 0 && cmp->count() == 0) throw Error("eval: give --perplexity TEXT or --compare REF TEST");
    if (cmp->count() > 0 && !a->lora.spec.empty()) throw Error("eval: --lora applies to --perplexity");
    ThreadPool pool(a->model.resolved_threads());
    if (ppl->count() > 0) run_perplexity(*a, pool);
    else run_compare(*a, pool);
  });
}

}  // namespace parley
