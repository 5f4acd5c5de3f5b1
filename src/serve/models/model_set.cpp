#include "serve/models/model_set.h"

#include <algorithm>
#include <exception>

namespace parley::serve {
namespace {

// How often the loader looks for idle models: a quarter of the idle time, within 10 ms and 1 s.
std::chrono::milliseconds idle_check_period(std::chrono::milliseconds idle) {
  using namespace std::chrono_literals;
  return idle.count() > 0 ? std::clamp(idle / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(1000)) : 1000ms;
}

}  // namespace

ModelLease::~ModelLease() {
  // Let go of the model first: the set, holding it while a lease runs, then
  // has the last reference, so the model (its engine) ends on the set's
  // thread, never on the thread that drops the lease (maybe its own engine's).
  model_.reset();
  std::lock_guard lock(to_->mu);
  if (to_->set) to_->set->release(index_);
}

ModelSet::ModelSet(ModelSetOptions options, Loader loader)
    : options_(options), loader_(std::move(loader)), thread_([this] { run_loader(); }) {
  lease_return_->set = this;
}

ModelSet::~ModelSet() {
  {
    std::lock_guard lock(lease_return_->mu);
    lease_return_->set = nullptr;
  }
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ModelSet::add(const std::string& name, uint64_t estimated_bytes) {
  std::lock_guard lock(mu_);
  Entry& e = entries_.emplace_back();
  e.name = name;
  e.bytes = estimated_bytes;
}

void ModelSet::add_pinned(const std::string& name, std::shared_ptr<ResidentModel> model) {
  std::lock_guard lock(mu_);
  Entry& e = entries_.emplace_back();
  e.name = name;
  e.bytes = model->bytes();
  e.pinned = true;
  e.model = std::move(model);
  e.loads = 1;
  e.last_used = Clock::now();
}

size_t ModelSet::index_of(const std::string& name) const {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].name == name) return i;
  return entries_.size();
}

bool ModelSet::contains(const std::string& name) const {
  std::lock_guard lock(mu_);
  return index_of(name) < entries_.size();
}

void ModelSet::acquire(const std::string& name, Ready ready) {
  std::unique_lock lock(mu_);
  const size_t i = index_of(name);
  if (i == entries_.size()) {
    lock.unlock();
    return ready(nullptr, "no model named '" + name + "'");
  }
  Entry& e = entries_[i];
  if (e.model) {
    ++e.running;
    e.last_used = Clock::now();
    auto lease = std::make_shared<ModelLease>(lease_return_, i, e.model);
    lock.unlock();
    return ready(std::move(lease), "");
  }
  if (e.waiters.empty()) queue_.push_back(i);
  e.waiters.push_back(std::move(ready));
  ++stats_.waiting;
  lock.unlock();
  wake_.notify_all();
}

void ModelSet::release(size_t index) {
  {
    std::lock_guard lock(mu_);
    Entry& e = entries_[index];
    --e.running;
    e.last_used = Clock::now();
    ++releases_;
  }
  wake_.notify_all();
}

std::vector<ModelStatus> ModelSet::models() const {
  std::lock_guard lock(mu_);
  std::vector<ModelStatus> out;
  for (const Entry& e : entries_) out.push_back({e.name, bool(e.model), e.pinned, e.running, e.bytes, e.loads});
  return out;
}

ModelSetStats ModelSet::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<std::pair<std::string, std::shared_ptr<ResidentModel>>> ModelSet::loaded() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, std::shared_ptr<ResidentModel>>> out;
  for (const Entry& e : entries_)
    if (e.model) out.emplace_back(e.name, e.model);
  return out;
}

void ModelSet::run_loader() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    std::vector<std::shared_ptr<ResidentModel>> gone;
    take_idle(gone);
    const bool may_load = !queue_.empty() && !(blocked_ && releases_ == blocked_at_);
    const size_t next = may_load ? queue_.front() : 0;
    const Room room = may_load ? make_room(entries_[next], gone) : Room::Wait;
    if (may_load) {
      blocked_ = room == Room::Wait;
      blocked_at_ = releases_;
    }
    // The models that go are destroyed (their engines stopped) unlocked and
    // before another loads; then all is looked at again (requests may have come).
    if (!gone.empty()) {
      lock.unlock();
      gone.clear();
      lock.lock();
      continue;
    }
    if (may_load && room != Room::Wait) {
      queue_.pop_front();
      if (room == Room::Never)
        fail(lock, next, "the model '" + entries_[next].name +
                             "' does not fit beside the models that stay loaded (--max-models, --models-memory)");
      else
        load(lock, next);
      continue;
    }
    if (!stop_) wake_.wait_for(lock, idle_check_period(options_.idle_unload));
  }
}

void ModelSet::take_idle(std::vector<std::shared_ptr<ResidentModel>>& out) {
  if (options_.idle_unload.count() <= 0) return;
  const auto now = Clock::now();
  for (Entry& e : entries_)
    if (e.model && !e.pinned && e.running == 0 && now - e.last_used >= options_.idle_unload) {
      out.push_back(std::move(e.model));
      e.model.reset();
      ++stats_.idle_unloads;
    }
}

ModelSet::Room ModelSet::make_room(const Entry& e, std::vector<std::shared_ptr<ResidentModel>>& out) {
  size_t count = 1;
  uint64_t bytes = e.bytes;
  uint64_t busy_bytes = 0;
  size_t busy = 0;
  std::vector<Entry*> idle;  // evictable, least recently used first
  for (Entry& x : entries_) {
    if (!x.model || &x == &e) continue;
    ++count;
    bytes += x.bytes;
    if (x.pinned) continue;
    if (x.running > 0) {
      ++busy;
      busy_bytes += x.bytes;
    } else {
      idle.push_back(&x);
    }
  }
  std::sort(idle.begin(), idle.end(), [](const Entry* a, const Entry* b) { return a->last_used < b->last_used; });
  const auto fits = [this](size_t n, uint64_t b) {
    return (options_.max_models == 0 || n <= options_.max_models) && (options_.memory_bytes == 0 || b <= options_.memory_bytes);
  };
  size_t evict = 0;
  for (; evict < idle.size() && !fits(count, bytes); ++evict) {
    --count;
    bytes -= idle[evict]->bytes;
  }
  if (!fits(count, bytes)) return fits(count - busy, bytes - busy_bytes) ? Room::Wait : Room::Never;
  for (size_t k = 0; k < evict; ++k) {
    out.push_back(std::move(idle[k]->model));
    idle[k]->model.reset();
    ++stats_.evictions;
  }
  return Room::Made;
}

void ModelSet::load(std::unique_lock<std::mutex>& lock, size_t index) {
  const std::string name = entries_[index].name;
  lock.unlock();
  const auto start = Clock::now();
  std::shared_ptr<ResidentModel> model;
  std::string error;
  try {
    model = loader_(name);
  } catch (const std::exception& ex) {
    error = ex.what();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  lock.lock();
  if (!model) {
    ++stats_.load_failures;
    return fail(lock, index, "loading the model '" + name + "' failed: " + error);
  }
  Entry& e = entries_[index];
  e.model = model;
  e.bytes = model->bytes();
  e.last_used = Clock::now();
  ++e.loads;
  ++stats_.loads;
  stats_.load_seconds += seconds;
  stats_.last_load_seconds = seconds;
  std::vector<Ready> waiters = std::move(e.waiters);
  e.waiters.clear();
  stats_.waiting -= int64_t(waiters.size());
  std::vector<std::shared_ptr<ModelLease>> leases;
  for (size_t k = 0; k < waiters.size(); ++k) {
    ++e.running;
    leases.push_back(std::make_shared<ModelLease>(lease_return_, index, model));
  }
  // Loaded, it may be larger than the estimate that fitted: idle models make up the difference.
  std::vector<std::shared_ptr<ResidentModel>> gone;
  make_room(e, gone);
  lock.unlock();
  for (size_t k = 0; k < waiters.size(); ++k) waiters[k](std::move(leases[k]), "");
  waiters.clear();  // what the callbacks hold goes before the lock is taken again
  gone.clear();
  lock.lock();
}

void ModelSet::fail(std::unique_lock<std::mutex>& lock, size_t index, const std::string& error) {
  std::vector<Ready> waiters = std::move(entries_[index].waiters);
  entries_[index].waiters.clear();
  stats_.waiting -= int64_t(waiters.size());
  lock.unlock();
  for (Ready& w : waiters) w(nullptr, error);
  waiters.clear();
  lock.lock();
}

}  // namespace parley::serve
