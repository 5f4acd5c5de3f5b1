#pragma once
// Caps on open connections, in total and per client address, and the choice
// of the idle connection that gives its place up to a new one when the total
// cap is reached (docs/security.md, "Connection limits"). An HTTP connection
// and the WebSocket it becomes hold one place. Thread-safe.
#include <boost/asio/ip/address.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace parley::serve {

class ConnectionLimiter;

// One connection's place, held for its life; its methods run on the connection's strand.
class ConnectionSlot {
 public:
  ~ConnectionSlot();  // gives the place back
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;

  // The connection waits for a request (again): it may be evicted, the
  // longest-idle first. `evict` is then called once, from any thread, maybe
  // after this slot is gone: it must post to the connection's strand and hold
  // the connection weakly. False: the connection must close now instead
  // (evicted already, or it leaves at the drain and the server drains).
  bool idle(std::function<void()> evict);
  void busy();  // a request is in progress: not evictable
  // The connection closes when the server drains, as soon as it is idle (WebSockets).
  void leave_on_drain() { leaves_on_drain_ = true; }

 private:
  friend class ConnectionLimiter;
  ConnectionSlot(ConnectionLimiter& limiter, std::string group) : limiter_(limiter), group_(std::move(group)) {}

  ConnectionLimiter& limiter_;
  std::string group_;  // its per-address count ("": none)
  bool counted_ = true;  // false once evicted: the place went to another connection
  bool leaves_on_drain_ = false;
  bool is_idle_ = false;
  std::list<ConnectionSlot*>::iterator idle_at_;
  std::function<void()> evict_;
};

using ConnectionSlotPtr = std::unique_ptr<ConnectionSlot>;

struct ConnectionCaps {
  size_t total = 0;        // 0: none
  size_t per_address = 0;  // 0: none
};

class ConnectionLimiter {
 public:
  enum class Verdict { Admitted, AdmittedByEviction, RefusedFull, RefusedAddress };
  struct Admission {
    ConnectionSlotPtr slot;  // null when refused
    Verdict verdict;
  };

  explicit ConnectionLimiter(ConnectionCaps caps) : caps_(caps) {}
  // A new connection from `group` (see address_group; "": exempt from the
  // per-address cap). At the total cap the longest-idle connection is evicted
  // to make room; with none idle the new one is refused.
  Admission admit(const std::string& group);
  // From now on connections that leave at the drain close when idle; the idle ones are evicted now.
  void drain();
  size_t open() const;  // places taken

 private:
  friend class ConnectionSlot;
  std::function<void()> evict_locked(ConnectionSlot* slot);  // takes its place back; returns its evict callback
  void release_locked(ConnectionSlot& slot);

  ConnectionCaps caps_;
  mutable std::mutex mu_;
  size_t open_ = 0;
  std::unordered_map<std::string, size_t> per_group_;
  std::list<ConnectionSlot*> idle_;  // the longest idle first
  bool draining_ = false;
};

// The per-address cap's key for a peer: an IPv4 address (also IPv4-mapped
// IPv6), or an IPv6 address's /64 network, which one host usually holds whole.
std::string address_group(const boost::asio::ip::address& address);

// --max-connections' default for an open-file limit: the limit less a reserve
// of a tenth of it plus 64 (Redis, model and state files, the engine, logs),
// at least 16.
size_t default_max_connections(uint64_t fd_limit);

}  // namespace parley::serve
