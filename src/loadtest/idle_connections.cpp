#include "loadtest/idle_connections.h"

// GCC 12 takes Asio's coroutine-frame operator new/delete pair for a mismatch
// when it inlines a coroutine's creation (seen under -fsanitize): a false positive.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include <future>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "util/error.h"

namespace parley::loadtest {
namespace {

constexpr int32_t kOpeners = 32;  // connections being opened at once
constexpr auto kOpenTimeout = std::chrono::seconds(30);

}  // namespace

IdleConnections::IdleConnections(const Url& url, const Endpoints& endpoints, int32_t n)
    : work_(asio::make_work_guard(ioc_)), probe_(size_t(std::max(n, 0))) {
  count_.requested = n;
  for (int32_t i = 0; i < n; ++i) streams_.push_back(std::make_unique<beast::tcp_stream>(ioc_));
  const auto t0 = Clock::now();
  std::atomic<int32_t> next{0};
  std::promise<void> all_tried;
  int32_t openers = kOpeners;  // touched on the (single) I/O thread only
  for (int32_t k = 0; k < kOpeners; ++k)
    asio::co_spawn(ioc_, opener(url, endpoints, next), [&](std::exception_ptr) {
      if (--openers == 0) all_tried.set_value();
    });
  thread_ = std::thread([this] { ioc_.run(); });
  all_tried.get_future().wait();
  count_.open_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (n > 0 && opened_ == 0) {
    close_all();
    throw Error("--idle-connections: none of " + std::to_string(n) + " connections answered GET /health");
  }
}

IdleConnections::~IdleConnections() {
  if (!finished_) close_all();
}

asio::awaitable<void> IdleConnections::opener(const Url& url, const Endpoints& endpoints, std::atomic<int32_t>& next) {
  for (size_t i; (i = size_t(next.fetch_add(1))) < streams_.size();)
    if (co_await open_one(*streams_[i], url, endpoints)) {
      ++opened_;
      watch(i);
    }
}

asio::awaitable<bool> IdleConnections::open_one(beast::tcp_stream& s, const Url& url, const Endpoints& endpoints) {
  beast::error_code ec;
  s.expires_after(kOpenTimeout);
  co_await s.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return false;
  http::request<http::empty_body> req{http::verb::get, url.path("/health"), 11};
  req.set(http::field::host, url.host_header());
  req.set(http::field::user_agent, "parley-loadtest");
  req.keep_alive(true);
  co_await http::async_write(s, req, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return false;
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  co_await http::async_read(s, buffer, res, asio::redirect_error(asio::use_awaitable, ec));
  s.expires_never();
  co_return !ec && res.result_int() == 200 && res.keep_alive();
}

void IdleConnections::watch(size_t i) {
  streams_[i]->socket().async_read_some(asio::buffer(&probe_[i], 1),
                                        [this](const beast::error_code&, size_t) { ++closed_; });
}

IdleCount IdleConnections::finish() {
  if (finished_) return count_;
  count_.opened = opened_;
  count_.open_at_end = opened_ - closed_;
  close_all();
  return count_;
}

void IdleConnections::close_all() {
  asio::post(ioc_, [this] {
    for (auto& s : streams_) {
      beast::error_code ignored;
      s->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
      s->close();
    }
  });
  work_.reset();
  thread_.join();
  finished_ = true;
}

}  // namespace parley::loadtest
