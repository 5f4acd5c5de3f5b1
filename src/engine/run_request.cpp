#include "engine/run_request.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

#include "util/error.h"

namespace parley {
namespace {

using Clock = std::chrono::steady_clock;

// Events from the engine thread to the caller's; the sink never blocks.
struct Mailbox {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<Event, Clock::time_point>> events;
};

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

double RequestResult::decode_tok_s() const {
  const double ms = last_token_ms - first_token_ms;
  return tokens.size() > 1 && ms > 0 ? double(tokens.size() - 1) * 1000.0 / ms : 0.0;
}

RequestResult run_request(LlmEngine& engine, Request request, const TextCallback& on_text) {
  auto box = std::make_shared<Mailbox>();
  const auto t0 = Clock::now();
  engine.submit(std::move(request), [box](const Event& e) {
    const auto now = Clock::now();
    {
      std::lock_guard lock(box->mu);
      box->events.emplace_back(e, now);
    }
    box->cv.notify_one();
  });
  RequestResult r;
  for (;;) {
    std::unique_lock lock(box->mu);
    box->cv.wait(lock, [&] { return !box->events.empty(); });
    auto [e, at] = std::move(box->events.front());
    box->events.pop_front();
    lock.unlock();
    if (!e.text.empty()) {
      r.text += e.text;
      if (on_text) on_text(e.text);
    }
    if (!e.final) {
      if (r.tokens.empty()) r.first_token_ms = ms_between(t0, at);
      r.last_token_ms = ms_between(t0, at);
      r.tokens.push_back(e.token);
      continue;
    }
    if (e.finish == FinishReason::Error) throw Error(e.error);
    r.finish = e.finish;
    r.prompt_tokens = e.prompt_tokens;
    r.cached_tokens = e.cached_tokens;
    return r;
  }
}

}  // namespace parley
