#pragma once
// The server's state and counters, shared by the sessions, the routes and
// shutdown (atomics: I/O threads and the main thread read and write them).
#include <atomic>
#include <cstdint>

namespace parley::serve {

struct ServerState {
  std::atomic<bool> ready{false};     // model loaded and accepting requests
  std::atomic<bool> draining{false};  // shutting down: finish what runs, take nothing new
  std::atomic<int64_t> connections{0};     // open HTTP and WebSocket connections
  std::atomic<int64_t> websockets{0};      // of which WebSockets
  std::atomic<int64_t> max_connections{0};  // the total cap in force (--max-connections)
  std::atomic<uint64_t> connections_refused{0};         // at the total cap with none idle to evict
  std::atomic<uint64_t> connections_refused_per_ip{0};  // at --max-connections-per-ip
  std::atomic<uint64_t> connections_evicted{0};         // idle ones closed to make room for new ones
  std::atomic<int64_t> busy{0};            // requests being answered (HTTP and WebSocket)
  std::atomic<uint64_t> http_requests{0};  // answered, any status
  std::atomic<uint64_t> http_errors{0};    // answered with status >= 400
  std::atomic<uint64_t> ws_requests{0};
  std::atomic<bool> degraded{false};  // degraded mode (docs/operations.md): fallback model / static answers
};

}  // namespace parley::serve
