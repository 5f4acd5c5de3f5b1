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

}  // namespace

void LoraRegistry::add(const std::string& name, const std::string& path, float scale, bool load_now) {
  std::lock_guard lock(mu_);
  if (entries_.count(name)) throw Error("the LoRA adapter '" + name + "' is already loaded");
  Entry e{path, scale, nullptr, 0, 0};
  if (load_now) {
    load(e);
    e.last_use = ++use_clock_;
  }
  entries_.emplace(name, std::move(e));
  if (load_now) evict_over_budget(&entries_.at(name));
}

size_t LoraRegistry::add_dir(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.is_regular_file() && is_adapter_file(f.path())) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) add(f.stem().string(), f.string(), 1.0f, false);
  return files.size();
}

bool LoraRegistry::contains(const std::string& name) const {
  std::lock_guard lock(mu_);
  return entries_.count(name) > 0;
}

std::optional<AdapterUse> LoraRegistry::acquire(const std::string& name) {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(name);
  if (it == entries_.end()) return std::nullopt;
  Entry& e = it->second;
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
  entries_.erase(it);
  return Removal::Removed;
}

std::vector<LoraInfo> LoraRegistry::list() const {
  std::lock_guard lock(mu_);
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
