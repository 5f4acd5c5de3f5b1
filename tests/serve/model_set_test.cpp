// ModelSet: loads on demand (once for many waiting requests, the others
// answering meanwhile), LRU eviction among idle models under --max-models and
// --models-memory, busy and pinned models never unloaded, idle unload, load
// failures.
#include "serve/models/model_set.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <stdexcept>
#include <thread>

namespace parley::serve {
namespace {

using namespace std::chrono_literals;

struct FakeModel : ResidentModel {
  explicit FakeModel(uint64_t b) : b_(b) {}
  uint64_t bytes() const override { return b_; }
  uint64_t b_;
};

// Loads FakeModels of the sizes given, counting loads; a load of a model
// named in `slow` waits until `release_slow` is set.
struct FakeLoader {
  std::map<std::string, uint64_t> sizes;
  std::map<std::string, int> loads;
  std::mutex mu;
  std::promise<void> slow_gate;
  std::shared_future<void> slow_open = slow_gate.get_future().share();
  std::string slow;

  ModelSet::Loader loader() {
    return [this](const std::string& name) -> std::shared_ptr<ResidentModel> {
      {
        std::lock_guard lock(mu);
        ++loads[name];
      }
      if (name == slow) slow_open.wait();
      if (!sizes.count(name)) throw std::runtime_error("no such file");
      return std::make_shared<FakeModel>(sizes.at(name));
    };
  }
  int load_count(const std::string& name) {
    std::lock_guard lock(mu);
    return loads[name];
  }
};

struct Acquired {
  std::shared_ptr<ModelLease> lease;
  std::string error;
};

// Starts acquiring `name`; the future is ready when the set answered.
std::future<Acquired> acquire(ModelSet& set, const std::string& name) {
  auto promise = std::make_shared<std::promise<Acquired>>();
  auto future = promise->get_future();
  set.acquire(name, [promise](std::shared_ptr<ModelLease> lease, const std::string& error) {
    promise->set_value({std::move(lease), error});
  });
  return future;
}

std::shared_ptr<ModelLease> lease_of(ModelSet& set, const std::string& name) {
  auto f = acquire(set, name);
  EXPECT_EQ(f.wait_for(30s), std::future_status::ready);
  Acquired a = f.get();
  EXPECT_EQ(a.error, "");
  return a.lease;
}

bool is_loaded(const ModelSet& set, const std::string& name) {
  for (const ModelStatus& m : set.models())
    if (m.name == name) return m.loaded;
  return false;
}

// Polls (the loader thread acts on its own) until `done` or 30 s.
template <class F>
bool eventually(F done) {
  for (int i = 0; i < 3000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

TEST(ModelSet, LoadsOnDemandOnceForConcurrentRequests) {
  FakeLoader fake;
  fake.sizes = {{"a", 10}};
  fake.slow = "a";
  ModelSet set({}, fake.loader());
  set.add("a", 10);
  EXPECT_TRUE(set.contains("a"));
  EXPECT_FALSE(set.contains("b"));
  EXPECT_FALSE(is_loaded(set, "a"));
  std::vector<std::future<Acquired>> waiting;
  for (int i = 0; i < 8; ++i) waiting.push_back(acquire(set, "a"));
  ASSERT_TRUE(eventually([&] { return fake.load_count("a") == 1; }));
  EXPECT_EQ(set.stats().waiting, 8);
  EXPECT_EQ(waiting[0].wait_for(50ms), std::future_status::timeout);  // still loading
  fake.slow_gate.set_value();
  for (auto& f : waiting) {
    Acquired a = f.get();
    EXPECT_EQ(a.error, "");
    ASSERT_TRUE(a.lease);
    EXPECT_EQ(a.lease->model().bytes(), 10u);
  }
  EXPECT_EQ(fake.load_count("a"), 1);
  EXPECT_EQ(set.stats().loads, 1u);
  EXPECT_EQ(set.stats().waiting, 0);
  EXPECT_TRUE(is_loaded(set, "a"));
}

TEST(ModelSet, OtherModelsAnswerWhileOneLoads) {
  FakeLoader fake;
  fake.sizes = {{"a", 1}, {"b", 1}};
  fake.slow = "a";
  ModelSet set({}, fake.loader());
  set.add("a", 1);
  set.add("b", 1);
  lease_of(set, "b");
  auto a = acquire(set, "a");
  ASSERT_TRUE(eventually([&] { return fake.load_count("a") == 1; }));  // a's load has begun, and waits
  EXPECT_EQ(acquire(set, "b").wait_for(0s), std::future_status::ready);
  EXPECT_EQ(a.wait_for(0s), std::future_status::timeout);
  fake.slow_gate.set_value();
  EXPECT_TRUE(a.get().lease);
}

TEST(ModelSet, AcquiringALoadedModelAnswersAtOnce) {
  FakeLoader fake;
  fake.sizes = {{"a", 10}};
  ModelSet set({}, fake.loader());
  set.add("a", 10);
  lease_of(set, "a");
  auto again = acquire(set, "a");
  EXPECT_EQ(again.wait_for(0s), std::future_status::ready);  // answered inside acquire()
  EXPECT_EQ(fake.load_count("a"), 1);
  EXPECT_EQ(set.models()[0].running, 1);  // the future's lease
}

TEST(ModelSet, EvictsTheLeastRecentlyUsedIdleModel) {
  FakeLoader fake;
  fake.sizes = {{"a", 1}, {"b", 1}, {"c", 1}};
  ModelSet set({.max_models = 2}, fake.loader());
  for (const char* n : {"a", "b", "c"}) set.add(n, 1);
  lease_of(set, "a");
  lease_of(set, "b");
  lease_of(set, "a");  // a used after b: b is the least recently used
  lease_of(set, "c");
  EXPECT_TRUE(is_loaded(set, "a"));
  EXPECT_FALSE(is_loaded(set, "b"));
  EXPECT_TRUE(is_loaded(set, "c"));
  EXPECT_EQ(set.stats().evictions, 1u);
}

TEST(ModelSet, MemoryBudgetEvictsUntilTheNewModelFits) {
  FakeLoader fake;
  fake.sizes = {{"a", 40}, {"b", 40}, {"c", 70}};
  ModelSet set({.memory_bytes = 100}, fake.loader());
  for (const auto& [n, b] : fake.sizes) set.add(n, b);
  lease_of(set, "a");
  lease_of(set, "b");
  EXPECT_TRUE(is_loaded(set, "a") && is_loaded(set, "b"));  // 80 of 100
  lease_of(set, "c");  // 70 needs both gone
  EXPECT_FALSE(is_loaded(set, "a"));
  EXPECT_FALSE(is_loaded(set, "b"));
  EXPECT_TRUE(is_loaded(set, "c"));
  EXPECT_EQ(set.stats().evictions, 2u);
}

TEST(ModelSet, AModelLargerThanItsEstimateMakesRoomOnceLoaded) {
  FakeLoader fake;
  fake.sizes = {{"a", 60}, {"b", 60}};
  ModelSet set({.memory_bytes = 100}, fake.loader());
  set.add("a", 60);
  set.add("b", 10);  // its file, say, without the KV pool
  lease_of(set, "a");
  auto b = lease_of(set, "b");  // 70 fitted; 120 does not
  EXPECT_FALSE(is_loaded(set, "a"));
  EXPECT_TRUE(is_loaded(set, "b"));
  EXPECT_EQ(set.models()[1].bytes, 60u);
}

TEST(ModelSet, ABusyModelIsNeverEvictedTheLoadWaits) {
  FakeLoader fake;
  fake.sizes = {{"a", 1}, {"b", 1}};
  ModelSet set({.max_models = 1}, fake.loader());
  set.add("a", 1);
  set.add("b", 1);
  auto running = lease_of(set, "a");
  auto b = acquire(set, "b");
  EXPECT_EQ(b.wait_for(200ms), std::future_status::timeout);
  EXPECT_TRUE(is_loaded(set, "a"));
  EXPECT_EQ(fake.load_count("b"), 0);
  running.reset();  // a's request ends: now b may take its room
  ASSERT_EQ(b.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(b.get().lease);
  EXPECT_FALSE(is_loaded(set, "a"));
}

TEST(ModelSet, APinnedModelStaysAndAModelThatCannotFitFails) {
  FakeLoader fake;
  fake.sizes = {{"b", 1}};
  ModelSet set({.max_models = 1, .idle_unload = 10ms}, fake.loader());
  set.add_pinned("a", std::make_shared<FakeModel>(1));
  set.add("b", 1);
  auto b = acquire(set, "b");
  ASSERT_EQ(b.wait_for(30s), std::future_status::ready);
  const Acquired got = b.get();
  EXPECT_FALSE(got.lease);
  EXPECT_NE(got.error.find("does not fit"), std::string::npos) << got.error;
  std::this_thread::sleep_for(100ms);  // many idle periods
  EXPECT_TRUE(is_loaded(set, "a"));
  EXPECT_EQ(set.stats().idle_unloads, 0u);
}

TEST(ModelSet, UnloadsIdleModelsButNotRunningOnes) {
  FakeLoader fake;
  fake.sizes = {{"a", 1}, {"b", 1}};
  ModelSet set({.idle_unload = 20ms}, fake.loader());
  set.add("a", 1);
  set.add("b", 1);
  auto held = lease_of(set, "a");
  lease_of(set, "b");  // released at once
  ASSERT_TRUE(eventually([&] { return !is_loaded(set, "b"); }));
  EXPECT_TRUE(is_loaded(set, "a"));  // its lease is held
  EXPECT_EQ(set.stats().idle_unloads, 1u);
  held.reset();
  ASSERT_TRUE(eventually([&] { return !is_loaded(set, "a"); }));
  lease_of(set, "b");  // loads again on demand
  EXPECT_EQ(fake.load_count("b"), 2);
}

TEST(ModelSet, AFailedLoadAnswersEveryWaiterAndIsRetried) {
  FakeLoader fake;
  ModelSet set({}, fake.loader());
  set.add("broken", 1);
  auto first = acquire(set, "broken");
  ASSERT_EQ(first.wait_for(30s), std::future_status::ready);
  const Acquired a = first.get();
  EXPECT_FALSE(a.lease);
  EXPECT_NE(a.error.find("no such file"), std::string::npos) << a.error;
  EXPECT_EQ(set.stats().load_failures, 1u);
  fake.sizes["broken"] = 3;  // the file appeared
  EXPECT_EQ(lease_of(set, "broken")->model().bytes(), 3u);
  EXPECT_EQ(fake.load_count("broken"), 2);
}

TEST(ModelSet, AnUnknownNameIsAnError) {
  FakeLoader fake;
  ModelSet set({}, fake.loader());
  auto f = acquire(set, "nope");
  ASSERT_EQ(f.wait_for(0s), std::future_status::ready);
  EXPECT_FALSE(f.get().lease);
}

}  // namespace
}  // namespace parley::serve
