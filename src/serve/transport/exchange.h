#pragma once
// One HTTP request/response exchange as a route sees it. A route may answer at
// once or later (after the engine finished), all at once or as a stream.
// Every method except post() must be called on the connection's strand; post()
// may be called from any thread (the engine's event sink uses it).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "serve/transport/http_message.h"

namespace parley::serve {

class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual const HttpRequest& request() const = 0;

  // A complete response; afterwards the connection reads the next request.
  virtual void respond(HttpResponse response) = 0;
  // A streamed response (chunked transfer): the head's body is ignored.
  virtual void begin_stream(HttpResponse head) = 0;
  virtual void send_chunk(std::string data) = 0;  // written as soon as possible
  virtual void end_stream() = 0;
  bool answered() const { return answered_; }  // respond() or begin_stream() was called

  // Runs `f` on the connection's strand.
  virtual void post(std::function<void()> f) = 0;
  // `f` runs once, on the strand, when the client goes away before the
  // response is complete (so the route can cancel its work).
  virtual void on_disconnect(std::function<void()> f) = 0;
  // Bytes queued for the client and not yet written (slow readers).
  virtual size_t pending_bytes() const = 0;

  // Adds a header to whatever response is sent (rate-limit headers, request
  // id, X-Parley-Degraded); call before respond() or begin_stream().
  void set_header(std::string name, std::string value) {
    for (auto& [k, v] : extra_headers_)
      if (k == name) return void(v = std::move(value));
    extra_headers_.emplace_back(std::move(name), std::move(value));
  }
  const Headers& extra_headers() const { return extra_headers_; }
  // The name of the API key that authenticated the request ("" without keys).
  const std::string& api_key_name() const { return api_key_name_; }
  void set_api_key_name(std::string name) { api_key_name_ = std::move(name); }
  // The matched route's pattern ("/v1/models/{id}"; "" when none matched): a metrics label.
  const std::string& route() const { return route_; }
  void set_route(std::string pattern) { route_ = std::move(pattern); }
  const std::string& request_id() const { return request_id_; }
  void set_request_id(std::string id) { request_id_ = std::move(id); }
  // The body's `user` (OpenAI's id of the client's end user): logged with the
  // request's engine lines, so that abuse can be traced to one end user.
  const std::string& end_user() const { return end_user_; }
  void set_end_user(std::string user) { end_user_ = std::move(user); }
  // Keeps `p` alive as long as the exchange (a multi-model server's hold on the model answering it).
  void hold(std::shared_ptr<const void> p) { held_.push_back(std::move(p)); }

 protected:
  bool answered_ = false;

 private:
  Headers extra_headers_;
  std::string api_key_name_, request_id_, route_, end_user_;
  std::vector<std::shared_ptr<const void>> held_;
};

using ExchangePtr = std::shared_ptr<Exchange>;

}  // namespace parley::serve
