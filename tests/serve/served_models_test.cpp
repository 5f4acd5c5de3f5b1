// ServedModels: a POST naming another model reaches that model's routes once
// it is loaded and holds it (a lease) while the exchange lives; the default
// model answers what names it or no model; unknown names are 404.
#include "serve/models/served_models.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "engine/engine_limits.h"
#include "fake_exchange.h"
#include "serve/routes/routes.h"

namespace parley::serve {
namespace {

using namespace std::chrono_literals;

const std::string kModelPath = std::string(PARLEY_SOURCE_DIR) + "/models/stories260K.gguf";

EngineConfig small_engine() {
  EngineConfig c;
  c.threads = 1;
  c.kv_memory_bytes = 4 << 20;
  return c;
}

std::unique_ptr<ApiContext> context_for(const Model& m, LlmEngine& e, const std::string& id) {
  auto ctx = std::make_unique<ApiContext>(m, e, id, "fp_test", ParamLimits{1, m.config().vocab_size, 512, false});
  ctx->state.ready = true;
  return ctx;
}

// A FakeExchange whose complete response fulfils `answered` (it may come from the engine's thread).
class AwaitedExchange : public test::FakeExchange {
 public:
  explicit AwaitedExchange(const std::string& body) : FakeExchange(request(body)) {}
  void respond(HttpResponse r) override {
    FakeExchange::respond(std::move(r));
    answered.set_value();
  }
  std::promise<void> answered;

 private:
  static HttpRequest request(const std::string& body) {
    HttpRequest r;
    r.method = "POST";
    r.target = "/v1/completions";
    r.body = body;
    return r;
  }
};

ModelStatus status_of(const ServedModels& models, const std::string& name) {
  for (const ModelStatus& m : models.set().models())
    if (m.name == name) return m;
  ADD_FAILURE() << "no model " << name;
  return {};
}

class ServedModelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Model::load(kModelPath);
    engine_ = std::make_unique<LlmEngine>(*model_, small_engine());
    front_ = context_for(*model_, *engine_, "front");
    front_->log.set_level(obs::LogLevel::Off);  // the loaded model's too (share_protection)
    models_ = std::make_unique<ServedModels>(*front_, ModelSetOptions{}, [this](const std::string& name) {
      auto m = Model::load(kModelPath);
      auto e = std::make_unique<LlmEngine>(*m, small_engine());
      auto ctx = context_for(*m, *e, name);
      share_protection(*front_, *ctx);
      return std::make_shared<ServedModel>(std::move(m), std::move(e), std::move(ctx));
    });
    models_->add("other", 1 << 20);
    models_->add_routes(router_);
    add_openai_routes(router_, *front_);
  }
  void TearDown() override {
    models_.reset();
    engine_.reset();
  }

  // Dispatches a completion naming `model` ("" = none) and waits for its answer.
  std::shared_ptr<AwaitedExchange> complete(const std::string& model) {
    json body = {{"prompt", "Once upon a time"}, {"max_tokens", 3}, {"temperature", 0}};
    if (!model.empty()) body["model"] = model;
    auto ex = std::make_shared<AwaitedExchange>(body.dump());
    auto answered = ex->answered.get_future();
    router_.dispatch(ex);
    EXPECT_EQ(answered.wait_for(60s), std::future_status::ready);
    return ex;
  }

  std::unique_ptr<Model> model_;
  std::unique_ptr<LlmEngine> engine_;
  std::unique_ptr<ApiContext> front_;
  std::unique_ptr<ServedModels> models_;
  Router router_;
};

// What --models-memory counts: weights and KV pool, and a fallback model's
// weights and KV pool with the model it serves.
TEST(ResidentBytes, CountsTheFallbackModel) {
  const auto model = Model::load(kModelPath);
  LlmEngine engine(*model, small_engine());
  auto ctx = context_for(*model, engine, "m");
  const KvLayout kv = kv_layout(model->config(), engine.config());
  const uint64_t alone = resident_bytes(*ctx);
  EXPECT_EQ(alone, model->weight_bytes() + kv.block_bytes * uint64_t(kv.n_blocks));
  FallbackModel fallback(kModelPath, *ctx, small_engine());
  EXPECT_EQ(resident_bytes(*ctx), 2 * alone);  // the same file and KV budget again
}

TEST_F(ServedModelsTest, AnUnknownModelIs404) {
  auto ex = test::fake("POST", "/v1/completions", R"({"model": "nope", "prompt": "a"})");
  router_.dispatch(ex);
  EXPECT_EQ(ex->response.status, 404);
  EXPECT_NE(ex->response.body.find("model_not_found"), std::string::npos) << ex->response.body;
}

TEST_F(ServedModelsTest, TheDefaultModelAnswersWhatNamesItOrNoModel) {
  for (const std::string name : {"front", ""}) {
    auto ex = complete(name);
    EXPECT_EQ(ex->response.status, 200);
    EXPECT_EQ(json::parse(ex->response.body)["model"], "front");
  }
  EXPECT_FALSE(status_of(*models_, "other").loaded);
}

TEST_F(ServedModelsTest, ANamedModelLoadsAnswersAndStaysWhileItsExchangeLives) {
  auto ex = complete("other");
  ASSERT_EQ(ex->response.status, 200) << ex->response.body;
  EXPECT_EQ(json::parse(ex->response.body)["model"], "other");
  EXPECT_TRUE(status_of(*models_, "other").loaded);
  EXPECT_EQ(status_of(*models_, "other").running, 1);  // `ex` holds its lease
  auto list = test::fake("GET", "/v1/models");
  router_.dispatch(list);
  const json data = json::parse(list->response.body)["data"];
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[1]["id"], "other");
  EXPECT_EQ(data[1]["loaded"], true);
  ex.reset();
  for (int i = 0; i < 3000 && status_of(*models_, "other").running > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(status_of(*models_, "other").running, 0);
  EXPECT_EQ(models_->set().stats().loads, 1u);
}

}  // namespace
}  // namespace parley::serve
