#pragma once
// Standard base64 (RFC 4648, with padding) of a byte range.
#include <cstddef>
#include <cstdint>
#include <string>

namespace parley {

inline std::string base64_encode(const uint8_t* data, size_t n) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const uint32_t b = uint32_t(data[i]) << 16 | (i + 1 < n ? uint32_t(data[i + 1]) << 8 : 0) |
                       (i + 2 < n ? uint32_t(data[i + 2]) : 0);
    out += kAlphabet[b >> 18];
    out += kAlphabet[(b >> 12) & 63];
    out += i + 1 < n ? kAlphabet[(b >> 6) & 63] : '=';
    out += i + 2 < n ? kAlphabet[b & 63] : '=';
  }
  return out;
}

}  // namespace parley
