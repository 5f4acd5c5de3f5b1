// parley serve: the OpenAI-compatible HTTP/WebSocket API (src/serve) on one
// resident model. Every flag also comes from PARLEY_<FLAG> and from a JSON
// --config file; precedence: flags > environment > file > defaults.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "engine/engine_limits.h"
#include "engine/llm_engine.h"
#include "model/model.h"
#include "serve/api_server.h"
#include "util/error.h"

namespace parley {
namespace {

struct ServeArgs {
  ModelOptions model;
  serve::ServeOptions serve;
  std::string config_file;
  std::string model_id;  // default: the model file's stem
  int32_t max_n = 8;
  int32_t idle_timeout_s = 60;
  double grace_s = 10;
  EngineConfig engine;
  std::string kv_memory;  // empty: the engine's default
  std::string kv_type = "f16";
};

DType parse_kv_type(const std::string& s) {
  const auto t = dtype_from_name(s);  // the engine refuses types other than f32, f16 and q8_0
  if (!t) throw Error("--kv-type: '" + s + "' is not f32, f16 or q8_0");
  return *t;
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

void run_serve(ServeArgs& a) {
  a.engine.threads = a.model.resolved_threads();
  if (!a.kv_memory.empty()) a.engine.kv_memory_bytes = parse_memory_size(a.kv_memory);
  a.engine.kv_type = parse_kv_type(a.kv_type);
  a.serve.http.idle_timeout = std::chrono::seconds(a.idle_timeout_s);
  a.serve.grace = std::chrono::milliseconds(int64_t(a.grace_s * 1000));
  auto model = a.model.load();
  auto engine = std::make_unique<LlmEngine>(*model, a.engine);
  const int32_t max_context = engine->config().max_context;
  const int32_t context = max_context > 0 ? max_context : model->config().context_length;
  const std::string id = a.model_id.empty() ? std::filesystem::path(model->path()).stem().string() : a.model_id;
  serve::ApiContext ctx(*model, *engine, id, fingerprint(*model),
                        serve::ParamLimits{a.max_n, model->config().vocab_size, context});
  serve::ApiServer server(ctx, a.serve);
  serve::serve_until_signal(server, a.serve, std::cout);
  // The engine goes first: its destructor delivers the final events of what
  // is left, which post into the (stopped) I/O context and end generations
  // registered in ctx, so both must still exist.
  engine.reset();
}

void add_options(CLI::App& cmd, ServeArgs& a) {
  a.model.add_to(cmd);
  cmd.add_option("--config", a.config_file, "JSON file of settings named like the flags (\"port\": 8080, ...)");
  cmd.add_option("--host", a.serve.http.host, "address to listen on")->capture_default_str();
  cmd.add_option("--port", a.serve.http.port, "port to listen on (0: any free port)")->capture_default_str();
  cmd.add_option("--io-threads", a.serve.http.io_threads, "HTTP I/O threads")->capture_default_str()->check(CLI::Range(1, 256));
  cmd.add_option("--max-body-bytes", a.serve.http.max_body_bytes, "largest request body (413 above)")->capture_default_str();
  cmd.add_option("--idle-timeout", a.idle_timeout_s, "seconds before an idle connection is closed")->capture_default_str()->check(CLI::Range(1, 86400));
  cmd.add_option("--shutdown-grace", a.grace_s, "seconds requests in flight get to finish at shutdown")->capture_default_str();
  cmd.add_option("--model-id", a.model_id, "the model name clients use (default: the model file's name)");
  cmd.add_option("--max-n", a.max_n, "most choices (n) per request")->capture_default_str()->check(CLI::Range(1, 128));
  cmd.add_option("--max-running", a.engine.max_running, "sequences decoded together at most")->capture_default_str();
  cmd.add_option("--max-batch-tokens", a.engine.max_batch_tokens, "tokens per engine step")->capture_default_str();
  cmd.add_option("--kv-memory", a.kv_memory, "KV cache pool: bytes, 512M, 2G or 25% of RAM (default: the engine's)");
  cmd.add_option("--kv-type", a.kv_type, "KV cache element type: f32, f16 or q8_0")->capture_default_str();
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
