#pragma once
// Helpers for the LlmEngine tests: collecting each request's events, and
// running requests alone for comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/llm_engine.h"
#include "model/model.h"

namespace parley::testing {

inline const std::string kBundled = PARLEY_SOURCE_DIR "/models/stories260K.gguf";

struct Outcome {
  std::vector<int32_t> tokens;
  std::string text;
  std::vector<Event> events;
  Event final;
  int finals = 0;
};

// Each request's tokens, text and end are those of the one it is compared with;
// it ended once.
inline void expect_same_outcomes(const std::vector<Outcome>& got, const std::vector<Outcome>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(got[i].tokens, want[i].tokens);
    EXPECT_EQ(got[i].text, want[i].text);
    EXPECT_EQ(got[i].final.finish, want[i].final.finish);
    EXPECT_EQ(got[i].final.stop_string, want[i].final.stop_string);
    EXPECT_EQ(got[i].final.completion_tokens, want[i].final.completion_tokens);
    EXPECT_EQ(got[i].finals, 1);
  }
}

// Thread-safe: sinks run on the engine thread, the test waits on its own.
class Collector {
 public:
  EventSink sink() {
    return [this](const Event& e) {
      std::lock_guard lock(mu_);
      Outcome& o = out_[e.id];
      o.events.push_back(e);
      o.text += e.text;
      if (e.token >= 0) o.tokens.push_back(e.token);
      if (e.final) {
        o.final = e;
        ++o.finals;
        ++finished_;
        cv_.notify_all();
      }
    };
  }
  // Waits until n requests have finished (fails the test after 60 s).
  void wait(int n) {
    std::unique_lock lock(mu_);
    const bool ok = cv_.wait_for(lock, std::chrono::seconds(60), [&] { return finished_ >= n; });
    ASSERT_TRUE(ok) << "only " << finished_ << " of " << n << " requests finished";
  }
  Outcome get(RequestId id) {
    std::lock_guard lock(mu_);
    return out_[id];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<RequestId, Outcome> out_;
  int finished_ = 0;
};

// A prompt of n tokens: BOS, then a pattern that `salt` shifts.
inline std::vector<int32_t> prompt(int32_t n, int32_t salt = 0) {
  std::vector<int32_t> p(static_cast<size_t>(n));
  p[0] = 1;
  for (int32_t i = 1; i < n; ++i) p[size_t(i)] = 260 + (i * 7 + salt) % 200;
  return p;
}

inline Request greedy(std::vector<int32_t> prompt, int32_t max_tokens) {
  Request r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  return r;
}

// Each request through a fresh engine, one at a time.
inline std::vector<Outcome> run_alone(const Model& model, const EngineConfig& config,
                                      const std::vector<Request>& requests) {
  std::vector<Outcome> out;
  for (const Request& r : requests) {
    Collector c;
    LlmEngine engine(model, config);
    const RequestId id = engine.submit(r, c.sink());
    c.wait(1);
    out.push_back(c.get(id));
  }
  return out;
}

// All requests submitted together to one engine.
inline std::vector<Outcome> run_together(LlmEngine& engine, const std::vector<Request>& requests) {
  Collector c;
  std::vector<RequestId> ids;
  for (const Request& r : requests) ids.push_back(engine.submit(r, c.sink()));
  c.wait(int(requests.size()));
  std::vector<Outcome> out;
  for (RequestId id : ids) out.push_back(c.get(id));
  return out;
}

// `r` submitted alone and cancelled from inside its sink at its n-th event
// (mid-generation, e.g. inside a run of kept drafts); its outcome.
inline Outcome cancel_at_event(LlmEngine& engine, const Request& r, int n) {
  Collector col;
  std::atomic<RequestId> id{0};
  int seen = 0;
  EventSink inner = col.sink();
  id = engine.submit(r, [&](const Event& e) {
    if (++seen == n) {
      while (id.load() == 0) std::this_thread::yield();  // submit() has not returned yet
      engine.cancel(id.load());
    }
    inner(e);
  });
  col.wait(1);
  return col.get(id);
}

// For the distribution tests of speculation: n requests of 3 sampled tokens
// after `prompt`, seeds 0..n-1.
inline std::vector<Request> seeded_samples(const std::vector<int32_t>& prompt, int n, float temperature,
                                           int32_t top_k = 0) {
  std::vector<Request> out;
  for (int i = 0; i < n; ++i) {
    Request r = greedy(prompt, 3);
    r.sampling.temperature = temperature;
    r.sampling.top_k = top_k;
    r.sampling.seed = uint64_t(i);
    r.ignore_eos = true;
    out.push_back(r);
  }
  return out;
}

// Over the outcomes whose first token is `first`: how often the second is
// order[0], .., order[k - 1], or another token (the last of k + 1 bins).
inline std::vector<double> second_token_bins(const std::vector<Outcome>& got, int32_t first,
                                             const std::vector<int32_t>& order, size_t k) {
  std::vector<double> counts(k + 1, 0.0);
  for (const Outcome& o : got) {
    EXPECT_EQ(o.tokens.size(), 3u);
    if (o.tokens.size() < 2 || o.tokens[0] != first) continue;
    counts[size_t(std::find(order.begin(), order.begin() + long(k), o.tokens[1]) - order.begin())] += 1;
  }
  return counts;
}

// Pearson's statistic of `counts` against probabilities `p` (same length).
inline double chi_square(const std::vector<double>& counts, const std::vector<double>& p) {
  double n = 0, chi2 = 0;
  for (double c : counts) n += c;
  for (size_t i = 0; i < p.size(); ++i) chi2 += (counts[i] - n * p[i]) * (counts[i] - n * p[i]) / (n * p[i]);
  return chi2;
}

}  // namespace parley::testing
