#pragma once
// The WebSocket protocol of /v1/ws, independent of the socket: the client
// sends JSON requests ("prompt" or "messages", generation parameters,
// optional "id" echoed back), one at a time; the server streams
// {"text", "finished": false} and ends each answer with {"finished": true,
// "finish_reason", "usage"}. {"cancel": true} stops the current answer.
// "session_id" continues a session; cache hits and static answers replay
// through the same messages (the final one says "cache": "hit"/"miss").
// Each request gets a request id (logs), sent in its final message.
// "model" picks one of a multi-model server's models as over HTTP (waiting
// for its load), or an adapter. Mistakes are answered with {"error": {...}} and the socket stays open.
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "serve/sessions/answer_cache.h"
#include "serve/api/api_context.h"
#include "serve/api/choice.h"
#include "serve/api/model_directory.h"

namespace parley::serve {

// The socket side, implemented by the WebSocket session.
class WsChannel {
 public:
  virtual ~WsChannel() = default;
  virtual void send(std::string text) = 0;                 // a text frame, on the strand
  virtual void post(std::function<void()> f) = 0;          // run on the strand, from any thread
  virtual size_t pending_bytes() const = 0;
  virtual void answering(bool running) = 0;  // on the strand: an answer started or ended
};

class WsConversation : public std::enable_shared_from_this<WsConversation> {
 public:
  // `ctx`: the server's (its default model's); `models`: the server's other
  // models (null: none). `upgrade`: the upgrade request, whose API key and
  // address every message is checked with.
  WsConversation(ApiContext& ctx, ModelDirectory* models, std::weak_ptr<WsChannel> channel, HttpRequest upgrade)
      : ctx_(ctx), models_(models), channel_(std::move(channel)), upgrade_(std::move(upgrade)) {}
  // On the strand: one message from the client.
  void on_message(std::string_view text, bool binary);
  // On the strand: the socket closed; cancels the running answer.
  void on_close();

 private:
  // Runs `f`; what it throws is answered as the error that ends request `request_id`.
  void answer_errors(const json& id, const std::string& request_id, const std::function<void()>& f);
  // Whether the message names another model; if so its answer starts once the model is loaded.
  bool load_model(const json& message, std::shared_ptr<Exchange> admission);
  void on_model(const json& message, Exchange& admission, ApiContext* model, std::shared_ptr<const void> hold,
                const std::string& error);
  // `model`: the context that answers; `hold` keeps it in memory until the answer ends.
  void start(const json& message, Exchange& admission, ApiContext& model, std::shared_ptr<const void> hold);
  void on_event(const Event& e);
  void finish(const Event& e);
  json end_message(const Event& e);
  void send(json message, const json& id);

  ApiContext& ctx_;
  ModelDirectory* models_;
  // Weak: the session owns this object. A running generation holds the
  // session through its post function.
  std::weak_ptr<WsChannel> channel_;
  HttpRequest upgrade_;
  std::weak_ptr<Generation> running_;
  bool busy_ = false;     // an answer runs, or its model loads
  bool loading_ = false;  // the request's model loads
  bool cancelled_ = false;  // {"cancel": true} came while it loaded
  ApiContext* model_ = nullptr;            // the running answer's model
  std::shared_ptr<const void> model_hold_;  // keeps it in memory
  json id_;  // the running request's "id", echoed in its messages
  std::string request_id_;
  bool degraded_ = false;  // this answer comes from the fallback model
  Choice choice_;
  AnswerPlan plan_;          // the running request's cache and session handling
  RecordedAnswer recorded_;  // its events, when the plan stores them in the cache
};

}  // namespace parley::serve
