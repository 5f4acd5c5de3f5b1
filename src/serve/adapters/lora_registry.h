#pragma once
// The LoRA adapters a server offers by name (parley serve --lora, --lora-dir
// and the admin routes): each known by its file and scale, loaded on first
// use, and kept in memory in least-recently-used order under a byte budget.
// An adapter held by a request (its shared_ptr has owners besides the
// registry) is never evicted: while every loaded adapter is in use a load may
// pass the budget, and the excess goes at the next load. Thread-safe; a load
// runs under the registry's lock (a few milliseconds for small adapters).
// The --lora-dir directory is looked at again as requests name adapters: a
// file added later is offered (found when named, listed by list()); a file
// removed is no longer offered once its adapter is not in memory.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/lora.h"
#include "model/model.h"

namespace parley::serve {

// One adapter as /v1/models and /metrics show it.
struct LoraInfo {
  std::string name, path;
  float scale = 1.0f;
  bool loaded = false;
  uint64_t bytes = 0;     // while loaded
  uint64_t requests = 0;  // acquisitions since the server started
};

struct LoraCounters {
  uint64_t loads = 0, evictions = 0;  // since the server started
  uint64_t loaded = 0, bytes = 0;     // now
};

// An adapter for a request, at its scale (the request may override it).
struct AdapterUse {
  std::shared_ptr<const LoraAdapter> adapter;
  float scale = 1.0f;
};

class LoraRegistry {
 public:
  // `budget`: bytes of loaded adapters kept (0: no limit).
  LoraRegistry(const Model& base, uint64_t budget) : base_(base), budget_(budget) {}

  // Offers the adapter at `path` as `name`, loading it now when `load_now`.
  // Throws parley::Error for a name already offered or, when loading, with
  // the loader's reason (another base model, a truncated file, ...).
  void add(const std::string& name, const std::string& path, float scale, bool load_now);
  // Offers every GGUF adapter file (*.gguf with general.type "adapter") in
  // `dir` under its file stem, loaded on first use, and the files added there
  // later (one directory). Returns how many there are now.
  size_t add_dir(const std::string& dir);

  // Whether `name` is offered: known, or an adapter file of the directory now.
  bool contains(const std::string& name);
  // The adapter `name`, loaded if it is not; nullopt for a name not offered.
  // Throws parley::Error when its file fails to load.
  std::optional<AdapterUse> acquire(const std::string& name);

  enum class Removal { Removed, Unknown, InUse };
  // Stops offering `name` and frees it, unless a request holds it. A
  // directory's adapter stays withdrawn until add() offers the name again.
  Removal remove(const std::string& name);

  std::vector<LoraInfo> list();  // by name, after a look at the directory
  LoraCounters counters() const;
  uint64_t budget() const { return budget_; }

 private:
  struct Entry {
    std::string path;
    float scale = 1.0f;
    std::shared_ptr<const LoraAdapter> adapter;  // null while not loaded
    uint64_t last_use = 0;                       // use_clock_ at its last acquisition
    uint64_t requests = 0;
    bool from_dir = false;  // found in the directory: gone with its file while not loaded
  };
  // The entry offered as `name` (null: none), looking in the directory for a name not known.
  Entry* find(const std::string& name);
  // Adds the directory's new adapter files; drops entries whose file went while not loaded.
  void rescan();
  bool offer_from_dir(const std::string& name, const std::string& path);
  void load(Entry& e);
  void evict_over_budget(const Entry* keep);
  static bool in_use(const Entry& e) { return e.adapter && e.adapter.use_count() > 1; }

  const Model& base_;
  const uint64_t budget_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  std::string dir_;                 // --lora-dir ("": none)
  std::set<std::string> withdrawn_;  // directory adapters remove() took away
  std::map<std::string, std::filesystem::file_time_type> not_adapters_;  // other *.gguf files there, as last seen
  uint64_t use_clock_ = 0, loaded_bytes_ = 0, loads_ = 0, evictions_ = 0;
};

}  // namespace parley::serve
