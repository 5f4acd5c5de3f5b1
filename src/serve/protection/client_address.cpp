#include "serve/protection/client_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "serve/transport/http_message.h"
#include "util/error.h"

namespace parley::serve {
namespace {

using Address = std::array<uint8_t, 16>;

// IPv4 becomes IPv4-mapped IPv6 (::ffff:a.b.c.d), so one range type covers
// both and a dual-stack listener's mapped peers match IPv4 ranges.
std::optional<Address> parse_address(const std::string& text) {
  Address a{};
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    a[10] = a[11] = 0xff;
    std::copy_n(reinterpret_cast<const uint8_t*>(&v4), 4, a.begin() + 12);
    return a;
  }
  if (inet_pton(AF_INET6, text.c_str(), a.data()) == 1) return a;
  return std::nullopt;
}

bool is_mapped_v4(const Address& a) {
  return std::all_of(a.begin(), a.begin() + 10, [](uint8_t b) { return b == 0; }) && a[10] == 0xff && a[11] == 0xff;
}

// One spelling per address, so that "::1" and "0::1" share a rate bucket.
std::string canonical(const Address& a) {
  char buf[INET6_ADDRSTRLEN];
  if (is_mapped_v4(a)) return inet_ntop(AF_INET, a.data() + 12, buf, sizeof buf);
  return inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
}

bool in_range(const Address& a, const Address& net, int bits) {
  for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : uint8_t(0xff << (8 - bits));
    if ((a[size_t(i)] & mask) != (net[size_t(i)] & mask)) return false;
  }
  return true;
}

std::string trim(std::string s) {
  const auto space = [](unsigned char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && space(s.back())) s.pop_back();
  const auto first = std::find_if_not(s.begin(), s.end(), space);
  return std::string(first, s.end());
}

std::vector<std::string> split_list(const std::string& header) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = header.find(',', start)) != std::string::npos; start = comma + 1)
    out.push_back(trim(header.substr(start, comma - start)));
  out.push_back(trim(header.substr(start)));
  return out;
}

}  // namespace

void TrustedProxies::add(const std::string& cidr) {
  const size_t slash = cidr.find('/');
  const auto net = parse_address(cidr.substr(0, slash));
  if (!net) throw Error("--trusted-proxy: '" + cidr + "' is not an IP address or CIDR range");
  const int max_bits = cidr.find(':') == std::string::npos ? 32 : 128;
  int bits = max_bits;
  if (slash != std::string::npos) {
    const std::string len = cidr.substr(slash + 1);
    if (len.empty() || len.size() > 3 || !std::all_of(len.begin(), len.end(), ::isdigit) || std::stoi(len) > max_bits)
      throw Error("--trusted-proxy: '" + cidr + "' has a bad prefix length (0-" + std::to_string(max_bits) + ")");
    bits = std::stoi(len);
  }
  ranges_.push_back({*net, bits + (max_bits == 32 ? 96 : 0)});
}

bool TrustedProxies::contains(const std::string& address) const {
  const auto a = parse_address(address);
  return a && std::any_of(ranges_.begin(), ranges_.end(), [&](const Range& r) { return in_range(*a, r.net, r.bits); });
}

std::string TrustedProxies::client_address(const std::string& peer, const std::string& forwarded_for) const {
  if (forwarded_for.empty() || !contains(peer)) return peer;
  const std::vector<std::string> hops = split_list(forwarded_for);
  // From the right: each trusted hop vouches for the one before it. When all
  // are trusted, the left-most is the furthest known.
  auto hop = hops.rbegin();
  while (std::next(hop) != hops.rend() && contains(*hop)) ++hop;
  const auto a = parse_address(*hop);
  return a ? canonical(*a) : peer;
}

std::string client_address(const HttpRequest& request, const TrustedProxies& proxies) {
  if (proxies.empty()) return request.remote_address;
  std::string forwarded;
  for (const auto& [name, value] : request.headers)
    if (name == "x-forwarded-for") forwarded += (forwarded.empty() ? "" : ",") + value;
  return proxies.client_address(request.remote_address, forwarded);
}

}  // namespace parley::serve
