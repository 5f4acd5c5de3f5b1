// The Jinja interpreter against real Jinja2 configured as transformers
// configures it: small snippets pinning the language's semantics, and real
// chat templates on fixed conversations. data/templates/make_expected.py
// recorded the expected outputs.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "../tokenizer/test_data.h"
#include "chat/chat_template.h"
#include "chat/jinja.h"
#include "util/error.h"

namespace parley::chat {
namespace {

using nlohmann::json;

std::string templates_dir() { return std::string(PARLEY_SOURCE_DIR) + "/tests/chat/data/templates/"; }

const json& load(const std::string& name) {
  static std::map<std::string, json> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, json::parse(test::read_file(templates_dir() + name))).first;
  return it->second;
}

const json& snippets() { return load("snippets.json"); }
const json& expected() { return load("expected.json"); }

jinja::Value to_value(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return jinja::Value::none();
    case json::value_t::boolean:
      return jinja::Value::boolean(j.get<bool>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return jinja::Value::integer(j.get<int64_t>());
    case json::value_t::number_float:
      return jinja::Value::number(j.get<double>());
    case json::value_t::string:
      return jinja::Value::string(j.get<std::string>());
    case json::value_t::array: {
      jinja::List items;
      for (const json& x : j) items.push_back(to_value(x));
      return jinja::Value::list(std::move(items));
    }
    default: {
      auto d = std::make_shared<jinja::Dict>();
      for (const auto& [k, v] : j.items()) d->set(k, to_value(v));
      return jinja::Value::dict(std::move(d));
    }
  }
}

class Snippets : public ::testing::TestWithParam<size_t> {};

TEST_P(Snippets, RenderAsJinja2Does) {
  const json& c = snippets().at(GetParam());
  const std::string source = c["template"];
  SCOPED_TRACE("template: " + source);
  const jinja::Value vars = to_value(c["variables"]);
  if (c.contains("output")) {
    EXPECT_EQ(jinja::Template(source).render(vars.as_dict()).str(), c["output"].get<std::string>());
  } else {  // Jinja2 failed, at parse or render time
    SCOPED_TRACE("Jinja2: " + c["error"].get<std::string>());
    EXPECT_THROW(jinja::Template(source).render(vars.as_dict()), Error);
  }
}

INSTANTIATE_TEST_SUITE_P(Jinja2, Snippets, ::testing::Range<size_t>(0, snippets().size()));

std::vector<std::string> template_names() {
  std::vector<std::string> names;
  for (const auto& [name, _] : expected()["templates"].items()) names.push_back(name);
  return names;
}

std::vector<ChatMessage> conversation(const std::string& name) {
  std::vector<ChatMessage> msgs;
  for (const json& m : expected()["conversations"][name]) msgs.push_back({m["role"], m["content"]});
  return msgs;
}

class RealTemplates : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTemplates, RenderAsTransformersDoes) {
  const json& t = expected()["templates"][GetParam()];
  const std::string source = test::read_file(templates_dir() + GetParam() + ".jinja");
  ASSERT_FALSE(source.empty());
  const std::string bos = t["bos_token"], eos = t["eos_token"];
  for (const json& r : t["renders"]) {
    const bool add_generation_prompt = r["add_generation_prompt"];
    SCOPED_TRACE(r["conversation"].get<std::string>() + (add_generation_prompt ? " + generation prompt" : ""));
    const std::vector<ChatMessage> msgs = conversation(r["conversation"]);
    if (r.contains("output")) {
      EXPECT_EQ(apply_chat_template(source, msgs, add_generation_prompt, bos, eos), r["output"].get<std::string>());
    } else {  // the template raises, e.g. Gemma on a system message
      try {
        apply_chat_template(source, msgs, add_generation_prompt, bos, eos);
        ADD_FAILURE() << "expected the template to raise: " << r["error"];
      } catch (const Error& e) {
        const std::string raised = r["error"].get<std::string>();
        EXPECT_NE(std::string(e.what()).find(raised.substr(raised.find(": ") + 2)), std::string::npos) << e.what();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Templates, RealTemplates, ::testing::ValuesIn(template_names()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
});

}  // namespace
}  // namespace parley::chat
