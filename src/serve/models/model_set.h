#pragma once
// The models of a multi-model server (docs/api.md, "Several models"): which
// are in memory, loading one on demand (once, however many requests wait for
// it, on a loader thread of its own), unloading one idle for
// `idle_unload`, and evicting the least recently used idle model when
// another needs room under `max_models` or `memory_bytes`. A model with a
// running request (a ModelLease) is never unloaded: a load that needs its
// room waits until it is idle. Generic over what a loaded model is
// (ResidentModel), so the policy is tested without engines.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace parley::serve {

struct ModelSetOptions {
  size_t max_models = 0;                     // most models in memory at once; 0 = any
  uint64_t memory_bytes = 0;                 // budget over the loaded models' bytes(); 0 = any
  std::chrono::milliseconds idle_unload{0};  // unload after this long without a request; 0 = never
};

class ResidentModel {
 public:
  virtual ~ResidentModel() = default;
  virtual uint64_t bytes() const = 0;  // what it holds in memory (weights and KV pool)
};

class ModelSet;

// Where leases go back to: the set, until it is destroyed (a lease may
// outlive it at shutdown, held by a request object not yet freed).
struct LeaseReturn {
  std::mutex mu;
  ModelSet* set = nullptr;
};

// A request's hold on a loaded model: the model stays while a lease exists.
class ModelLease {
 public:
  ModelLease(std::shared_ptr<LeaseReturn> to, size_t index, std::shared_ptr<ResidentModel> model)
      : to_(std::move(to)), index_(index), model_(std::move(model)) {}
  ~ModelLease();
  ModelLease(const ModelLease&) = delete;
  ModelLease& operator=(const ModelLease&) = delete;
  ResidentModel& model() const { return *model_; }

 private:
  std::shared_ptr<LeaseReturn> to_;
  size_t index_;
  std::shared_ptr<ResidentModel> model_;
};

struct ModelStatus {
  std::string name;
  bool loaded = false;
  bool pinned = false;   // loaded at start and never unloaded
  int64_t running = 0;   // leases held
  uint64_t bytes = 0;    // in memory; before its first load, the estimate it was added with
  uint64_t loads = 0;
};

struct ModelSetStats {
  uint64_t loads = 0, load_failures = 0;
  uint64_t idle_unloads = 0, evictions = 0;  // unloaded after idle_unload; to make room for another
  double load_seconds = 0;                   // all loads together
  double last_load_seconds = 0;
  int64_t waiting = 0;                       // requests waiting for a load now
};

class ModelSet {
 public:
  // Loads a model by name; throws (std::exception) when it cannot.
  using Loader = std::function<std::shared_ptr<ResidentModel>(const std::string& name)>;
  // A lease, or null and why not.
  using Ready = std::function<void(std::shared_ptr<ModelLease> lease, const std::string& error)>;

  ModelSet(ModelSetOptions options, Loader loader);
  ~ModelSet();  // stops the loader thread; the models go with the set but for those leases still hold
  ModelSet(const ModelSet&) = delete;
  ModelSet& operator=(const ModelSet&) = delete;

  // A model loaded on demand; `estimated_bytes` counts against memory_bytes until its first load.
  void add(const std::string& name, uint64_t estimated_bytes);
  // A model already in memory that stays there (it still counts against the limits).
  void add_pinned(const std::string& name, std::shared_ptr<ResidentModel> model);
  bool contains(const std::string& name) const;

  // `ready` runs at once when `name` (which must be contained) is in memory,
  // else on the loader thread when it is loaded or failed to load.
  void acquire(const std::string& name, Ready ready);
  std::vector<ModelStatus> models() const;  // in the order added
  ModelSetStats stats() const;
  // The loaded models by name (what shutdown drains, what metrics show); holds no lease.
  std::vector<std::pair<std::string, std::shared_ptr<ResidentModel>>> loaded() const;

 private:
  friend class ModelLease;
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::string name;
    uint64_t bytes = 0;
    bool pinned = false;
    std::shared_ptr<ResidentModel> model;  // null: not in memory
    int64_t running = 0;
    uint64_t loads = 0;
    Clock::time_point last_used;
    std::vector<Ready> waiters;  // not empty: queued for loading
  };
  enum class Room { Made, Wait, Never };

  size_t index_of(const std::string& name) const;  // entries_.size() when absent
  void release(size_t index);
  void run_loader();
  // Moves the idle models past idle_unload into `out`.
  void take_idle(std::vector<std::shared_ptr<ResidentModel>>& out);
  // Moves the least recently used idle models into `out` until `e` fits.
  Room make_room(const Entry& e, std::vector<std::shared_ptr<ResidentModel>>& out);
  void load(std::unique_lock<std::mutex>& lock, size_t index);
  void fail(std::unique_lock<std::mutex>& lock, size_t index, const std::string& error);

  const ModelSetOptions options_;
  const Loader loader_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Entry> entries_;  // a deque: ModelLease and the loader keep indices
  std::deque<size_t> queue_;   // entries to load, in the order first asked
  uint64_t releases_ = 0;      // leases released so far: a Room::Wait waits for the next one
  uint64_t blocked_at_ = 0;    // releases_ when the front of the queue had to wait
  bool blocked_ = false;
  bool stop_ = false;
  ModelSetStats stats_;
  std::shared_ptr<LeaseReturn> lease_return_ = std::make_shared<LeaseReturn>();
  std::thread thread_;  // last: starts when everything above exists
};

}  // namespace parley::serve
