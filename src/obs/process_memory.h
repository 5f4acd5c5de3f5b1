#pragma once
// The process's resident set size (Linux /proc/self/statm).
#include <cstdint>

namespace parley::obs {

uint64_t resident_bytes();  // 0 when unavailable

}  // namespace parley::obs
