// Request lifecycle in LlmEngine: cancellation at every stage, deadlines,
// invalid requests, priorities and the cost-aware policy, log-probabilities,
// shutdown, and the configuration checks.
#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <thread>

#include "engine/engine_limits.h"
#include "engine_test_util.h"
#include "util/error.h"

namespace parley {
namespace {

using testing::Collector;
using testing::prompt;

EngineConfig config() {
  EngineConfig c;
  c.threads = 1;
  c.max_batch_tokens = 16;
  return c;
}

Request endless(std::vector<int32_t> p, int32_t max_tokens = 100) {
  Request r = testing::greedy(std::move(p), max_tokens);
  r.ignore_eos = true;
  return r;
}

class EngineLifecycle : public ::testing::Test {
 protected:
  void SetUp() override { model_ = Model::load(testing::kBundled); }
  std::unique_ptr<Model> model_;
};

TEST_F(EngineLifecycle, CancelBeforeStartDuringPrefillAndDuringDecode) {
  EngineConfig c = config();
  c.max_running = 2;
  LlmEngine engine(*model_, c);
  Collector col;
  std::promise<void> b_decoding, cancelled;
  bool signalled = false;
  // B decodes while A (a long prompt, 16 tokens per step) is still in prefill.
  // B's first token holds the engine thread until A and the waiting request
  // are cancelled, so A cannot finish its prefill first however the threads
  // are scheduled (under a loaded ctest it did).
  const RequestId b = engine.submit(endless(prompt(5), 120), [&](const Event& e) {
    if (e.token >= 0 && !signalled) {
      signalled = true;
      b_decoding.set_value();
      cancelled.get_future().wait();
    }
    col.sink()(e);
  });
  const RequestId a = engine.submit(endless(prompt(120, 3), 10), col.sink());
  const RequestId waiting = engine.submit(endless(prompt(9), 10), col.sink());  // max_running 2: waits
  b_decoding.get_future().wait();
  engine.cancel(a);
  engine.cancel(waiting);
  cancelled.set_value();
  col.wait(2);
  engine.cancel(b);
  col.wait(3);
  for (RequestId id : {a, waiting, b}) {
    const auto o = col.get(id);
    EXPECT_EQ(o.finals, 1);
    EXPECT_EQ(o.final.finish, FinishReason::Cancelled);
  }
  EXPECT_TRUE(col.get(a).tokens.empty());
  EXPECT_TRUE(col.get(waiting).tokens.empty());
  EXPECT_FALSE(col.get(b).tokens.empty());
  const EngineStats s = engine.stats();
  EXPECT_EQ(s.kv_blocks_used, 0u);
  EXPECT_EQ(s.requests_cancelled, 3u);
  EXPECT_EQ(s.running + s.waiting, 0);
  engine.cancel(a);  // unknown by now: ignored
}

TEST_F(EngineLifecycle, CancelFromTheSinkFreesBlocksWithinAStep) {
  LlmEngine engine(*model_, config());
  Collector col;
  RequestId id = 0;
  std::promise<RequestId> known;
  auto id_future = known.get_future().share();
  id = engine.submit(endless(prompt(40), 200), [&, id_future](const Event& e) {
    col.sink()(e);
    if (e.token >= 0 && col.get(e.id).tokens.size() == 3) engine.cancel(id_future.get());
  });
  known.set_value(id);
  col.wait(1);
  const auto o = col.get(id);
  EXPECT_EQ(o.final.finish, FinishReason::Cancelled);
  EXPECT_LE(o.tokens.size(), 4u);  // one more step at most
  EXPECT_EQ(engine.stats().kv_blocks_used, 0u);
}

TEST_F(EngineLifecycle, Deadlines) {
  LlmEngine engine(*model_, config());
  Collector col;
  Request late = endless(prompt(8), 1 << 20);
  late.max_tokens = 100000;
  late.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
  Request past = endless(prompt(8), 10);
  past.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  const RequestId a = engine.submit(late, col.sink());
  const RequestId b = engine.submit(past, col.sink());
  col.wait(2);
  EXPECT_EQ(col.get(b).final.finish, FinishReason::Deadline);
  EXPECT_TRUE(col.get(b).tokens.empty());
  // The context (128) may run out before the deadline on a fast machine.
  const FinishReason fa = col.get(a).final.finish;
  EXPECT_TRUE(fa == FinishReason::Deadline || fa == FinishReason::Length) << finish_reason_name(fa);
  EXPECT_EQ(engine.stats().kv_blocks_used, 0u);
}

TEST_F(EngineLifecycle, DeadlineCutsALongGeneration) {
  EngineConfig c = config();
  c.kv_retention.policy = KvPolicy::Window;  // no context end: only the deadline stops it
  c.kv_retention.window = 32;
  LlmEngine engine(*model_, c);
  Collector col;
  Request r = endless(prompt(8), 1 << 30);
  r.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  const RequestId id = engine.submit(r, col.sink());
  col.wait(1);
  EXPECT_EQ(col.get(id).final.finish, FinishReason::Deadline);
  EXPECT_FALSE(col.get(id).tokens.empty());
}

TEST_F(EngineLifecycle, InvalidRequestsGetOneErrorEvent) {
  LlmEngine engine(*model_, config());
  Collector col;
  std::vector<Request> bad(8, endless(prompt(8)));
  bad[0].prompt.clear();
  bad[1].prompt[3] = 512;  // vocabulary of 512
  bad[2].prompt = prompt(model_->config().context_length + 1);
  bad[3].sampling.temperature = -1;
  bad[4].sampling.top_p = 0;
  bad[5].max_tokens = -1;
  bad[6].kv_retention = KvRetention{KvPolicy::Window, 1000, 0, 0};  // budget beyond the context
  bad[7].sampling.logit_bias = {{9999, 1.0f}};
  std::vector<RequestId> ids;
  for (const auto& r : bad) ids.push_back(engine.submit(r, col.sink()));
  col.wait(int(bad.size()));
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto o = col.get(ids[i]);
    SCOPED_TRACE("request " + std::to_string(i) + ": " + o.final.error);
    EXPECT_EQ(o.events.size(), 1u);
    EXPECT_EQ(o.final.finish, FinishReason::Error);
    EXPECT_FALSE(o.final.error.empty());
  }
  EXPECT_NE(col.get(ids[2]).final.error.find("context"), std::string::npos);
  EXPECT_EQ(engine.stats().requests_failed, bad.size());
}

TEST_F(EngineLifecycle, ZeroMaxTokensAndTheEndOfTheContext) {
  LlmEngine engine(*model_, config());
  Collector col;
  Request none = endless(prompt(8), 0);
  const int32_t ctx = model_->config().context_length;
  Request to_end = endless(prompt(ctx - 10), 100);
  Request exact = endless(prompt(ctx), 100);  // fills the context: one token, then length
  const RequestId a = engine.submit(none, col.sink());
  const RequestId b = engine.submit(to_end, col.sink());
  const RequestId c = engine.submit(exact, col.sink());
  col.wait(3);
  EXPECT_EQ(col.get(a).final.finish, FinishReason::Length);
  EXPECT_TRUE(col.get(a).tokens.empty());
  EXPECT_EQ(col.get(b).final.finish, FinishReason::Length);
  EXPECT_EQ(col.get(b).tokens.size(), 10u);
  EXPECT_EQ(col.get(b).final.completion_tokens, 10);
  EXPECT_EQ(col.get(c).tokens.size(), 1u);
}

// One request at a time, the first held until the others are queued: the
// rest run in priority order (then arrival); CostAware puts cheap ones first.
std::vector<RequestId> completion_order(const Model& model, SchedulePolicy policy, const std::vector<Request>& rest) {
  EngineConfig c = config();
  c.max_running = 1;
  c.policy = policy;
  LlmEngine engine(model, c);
  std::mutex mu;
  std::vector<RequestId> order;
  std::promise<void> started, queued;
  auto queued_future = queued.get_future().share();
  bool first = true;
  auto sink = [&](const Event& e) {
    if (!e.final) return;
    std::lock_guard lock(mu);
    order.push_back(e.id);
  };
  engine.submit(endless(prompt(8), 5), [&, queued_future](const Event& e) {
    if (e.token >= 0 && first) {  // blocks the engine briefly: test only
      first = false;
      started.set_value();
      queued_future.wait();
    }
    sink(e);
  });
  started.get_future().wait();
  std::vector<RequestId> ids;
  for (const auto& r : rest) ids.push_back(engine.submit(r, sink));
  queued.set_value();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard lock(mu);
    if (order.size() == rest.size() + 1) break;
  }
  std::vector<RequestId> ranks;
  for (size_t i = 1; i < order.size(); ++i)
    ranks.push_back(RequestId(std::find(ids.begin(), ids.end(), order[i]) - ids.begin()));
  return ranks;
}

TEST_F(EngineLifecycle, PriorityOrder) {
  std::vector<Request> rest(4, endless(prompt(8), 3));
  rest[1].priority = 5;
  rest[3].priority = 1;
  EXPECT_EQ(completion_order(*model_, SchedulePolicy::Fcfs, rest), (std::vector<RequestId>{1, 3, 0, 2}));
}

TEST_F(EngineLifecycle, CostAwareRunsCheapRequestsFirst) {
  std::vector<Request> rest = {endless(prompt(60), 30), endless(prompt(8), 3), endless(prompt(20), 10)};
  EXPECT_EQ(completion_order(*model_, SchedulePolicy::Fcfs, rest), (std::vector<RequestId>{0, 1, 2}));
  EXPECT_EQ(completion_order(*model_, SchedulePolicy::CostAware, rest), (std::vector<RequestId>{1, 2, 0}));
}

TEST_F(EngineLifecycle, LogProbabilities) {
  LlmEngine engine(*model_, config());
  Collector col;
  Request r = endless(prompt(8), 6);
  r.top_logprobs = 3;
  Request seeded = r;
  seeded.sampling.temperature = 1.5f;
  seeded.sampling.seed = 7;
  seeded.sampling.repetition_penalty = 1.3f;
  const RequestId a = engine.submit(r, col.sink());
  const RequestId b = engine.submit(seeded, col.sink());
  col.wait(2);
  for (RequestId id : {a, b}) {
    const auto o = col.get(id);
    ASSERT_EQ(o.tokens.size(), 6u);
    for (const Event& e : o.events) {
      if (e.final) continue;
      ASSERT_EQ(e.top_logprobs.size(), 3u);
      EXPECT_GE(e.top_logprobs[0].logprob, e.top_logprobs[1].logprob);
      EXPECT_GE(e.top_logprobs[1].logprob, e.top_logprobs[2].logprob);
      EXPECT_LE(e.logprob, 0.0f);
      double mass = 0;
      for (const auto& t : e.top_logprobs) mass += std::exp(double(t.logprob));
      EXPECT_LE(mass, 1.0 + 1e-5);
      if (id == a) {  // greedy: the chosen token is the most likely
        EXPECT_EQ(e.top_logprobs[0].token, e.token);
        EXPECT_FLOAT_EQ(e.top_logprobs[0].logprob, e.logprob);
      }
    }
  }
}

TEST_F(EngineLifecycle, DestructorCancelsWhatIsLeft) {
  Collector col;
  std::vector<RequestId> ids;
  {
    EngineConfig c = config();
    c.max_running = 2;
    LlmEngine engine(*model_, c);
    for (int i = 0; i < 5; ++i) ids.push_back(engine.submit(endless(prompt(30, i), 100), col.sink()));
  }
  col.wait(5);
  for (RequestId id : ids) {
    EXPECT_EQ(col.get(id).finals, 1);
    const FinishReason f = col.get(id).final.finish;
    EXPECT_TRUE(f == FinishReason::Cancelled || f == FinishReason::Length);
  }
}

TEST_F(EngineLifecycle, ConfigurationChecks) {
  EngineConfig q8 = config();
  q8.kv_type = DType::Q8_0;  // stories260K's heads have 8 dimensions
  EXPECT_THROW(LlmEngine(*model_, q8), Error);
  EngineConfig tiny = config();
  tiny.kv_memory_bytes = 100;
  EXPECT_THROW(LlmEngine(*model_, tiny), Error);
  EngineConfig zero = config();
  zero.max_running = 0;
  EXPECT_THROW(LlmEngine(*model_, zero), Error);
  LlmEngine defaults(*model_, EngineConfig{});
  EXPECT_GT(defaults.config().threads, 0);
  EXPECT_EQ(defaults.config().max_context, model_->config().context_length);
  EXPECT_GT(defaults.stats().kv_blocks_total, 0u);
}

TEST(EngineLimits, MemorySizes) {
  EXPECT_EQ(parse_memory_size("1048576"), 1048576u);
  EXPECT_EQ(parse_memory_size("512K"), 512u << 10);
  EXPECT_EQ(parse_memory_size("256MiB"), 256u << 20);
  EXPECT_EQ(parse_memory_size("2G"), uint64_t(2) << 30);
  EXPECT_EQ(parse_memory_size("1.5gb"), uint64_t(3) << 29);
  EXPECT_EQ(parse_memory_size("50%"), physical_memory() / 2);
  for (const char* bad : {"", "abc", "-1M", "12X", "150%", "1MM"}) EXPECT_THROW(parse_memory_size(bad), Error) << bad;
}

TEST(EngineLimits, PoolSizeAndContextLimit) {
  ModelConfig m;
  m.n_layers = 2;
  m.n_kv_heads = 2;
  m.head_dim = 32;
  m.context_length = 100;
  EngineConfig c = resolve_config(m, EngineConfig{});
  c.kv_type = DType::F32;
  c.block_size = 10;
  const uint64_t block = 2 * 2 * 2 * 32 * 10 * 4;  // layers * K,V * heads * dims * slots * bytes
  c.kv_memory_bytes = 5 * block + 7;
  const KvLayout small = kv_layout(m, c);
  EXPECT_EQ(small.block_bytes, block);
  EXPECT_EQ(small.n_blocks, 5);
  EXPECT_EQ(small.context_limit, 40);  // one block kept for copy-on-write
  c.kv_memory_bytes = 0;
  c.max_running = 3;
  const KvLayout capped = kv_layout(m, c);
  EXPECT_EQ(capped.n_blocks, 3 * 11);  // three full contexts (+1 block each)
  EXPECT_EQ(capped.context_limit, 100);
}

TEST(EngineLimits, DefaultPoolStopsAtTheCapButHoldsOneFullContext) {
  ModelConfig m;
  m.n_layers = 12;
  m.n_kv_heads = 12;
  m.head_dim = 64;
  m.context_length = 2048;  // the llama-110m preset: 36 KiB a token in f16, 72 MiB a context
  EngineConfig c = resolve_config(m, EngineConfig{});
  c.kv_type = DType::F16;
  const KvLayout k = kv_layout(m, c);
  const uint64_t max_running_contexts = uint64_t(c.max_running) * (2048 / c.block_size + 1) * k.block_bytes;
  ASSERT_GT(max_running_contexts, kDefaultKvCapBytes);
  EXPECT_LE(uint64_t(k.n_blocks) * k.block_bytes, std::min(kDefaultKvCapBytes, physical_memory() / 4));
  EXPECT_EQ(k.context_limit, 2048);
  m.context_length = 1 << 16;  // one context over the cap: the pool still holds it (if RAM allows)
  c = resolve_config(m, EngineConfig{});
  c.kv_type = DType::F16;
  const KvLayout big = kv_layout(m, c);
  if (physical_memory() / 4 >= uint64_t(big.n_blocks) * big.block_bytes) {
    EXPECT_EQ(big.context_limit, 1 << 16);
  }
}

}  // namespace
}  // namespace parley
