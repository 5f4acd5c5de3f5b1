#pragma once
// Who a request comes from behind reverse proxies (--trusted-proxy,
// docs/security.md). X-Forwarded-For is believed only when the peer is a
// trusted proxy, and then only up to the first address (from the right) that
// is not itself trusted: everything left of it was written by the client and
// may be forged.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace parley::serve {

struct HttpRequest;

class TrustedProxies {
 public:
  // "10.0.0.0/8", "127.0.0.1" (one address), "fd00::/8", "::1"; throws
  // parley::Error for anything else.
  void add(const std::string& cidr);
  bool empty() const { return ranges_.empty(); }
  // False for anything that is not an IP address.
  bool contains(const std::string& address) const;
  // The client's address given the peer's and the X-Forwarded-For header
  // ("" when absent). With an untrusted peer, or a header whose deciding
  // entry is not an address, the peer's.
  std::string client_address(const std::string& peer, const std::string& forwarded_for) const;

 private:
  struct Range {
    std::array<uint8_t, 16> net;  // IPv4 as IPv4-mapped IPv6
    int bits;
  };
  std::vector<Range> ranges_;
};

// The request's client address: its peer's, or the forwarded one (every
// X-Forwarded-For header, in order) when the peer is trusted.
std::string client_address(const HttpRequest& request, const TrustedProxies& proxies);

}  // namespace parley::serve
