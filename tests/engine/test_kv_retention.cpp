// KV retention policies: which tokens each keeps, their positions, and the
// engine staying within each policy's memory bound over a generation longer
// than the context.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engine/kv_retention.h"
#include "engine/scheduler.h"
#include "engine_test_util.h"
#include "util/error.h"

namespace parley {
namespace {

using testing::Collector;

// slot -> position, for the slots in use.
std::vector<int32_t> positions(const RetainedKv& kv) {
  return std::vector<int32_t>(kv.slot_pos(), kv.slot_pos() + kv.n_slots());
}

// A policy's budget is the sizes it uses: the defaults of the others
// (heavy = 64 under sink, say) do not count against the context.
TEST(RetentionBudget, CountsOnlyThePolicysSizes) {
  EXPECT_NO_THROW(validate_retention(KvRetention{KvPolicy::Sink, 500, 12, 64}, 512));
  EXPECT_NO_THROW(validate_retention(KvRetention{KvPolicy::Window, 512, 100, 100}, 512));
  EXPECT_THROW(validate_retention(KvRetention{KvPolicy::HeavyHitter, 500, 12, 64}, 512), Error);
  EXPECT_THROW(validate_retention(KvRetention{KvPolicy::Window, 513, 0, 0}, 512), Error);
}

TEST(RetainedKv, WindowKeepsTheLastTokens) {
  RetainedKv kv({KvPolicy::Window, 4, 0, 0});
  EXPECT_EQ(kv.capacity(), 4);
  EXPECT_EQ(kv.max_chunk(), 2);
  EXPECT_EQ(kv.slots_after(3), 3);
  kv.place(3);
  EXPECT_EQ(positions(kv), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(kv.slots_after(2), 4);
  kv.place(2);  // the oldest goes; its slot is reused
  EXPECT_EQ(positions(kv), (std::vector<int32_t>{2, 0, 1, 3}));
  EXPECT_EQ(std::vector<int32_t>(kv.slots(), kv.slots() + 2), (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(kv.live(), 4);
  kv.reset();
  EXPECT_EQ(kv.live(), 0);
  EXPECT_EQ(kv.n_slots(), 0);
}

TEST(RetainedKv, SinkKeepsTheFirstTokens) {
  RetainedKv kv({KvPolicy::Sink, 3, 2, 0});
  EXPECT_EQ(kv.capacity(), 5);
  for (int i = 0; i < 5; ++i) kv.place(1);
  kv.place(1);  // evicts position 2, the oldest after the two sinks
  EXPECT_EQ(positions(kv), (std::vector<int32_t>{0, 1, 4, 2, 3}));
  kv.place(1);
  EXPECT_EQ(positions(kv), (std::vector<int32_t>{0, 1, 3, 4, 2}));
}

TEST(RetainedKv, HeavyHitterEvictsTheLeastAttendedOutsideTheWindow) {
  RetainedKv kv({KvPolicy::HeavyHitter, 2, 1, 2});
  EXPECT_EQ(kv.capacity(), 5);
  for (int i = 0; i < 5; ++i) kv.place(1);
  float* sums = kv.attention_sums();
  ASSERT_NE(sums, nullptr);
  const float weights[] = {9, 0.5f, 3, 0.1f, 0.2f};  // slots 3 and 4 are the recent window
  std::copy(std::begin(weights), std::end(weights), sums);
  kv.place(1);  // candidates: positions 1 and 2 (slots 1, 2): slot 1 is lighter
  EXPECT_EQ(positions(kv), (std::vector<int32_t>{0, 4, 1, 2, 3}));
  EXPECT_EQ(sums[1], 0.0f);  // the new token starts with nothing
  EXPECT_EQ(RetainedKv({KvPolicy::Full, 4, 4, 4}).attention_sums(), nullptr);
}

TEST(RetainedKv, PositionsStayContiguous) {
  std::mt19937 rng(3);
  for (KvPolicy p : {KvPolicy::Window, KvPolicy::Sink, KvPolicy::HeavyHitter}) {
    RetainedKv kv({p, 9, 3, 5});
    for (int step = 0; step < 200; ++step) {
      if (float* s = kv.attention_sums())
        for (int32_t i = 0; i < kv.n_slots(); ++i) s[i] += float(rng() % 100);
      kv.place(1 + int32_t(rng() % uint32_t(kv.max_chunk())));
      auto pos = positions(kv);
      pos.erase(std::remove(pos.begin(), pos.end(), -1), pos.end());
      std::sort(pos.begin(), pos.end());
      ASSERT_EQ(int32_t(pos.size()), kv.live());
      for (size_t i = 0; i < pos.size(); ++i) ASSERT_EQ(pos[i], int32_t(i)) << kv_policy_name(p);
      ASSERT_LE(kv.n_slots(), kv.capacity());
    }
  }
}

TEST(RetainedKv, NamesAndValidation) {
  for (KvPolicy p : {KvPolicy::Full, KvPolicy::Window, KvPolicy::Sink, KvPolicy::HeavyHitter})
    EXPECT_EQ(kv_policy_from_name(kv_policy_name(p)), p);
  EXPECT_FALSE(kv_policy_from_name("lru"));
  EXPECT_THROW(validate_retention({KvPolicy::Window, 0, 0, 0}, 100), Error);
  EXPECT_THROW(validate_retention({KvPolicy::HeavyHitter, 50, 4, 50}, 100), Error);
  EXPECT_NO_THROW(validate_retention({KvPolicy::HeavyHitter, 50, 4, 46}, 100));
}

// Generating past the context under each policy: the sequence's blocks never
// exceed its budget, and generation only stops at max_tokens.
TEST(EngineRetention, EachPolicyStaysWithinItsBoundPastTheContext) {
  auto model = Model::load(testing::kBundled);
  const int32_t ctx = model->config().context_length;
  const KvRetention policies[] = {
      {KvPolicy::Window, 32, 0, 0}, {KvPolicy::Sink, 28, 4, 0}, {KvPolicy::HeavyHitter, 16, 4, 12}};
  for (const KvRetention& kv : policies) {
    SCOPED_TRACE(kv_policy_name(kv.policy));
    EngineConfig c;
    c.threads = 1;
    c.block_size = 8;
    c.kv_retention = kv;
    LlmEngine engine(*model, c);
    Collector col;
    uint64_t max_used = 0;
    Request r = testing::greedy(model->tokenizer().encode("Once upon a time, there was a little dog", true, false),
                                3 * ctx);
    r.ignore_eos = true;
    const RequestId id = engine.submit(r, [&](const Event& e) {
      max_used = std::max(max_used, engine.stats().kv_blocks_used);
      col.sink()(e);
    });
    col.wait(1);
    const auto o = col.get(id);
    EXPECT_EQ(o.final.finish, FinishReason::Length);
    EXPECT_EQ(o.tokens.size(), size_t(3 * ctx));
    const int32_t budget = kv.sink + kv.heavy + kv.window;
    EXPECT_LE(max_used, uint64_t((budget + c.block_size - 1) / c.block_size));
    EXPECT_GT(max_used, 0u);
    EXPECT_EQ(engine.stats().kv_blocks_used, 0u);
  }
}

// With a window as large as the whole sequence nothing is evicted: keys
// rotated when read (F32) give exactly the Full policy's tokens. A request
// may also choose its own policy.
TEST(EngineRetention, UnboundedWindowEqualsFullAndPerRequestPolicies) {
  auto model = Model::load(testing::kBundled);
  EngineConfig c;
  c.threads = 1;
  c.kv_type = DType::F32;
  LlmEngine engine(*model, c);
  const auto prompt = model->tokenizer().encode("Lily and Tom played with a big red ball", true, false);
  Request full = testing::greedy(prompt, 60);
  Request window = full;
  window.kv_retention = KvRetention{KvPolicy::Window, 120, 0, 0};
  const auto out = testing::run_together(engine, {full, window});
  EXPECT_EQ(out[0].tokens, out[1].tokens);
  EXPECT_EQ(out[0].tokens.size(), 60u);
}

TEST(SchedulerOrder, AgingPreventsStarvation) {
  auto model = Model::load(testing::kBundled);
  const Tokenizer& tok = model->tokenizer();
  const auto now = Clock::now();
  Request low = testing::greedy({1, 2, 3}, 500), high = testing::greedy({1, 2, 3}, 5);
  high.priority = 2;
  Sequence old_low(1, low, {}, 0, tok, 512, {}, 500), new_high(2, high, {}, 1, tok, 512, {}, 5);
  new_high.submitted = now;
  old_low.submitted = now - std::chrono::milliseconds(100);
  for (SchedulePolicy p : {SchedulePolicy::Fcfs, SchedulePolicy::CostAware}) {
    EXPECT_TRUE(runs_before(new_high, old_low, p, now));
    // After waiting three aging periods, the low-priority request goes first.
    old_low.submitted = now - std::chrono::milliseconds(int(3 * kAgingSeconds * 1000) + 100);
    EXPECT_TRUE(runs_before(old_low, new_high, p, now));
    old_low.submitted = now - std::chrono::milliseconds(100);
  }
  // CostAware: the cheaper of equal priorities first, until the other has waited.
  Sequence cheap(3, testing::greedy({1, 2, 3}, 5), {}, 2, tok, 512, {}, 5);
  cheap.submitted = now;
  EXPECT_TRUE(runs_before(cheap, old_low, SchedulePolicy::CostAware, now));
  EXPECT_FALSE(runs_before(cheap, old_low, SchedulePolicy::Fcfs, now));
}

}  // namespace
}  // namespace parley
