#include "serve/adapters/lora_registry.h"

#include <algorithm>
#include <filesystem>

#include "gguf/gguf.h"
#include "util/error.h"

namespace parley::serve {
namespace {

bool is_adapter_file(const std::filesystem::path& p) {
  if (p.extension() != ".gguf") return false;
  try {
    return gguf::File::open(p.string())->get_string("general.type", "") == "adapter";
  } catch (const Error&) {
    return false;  // not a GGUF file: not listed
  }
}

// A request's name as a file of the directory; nullopt for a name no file there can have.
std::optional<std::filesystem::path> dir_file(const std::string& dir, const std::string& name) {
  if (dir.empty() || name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos)
    return std::nullopt;
  return std::filesystem::path(dir) / (name + ".gguf");
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

void LoraRegistry::add(const std::string& name, const std::string& path, float scale, bool load_now) {
  std::lock_guard lock(mu_);
  if (entries_.count(name)) throw Error("the LoRA adapter '" + name + "' is already loaded");
  Entry e{path, scale, nullptr, 0, 0, false};
  if (load_now) {
    load(e);
    e.last_use = ++use_clock_;
  }
  entries_.emplace(name, std::move(e));
  withdrawn_.erase(name);
  if (load_now) evict_over_budget(&entries_.at(name));
}

size_t LoraRegistry::add_dir(const std::string& dir) {
  std::lock_guard lock(mu_);
  for (const auto& f : std::filesystem::directory_iterator(dir))  // throws when it cannot be read
    if (entries_.count(f.path().stem().string()) && is_adapter_file(f.path()))
      throw Error("the LoRA adapter '" + f.path().stem().string() + "' is already loaded");
  dir_ = dir;
  rescan();
  size_t n = 0;
  for (const auto& [name, e] : entries_) n += e.from_dir;
  return n;
}

bool LoraRegistry::offer_from_dir(const std::string& name, const std::string& path) {
  if (entries_.count(name) || withdrawn_.count(name)) return false;
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(path, ec);
  if (ec) return false;
  if (const auto it = not_adapters_.find(path); it != not_adapters_.end() && it->second == written) return false;
  if (!is_adapter_file(path)) {
    not_adapters_[path] = written;  // not opened again until it changes
    return false;
  }
  Entry e{path, 1.0f, nullptr, 0, 0, true};
  entries_.emplace(name, std::move(e));
  return true;
}

void LoraRegistry::rescan() {
  if (dir_.empty()) return;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir_, ec))
    if (f.is_regular_file(ec) && f.path().extension() == ".gguf") offer_from_dir(f.path().stem().string(), f.path().string());
  std::erase_if(entries_, [](const auto& item) {
    const Entry& e = item.second;
    return e.from_dir && !e.adapter && !file_exists(e.path);
  });
}

LoraRegistry::Entry* LoraRegistry::find(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    const auto file = dir_file(dir_, name);
    if (!file || !offer_from_dir(name, file->string())) return nullptr;
    it = entries_.find(name);
  }
  Entry& e = it->second;
  if (e.from_dir && !e.adapter && !file_exists(e.path)) {
    entries_.erase(it);
    return nullptr;
  }
  return &e;
}

bool LoraRegistry::contains(const std::string& name) {
  std::lock_guard lock(mu_);
  return find(name) != nullptr;
}

std::optional<AdapterUse> LoraRegistry::acquire(const std::string& name) {
  std::lock_guard lock(mu_);
  Entry* found = find(name);
  if (!found) return std::nullopt;
  Entry& e = *found;
  if (!e.adapter) {
    load(e);
    evict_over_budget(&e);
  }
  e.last_use = ++use_clock_;
  ++e.requests;
  return AdapterUse{e.adapter, e.scale};
}

LoraRegistry::Removal LoraRegistry::remove(const std::string& name) {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(name);
  if (it == entries_.end()) return Removal::Unknown;
  if (in_use(it->second)) return Removal::InUse;
  if (it->second.adapter) loaded_bytes_ -= it->second.adapter->bytes();
  if (it->second.from_dir) withdrawn_.insert(name);
  entries_.erase(it);
  return Removal::Removed;
}

std::vector<LoraInfo> LoraRegistry::list() {
  std::lock_guard lock(mu_);
  rescan();
  std::vector<LoraInfo> out;
  for (const auto& [name, e] : entries_)
    out.push_back({name, e.path, e.scale, e.adapter != nullptr, e.adapter ? e.adapter->bytes() : 0, e.requests});
  std::sort(out.begin(), out.end(), [](const LoraInfo& a, const LoraInfo& b) { return a.name < b.name; });
  return out;
}

LoraCounters LoraRegistry::counters() const {
  std::lock_guard lock(mu_);
  uint64_t loaded = 0;
  for (const auto& [name, e] : entries_) loaded += e.adapter != nullptr;
  return {loads_, evictions_, loaded, loaded_bytes_};
}

void LoraRegistry::load(Entry& e) {
  e.adapter = LoraAdapter::load(e.path, base_);
  loaded_bytes_ += e.adapter->bytes();
  ++loads_;
}

// Least recently used first, skipping `keep` (just loaded) and adapters in use.
void LoraRegistry::evict_over_budget(const Entry* keep) {
  while (budget_ > 0 && loaded_bytes_ > budget_) {
    Entry* victim = nullptr;
    for (auto& [name, e] : entries_)
      if (&e != keep && e.adapter && !in_use(e) && (!victim || e.last_use < victim->last_use)) victim = &e;
    if (!victim) return;
    loaded_bytes_ -= victim->adapter->bytes();
    victim->adapter.reset();
    ++evictions_;
  }
}

}  // namespace parley::serve
