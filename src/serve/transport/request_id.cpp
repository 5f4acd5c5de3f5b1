#include "serve/transport/request_id.h"

#include <algorithm>
#include <cstdio>
#include <random>

namespace parley::serve {
namespace {

constexpr size_t kMaxIdLength = 128;

bool plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-_.:/+=@").find(c) != std::string_view::npos;
}

}  // namespace

std::string new_request_id() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[32];
  std::snprintf(buf, sizeof buf, "req_%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng() & 0xffffffffULL));
  return buf;
}

std::string request_id_for(const std::string* given) {
  if (given && !given->empty() && given->size() <= kMaxIdLength && std::all_of(given->begin(), given->end(), plain))
    return *given;
  return new_request_id();
}

}  // namespace parley::serve
