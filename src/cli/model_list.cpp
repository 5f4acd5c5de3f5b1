#include "cli/model_list.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "gguf/gguf.h"
#include "util/error.h"

namespace parley {
namespace {

bool is_adapter(const std::filesystem::path& path) {
  try {
    return gguf::File::open(path.string())->get_string("general.type", "") == "adapter";
  } catch (const std::exception&) {
    return false;  // not a readable GGUF: loading it tells what is wrong
  }
}

// "NAME=VALUE" with a NAME (no '/': "dir/a=b" is a path) as {NAME, VALUE}; nullopt for a plain value.
std::optional<NamedModel> split_name(const std::string& value) {
  const size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0 || value.substr(0, eq).find('/') != std::string::npos) return std::nullopt;
  return NamedModel{value.substr(0, eq), value.substr(eq + 1)};
}

}  // namespace

NamedModel parse_model_value(const std::string& value) {
  if (auto named = split_name(value)) return *named;
  return {std::filesystem::path(value).stem().string(), value};
}

std::vector<NamedModel> models_in_dir(const std::string& dir) {
  std::error_code ec;
  std::vector<NamedModel> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::filesystem::path& p = entry.path();
    const std::string ext = p.extension().string();
    if (!entry.is_regular_file() || (ext != ".gguf" && ext != ".bin") || p.stem() == "tokenizer") continue;
    if (ext == ".gguf" && is_adapter(p)) continue;
    out.push_back({p.stem().string(), p.string()});
  }
  if (ec) throw Error("--models-dir: cannot read " + dir + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const NamedModel& a, const NamedModel& b) { return a.name < b.name; });
  return out;
}

void check_unique_names(const std::vector<NamedModel>& models) {
  std::set<std::string> seen;
  for (const NamedModel& m : models)
    if (!seen.insert(m.name).second)
      throw Error("two models are named '" + m.name + "': name them apart with --model NAME=PATH");
}

std::map<std::string, std::string> per_model_values(const std::vector<std::string>& values,
                                                    const std::vector<NamedModel>& models, const std::string& flag) {
  std::map<std::string, std::string> out;
  for (const std::string& v : values) {
    const NamedModel m = split_name(v).value_or(NamedModel{models.at(0).name, v});
    const bool known = std::any_of(models.begin(), models.end(), [&m](const NamedModel& k) { return k.name == m.name; });
    if (!known) {
      std::string names;
      for (const NamedModel& k : models) names += (names.empty() ? "" : ", ") + k.name;
      throw Error(flag + ": no model is named '" + m.name + "' (served: " + names +
                  "; a file whose name has '=' is written ./NAME=...)");
    }
    if (m.path.empty()) throw Error(flag + ": '" + v + "' gives no value for the model '" + m.name + "'");
    if (!out.emplace(m.name, m.path).second) throw Error(flag + ": the model '" + m.name + "' is given two values");
  }
  return out;
}

}  // namespace parley
