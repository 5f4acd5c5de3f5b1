#include "serve/models/served_models.h"

#include <sstream>

#include "serve/api/model_choice.h"
#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

ApiError model_not_found(const std::string& name) {
  return ApiError(404, "The model '" + name + "' does not exist", "invalid_request_error", "model", "model_not_found");
}

// The model a POST's JSON body names ("" when none).
std::string named_model(const HttpRequest& r) {
  if (r.method != "POST" || r.body.empty()) return "";
  const json body = json::parse(r.body, nullptr, false);
  if (!body.is_object()) return "";
  const auto it = body.find("model");
  return it != body.end() && it->is_string() ? it->get<std::string>() : "";
}

// One entry of /v1/models; `ctx` is null while the model is not in memory.
json model_entry(const ModelStatus& m, const ApiContext* ctx) {
  json j = {{"id", m.name}, {"object", "model"}, {"created", ctx ? ctx->created : 0}, {"owned_by", "parley"},
            {"loaded", m.loaded}};
  if (ctx) j["max_model_len"] = ctx->limits.context_length;
  return j;
}

json set_stats(const ModelSetStats& s) {
  return {{"loads", s.loads},           {"load_failures", s.load_failures}, {"load_seconds", s.load_seconds},
          {"last_load_seconds", s.last_load_seconds}, {"waiting", s.waiting}, {"idle_unloads", s.idle_unloads},
          {"evictions", s.evictions}};
}

// The set's own metrics: loads (and their time), requests waiting for one, unloads, which model is in memory.
std::string set_metrics(const ModelSet& set) {
  const ModelSetStats s = set.stats();
  std::ostringstream out;
  const auto family = [&out](const std::string& name, const char* type, const char* help) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  const auto one = [&](const std::string& name, const char* type, const char* help, auto value) {
    family(name, type, help);
    out << name << ' ' << value << '\n';
  };
  one("parley_model_loads_total", "counter", "Models loaded on demand", s.loads);
  one("parley_model_load_failures_total", "counter", "Loads on demand that failed", s.load_failures);
  one("parley_model_load_seconds_total", "counter", "Seconds spent loading models on demand", s.load_seconds);
  one("parley_model_last_load_seconds", "gauge", "Seconds the last load on demand took", s.last_load_seconds);
  one("parley_model_load_waiting", "gauge", "Requests waiting for their model to load", s.waiting);
  one("parley_model_idle_unloads_total", "counter", "Models unloaded after --model-idle-unload", s.idle_unloads);
  one("parley_model_evictions_total", "counter", "Idle models unloaded to make room for another", s.evictions);
  const std::vector<ModelStatus> models = set.models();
  family("parley_model_loaded", "gauge", "1 while the model is in memory");
  for (const ModelStatus& m : models) out << "parley_model_loaded{" << model_label(m.name) << "} " << int(m.loaded) << '\n';
  family("parley_model_resident_bytes", "gauge", "Weight and KV pool bytes of the model, its draft and fallback models included (its estimate before a first load)");
  for (const ModelStatus& m : models) out << "parley_model_resident_bytes{" << model_label(m.name) << "} " << m.bytes << '\n';
  return out.str();
}

}  // namespace

ServedModels::ServedModels(ApiContext& front, ModelSetOptions options, ModelSet::Loader loader)
    : front_(front), set_(options, std::move(loader)) {
  set_.add_pinned(front.model_id, std::make_shared<FrontModel>(front));
}

std::vector<std::pair<std::string, std::shared_ptr<ServedModel>>> ServedModels::loaded_models() const {
  std::vector<std::pair<std::string, std::shared_ptr<ServedModel>>> out;
  for (auto& [name, model] : set_.loaded())
    if (auto served = std::dynamic_pointer_cast<ServedModel>(model)) out.emplace_back(name, std::move(served));
  return out;
}

NamedContexts ServedModels::contexts(const std::vector<std::pair<std::string, std::shared_ptr<ServedModel>>>& loaded) const {
  NamedContexts out{{front_.model_id, &front_}};
  for (const auto& [name, served] : loaded) out.emplace_back(name, &served->context());
  return out;
}

json ServedModels::list() const {
  const auto loaded = loaded_models();
  const NamedContexts named = contexts(loaded);
  json data = json::array();
  for (const ModelStatus& m : set_.models()) {
    const ApiContext* ctx = nullptr;
    for (const auto& [name, c] : named)
      if (name == m.name) ctx = c;
    data.push_back(model_entry(m, ctx));
    if (!ctx) continue;
    const json entries = model_entries(*ctx);  // the base, then its LoRA adapters
    data.insert(data.end(), entries.begin() + 1, entries.end());
  }
  return data;
}

// A name the set does not hold goes to the default model's routes too: its
// check_model answers 404 model_not_found (or finds one of its adapters).
bool ServedModels::is_other(const std::string& name) const {
  return !name.empty() && name != front_.model_id && set_.contains(name);
}

bool ServedModels::acquire(const std::string& name, Ready ready) {
  if (!is_other(name)) return false;
  require_ready(front_);
  set_.acquire(name, [ready = std::move(ready)](std::shared_ptr<ModelLease> lease, const std::string& error) {
    if (!lease) return ready(nullptr, nullptr, error);
    ApiContext& ctx = static_cast<ServedModel&>(lease->model()).context();
    ready(&ctx, std::move(lease), "");
  });
  return true;
}

bool ServedModels::dispatch(const Router& router, const ExchangePtr& ex, Access access) {
  const std::string name = access == Access::Public ? "" : named_model(ex->request());
  if (!is_other(name)) return true;
  require_ready(front_);
  // The load runs on the set's thread; the request goes on on its connection's strand.
  set_.acquire(name, [ex, &router](std::shared_ptr<ModelLease> lease, const std::string& error) {
    ex->post([ex, &router, lease = std::move(lease), error] {
      if (!lease) {
        const std::string path(ex->request().path());
        return answer_error(ex, ApiError(503, error, "server_error", "model", "model_unavailable"),
                            [&router, path](const ApiError& e) { return router.render_error(path, e); });
      }
      ex->hold(lease);  // the model stays until the answer is over
      static_cast<const ServedModel&>(lease->model()).router().dispatch(ex);
    });
  });
  return false;
}

void ServedModels::add_routes(Router& router) {
  router.use([this, &router](const ExchangePtr& ex, Access access) { return dispatch(router, ex, access); });
  router.add("GET", "/v1/models", Access::Key, [this](const ExchangePtr& ex, const PathParams&) {
    ex->respond(json_response(200, {{"object", "list"}, {"data", list()}}));
  });
  router.add("GET", "/v1/models/{id}", Access::Key, [this](const ExchangePtr& ex, const PathParams& params) {
    for (const json& m : list())
      if (m["id"] == params.at("id")) return ex->respond(json_response(200, m));
    throw model_not_found(params.at("id"));
  });
  router.add("GET", "/v1/stats", Access::Public, [this](const ExchangePtr& ex, const PathParams&) {
    json out = stats_json(front_);
    out["model_set"] = set_stats(set_.stats());
    out["models"] = json::object();
    const auto loaded = loaded_models();
    for (const auto& [name, ctx] : contexts(loaded)) out["models"][name] = stats_json(*ctx);
    for (const json& m : list())
      out["models"][m["id"].get<std::string>()]["loaded"] = m["loaded"];
    ex->respond(json_response(200, out));
  });
  router.add("GET", "/metrics", Access::Public, [this](const ExchangePtr& ex, const PathParams&) {
    const auto loaded = loaded_models();
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = prometheus_text(contexts(loaded)) + set_metrics(set_);
    ex->respond(std::move(r));
  });
}

void ServedModels::start_draining() {
  for (auto& [name, served] : loaded_models()) served->context().state.draining = true;
}

bool ServedModels::idle() const {
  for (const auto& [name, served] : loaded_models())
    if (served->context().generations.size() > 0) return false;
  return true;
}

void ServedModels::cancel_all() {
  for (auto& [name, served] : loaded_models()) served->context().generations.cancel_all();
}

}  // namespace parley::serve
