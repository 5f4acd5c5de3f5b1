#include "state/static_answers.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "util/error.h"

namespace parley::state {
namespace {

using Table = std::unordered_map<std::string, std::string>;

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// YAML to JSON, so both formats go through one reader. Scalars stay strings.
nlohmann::json yaml_to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : node) j[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return j;
  }
  if (node.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& item : node) j.push_back(yaml_to_json(item));
    return j;
  }
  if (node.IsScalar()) return node.as<std::string>();
  return nullptr;
}

nlohmann::json read_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("static answers " + path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  try {
    if (has_suffix(path, ".yaml") || has_suffix(path, ".yml")) return yaml_to_json(YAML::Load(text.str()));
    return nlohmann::json::parse(text.str());
  } catch (const std::exception& e) {
    throw Error("static answers " + path + ": " + e.what());
  }
}

Table build_table(const nlohmann::json& doc, const std::string& path) {
  const auto fail = [&](const std::string& what) { throw Error("static answers " + path + ": " + what); };
  if (!doc.is_object() || !doc.contains("answers") || !doc["answers"].is_array())
    fail("expected {\"answers\": [{\"questions\": [...], \"answer\": \"...\"}, ...]}");
  Table table;
  for (size_t i = 0; i < doc["answers"].size(); ++i) {
    const nlohmann::json& entry = doc["answers"][i];
    const std::string where = "answers[" + std::to_string(i) + "]";
    if (!entry.is_object() || !entry.contains("answer") || !entry["answer"].is_string())
      fail(where + ": expected a string 'answer'");
    if (!entry.contains("questions") || !entry["questions"].is_array() || entry["questions"].empty())
      fail(where + ": expected a non-empty list 'questions'");
    for (const auto& q : entry["questions"]) {
      if (!q.is_string()) fail(where + ": every question must be a string");
      const std::string key = normalise_question(q.get<std::string>());
      if (key.empty()) fail(where + ": question '" + q.get<std::string>() + "' is empty after normalisation");
      table[key] = entry["answer"].get<std::string>();
    }
  }
  return table;
}

}  // namespace

StaticAnswers::StaticAnswers(std::string path) : path_(std::move(path)) { reload(); }

std::optional<std::string> StaticAnswers::match(const std::string& question) const {
  std::shared_ptr<const Table> table;
  {
    std::lock_guard lock(mu_);
    table = table_;
  }
  const auto it = table->find(normalise_question(question));
  return it == table->end() ? std::nullopt : std::optional<std::string>(it->second);
}

void StaticAnswers::reload() {
  auto table = std::make_shared<const Table>(build_table(read_document(path_), path_));
  std::lock_guard lock(mu_);
  table_ = std::move(table);
}

size_t StaticAnswers::size() const {
  std::lock_guard lock(mu_);
  return table_->size();
}

}  // namespace parley::state
