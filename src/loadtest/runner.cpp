#include "loadtest/runner.h"

// GCC 12 takes Asio's coroutine-frame operator new/delete pair for a mismatch
// when it inlines a coroutine's creation (seen under -fsanitize): a false positive.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

#include "loadtest/arrivals.h"
#include "loadtest/response_reader.h"
#include "loadtest/url.h"
#include "util/error.h"
#include "util/fd_limit.h"

namespace parley::loadtest {
namespace {

using Request = http::request<http::string_body>;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Random-weight benchmark models may generate control bytes, which servers
// refuse in a message; a client resends the text it could display.
std::string printable(std::string text) {
  std::erase_if(text, [](char c) {
    return (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
  });
  return text;
}

nlohmann::json message(const char* role, std::string content) {
  return {{"role", role}, {"content", std::move(content)}};
}

class Run {
 public:
  Run(const LoadOptions& o, const Url& url, const Endpoints& endpoints, asio::io_context& ioc)
      : o_(o), url_(url), endpoints_(endpoints), ioc_(ioc),
        prompts_(o.prompt_tokens, o.shared_prefix_tokens, o.seed,
                 o.prompts_file.empty() ? std::vector<nlohmann::json>{} : load_prompts_file(o.prompts_file)) {}

  asio::awaitable<std::string> first_model();
  void start(std::string model);
  LoadResult finish();
  int64_t finished() const { return finished_; }
  int64_t failed() const { return failed_; }
  double elapsed() const { return seconds(Clock::now() - start_); }

 private:
  asio::awaitable<void> user(int32_t u);
  asio::awaitable<void> arrivals();
  asio::awaitable<void> arrival(uint64_t index);
  asio::awaitable<bool> conversation(Connection& c, uint64_t index, std::mt19937_64& rng);
  asio::awaitable<bool> guarded(Connection& c, uint64_t index, std::mt19937_64& rng);
  asio::awaitable<std::string> open_session(Connection& c, RequestRecord& r);
  asio::awaitable<void> send(Connection& c, const Request& req, RequestRecord& r, std::string& text);
  // `session`: sent as X-Session-Id too, so that a load balancer keeps a conversation on one replica.
  Request request(http::verb verb, const std::string& route, const std::string& body,
                  const std::string& session = "") const;
  nlohmann::json body(const nlohmann::json& messages, const std::string& session, std::mt19937_64& rng) const;
  bool claim();
  uint64_t conversation_limit() const;
  Clock::duration timeout() const {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.timeout_s));
  }
  void record(RequestRecord r);
  std::unique_ptr<Connection> take_connection();

  const LoadOptions& o_;
  const Url& url_;
  const Endpoints& endpoints_;
  asio::io_context& ioc_;
  PromptSource prompts_;
  std::string model_;
  Clock::time_point start_, end_;
  std::atomic<int64_t> claimed_{0}, finished_{0}, failed_{0};
  std::atomic<uint64_t> conversations_{0};  // closed loop: conversations started
  std::mutex mu_;
  std::vector<RequestRecord> records_;
  std::vector<std::unique_ptr<Connection>> idle_;  // open loop: keep-alive connections between conversations
};

Request Run::request(http::verb verb, const std::string& route, const std::string& body,
                     const std::string& session) const {
  Request req{verb, url_.path(route), 11};
  req.set(http::field::host, url_.host_header());
  req.set(http::field::user_agent, "parley-loadtest");
  if (!o_.api_key.empty()) req.set(http::field::authorization, "Bearer " + o_.api_key);
  if (!session.empty()) req.set("X-Session-Id", session);
  if (verb == http::verb::post) {
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
  }
  req.keep_alive(true);
  return req;
}

asio::awaitable<std::string> Run::first_model() {
  Connection c(co_await asio::this_coro::executor, endpoints_);
  std::string body;
  const unsigned status = co_await c.exchange(request(http::verb::get, "/v1/models", ""),
                                              [&](unsigned, std::string_view b) { body.append(b); },
                                              Clock::now() + timeout());
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (status != 200 || !j.is_object() || !j.contains("data") || !j["data"].is_array() || j["data"].empty() ||
      !j["data"][0].contains("id") || !j["data"][0]["id"].is_string())
    throw Error("GET /v1/models answered " + std::to_string(status) + " without a model: " + body.substr(0, 200) +
                " (name one with --model)");
  co_return j["data"][0]["id"].get<std::string>();
}

nlohmann::json Run::body(const nlohmann::json& messages, const std::string& session, std::mt19937_64& rng) const {
  nlohmann::json b = {{"model", model_}, {"max_tokens", o_.max_tokens.sample(rng)}, {"stream", o_.stream}};
  if (o_.stream) b["stream_options"] = {{"include_usage", true}};
  if (o_.chat) b["messages"] = messages;
  else b["prompt"] = messages_text(messages);
  if (!session.empty()) b["session_id"] = session;
  if (o_.ignore_eos) b["ignore_eos"] = true;
  if (o_.temperature) b["temperature"] = *o_.temperature;
  return b;
}

// --requests N in conversations of --turns T: ceil(N / T) conversations, in
// both loops (a user that finishes its conversation early must not start a
// third of 6 requests in 3 turns and leave another one short).
uint64_t Run::conversation_limit() const {
  return o_.requests > 0 ? uint64_t(o_.requests + o_.turns - 1) / uint64_t(o_.turns) : UINT64_MAX;
}

bool Run::claim() {
  if (o_.duration_s > 0 && Clock::now() >= end_) return false;
  return o_.requests <= 0 || claimed_.fetch_add(1) < o_.requests;
}

void Run::record(RequestRecord r) {
  const bool ok = r.ok();
  {
    std::lock_guard lock(mu_);
    records_.push_back(std::move(r));
  }
  if (!ok) ++failed_;
  ++finished_;
}

asio::awaitable<void> Run::send(Connection& c, const Request& req, RequestRecord& r, std::string& text) {
  const auto t0 = Clock::now();
  ResponseReader reader(r, o_.chat, t0);
  try {
    co_await c.exchange(req, [&](unsigned s, std::string_view b) { reader.on_body(s, b); }, t0 + timeout());
    reader.finish();
    text = reader.text();
  } catch (const TransportError& e) {
    r.error = e.kind;
    r.message = e.what();
    r.e2e_ms = seconds(Clock::now() - t0) * 1000;
  }
}

// Parley's sessions API: POST /v1/sessions {} -> {"id": ...}.
asio::awaitable<std::string> Run::open_session(Connection& c, RequestRecord& r) {
  const auto t0 = Clock::now();
  std::string body;
  try {
    r.status = co_await c.exchange(request(http::verb::post, "/v1/sessions", "{}"),
                                   [&](unsigned, std::string_view b) { body.append(b); }, t0 + timeout());
  } catch (const TransportError& e) {
    r.error = e.kind;
    r.message = std::string("POST /v1/sessions: ") + e.what();
    co_return std::string();
  }
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if ((r.status == 200 || r.status == 201) && j.is_object() && j.contains("id") && j["id"].is_string())
    co_return j["id"].get<std::string>();
  r.error = r.status == 200 || r.status == 201 ? ErrorKind::Protocol : ErrorKind::Http;
  r.message = "POST /v1/sessions answered " + std::to_string(r.status) + ": " + body.substr(0, 200);
  r.e2e_ms = seconds(Clock::now() - t0) * 1000;
  co_return std::string();
}

asio::awaitable<bool> Run::conversation(Connection& c, uint64_t index, std::mt19937_64& rng) {
  nlohmann::json history = prompts_.opening(index, rng);
  std::string session;
  const std::string route = o_.chat ? "/v1/chat/completions" : "/v1/completions";
  for (int32_t turn = 0; turn < o_.turns; ++turn) {
    if (!claim()) co_return false;
    if (turn > 0) history.push_back(message("user", prompts_.follow_up(index * uint64_t(o_.turns) + uint64_t(turn), rng)));
    RequestRecord r;
    r.turn = turn;
    std::string text;
    if (o_.sessions && turn == 0) session = co_await open_session(c, r);
    if (r.ok()) {
      // With a session the server keeps the history: send the new messages only.
      const nlohmann::json sent = o_.sessions && turn > 0 ? nlohmann::json::array({history.back()}) : history;
      co_await send(c, request(http::verb::post, route, body(sent, session, rng).dump(), session), r, text);
    }
    const bool ok = r.ok();
    record(std::move(r));
    if (!ok) co_return true;  // a broken conversation ends; the next one starts
    history.push_back(message("assistant", printable(std::move(text))));
  }
  co_return true;
}

// Anything unexpected (a prompts file entry of the wrong shape) fails one
// request rather than the run.
asio::awaitable<bool> Run::guarded(Connection& c, uint64_t index, std::mt19937_64& rng) {
  std::string failure;
  try {
    co_return co_await conversation(c, index, rng);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  RequestRecord r;
  r.error = ErrorKind::Protocol;
  r.message = failure;
  record(std::move(r));
  co_return true;
}

asio::awaitable<void> Run::user(int32_t u) {
  Connection c(co_await asio::this_coro::executor, endpoints_);
  std::mt19937_64 rng(o_.seed * 1000003 + uint64_t(u) + 1);
  for (uint64_t index = uint64_t(u);; index += uint64_t(o_.concurrency))
    if (conversations_.fetch_add(1) >= conversation_limit() || !co_await guarded(c, index, rng)) break;
}

std::unique_ptr<Connection> Run::take_connection() {
  std::lock_guard lock(mu_);
  if (idle_.empty()) return std::make_unique<Connection>(asio::make_strand(ioc_), endpoints_);
  auto c = std::move(idle_.back());
  idle_.pop_back();
  return c;
}

asio::awaitable<void> Run::arrival(uint64_t index) {
  auto c = take_connection();
  std::mt19937_64 rng(o_.seed * 1000003 + index + 1);
  co_await guarded(*c, index, rng);
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(c));
}

asio::awaitable<void> Run::arrivals() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  PoissonArrivals gaps(o_.rate, o_.seed);
  const uint64_t conversations = conversation_limit();
  auto at = start_;
  for (uint64_t i = 0; i < conversations; ++i) {
    at += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gaps.next_gap()));
    if (o_.duration_s > 0 && at >= end_) break;
    timer.expires_at(at);
    co_await timer.async_wait(asio::use_awaitable);
    asio::co_spawn(asio::make_strand(ioc_), arrival(i), asio::detached);
  }
}

void Run::start(std::string model) {
  model_ = std::move(model);
  start_ = Clock::now();
  end_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.duration_s));
  if (o_.rate > 0) {
    asio::co_spawn(asio::make_strand(ioc_), arrivals(), asio::detached);
    return;
  }
  for (int32_t u = 0; u < o_.concurrency; ++u) asio::co_spawn(asio::make_strand(ioc_), user(u), asio::detached);
}

LoadResult Run::finish() {
  LoadResult r;
  r.model = model_;
  r.wall_s = elapsed();
  r.records = std::move(records_);
  return r;
}

Endpoints resolve(const Url& url, asio::io_context& ioc) {
  try {
    return asio::ip::tcp::resolver(ioc).resolve(url.host, url.port);
  } catch (const std::exception& e) {
    throw Error("cannot resolve " + url.host + ":" + url.port + ": " + e.what());
  }
}

void run_threads(asio::io_context& ioc, int32_t n) {
  std::vector<std::thread> threads;
  for (int32_t i = 1; i < n; ++i) threads.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (auto& t : threads) t.join();
}

}  // namespace

LoadResult run_load(const LoadOptions& o, const ProgressFn& progress) {
  if (o.requests <= 0 && o.duration_s <= 0) throw Error("give --requests or --duration");
  const Url url = Url::parse(o.url);
  asio::io_context ioc;
  const Endpoints endpoints = resolve(url, ioc);
  Run run(o, url, endpoints, ioc);
  std::string model = o.model;
  if (model.empty()) {
    std::exception_ptr failure;
    asio::co_spawn(ioc, run.first_model(), [&](std::exception_ptr e, std::string id) {
      failure = e;
      model = std::move(id);
    });
    ioc.run();
    ioc.restart();
    try {
      if (failure) std::rethrow_exception(failure);
    } catch (const TransportError& e) {
      throw Error("cannot reach " + o.url + ": " + e.what());
    }
  }
  std::optional<IdleConnections> idle;
  if (o.idle_connections > 0) {
    raise_fd_limit();
    idle.emplace(url, endpoints, o.idle_connections);
  }
  run.start(model);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread reporter;
  if (progress)
    reporter = std::thread([&] {
      std::unique_lock lock(mu);
      while (!cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return done; }))
        progress(run.finished(), run.failed(), run.elapsed());
    });
  run_threads(ioc, std::max(1, o.io_threads));
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  if (reporter.joinable()) reporter.join();
  if (progress) progress(run.finished(), run.failed(), run.elapsed());
  LoadResult result = run.finish();
  if (idle) result.idle = idle->finish();
  return result;
}

}  // namespace parley::loadtest
