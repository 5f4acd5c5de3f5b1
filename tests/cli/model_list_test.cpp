// The model list of `parley serve` (src/cli/model_list.h): --model values and
// the per-model flags --chat-template and --fallback-model.
#include "cli/model_list.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace parley {
namespace {

const std::vector<NamedModel> kModels = {{"stories", "models/stories260K.gguf"}, {"qwen", "/m/qwen.gguf"}};

// The error per_model_values throws, or "" when it throws none.
std::string refusal(const std::vector<std::string>& values) {
  try {
    per_model_values(values, kModels, "--chat-template");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelList, ModelValuesAreNamedOrNamedByTheirStem) {
  EXPECT_EQ(parse_model_value("qwen=/m/q.gguf").name, "qwen");
  EXPECT_EQ(parse_model_value("qwen=/m/q.gguf").path, "/m/q.gguf");
  EXPECT_EQ(parse_model_value("/m/q.gguf").name, "q");
  EXPECT_EQ(parse_model_value("./a=b.gguf").path, "./a=b.gguf");  // a '/' before '=': a path
}

TEST(ModelList, PerModelValuesGoToTheirModelAndPlainOnesToTheDefault) {
  const auto values = per_model_values({"qwen=chatml", "t/plain.jinja"}, kModels, "--chat-template");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values.at("qwen"), "chatml");
  EXPECT_EQ(values.at("stories"), "t/plain.jinja");
  EXPECT_EQ(per_model_values({"stories=./x=y.jinja"}, kModels, "--chat-template").at("stories"), "./x=y.jinja");
  EXPECT_TRUE(per_model_values({}, kModels, "--chat-template").empty());
}

TEST(ModelList, PerModelValuesRefuseUnknownModelsAndTwoValuesForOne) {
  const std::string unknown = refusal({"llama=chatml"});
  EXPECT_NE(unknown.find("--chat-template"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("no model is named 'llama'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("stories, qwen"), std::string::npos) << unknown;
  EXPECT_NE(refusal({"a.jinja", "stories=b.jinja"}).find("two values"), std::string::npos);
  EXPECT_NE(refusal({"qwen=a", "qwen=b"}).find("two values"), std::string::npos);
  EXPECT_NE(refusal({"qwen="}).find("no value"), std::string::npos);
}

}  // namespace
}  // namespace parley
