#include "serve/routes/middleware.h"

#include "serve/transport/api_error.h"
#include "serve/protection/client_address.h"
#include "serve/transport/detached_exchange.h"

namespace parley::serve {
namespace {

ApiError invalid_key(bool presented) {
  return ApiError(401,
                  presented ? "Incorrect API key provided"
                            : "No API key provided; send it as 'Authorization: Bearer <key>' or 'x-api-key: <key>'",
                  "invalid_request_error", "", "invalid_api_key");
}

ApiError forbidden(std::string message, std::string code) {
  return ApiError(403, std::move(message), "invalid_request_error", "", std::move(code));
}

// Sets the key's name on the exchange; throws 401 when the route needs a key
// and the request has none or a wrong one, 403 when it needs an admin key.
void authenticate(Exchange& ex, ApiContext& ctx, Access access, bool query_key = false) {
  if (access == Access::Public || (access == Access::Key && !ctx.keys.api_keys_required())) return;
  if (access == Access::Admin && !ctx.keys.has_admin())
    throw forbidden("Admin routes are off: start the server with --admin-key (or an \"admin\": true entry in "
                    "--api-keys-file)", "admin_disabled");
  const std::string presented = presented_key(ex.request(), query_key);
  const ApiKey* key = presented.empty() ? nullptr : ctx.keys.find(presented);
  if (!key) {
    ++ctx.metrics.unauthorized;
    ex.set_header("WWW-Authenticate", "Bearer");
    throw invalid_key(!presented.empty());
  }
  if (access == Access::Admin && !key->admin) throw forbidden("This route needs an admin key", "permission_denied");
  ex.set_api_key_name(key->name);
}

void limit_rate(Exchange& ex, ApiContext& ctx, Access access) {
  if (!ctx.rate_limiter || access == Access::Public) return;
  try {
    ctx.rate_limiter->admit_request(ex);
  } catch (const ApiError&) {
    ++ctx.metrics.rate_limited;
    throw;
  }
}

// JSON bodies of API requests: UTF-8, control characters, messages, blocklist.
void validate(const Exchange& ex, ApiContext& ctx, Access access) {
  const HttpRequest& r = ex.request();
  if (r.method != "POST" || access == Access::Public || r.body.empty()) return;
  try {
    validate_body_bytes(r.body);
    const json body = json::parse(r.body, nullptr, false);
    if (!body.is_discarded())  // else the route answers the parse error
      validate_request_json(body, InputLimits{ctx.ops.max_messages, ctx.blocklist ? &*ctx.blocklist : nullptr});
  } catch (const ApiError&) {
    ++ctx.metrics.rejected_input;
    throw;
  }
}

}  // namespace

void add_protection(Router& router, ApiContext& ctx) {
  router.use([&ctx](const ExchangePtr& ex, Access access) {
    authenticate(*ex, ctx, access);
    limit_rate(*ex, ctx, access);
    validate(*ex, ctx, access);
    return true;
  });
}

void check_ws_message(Exchange& ex, ApiContext& ctx) {
  authenticate(ex, ctx, Access::Key, true);
  limit_rate(ex, ctx, Access::Key);
  validate(ex, ctx, Access::Key);
}

UpgradeGate websocket_gate(ApiContext& ctx) {
  return [&ctx](const HttpRequest& request) -> std::optional<HttpResponse> {
    DetachedExchange ex(request);
    try {
      authenticate(ex, ctx, Access::Key, true);
      limit_rate(ex, ctx, Access::Key);
      return std::nullopt;
    } catch (const ApiError& e) {
      HttpResponse r = error_response(e);
      r.headers = ex.extra_headers();
      return r;
    }
  };
}

ResponseObserver access_log(ApiContext& ctx) {
  return [&ctx](const Exchange& ex, const ResponseRecord& rec) {
    ctx.metrics.count_response(ex.route(), rec.status);
    // A 5xx is the server's fault: logged at error level, so it shows at every level but "off".
    const obs::LogLevel level = rec.status >= 500 ? obs::LogLevel::Error : obs::LogLevel::Info;
    if (!ctx.log.enabled(level)) return;
    const HttpRequest& r = ex.request();
    json line = {{"request_id", ex.request_id()},
                 {"method", r.method},
                 {"path", std::string(r.path())},  // without the query: it may hold ?api_key=
                 {"status", rec.status},
                 {"bytes", rec.bytes},
                 {"duration_ms", std::round(rec.duration_ms * 1000) / 1000},
                 {"client_ip", client_address(r, ctx.ops.trusted_proxies)}};
    if (rec.first_byte_ms >= 0) line["ttft_ms"] = std::round(rec.first_byte_ms * 1000) / 1000;
    if (!ex.api_key_name().empty()) line["key"] = ex.api_key_name();
    if (rec.client_gone) line["client_gone"] = true;
    if (ctx.ops.log_content && !r.body.empty()) line["body"] = r.body;
    ctx.log.log(level, "access", line);
  };
}

}  // namespace parley::serve
