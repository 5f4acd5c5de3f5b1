// Grammar-constrained generation in the engine: greedy output is the argmax
// over the allowed tokens, sampled output always matches, end-of-generation
// comes exactly where the grammar may end, triggers start the grammar late,
// and batching changes nothing.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>

#include "engine/grammar/grammar.h"
#include "engine_test_util.h"
#include "model/sequence_forward.h"

namespace parley {
namespace {

constexpr const char* kSentence = R"(root ::= "Tom " word (" " word){1,6} "." | "Lily is " ("happy" | "sad") ".")"
                                  "\nword ::= [a-z]{1,8}";

Request constrained(const Model& model, const std::string& text, const char* gbnf, int32_t max_tokens) {
  Request r = testing::greedy(model.tokenizer().encode(text, true, false), max_tokens);
  r.grammar = grammar::parse_gbnf(gbnf);
  return r;
}

bool matches(const char* gbnf, const std::string& text) {
  grammar::Matcher m(grammar::parse_gbnf(gbnf));
  return m.accept(text) && m.can_end();
}

EngineConfig grammar_config() {
  EngineConfig c;
  c.threads = 1;
  c.kv_type = DType::F32;
  return c;
}

// The greedy tokens under the grammar without the engine: the forward pass,
// every token checked against the grammar one by one, the best allowed one.
std::vector<int32_t> allowed_argmax(const Model& model, const Request& r) {
  ThreadPool pool(1);
  SequenceForward f(model, pool);
  const Tokenizer& tok = model.tokenizer();
  const int32_t vocab = model.config().vocab_size;
  grammar::Matcher m(r.grammar);
  std::vector<int32_t> out;
  const float* logits = f.eval(r.prompt.data(), int32_t(r.prompt.size()));
  int32_t prev = r.prompt.back();
  while (int32_t(out.size()) < r.max_tokens) {
    int32_t best = -1;
    for (int32_t t = 0; t < vocab; ++t) {
      const bool ok = tok.is_eog(t) ? m.can_end() : [&] {
        const std::string piece = tok.token_to_piece_in_text(t, false, prev);
        return !piece.empty() && m.allows(piece);
      }();
      if (ok && (best < 0 || logits[t] > logits[best])) best = t;
    }
    if (best < 0 || tok.is_eog(best)) break;
    EXPECT_TRUE(m.accept(tok.token_to_piece_in_text(best, false, prev)));
    out.push_back(best);
    prev = best;
    if (m.must_end()) break;
    logits = f.eval(&best, 1);
  }
  return out;
}

TEST(EngineGrammar, GreedyIsTheArgmaxOverAllowedTokens) {
  auto model = Model::load(testing::kBundled);
  for (const char* text : {"Once upon a time", "The dog ran"}) {
    SCOPED_TRACE(text);
    const Request r = constrained(*model, text, kSentence, 60);
    const auto got = testing::run_alone(*model, grammar_config(), {r});
    EXPECT_EQ(got[0].tokens, allowed_argmax(*model, r));
    EXPECT_TRUE(matches(kSentence, got[0].text)) << got[0].text;
    EXPECT_EQ(got[0].final.finish, FinishReason::Stop);
  }
}

TEST(EngineGrammar, SampledOutputsAlwaysMatchInEverySamplingMode) {
  auto model = Model::load(testing::kBundled);
  std::vector<Request> requests;
  for (int i = 0; i < 24; ++i) {
    Request r = constrained(*model, "Once upon a time", kSentence, 80);
    r.sampling.temperature = 1.5f;
    r.sampling.seed = uint64_t(i);
    if (i % 4 == 1) r.sampling.top_p = 0.9f;  // truncation: the masked distribution is cut
    if (i % 4 == 2) r.sampling.top_k = 5;
    if (i % 4 == 3) r.sampling.min_p = 0.05f, r.top_logprobs = 3;
    requests.push_back(r);
  }
  LlmEngine engine(*model, grammar_config());
  const auto together = testing::run_together(engine, requests);
  const auto alone = testing::run_alone(*model, grammar_config(), {requests[0], requests[1], requests[3]});
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_TRUE(matches(kSentence, together[i].text)) << together[i].text;
    EXPECT_EQ(together[i].final.finish, FinishReason::Stop);
    for (const Event& e : together[i].events)
      if (e.token >= 0 && requests[i].top_logprobs >= 0) {
        EXPECT_TRUE(std::isfinite(e.logprob));
      }
  }
  // Batched with others, a seeded request draws what it draws alone.
  EXPECT_EQ(together[0].tokens, alone[0].tokens);
  EXPECT_EQ(together[1].tokens, alone[1].tokens);
  EXPECT_EQ(together[3].tokens, alone[2].tokens);
}

TEST(EngineGrammar, EndOfGenerationOnlyWhereTheGrammarMayEnd) {
  auto model = Model::load(testing::kBundled);
  // "a" then as many "b" as the model likes: it may stop after any of them.
  const char* open = R"(root ::= "Tom" [a-z ]*)";
  Request r = constrained(*model, "Once upon a time", open, 30);
  r.sampling.temperature = 1.0f;
  r.sampling.seed = 5;
  const auto got = testing::run_alone(*model, grammar_config(), {r});
  EXPECT_TRUE(matches(open, got[0].text)) << got[0].text;
  // With ignore_eos and an unbounded grammar, the request runs to max_tokens.
  r.ignore_eos = true;
  const auto longer = testing::run_alone(*model, grammar_config(), {r});
  EXPECT_EQ(longer[0].final.finish, FinishReason::Length);
  EXPECT_EQ(longer[0].tokens.size(), 30u);
}

TEST(EngineGrammar, TriggerStartsTheGrammarWhereItAppears) {
  auto model = Model::load(testing::kBundled);
  Request r = testing::greedy(model->tokenizer().encode("Once upon a time", true, false), 200);
  r.grammar = grammar::parse_gbnf(R"(root ::= " the end.")");
  r.grammar_triggers = {" the"};
  const auto free = testing::run_alone(*model, grammar_config(), {testing::greedy(r.prompt, 200)});
  // A trigger inside a word (" there") cannot start " the end.": the grammar
  // waits for the next one.
  const std::string& text = free[0].text;
  size_t at = text.find(" the");
  while (at != std::string::npos && at + 4 < text.size() && std::isalpha(static_cast<unsigned char>(text[at + 4])))
    at = text.find(" the", at + 1);
  ASSERT_NE(at, std::string::npos) << "the free story has no ' the': " << text;
  const auto got = testing::run_alone(*model, grammar_config(), {r});
  EXPECT_EQ(got[0].text, free[0].text.substr(0, at) + " the end.");
  EXPECT_EQ(got[0].final.finish, FinishReason::Stop);
}

}  // namespace
}  // namespace parley

namespace parley {
namespace {

// 2^n ways to close n brackets: the matcher refuses to follow them past its
// bound. The request that drives it there fails; the engine serves on.
TEST(EngineGrammar, AGrammarThatOutgrowsItsBoundFailsOnlyItsRequest) {
  auto model = Model::load(testing::kBundled);
  const Tokenizer& tok = model->tokenizer();
  int32_t open = -1;
  for (int32_t t = 0; t < tok.vocab().size() && open < 0; ++t)
    if (tok.token_to_piece(t) == "(") open = t;
  ASSERT_GE(open, 0);
  Request bad = constrained(*model, "Once upon a time", R"g(root ::= "(" root ")" | "(" root "]" | "")g", 100);
  bad.sampling.logit_bias = {{open, 100.0f}};  // the model writes "(" for as long as it may
  const Request good = constrained(*model, "Once upon a time", kSentence, 60);
  LlmEngine engine(*model, grammar_config());
  const auto got = testing::run_together(engine, {bad, good});
  EXPECT_EQ(got[0].final.finish, FinishReason::Error);
  EXPECT_NE(got[0].final.error.find("sampling failed"), std::string::npos) << got[0].final.error;
  EXPECT_EQ(got[1].final.finish, FinishReason::Stop);
  EXPECT_TRUE(matches(kSentence, got[1].text)) << got[1].text;
  EXPECT_EQ(engine.stats().kv_blocks_used, 0u);
}

}  // namespace
}  // namespace parley
