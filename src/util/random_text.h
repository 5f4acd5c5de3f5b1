#pragma once
// Random identifiers (response and tool-call ids): letters and digits from a
// per-thread generator seeded by the system.
#include <cstddef>
#include <string>

namespace parley {

std::string random_alnum(size_t n);

}  // namespace parley
