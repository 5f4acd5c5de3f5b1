// parley serve: the OpenAI-compatible HTTP/WebSocket API (src/serve) on one
// resident model, or several loaded on demand (docs/api.md, "Several
// models"). Every flag also comes from PARLEY_<FLAG> and from a JSON --config
// file; precedence: flags > environment > file > defaults.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/model_list.h"
#include "engine/engine_limits.h"
#include "engine/llm_engine.h"
#include "model/model.h"
#include "serve/api_server.h"
#include "serve/models/served_models.h"
#include "serve/ops/ops_setup.h"
#include "serve/sessions/session_cache_backends.h"
#include "serve/sessions/static_answers_signal.h"
#include "util/error.h"

namespace parley {
namespace {

constexpr double kServeStepMs = 50;

struct ServeArgs {
  ModelOptions model;
  serve::ServeOptions serve;
  std::string config_file;
  std::string model_id;  // default: the model file's stem
  // Several models (docs/api.md, "Several models"): --model NAME=PATH values, --models-dir.
  std::vector<std::string> models;  // --model: one PATH as ever, or NAME=PATH (repeatable)
  std::string models_dir;
  size_t max_models = 0;
  std::string models_memory;  // "" = no budget
  double model_idle_unload_s = 0;
  // Per model: VALUE for the default model, NAME=VALUE for the model NAME (repeatable).
  std::vector<std::string> chat_templates;   // --chat-template: a Jinja file or a bundled template's name
  std::vector<std::string> fallback_models;  // --fallback-model: a model file
  int32_t max_n = 8;
  int32_t idle_timeout_s = 60;
  int32_t ws_idle_timeout_s = 300;
  double grace_s = 10;
  // A step-time target by default: at 16 streams the fixed 512-token budget let a
  // burst of prompts stretch the gap between tokens past 100 ms (docs/performance.md).
  EngineConfig engine = [] {
    EngineConfig c;
    c.max_step_ms = kServeStepMs;
    return c;
  }();
  std::string kv_memory;  // empty: the engine's default
  SpecOptions spec;
  std::string kv_type = "f16";
  std::string kv_policy = "full";
  bool no_prefix_cache = false;
  std::string pooling;  // --pooling; empty: the model's own, else mean
  std::string schedule_policy = "fcfs";
  // Sessions, response cache, static answers (docs/api.md, "Sessions and caching").
  serve::StateBackendOptions state;
  std::string response_cache_bytes = "64M";
  int32_t session_turns = 5;
  int64_t session_ttl_s = 86400;
  int64_t session_lock_lease_s = serve::TurnLeases::kDefaultLease.count();
  int64_t response_cache_ttl_s = 3600;
  std::string response_cache_scope = "key";
  std::string static_answers_mode = "degraded";
  ServeLoraOptions lora;
  serve::OpsOptions ops;  // keys, rate limits, validation, admission, degradation (docs/operations.md)
};

serve::StaticAnswersMode parse_static_mode(const std::string& s) {
  return s == "always" ? serve::StaticAnswersMode::Always
         : s == "off"  ? serve::StaticAnswersMode::Off
                       : serve::StaticAnswersMode::Degraded;
}

// Values from the --config file for the options that neither a flag nor an
// environment variable set.
void apply_config_file(CLI::App& cmd, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("--config: cannot open " + path);
  const nlohmann::json cfg = nlohmann::json::parse(in, nullptr, false);
  if (!cfg.is_object()) throw Error("--config: " + path + " is not a JSON object");
  for (const auto& [key, value] : cfg.items()) {
    std::string name = key;
    std::replace(name.begin(), name.end(), '_', '-');
    CLI::Option* opt = cmd.get_option_no_throw("--" + name);
    if (!opt || name == "config") throw Error("--config: unknown setting '" + key + "' in " + path);
    if (opt->count() > 0) continue;
    std::vector<std::string> results;
    for (const auto& v : value.is_array() ? value : nlohmann::json::array({value}))
      results.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    opt->add_result(results);
    opt->run_callback();
  }
}

std::string fingerprint(const Model& m) {
  const size_t h = std::hash<std::string>{}(m.path() + "#" + std::to_string(m.weight_bytes()));
  char buf[32];
  std::snprintf(buf, sizeof buf, "fp_%010llx", static_cast<unsigned long long>(h & 0xffffffffffULL));
  return buf;
}

// The model's API context as the flags set it up.
std::unique_ptr<serve::ApiContext> make_context(const ServeArgs& a, const Model& model, LlmEngine& engine,
                                                const std::string& id, const serve::StateBackends& backends) {
  const int32_t max_context = engine.config().max_context;
  const int32_t context = max_context > 0 ? max_context : model.config().context_length;
  auto ctx = std::make_unique<serve::ApiContext>(
      model, engine, id, fingerprint(model),
      serve::ParamLimits{a.max_n, model.config().vocab_size, context, a.engine.kv_retention.policy != KvPolicy::Full});
  ctx->pooling = a.pooling == "last"                                               ? Pooling::Last
                 : a.pooling == "cls"                                              ? Pooling::Cls
                 : a.pooling.empty() && model.config().pooling != Pooling::None ? model.config().pooling
                                                                                   : Pooling::Mean;
  backends.attach(ctx->services);
  ctx->services.session_turns = a.session_turns;
  ctx->services.session_ttl_s = a.session_ttl_s;
  ctx->services.response_cache_ttl = std::chrono::seconds(a.response_cache_ttl_s);
  ctx->services.cache_per_key = a.response_cache_scope == "key";
  ctx->services.static_mode = parse_static_mode(a.static_answers_mode);
  return ctx;
}

// The models to serve, the default (loaded at start) first.
std::vector<NamedModel> model_list(const ServeArgs& a) {
  std::vector<NamedModel> list;
  for (const std::string& v : a.models) list.push_back(parse_model_value(v));
  if (!a.models_dir.empty()) {
    const std::vector<NamedModel> found = models_in_dir(a.models_dir);
    if (found.empty() && list.empty()) throw Error("--models-dir: no model files (*.gguf, *.bin) in " + a.models_dir);
    list.insert(list.end(), found.begin(), found.end());
  }
  if (list.empty()) {
    const std::string path = a.model.resolved_model();
    list.push_back({std::filesystem::path(path).stem().string(), path});
  }
  if (!a.model_id.empty()) list[0].name = a.model_id;
  check_unique_names(list);
  if (list.size() > 1 && a.max_models == 1)
    throw Error("--max-models must be at least 2 with several models: the default model stays loaded");
  return list;
}

// What --chat-template and --fallback-model give each model, checked at start.
struct PerModelSettings {
  std::map<std::string, std::string> chat_templates;  // the template's text by model name
  std::map<std::string, std::string> fallbacks;       // the fallback model's file by model name
};

PerModelSettings per_model_settings(const ServeArgs& a, const std::vector<NamedModel>& list) {
  PerModelSettings s;
  for (const auto& [name, value] : per_model_values(a.chat_templates, list, "--chat-template"))
    s.chat_templates[name] = read_chat_template(value, "--chat-template");
  s.fallbacks = per_model_values(a.fallback_models, list, "--fallback-model");
  for (const auto& [name, path] : s.fallbacks)
    if (!std::filesystem::is_regular_file(path)) throw Error("--fallback-model: cannot open " + path);
  return s;
}

void set_model_chat_template(const PerModelSettings& s, const std::string& name, Model& model) {
  if (const auto it = s.chat_templates.find(name); it != s.chat_templates.end()) model.set_chat_template(it->second);
}

// The models after the first, loaded on demand with the flags' engine and serving settings.
std::unique_ptr<serve::ServedModels> make_served_models(const ServeArgs& a, serve::ApiContext& front,
                                                        const serve::StateBackends& backends,
                                                        const std::vector<NamedModel>& list,
                                                        const PerModelSettings& settings) {
  serve::ModelSetOptions o;
  o.max_models = a.max_models;
  o.memory_bytes = a.models_memory.empty() ? 0 : parse_memory_size(a.models_memory);
  o.idle_unload = std::chrono::milliseconds(int64_t(a.model_idle_unload_s * 1000));
  std::map<std::string, std::string> paths;
  for (size_t i = 1; i < list.size(); ++i) paths[list[i].name] = list[i].path;
  auto load = [&a, &front, &backends, paths, settings](const std::string& name) -> std::shared_ptr<serve::ResidentModel> {
    ModelOptions options = a.model;
    options.model = paths.at(name);
    auto model = options.load();
    set_model_chat_template(settings, name, *model);
    auto engine = std::make_unique<LlmEngine>(*model, a.engine);
    auto ctx = make_context(a, *model, *engine, name, backends);
    serve::share_protection(front, *ctx);
    std::unique_ptr<serve::FallbackModel> fallback;
    if (const auto it = settings.fallbacks.find(name); it != settings.fallbacks.end())
      fallback = std::make_unique<serve::FallbackModel>(it->second, *ctx, a.engine);
    return std::make_shared<serve::ServedModel>(std::move(model), std::move(engine), std::move(ctx), std::move(fallback));
  };
  auto served = std::make_unique<serve::ServedModels>(front, o, std::move(load));
  for (size_t i = 1; i < list.size(); ++i) served->add(list[i].name, std::filesystem::file_size(list[i].path));
  return served;
}

void run_serve(ServeArgs& a) {
  a.engine.threads = a.model.resolved_threads();
  if (!a.kv_memory.empty()) a.engine.kv_memory_bytes = parse_memory_size(a.kv_memory);
  a.engine.kv_type = parse_kv_type(a.kv_type);
  a.engine.kv_retention.policy = parse_kv_policy(a.kv_policy);
  a.engine.prefix_cache = !a.no_prefix_cache;
  a.spec.apply(a.engine);
  a.engine.policy = a.schedule_policy == "cost-aware" ? SchedulePolicy::CostAware : SchedulePolicy::Fcfs;
  a.state.response_cache_bytes = a.response_cache_bytes == "0" ? 0 : parse_memory_size(a.response_cache_bytes);
  a.state.lock_lease = std::chrono::seconds(a.session_lock_lease_s);
  a.serve.http.idle_timeout = std::chrono::seconds(a.idle_timeout_s);
  a.serve.http.ws_idle_timeout = std::chrono::seconds(a.ws_idle_timeout_s);
  a.serve.grace = std::chrono::milliseconds(int64_t(a.grace_s * 1000));
  const std::vector<NamedModel> list = model_list(a);
  const PerModelSettings settings = per_model_settings(a, list);
  serve::StateBackends backends(a.state);  // before the model: a misconfigured Redis fails at once
  a.model.model = list[0].path;
  auto model = a.model.load();
  set_model_chat_template(settings, list[0].name, *model);
  auto engine = std::make_unique<LlmEngine>(*model, a.engine);
  auto ctx = make_context(a, *model, *engine, list[0].name, backends);
  // Adapters are of the default model (the base their files were made for).
  ctx->adapters = a.lora.registry(*model);
  if (ctx->adapters->contains(list[0].name))
    throw Error("--lora/--lora-dir: the adapter name '" + list[0].name + "' is the base model's");
  serve::StaticAnswersSignal reload_on_sighup(ctx->services.static_answers);
  a.ops.redis_url = a.state.redis_url;  // rate buckets shared with the other replicas
  if (const auto it = settings.fallbacks.find(list[0].name); it != settings.fallbacks.end()) a.ops.fallback_model = it->second;
  auto ops = std::make_unique<serve::OpsSetup>(a.ops, *ctx, a.engine);
  auto others = list.size() > 1 ? make_served_models(a, *ctx, backends, list, settings) : nullptr;
  serve::ApiServer server(*ctx, a.serve, others.get());
  serve::serve_until_signal(server, a.serve, std::cout);
  others.reset();  // drained by the shutdown: their engines end with them
  ops.reset();  // the fallback engine, like the main one, ends while ctx exists
  // The engine goes first: its destructor delivers the final events of what
  // is left, which post into the (stopped) I/O context and end generations
  // registered in ctx, so both must still exist.
  engine.reset();
}

// Protection and operations (docs/operations.md, docs/security.md).
void add_ops_options(CLI::App& cmd, serve::OpsOptions& o) {
  serve::OpsSettings& s = o.settings;
  cmd.add_option("--api-key", o.api_keys,
                 "API key clients must send as 'Authorization: Bearer KEY' or 'x-api-key: KEY' (repeatable)");
  cmd.add_option("--admin-key", o.admin_keys, "key for the admin routes (/admin/...), valid for the API too (repeatable)");
  cmd.add_option("--api-keys-file", o.api_keys_file, "JSON file of keys: [{\"name\", \"key\", \"rps\", \"tpm\", \"admin\"}]");
  cmd.add_option("--rate-limit-rps", o.rate.rps, "requests per second per key (per client IP without keys); 0 = off")->capture_default_str();
  cmd.add_option("--rate-limit-burst", o.rate.burst, "requests at once per key (0: the rps, at least 1)")->capture_default_str();
  cmd.add_option("--rate-limit-tpm", o.rate.tpm, "tokens (prompt + max_tokens) per minute per key; 0 = off")->capture_default_str();
  cmd.add_option_function<std::vector<std::string>>(
      "--trusted-proxy", [&t = s.trusted_proxies](const std::vector<std::string>& cidrs) { for (const auto& c : cidrs) t.add(c); },
      "proxy address or CIDR whose X-Forwarded-For names the client (repeatable; default: none)");
  cmd.add_option("--max-messages", s.max_messages, "most messages per chat request (0 = any)")->capture_default_str();
  cmd.add_option("--max-prompt-tokens", s.max_prompt_tokens, "most prompt tokens per request (0 = the context)")->capture_default_str();
  cmd.add_option("--max-tokens-limit", s.max_tokens_limit, "cap on every request's max_tokens (0 = none)")->capture_default_str();
  cmd.add_option("--blocklist", o.blocklist, "file of RE2 patterns (one a line); matching requests get 400");
  cmd.add_option("--log-level", o.log_level, "JSON log lines on stderr from: debug, info, warn, error, off")->capture_default_str();
  cmd.add_flag("--log-content", s.log_content, "include request bodies (prompts) in the access log");
  cmd.add_option("--max-queue", s.max_queue, "most requests waiting for the engine (503 above; 0 = any)")->capture_default_str();
  cmd.add_option("--max-queue-tokens", s.max_queue_tokens, "most prompt tokens waiting (503 above; 0 = any)")->capture_default_str();
  cmd.add_option("--max-request-timeout", s.max_request_timeout_s, "seconds: cap and default of the 'timeout' parameter (0 = none)")->capture_default_str();
  cmd.add_option("--max-rss", o.max_rss, "process memory limit (bytes, 512M, 2G, 50%): above 90% new requests get 503");
  cmd.add_option("--degrade-queue-wait-ms", s.degrade_queue_wait_ms, "degraded mode when a request waits this long for its first token (0 = off)")->capture_default_str();
  cmd.add_option("--degrade-p99-ms", s.degrade_p99_ms, "degraded mode when the P99 time to first token (last 10 s) passes this (0 = off)")->capture_default_str();
  cmd.add_option("--degrade-hold", s.degrade_hold_s, "seconds below half of the thresholds before leaving degraded mode")->capture_default_str();
}

void add_options(CLI::App& cmd, ServeArgs& a) {
  a.model.add_to(cmd);
  cmd.remove_option(cmd.get_option("--model"));  // serve's takes several
  cmd.add_option("-m,--model", a.models,
                 "GGUF file or llama2.c checkpoint (default: $PARLEY_MODEL, else the bundled stories260K); "
                 "NAME=PATH, repeatable, serves several models (docs/api.md, \"Several models\"): the first is the default");
  cmd.add_option("--models-dir", a.models_dir, "serve every *.gguf and *.bin model file of DIR too, named by file stem (loaded on demand)");
  cmd.add_option("--max-models", a.max_models, "most models in memory at once, the default included (0 = any)")->capture_default_str();
  cmd.add_option("--models-memory", a.models_memory, "budget over the loaded models' weight and KV pool bytes (512M, 8G, 50%; default: none)");
  cmd.add_option("--model-idle-unload", a.model_idle_unload_s, "seconds without a request before a model loaded on demand is unloaded (0 = never)")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd.add_option("--chat-template", a.chat_templates,
                 "Jinja file or a bundled template's name (as parley mkmodel --chat-template) used instead of the model's "
                 "tokenizer.chat_template; NAME=... for the model NAME (repeatable), else the default model's");
  cmd.add_option("--fallback-model", a.fallback_models,
                 "smaller model with the same vocabulary, used in degraded mode; NAME=PATH for the model NAME "
                 "(repeatable, loaded with it), else the default model's");
  cmd.add_option("--config", a.config_file, "JSON file of settings named like the flags (\"port\": 8080, ...)");
  cmd.add_option("--host", a.serve.http.host, "address to listen on")->capture_default_str();
  cmd.add_option("--port", a.serve.http.port, "port to listen on (0: any free port)")->capture_default_str();
  cmd.add_option("--io-threads", a.serve.http.io_threads, "HTTP I/O threads")->capture_default_str()->check(CLI::Range(1, 256));
  cmd.add_option("--max-body-bytes", a.serve.http.max_body_bytes, "largest request body (413 above)")->capture_default_str();
  cmd.add_option("--idle-timeout", a.idle_timeout_s, "seconds before an idle connection is closed")->capture_default_str()->check(CLI::Range(1, 86400));
  cmd.add_option("--ws-idle-timeout", a.ws_idle_timeout_s, "seconds a WebSocket may go without a request (no answer running)")->capture_default_str()->check(CLI::Range(1, 86400));
  cmd.add_option("--max-connections", a.serve.http.max_connections, "most open connections; at the cap the longest-idle one makes room, else refused (0: the open-file limit less a tenth and 64)")->capture_default_str();
  cmd.add_option("--max-connections-per-ip", a.serve.http.max_connections_per_ip, "most open connections per client address (IPv6: per /64; a --trusted-proxy is exempt; 0 = any)")->capture_default_str();
  cmd.add_option("--shutdown-grace", a.grace_s, "seconds requests in flight get to finish at shutdown")->capture_default_str();
  cmd.add_option("--model-id", a.model_id, "the model name clients use (default: the model file's name)");
  cmd.add_option("--max-n", a.max_n, "most choices (n) per request")->capture_default_str()->check(CLI::Range(1, 128));
  add_step_options(cmd, a.engine);
  a.spec.add_to(cmd);
  cmd.add_option("--schedule-policy", a.schedule_policy, "order of waiting requests after their priority: fcfs (arrival) or cost-aware (smallest prompt + max_tokens first, with aging)")
      ->capture_default_str()->check(CLI::IsMember({"fcfs", "cost-aware"}));
  cmd.add_option("--pooling", a.pooling, "how /v1/embeddings pools an input's hidden states: mean, last or cls (default: the model's own pooling_type, else mean)")
      ->check(CLI::IsMember({"mean", "last", "cls"}));
  cmd.add_option("--kv-memory", a.kv_memory, "KV cache pool: bytes, 512M, 2G or 25% of RAM (default: the engine's)");
  add_kv_type_option(cmd, a.kv_type);
  cmd.add_flag("--kv-prefault", a.engine.kv_prefault, kKvPrefaultHelp);
  add_kv_retention_options(cmd, a.kv_policy, a.engine.kv_retention);
  cmd.add_flag("--no-prefix-cache", a.no_prefix_cache, "turn automatic prefix caching off");
  cmd.add_option("--state-db", a.state.state_db, "SQLite file that keeps sessions across restarts (default: memory only)");
  cmd.add_option("--redis-url", a.state.redis_url, "redis://[:password@]host:port/db: sessions and response cache in Redis");
  cmd.add_flag("--redis-optional", a.state.redis_optional, "start with local state when --redis-url fails its check at start (default: refuse to start)");
  cmd.add_option("--session-turns", a.session_turns, "turns a new session keeps by default")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd.add_option("--session-ttl", a.session_ttl_s, "seconds an idle session lives by default")->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(365 * 86400)));
  cmd.add_option("--session-lock-lease", a.session_lock_lease_s, "seconds a session's turn lock outlives a dead replica or a lost unlock (renewed while its turn runs)")->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(3600)));
  cmd.add_option("--response-cache-bytes", a.response_cache_bytes, "response cache budget (bytes, 64M, 1G; 0 = off)")->capture_default_str();
  cmd.add_option("--response-cache-ttl", a.response_cache_ttl_s, "seconds a cached answer lives")->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(365 * 86400)));
  cmd.add_option("--response-cache-scope", a.response_cache_scope, "who a cached answer serves: the API key that caused it (key) or every client (global)")->capture_default_str()->check(CLI::IsMember({"key", "global"}));
  cmd.add_option("--static-answers", a.state.static_answers, "JSON or YAML file of canonical questions and answers");
  cmd.add_option("--static-answers-mode", a.static_answers_mode, "when static answers are served: always, degraded or off")->capture_default_str()->check(CLI::IsMember({"always", "degraded", "off"}));
  a.lora.add_to(cmd);
  add_ops_options(cmd, a.ops);
  for (CLI::Option* opt : cmd.get_options()) {
    std::string env = opt->get_single_name();
    if (opt->get_lnames().empty() || env == "help") continue;
    std::transform(env.begin(), env.end(), env.begin(), [](char c) { return c == '-' ? '_' : char(std::toupper(c)); });
    opt->envname("PARLEY_" + env);
  }
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "serve the OpenAI-compatible HTTP and WebSocket API (docs/api.md)");
  add_options(*cmd, *args);
  cmd->callback([args, cmd] {
    if (!args->config_file.empty()) apply_config_file(*cmd, args->config_file);
    run_serve(*args);
  });
}

}  // namespace parley
