// POST /v1/sessions, GET /v1/sessions[/{id}], DELETE /v1/sessions/{id}, and
// POST /admin/static-answers/reload. A session bound to an API key is
// invisible (404) to requests with another key.
#include "serve/sessions/session_routes.h"

#include "serve/transport/api_error.h"
#include "serve/api/request_fields.h"
#include "serve/sessions/session_chat.h"
#include "state/session_rules.h"
#include "util/error.h"

namespace parley::serve {
namespace {

constexpr int64_t kMaxTurns = 1000;
constexpr int64_t kMaxTtlS = 365 * 86400;

state::SessionStore& store(ApiContext& ctx) {
  if (!ctx.services.sessions) throw not_found("Sessions are not enabled on this server", "sessions_disabled");
  return *ctx.services.sessions;
}

json turn_json(const state::Turn& t) {
  return {{"user", t.user}, {"assistant", t.assistant}, {"created_at", t.created_ms / 1000}};
}

json session_json(const ApiContext& ctx, const state::Session& s, bool with_turns) {
  json out = {{"id", s.id},
              {"object", "session"},
              {"model", s.model.empty() ? ctx.model_id : s.model},
              {"user", s.user},
              {"system_prompt", s.system_prompt},
              {"max_turns", s.max_turns},
              {"ttl_s", s.ttl_s},
              {"created_at", s.created_ms / 1000},
              {"updated_at", s.updated_ms / 1000},
              {"expires_at", s.expires_ms / 1000}};
  if (with_turns) {
    out["turns"] = json::array();
    for (const state::Turn& t : s.turns) out["turns"].push_back(turn_json(t));
  }
  return out;
}

// The adapter a new session's turns run with ("" for the base): its
// "model", which names the base or an adapter offered (404 otherwise).
std::string session_model(const json& body, const ApiContext& ctx) {
  const auto model = get_string(body, "model");
  if (!model || *model == ctx.model_id) return "";
  if (!ctx.adapters->contains(*model)) throw unknown_model(*model, ctx);
  return *model;
}

// The session `id` if it exists and belongs to the request's API key.
state::Session visible_session(ApiContext& ctx, const ExchangePtr& ex, const std::string& id) {
  auto s = store(ctx).get(id);
  if (!s || s->api_key != request_api_key(*ex)) throw not_found("No session '" + id + "' (unknown or expired)", "session_not_found");
  return std::move(*s);
}

void create(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = ex->request().body.empty() ? json::object() : parse_json_body(ex->request());
  check_fields(body, RouteFields::Session);
  state::Session s;
  s.id = state::new_session_id();
  s.user = get_string(body, "user").value_or("");
  s.api_key = request_api_key(*ex);
  s.system_prompt = get_string(body, "system_prompt").value_or("");
  s.model = session_model(body, ctx);
  s.max_turns = int32_t(get_integer(body, "max_turns", 1, kMaxTurns).value_or(ctx.services.session_turns));
  s.ttl_s = get_integer(body, "ttl_s", 1, kMaxTtlS).value_or(ctx.services.session_ttl_s);
  s.created_ms = s.updated_ms = state::now_ms();
  s.expires_ms = s.created_ms + s.ttl_s * 1000;
  store(ctx).put(s);
  ex->respond(json_response(201, session_json(ctx, s, true)));
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A query parameter's value with %XX and '+' decoded.
std::string decode_query(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') out += ' ';
    else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += char(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else out += s[i];
  }
  return out;
}

int parse_limit(const std::string& text) {
  if (text.empty()) return 20;
  try {
    size_t used = 0;
    const int limit = std::stoi(text, &used);
    if (used == text.size() && limit >= 1 && limit <= 100) return limit;
  } catch (const std::exception&) {
  }
  throw invalid_request("'limit' must be an integer from 1 to 100", "limit", "invalid_value");
}

// `after` as given, once it is known to be a cursor a listing handed out.
std::string parse_after(const std::string& text) {
  if (text.empty()) return text;
  try {
    state::decode_cursor(text);
    return text;
  } catch (const Error&) {
    throw invalid_request("'after' must be a 'next_cursor' value from an earlier listing", "after", "invalid_value");
  }
}

void list(const ExchangePtr& ex, ApiContext& ctx) {
  const HttpRequest& r = ex->request();
  const int limit = parse_limit(r.query_param("limit"));
  const std::string after = parse_after(decode_query(r.query_param("after")));
  const state::SessionPage page = store(ctx).list(decode_query(r.query_param("user")), request_api_key(*ex), after, limit);
  json data = json::array();
  for (const state::Session& s : page.sessions) data.push_back(session_json(ctx, s, false));
  ex->respond(json_response(200, {{"object", "list"},
                                  {"data", std::move(data)},
                                  {"has_more", !page.next_cursor.empty()},
                                  {"next_cursor", page.next_cursor.empty() ? json(nullptr) : json(page.next_cursor)}}));
}

void reload_static_answers(const ExchangePtr& ex, ApiContext& ctx) {
  state::StaticAnswers* answers = ctx.services.static_answers;
  if (!answers) throw not_found("No static answers file is configured (--static-answers)", "static_answers_disabled");
  try {
    answers->reload();
  } catch (const Error& e) {
    throw invalid_request(std::string("Reloading failed; the previous answers stay: ") + e.what(), "",
                          "static_answers_invalid");
  }
  ex->respond(json_response(200, {{"reloaded", true}, {"answers", answers->size()}}));
}

}  // namespace

void add_session_routes(Router& router, ApiContext& ctx) {
  router.add("POST", "/v1/sessions", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { create(ex, ctx); });
  router.add("GET", "/v1/sessions", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { list(ex, ctx); });
  router.add("GET", "/v1/sessions/{id}", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams& p) {
    ex->respond(json_response(200, session_json(ctx, visible_session(ctx, ex, p.at("id")), true)));
  });
  router.add("DELETE", "/v1/sessions/{id}", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams& p) {
    const std::string id = visible_session(ctx, ex, p.at("id")).id;
    store(ctx).remove(id);
    ex->respond(json_response(200, {{"id", id}, {"object", "session.deleted"}, {"deleted", true}}));
  });
  router.add("POST", "/admin/static-answers/reload", Access::Admin,
             [&ctx](const ExchangePtr& ex, const PathParams&) { reload_static_answers(ex, ctx); });
}

}  // namespace parley::serve
