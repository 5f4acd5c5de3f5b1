#include "serve/ops/ops_setup.h"

#include <algorithm>

#include "engine/engine_limits.h"
#include "state/redis_client.h"
#include "util/error.h"

namespace parley::serve {
namespace {

std::unique_ptr<state::RateBuckets> make_buckets(const std::string& redis_url,
                                                 std::shared_ptr<state::RedisPool>& pool) {
  if (redis_url.empty()) return state::make_local_rate_buckets();
  pool = std::make_shared<state::RedisPool>(state::parse_redis_url(redis_url));
  return state::make_failover_rate_buckets(pool);
}

std::vector<ApiKey> all_keys(const OpsOptions& o) {
  std::vector<ApiKey> keys = KeyStore::from_flags(o.api_keys);
  for (ApiKey& k : KeyStore::from_flags(o.admin_keys, true)) keys.push_back(std::move(k));
  if (!o.api_keys_file.empty())
    for (ApiKey& k : KeyStore::from_file(o.api_keys_file)) keys.push_back(std::move(k));
  return keys;
}

}  // namespace

OpsSetup::OpsSetup(const OpsOptions& o, ApiContext& ctx, const EngineConfig& engine_config) {
  ctx.ops = o.settings;
  if (!o.max_rss.empty()) ctx.ops.max_rss = parse_memory_size(o.max_rss);
  const auto level = obs::log_level_from_name(o.log_level);
  if (!level) throw Error("--log-level: '" + o.log_level + "' is not debug, info, warn, error or off");
  ctx.log.set_level(*level);
  ctx.generations.set_log(&ctx.log, ctx.ops.log_content);
  std::vector<ApiKey> keys = all_keys(o);
  const bool per_key_limits = std::any_of(keys.begin(), keys.end(), [](const ApiKey& k) { return k.rps > 0 || k.tpm > 0; });
  ctx.keys = KeyStore(std::move(keys));
  if (o.rate.rps > 0 || o.rate.tpm > 0 || per_key_limits)
    ctx.rate_limiter = std::make_shared<RateLimiter>(make_buckets(o.redis_url, redis_), o.rate, ctx.keys);
  if (ctx.rate_limiter) ctx.rate_limiter->set_trusted_proxies(ctx.ops.trusted_proxies);
  if (!o.blocklist.empty()) ctx.blocklist = Blocklist::from_file(o.blocklist);
  if (!o.fallback_model.empty()) fallback_ = std::make_unique<FallbackModel>(o.fallback_model, ctx, engine_config);
  ctx.log.log(obs::LogLevel::Info, "ops",
              {{"api_keys", ctx.keys.api_keys_required()}, {"admin_keys", ctx.keys.has_admin()}, {"rate_limits", bool(ctx.rate_limiter)},
               {"blocklist_patterns", ctx.blocklist ? ctx.blocklist->size() : 0},
               {"fallback_model", o.fallback_model}, {"max_rss", ctx.ops.max_rss}});
}

OpsSetup::~OpsSetup() = default;

}  // namespace parley::serve
