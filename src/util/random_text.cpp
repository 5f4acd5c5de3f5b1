#include "util/random_text.h"

#include <random>
#include <string_view>

namespace parley {

std::string random_alnum(size_t n) {
  static constexpr std::string_view kAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out(n, ' ');
  for (char& c : out) c = kAlphabet[rng() % kAlphabet.size()];
  return out;
}

}  // namespace parley
